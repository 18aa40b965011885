//! What a page says about itself: title, headline, canonical URL, `<base>`, and where its
//! body and candidate content containers are — gathered in one pass over the elements.

use crate::markdown::dom::{Dom, Tag};
use trawl_text::collapse_whitespace;

use super::container;

/// What the page says about itself, gathered in one pass over the elements.
#[derive(Default)]
pub(super) struct Meta<'a> {
    og_title: Option<&'a str>,
    title: Option<usize>,
    /// The first non-empty `<h1>` and its text.
    pub(super) h1: Option<(usize, String)>,
    pub(super) canonical: Option<&'a str>,
    /// Who wrote it: `<meta name=author>` and kin, else an `itemprop=author` or `.byline`
    /// element's text.
    byline_meta: Option<&'a str>,
    byline_element: Option<usize>,
    /// When it was published: `article:published_time` and kin, else `itemprop=datePublished`,
    /// else the first `<time datetime>`.
    published_meta: Option<&'a str>,
    published_time: Option<&'a str>,
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
                Tag::Meta => {
                    let key = (dom.attr(i, "name").or_else(|| dom.attr(i, "property")))
                        .or_else(|| dom.attr(i, "itemprop"))
                        .map(str::to_ascii_lowercase);
                    let content = dom
                        .attr(i, "content")
                        .map(str::trim)
                        .filter(|c| !c.is_empty());
                    match key.as_deref() {
                        Some(AUTHOR_KEYS!()) if m.byline_meta.is_none() => {
                            // article:author is often a profile URL, which names nobody.
                            m.byline_meta = content.filter(|c| !c.starts_with("http"));
                        }
                        Some(PUBLISHED_KEYS!()) if m.published_meta.is_none() => {
                            m.published_meta = content;
                        }
                        _ => {}
                    }
                }
                Tag::Base if m.base.is_none() => m.base = dom.attr(i, "href"),
                Tag::Body if m.body.is_none() => m.body = Some(i),
                Tag::H1 if m.h1.is_none() => {
                    let text = collapse_whitespace(&dom.text_of(i));
                    m.h1 = (!text.is_empty()).then_some((i, text));
                }
                _ => {}
            }
            if m.byline_element.is_none()
                && (dom.attr(i, "itemprop") == Some("author")
                    || dom.attr(i, "rel") == Some("author")
                    || dom.attr(i, "class").is_some_and(|c| {
                        c.split_ascii_whitespace()
                            .any(|c| c == "byline" || c == "author")
                    }))
            {
                m.byline_element = Some(i);
            }
            if m.published_time.is_none() {
                let datetime = match dom.attr(i, "itemprop") {
                    Some("datePublished") => {
                        dom.attr(i, "datetime").or_else(|| dom.attr(i, "content"))
                    }
                    _ => None,
                }
                .or_else(|| dom.attr(i, "datetime").filter(|_| is_time(dom, i)));
                m.published_time = datetime.map(str::trim).filter(|d| !d.is_empty());
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
        let og = self
            .og_title
            .map(collapse_whitespace)
            .filter(|t| !t.is_empty());
        let head = self
            .title
            .map(|t| collapse_whitespace(&dom.text_of(t)))
            .filter(|t| !t.is_empty());
        match (og.or(head), self.h1.as_ref().map(|(_, h)| h.clone())) {
            (Some(m), Some(h)) if m.starts_with(&h) => h,
            (Some(m), _) => m,
            (None, Some(h)) => h,
            (None, None) => String::new(),
        }
    }
}

/// `<meta>` names that say who wrote the page.
macro_rules! AUTHOR_KEYS {
    () => {
        "author" | "article:author" | "byl" | "parsely-author" | "sailthru.author" | "dc.creator"
    };
}
use AUTHOR_KEYS;

/// `<meta>` names that say when the page was published.
macro_rules! PUBLISHED_KEYS {
    () => {
        "article:published_time"
            | "datepublished"
            | "date"
            | "pubdate"
            | "publishdate"
            | "parsely-pub-date"
            | "sailthru.date"
            | "dc.date"
            | "dc.date.issued"
    };
}
use PUBLISHED_KEYS;

fn is_time(dom: &Dom<'_>, i: usize) -> bool {
    dom.element(i).is_some_and(|e| e.value().name() == "time")
}

impl Meta<'_> {
    /// The author as the page names them, at most a line of text.
    pub(super) fn byline(&self, dom: &Dom<'_>) -> Option<String> {
        let text = match self.byline_meta {
            Some(name) => collapse_whitespace(name),
            None => collapse_whitespace(&dom.text_of(self.byline_element?)),
        };
        let text = text
            .trim_start_matches("By ")
            .trim_start_matches("by ")
            .trim();
        (!text.is_empty() && text.chars().count() <= 120).then(|| text.to_owned())
    }

    /// The publication date as the page writes it (ISO 8601 in nearly every case).
    pub(super) fn published(&self) -> Option<String> {
        self.published_meta
            .or(self.published_time)
            .map(|d| d.trim().to_owned())
    }
}
