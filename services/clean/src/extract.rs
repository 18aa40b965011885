//! Main-content extraction: pick the article body of a page and render it as
//! markdown, together with page metadata (title, language, canonical URL).
//!
//! - `prepare`: what the HTML parser gets — script/style bodies removed, nesting bounded.
//! - `meta`: title, headline, canonical URL, `<base>`, candidate containers (one pass).
//! - `container`: stage 1, well-known content containers that pass a quality check.
//! - `score`: stage 2, readability-style scoring when no container qualifies.
//! - `boilerplate` and `classes`: what is skipped inside the chosen node (tags, class and id
//!   words, hidden and link-heavy blocks), plus the text measures both stages share.
//!
//! Cost is linear in the page: the parsed tree is flattened once (`Dom`) and every judgement
//! is one loop over that array; only the renderer recurses, to a capped depth, so hostile
//! pages can exhaust neither time nor stack.

mod boilerplate;
mod classes;
mod container;
mod meta;
mod prepare;
mod score;

use scraper::Html;
use url::Url;

use self::boilerplate::Judged;
use self::container::MIN_CONTAINER_TEXT;
use self::meta::Meta;
use crate::markdown::dom::{Dom, Tag};
use crate::markdown::render;

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
    pub byline: Option<String>,
    /// The publication date as the page gives it.
    pub published: Option<String>,
}

/// Extract the main content of `html`, resolving links against `base_url`.
pub fn extract(html: &str, base_url: &str) -> Extracted {
    from_prepared(prepare::prepare(html, prepare::MAX_NESTING), base_url)
}

/// [`extract`], letting go of `html` once it is prepared: the page is not held beside its
/// parsed tree (a worker's peak memory on a page of megabytes).
pub(crate) fn extract_owned(html: String, base_url: &str) -> Extracted {
    let prepared = prepare::prepare(&html, prepare::MAX_NESTING);
    drop(html);
    from_prepared(prepared, base_url)
}

fn from_prepared(prepared: String, base_url: &str) -> Extracted {
    // The parser copies what it keeps into the tree.
    let doc = Html::parse_document(&prepared);
    drop(prepared);
    let dom = Dom::new(doc.root_element());
    let meta = Meta::new(&dom);
    let page_url = Url::parse(base_url).ok();
    // <base href> changes how relative links resolve, exactly as in a browser.
    let base = meta
        .base
        .and_then(|href| {
            let href = href.trim();
            (page_url.as_ref().and_then(|u| u.join(href).ok())).or_else(|| Url::parse(href).ok())
        })
        .or(page_url.clone());

    let body = meta.body.unwrap_or(0);
    let strict = Judged::new(&dom, true);
    let mut out = content(&dom, &strict, &meta, body, base.as_ref());
    // Class patterns occasionally hide the whole article (an unclosed `navbar`
    // div wrapping the page); retry with tag rules only, as readability does.
    if out.1 < MIN_CONTAINER_TEXT as usize {
        let lenient = content(&dom, &Judged::new(&dom, false), &meta, body, base.as_ref());
        if lenient.1 > 2 * out.1 {
            out = lenient;
        }
    }
    let (markdown, text_chars, method) = out;

    Extracted {
        title: meta.title(&dom),
        byline: meta.byline(&dom),
        published: meta.published(),
        markdown,
        text_chars,
        method,
        lang: dom
            .attr(0, "lang")
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_string),
        canonical_url: meta
            .canonical
            .and_then(|h| match &page_url {
                Some(u) => u.join(h.trim()).ok(),
                None => Url::parse(h.trim()).ok(),
            })
            .map(String::from),
    }
}

/// Both stages plus rendering: (markdown, text chars, method).
fn content(
    dom: &Dom<'_>,
    judged: &Judged,
    meta: &Meta<'_>,
    body: usize,
    base: Option<&Url>,
) -> (String, usize, &'static str) {
    let h1 = meta.h1.as_ref().map(|&(h, _)| h);
    let (root, keep, method) = match container::choose(dom, judged, &meta.containers, h1) {
        Some(c) => (c, Vec::new(), "container"),
        None => match score::choose(dom, judged, body) {
            Some(c) => (c.root, c.keep, "scored"),
            None => (body, Vec::new(), "scored"),
        },
    };
    let mut skip: Vec<bool> = (0..dom.len())
        .map(|i| judged.boilerplate[i] || judged.link_heavy(dom, i))
        .collect();
    if !keep.is_empty() {
        // Flags, not `keep.contains`: a root can have a million children.
        let mut kept = vec![false; dom.len()];
        for &k in &keep {
            kept[k] = true;
        }
        for c in dom.child_elements(root) {
            skip[c] |= !kept[c];
        }
    }
    let h1 =
        visible(dom, root, &skip).find(|&h| dom.tag(h) == Tag::H1 && judged.measure[h].text > 0);
    if let Some(h1) = h1 {
        if let Some(block) = judged.headline_block(dom, root, h1) {
            // Only the path down to the headline survives.
            for a in std::iter::once(h1)
                .chain(dom.ancestors(h1))
                .take_while(|&a| a != block)
            {
                let parent = dom.parent(a).expect("below the block");
                for c in dom.child_elements(parent) {
                    skip[c] |= c != a;
                }
            }
        }
    }
    let markdown = render(dom, root, base, &skip);
    (markdown, visible_text(dom, root, &skip), method)
}

/// Nodes below `root` outside skipped subtrees, in document order.
fn visible<'d>(
    dom: &'d Dom<'_>,
    root: usize,
    skip: &'d [bool],
) -> impl Iterator<Item = usize> + 'd {
    let (mut i, end) = (root + 1, dom.end(root));
    std::iter::from_fn(move || {
        while i < end && skip[i] {
            i = dom.end(i);
        }
        let node = (i < end).then_some(i);
        i += 1;
        node
    })
}

/// Text characters below `root` outside skipped subtrees.
fn visible_text(dom: &Dom<'_>, root: usize, skip: &[bool]) -> usize {
    visible(dom, root, skip)
        .filter_map(|i| dom.text(i))
        .map(|t| boilerplate::text_len(t).0 as usize)
        .sum()
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
    fn byline_and_date_from_meta_or_the_page() {
        let text = "The river rose four metres in a night and the town moved uphill. ".repeat(8);
        let from_meta = format!("<html><head><meta name=\"author\" content=\"Ada Marsh\"><meta property=\"article:published_time\" content=\"2026-10-03T08:00:00Z\"></head><body><article><h1>Flood</h1><p>{text}</p></article></body></html>");
        let x = extract(&from_meta, "https://example.org/flood");
        assert_eq!(x.byline.as_deref(), Some("Ada Marsh"));
        assert_eq!(x.published.as_deref(), Some("2026-10-03T08:00:00Z"));
        let from_page = format!("<html><body><article><h1>Flood</h1><p class=\"byline\">By Ada  Marsh</p><time datetime=\"2026-10-03\">3 October</time><p>{text}</p></article></body></html>");
        let x = extract(&from_page, "https://example.org/flood");
        assert_eq!(x.byline.as_deref(), Some("Ada Marsh"));
        assert_eq!(x.published.as_deref(), Some("2026-10-03"));
        let none = extract(&format!("<p>{text}</p>"), "https://example.org/");
        assert_eq!((none.byline, none.published), (None, None));
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
    fn headline_block_keeps_the_headline_only() {
        let html = boilerplate_page(&format!(
            r#"<article><header class="article-header"><h1>Budget deal reached</h1>
            <h2 class="dek">Lawmakers settle months of wrangling over spending</h2>
            <p class="byline">By A. Reporter</p><time>May 1, 2024</time></header>
            <p>{PARA1}</p><p>{PARA2}</p><p>{PARA3}</p></article>"#
        ));
        let x = extract(&html, "https://news.example.com/");
        assert_article(&x);
        assert!(
            x.markdown.starts_with("# Budget deal reached\n\n"),
            "{}",
            x.markdown
        );
        for gone in ["wrangling", "A. Reporter", "May 1"] {
            assert!(!x.markdown.contains(gone), "{gone:?} in:\n{}", x.markdown);
        }
    }

    #[test]
    fn the_article_holding_the_headline_beats_longer_teasers() {
        let teaser = format!("<article><h3>Elsewhere</h3><p>{PARA3} {PARA2} {PARA1}</p></article>");
        let html = boilerplate_page(&format!(
            r#"<article><h1>Budget deal reached</h1><p>{PARA1}</p><p>{PARA2}</p></article>
            <section>{teaser}{teaser}</section>"#
        ));
        let x = extract(&html, "https://news.example.com/");
        assert!(
            x.markdown.starts_with("# Budget deal reached"),
            "{}",
            x.markdown
        );
        assert!(!x.markdown.contains("Elsewhere"), "{}", x.markdown);
    }

    #[test]
    fn teaser_links_and_meta_paragraphs_are_dropped_sources_kept() {
        let html = boilerplate_page(&format!(
            r#"<article><p class="article-meta">Updated 5 minutes ago</p><p>{PARA1}</p>
            <p><strong><a href="/other">READ MORE: Senate passes a different bill</a></strong></p>
            <p>{PARA2}</p><p><a href="https://data.example.org/budget.pdf">https://data.example.org/budget.pdf</a></p>
            <p>{PARA3}</p></article>"#
        ));
        let x = extract(&html, "https://news.example.com/");
        assert_article(&x);
        assert!(!x.markdown.contains("Updated 5 minutes"), "{}", x.markdown);
        assert!(!x.markdown.contains("READ MORE"), "{}", x.markdown);
        assert!(x.markdown.contains("budget.pdf"), "{}", x.markdown);
    }

    #[test]
    fn embedded_posts_survive_their_social_wrappers() {
        let html = boilerplate_page(&format!(
            r#"<article><p>{PARA1}</p><div class="social-embed"><blockquote class="twitter-tweet">
            <p>The budget is finally done, and it funds our schools.</p>— Mayor (@mayor)</blockquote></div>
            <div class="social-share"><a href="/s">Share on Twitter</a></div>
            <p>{PARA2}</p><p>{PARA3}</p></article>"#
        ));
        let x = extract(&html, "https://news.example.com/");
        assert_article(&x);
        assert!(
            x.markdown.contains("> The budget is finally done"),
            "{}",
            x.markdown
        );
    }

    #[test]
    fn text_behind_a_paywall_marker_is_article_text() {
        let html = boilerplate_page(&format!(
            r#"<article><p>{PARA1}</p><div class="paywall"><p>{PARA2}</p><p>{PARA3}</p>
            <p>{PARA2}</p><p>{PARA3}</p></div><div class="paywall-prompt">Subscribe to keep reading</div></article>"#
        ));
        let x = extract(&html, "https://news.example.com/");
        assert_article(&x);
        assert!(!x.markdown.contains("keep reading"), "{}", x.markdown);
    }

    #[test]
    fn empty_document_does_not_panic() {
        let x = extract("", "not a url");
        assert_eq!(x.markdown, "");
        assert_eq!(x.title, "");
    }
}
