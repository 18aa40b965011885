//! Relevance scoring and selection.
//!
//! score = 0.4 · position + 0.3 · title + 0.3 · snippet, each in 0..1: position decays with
//! rank (1.0 at the top, 0.5 at rank 11), title and snippet are the share of the question's
//! content words they contain (a shared 5-letter prefix counts, so "melts" meets "melting").

use serde::{Deserialize, Serialize};
use trawl_messages::SourceKind;

use crate::providers::RawResult;
pub use trawl_pipeline::text::coverage;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Scored {
    pub result: RawResult,
    pub url: String,
    pub position_score: f64,
    pub title_score: f64,
    pub snippet_score: f64,
    pub score: f64,
    pub kind: SourceKind,
    pub selected: bool,
    /// Why it was selected or rejected, for the work product.
    pub reason: String,
}

pub fn position_score(position: u32) -> f64 {
    1.0 / (1.0 + 0.1 * f64::from(position.saturating_sub(1)))
}

const FILE_EXTENSIONS: &[&str] = &[
    "pdf", "docx", "doc", "csv", "txt", "xlsx", "xls", "pptx", "json", "xml", "md", "rtf", "odt",
];

/// Files (PDF, DOCX, CSV …) by the path's extension; everything else is a page.
pub fn kind_of(url: &str) -> SourceKind {
    let path = url::Url::parse(url)
        .map(|u| u.path().to_ascii_lowercase())
        .unwrap_or_default();
    match path.rsplit_once('.') {
        Some((_, ext)) if FILE_EXTENSIONS.contains(&ext) => SourceKind::File,
        _ => SourceKind::Page,
    }
}

pub fn score(result: RawResult, url: String, query_terms: &[String]) -> Scored {
    let position_score = position_score(result.position);
    let title_score = coverage(query_terms, &result.title);
    let snippet_score = coverage(query_terms, &result.snippet);
    let score = 0.4 * position_score + 0.3 * title_score + 0.3 * snippet_score;
    Scored {
        kind: kind_of(&url),
        url,
        result,
        position_score,
        title_score,
        snippet_score,
        score,
        selected: false,
        reason: String::new(),
    }
}

/// Sorts best first and selects those at or above `min_relevance`, at most `max_urls`.
pub fn select(mut scored: Vec<Scored>, min_relevance: f64, max_urls: usize) -> Vec<Scored> {
    scored.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(a.result.position.cmp(&b.result.position))
    });
    let mut taken = 0;
    for s in &mut scored {
        if s.score < min_relevance {
            s.reason = format!("score {:.2} below threshold {min_relevance:.2}", s.score);
        } else if taken >= max_urls {
            s.reason = format!("over the limit of {max_urls} URLs");
        } else {
            taken += 1;
            s.selected = true;
            s.reason = format!("score {:.2}, rank {} of selection", s.score, taken);
        }
    }
    scored
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(position: u32, title: &str, snippet: &str) -> RawResult {
        RawResult {
            url: format!("http://h{position}.test/"),
            title: title.into(),
            snippet: snippet.into(),
            provider: "searxng".into(),
            position,
        }
    }

    #[test]
    fn weights_follow_the_design() {
        let q = trawl_pipeline::text::terms("zorbium melting point");
        let s = score(
            raw(
                1,
                "Zorbium melting point",
                "zorbium melts at 1284 degrees, point",
            ),
            "u".into(),
            &q,
        );
        assert!((s.score - 1.0).abs() < 1e-9, "{}", s.score);
        let s = score(raw(1, "unrelated", "nothing"), "u".into(), &q);
        assert!((s.score - 0.4).abs() < 1e-9);
        assert!(position_score(11) < position_score(2));
    }

    #[test]
    fn selects_above_threshold_up_to_limit() {
        let q = trawl_pipeline::text::terms("zorbium melting");
        let all: Vec<_> = (1..=6)
            .map(|p| {
                score(
                    raw(
                        p,
                        if p % 2 == 0 {
                            "zorbium melting"
                        } else {
                            "other"
                        },
                        "",
                    ),
                    format!("u{p}"),
                    &q,
                )
            })
            .collect();
        let picked = select(all, 0.5, 2);
        let selected: Vec<_> = picked
            .iter()
            .filter(|s| s.selected)
            .map(|s| s.result.position)
            .collect();
        assert_eq!(selected, vec![2, 4]);
        assert!(picked.iter().any(|s| s.reason.contains("over the limit")));
        assert!(picked.iter().any(|s| s.reason.contains("below threshold")));
    }

    #[test]
    fn tells_files_from_pages() {
        assert_eq!(kind_of("http://a.test/report.PDF"), SourceKind::File);
        assert_eq!(kind_of("http://a.test/data.csv?x=1"), SourceKind::File);
        assert_eq!(kind_of("http://a.test/articles/zorbium"), SourceKind::Page);
    }
}
