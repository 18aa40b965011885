//! Pages of a document's text. Fetch writes a `<!-- page N -->` line before each page of a PDF
//! ([`marker`]); clean keeps the markers in the passages it reads of a long document, and the
//! page a sentence stands on ([`Pages::page_of`]) is the page a citation points to
//! (`…/filing.pdf#page=240`).

use std::collections::HashMap;

use crate::{collapse_whitespace, sentences, unlink};

/// The line that opens page `n` (counted from one).
pub fn marker(n: usize) -> String {
    format!("<!-- page {n} -->")
}

/// The page a line opens, when it is a [`marker`].
pub fn page_marker(line: &str) -> Option<u32> {
    let n = line
        .trim()
        .strip_prefix("<!-- page ")?
        .strip_suffix(" -->")?;
    n.parse().ok().filter(|&n| n > 0)
}

/// Whether `text` has page markers at all: most texts (HTML pages) have none, and need no
/// second look.
pub fn has_pages(text: &str) -> bool {
    text.contains("<!-- page ") && text.lines().any(|l| page_marker(l).is_some())
}

/// `text` cut at its page markers: each part with the page it stands on (`None` before the
/// first marker, and throughout a text without any). The markers themselves are in no part.
pub fn segments(text: &str) -> Vec<(Option<u32>, &str)> {
    let mut out = Vec::new();
    let (mut page, mut start, mut at) = (None, 0, 0);
    for line in text.split_inclusive('\n') {
        if let Some(n) = page_marker(line) {
            if !text[start..at].trim().is_empty() {
                out.push((page, &text[start..at]));
            }
            page = Some(n);
            start = at + line.len();
        }
        at += line.len();
    }
    if !text[start..].trim().is_empty() {
        out.push((page, &text[start..]));
    }
    out
}

/// The sentences of a paged text, each with its page.
pub struct Pages {
    /// Each sentence's page; a sentence on several pages keeps its first.
    of: HashMap<String, u32>,
    /// Each page's text in order, as sentences quote it (links as their text, whitespace
    /// collapsed), for a quote that is part of a sentence, too short to be one, or spans two.
    texts: Vec<(u32, String)>,
}

impl Pages {
    /// The pages of `text`; `None` when it has no page markers.
    pub fn of(text: &str) -> Option<Pages> {
        if !has_pages(text) {
            return None;
        }
        let mut of = HashMap::new();
        let mut texts = Vec::new();
        for (page, part) in segments(text) {
            let Some(page) = page else { continue };
            texts.push((page, collapse_whitespace(&unlink(part))));
            for s in sentences(part) {
                of.entry(s).or_insert(page);
            }
        }
        Some(Pages { of, texts })
    }

    /// The page `sentence` stands on: a sentence of the text as [`sentences`] splits it, or
    /// part of one page's text.
    pub fn page_of(&self, sentence: &str) -> Option<u32> {
        let sentence = sentence.trim();
        if sentence.is_empty() {
            return None;
        }
        (self.of.get(sentence).copied()).or_else(|| {
            (self.texts.iter())
                .find(|(_, text)| text.contains(sentence))
                .map(|(page, _)| *page)
        })
    }
}

/// The page of each of `said` in `text` (0 where none holds it); empty when `text` has no
/// pages.
pub fn pages_of<S: AsRef<str>>(text: &str, said: &[S]) -> Vec<u32> {
    match Pages::of(text) {
        Some(pages) => (said.iter())
            .map(|s| pages.page_of(s.as_ref()).unwrap_or(0))
            .collect(),
        None => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paged(pages: &[&str]) -> String {
        (pages.iter().enumerate())
            .map(|(i, p)| format!("{}\n\n{p}\n\n", marker(i + 1)))
            .collect()
    }

    #[test]
    fn segments_are_the_text_between_markers() {
        let text = format!("Title\n\n{}", paged(&["One.", "", "Three."]));
        let parts = segments(&text);
        let pages: Vec<Option<u32>> = parts.iter().map(|p| p.0).collect();
        assert_eq!(pages, [None, Some(1), Some(3)]);
        assert_eq!(parts[2].1.trim(), "Three.");
        assert!(segments("No pages here.")[0].0.is_none());
        assert_eq!(page_marker("<!-- page 0 -->"), None);
        assert_eq!(
            page_marker("<!-- truncated: 3 more pages not read -->"),
            None
        );
    }

    #[test]
    fn a_sentence_is_found_on_its_page_whole_or_in_part() {
        let text = paged(&[
            "The survey began in March.",
            "Revenue was 4.1 billion.\nIt rose by 3 percent over the year.",
        ]);
        let pages = Pages::of(&text).unwrap();
        assert_eq!(pages.page_of("The survey began in March."), Some(1));
        assert_eq!(
            pages.page_of("It rose by 3 percent over the year."),
            Some(2)
        );
        assert_eq!(pages.page_of("rose by 3 percent"), Some(2));
        assert_eq!(pages.page_of("Nothing like it."), None);
        assert!(Pages::of("No pages here.").is_none());
        let said = ["rose by 3 percent", "Nothing like it."];
        assert_eq!(pages_of(&text, &said), [2, 0]);
        assert!(pages_of("No pages here.", &said).is_empty());
    }
}
