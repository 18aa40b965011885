//! What a page says about itself: title, headline, canonical URL, `<base>`, and where its
//! body and candidate content containers are — gathered in one pass over the elements.

use crate::markdown::dom::{Dom, Tag};

use super::container;

/// What the page says about itself, gathered in one pass over the elements.
#[derive(Default)]
pub(super) struct Meta<'a> {
    og_title: Option<&'a str>,
    title: Option<usize>,
    /// The first non-empty `<h1>` and its text.
    pub(super) h1: Option<(usize, String)>,
    pub(super) canonical: Option<&'a str>,
    pub(super) base: Option<&'a str>,
    pub(super) body: Option<usize>,
    /// Elements matching any of the known containers, in document order, with the kinds
    /// they match ([`container::kinds`]).
    pub(super) containers: Vec<(usize, u16)>,
}

impl<'a> Meta<'a> {
    pub(super) fn new(dom: &Dom<'a>) -> Meta<'a> {
        let mut m = Meta::default();
        for i in 0..dom.len() {
            match dom.tag(i) {
                Tag::Text => continue,
                Tag::Title if m.title.is_none() => m.title = Some(i),
                Tag::Meta
                    if m.og_title.is_none()
                        && (dom.attr(i, "property") == Some("og:title")
                            || dom.attr(i, "name") == Some("og:title")) =>
                {
                    m.og_title = dom.attr(i, "content");
                }
                Tag::Link
                    if m.canonical.is_none()
                        && dom.attr(i, "rel").is_some_and(|r| {
                            r.split_ascii_whitespace().any(|t| t == "canonical")
                        }) =>
                {
                    m.canonical = dom.attr(i, "href");
                }
                Tag::Base if m.base.is_none() => m.base = dom.attr(i, "href"),
                Tag::Body if m.body.is_none() => m.body = Some(i),
                Tag::H1 if m.h1.is_none() => {
                    let text = collapse(&dom.text_of(i));
                    m.h1 = (!text.is_empty()).then_some((i, text));
                }
                _ => {}
            }
            let kinds = container::kinds(dom, i);
            if kinds != 0 {
                m.containers.push((i, kinds));
            }
        }
        m
    }

    /// og:title, else <title>, else the first <h1>; but the h1 when the title merely
    /// extends it (`Headline | Site name`).
    pub(super) fn title(&self, dom: &Dom<'_>) -> String {
        let og = self.og_title.map(collapse).filter(|t| !t.is_empty());
        let head = self
            .title
            .map(|t| collapse(&dom.text_of(t)))
            .filter(|t| !t.is_empty());
        match (og.or(head), self.h1.as_ref().map(|(_, h)| h.clone())) {
            (Some(m), Some(h)) if m.starts_with(&h) => h,
            (Some(m), _) => m,
            (None, Some(h)) => h,
            (None, None) => String::new(),
        }
    }
}

pub(super) fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
