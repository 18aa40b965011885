//! Message bodies and the documents stages hand each other.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::envelope::{Body, Kind};

// The one list of providers: submission checks names against it, the search stage builds
// from it, the API documents it.
/// A search provider.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(strum::IntoStaticStr, strum::EnumString, strum::VariantArray, strum::VariantNames)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
#[cfg_attr(feature = "openapi", schema(rename_all = "lowercase"))]
pub enum ProviderName {
    Searxng,
    Duckduckgo,
    Serper,
    Serpapi,
    Tavily,
    Brave,
    Newsapi,
    Bocha,
    /// The job's documents root (its `documents` option, else `documents.url`), searched
    /// beside the web providers rather than instead of them.
    Documents,
}

impl ProviderName {
    pub const ALL: &[ProviderName] = <Self as strum::VariantArray>::VARIANTS;

    /// The name config, job options and logs use.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub fn from_name(name: &str) -> Option<ProviderName> {
        name.parse().ok()
    }
}

/// The names of [`ProviderName::ALL`]: what a job's `providers` option may hold (checked at
/// submission, by `trawl_pipeline::batch::check_task`).
pub const PROVIDERS: &[&str] = <ProviderName as strum::VariantNames>::VARIANTS;

/// How recent results must be; each provider maps it to its own time-range parameter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, strum::EnumString)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Freshness {
    #[default]
    Any,
    Day,
    Week,
    Month,
    Year,
}

impl Freshness {
    /// The name config and job options use (`any`, `day`, `week`, `month`, `year`).
    pub fn parse(s: &str) -> Option<Freshness> {
        s.parse().ok()
    }
}

/// Most URLs one job may fetch (`max_urls`): already far more sources than a report can cite.
pub const MAX_URLS: usize = 1000;

/// Most domains one of `include_domains` and `exclude_domains` may list: each is matched
/// against every result and link of the job.
pub const MAX_DOMAINS: usize = 100;

/// Longest deadline a job may ask for (`deadline_secs`), 30 days: a bound keeps the deadline's
/// timestamp representable, and a batch still waiting after a month is better resubmitted.
pub const MAX_DEADLINE_SECS: u64 = 30 * 24 * 3600;

/// Oldest copy from the fleet's page cache a job may accept (`cache_max_age_secs`), 30 days:
/// older pages are better fetched again.
pub const MAX_CACHE_MAX_AGE_SECS: u64 = 30 * 24 * 3600;

/// Per-job options a user may set in a JSONL batch line or an API request; absent fields take
/// the batch's, then the configured value.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(
    deny_unknown_fields,
    expecting = "options to be an object such as {\"max_urls\": 5}"
)]
pub struct JobOptions {
    /// Most URLs to fetch for the job, 1 to 1000 ([`MAX_URLS`]), follow-up research rounds
    /// included. Without it, search selects up to `search.max_urls` and each follow-up round
    /// adds up to `research.urls_per_round`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::whole::max_urls"
    )]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 1000))]
    pub max_urls: Option<usize>,
    /// Search results scoring below this (0 to 1) are not fetched.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::whole::min_relevance"
    )]
    #[cfg_attr(feature = "openapi", schema(minimum = 0.0, maximum = 1.0))]
    pub min_relevance: Option<f64>,
    /// Highest fetch escalation level: 0–1 plain HTTP, 2–3 a real browser.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::whole::max_level"
    )]
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 3))]
    pub max_level: Option<u8>,
    /// Search providers to use, in order (searxng, duckduckgo, serper, serpapi, tavily, brave,
    /// newsapi, bocha).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::whole::providers"
    )]
    #[cfg_attr(
        feature = "openapi",
        schema(value_type = Option<Vec<ProviderName>>, min_items = 1)
    )]
    pub providers: Option<Vec<String>>,
    /// Recency window: any, day, week, month or year.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::whole::freshness"
    )]
    #[cfg_attr(feature = "openapi", schema(pattern = "^(any|day|week|month|year)$"))]
    pub freshness: Option<String>,
    /// Seconds from submission until the job is synthesised with what has arrived, at most 30
    /// days ([`MAX_DEADLINE_SECS`]).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::whole::deadline_secs"
    )]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 2592000))]
    pub deadline_secs: Option<u64>,
    /// How old a page from the fleet's page cache may be and still be read instead of fetched,
    /// in seconds, at most 30 days ([`MAX_CACHE_MAX_AGE_SECS`]); 0 fetches every page. Default
    /// `cache.max_age_secs`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::whole::cache_max_age_secs"
    )]
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 2592000))]
    pub cache_max_age_secs: Option<u64>,
    /// Most tokens the report may take, 100 to 16000 ([`REPORT_MAX_TOKENS`]); default
    /// `report.max_tokens`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::whole::report_max_tokens"
    )]
    #[cfg_attr(feature = "openapi", schema(minimum = 100, maximum = 16000))]
    pub report_max_tokens: Option<u32>,
    /// The report's shape: answer, brief or detailed; default `report.type`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::whole::report_type"
    )]
    pub report_type: Option<ReportType>,
    /// The question's language as a BCP 47 tag (`de`, `pt-BR`, `zh-Hans`): what the search
    /// providers are asked for (with the region, where one is given), which stop words the
    /// question loses, and what the report is written in. Without it, search detects the
    /// question's language.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::whole::language"
    )]
    ///
    /// The pattern lists the languages `trawl_text::Lang` knows (a test of `trawl-api` keeps
    /// the two in step): a lower-case ISO 639-1 code, `no` for Norwegian or `und`, then
    /// optional subtags (script, region).
    #[cfg_attr(
        feature = "openapi",
        schema(
            pattern = "^(af|ak|am|ar|az|be|bg|bn|ca|cs|cy|da|de|el|en|eo|es|et|fa|fi|fr|gu|he|hi|hr|hu|hy|id|it|ja|jv|ka|km|kn|ko|la|lt|lv|mk|ml|mr|my|nb|ne|nl|no|or|pa|pl|pt|ro|ru|si|sk|sl|sn|sr|sv|ta|te|th|tk|tl|tr|uk|ur|uz|vi|yi|zh|zu|und)([-_][A-Za-z0-9]{1,8})*$",
            example = "de"
        )
    )]
    pub language: Option<String>,
    /// Only hosts of these domains are searched, fetched, crawled and cited: a domain takes
    /// itself and its subdomains (`example.com` takes `www.example.com`; `gov` every `.gov`
    /// host).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::whole::include_domains"
    )]
    #[cfg_attr(
        feature = "openapi",
        schema(
            value_type = Option<Vec<crate::domains::DomainName>>,
            min_items = 1,
            max_items = 100
        )
    )]
    pub include_domains: Option<Vec<String>>,
    /// Hosts of these domains (and their subdomains) are never fetched nor cited; an excluded
    /// domain wins over an included one.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::whole::exclude_domains"
    )]
    #[cfg_attr(
        feature = "openapi",
        schema(value_type = Option<Vec<crate::domains::DomainName>>, max_items = 100)
    )]
    pub exclude_domains: Option<Vec<String>>,
    /// URLs (http or https) read as sources of the job, before what search finds. They pass
    /// robots.txt, politeness, the SSRF guard and the domain filters like any URL, and count
    /// towards `max_urls` (which, when not given, grows to hold them).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::whole::urls"
    )]
    #[cfg_attr(
        feature = "openapi",
        schema(value_type = Option<Vec<crate::domains::HttpUrl>>, max_items = 1000)
    )]
    pub urls: Option<Vec<String>>,
    /// `false`: read only `urls`, search nothing.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::whole::search"
    )]
    pub search: Option<bool>,
    /// The documents root the provider `documents` searches and `doc://` sources are read
    /// from: `file:///dir`, `s3://bucket/prefix`, `gs://…`, `az://…`, under one of the
    /// operator's `documents.allow` (`documents.url` when not given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(
            example = "s3://corp-docs/filings",
            max_length = 1024,
            pattern = "^(?!(file|s3|gs|az)://(.*/)?\\.\\.?(/|$))(file:///[^/@?#\\\\\\x00-\\x1f\\x7f-\\x9f]|(s3|gs|az)://[^/@?#\\\\\\x00-\\x1f\\x7f-\\x9f]+(/|$))[^@?#\\\\\\x00-\\x1f\\x7f-\\x9f]*$"
        )
    )]
    pub documents: Option<String>,
    /// The values wanted as data: a JSON Schema object whose properties are the fields
    /// ([`Fields`](crate::Fields)). The job then writes `answer.json`, one typed and cited value
    /// (or `not_found`, or `conflict`) per field, and its report shows them first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(value_type = Option<crate::fields::doc::FieldsDoc>)
    )]
    pub fields: Option<crate::Fields>,
}

/// A report's shape (`report.type`, and a job's `report_type` option).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(strum::EnumString)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum ReportType {
    /// The answer alone: a short paragraph, no sections.
    Answer,
    /// The answer first, then the details under short headings.
    #[default]
    Brief,
    /// The answer first, then a thorough account of every aspect the sources cover.
    Detailed,
}

/// The range of a report's token allowance.
pub const REPORT_MAX_TOKENS: std::ops::RangeInclusive<u32> = 100..=16_000;

impl JobOptions {
    /// These options, with `defaults` where these are silent.
    pub fn or(self, defaults: &JobOptions) -> JobOptions {
        let d = defaults.clone();
        JobOptions {
            max_urls: self.max_urls.or(d.max_urls),
            min_relevance: self.min_relevance.or(d.min_relevance),
            max_level: self.max_level.or(d.max_level),
            providers: self.providers.or(d.providers),
            freshness: self.freshness.or(d.freshness),
            deadline_secs: self.deadline_secs.or(d.deadline_secs),
            cache_max_age_secs: self.cache_max_age_secs.or(d.cache_max_age_secs),
            report_max_tokens: self.report_max_tokens.or(d.report_max_tokens),
            report_type: self.report_type.or(d.report_type),
            language: self.language.or(d.language),
            include_domains: self.include_domains.or(d.include_domains),
            exclude_domains: self.exclude_domains.or(d.exclude_domains),
            urls: self.urls.or(d.urls),
            search: self.search.or(d.search),
            documents: self.documents.or(d.documents),
            fields: self.fields.or(d.fields),
        }
    }

    /// The job's domain filter.
    pub fn domains(&self) -> crate::Domains {
        let list = |l: &Option<Vec<String>>| l.as_deref().unwrap_or_default().to_vec();
        crate::Domains::new(&list(&self.include_domains), &list(&self.exclude_domains))
    }

    /// The URLs the job reads whatever search finds.
    pub fn urls(&self) -> &[String] {
        self.urls.as_deref().unwrap_or_default()
    }

    /// Whether the job searches (`search: false` reads only its `urls`).
    pub fn searches(&self) -> bool {
        self.search != Some(false)
    }
}

/// A job's `metadata`: the user's own JSON object, given with the question and returned with
/// every result (at most `trawl_pipeline::batch::MAX_METADATA_BYTES` as JSON).
pub type Metadata = serde_json::Map<String, serde_json::Value>;

/// What was submitted for one job, kept beside its work products (`input.json`, [`paths::input`]):
/// the question, its options, and the user's own `id` and `metadata`.
///
/// Written at submission, one small object per job, so the stage that ends the job reads its id
/// and metadata in one read instead of the batch's whole manifest, and no message body has to
/// carry them through the stages.
///
/// [`paths::input`]: crate::paths::input
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JobInput {
    /// The user's id for the job: unique in its batch; the question's line number (or position
    /// in an API request) when it came without one.
    pub id: String,
    #[serde(default)]
    pub metadata: Metadata,
    pub query: String,
    #[serde(default)]
    pub options: JobOptions,
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

/// `trawl.search`: one research question, or a follow-up round of one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SearchTask {
    pub query: String,
    #[serde(default)]
    pub options: JobOptions,
    /// Set on a follow-up round: its searches replace the question's analysis, and what they
    /// find grows the job once per round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<Round>,
}

impl SearchTask {
    /// The first round of research on `query`.
    pub fn new(query: String, options: JobOptions) -> SearchTask {
        SearchTask {
            query,
            options,
            round: None,
        }
    }
}

/// A follow-up research round of a job (2 for the first after the question's own search):
/// what no source read so far covers, and the searches that look for it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Round {
    pub n: u32,
    /// One line per thing still lacking ("no source read states the density").
    pub why: Vec<String>,
    pub queries: Vec<String>,
}

/// `trawl.fetch` / `trawl.fetch.browser`: one selected URL at an escalation level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FetchTask {
    pub query: String,
    pub source: Source,
    pub level: u8,
    pub max_level: u8,
    /// Links followed to reach this URL: 0 for what search selected.
    #[serde(default)]
    pub depth: u8,
    /// The job's domain filter, held on every redirect hop and crawled link.
    #[serde(default, skip_serializing_if = "crate::Domains::is_empty")]
    pub domains: crate::Domains,
    /// How old a copy from the fleet's page cache the job accepts (its `cache_max_age_secs`);
    /// `None`: `cache.max_age_secs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_max_age_secs: Option<u64>,
    /// The job's documents root (its `documents` option), which a `doc://` source is read
    /// from; `None`: `documents.url`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub documents: Option<String>,
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
    /// The page's copy in the fleet's page cache, when it has one: the one it was read from,
    /// or the one just stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached: Option<CachedCopy>,
}

/// A page's copy in the fleet's page cache.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CachedCopy {
    /// The cache's key for the page (a hash of its URL).
    pub key: String,
    /// When the copy was fetched, or last confirmed unchanged by its server.
    pub fetched_at: chrono::DateTime<chrono::Utc>,
    /// A hash of the page's body: clean's text of an older copy is not this one's.
    pub content_hash: String,
    /// The job read the copy instead of fetching the page.
    pub hit: bool,
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
    /// The source's URL, with `#page=N` when it is cited at a page of a document.
    pub url: String,
    pub title: String,
    pub relevance: f64,
    /// The page of a document (a PDF) the report took from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
}

impl Citation {
    /// The citation at `page` of its document: the page, and the URL pointing to it
    /// (`…/filing.pdf#page=240`, the fragment PDF viewers open at).
    pub fn at_page(&mut self, page: u32) {
        let url = self.url.split('#').next().unwrap_or_default();
        self.url = format!("{url}#page={page}");
        self.page = Some(page);
    }
}

/// How a job ended.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::Display,
    strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum JobStatus {
    /// All outcomes arrived and at least one source was cited.
    #[default]
    Done,
    /// The deadline passed before every outcome arrived.
    Partial,
    /// No source could be read; the report says why.
    NoSources,
    /// Sources were read but none answers the question; the report says so and lists them.
    NoAnswer,
    /// Cancelled before synthesis.
    Cancelled,
    /// The search never completed by the deadline (its message was dead-lettered).
    Failed,
}

impl JobStatus {
    pub const ALL: &[JobStatus] = <Self as strum::VariantArray>::VARIANTS;

    /// The status as the store, `job.json` and the API spell it.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// Where a job of a batch stands: pending until it ends with a [`JobStatus`]. Spelt `pending`
/// or as the status, in the store, `final.json` and the API.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum JobState {
    #[default]
    Pending,
    Ended(JobStatus),
}

impl JobState {
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Pending => "pending",
            JobState::Ended(status) => status.as_str(),
        }
    }
}

impl std::fmt::Display for JobState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A job state this build does not know, as it was spelt.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("unknown job state {0:?}")]
pub struct UnknownJobState(pub String);

impl std::str::FromStr for JobState {
    type Err = UnknownJobState;

    fn from_str(s: &str) -> Result<Self, UnknownJobState> {
        match s {
            "pending" => Ok(JobState::Pending),
            _ => (s.parse().map(JobState::Ended)).map_err(|_| UnknownJobState(s.to_owned())),
        }
    }
}

impl From<JobState> for String {
    fn from(state: JobState) -> String {
        state.as_str().to_owned()
    }
}

impl TryFrom<String> for JobState {
    type Error = UnknownJobState;

    fn try_from(s: String) -> Result<Self, UnknownJobState> {
        s.parse()
    }
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
    /// The page each key point stands on (0: none found), for a source with pages (a PDF);
    /// empty for one without.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub key_point_pages: Vec<u32>,
    pub relevance: f64,
    pub is_relevant: bool,
    pub level: u8,
    pub bytes: u64,
    /// Values of the job's target data points found in this source, by data point; `None`
    /// where the source does not state one.
    #[serde(default)]
    pub extracted_data: BTreeMap<String, Option<String>>,
    /// The source's tables (GFM tables of its markdown) as rows of cells.
    #[serde(default)]
    pub tables: Vec<Table>,
    /// The answer to a count, table or passage question, where the question asks for one.
    #[serde(default)]
    pub lookup: Option<Lookup>,
    /// How clean the markdown looked before any LLM cleaning.
    #[serde(default)]
    pub cleanliness: Option<Cleanliness>,
    /// Whether the LLM cleaned the markdown, and why not when it did not.
    #[serde(default)]
    pub cleaning: Option<Cleaning>,
    /// `llm` or `extractive`: which path wrote the summary, relevance and extracted data.
    #[serde(default)]
    pub analysed_by: String,
    /// The source's own language (ISO 639-1), detected from its text; `und` when unknown.
    #[serde(default)]
    pub language: String,
    /// Why an LLM step was skipped or fell back, and what bounded its input.
    #[serde(default)]
    pub notes: Vec<String>,
    /// When the page was fetched, if it was read from the fleet's page cache instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// A table of a source: the header cells and the body rows (each as many cells as it has).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Table {
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// The extraction a question's form asks for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Lookup {
    /// "How many …": a count the source states (`method: stated`) or one counted from its list
    /// items or table rows naming the subject (`counted_list`, `counted_rows`).
    Count {
        subject: String,
        count: u64,
        method: String,
        /// The sentence stating the count, or the items counted.
        evidence: Vec<String>,
    },
    /// "… table", "compare …", "list …": the source's table that best fits the question, by
    /// its index in [`AnalysedDoc::tables`].
    Table { index: usize },
    /// "What does X say about …", "quote …": the paragraph that best answers it.
    Passage { text: String },
}

/// A cleanliness score from 0 (all boilerplate) to 1 (clean article text).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cleanliness {
    /// The score the cleaning decision used.
    pub score: f64,
    /// `heuristic` or `llm`: who gave `score`.
    pub source: String,
    /// The heuristic score, always computed.
    pub heuristic: f64,
    /// What lowered the score (the LLM's list when it judged).
    #[serde(default)]
    pub problems: Vec<String>,
}

/// The outcome of LLM cleaning.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Cleaning {
    pub applied: bool,
    /// Why the cleaned text was not used, or why cleaning was not tried ("judged clean",
    /// "no LLM configured", "dropped 2 code blocks" …); empty when applied.
    #[serde(default)]
    pub reason: String,
}

impl AnalysedDoc {
    /// A document of `markdown` read from `source` as it was selected, not yet analysed: the
    /// fields analysis fills are empty. Callers set what they know with struct update syntax.
    pub fn new(source: Source, markdown: String) -> AnalysedDoc {
        AnalysedDoc {
            final_url: source.url.clone(),
            title: source.title.clone(),
            bytes: markdown.len() as u64,
            markdown,
            summary: String::new(),
            key_points: Vec::new(),
            key_point_pages: Vec::new(),
            relevance: 0.0,
            is_relevant: false,
            level: 0,
            extracted_data: Default::default(),
            tables: Vec::new(),
            lookup: None,
            cleanliness: None,
            cleaning: None,
            analysed_by: String::new(),
            notes: Vec::new(),
            language: String::new(),
            cached_at: None,
            source,
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_job_state_reads_back_as_written() {
        let ended = JobStatus::ALL.iter().map(|&status| JobState::Ended(status));
        for state in std::iter::once(JobState::Pending).chain(ended) {
            let json = serde_json::to_string(&state).unwrap();
            assert_eq!(json, format!("\"{state}\""));
            assert_eq!(serde_json::from_str::<JobState>(&json).unwrap(), state);
        }
        assert!("running".parse::<JobState>().is_err());
    }

    #[test]
    fn a_jobs_options_win_over_the_batch_defaults_field_by_field() {
        let defaults = JobOptions {
            max_urls: Some(4),
            freshness: Some("week".into()),
            cache_max_age_secs: Some(0),
            ..Default::default()
        };
        let own = JobOptions {
            max_urls: Some(9),
            max_level: Some(1),
            ..Default::default()
        };
        let merged = own.or(&defaults);
        assert_eq!(merged.max_urls, Some(9));
        assert_eq!(merged.max_level, Some(1));
        assert_eq!(merged.freshness.as_deref(), Some("week"));
        assert_eq!(merged.deadline_secs, None);
        assert_eq!(merged.cache_max_age_secs, Some(0));
    }
}
