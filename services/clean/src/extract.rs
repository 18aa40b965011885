//! Main-content extraction: pick the article body of a page and render it as
//! markdown, together with page metadata (title, language, canonical URL).
//!
//! Stage 1 trusts well-known content containers when they pass a quality
//! check; stage 2 falls back to readability-style scoring. Either way,
//! boilerplate inside the chosen node is skipped while rendering.

mod boilerplate;
mod score;

use std::sync::LazyLock;

use scraper::{ElementRef, Html, Selector};
use url::Url;

use self::boilerplate::{is_boilerplate, link_density, text_and_link_len};
use self::score::key;
use crate::markdown::to_markdown_with;

/// Result of [`extract`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extracted {
    pub title: String,
    pub markdown: String,
    /// Visible text characters in the extracted content (whitespace runs count once).
    pub text_chars: usize,
    /// `"container"` (a known content element) or `"scored"` (readability-style fallback).
    pub method: &'static str,
    pub lang: Option<String>,
    pub canonical_url: Option<String>,
}

/// Content containers, most specific first: a body-only class beats `article`,
/// which beats page-level wrappers like `main` / `#content` (those often hold sidebars).
const CONTAINERS: &[&str] = &[
    "[itemprop=articleBody]",
    ".post-content",
    ".entry-content",
    ".article-body",
    "#main-text",
    ".markdown-body",
    ".rst-content",
    ".theme-doc-markdown",
    "article",
    "main",
    "[role=main]",
    "#content",
];
const MIN_CONTAINER_TEXT: usize = 250;
const MAX_CONTAINER_LINK_DENSITY: f64 = 0.5;

fn sel(s: &str) -> Selector {
    Selector::parse(s).expect("static selector")
}

static CONTAINER_SELECTORS: LazyLock<Vec<Selector>> =
    LazyLock::new(|| CONTAINERS.iter().map(|s| sel(s)).collect());
static OG_TITLE: LazyLock<Selector> =
    LazyLock::new(|| sel(r#"meta[property="og:title"], meta[name="og:title"]"#));
static TITLE: LazyLock<Selector> = LazyLock::new(|| sel("title"));
static H1: LazyLock<Selector> = LazyLock::new(|| sel("h1"));
static CANONICAL: LazyLock<Selector> = LazyLock::new(|| sel("link[rel~=canonical]"));
static BASE: LazyLock<Selector> = LazyLock::new(|| sel("base[href]"));
static BODY: LazyLock<Selector> = LazyLock::new(|| sel("body"));

/// Extract the main content of `html`, resolving links against `base_url`.
pub fn extract(html: &str, base_url: &str) -> Extracted {
    let doc = Html::parse_document(html);
    let page_url = Url::parse(base_url).ok();
    // <base href> changes how relative links resolve, exactly as in a browser.
    let base = match doc.select(&BASE).next().and_then(|b| b.attr("href")) {
        Some(href) => page_url
            .as_ref()
            .and_then(|u| u.join(href.trim()).ok())
            .or_else(|| Url::parse(href.trim()).ok()),
        None => None,
    }
    .or(page_url.clone());

    let body = doc
        .select(&BODY)
        .next()
        .unwrap_or_else(|| doc.root_element());
    let mut out = content(&doc, body, base.as_ref(), true);
    // Class patterns occasionally hide the whole article (an unclosed `navbar`
    // div wrapping the page); retry with tag rules only, as readability does.
    if out.1 < MIN_CONTAINER_TEXT {
        let lenient = content(&doc, body, base.as_ref(), false);
        if lenient.1 > 2 * out.1 {
            out = lenient;
        }
    }
    let (markdown, text_chars, method) = out;

    Extracted {
        title: title(&doc),
        markdown,
        text_chars,
        method,
        lang: doc
            .root_element()
            .attr("lang")
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_string),
        canonical_url: doc
            .select(&CANONICAL)
            .find_map(|l| l.attr("href"))
            .and_then(|h| match &page_url {
                Some(u) => u.join(h.trim()).ok(),
                None => Url::parse(h.trim()).ok(),
            })
            .map(String::from),
    }
}

/// Both stages plus rendering: (markdown, text chars, method).
fn content(
    doc: &Html,
    body: ElementRef<'_>,
    base: Option<&Url>,
    classes: bool,
) -> (String, usize, &'static str) {
    let (root, keep, method) = match container(doc, classes) {
        Some(c) => (c, Vec::new(), "container"),
        None => match score::choose(body, classes) {
            Some(c) => (c.root, c.keep, "scored"),
            None => (body, Vec::new(), "scored"),
        },
    };
    let root_key = key(root);
    let skip = |e: ElementRef<'_>| {
        let is_root_child = e
            .parent()
            .and_then(ElementRef::wrap)
            .is_some_and(|p| key(p) == root_key);
        (is_root_child && !keep.is_empty() && !keep.contains(&key(e)))
            || is_boilerplate(e, classes)
            || link_heavy(e, classes)
    };
    let markdown = to_markdown_with(root, base, &skip);
    (markdown, text_and_link_len(root, &skip).0, method)
}

/// Stage 1: the first container kind with an acceptable match; among several
/// matches of that kind (e.g. teaser `<article>`s) the one with most text wins.
fn container(doc: &Html, classes: bool) -> Option<ElementRef<'_>> {
    for selector in CONTAINER_SELECTORS.iter() {
        let best = doc
            .select(selector)
            .filter(|e| {
                !e.ancestors()
                    .filter_map(ElementRef::wrap)
                    .any(|a| is_boilerplate(a, classes))
            })
            .map(|e| (e, text_and_link_len(e, &|c| is_boilerplate(c, classes))))
            .filter(|&(_, (text, links))| {
                text >= MIN_CONTAINER_TEXT && link_density(text, links) < MAX_CONTAINER_LINK_DENSITY
            })
            .max_by_key(|&(_, (text, _))| text);
        if let Some((e, _)) = best {
            return Some(e);
        }
    }
    None
}

/// Readability's "clean conditionally", reduced to its strongest signal: a
/// block that is mostly links (related-article lists, tag clouds) is not prose.
fn link_heavy(e: ElementRef<'_>, classes: bool) -> bool {
    if !matches!(
        e.value().name(),
        "div" | "section" | "ul" | "ol" | "dl" | "table"
    ) {
        return false;
    }
    let (text, links) = text_and_link_len(e, &|c| is_boilerplate(c, classes));
    text > 0 && link_density(text, links) > 0.5
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// og:title, else <title>, else the first <h1>; but the h1 when the title merely
/// extends it (`Headline | Site name`).
fn title(doc: &Html) -> String {
    let og = doc
        .select(&OG_TITLE)
        .find_map(|m| m.attr("content"))
        .map(collapse)
        .filter(|t| !t.is_empty());
    let head = doc
        .select(&TITLE)
        .next()
        .map(|t| collapse(&t.text().collect::<String>()))
        .filter(|t| !t.is_empty());
    let h1 = doc
        .select(&H1)
        .map(|h| collapse(&h.text().collect::<String>()))
        .find(|t| !t.is_empty());
    let meta = og.or(head);
    match (meta, h1) {
        (Some(m), Some(h)) if m.starts_with(&h) => h,
        (Some(m), _) => m,
        (None, Some(h)) => h,
        (None, None) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARA1: &str = "The committee met on Tuesday to discuss the new budget, which has been delayed for months, \
        and members agreed on a compromise that funds schools, roads and hospitals.";
    const PARA2: &str =
        "Critics said the plan, although welcome, does too little for rural areas, where services \
        have been cut repeatedly over the last decade and residents feel ignored.";
    const PARA3: &str = "The vote is expected next week, after a final round of hearings, and officials expect it to \
        pass with a comfortable majority in both chambers of the legislature.";

    fn boilerplate_page(body: &str) -> String {
        format!(
            r#"<html lang="en"><head><title>Budget deal reached | Daily News</title>
            <link rel="canonical" href="/news/budget"></head><body>
            <nav><a href="/">Home</a><a href="/world">World news section</a></nav>
            <div class="cookie-banner">We use cookies to improve your experience. Accept all cookies?</div>
            <div class="ad-slot">Buy cheap watches now</div>
            {body}
            <div id="comments"><p>First comment: this is outrageous, I will never vote again, never.</p></div>
            <footer>Copyright 2024 Daily News, all rights reserved worldwide.</footer></body></html>"#
        )
    }

    const BOILER: &[&str] = &[
        "Home",
        "cookies",
        "cheap watches",
        "First comment",
        "Copyright",
        "Share on",
    ];

    fn assert_article(x: &Extracted) {
        for p in [PARA1, PARA2, PARA3] {
            assert!(
                x.markdown.contains(p),
                "missing paragraph in:\n{}",
                x.markdown
            );
        }
        for b in BOILER {
            assert!(
                !x.markdown.contains(b),
                "boilerplate {b:?} in:\n{}",
                x.markdown
            );
        }
    }

    #[test]
    fn article_container_without_boilerplate() {
        let html = boilerplate_page(&format!(
            r#"<article><header><h1>Budget deal reached</h1></header>
            <div class="share-bar"><a href="/s">Share on Facebook</a></div>
            <p>{PARA1}</p><p>{PARA2}</p><p>{PARA3}</p>
            <aside class="related"><a href="/x">Related: other budget stories</a></aside></article>"#
        ));
        let x = extract(&html, "https://news.example.com/2024/budget");
        assert_eq!(x.method, "container");
        assert_article(&x);
        assert!(x.markdown.starts_with("# Budget deal reached"));
        assert_eq!(x.title, "Budget deal reached");
        assert_eq!(x.lang.as_deref(), Some("en"));
        assert_eq!(
            x.canonical_url.as_deref(),
            Some("https://news.example.com/news/budget")
        );
        assert!(x.text_chars >= PARA1.len() + PARA2.len() + PARA3.len());
    }

    #[test]
    fn post_content_class_is_a_container() {
        let html = boilerplate_page(&format!(
            r#"<div class="post-content"><p>{PARA1}</p><p>{PARA2}</p><p>{PARA3}</p></div>"#
        ));
        let x = extract(&html, "https://news.example.com/");
        assert_eq!(x.method, "container");
        assert_article(&x);
    }

    #[test]
    fn generic_divs_use_scoring() {
        let html = boilerplate_page(&format!(
            r#"<div class="wrap"><div class="col-left"><a href="/a">Link one</a> <a href="/b">Link two</a></div>
            <div class="col-x"><p>{PARA1}</p><p>{PARA2}</p><p>{PARA3}</p></div>
            <div class="col-right"><a href="/c">More links here</a></div></div>"#
        ));
        let x = extract(&html, "https://news.example.com/");
        assert_eq!(x.method, "scored");
        assert_article(&x);
        assert!(!x.markdown.contains("Link one"), "{}", x.markdown);
    }

    #[test]
    fn hidden_elements_are_dropped() {
        let html = boilerplate_page(&format!(
            r#"<article><p>{PARA1}</p><p hidden>secret one</p><div style="display: none">secret two</div>
            <span aria-hidden="true">secret three</span><p>{PARA2}</p><p>{PARA3}</p></article>"#
        ));
        let x = extract(&html, "https://news.example.com/");
        assert_article(&x);
        assert!(!x.markdown.contains("secret"), "{}", x.markdown);
    }

    #[test]
    fn empty_document_does_not_panic() {
        let x = extract("", "not a url");
        assert_eq!(x.markdown, "");
        assert_eq!(x.title, "");
    }
}
