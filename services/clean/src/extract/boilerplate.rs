//! What counts as boilerplate inside a chosen content node, plus the text
//! measures (length, link density) shared by both extraction stages.

use scraper::{ElementRef, Node};

/// Tags that never carry article text. (`form` is handled separately: ASP.NET
/// pages wrap the whole document in one.)
const DROP_TAGS: &[&str] = &[
    "nav",
    "aside",
    "footer",
    "script",
    "style",
    "noscript",
    "iframe",
    "button",
    "select",
    "input",
    "textarea",
    "svg",
    "template",
    "dialog",
    "object",
    "embed",
    "figcaption",
];

/// class/id words that mark boilerplate. Matched per token (class names are split
/// on `-`, `_`, spaces and camelCase) so that e.g. `ad` does not hit `header`/`read`.
/// Strong words are dropped whatever their size ...
const STRONG_EXACT: &[&str] = &[
    "nav",
    "ad",
    "ads",
    "adv",
    "share",
    "promo",
    "social",
    "sidebar",
    "footer",
    "outbrain",
    "taboola",
    "disqus",
    "breadcrumbs",
    "recommended",
    "trending",
    "popup",
    "modal",
    "caption",
    "credit",
    "credits",
    "gallery",
    "slideshow",
];
const STRONG_PREFIX: &[&str] = &[
    "navbar",
    "navigation",
    "comment",
    "cookie",
    "consent",
    "advert",
    "sponsor",
    "breadcrumb",
    "newsletter",
    "subscri",
    "sharing",
    "gdpr",
    "paywall",
    "promotion",
    "related",
];
/// ... weak words (page builders put `widget` on everything) only when the
/// element is small or mostly links.
const WEAK_EXACT: &[&str] = &[
    "menu", "banner", "header", "masthead", "widget", "byline", "tags", "tag", "toolbar", "print",
    "skip", "meta", "author", "signup", "more",
];
pub(crate) const POSITIVE: &[&str] = &[
    "article", "body", "content", "entry", "main", "post", "text", "story", "blog", "hentry",
    "page",
];

/// Split class + id into lowercase tokens (`socialShare-bar` → social, share, bar).
pub(crate) fn class_tokens(e: ElementRef<'_>) -> Vec<String> {
    let mut out = Vec::new();
    let el = e.value();
    for part in el.classes().chain(el.id()) {
        let mut cur = String::new();
        let mut prev_lower = false;
        for c in part.chars() {
            let boundary = !c.is_alphanumeric() || (c.is_uppercase() && prev_lower);
            if boundary && !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            if c.is_alphanumeric() {
                cur.extend(c.to_lowercase());
            }
            prev_lower = c.is_lowercase();
        }
        if !cur.is_empty() {
            out.push(cur);
        }
    }
    out
}

fn is_strong(tokens: &[String]) -> bool {
    tokens.iter().any(|t| {
        STRONG_EXACT.contains(&t.as_str()) || STRONG_PREFIX.iter().any(|p| t.starts_with(p))
    })
}

fn is_weak(tokens: &[String]) -> bool {
    tokens.iter().any(|t| WEAK_EXACT.contains(&t.as_str()))
}

pub(crate) fn is_negative(tokens: &[String]) -> bool {
    is_strong(tokens) || is_weak(tokens)
}

pub(crate) fn is_positive(tokens: &[String]) -> bool {
    tokens.iter().any(|t| POSITIVE.contains(&t.as_str()))
}

/// Readability-style class weight: ±25 for negative / positive class+id words.
pub(crate) fn class_weight(e: ElementRef<'_>) -> f64 {
    let t = class_tokens(e);
    let mut w = 0.0;
    if is_negative(&t) {
        w -= 25.0;
    }
    if is_positive(&t) {
        w += 25.0;
    }
    w
}

fn is_hidden(e: ElementRef<'_>) -> bool {
    let el = e.value();
    if el.attr("hidden").is_some() || el.attr("aria-hidden").is_some_and(|v| v.trim() == "true") {
        return true;
    }
    let style = el
        .attr("style")
        .map(|s| s.to_ascii_lowercase().replace(' ', ""))
        .unwrap_or_default();
    style.contains("display:none") || style.contains("visibility:hidden")
}

fn has_h1(e: ElementRef<'_>) -> bool {
    e.descendent_elements().any(|d| d.value().name() == "h1")
}

/// The skip predicate handed to the markdown converter. With `classes` false
/// only tags and hidden markers count (retry mode for sites whose class names
/// defeat the patterns).
pub(crate) fn is_boilerplate(e: ElementRef<'_>, classes: bool) -> bool {
    let name = e.value().name();
    if DROP_TAGS.contains(&name) || is_hidden(e) {
        return true;
    }
    // Judged without its own boilerplate, so `content-with-sidebar` wrappers
    // are measured by their content part.
    let prose = |e: ElementRef<'_>| {
        let (text, links) = text_and_link_len(e, &|c| is_boilerplate(c, classes));
        text > 500 && (links as f64) < 0.3 * text as f64
    };
    match name {
        // Keep a header that holds the article title; drop site headers.
        "header" => return !has_h1(e),
        // Real forms are short; a form holding a whole page is a wrapper.
        // Figures are images + captions (images are not rendered), unless they
        // wrap code or tables as Jekyll/CKEditor do.
        "figure" => {
            return !e
                .descendent_elements()
                .any(|d| matches!(d.value().name(), "pre" | "table" | "blockquote"));
        }
        "form" => return text_and_link_len(e, &|_| false).0 < 1000,
        // Structural/heading tags are never dropped for their class alone.
        "body" | "html" | "main" | "article" | "h1" | "h2" | "h3" | "p" | "pre" | "code" | "td"
        | "tr" => return false,
        _ if !classes => return false,
        _ => {}
    }
    let tokens = class_tokens(e);
    let strong = is_strong(&tokens);
    if tokens.is_empty() || !(strong || is_weak(&tokens)) {
        return false;
    }
    // An `article-header` holding the title stays (the title is content).
    if has_h1(e) {
        return false;
    }
    // A wrapper like `article-body has-comments` is negative by one word only;
    // keep it when it is clearly the text-bearing container.
    if strong && !is_positive(&tokens) {
        return true;
    }
    !prose(e)
}

/// (text chars, chars inside links) below `e`, whitespace runs counted once,
/// ignoring subtrees rejected by `skip`.
pub(crate) fn text_and_link_len(
    e: ElementRef<'_>,
    skip: &dyn Fn(ElementRef<'_>) -> bool,
) -> (usize, usize) {
    fn walk(
        e: ElementRef<'_>,
        in_link: bool,
        skip: &dyn Fn(ElementRef<'_>) -> bool,
        acc: &mut (usize, usize),
    ) {
        for child in e.children() {
            match child.value() {
                Node::Text(t) => {
                    let n = t
                        .split_whitespace()
                        .map(|w| w.chars().count() + 1)
                        .sum::<usize>();
                    acc.0 += n;
                    if in_link {
                        acc.1 += n;
                    }
                }
                Node::Element(el) => {
                    let c = ElementRef::wrap(child).expect("element node");
                    if !matches!(el.name(), "script" | "style" | "noscript" | "template")
                        && !skip(c)
                    {
                        walk(c, in_link || el.name() == "a", skip, acc);
                    }
                }
                _ => {}
            }
        }
    }
    let mut acc = (0, 0);
    walk(e, false, skip, &mut acc);
    acc
}

pub(crate) fn link_density(text: usize, links: usize) -> f64 {
    if text == 0 {
        0.0
    } else {
        links as f64 / text as f64
    }
}
