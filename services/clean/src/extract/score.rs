//! Readability-style scoring extractor: the fallback when no known content
//! container passes the quality check.
//!
//! Paragraph-like nodes award points (length, commas) to their ancestors; the
//! best-scoring ancestor after a link-density penalty wins, and siblings that
//! look like continuation of the article are pulled in with it.

use std::collections::HashMap;

use scraper::ElementRef;

use super::boilerplate::{
    class_tokens, class_weight, is_boilerplate, link_density, text_and_link_len,
};

/// Nodes get a stable identity from their address inside the (immutable) tree;
/// ego_tree's `NodeId` is not nameable without depending on ego_tree directly.
pub(crate) fn key(e: ElementRef<'_>) -> usize {
    e.value() as *const _ as usize
}

/// The chosen content: `root` and, if non-empty, the only children of `root`
/// to keep (the winning candidate plus related siblings).
pub(crate) struct Choice<'a> {
    pub root: ElementRef<'a>,
    pub keep: Vec<usize>,
}

const BLOCKS: &[&str] = &[
    "p",
    "div",
    "section",
    "article",
    "table",
    "ul",
    "ol",
    "dl",
    "pre",
    "blockquote",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "figure",
    "header",
    "footer",
    "main",
    "aside",
    "nav",
];

fn base_score(e: ElementRef<'_>) -> f64 {
    let tag = match e.value().name() {
        "div" | "article" | "main" => 5.0,
        "pre" | "td" | "blockquote" | "section" => 3.0,
        "address" | "ol" | "ul" | "dl" | "dd" | "dt" | "li" | "form" => -3.0,
        "h1" | "h2" | "h3" | "h4" | "h5" | "h6" | "th" => -5.0,
        _ => 0.0,
    };
    tag + class_weight(e)
}

/// Paragraph-ish: real <p>/<pre>/<td>, or a div/section holding only inline content
/// (many CMSs write paragraphs as `<div>text<br><br>text</div>`).
fn is_paragraph(e: ElementRef<'_>) -> bool {
    match e.value().name() {
        "p" | "pre" | "td" => true,
        "div" | "section" | "span" | "font" => {
            e.child_elements()
                .all(|c| !BLOCKS.contains(&c.value().name()))
                && e.children()
                    .any(|c| c.value().as_text().is_some_and(|t| !t.trim().is_empty()))
        }
        _ => false,
    }
}

/// A run of paragraph text and the first element that gets points for it.
struct Unit<'a> {
    owner: ElementRef<'a>,
    text: String,
}

fn collect<'a>(e: ElementRef<'a>, classes: bool, out: &mut Vec<Unit<'a>>) {
    for c in e.child_elements() {
        if is_boilerplate(c, classes) {
            continue;
        }
        if is_paragraph(c) {
            if let Some(owner) = c.parent().and_then(ElementRef::wrap) {
                out.push(Unit {
                    owner,
                    text: c.text().collect(),
                });
            }
        } else {
            // Loose text next to block children (`<div>Text<br><div>..</div></div>`)
            // is a paragraph readability would wrap in a <p> owned by this element.
            let loose: String = c
                .children()
                .filter_map(|n| n.value().as_text().map(|t| &**t))
                .collect();
            if loose.trim().len() >= 25 {
                out.push(Unit {
                    owner: c,
                    text: loose,
                });
            }
            collect(c, classes, out);
        }
    }
}

pub(crate) fn choose(body: ElementRef<'_>, classes: bool) -> Option<Choice<'_>> {
    let mut units = Vec::new();
    collect(body, classes, &mut units);
    let mut scores: HashMap<usize, (ElementRef<'_>, f64)> = HashMap::new();
    for Unit { owner, text } in units {
        let len = text
            .split_whitespace()
            .map(|w| w.chars().count() + 1)
            .sum::<usize>();
        if len < 25 {
            continue;
        }
        let commas = text
            .chars()
            .filter(|&c| c == ',' || c == '，' || c == '、')
            .count();
        let points = 1.0 + commas as f64 + (len / 100).min(3) as f64;
        let ancestors = std::iter::once(owner)
            .chain(owner.ancestors().filter_map(ElementRef::wrap))
            .take(5);
        for (level, a) in ancestors.enumerate() {
            if a.value().name() == "html" {
                break;
            }
            let div = match level {
                0 => 1.0,
                1 => 2.0,
                n => n as f64 * 3.0,
            };
            scores.entry(key(a)).or_insert_with(|| (a, base_score(a))).1 += points / div;
        }
    }
    let skip = |e: ElementRef<'_>| is_boilerplate(e, classes);
    let mut finals: Vec<(ElementRef<'_>, f64)> = scores
        .values()
        .map(|&(e, s)| {
            let (t, l) = text_and_link_len(e, &skip);
            (e, s * (1.0 - link_density(t, l)))
        })
        .collect();
    finals.sort_by(|a, b| b.1.total_cmp(&a.1));
    let &(mut top, top_score) = finals.first()?;
    // A lone child says nothing its parent doesn't; widen so siblings can join.
    while let Some(parent) = top.parent().and_then(ElementRef::wrap) {
        if matches!(parent.value().name(), "body" | "html") || parent.child_elements().count() != 1
        {
            break;
        }
        top = parent;
    }
    let Some(parent) = top.parent().and_then(ElementRef::wrap) else {
        return Some(Choice {
            root: top,
            keep: Vec::new(),
        });
    };
    if matches!(parent.value().name(), "html") {
        return Some(Choice {
            root: top,
            keep: Vec::new(),
        });
    }
    // Siblings that score well or read like article paragraphs belong to the article.
    let threshold = (top_score * 0.2).max(10.0);
    let top_class = class_tokens(top);
    let mut keep = Vec::new();
    for sib in parent.child_elements() {
        if sib == top {
            keep.push(key(sib));
            continue;
        }
        if is_boilerplate(sib, classes) {
            continue;
        }
        let mut s = scores.get(&key(sib)).map_or(0.0, |&(e, s)| {
            let (t, l) = text_and_link_len(e, &skip);
            s * (1.0 - link_density(t, l))
        });
        if !top_class.is_empty() && class_tokens(sib) == top_class {
            s += top_score * 0.2;
        }
        let (t, l) = text_and_link_len(sib, &skip);
        let ld = link_density(t, l);
        let para_like = sib.value().name() == "p" || is_paragraph(sib);
        let text: String = if para_like {
            sib.text().collect()
        } else {
            String::new()
        };
        let ok = s >= threshold
            || (para_like && t > 80 && ld < 0.25)
            || (para_like
                && t > 0
                && ld == 0.0
                && text.trim_end().ends_with(['.', '!', '?', '"', '”']));
        if ok {
            keep.push(key(sib));
        }
    }
    Some(Choice { root: parent, keep })
}
