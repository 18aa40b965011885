//! Message bodies and the documents stages hand each other.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::envelope::{Body, Kind};

/// Per-job options a user may set in a JSONL batch line; absent fields take the configured value.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobOptions {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_urls: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_relevance: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_level: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub providers: Option<Vec<String>>,
    /// Recency window: any, day, week, month or year.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub freshness: Option<String>,
    /// Seconds from submission until the job is synthesised with what has arrived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_secs: Option<u64>,
}

/// Whether a URL is an HTML page or a downloadable file (PDF, DOCX, CSV …).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    Page,
    File,
    /// A provider's own written answer (Tavily): not fetched, read as it came.
    Answer,
}

/// What kind of file a `File` source is, from its extension, path and title.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileType {
    Pdf,
    Doc,
    Spreadsheet,
    Text,
    Archive,
    Image,
    /// A download whose type only the response will tell.
    Unknown,
}

/// A URL the search stage selected, with why it was selected. `idx` is its stable number within
/// the job: the fan-in record counts outcomes by it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Source {
    pub idx: u32,
    pub url: String,
    pub title: String,
    pub snippet: String,
    pub provider: String,
    /// 1-based rank at the provider.
    pub position: u32,
    pub score: f64,
    pub kind: SourceKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_type: Option<FileType>,
}

/// `trawl.search`: one research question.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SearchTask {
    pub query: String,
    #[serde(default)]
    pub options: JobOptions,
}

/// `trawl.fetch` / `trawl.fetch.browser`: one selected URL at an escalation level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FetchTask {
    pub query: String,
    pub source: Source,
    pub level: u8,
    pub max_level: u8,
}

/// `trawl.clean`: a fetched page or file, decoded to text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FetchedDoc {
    pub query: String,
    pub source: Source,
    pub final_url: String,
    pub status: u16,
    pub content_type: String,
    pub level: u8,
    /// Bytes received on the wire (after decompression).
    pub bytes: u64,
    pub body: String,
}

/// Why a synthesis was asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    /// Every selected URL has its terminal outcome.
    Complete,
    /// A timer message checking the job's deadline; it re-arms itself until the deadline passes.
    Deadline,
}

/// `trawl.synthesize`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SynthesizeTask {
    pub query: String,
    pub trigger: Trigger,
}

/// A source as it appears in a report's numbered list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Citation {
    pub n: u32,
    pub idx: u32,
    pub url: String,
    pub title: String,
    pub relevance: f64,
}

/// How a job ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobStatus {
    /// All outcomes arrived and at least one source was cited.
    Done,
    /// The deadline passed before every outcome arrived.
    Partial,
    /// No source could be used; the report says why.
    NoSources,
    /// Cancelled before synthesis.
    Cancelled,
    /// The search never completed by the deadline (its message was dead-lettered).
    Failed,
}

/// `trawl.results`: one per job, the report itself lives in the object store.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResearchResult {
    pub query: String,
    pub status: JobStatus,
    /// Object-store key of `report.md`.
    pub report: String,
    pub citations: Vec<Citation>,
    /// Terminal outcomes by name (`analysed`, `failed` …), plus `missing` at a deadline.
    pub outcomes: BTreeMap<String, u32>,
}

/// A source after cleaning and analysis; stored in the object store for fan-in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnalysedDoc {
    pub source: Source,
    pub final_url: String,
    pub title: String,
    pub markdown: String,
    pub summary: String,
    /// Sentences of the source most relevant to the question, best first.
    pub key_points: Vec<String>,
    pub relevance: f64,
    pub is_relevant: bool,
    pub level: u8,
    pub bytes: u64,
}

impl Body for SearchTask {
    const KIND: Kind = Kind::SearchTask;
}
impl Body for FetchTask {
    const KIND: Kind = Kind::FetchTask;
}
impl Body for FetchedDoc {
    const KIND: Kind = Kind::FetchedDoc;
}
impl Body for SynthesizeTask {
    const KIND: Kind = Kind::SynthesizeTask;
}
impl Body for ResearchResult {
    const KIND: Kind = Kind::ResearchResult;
}
