//! Long texts read by passage. A 300-page annual report states its answer on page 240, not in
//! its opening: a text longer than the room it has (`clean.max_chars` for a source,
//! `clean.llm_analysis_max_chars` for the LLM's prompt) keeps its passages that rank best
//! against the question (BM25, [`crate::bm25`]) wherever they stand, in the text's order, and
//! each page's marker before its first kept passage, so what is quoted from it is cited at its
//! page.
//!
//! A passage is a paragraph block ([`blocks`]) within one page, a block longer than
//! [`PASSAGE_MAX`] cut at whitespace: a page of one paragraph, or a text file without blank
//! lines, is still read by the part that answers.

use trawl_text::pages::{marker, segments};
use trawl_text::pieces;

use crate::bm25::{rank, Query};
use crate::cleaning::blocks;

/// Longest passage, in bytes.
const PASSAGE_MAX: usize = 4_096;

/// What [`fit`] kept of a text.
#[derive(Debug, PartialEq)]
pub struct Fitted {
    pub text: String,
    /// Passages kept and passages the text has; both 0 when it fitted whole.
    pub kept: usize,
    pub of: usize,
}

impl Fitted {
    /// What was read of a text of `total` bytes, for the source's notes; `None` when all of it.
    pub fn note(&self, who: &str, total: usize) -> Option<String> {
        (self.of > 0).then(|| {
            format!(
                "{who} the {} of {} passages most relevant to the question ({} of {total} characters)",
                self.kept,
                self.of,
                self.text.len(),
            )
        })
    }
}

/// One passage: its page, if the text has pages, and its text.
struct Passage<'a> {
    page: Option<u32>,
    text: &'a str,
}

/// The passages of `text`: its blocks within each page, long ones cut.
fn passages(text: &str) -> Vec<Passage<'_>> {
    let mut out = Vec::new();
    for (page, part) in segments(text) {
        for block in blocks(part) {
            let kept = (pieces(block, PASSAGE_MAX).into_iter()).filter(|p| !p.trim().is_empty());
            out.extend(kept.map(|text| Passage { page, text }));
        }
    }
    out
}

/// At most `max` bytes of `text`: all of it when it fits, else its passages that rank best for
/// `query` (those that match nothing fill any room left, from the top), in the text's order,
/// with the marker of each page they stand on.
pub fn fit(query: &Query, text: &str, max: usize) -> Fitted {
    if text.len() <= max {
        return Fitted {
            text: text.to_owned(),
            kept: 0,
            of: 0,
        };
    }
    let all = passages(text);
    let ranking = rank(query, &all.iter().map(|p| p.text).collect::<Vec<_>>());
    let mut order = ranking.order();
    order.extend((0..all.len()).filter(|&i| ranking.scores[i] <= 0.0));
    // A page's marker costs room once, with the first passage kept from it.
    let marker_len = |p: &Passage| p.page.map_or(0, |n| marker(n as usize).len() + 2);
    let mut pages_in = std::collections::HashSet::new();
    let (mut picked, mut used) = (Vec::new(), 0);
    for i in order {
        let p = &all[i];
        let cost = p.text.len()
            + match p.page {
                Some(n) if !pages_in.contains(&n) => marker_len(p),
                _ => 0,
            };
        if used + cost <= max {
            used += cost;
            pages_in.extend(p.page);
            picked.push(i);
        }
    }
    picked.sort_unstable();
    let mut out = String::with_capacity(used);
    let mut page = None;
    for &i in &picked {
        let p = &all[i];
        if p.page.is_some() && p.page != page {
            out.push_str(&marker(p.page.unwrap_or_default() as usize));
            out.push_str("\n\n");
            page = p.page;
        }
        out.push_str(p.text);
        if !p.text.ends_with('\n') {
            out.push('\n');
        }
    }
    Fitted {
        text: out,
        kept: picked.len(),
        of: all.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trawl_text::pages::Pages;

    /// A report of `n` pages about the company, its answer on page `at` alone.
    fn report(n: usize, at: usize) -> String {
        (1..=n)
            .map(|i| {
                let body = if i == at {
                    "Harlow Dynamics employed 18,420 people at the end of 2023.".to_owned()
                } else {
                    format!(
                        "Harlow Dynamics reviewed segment {i} of its operations and the risks \
                         its suppliers face in the markets it serves."
                    )
                };
                format!("{}\n\n{body}\n\nNote {i} to the accounts.\n\n", marker(i))
            })
            .collect()
    }

    #[test]
    fn the_passage_that_answers_is_kept_with_its_page_wherever_it_stands() {
        let text = report(300, 240);
        let query = Query::new("How many people did Harlow Dynamics employ?", &[]);
        let fitted = fit(&query, &text, 2_000);
        assert!(fitted.text.len() <= 2_000, "{}", fitted.text.len());
        assert!(
            fitted.text.contains("employed 18,420 people"),
            "{}",
            fitted.text
        );
        let pages = Pages::of(&fitted.text).unwrap();
        assert_eq!(
            pages.page_of("Harlow Dynamics employed 18,420 people at the end of 2023."),
            Some(240)
        );
        assert_eq!(fitted.of, 600);
        let note = fitted.note("read", text.len()).unwrap();
        assert!(note.starts_with(&format!("read the {} of 600 passages", fitted.kept)));
        // What fits is kept whole, with no note.
        let short = fit(&query, "Short.", 100);
        assert_eq!(
            (short.text.as_str(), short.note("read", 6)),
            ("Short.", None)
        );
    }

    #[test]
    fn a_text_without_pages_or_paragraphs_is_read_by_the_part_that_answers() {
        let filler = "The committee met and discussed the agenda at length. ".repeat(400);
        let text = format!("{filler}The bridge opened on 4 May 1931. {filler}");
        let query = Query::new("When did the bridge open?", &[]);
        let fitted = fit(&query, &text, 5_000);
        assert!(fitted.text.contains("4 May 1931"), "{}", fitted.text.len());
        assert!(fitted.text.len() <= 5_000);
        assert!(!fitted.text.contains("<!--"));
    }
}
