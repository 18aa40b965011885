//! Reports. Two writers share one ending:
//!
//! - [`extractive`]: no LLM needed; the best sentences per sub-query, each with its citation.
//! - [`llm`]: the LLM writes from the budgeted context; its citations are validated.
//!
//! Both end with the same sections: the numbered sources (exactly the cited ones, numbered
//! without gaps, every one fetched and analysed), the conflicts found between sources, and
//! notes on what could not be used.

use std::collections::BTreeMap;

use trawl_messages::{AnalysedDoc, Citation, ReportWriter};

use crate::conflicts::Conflict;

pub mod extractive;
pub mod llm;

/// Why some selected sources are not in the report, for the notes section.
#[derive(Debug, Default)]
pub struct Gaps {
    /// Outcome name → count, for URLs that ended without a usable document.
    pub outcomes: BTreeMap<String, u32>,
    /// URLs that had not arrived when the deadline passed.
    pub missing: Vec<String>,
}

/// What a report is written from: the question and its plan, the analysed sources (best
/// first), the conflicts among them, and what is missing.
#[derive(Clone, Copy)]
pub struct Material<'a> {
    pub question: &'a str,
    pub sub_queries: &'a [String],
    pub data_points: &'a [String],
    pub docs: &'a [AnalysedDoc],
    pub conflicts: &'a [Conflict],
    pub gaps: &'a Gaps,
}

impl Material<'_> {
    /// The extractive report of this material, `sentences` long at most.
    pub fn extractive(&self, sentences: usize) -> Report {
        extractive::write(
            self.question,
            self.sub_queries,
            self.docs,
            self.conflicts,
            self.gaps,
            sentences,
        )
    }
}

pub struct Report {
    pub markdown: String,
    pub citations: Vec<Citation>,
    /// Citations the writer made to sources the job did not read, removed from the text.
    pub removed_citations: usize,
    /// Who wrote it, with the reason when the LLM path was configured but fell back.
    pub writer: ReportWriter,
}

/// The citation entry for `doc` numbered `n`.
pub fn citation(doc: &AnalysedDoc, n: u32) -> Citation {
    Citation {
        n,
        idx: doc.source.idx,
        url: doc.final_url.clone(),
        title: if doc.title.is_empty() {
            doc.source.title.clone()
        } else {
            doc.title.clone()
        },
        relevance: doc.relevance,
    }
}

fn escape(title: &str) -> String {
    title.replace('[', "\\[").replace(']', "\\]")
}

/// Appends the sources, conflicts and notes sections.
pub fn finish(
    md: &mut String,
    docs: &[AnalysedDoc],
    citations: &[Citation],
    conflicts: &[Conflict],
    gaps: &Gaps,
    removed: usize,
) {
    if !citations.is_empty() {
        md.push_str("## Sources\n\n");
        for c in citations {
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
    if !conflicts.is_empty() {
        let number: BTreeMap<u32, u32> = citations.iter().map(|c| (c.idx, c.n)).collect();
        let url = |idx: u32| {
            docs.iter()
                .find(|d| d.source.idx == idx)
                .map_or(String::new(), |d| d.final_url.clone())
        };
        md.push_str("## Conflicts\n\nThe sources disagree on:\n\n");
        for c in conflicts {
            let values: Vec<String> = c
                .values
                .iter()
                .map(|(value, idxs)| {
                    let by: Vec<String> = idxs
                        .iter()
                        .map(|i| number.get(i).map_or_else(|| url(*i), |n| format!("[{n}]")))
                        .collect();
                    format!("{value} ({})", by.join(", "))
                })
                .collect();
            md.push_str(&format!("- {}: {}\n", c.data_point, values.join(" vs ")));
        }
        md.push('\n');
    }
    let notes = notes(docs, gaps, citations.len(), removed);
    if !notes.is_empty() {
        md.push_str("## Notes\n\n");
        for n in notes {
            md.push_str(&format!("- {n}\n"));
        }
    }
}

fn notes(docs: &[AnalysedDoc], gaps: &Gaps, cited: usize, removed: usize) -> Vec<String> {
    let mut notes = Vec::new();
    let read = docs.len();
    if read > cited {
        notes.push(format!(
            "{} of {read} sources read were not cited (less relevant or repeating others).",
            read - cited
        ));
    }
    if removed > 0 {
        notes.push(format!(
            "{removed} citation(s) to sources this job did not read were removed."
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

#[cfg(test)]
pub(crate) mod testing {
    use trawl_messages::{AnalysedDoc, Source, SourceKind};

    /// Source `idx`, a page at `http://s{idx}.test/`.
    pub fn source(idx: u32) -> Source {
        Source {
            idx,
            url: format!("http://s{idx}.test/"),
            title: format!("S{idx}"),
            snippet: String::new(),
            provider: "searxng".into(),
            position: idx + 1,
            score: 0.5,
            kind: SourceKind::Page,
            file_type: None,
        }
    }

    pub fn doc(idx: u32, relevant: bool, points: &[&str]) -> AnalysedDoc {
        let source = source(idx);
        AnalysedDoc {
            title: format!("Source {idx}"),
            key_points: points.iter().map(|s| s.to_string()).collect(),
            relevance: 0.8,
            is_relevant: relevant,
            bytes: 100,
            ..AnalysedDoc::new(source, points.join(" "))
        }
    }
}
