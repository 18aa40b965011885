//! What counts as boilerplate inside a chosen content node, plus the text
//! measures (length, link density) shared by both extraction stages.
//!
//! Everything is computed for all nodes at once, bottom-up over the flat [`Dom`]: a node's
//! verdict needs only its own tag and classes and the measures of its subtree *without* its
//! boilerplate descendants, which are final by the time the reverse loop reaches it.

use crate::markdown::dom::{Dom, Tag};

use super::classes::{class_bits, HEADING_CLASS, POSITIVE_CLASS, STRONG, WEAK};

/// Tags that never carry article text. (`form` is handled separately: ASP.NET
/// pages wrap the whole document in one.)
fn is_drop_tag(tag: Tag) -> bool {
    matches!(
        tag,
        Tag::Nav
            | Tag::Aside
            | Tag::Footer
            | Tag::Iframe
            | Tag::Button
            | Tag::Select
            | Tag::Input
            | Tag::Textarea
            | Tag::Svg
            | Tag::Dialog
            | Tag::Object
            | Tag::Embed
            | Tag::Figcaption
    )
}

/// A headline block with more text than this besides the headline holds more than a
/// standfirst, byline and date.
const MAX_HEADLINE_EXTRAS: u32 = 400;

/// `needle` (lowercase, no spaces) occurs in `hay` once ASCII whitespace is ignored and case
/// folded (`display: None`). Attempts start only at the needle's first byte, so a long run
/// of spaces is crossed by a handful of attempts, not by every position before it.
fn contains_squeezed(hay: &str, needle: &str) -> bool {
    let hay = hay.as_bytes();
    let needle = needle.as_bytes();
    (0..hay.len())
        .filter(|&start| hay[start].to_ascii_lowercase() == needle[0])
        .any(|start| {
            let mut rest = hay[start..]
                .iter()
                .filter(|b| !b.is_ascii_whitespace())
                .map(u8::to_ascii_lowercase);
            needle.iter().all(|&n| rest.next() == Some(n))
        })
}

/// Class names of the embed codes social platforms hand out (`<blockquote class="twitter-tweet">`
/// …): a post quoted by the author, whatever the classes of the wrappers around it.
const EMBEDDED_POSTS: &[&str] = &["twitter-tweet", "instagram-media", "tiktok-embed"];

/// Class bits and HIDDEN / EMBEDDED_POST flags of one element, from one pass over its attributes.
fn element_facts(tag: Tag, e: scraper::ElementRef<'_>) -> (u8, u8) {
    let (mut class, mut id, mut flags) = (None, None, 0);
    for (name, value) in e.value().attrs() {
        match name {
            "class" => class = Some(value),
            "id" => id = Some(value),
            "hidden" => flags |= HIDDEN,
            "aria-hidden" if value.trim() == "true" => flags |= HIDDEN,
            "style"
                if contains_squeezed(value, "display:none")
                    || contains_squeezed(value, "visibility:hidden") =>
            {
                flags |= HIDDEN
            }
            _ => {}
        }
    }
    // React's streaming renderer sends each part of the page that was not ready at first in a
    // `<div hidden id="S:n">` at the end of the body, and a script moves it into place: what
    // a reader sees once the page has loaded (a shop's whole product description).
    let streamed = id
        .and_then(|id| id.strip_prefix("S:"))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    if streamed {
        flags &= !HIDDEN;
    }
    let embedded = tag == Tag::Blockquote
        && class.is_some_and(|c| {
            c.split_ascii_whitespace()
                .any(|c| EMBEDDED_POSTS.contains(&c))
        });
    if embedded {
        flags |= EMBEDDED_POST;
    }
    (class_bits(class, id), flags)
}

/// Text measure used throughout: characters of each whitespace-separated word plus one,
/// so whitespace runs count once, and a character of a script without spaces counts as much
/// as the Latin characters it takes to say as much ([`trawl_text::char_weight`]): the
/// thresholds ("a paragraph has 25", "a container 250") hold in every language, and a
/// 120-character Chinese news item is an article, not a page of links.
pub(crate) fn text_len(s: &str) -> (u32, u32) {
    if s.is_ascii() {
        return ascii_text_len(s.as_bytes());
    }
    let mut len = 0u32;
    let mut commas = 0u32;
    let mut in_word = false;
    for c in s.chars() {
        if c.is_whitespace() {
            in_word = false;
            continue;
        }
        if !in_word {
            len = len.saturating_add(1);
            in_word = true;
        }
        len = len.saturating_add(trawl_text::char_weight(c) as u32);
        if matches!(c, ',' | '，' | '、') {
            commas = commas.saturating_add(1);
        }
    }
    (len, commas)
}

/// [`text_len`] of ASCII text, byte by byte: every character weighs one.
fn ascii_text_len(s: &[u8]) -> (u32, u32) {
    let (mut len, mut commas, mut in_word) = (0u32, 0u32, false);
    for &b in s {
        if trawl_text::is_ascii_space(b) {
            in_word = false;
            continue;
        }
        len = len.saturating_add(if in_word { 1 } else { 2 });
        in_word = true;
        commas = commas.saturating_add(u32::from(b == b','));
    }
    (len, commas)
}

/// Subtree contains an `<h1>`.
pub(crate) const HAS_H1: u8 = 1;
/// Subtree contains code, a table or a quote (a figure that is content).
const HAS_RICH: u8 = 2;
/// Some child element is a block (the node is not a plain paragraph).
pub(crate) const BLOCK_CHILD: u8 = 4;
/// Some direct text child is not blank.
pub(crate) const DIRECT_TEXT: u8 = 8;
const HIDDEN: u8 = 16;
/// Subtree holds a social post embedded with its platform's embed code.
const EMBEDDED_POST: u8 = 32;

/// Facts about each node that do not depend on what else is boilerplate.
#[derive(Clone, Copy, Default)]
pub(crate) struct Facts {
    /// All text below, boilerplate included.
    pub(crate) raw: u32,
    pub(crate) commas: u32,
    /// Text of the direct text children only (loose text between blocks).
    pub(crate) direct: u32,
    pub(crate) direct_commas: u32,
    pub(crate) class: u8,
    pub(crate) flags: u8,
}

/// Text below a node, without its boilerplate descendants.
#[derive(Clone, Copy, Default)]
pub(crate) struct Measure {
    pub(crate) text: u32,
    pub(crate) links: u32,
}

impl Measure {
    pub(crate) fn link_density(self) -> f64 {
        if self.text == 0 {
            0.0
        } else {
            f64::from(self.links) / f64::from(self.text)
        }
    }
}

/// Everything the extraction stages ask about nodes, for one setting of `classes`.
pub(crate) struct Judged {
    pub(crate) facts: Vec<Facts>,
    pub(crate) boilerplate: Vec<bool>,
    pub(crate) measure: Vec<Measure>,
}

/// Tags that make their parent "not a paragraph" (readability's DIV_TO_P_ELEMS, widened).
fn is_block(tag: Tag) -> bool {
    matches!(
        tag,
        Tag::P
            | Tag::Div
            | Tag::Section
            | Tag::Article
            | Tag::Table
            | Tag::Ul
            | Tag::Ol
            | Tag::Dl
            | Tag::Pre
            | Tag::Blockquote
            | Tag::Form
            | Tag::H1
            | Tag::H2
            | Tag::H3
            | Tag::H4
            | Tag::H5
            | Tag::H6
            | Tag::Figure
            | Tag::Header
            | Tag::Footer
            | Tag::Main
            | Tag::Aside
            | Tag::Nav
    )
}

impl Judged {
    /// Judge every node of `dom`. With `classes` false only tags and hidden markers count
    /// (retry mode for sites whose class names defeat the patterns).
    pub(crate) fn new(dom: &Dom<'_>, classes: bool) -> Judged {
        let n = dom.len();
        let mut facts = vec![Facts::default(); n];
        let mut boilerplate = vec![false; n];
        let mut measure = vec![Measure::default(); n];
        for i in (0..n).rev() {
            let tag = dom.tag(i);
            if let Some(t) = dom.text(i) {
                let (len, commas) = text_len(t);
                facts[i].raw = len;
                facts[i].commas = commas;
                measure[i].text = len;
            } else {
                let (class, flags) = element_facts(tag, dom.element(i).expect("an element"));
                facts[i].class = class;
                facts[i].flags |= flags;
                if tag == Tag::A {
                    measure[i].links = measure[i].text;
                }
                boilerplate[i] = judge(tag, facts[i], measure[i], classes);
            }
            let Some(p) = dom.parent(i) else { continue };
            let (f, m) = (facts[i], measure[i]);
            let pf = &mut facts[p];
            // Saturating: sums over a whole page must not wrap, however large the page.
            pf.raw = pf.raw.saturating_add(f.raw);
            pf.commas = pf.commas.saturating_add(f.commas);
            pf.flags |= f.flags & (HAS_H1 | HAS_RICH | EMBEDDED_POST);
            match tag {
                Tag::Text => {
                    pf.direct = pf.direct.saturating_add(f.raw);
                    pf.direct_commas = pf.direct_commas.saturating_add(f.commas);
                    if f.raw > 0 {
                        pf.flags |= DIRECT_TEXT;
                    }
                }
                Tag::H1 => pf.flags |= HAS_H1,
                Tag::Pre | Tag::Table | Tag::Blockquote => pf.flags |= HAS_RICH,
                _ => {}
            }
            if is_block(tag) {
                pf.flags |= BLOCK_CHILD;
            }
            if !boilerplate[i] {
                measure[p].text = measure[p].text.saturating_add(m.text);
                measure[p].links = measure[p].links.saturating_add(m.links);
            }
        }
        Judged {
            facts,
            boilerplate,
            measure,
        }
    }

    /// Readability's "clean conditionally", reduced to its strongest signal: a
    /// block that is mostly links (related-article lists, tag clouds) is not prose.
    pub(crate) fn link_heavy(&self, dom: &Dom<'_>, i: usize) -> bool {
        let m = self.measure[i];
        match dom.tag(i) {
            Tag::Div | Tag::Section | Tag::Ul | Tag::Ol | Tag::Dl | Tag::Table => {
                m.text > 0 && m.link_density() > 0.5
            }
            // A paragraph that is one link is a teaser for another page ("READ MORE: …"),
            // unless the link spells out its address (a cited source).
            Tag::P if m.text > 0 && m.link_density() > 0.9 => {
                let text = dom.text_of(i);
                let text = text.trim_start_matches(|c: char| !c.is_alphanumeric());
                !(text.starts_with("http") || text.starts_with("www."))
            }
            _ => false,
        }
    }

    /// The headline block around the `<h1>` at `h1`, below `root`: the outermost ancestor that
    /// is a header (by tag or class) holding little text besides the headline. Its standfirst,
    /// byline and dates are not the article; the headline is kept.
    pub(crate) fn headline_block(&self, dom: &Dom<'_>, root: usize, h1: usize) -> Option<usize> {
        let title = self.measure[h1].text;
        dom.ancestors(h1)
            .take_while(|&a| a != root)
            .filter(|&a| {
                let headerish = dom.tag(a) == Tag::Header
                    || self.facts[a].class & (HEADING_CLASS | STRONG | WEAK) != 0;
                headerish && self.measure[a].text.saturating_sub(title) < MAX_HEADLINE_EXTRAS
            })
            .last()
    }

    /// Some ancestor of `i` is boilerplate.
    pub(crate) fn inside_boilerplate(&self, dom: &Dom<'_>, i: usize) -> bool {
        dom.ancestors(i).any(|a| self.boilerplate[a])
    }
}

/// The verdict for one element, given its facts and its measure without boilerplate below.
fn judge(tag: Tag, facts: Facts, m: Measure, classes: bool) -> bool {
    if is_drop_tag(tag) || facts.flags & HIDDEN != 0 {
        return true;
    }
    match tag {
        // Keep a header that holds the article title; drop site headers.
        Tag::Header => return facts.flags & HAS_H1 == 0,
        // Figures are images + captions (images are not rendered), unless they
        // wrap code or tables as Jekyll/CKEditor do.
        Tag::Figure => return facts.flags & HAS_RICH == 0,
        // Real forms are short; a form holding a whole page is a wrapper.
        Tag::Form => return facts.raw < 1000,
        // Structural tags and the headline are never dropped for their class alone.
        Tag::Body
        | Tag::Html
        | Tag::Main
        | Tag::Article
        | Tag::H1
        | Tag::Pre
        | Tag::Code
        | Tag::Td
        | Tag::Tr => return false,
        _ if !classes || facts.flags & EMBEDDED_POST != 0 => return false,
        // A subheading called `section-header` is still a subheading: only strong words
        // (`related-posts-title`, `comments-heading`) drop one.
        Tag::H2 | Tag::H3 | Tag::H4 | Tag::H5 | Tag::H6 => {
            return facts.class & STRONG != 0 && facts.class & POSITIVE_CLASS == 0
        }
        _ => {}
    }
    let strong = facts.class & STRONG != 0;
    if !strong && facts.class & WEAK == 0 {
        return false;
    }
    // An `article-header` holding the title stays (the title is content).
    if facts.flags & HAS_H1 != 0 {
        return false;
    }
    // A wrapper like `article-body has-comments` is negative by one word only;
    // keep it when it is clearly the text-bearing container.
    if strong && facts.class & POSITIVE_CLASS == 0 {
        return true;
    }
    // Judged without its own boilerplate, so `content-with-sidebar` wrappers
    // are measured by their content part.
    let prose = m.text > 500 && (m.links as f64) < 0.3 * m.text as f64;
    !prose
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_len_counts_whitespace_runs_once() {
        assert_eq!(text_len("  ab,  c \n"), (6, 1));
        // Counted byte by byte above (ASCII), char by char here: alike.
        assert_eq!(text_len("  ab,  c \né"), (8, 1));
        assert_eq!(text_len(""), (0, 0));
        // Scripts without spaces weigh what they say: 北京 is a word, like "Beijing".
        assert_eq!(text_len("北京，上海"), (1 + 3 + 3 + 1 + 3 + 3, 1));
        assert_eq!(text_len("서울 시"), (1 + 2 + 2 + 1 + 2, 0));
    }
}
