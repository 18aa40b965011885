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
    /// `"container"` (a known content element), `"scored"` (readability-style fallback),
    /// `"sections"` (a page of many short sections: its main region) or `"listing"` (a page
    /// of links: its main region, links kept).
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

/// `html` parsed as a browser without scripts would: `<noscript>` holds markup, not raw text.
/// Some sites serve the whole page that way (Discourse forums put every post of a thread in
/// one `<noscript>`, for crawlers and readers without JavaScript).
fn parse(html: &str) -> Html {
    use html5ever::tendril::TendrilSink;
    let opts = html5ever::ParseOpts {
        tree_builder: html5ever::tree_builder::TreeBuilderOpts {
            scripting_enabled: false,
            ..Default::default()
        },
        ..Default::default()
    };
    html5ever::parse_document(scraper::HtmlTreeSink::new(Html::new_document()), opts).one(html)
}

fn from_prepared(prepared: String, base_url: &str) -> Extracted {
    // The parser copies what it keeps into the tree.
    let doc = parse(&prepared);
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
    if out.text < MIN_CONTAINER_TEXT as usize {
        let lenient = content(&dom, &Judged::new(&dom, false), &meta, body, base.as_ref());
        if lenient.text > 2 * out.text {
            out = lenient;
        }
    }
    let region = container::main_region(&dom, &strict, &meta.containers).unwrap_or(body);
    // A container away from the headline may be one section of a page of sections (a
    // course's "Lab info" `<article>` below its description), as a scored pick may be.
    let h1 = meta.h1.as_ref().map(|&(h, _)| h);
    let holds_h1 = |root: usize| h1.is_some_and(|h| root < h && h < dom.end(root));
    if out.method == "scored" || !holds_h1(out.root) {
        if let Some(whole) = sections(&dom, &strict, region, out.text, base.as_ref()) {
            out = whole;
        }
    }
    if out.text < MIN_CONTAINER_TEXT as usize {
        let skip = &strict.boilerplate;
        let text = visible_text(&dom, region, skip);
        if text > 2 * out.text {
            out = Picked {
                markdown: render(&dom, region, base.as_ref(), skip),
                text,
                method: "listing",
                root: region,
            };
        }
    }
    let (markdown, text_chars) = without_copies(&out.markdown, out.text);
    let method = out.method;

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

/// The content a page's rules picked, rendered.
struct Picked {
    markdown: String,
    /// Its text characters.
    text: usize,
    method: &'static str,
    /// The element it was rendered from.
    root: usize,
}

/// Both stages plus rendering.
fn content(
    dom: &Dom<'_>,
    judged: &Judged,
    meta: &Meta<'_>,
    body: usize,
    base: Option<&Url>,
) -> Picked {
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
    Picked {
        text: visible_text(dom, root, &skip),
        markdown,
        method,
        root,
    }
}

/// A page of sections — a service's or product's page, a landing page — has no one block
/// of article text: the scorer picks its best section, a fraction of what a reader reads. When
/// the page's main region (`<main>`, `role=main`, else the body) holds [`SECTIONS`] times the
/// scored pick's text outside boilerplate and link-heavy blocks, the region is the content.
fn sections(
    dom: &Dom<'_>,
    judged: &Judged,
    region: usize,
    picked: usize,
    base: Option<&Url>,
) -> Option<Picked> {
    let skip: Vec<bool> = (0..dom.len())
        .map(|i| judged.boilerplate[i] || judged.link_heavy(dom, i))
        .collect();
    let text = visible_text(dom, region, &skip);
    (text > SECTIONS * picked).then(|| Picked {
        markdown: render(dom, region, base, &skip),
        text,
        method: "sections",
        root: region,
    })
}

const SECTIONS: usize = 3;

/// A page's second copy of a passage is dropped: a product page that prints its description
/// twice (one copy for wide screens, one for phones, the other hidden by a style sheet) is read
/// once. A copy is a run of blocks repeating, in order, the blocks that end at most
/// [`COPY_GAP`] blocks before it, holding [`COPY_CHARS`] characters and one paragraph of
/// [`COPY_PROSE`]: a meal plan repeating a day's meals further down, or a pricing table's
/// tiers repeating their short feature lines, are kept.
const COPY_CHARS: usize = 200;
const COPY_PROSE: usize = 120;
const COPY_GAP: usize = 2;
/// The longest copy looked for, in blocks: the search costs at most this per block.
const COPY_BLOCKS: usize = 64;

/// `markdown` without second copies of passages (outside code), and its text characters less
/// theirs.
fn without_copies(markdown: &str, text_chars: usize) -> (String, usize) {
    let blocks: Vec<&str> = markdown.split("\n\n").map(str::trim).collect();
    let mut in_code = false;
    let code: Vec<bool> = (blocks.iter())
        .map(|b| {
            // One search for fences, and none in a block without a backtick.
            let fences = match b.as_bytes().contains(&b'`') {
                true => b.matches("```").count(),
                false => 0,
            };
            let was = in_code || fences > 0;
            in_code ^= fences % 2 == 1;
            was
        })
        .collect();
    let same = |a: usize, b: usize| {
        !code[a] && !code[b] && !blocks[a].is_empty() && blocks[a] == blocks[b]
    };
    let mut drop = vec![false; blocks.len()];
    // Where each block was last seen: the second copy starts at a block seen shortly before.
    let mut last: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut i = 0;
    while i < blocks.len() {
        // One hash of the block: `insert` hands back where it was seen before.
        let start = match !code[i] && !blocks[i].is_empty() {
            true => last.insert(blocks[i], i),
            false => last.get(blocks[i]).copied(),
        };
        let copy = start
            .filter(|&j| i - j <= COPY_BLOCKS + COPY_GAP)
            .map(|j| {
                (
                    j,
                    (0..i - j)
                        .take_while(|&k| i + k < blocks.len() && same(j + k, i + k))
                        .count(),
                )
            })
            .filter(|&(j, len)| j + len + COPY_GAP >= i)
            .map(|(_, len)| len)
            .filter(|&len| {
                let sizes = blocks[i..i + len].iter().map(|b| b.chars().count());
                sizes.clone().sum::<usize>() >= COPY_CHARS && sizes.max() >= Some(COPY_PROSE)
            });
        match copy {
            Some(len) => {
                drop[i..i + len].iter_mut().for_each(|d| *d = true);
                i += len;
            }
            None => i += 1,
        }
    }
    if !drop.contains(&true) {
        return (markdown.to_owned(), text_chars);
    }
    let dropped: usize = (blocks.iter().zip(&drop))
        .filter(|(_, &d)| d)
        .flat_map(|(b, _)| b.split_whitespace())
        .map(|w| w.chars().count() + 1)
        .sum();
    let kept: Vec<&str> = (blocks.iter().zip(&drop))
        .filter(|(_, &d)| !d)
        .map(|(b, _)| *b)
        .collect();
    (kept.join("\n\n"), text_chars.saturating_sub(dropped))
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
        .map(|t| {
            t.split_whitespace()
                .map(|w| w.chars().count() + 1)
                .sum::<usize>()
        })
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

    /// The three paragraphs as HTML.
    fn paragraphs() -> String {
        [PARA1, PARA2, PARA3]
            .iter()
            .map(|p| format!("<p>{p}</p>"))
            .collect()
    }

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
    fn a_thread_kept_for_readers_without_scripts_is_read() {
        // Discourse: the page a script would build is empty; the thread is in `<noscript>`.
        let html = boilerplate_page(&format!(
            r#"<section id="main"></section><noscript data-path="/t/budget/1">
            <div id="main-outlet" role="main"><h1>Budget deal reached</h1>
            <div class="topic-body"><p>{PARA1}</p><p>{PARA2}</p><p>{PARA3}</p></div></div></noscript>
            <noscript><img src="/pixel.gif"></noscript>"#
        ));
        let x = extract(&html, "https://forum.example.com/t/budget/1");
        assert_article(&x);
        // Read as markup, not as the raw text a scripting parser makes of it.
        assert!(
            x.markdown.starts_with("# Budget deal reached\n"),
            "{}",
            x.markdown
        );
        assert!(!x.markdown.contains('<'), "{}", x.markdown);
    }

    #[test]
    fn a_threads_posts_are_all_read_and_teasers_elsewhere_are_not() {
        let post = |who: &str, text: &str| {
            format!(
                r#"<article class="message"><div class="user">{who}</div><p>{text}</p></article>"#
            )
        };
        let teaser = format!("<article><h3>Elsewhere</h3><p>{PARA3} {PARA2}</p></article>");
        let html = boilerplate_page(&format!(
            r#"<h1>Budget deal reached</h1><div class="messages">{}{}{}</div>
            <section class="more">{teaser}</section>"#,
            post("ada", &format!("{PARA1} {PARA1}")),
            post("bo", &format!("{PARA2} {PARA2}")),
            post("cy", &format!("{PARA3} {PARA3}")),
        ));
        let x = extract(&html, "https://forum.example.com/threads/budget");
        assert_eq!(x.method, "container");
        assert_article(&x);
        for who in ["ada", "bo", "cy"] {
            assert!(
                x.markdown.contains(who),
                "{who} missing in:\n{}",
                x.markdown
            );
        }
        assert!(!x.markdown.contains("Elsewhere"), "{}", x.markdown);
    }

    #[test]
    fn an_article_in_a_layout_tables_cell_is_found() {
        // Old sites lay the whole page out in one table: the cell holding the article is not
        // a paragraph but a region, read block by block.
        // The article's cell also holds the region's news, more link text than the article.
        let links: String = (1..=24)
            .map(|k| {
                format!(r#"<div><a href="/n/{k}">Latest news from the region, item {k}</a></div>"#)
            })
            .collect();
        let html = format!(
            r#"<html><body><center><table><tr><td width="240"><div>{links}</div></td>
            <td><table><tr><td><a href="/home">Home</a> | <a href="/news">News</a></td></tr></table>
            <div><h1>Budget deal reached</h1><div class="gm"><p>{PARA1}</p><p>{PARA2}</p>
            <p>{PARA3}</p></div></div><div class="regional">{links}</div></td></tr></table>
            </center></body></html>"#
        );
        let x = extract(&html, "https://news.example.com/");
        assert_article(&x);
        assert!(!x.markdown.contains("Latest news"), "{}", x.markdown);
    }

    #[test]
    fn a_page_of_sections_is_read_whole() {
        // A service's page: a section per feature, none of them an article on its own. The
        // scorer's pick is the wordiest section; the others are the rest of what a reader reads.
        let first = ("Plan every delivery", "Routes are planned overnight, from the day's orders, for every van, every driver and every shift, and drivers get them on their phones, in order, before they start, with notes, contacts and time windows.");
        let others = [
            ("Live tracking", "Customers follow their parcel on a map and get a message ten minutes before the van arrives at their door"),
            ("Simple pricing", "One price per vehicle and month with no setup fee and no limit on the number of stops or users in your team"),
            ("Help when you need it", "Our support team answers within the hour on working days by chat or phone in four languages"),
            ("Your data stays yours", "Data is kept in the European Union and encrypted at rest and in transit and deleted when you leave"),
            ("Works with your shop", "Orders come in from the shop systems you already use without any copying or uploading of files"),
            ("Proof of delivery", "Drivers take a photo or a signature at the door and the customer gets it in the delivery message"),
        ];
        // Cards of a grid, each sized by a class of its own.
        let body: String = std::iter::once(first)
            .chain(others)
            .enumerate()
            .map(|(k, (h, p))| {
                format!(
                    r#"<div class="col-{}"><div class="card"><div class="card-body"><h3>{h}</h3>
                    <p>{p}</p></div></div></div>"#,
                    k + 4
                )
            })
            .collect();
        let html = boilerplate_page(&format!(r#"<div class="row">{body}</div>"#));
        let x = extract(&html, "https://routes.example.com/");
        assert_eq!(x.method, "sections", "{}", x.markdown);
        for (h, p) in std::iter::once(first).chain(others) {
            assert!(
                x.markdown.contains(h) && x.markdown.contains(p),
                "{h:?} missing in:\n{}",
                x.markdown
            );
        }
        for b in ["Home", "cookies", "Copyright"] {
            assert!(!x.markdown.contains(b), "{b:?} in:\n{}", x.markdown);
        }
    }

    /// A product page: its description, a second copy of it for phones, customer reviews.
    #[test]
    fn a_product_page_once_without_its_reviews() {
        let description = "Make each cup of tea or coffee feel special with this ceramic mug, wheel thrown, with a matte textured outside in a white speckle finish and a clear glazed interior.";
        let sizes =
            "Size: approx. 9.5 x 13 x 7 cm. Volume: approx. 350 ml, which is a generous cup.";
        let copy = format!("<p>{description}</p><p>{sizes}</p>");
        let reviews: String = (1..=4)
            .map(|k| format!(r#"<div class="review-card"><p>Review {k}: I love this mug, it keeps my coffee warm and it looks lovely on the shelf.</p></div>"#))
            .collect();
        let html = boilerplate_page(&format!(
            r#"<main><h1>White speckle mug</h1><p>$60.00</p>
            <div class="desktop-only">{copy}</div><div class="mobile-only">{copy}</div>
            <section id="product-reviews"><h2>Reviews</h2>{reviews}</section></main>"#
        ));
        let x = extract(&html, "https://shop.example.com/p/mug");
        for text in [description, sizes] {
            assert_eq!(
                x.markdown.matches(text).count(),
                1,
                "{text:?} in:\n{}",
                x.markdown
            );
        }
        assert!(!x.markdown.contains("Review 1"), "{}", x.markdown);
    }

    /// React's streaming renderer sends what was not ready at first in a hidden segment that a
    /// script moves into place: it is read. Other hidden elements stay hidden.
    #[test]
    fn react_streamed_segments_are_read() {
        let paras = paragraphs();
        let page = |id: &str| {
            boilerplate_page(&format!(
                r#"<main><h1>Budget deal reached</h1><template id="B:0"></template></main>
                <div hidden id="{id}">{paras}</div>"#
            ))
        };
        assert_article(&extract(&page("S:0"), "https://news.example.com/budget"));
        let hidden = extract(&page("S:x"), "https://news.example.com/budget");
        assert!(!hidden.markdown.contains(PARA1), "{}", hidden.markdown);
    }

    /// What a page repeats on purpose stays: a plan's meals under each day, short lines.
    #[test]
    fn repeats_that_are_not_copies_stay() {
        let meal = "Asparagus and eggs: one cup of asparagus, two poached eggs and half a cup of sweet potato, with a teaspoon of olive oil for the potatoes, or a slice of whole-grain toast with a teaspoon of butter instead.";
        let md = format!("## Day 1\n\n{meal}\n\n## Snack\n\nAn apple.\n\n## Day 2\n\nSoup.\n\n## Lunch\n\nRice.\n\n## Dinner\n\n{meal}\n\nBack\n\nBack");
        assert_eq!(without_copies(&md, 1000), (md.clone(), 1000));
        // A copy right after its original goes, with its characters.
        let copied = format!("{meal}\n\nEat it warm.\n\n{meal}\n\nEat it warm.");
        let (kept, chars) = without_copies(&copied, 400);
        assert_eq!(kept, format!("{meal}\n\nEat it warm."));
        assert_eq!(chars, 400 - (meal.len() + 1) - "Eat it warm. ".len());
        // Code is never a copy.
        let code = format!("```\n{meal}\n\n{meal}\n```");
        assert_eq!(without_copies(&code, 10).0, code);
    }

    /// A content element that does not hold the page's headline may be one section of a page
    /// of sections (a course's "Lab info" `<article>`): the page is read whole when its main
    /// region holds three times as much.
    #[test]
    fn a_container_away_from_the_headline_is_one_section() {
        let paras = paragraphs();
        let lab = "Lab exercises in this course are designed to work either on native hardware or in a virtual machine under a hypervisor such as KVM, VMWare or VirtualBox. Detailed instructions to set up the lab environment are provided in the course itself, with a checklist for each of the three families.";
        let html = boilerplate_page(&format!(
            r#"<div class="course"><h1>Open source development</h1>{paras}{paras}
            <div class="lab-info"><article class="lab-title"><span>{lab}</span></article></div></div>"#
        ));
        let x = extract(&html, "https://training.example.org/course");
        assert_eq!(x.method, "sections", "{}", x.markdown);
        assert!(
            x.markdown.contains(PARA1) && x.markdown.contains(lab),
            "{}",
            x.markdown
        );
        // The article holding the headline is the content, however much else the page has.
        let article = boilerplate_page(&format!(
            r#"<article><h1>Budget deal reached</h1><p>{PARA1}</p><p>{PARA2}</p></article>
            <div class="more">{paras}{paras}{paras}</div>"#
        ));
        let x = extract(&article, "https://news.example.com/budget");
        assert_eq!(x.method, "container", "{}", x.markdown);
    }

    #[test]
    fn a_page_of_links_keeps_its_entries() {
        let entries: String = (1..=12)
            .map(|k| {
                format!(r#"<li><a href="/book/{k}">Book number {k} of the catalogue</a></li>"#)
            })
            .collect();
        let html = boilerplate_page(&format!(
            r#"<main><h1>Hardware -- Catalogs</h1><p>See also what is at your library.</p>
            <ul>{entries}</ul></main>"#
        ));
        let x = extract(&html, "https://books.example.org/browse?key=hardware");
        assert_eq!(x.method, "listing");
        for k in [1, 7, 12] {
            assert!(
                x.markdown.contains(&format!("Book number {k} of")),
                "{}",
                x.markdown
            );
        }
        assert!(x.markdown.contains("See also"), "{}", x.markdown);
        for b in ["Home", "cookies", "Copyright"] {
            assert!(!x.markdown.contains(b), "{b:?} in:\n{}", x.markdown);
        }
    }

    #[test]
    fn a_short_chinese_news_item_is_an_article_not_a_page_of_links() {
        // 120 characters of Chinese say what 400 of English do: the container threshold
        // (250) holds in reading, not in characters.
        let item = "北京市政府周二宣布，明年将投入三百亿元改善公共交通，新建地铁线路四条，并延长现有线路的运营时间，以缓解早晚高峰的拥堵。";
        let html = format!(
            r#"<html lang="zh"><body><nav><a href="/">首页</a></nav><article><h1>北京加大公交投入</h1>
            <p>{item}</p><p>{item}</p></article><ul class="more"><li><a href="/a">其他新闻标题一</a></li>
            <li><a href="/b">其他新闻标题二</a></li></ul></body></html>"#
        );
        let x = extract(&html, "https://news.example.cn/1");
        assert_eq!(x.method, "container");
        assert!(x.markdown.contains(item), "{}", x.markdown);
        assert!(!x.markdown.contains("其他新闻"), "{}", x.markdown);
        // text_chars still counts characters.
        assert!(
            x.text_chars < 3 * 2 * item.chars().count(),
            "{}",
            x.text_chars
        );
    }

    #[test]
    fn empty_document_does_not_panic() {
        let x = extract("", "not a url");
        assert_eq!(x.markdown, "");
        assert_eq!(x.title, "");
    }
}
