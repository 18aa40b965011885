//! The JSON work products one process writes and another reads back: search's `search.json`
//! ([`SearchRecord`]) and synthesize's `job.json` ([`JobRecord`]). Writers and readers share
//! these types, so a renamed field fails to compile instead of reading as null elsewhere.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::{FileType, JobStatus, Metadata, SourceKind};

/// `search.json`: every provider attempt, every result with its score breakdown, and why it was
/// selected or rejected.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SearchRecord {
    pub query: String,
    pub analysis: QueryAnalysis,
    pub attempts: Vec<Attempt>,
    /// What the optional LLM steps did or why they fell back.
    pub notes: Vec<String>,
    /// Direct answers written by a provider (Tavily), as (provider, answer).
    pub answers: Vec<(String, String)>,
    pub results: Vec<Scored>,
    /// The follow-up round this search ran for (`search-<n>.json`); none for the first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<crate::Round>,
}

/// What the question asks, and which searches answer it. A field an older record lacks reads as
/// its default.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct QueryAnalysis {
    /// `llm` or `heuristic`.
    pub path: String,
    /// Why the LLM path was not taken or failed, if it was configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm_error: Option<String>,
    pub intent: String,
    pub sub_queries: Vec<String>,
    pub info_type: String,
    pub target_data_points: Vec<String>,
    pub search_strategy: String,
    /// The question's language (ISO 639-1, `und` when unknown): the job's `language` option,
    /// else detected. Its stop words are left out of `terms`.
    pub language: String,
    /// Lower-cased content words of the question, stop words removed, in order.
    pub terms: Vec<String>,
    /// Quoted phrases, kept whole.
    pub phrases: Vec<String>,
    pub is_news: bool,
}

/// One page request to a provider and how it went.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    pub provider: String,
    pub query: String,
    pub page: u32,
    /// `ok`, `empty`, `cached`, `skipped` or an error label (`timeout`, `http_error` …).
    pub outcome: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

impl Attempt {
    /// True when the provider was asked and failed (not answered, cached or skipped).
    pub fn failed(&self) -> bool {
        !matches!(self.outcome.as_str(), "ok" | "empty" | "cached" | "skipped")
    }
}

/// One search hit with its provider and 1-based rank at that provider (across pages).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RawResult {
    pub url: String,
    pub title: String,
    pub snippet: String,
    pub provider: String,
    pub position: u32,
}

/// A result with its score breakdown and the selection's decision.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Scored {
    pub result: RawResult,
    pub url: String,
    pub position_score: f64,
    pub title_score: f64,
    pub snippet_score: f64,
    pub score: f64,
    pub kind: SourceKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_type: Option<FileType>,
    /// Embedding similarity to the question, when rerank ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub similarity: Option<f64>,
    /// The LLM's relevance decision, when that check ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm_relevance: Option<Relevance>,
    pub selected: bool,
    /// Why it was selected or rejected, for the work product.
    pub reason: String,
}

/// The LLM's decision whether a candidate is likely to help answer the question.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Relevance {
    pub relevant: bool,
    pub reasoning: String,
    pub confidence: f64,
}

/// `job.json`. A field an older record lacks reads as its default.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct JobRecord {
    pub job_id: Uuid,
    pub batch_id: Uuid,
    /// The user's id for the job and their metadata, as submitted (`input.json`); empty for a
    /// job submitted before jobs had them.
    pub id: String,
    pub metadata: Metadata,
    pub question: String,
    pub status: JobStatus,
    pub writer: ReportWriter,
    /// Search's analysis of the question; null when search never completed.
    pub analysis: Option<QueryAnalysis>,
    pub created_at: chrono::DateTime<chrono::Utc>,
    pub finished_at: chrono::DateTime<chrono::Utc>,
    pub duration_ms: i64,
    /// Handling time per stage in milliseconds, and messages handled per stage.
    pub stage_ms: BTreeMap<String, i64>,
    pub stage_messages: BTreeMap<String, i64>,
    pub outcomes: BTreeMap<String, u32>,
    pub tokens_in: BTreeMap<String, i64>,
    pub tokens_out: BTreeMap<String, i64>,
    pub cost_microdollars: BTreeMap<String, i64>,
    pub total_cost_microdollars: i64,
    /// LLM requests per stage whose token counts were estimated (the endpoint reported none).
    pub estimated_usage: BTreeMap<String, i64>,
    /// LLM calls that failed for good, by `step: reason` (`relevance: timeout`): those steps
    /// took their non-LLM path.
    pub llm_fallbacks: BTreeMap<String, i64>,
    pub search_cache_hits: usize,
    pub errors: Vec<String>,
    pub sources_selected: usize,
    pub sources_cited: usize,
    pub removed_citations: usize,
    /// The report's claims (`claims.json`), and those no source supports (removed, or kept
    /// under "Unverified").
    pub claims: usize,
    pub unsupported_claims: usize,
    /// Whether a statement of the report states a value of what the question asks; a job
    /// whose report does not ends `no_answer`. `answer_reason` says which statement, or what
    /// none stated.
    pub answerable: bool,
    pub answer_reason: String,
    pub context_tokens: usize,
    pub tokenizer: String,
    pub conflicts: usize,
    /// The follow-up rounds the job ran: why, their searches, and the URLs each selected.
    pub rounds: Vec<RoundRecord>,
}

/// One follow-up round as `job.json` lists it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RoundRecord {
    #[serde(flatten)]
    pub round: crate::Round,
    pub selected: Vec<String>,
}

/// Who wrote a job's report. Spelt in `job.json`, summaries and the API as `llm`, `extractive`,
/// `extractive (batch LLM budget spent)`, `extractive (LLM failed: <why>)` or `none`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum ReportWriter {
    /// The model wrote it.
    Llm,
    /// The extractive writer, by configuration or because nothing relevant called for a model.
    #[default]
    Extractive,
    /// The extractive writer, because the batch's LLM budget was reached.
    BudgetSpent,
    /// The extractive writer, because the model's report failed for the reason given.
    LlmFailed(String),
    /// No report was written from sources (the search never completed).
    None,
}

const LLM_FAILED: (&str, &str) = ("extractive (LLM failed: ", ")");

impl fmt::Display for ReportWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReportWriter::Llm => f.write_str("llm"),
            ReportWriter::Extractive => f.write_str("extractive"),
            ReportWriter::BudgetSpent => f.write_str("extractive (batch LLM budget spent)"),
            ReportWriter::LlmFailed(why) => write!(f, "{}{why}{}", LLM_FAILED.0, LLM_FAILED.1),
            ReportWriter::None => f.write_str("none"),
        }
    }
}

/// A report writer this build does not know, as it was spelt.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("unknown report writer {0:?}")]
pub struct UnknownReportWriter(pub String);

impl FromStr for ReportWriter {
    type Err = UnknownReportWriter;

    fn from_str(s: &str) -> Result<Self, UnknownReportWriter> {
        Ok(match s {
            "llm" => ReportWriter::Llm,
            "extractive" => ReportWriter::Extractive,
            "extractive (batch LLM budget spent)" => ReportWriter::BudgetSpent,
            "none" => ReportWriter::None,
            _ => match s
                .strip_prefix(LLM_FAILED.0)
                .and_then(|rest| rest.strip_suffix(LLM_FAILED.1))
            {
                Some(why) => ReportWriter::LlmFailed(why.to_owned()),
                None => return Err(UnknownReportWriter(s.to_owned())),
            },
        })
    }
}

impl From<ReportWriter> for String {
    fn from(w: ReportWriter) -> String {
        w.to_string()
    }
}

impl TryFrom<String> for ReportWriter {
    type Error = UnknownReportWriter;

    fn try_from(s: String) -> Result<Self, UnknownReportWriter> {
        s.parse()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_writer_reads_back_as_written() {
        for w in [
            ReportWriter::Llm,
            ReportWriter::Extractive,
            ReportWriter::BudgetSpent,
            ReportWriter::LlmFailed("timeout: the model took too long (x)".into()),
            ReportWriter::None,
        ] {
            let json = serde_json::to_string(&w).unwrap();
            assert_eq!(serde_json::from_str::<ReportWriter>(&json).unwrap(), w);
        }
        assert!("gpt".parse::<ReportWriter>().is_err());
    }

    #[test]
    fn an_older_job_record_reads_with_defaults() {
        let r: JobRecord =
            serde_json::from_str(r#"{"status": "no_sources", "writer": "llm", "analysis": null}"#)
                .unwrap();
        assert_eq!(r.status, JobStatus::NoSources);
        assert_eq!(r.writer, ReportWriter::Llm);
        assert!(r.analysis.is_none() && r.stage_ms.is_empty());
        assert!(r.id.is_empty() && r.metadata.is_empty());
    }

    #[test]
    fn only_asked_and_unanswered_attempts_failed() {
        let attempt = |outcome: &str| Attempt {
            provider: "brave".into(),
            query: "q".into(),
            page: 1,
            outcome: outcome.into(),
            detail: String::new(),
        };
        for ok in ["ok", "empty", "cached", "skipped"] {
            assert!(!attempt(ok).failed(), "{ok}");
        }
        assert!(attempt("timeout").failed());
    }
}
