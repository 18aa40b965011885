//! Readability-style scoring extractor: the fallback when no known content
//! container passes the quality check.
//!
//! Paragraph-like nodes award points (length, commas) to their ancestors; the
//! best-scoring ancestor after a link-density penalty wins, and siblings that
//! look like continuation of the article are pulled in with it.

use crate::markdown::dom::{Dom, Tag};

use super::boilerplate::{Judged, BLOCK_CHILD, DIRECT_TEXT};
use super::classes::{class_tokens, class_weight};

/// The chosen content: `root` and, if non-empty, the only children of `root`
/// to keep (the winning candidate plus related siblings).
pub(crate) struct Choice {
    pub root: usize,
    pub keep: Vec<usize>,
}

fn base_score(dom: &Dom<'_>, j: &Judged, e: usize) -> f64 {
    let tag = match dom.tag(e) {
        Tag::Div | Tag::Article | Tag::Main => 5.0,
        Tag::Pre | Tag::Td | Tag::Blockquote | Tag::Section => 3.0,
        Tag::Address | Tag::Ol | Tag::Ul | Tag::Dl | Tag::Dd | Tag::Dt | Tag::Li | Tag::Form => {
            -3.0
        }
        Tag::H1 | Tag::H2 | Tag::H3 | Tag::H4 | Tag::H5 | Tag::H6 | Tag::Th => -5.0,
        _ => 0.0,
    };
    tag + class_weight(j.facts[e].class)
}

/// Paragraph-ish: real <p>/<pre>, or a div/section/cell holding only inline content (many
/// CMSs write paragraphs as `<div>text<br><br>text</div>`). A cell with blocks inside is
/// layout: old sites put the whole page in a table, the article in one cell.
fn is_paragraph(dom: &Dom<'_>, j: &Judged, e: usize) -> bool {
    match dom.tag(e) {
        Tag::P | Tag::Pre => true,
        Tag::Td | Tag::Div | Tag::Section | Tag::Span | Tag::Font => {
            let flags = j.facts[e].flags;
            flags & BLOCK_CHILD == 0 && flags & DIRECT_TEXT != 0
        }
        _ => false,
    }
}

/// Score every paragraph below `body` into its ancestors, in one loop over the subtree.
fn scores(dom: &Dom<'_>, j: &Judged, body: usize) -> (Vec<f64>, Vec<usize>) {
    let mut score = vec![f64::NAN; dom.len()];
    let mut scored = Vec::new();
    let mut award = |owner: usize, len: u32, commas: u32| {
        if len < 25 {
            return;
        }
        let points = 1.0 + f64::from(commas) + f64::from((len / 100).min(3));
        let ancestors = std::iter::once(owner).chain(dom.ancestors(owner)).take(5);
        for (level, a) in ancestors.enumerate() {
            if dom.tag(a) == Tag::Html {
                break;
            }
            let div = match level {
                0 => 1.0,
                1 => 2.0,
                n => n as f64 * 3.0,
            };
            if score[a].is_nan() {
                score[a] = base_score(dom, j, a);
                scored.push(a);
            }
            score[a] += points / div;
        }
    };
    let mut i = body + 1;
    while i < dom.end(body) {
        if dom.tag(i) == Tag::Text {
            i += 1;
            continue;
        }
        if j.boilerplate[i] {
            i = dom.end(i);
            continue;
        }
        let f = j.facts[i];
        if is_paragraph(dom, j, i) {
            if let Some(owner) = dom.parent(i) {
                award(owner, f.raw, f.commas);
            }
            i = dom.end(i);
        } else {
            // Loose text next to block children (`<div>Text<br><div>..</div></div>`)
            // is a paragraph readability would wrap in a <p> owned by this element.
            award(i, f.direct, f.direct_commas);
            i += 1;
        }
    }
    (score, scored)
}

/// Last non-blank character of the text below `e`.
fn last_char(dom: &Dom<'_>, e: usize) -> Option<char> {
    (e..dom.end(e))
        .rev()
        .filter_map(|k| dom.text(k))
        .find_map(|t| t.trim_end().chars().next_back())
}

pub(crate) fn choose(dom: &Dom<'_>, j: &Judged, body: usize) -> Option<Choice> {
    let (score, scored) = scores(dom, j, body);
    let adjusted = |e: usize| score[e] * (1.0 - j.measure[e].link_density());
    // The first of equal scores wins.
    let (mut top, top_score) = (scored.iter().map(|&e| (e, adjusted(e))))
        .reduce(|best, next| if best.1 >= next.1 { best } else { next })?;
    // A lone child says nothing its parent doesn't; widen so siblings can join.
    while let Some(parent) = dom.parent(top) {
        if matches!(dom.tag(parent), Tag::Body | Tag::Html)
            || dom.child_elements(parent).nth(1).is_some()
        {
            break;
        }
        top = parent;
    }
    let Some(parent) = dom.parent(top).filter(|&p| dom.tag(p) != Tag::Html) else {
        return Some(Choice {
            root: top,
            keep: Vec::new(),
        });
    };
    // Siblings that score well or read like article paragraphs belong to the article.
    let threshold = (top_score * 0.2).max(10.0);
    let top_class = class_tokens(dom, top);
    let mut keep = Vec::new();
    for sib in dom.child_elements(parent) {
        if sib == top {
            keep.push(sib);
            continue;
        }
        if j.boilerplate[sib] {
            continue;
        }
        let mut s = if score[sib].is_nan() {
            0.0
        } else {
            adjusted(sib)
        };
        if !top_class.is_empty() && class_tokens(dom, sib) == top_class {
            s += top_score * 0.2;
        }
        let m = j.measure[sib];
        let ld = m.link_density();
        let para_like = is_paragraph(dom, j, sib);
        let ok = s >= threshold
            || (para_like && m.text > 80 && ld < 0.25)
            || (para_like
                && m.text > 0
                && ld == 0.0
                && last_char(dom, sib).is_some_and(|c| matches!(c, '.' | '!' | '?' | '"' | '”')));
        if ok {
            keep.push(sib);
        }
    }
    Some(Choice { root: parent, keep })
}
