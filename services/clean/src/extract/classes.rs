//! Class and id words: which tokens of an element's `class` and `id` mark boilerplate, content
//! or a headline block. Matched per token (class names are split on `-`, `_`, spaces and
//! camelCase) so that e.g. `ad` does not hit `header`/`read`.

use crate::markdown::dom::Dom;

/// Words that mark boilerplate. Strong words are dropped whatever their size ...
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
    // A call to action: subscribe, join, download the app.
    "cta",
    "similar",
    // Customers' reviews of a product, a shop's comments ("review" alone names review
    // articles too).
    "reviews",
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
    "promotion",
    "related",
    "copyright",
];
/// ... weak words (page builders put `widget` on everything) only when the
/// element is small or mostly links. `paywall` marks the subscription prompt, but as
/// often the article text that sits behind it (served in full to crawlers).
const WEAK_EXACT: &[&str] = &[
    "menu",
    "banner",
    "header",
    "masthead",
    "widget",
    "byline",
    "tags",
    "tag",
    "toolbar",
    "print",
    "skip",
    "meta",
    "author",
    "signup",
    "more",
    "paywall",
    "date",
    "dates",
    "dateline",
    "timestamp",
    "pubdate",
    "disclaimer",
    "disclosure",
    "prev",
    "previous",
    "pagination",
    "pager",
];
const POSITIVE: &[&str] = &[
    "article", "body", "content", "entry", "main", "post", "text", "story", "blog", "hentry",
    "page",
];
/// Words for the block around a headline (title, standfirst, byline, date).
const HEADING: &[&str] = &["header", "heading", "headline", "title", "hero", "masthead"];

/// Class/id verdict bits.
pub(crate) const STRONG: u8 = 1;
pub(crate) const WEAK: u8 = 2;
pub(crate) const POSITIVE_CLASS: u8 = 4;
pub(crate) const HEADING_CLASS: u8 = 8;

/// Calls `f` with each token of class + id (`socialShare-bar` → social, Share, bar), without
/// allocating.
fn for_each_token(classes: Option<&str>, id: Option<&str>, mut f: impl FnMut(&str)) {
    for part in classes.into_iter().chain(id) {
        let mut start = None;
        let mut prev_lower = false;
        for (k, c) in part.char_indices() {
            // Class names are nearly always ASCII; its predicates are a table lookup.
            let (alphanumeric, upper, lower) = if c.is_ascii() {
                (
                    c.is_ascii_alphanumeric(),
                    c.is_ascii_uppercase(),
                    c.is_ascii_lowercase(),
                )
            } else {
                (c.is_alphanumeric(), c.is_uppercase(), c.is_lowercase())
            };
            if !alphanumeric || (upper && prev_lower) {
                if let Some(s) = start.take() {
                    f(&part[s..k]);
                }
            }
            if alphanumeric && start.is_none() {
                start = Some(k);
            }
            prev_lower = lower;
        }
        if let Some(s) = start {
            f(&part[s..]);
        }
    }
}

/// STRONG / WEAK / POSITIVE_CLASS / HEADING_CLASS bits for one token.
fn token_bits(token: &str) -> u8 {
    // Every listed word is short and ASCII: compare a lowercased copy of the token's head.
    let mut buf = [0u8; 16];
    let head = &token.as_bytes()[..token.len().min(buf.len())];
    let buf = &mut buf[..head.len()];
    buf.copy_from_slice(head);
    buf.make_ascii_lowercase();
    let whole = token.len() <= buf.len();
    let word = |w: &&str| whole && w.as_bytes() == &buf[..];
    let mut bits = 0;
    if STRONG_EXACT.iter().any(word) || STRONG_PREFIX.iter().any(|p| buf.starts_with(p.as_bytes()))
    {
        bits |= STRONG;
    }
    if WEAK_EXACT.iter().any(word) {
        bits |= WEAK;
    }
    if POSITIVE.iter().any(word) {
        bits |= POSITIVE_CLASS;
    }
    if HEADING.iter().any(word) {
        bits |= HEADING_CLASS;
    }
    bits
}

/// STRONG / WEAK / POSITIVE_CLASS / HEADING_CLASS bits for an element's class and id.
pub(crate) fn class_bits(classes: Option<&str>, id: Option<&str>) -> u8 {
    let mut bits = 0;
    for_each_token(classes, id, |t| bits |= token_bits(t));
    bits
}

/// Class + id split into lowercase tokens, for comparing siblings' classes.
pub(crate) fn class_tokens(dom: &Dom<'_>, i: usize) -> Vec<String> {
    let mut out = Vec::new();
    for_each_token(dom.attr(i, "class"), dom.attr(i, "id"), |t| {
        out.push(t.to_lowercase())
    });
    out
}

/// Readability-style class weight: ±25 for negative / positive class+id words.
pub(crate) fn class_weight(bits: u8) -> f64 {
    let mut w = 0.0;
    if bits & (STRONG | WEAK) != 0 {
        w -= 25.0;
    }
    if bits & POSITIVE_CLASS != 0 {
        w += 25.0;
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_tokens_split_on_case_and_punctuation() {
        assert_eq!(class_bits(Some("socialShare-bar"), None), STRONG);
        assert_eq!(
            class_bits(Some("header-content"), None),
            WEAK | POSITIVE_CLASS | HEADING_CLASS
        );
        assert_eq!(class_bits(Some("reading"), Some("x")), 0);
        assert_eq!(class_bits(None, Some("commentList")), STRONG);
        // Customers' reviews are a shop's comments; a review article is no boilerplate.
        assert_eq!(class_bits(Some("pipf-seo-reviews__review"), None), STRONG);
        assert_eq!(
            class_bits(Some("article-review-body"), None),
            POSITIVE_CLASS
        );
    }
}
