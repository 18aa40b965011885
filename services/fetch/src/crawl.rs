//! Optional shallow crawl (`fetch.crawl_depth`, off by default): the links of a fetched page
//! that are worth following become sources of the job.
//!
//! Links come from the page's content, not its frame: anything inside `nav`, `header`, `footer`
//! or `aside` is site navigation. Only http(s), no fragments, not the page itself, no assets
//! (images, scripts, styles, fonts, media), optionally only the page's own site. Each link then
//! travels as an ordinary fetch task, so robots.txt, the SSRF guard and politeness apply to it
//! exactly as to a searched URL.

use std::collections::HashSet;

use scraper::{ElementRef, Html, Selector};
use trawl_messages::{Domains, Source, SourceKind};
use trawl_text::collapse_whitespace;
use url::Url;

const FRAME: [&str; 4] = ["nav", "header", "footer", "aside"];
const ASSETS: [&str; 14] = [
    ".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg", ".ico", ".css", ".js", ".woff", ".woff2",
    ".mp4", ".mp3", ".zip",
];

/// Up to `limit` links of `html` (at `page_url`) to follow, in document order, as sources
/// derived from `parent` (numbered later, when the job grants them); only links the job's
/// `domains` allow, so those it refuses take no place in the limit.
pub fn links(
    html: &str,
    page_url: &str,
    parent: &Source,
    same_site: bool,
    domains: &Domains,
    limit: usize,
) -> Vec<Source> {
    let Ok(base) = Url::parse(page_url) else {
        return Vec::new();
    };
    let site = base
        .host_str()
        .map(|h| h.trim_start_matches("www.").to_ascii_lowercase());
    let doc = Html::parse_document(html);
    let anchors = Selector::parse("a[href]").expect("a valid selector");
    let mut seen: HashSet<String> = HashSet::from([strip_fragment(&base), parent.url.clone()]);
    let mut out = Vec::new();
    for a in doc.select(&anchors) {
        if out.len() >= limit {
            break;
        }
        if in_frame(a) {
            continue;
        }
        let Some(url) = a.attr("href").and_then(|h| base.join(h.trim()).ok()) else {
            continue;
        };
        if !matches!(url.scheme(), "http" | "https") {
            continue;
        }
        let path = url.path().to_ascii_lowercase();
        if ASSETS.iter().any(|ext| path.ends_with(ext)) {
            continue;
        }
        let host = url.host_str().unwrap_or_default().to_ascii_lowercase();
        if same_site
            && !site
                .as_deref()
                .is_some_and(|s| host == s || host.ends_with(&format!(".{s}")))
            || !domains.allows(&host)
        {
            continue;
        }
        let url = strip_fragment(&url);
        if !seen.insert(url.clone()) {
            continue;
        }
        let title: String = a.text().collect::<Vec<_>>().join(" ");
        out.push(Source {
            idx: 0,
            url,
            title: collapse_whitespace(&title),
            snippet: String::new(),
            provider: "crawl".into(),
            position: out.len() as u32 + 1,
            // A followed link is worth less than what search chose it from.
            score: parent.score / 2.0,
            kind: SourceKind::Page,
            file_type: None,
        });
    }
    out
}

fn strip_fragment(url: &Url) -> String {
    let mut url = url.clone();
    url.set_fragment(None);
    url.into()
}

fn in_frame(a: ElementRef<'_>) -> bool {
    a.ancestors()
        .filter_map(ElementRef::wrap)
        .any(|e| FRAME.contains(&e.value().name()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parent() -> Source {
        Source {
            idx: 3,
            url: "https://example.org/guide/".into(),
            title: "Guide".into(),
            snippet: String::new(),
            provider: "searxng".into(),
            position: 1,
            score: 0.8,
            kind: SourceKind::Page,
            file_type: None,
        }
    }

    fn all() -> Domains {
        Domains::default()
    }

    const PAGE: &str = r##"<html><body>
        <nav><a href="/about">About</a></nav>
        <header><a href="/login">Log in</a></header>
        <main>
          <p>Read <a href="install#top">the install guide</a>, then
          <a href="./install">the same guide again</a> and <a href="#section">a fragment</a>.</p>
          <a href="https://docs.example.org/api">API   reference</a>
          <a href="https://elsewhere.test/x">elsewhere</a>
          <a href="/logo.png">logo</a> <a href="mailto:a@example.org">mail</a>
          <a href="/faq">FAQ</a>
        </main>
        <footer><a href="/privacy">Privacy</a></footer>
    </body></html>"##;

    #[test]
    fn follows_content_links_on_the_same_site_once() {
        let found = links(
            PAGE,
            "https://example.org/guide/",
            &parent(),
            true,
            &all(),
            10,
        );
        let urls: Vec<&str> = found.iter().map(|s| s.url.as_str()).collect();
        assert_eq!(
            urls,
            [
                "https://example.org/guide/install",
                "https://docs.example.org/api",
                "https://example.org/faq"
            ]
        );
        assert_eq!(found[1].title, "API reference");
        assert_eq!(found[1].provider, "crawl");
        assert!((found[0].score - 0.4).abs() < 1e-9);
    }

    #[test]
    fn other_sites_when_asked_and_never_more_than_the_limit() {
        let found = links(
            PAGE,
            "https://example.org/guide/",
            &parent(),
            false,
            &all(),
            10,
        );
        assert!(found.iter().any(|s| s.url == "https://elsewhere.test/x"));
        assert_eq!(
            links(
                PAGE,
                "https://example.org/guide/",
                &parent(),
                false,
                &all(),
                2
            )
            .len(),
            2
        );
        assert!(links(PAGE, "not a url", &parent(), true, &all(), 10).is_empty());
    }

    /// Links the job's domains refuse take no place in the limit.
    #[test]
    fn only_links_within_the_jobs_domains() {
        let only = Domains::new(&["elsewhere.test".to_owned()], &[]);
        let found = links(
            PAGE,
            "https://example.org/guide/",
            &parent(),
            false,
            &only,
            1,
        );
        let urls: Vec<&str> = found.iter().map(|s| s.url.as_str()).collect();
        assert_eq!(urls, ["https://elsewhere.test/x"]);
    }
}
