//! Relevance scoring and selection, as the design fixes them:
//!
//! - position score: `(11 − p) / 10` for p ≤ 10, else `max(0.05, 0.1 − (p − 10) · 0.01)`;
//! - title and snippet scores: the fraction of the question's terms present (as words);
//! - score = 0.4 · position + 0.3 · title + 0.3 · snippet, rounded to three decimals.
//!
//! Selection keeps results at or above `min_relevance`, best first, up to `max_urls`; every
//! rejected result keeps its reason for the work product.

use trawl_messages::{FileType, SourceKind};

use trawl_messages::record::RawResult;

use trawl_messages::record::Scored;

pub fn position_score(position: u32) -> f64 {
    let p = f64::from(position.max(1));
    if p <= 10.0 {
        (11.0 - p) / 10.0
    } else {
        (0.1 - (p - 10.0) * 0.01).max(0.05)
    }
}

/// Fraction of `query_terms` that appear as words of `text` (case-insensitive).
pub(crate) fn term_fraction(query_terms: &[String], text: &str) -> f64 {
    if query_terms.is_empty() {
        return 0.0;
    }
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let present = query_terms.iter().filter(|t| words.contains(t)).count();
    present as f64 / query_terms.len() as f64
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn file_type_of_extension(ext: &str) -> Option<FileType> {
    Some(match ext {
        "pdf" => FileType::Pdf,
        "doc" | "docx" | "odt" | "rtf" => FileType::Doc,
        "xls" | "xlsx" | "ods" | "csv" | "tsv" => FileType::Spreadsheet,
        "txt" | "md" | "json" | "xml" => FileType::Text,
        "zip" | "tar" | "gz" | "tgz" | "bz2" | "xz" | "7z" | "rar" => FileType::Archive,
        "png" | "jpg" | "jpeg" | "gif" | "webp" | "svg" | "tif" | "tiff" => FileType::Image,
        _ => return None,
    })
}

/// Page or file, and which file: by the path's extension, then path hints (`/pdf/`,
/// `/download/`), then the title (search engines prefix `[PDF]`). The fetch stage has the final
/// word from the response's Content-Type and magic bytes.
pub fn classify(url: &str, title: &str) -> (SourceKind, Option<FileType>) {
    let path = url::Url::parse(url)
        .map(|u| u.path().to_ascii_lowercase())
        .unwrap_or_default();
    let last = path.rsplit('/').next().unwrap_or("");
    if let Some(t) = last
        .rsplit_once('.')
        .and_then(|(_, ext)| file_type_of_extension(ext))
    {
        return (SourceKind::File, Some(t));
    }
    let title = title.to_ascii_lowercase();
    if path.contains("/pdf/") || title.starts_with("[pdf]") || title.contains("(pdf)") {
        return (SourceKind::File, Some(FileType::Pdf));
    }
    if path.contains("/download/") || path.ends_with("/download") {
        return (SourceKind::File, Some(FileType::Unknown));
    }
    (SourceKind::Page, None)
}

pub fn score(result: RawResult, url: String, query_terms: &[String]) -> Scored {
    let position_score = position_score(result.position);
    let title_score = term_fraction(query_terms, &result.title);
    let snippet_score = term_fraction(query_terms, &result.snippet);
    let score = round3(0.4 * position_score + 0.3 * title_score + 0.3 * snippet_score);
    let (kind, file_type) = classify(&url, &result.title);
    Scored {
        kind,
        file_type,
        url,
        result,
        position_score,
        title_score,
        snippet_score,
        score,
        similarity: None,
        llm_relevance: None,
        selected: false,
        reason: String::new(),
    }
}

/// Best score first; equal scores keep the better provider rank.
pub(crate) fn by_score(scored: &mut [Scored]) {
    scored.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(a.result.position.cmp(&b.result.position))
    });
}

/// Selects, in the given order, those at or above `min_relevance` that the LLM (if asked) did
/// not reject, at most `max_urls`.
pub fn select(mut scored: Vec<Scored>, min_relevance: f64, max_urls: usize) -> Vec<Scored> {
    let mut taken = 0;
    for s in &mut scored {
        if s.score < min_relevance {
            s.reason = format!("score {:.3} below threshold {min_relevance:.3}", s.score);
        } else if let Some(r) = s.llm_relevance.as_ref().filter(|r| !r.relevant) {
            s.reason = format!("the LLM judged it not relevant: {}", r.reasoning);
        } else if taken >= max_urls {
            s.reason = format!("over the limit of {max_urls} URLs");
        } else {
            taken += 1;
            s.selected = true;
            s.reason = format!("score {:.3}, rank {taken} of the selection", s.score);
        }
    }
    scored
}

#[cfg(test)]
mod tests {
    use super::*;
    use trawl_text::terms;

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
    fn position_score_boundaries() {
        for (p, want) in [
            (1, 1.0),
            (2, 0.9),
            (10, 0.1),
            (11, 0.09),
            (12, 0.08),
            (15, 0.05),
            (16, 0.05),
            (100, 0.05),
        ] {
            assert!(
                (position_score(p) - want).abs() < 1e-9,
                "p={p}: {} != {want}",
                position_score(p)
            );
        }
    }

    #[test]
    fn hand_computed_scores() {
        let q = terms("zorbium melting point"); // three terms
                                                // p=1, title has all three, snippet two of three: 0.4 + 0.3 + 0.2 = 0.9
        let s = score(
            raw(1, "Zorbium: melting point", "Zorbium melting at 1284"),
            "u".into(),
            &q,
        );
        assert_eq!((s.title_score, s.score), (1.0, 0.9));
        // p=10, title one of three, snippet none: 0.04 + 0.1 = 0.14
        let s = score(raw(10, "Zorbium", "nothing here"), "u".into(), &q);
        assert_eq!(s.score, 0.14);
        // p=11, all: 0.036 + 0.3 + 0.3 = 0.636
        let s = score(
            raw(11, "zorbium melting point", "point melting zorbium"),
            "u".into(),
            &q,
        );
        assert_eq!(s.score, 0.636);
        // p=15, one of three in the snippet: 0.02 + 0 + 0.1 = 0.12
        let s = score(raw(15, "", "point"), "u".into(), &q);
        assert_eq!(s.score, 0.12);
        // No terms at all (a question of stop words): position only.
        let s = score(
            raw(2, "what is it", "what is it"),
            "u".into(),
            &terms("what is it"),
        );
        assert_eq!((s.title_score, s.snippet_score, s.score), (0.0, 0.0, 0.36));
    }

    #[test]
    fn selects_above_threshold_up_to_limit() {
        let q = terms("zorbium melting");
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
        let mut all = all;
        by_score(&mut all);
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
        assert_eq!(
            classify("http://a.test/report.PDF", ""),
            (SourceKind::File, Some(FileType::Pdf))
        );
        assert_eq!(
            classify("http://a.test/data.csv?x=1", ""),
            (SourceKind::File, Some(FileType::Spreadsheet))
        );
        assert_eq!(
            classify("http://a.test/a/b.docx", ""),
            (SourceKind::File, Some(FileType::Doc))
        );
        assert_eq!(
            classify("http://a.test/dump.tar.gz", ""),
            (SourceKind::File, Some(FileType::Archive))
        );
        assert_eq!(
            classify("http://a.test/papers/pdf/1234", ""),
            (SourceKind::File, Some(FileType::Pdf))
        );
        assert_eq!(
            classify("http://a.test/x/123", "[PDF] Annual report"),
            (SourceKind::File, Some(FileType::Pdf))
        );
        assert_eq!(
            classify("http://a.test/download/77", ""),
            (SourceKind::File, Some(FileType::Unknown))
        );
        assert_eq!(
            classify("http://a.test/articles/zorbium.html", ""),
            (SourceKind::Page, None)
        );
        assert_eq!(
            classify("http://a.test/v1.2/guide", ""),
            (SourceKind::Page, None)
        );
    }
}
