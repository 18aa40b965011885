//! The extractive report.
//!
//! Candidate sentences are the key points clean picked from each relevant source; each is
//! scored by how much of the question it covers, weighted by its source's relevance. The best
//! are taken (at most two per source, no near-duplicates), each followed by `[n]`. Citation
//! numbers are given in order of first use, and the sources list holds exactly the cited
//! sources, numbered without gaps, so every `[n]` resolves to a page that was fetched and read.

use std::collections::BTreeMap;

use trawl_messages::{AnalysedDoc, Citation};
use trawl_pipeline::text::{coverage, coverage_of, terms};

/// Why some selected sources are not in the report, for the notes section.
#[derive(Debug, Default)]
pub struct Gaps {
    /// Outcome name → count, for URLs that ended without a usable document.
    pub outcomes: BTreeMap<String, u32>,
    /// URLs that had not arrived when the deadline passed.
    pub missing: Vec<String>,
}

pub struct Report {
    pub markdown: String,
    pub citations: Vec<Citation>,
}

struct Candidate<'a> {
    sentence: &'a str,
    doc: usize,
    score: f64,
}

pub fn write(question: &str, docs: &[AnalysedDoc], gaps: &Gaps, max_sentences: usize) -> Report {
    let q = terms(question);
    let mut candidates: Vec<Candidate> = Vec::new();
    for (i, doc) in docs.iter().enumerate().filter(|(_, d)| d.is_relevant) {
        for sentence in &doc.key_points {
            let score = coverage(&q, sentence) * (0.5 + 0.5 * doc.relevance);
            if score > 0.0 {
                candidates.push(Candidate {
                    sentence,
                    doc: i,
                    score,
                });
            }
        }
    }
    candidates.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.doc.cmp(&b.doc)));

    let mut chosen: Vec<&Candidate> = Vec::new();
    let mut per_doc: BTreeMap<usize, usize> = BTreeMap::new();
    for c in &candidates {
        if chosen.len() >= max_sentences {
            break;
        }
        let used = per_doc.entry(c.doc).or_default();
        if *used >= 2
            || chosen
                .iter()
                .any(|o| near_duplicate(o.sentence, c.sentence))
        {
            continue;
        }
        *used += 1;
        chosen.push(c);
    }

    // Number sources by first citation.
    let mut number: BTreeMap<usize, u32> = BTreeMap::new();
    let mut citations = Vec::new();
    for c in &chosen {
        if !number.contains_key(&c.doc) {
            let n = number.len() as u32 + 1;
            number.insert(c.doc, n);
            let d = &docs[c.doc];
            citations.push(Citation {
                n,
                idx: d.source.idx,
                url: d.final_url.clone(),
                title: if d.title.is_empty() {
                    d.source.title.clone()
                } else {
                    d.title.clone()
                },
                relevance: d.relevance,
            });
        }
    }

    let mut md = format!("# {}\n\n", question.trim());
    if chosen.is_empty() {
        md.push_str("No fetched source answered this question, so there is nothing to report with a citation.\n\n");
    } else {
        md.push_str("## Answer\n\n");
        let lead: Vec<String> = chosen
            .iter()
            .take(2)
            .map(|c| format!("{} [{}]", c.sentence, number[&c.doc]))
            .collect();
        md.push_str(&lead.join(" "));
        md.push_str("\n\n");
        if chosen.len() > 2 {
            md.push_str("## Further findings\n\n");
            for c in chosen.iter().skip(2) {
                md.push_str(&format!("- {} [{}]\n", c.sentence, number[&c.doc]));
            }
            md.push('\n');
        }
        md.push_str("## Sources\n\n");
        for c in &citations {
            md.push_str(&format!(
                "{}. [{}]({}) (relevance {:.2})\n",
                c.n,
                escape(&c.title),
                c.url,
                c.relevance
            ));
        }
        md.push('\n');
    }
    let notes = notes(docs, gaps, citations.len());
    if !notes.is_empty() {
        md.push_str("## Notes\n\n");
        for n in notes {
            md.push_str(&format!("- {n}\n"));
        }
    }
    Report {
        markdown: md,
        citations,
    }
}

fn notes(docs: &[AnalysedDoc], gaps: &Gaps, cited: usize) -> Vec<String> {
    let mut notes = Vec::new();
    let read = docs.len();
    if read > cited {
        notes.push(format!(
            "{} of {read} sources read were not cited (less relevant or repeating others).",
            read - cited
        ));
    }
    if !gaps.outcomes.is_empty() {
        let parts: Vec<String> = gaps
            .outcomes
            .iter()
            .map(|(k, v)| format!("{v} {k}"))
            .collect();
        notes.push(format!("Sources not usable: {}.", parts.join(", ")));
    }
    if !gaps.missing.is_empty() {
        notes.push(format!(
            "The deadline passed before {} source(s) arrived: {}.",
            gaps.missing.len(),
            gaps.missing.join(", ")
        ));
    }
    notes
}

fn escape(title: &str) -> String {
    title.replace('[', "\\[").replace(']', "\\]")
}

fn near_duplicate(a: &str, b: &str) -> bool {
    let (ta, tb) = (terms(a), terms(b));
    let shorter = if ta.len() <= tb.len() {
        (&ta, &tb)
    } else {
        (&tb, &ta)
    };
    !shorter.0.is_empty() && coverage_of(shorter.0, shorter.1) >= 0.8
}

#[cfg(test)]
mod tests {
    use super::*;
    use trawl_messages::{Source, SourceKind};

    fn doc(idx: u32, relevant: bool, points: &[&str]) -> AnalysedDoc {
        AnalysedDoc {
            source: Source {
                idx,
                url: format!("http://s{idx}.test/"),
                title: format!("S{idx}"),
                snippet: String::new(),
                provider: "searxng".into(),
                position: idx + 1,
                score: 0.5,
                kind: SourceKind::Page,
            },
            final_url: format!("http://s{idx}.test/"),
            title: format!("Source {idx}"),
            markdown: String::new(),
            summary: String::new(),
            key_points: points.iter().map(|s| s.to_string()).collect(),
            relevance: 0.8,
            is_relevant: relevant,
            level: 0,
            bytes: 100,
        }
    }

    #[test]
    fn every_citation_resolves_and_sources_are_numbered_without_gaps() {
        let docs = vec![
            doc(
                0,
                false,
                &["Zorbium melts at 1,284 degrees Celsius, says an irrelevant page."],
            ),
            doc(1, true, &["Nothing about the topic here at all, really."]),
            doc(
                2,
                true,
                &[
                    "Zorbium melts at 1,284 degrees Celsius.",
                    "Zorbium was first isolated in 1931.",
                ],
            ),
            doc(3, true, &["The melting point of zorbium is 1,284 degrees."]),
        ];
        let r = write(
            "What is the melting point of zorbium?",
            &docs,
            &Gaps::default(),
            6,
        );
        let cited: Vec<u32> = r.citations.iter().map(|c| c.idx).collect();
        assert!(!cited.contains(&0) && !cited.contains(&1), "{cited:?}");
        assert_eq!(
            r.citations.iter().map(|c| c.n).collect::<Vec<_>>(),
            (1..=r.citations.len() as u32).collect::<Vec<_>>()
        );
        for n in 1..=r.citations.len() {
            assert!(r.markdown.contains(&format!("[{n}]")));
        }
        assert!(!r.markdown.contains(&format!("[{}]", r.citations.len() + 1)));
        assert!(r.markdown.contains("## Sources") && r.markdown.contains("http://s2.test/"));
    }

    #[test]
    fn says_so_when_nothing_answers() {
        let mut gaps = Gaps::default();
        gaps.outcomes.insert("failed".into(), 2);
        gaps.missing.push("http://late.test/".into());
        let r = write("What is zorbium?", &[], &gaps, 6);
        assert!(r.citations.is_empty());
        assert!(r.markdown.contains("No fetched source"));
        assert!(r.markdown.contains("2 failed") && r.markdown.contains("http://late.test/"));
    }
}
