//! Stage 1: well-known content containers (`itemprop=articleBody`, `.entry-content`,
//! `<article>` …), trusted when they pass a quality check.

use crate::markdown::dom::{Dom, Tag};

use super::boilerplate::Judged;

/// Content containers, most specific first: a body-only class beats `article`,
/// which beats page-level wrappers like `main` / `#content` (those often hold sidebars).
#[derive(Clone, Copy)]
enum Container {
    Itemprop(&'static str),
    Role(&'static str),
    Class(&'static str),
    Id(&'static str),
    Tag(Tag),
}

const CONTAINERS: &[Container] = &[
    Container::Itemprop("articleBody"),
    Container::Class("post-content"),
    Container::Class("entry-content"),
    Container::Class("article-body"),
    Container::Id("main-text"),
    Container::Class("markdown-body"),
    Container::Class("rst-content"),
    Container::Class("theme-doc-markdown"),
    Container::Tag(Tag::Article),
    Container::Tag(Tag::Main),
    Container::Role("main"),
    Container::Id("content"),
];
pub(super) const MIN_CONTAINER_TEXT: u32 = 250;
const MAX_CONTAINER_LINK_DENSITY: f64 = 0.5;

impl Container {
    fn matches(self, tag: Tag, attrs: &ContainerAttrs<'_>, classes: &[&str]) -> bool {
        match self {
            Container::Itemprop(value) => attrs.itemprop == Some(value),
            Container::Role(value) => attrs.role == Some(value),
            Container::Class(class) => classes.contains(&class),
            Container::Id(id) => attrs.id == Some(id),
            Container::Tag(t) => tag == t,
        }
    }
}

/// The attributes [`CONTAINERS`] look at.
#[derive(Default)]
struct ContainerAttrs<'a> {
    class: Option<&'a str>,
    id: Option<&'a str>,
    itemprop: Option<&'a str>,
    role: Option<&'a str>,
}

/// Bit `k` set when element `i` matches `CONTAINERS[k]`.
pub(super) fn kinds(dom: &Dom<'_>, i: usize) -> u16 {
    let Some(e) = dom.element(i) else { return 0 };
    let mut a = ContainerAttrs::default();
    for (name, value) in e.value().attrs() {
        match name {
            "class" => a.class = Some(value),
            "id" => a.id = Some(value),
            "itemprop" => a.itemprop = Some(value),
            "role" => a.role = Some(value),
            _ => {}
        }
    }
    let tag = dom.tag(i);
    // Class lists are short; a small stack array avoids an allocation per element.
    let mut classes = [""; 8];
    let mut n = 0;
    for c in a
        .class
        .unwrap_or("")
        .split_ascii_whitespace()
        .take(classes.len())
    {
        classes[n] = c;
        n += 1;
    }
    CONTAINERS
        .iter()
        .enumerate()
        .filter(|(_, c)| c.matches(tag, &a, &classes[..n]))
        .fold(0, |bits, (k, _)| bits | 1 << k)
}

/// Stage 1: the first container kind with an acceptable match. Among several matches of that
/// kind (teaser `<article>`s, related posts) the one holding the page's headline is the
/// article. Without the headline, the one with most text; and when matches of its kind stand
/// beside it (a forum thread's posts, a listing's entries, as opposed to teasers elsewhere on
/// the page) the content is all of them, their parent.
pub(super) fn choose(
    dom: &Dom<'_>,
    judged: &Judged,
    candidates: &[(usize, u16)],
    h1: Option<usize>,
) -> Option<usize> {
    let holds_h1 = |e: usize| h1.is_some_and(|h| e < h && h < dom.end(e));
    (0..CONTAINERS.len()).find_map(|k| {
        let matches: Vec<usize> = candidates
            .iter()
            .filter(|&&(e, kinds)| kinds & 1 << k != 0 && !judged.inside_boilerplate(dom, e))
            .map(|&(e, _)| e)
            .filter(|&e| {
                let m = judged.measure[e];
                m.text >= MIN_CONTAINER_TEXT && m.link_density() < MAX_CONTAINER_LINK_DENSITY
            })
            .collect();
        let best = matches
            .iter()
            .copied()
            .max_by_key(|&e| (holds_h1(e), judged.measure[e].text))?;
        if holds_h1(best) {
            return Some(best);
        }
        // Posts of a thread, entries of a listing: the best match's siblings of its kind.
        let parent = dom.parent(best);
        Some(match parent {
            Some(p)
                if matches
                    .iter()
                    .any(|&e| e != best && dom.parent(e) == parent) =>
            {
                p
            }
            _ => best,
        })
    })
}

/// The page's main region: the first `<main>` or `role=main` element outside boilerplate that
/// holds text.
pub(super) fn main_region(
    dom: &Dom<'_>,
    judged: &Judged,
    candidates: &[(usize, u16)],
) -> Option<usize> {
    let main = (CONTAINERS.iter().enumerate())
        .filter(|(_, c)| matches!(c, Container::Tag(Tag::Main) | Container::Role("main")))
        .fold(0u16, |bits, (k, _)| bits | 1 << k);
    (candidates.iter())
        .find(|&&(e, kinds)| {
            kinds & main != 0 && judged.measure[e].text > 0 && !judged.inside_boilerplate(dom, e)
        })
        .map(|&(e, _)| e)
}
