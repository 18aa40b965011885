//! The extractive report.
//!
//! Candidate sentences are the key points clean picked from each relevant source; each is
//! scored by how much of the question it covers, weighted by its source's relevance. Question
//! words count by their rarity among the candidates (inverse document frequency): the name the
//! question is about outweighs "bridge" or "opened", and names in the question (capitalised
//! words) count three times, so a sentence about a different bridge that merely shares the
//! common words ranks low. The best
//! are taken (at most two per source, no near-duplicates), each followed by `[n]`. Citation
//! numbers are given in order of first use, and the sources list holds exactly the cited
//! sources, numbered without gaps, so every `[n]` resolves to a page that was fetched and read.

use std::collections::BTreeMap;

use trawl_messages::{AnalysedDoc, Citation};
use trawl_pipeline::text::{coverage_of, same_word, terms};

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
    let pool: Vec<(usize, &str, Vec<String>)> = docs
        .iter()
        .enumerate()
        .filter(|(_, d)| d.is_relevant)
        .flat_map(|(i, d)| d.key_points.iter().map(move |s| (i, s.as_str(), terms(s))))
        .collect();
    let names = names(question);
    let weights: Vec<f64> = idf(&q, pool.iter().map(|(_, _, words)| words.as_slice()))
        .into_iter()
        .zip(&q)
        .map(|(w, t)| if names.contains(t) { 3.0 * w } else { w })
        .collect();
    let total: f64 = weights.iter().sum();
    let mut candidates: Vec<Candidate> = Vec::new();
    for (i, sentence, words) in &pool {
        let covered: f64 = q
            .iter()
            .zip(&weights)
            .filter(|(t, _)| words.iter().any(|w| same_word(t, w)))
            .map(|(_, w)| w)
            .sum();
        let share = if total > 0.0 { covered / total } else { 0.0 };
        let score = share * (0.5 + 0.5 * docs[*i].relevance);
        if score > 0.0 {
            candidates.push(Candidate {
                sentence,
                doc: *i,
                score,
            });
        }
    }
    candidates.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.doc.cmp(&b.doc)));

    // Sentences far below the best answer are padding, not findings.
    let floor = candidates.first().map_or(0.0, |c| 0.6 * c.score);
    candidates.retain(|c| c.score >= floor);
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

/// Capitalised words after the first: the names the question is about ("Brimomir Bridge").
fn names(question: &str) -> Vec<String> {
    question
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .skip(1)
        .filter(|w| w.chars().next().is_some_and(char::is_uppercase))
        .map(str::to_lowercase)
        .collect()
}

/// Smoothed inverse document frequency of each query term over the candidate sentences.
fn idf<'a>(query: &[String], sentences: impl Iterator<Item = &'a [String]>) -> Vec<f64> {
    let mut df = vec![0usize; query.len()];
    let mut n = 0usize;
    for words in sentences {
        n += 1;
        for (i, t) in query.iter().enumerate() {
            if words.iter().any(|w| same_word(t, w)) {
                df[i] += 1;
            }
        }
    }
    df.iter()
        .map(|&d| (1.0 + (n as f64 + 1.0) / (d as f64 + 1.0)).ln())
        .collect()
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
                file_type: None,
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
        assert!(!r.citations.is_empty() && r.markdown.contains("## Sources"));
        for c in &r.citations {
            assert!(
                r.markdown
                    .contains(&format!("{}. [Source {}]({})", c.n, c.idx, c.url)),
                "{}",
                r.markdown
            );
        }
    }

    #[test]
    fn the_named_subject_outweighs_common_words() {
        let docs = vec![
            doc(
                0,
                true,
                &["The Veldar Bridge is 798 metres long and opened in 1958."],
            ),
            doc(
                1,
                true,
                &[
                    "The Brimomir Bridge opened in 1903.",
                    "Brimomir is a small town.",
                ],
            ),
            doc(
                2,
                true,
                &["Another bridge, the Oskar Bridge, opened in 1920 and is long."],
            ),
        ];
        let r = write(
            "How long is the Brimomir Bridge and when did it open?",
            &docs,
            &Gaps::default(),
            1,
        );
        assert_eq!(r.citations[0].idx, 1, "{}", r.markdown);
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
