//! Batches: reading a batch file, submitting it, and collecting its results.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use trawl_broker::Queue;
use trawl_messages::documents::{Root, RootError};
use trawl_messages::{
    domains, paths, Envelope, JobInput, JobOptions, JobState, Metadata, SearchTask,
    MAX_CACHE_MAX_AGE_SECS, MAX_DEADLINE_SECS, MAX_DOMAINS, MAX_URLS, PROVIDERS,
};
use uuid::Uuid;

use trawl_text::Locale;

use crate::{Runtime, StageError};

/// Longest question accepted, in characters.
pub const MAX_QUERY_CHARS: usize = 2000;

/// Longest `id` a question may carry, in characters.
pub const MAX_ID_CHARS: usize = 128;

/// Largest `metadata` a question may carry, in bytes of compact JSON: it is copied into the
/// manifest, `input.json`, `job.json`, the summary, webhook events and every export.
pub const MAX_METADATA_BYTES: usize = 4096;

/// Why a batch file was refused; a bad line is named by its number.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BatchFileError {
    #[error("line {line}: {reason}")]
    Line { line: usize, reason: String },
    #[error("the file is empty: write one question per line, or JSONL lines {{\"query\": \"…\"}}")]
    Empty,
    #[error("the file holds no questions, only blank lines and # comments")]
    NoQuestions,
}

/// Why a line of a batch file was refused (the reason of [`BatchFileError::Line`]).
#[derive(Debug, thiserror::Error)]
enum LineError {
    #[error("options: must be an object such as {{\"max_urls\": 5}}, not an array")]
    OptionsArray,
    /// An option given beside the query and in `options`.
    #[error("{0}: given beside the query and in options; give it once")]
    Twice(&'static str),
    #[error("invalid JSON line: {0}")]
    Json(#[from] serde_json::Error),
    /// A JSON value that is not an object, by its kind.
    #[error("{0} where a question or a JSON object {{\"query\": \"…\"}} belongs")]
    NotAQuestion(&'static str),
    #[error(transparent)]
    Task(#[from] TaskError),
    #[error(transparent)]
    User(#[from] UserError),
}

/// Why a question's `id` or `metadata` was refused; the text names the field.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum UserError {
    #[error("id: must be 1 to {MAX_ID_CHARS} characters, not {0}")]
    IdLength(usize),
    /// An id that is not a string, by its JSON kind ("a number").
    #[error("id: must be a string of 1 to {MAX_ID_CHARS} characters, not {0}")]
    IdNotString(&'static str),
    /// Metadata larger than [`MAX_METADATA_BYTES`], by its size.
    #[error(
        "metadata: {0} bytes as JSON, more than the {MAX_METADATA_BYTES} a question may carry"
    )]
    MetadataSize(usize),
    #[error("metadata: must be a JSON object such as {{\"team\": \"search\"}}, not {0}")]
    MetadataNotObject(&'static str),
}

/// Why a question was refused: its query, or every problem with its options at once.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TaskError {
    #[error("query longer than {MAX_QUERY_CHARS} characters")]
    QueryTooLong,
    #[error("empty query")]
    EmptyQuery,
    /// The options' problems as [`option_problems`] lists them, each `option: problem`.
    #[error("{}", .0.iter().map(|(k, p)| format!("{k}: {p}")).collect::<Vec<_>>().join("; "))]
    Options(Vec<(&'static str, String)>),
}

/// A batch that would put more bytes into the queues than `broker.max_batch_bytes` allows.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error(
    "the batch would queue {:.1} MiB of tasks, more than broker.max_batch_bytes \
     ({:.1} MiB): split it into smaller batches, or raise the limit",
    *.bytes as f64 / 1048576.0,
    *.max as f64 / 1048576.0
)]
pub struct TooManyBytes {
    pub bytes: u64,
    pub max: u64,
}

/// A budget for a batch whose models (at least one) have no known price.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error(
    "the batch has a budget, but no price is known for {}: set llm.prices.{:?} = {{ input = …, output = … }} (dollars per million tokens) for each, or submit without a budget",
    .0.join(", "),
    .0.first().map_or("", String::as_str)
)]
pub struct UnpricedModels(pub Vec<String>);

/// One JSONL line: `{"query": "…", "options": {"max_urls": 5}}`, once `id` and `metadata`
/// were taken out (they are checked on their own, to name the field in every refusal).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonLine {
    query: String,
    #[serde(default)]
    options: JobOptions,
}

/// One question of a batch, checked: its search task and the user's own id and metadata.
///
/// Serialises as the API's `QuestionIn` (`query`, `options`, `id`, `metadata`): that is how
/// `trawl submit --server` sends a file's questions, each with its id, so the ids given by line
/// number are the file's and not positions in the request.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Question {
    #[serde(flatten)]
    pub task: SearchTask,
    pub id: String,
    #[serde(skip_serializing_if = "Metadata::is_empty")]
    pub metadata: Metadata,
}

impl Question {
    /// Questions without ids of their own, numbered from 1 as the lines of a file would be.
    pub fn numbered(tasks: Vec<SearchTask>) -> Vec<Question> {
        (tasks.into_iter().enumerate())
            .map(|(i, task)| Question {
                task,
                id: (i + 1).to_string(),
                metadata: Metadata::new(),
            })
            .collect()
    }
}

/// What a JSON value is, for refusals ("not a number").
fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Object(_) => "a JSON object",
        Value::Array(_) => "a JSON array",
        Value::String(_) => "a JSON string",
        Value::Number(_) => "a number",
        Value::Bool(_) => "a JSON boolean",
        Value::Null => "JSON null",
    }
}

/// Checks a question's `id` and `metadata` as given (`None`: the field is absent; JSON null is
/// given, and refused). A question without an id gets `default_id()`. The reason names the
/// field. Every way a job is submitted goes through here, as through [`check_task`].
pub fn check_user(
    id: Option<Value>,
    metadata: Option<Value>,
    default_id: impl FnOnce() -> String,
) -> Result<(String, Metadata), UserError> {
    let id = match id {
        None => default_id(),
        Some(Value::String(id)) => {
            // Counted in characters, as the API's document counts `maxLength`.
            let n = id.chars().count();
            if n == 0 || n > MAX_ID_CHARS {
                return Err(UserError::IdLength(n));
            }
            id
        }
        Some(other) => return Err(UserError::IdNotString(json_kind(&other))),
    };
    let metadata = match metadata {
        None => Metadata::new(),
        Some(Value::Object(fields)) => {
            let size = serde_json::to_vec(&fields).map_or(usize::MAX, |b| b.len());
            if size > MAX_METADATA_BYTES {
                return Err(UserError::MetadataSize(size));
            }
            fields
        }
        Some(other) => return Err(UserError::MetadataNotObject(json_kind(&other))),
    };
    Ok((id, metadata))
}

/// The first id of `ids` used before: its index and the index of its first use.
pub fn repeated_id<'a>(ids: impl IntoIterator<Item = &'a str>) -> Option<(usize, usize)> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (i, id) in ids.into_iter().enumerate() {
        if let Some(&first) = seen.get(id) {
            return Some((i, first));
        }
        seen.insert(id, i);
    }
    None
}

/// Why a batch file was refused.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error(transparent)]
    Lines(#[from] BatchFileError),
    #[error(transparent)]
    Rows(#[from] crate::template::TemplateError),
    /// A question whose options, with the batch's, are refused.
    #[error("question {id:?}: {reason}")]
    Question { id: String, reason: TaskError },
}

/// The questions of a batch file, as `trawl submit` and the API's `file` read one: with
/// `template`, CSV rows ([`crate::template::questions_from_csv`]), else a question or JSONL
/// line per line ([`parse_batch`]); the batch-wide `defaults` where a line is silent (checked
/// by the caller first with [`option_problems`], naming them its way).
pub fn questions_from_file(
    bytes: &[u8],
    template: Option<&str>,
    defaults: &JobOptions,
) -> Result<Vec<Question>, FileError> {
    match template {
        Some(template) => Ok(crate::template::questions_from_csv(
            template, bytes, defaults,
        )?),
        None => with_defaults(parse_batch(bytes)?, defaults)
            .map_err(|(id, reason)| FileError::Question { id, reason }),
    }
}

/// `questions` with the batch-wide `defaults` where their own options are silent, each checked
/// again; `defaults` are checked first by the caller ([`option_problems`]), naming them its way.
/// The error names the question by its id.
pub fn with_defaults(
    questions: Vec<Question>,
    defaults: &JobOptions,
) -> Result<Vec<Question>, (String, TaskError)> {
    if *defaults == JobOptions::default() {
        return Ok(questions);
    }
    (questions.into_iter())
        .map(|mut q| {
            let options = q.task.options.clone().or(defaults);
            q.task = check_task(&q.task.query, options).map_err(|e| (q.id.clone(), e))?;
            Ok(q)
        })
        .collect()
}

/// Checks one question and its options; the reason names the problem. Every way a job is
/// submitted (a batch file, the API, MCP) goes through here.
pub fn check_task(query: &str, options: JobOptions) -> Result<SearchTask, TaskError> {
    // Counted before trimming, as the API's document counts `maxLength`.
    if query.chars().count() > MAX_QUERY_CHARS {
        return Err(TaskError::QueryTooLong);
    }
    let query = query.trim().to_owned();
    if query.is_empty() {
        return Err(TaskError::EmptyQuery);
    }
    let problems = option_problems(&options);
    if !problems.is_empty() {
        return Err(TaskError::Options(problems));
    }
    // Each provider once: the chain tries (and retries) every entry, so a repeated name would
    // multiply the requests one job makes. Known names only, so at most PROVIDERS.len().
    let mut options = options;
    if let Some(names) = &mut options.providers {
        let mut seen = std::collections::HashSet::new();
        names.retain(|n| seen.insert(n.clone()));
    }
    Ok(SearchTask::new(query, options))
}

/// The ISO 639-1 codes a job's `language` option may start with: the API document's pattern
/// lists these.
pub fn language_codes() -> Vec<&'static str> {
    Locale::option_codes().collect()
}

/// Every problem with a job's options at once, each as (option, what is wrong with the value
/// and what would be right): a user fixes them all in one go, and each front end names the
/// option its own way (`max_urls` in JSON, `--max-urls` on the command line).
pub fn option_problems(options: &JobOptions) -> Vec<(&'static str, String)> {
    let mut problems = Vec::new();
    if let Some(r) = options.min_relevance.filter(|r| !(0.0..=1.0).contains(r)) {
        problems.push(("min_relevance", format!("must be 0 to 1, not {r}")));
    }
    if let Some(n) = options.max_urls.filter(|n| !(1..=MAX_URLS).contains(n)) {
        problems.push(("max_urls", format!("must be 1 to {MAX_URLS}, not {n}")));
    }
    if let Some(s) = (options.deadline_secs).filter(|s| !(1..=MAX_DEADLINE_SECS).contains(s)) {
        problems.push((
            "deadline_secs",
            format!("must be 1 to {MAX_DEADLINE_SECS}, not {s}"),
        ));
    }
    // 0 is an age too: the job fetches every page.
    if let Some(s) = (options.cache_max_age_secs).filter(|s| *s > MAX_CACHE_MAX_AGE_SECS) {
        problems.push((
            "cache_max_age_secs",
            format!("must be 0 to {MAX_CACHE_MAX_AGE_SECS}, not {s}"),
        ));
    }
    if let Some(f) =
        (options.freshness.as_deref()).filter(|f| trawl_messages::Freshness::parse(f).is_none())
    {
        problems.push((
            "freshness",
            format!("must be any, day, week, month or year, not {f:?}"),
        ));
    }
    if let Some(n) =
        (options.report_max_tokens).filter(|n| !trawl_messages::REPORT_MAX_TOKENS.contains(n))
    {
        problems.push((
            "report_max_tokens",
            format!("must be 100 to 16000, not {n}"),
        ));
    }
    if let Some(tag) = (options.language.as_deref()).filter(|t| Locale::from_option(t).is_none()) {
        problems.push((
            "language",
            format!(
                "{tag:?} is not a language trawl knows: give an ISO 639 code, with a region if \
                 wanted, such as de, pt-BR or zh"
            ),
        ));
    }
    if let Some(l) = options.max_level.filter(|l| *l > 3) {
        problems.push(("max_level", format!("must be 0 to 3, not {l}")));
    }
    domain_problems(options, &mut problems);
    url_problems(options, &mut problems);
    if let Some(Err(e)) = options.documents.as_deref().map(Root::parse) {
        problems.push(("documents", e.to_string()));
    }
    // The search stage skips names it does not know: a job naming only those (or none) would
    // search nothing and end without sources.
    if let Some(names) = &options.providers {
        if names.is_empty() {
            problems.push((
                "providers",
                "name at least one provider, or leave the option out".into(),
            ));
        }
        for name in names.iter().filter(|n| !PROVIDERS.contains(&n.as_str())) {
            problems.push((
                "providers",
                format!(
                    "unknown provider {name:?} (known: {})",
                    PROVIDERS.join(", ")
                ),
            ));
        }
    }
    problems
}

/// `include_domains` and `exclude_domains`: domains, not URLs, and a bounded number of them.
fn domain_problems(options: &JobOptions, problems: &mut Vec<(&'static str, String)>) {
    for (field, list) in [
        ("include_domains", &options.include_domains),
        ("exclude_domains", &options.exclude_domains),
    ] {
        let list = list.as_deref().unwrap_or_default();
        if list.len() > MAX_DOMAINS {
            let n = list.len();
            problems.push((field, format!("at most {MAX_DOMAINS} domains, not {n}")));
        }
        for e in list.iter().filter_map(|d| domains::domain(d).err()) {
            problems.push((field, e.to_string()));
        }
    }
    if options.include_domains.as_ref().is_some_and(Vec::is_empty) {
        problems.push((
            "include_domains",
            "name at least one domain, or leave the option out: an empty list would allow none"
                .into(),
        ));
    }
}

/// `urls`: absolute http(s) URLs, at most [`MAX_URLS`]. How they meet the job's other options
/// is the search stage's to say, in the job's search record: a URL outside the job's domains or
/// past its `max_urls` is listed there, not read, as a job with `search: false` and no URLs
/// ends without sources. The API's document states every rule checked here, so what it calls
/// valid is accepted.
fn url_problems(options: &JobOptions, problems: &mut Vec<(&'static str, String)>) {
    let urls = options.urls();
    for (i, u) in urls.iter().enumerate() {
        match url::Url::parse(u) {
            Ok(parsed) if matches!(parsed.scheme(), "http" | "https") && parsed.has_host() => {}
            _ => problems.push((
                "urls",
                format!("item {}: {u:?} is not an http or https URL", i + 1),
            )),
        }
    }
    if urls.len() > MAX_URLS {
        let n = urls.len();
        problems.push(("urls", format!("at most {MAX_URLS} URLs, not {n}")));
    }
}

/// The first question whose documents root `allow` (the operator's `documents.allow`) does not
/// hold, by its id, with why: a root nobody allowed could be the workers' own disk, or any
/// bucket their credentials reach.
pub fn refused_documents(questions: &[Question], allow: &[String]) -> Option<(String, RootError)> {
    questions.iter().find_map(|q| {
        let root = q.task.options.documents.as_deref()?;
        Root::allowed(root, allow).err().map(|e| (q.id.clone(), e))
    })
}

/// What a batch's search tasks weigh in the queues, in bytes (their bodies as sent).
pub(crate) fn queued_bytes(questions: &[Question]) -> u64 {
    (questions.iter())
        .map(|q| serde_json::to_vec(&q.task).map_or(0, |b| b.len() as u64))
        .sum()
}

/// Refuses a batch that would put more than `max` bytes into the queues at once, saying what
/// to change: batch-wide options are copied into every question, so a body within its own
/// limit can still weigh many times its size once enqueued.
pub fn check_queued_bytes(questions: &[Question], max: u64) -> Result<(), TooManyBytes> {
    let bytes = queued_bytes(questions);
    if bytes > max {
        return Err(TooManyBytes { bytes, max });
    }
    Ok(())
}

/// Parses a batch file: one question per line, or JSONL lines `{"query": "…", "id": "…",
/// "metadata": {…}, "options": {…}}`. Blank lines and lines starting with `#` are skipped; a
/// UTF-8 byte order mark (Windows editors write one) is dropped, and CRLF line ends are line
/// ends. A question without an `id` has its line number (counting every line) as id; ids are
/// unique in the batch. Every line is checked before anything is enqueued; the first bad one is
/// reported by number (a repeated id by both lines' numbers), bytes that are not UTF-8 by line
/// and column too.
pub fn parse_batch(bytes: &[u8]) -> Result<Vec<Question>, BatchFileError> {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    if bytes.is_empty() {
        return Err(BatchFileError::Empty);
    }
    let text = std::str::from_utf8(bytes).map_err(|e| not_utf8(bytes, e.valid_up_to()))?;
    let mut questions = Vec::new();
    // The line of each id so far, to name both lines of a repeated one.
    let mut lines: HashMap<String, usize> = HashMap::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let question = parse_line(trimmed, line).map_err(|e| BatchFileError::Line {
            line,
            reason: e.to_string(),
        })?;
        if let Some(first) = lines.insert(question.id.clone(), line) {
            return Err(BatchFileError::Line {
                line,
                reason: format!(
                    "id {:?} is already the id of line {first}; ids must be unique in the batch (a line without an id has its line number as id)",
                    question.id
                ),
            });
        }
        questions.push(question);
    }
    if questions.is_empty() {
        return Err(BatchFileError::NoQuestions);
    }
    Ok(questions)
}

/// Line `number` (trimmed, not blank): a JSON object is a JSONL line; any other JSON value is
/// refused, since taken as a question it would be one nobody meant (`["q"]`, `42`, `null`);
/// anything else is a question, with the line number as its id.
fn parse_line(line: &str, number: usize) -> Result<Question, LineError> {
    let (query, options, id, metadata) = match serde_json::from_str::<Value>(line) {
        Ok(Value::Object(mut fields)) => {
            // serde reads a struct from an array too, by position.
            if let Some(Value::Array(_)) = fields.get("options") {
                return Err(LineError::OptionsArray);
            }
            let (id, metadata) = (fields.remove("id"), fields.remove("metadata"));
            lift_options(&mut fields)?;
            let parsed: JsonLine = serde_json::from_value(Value::Object(fields))?;
            (parsed.query, parsed.options, id, metadata)
        }
        Ok(other) => {
            return Err(LineError::NotAQuestion(json_kind(&other)));
        }
        Err(e) if line.starts_with('{') => return Err(e.into()),
        Err(_) => (line.to_owned(), JobOptions::default(), None, None),
    };
    let mut options = options;
    if options.fields.is_some() {
        // Read again from the text: a JSON map holds the schema's fields sorted, and their
        // order is the order of the answer's columns.
        options.fields = fields_in_order(line).or(options.fields);
    }
    let task = check_task(&query, options)?;
    let (id, metadata) = check_user(id, metadata, || number.to_string())?;
    Ok(Question { task, id, metadata })
}

/// The `fields` of a JSONL line (beside its query or in its options), in the order written.
fn fields_in_order(line: &str) -> Option<trawl_messages::Fields> {
    #[derive(Deserialize)]
    struct Options {
        fields: Option<trawl_messages::Fields>,
    }
    #[derive(Deserialize)]
    struct Line {
        fields: Option<trawl_messages::Fields>,
        options: Option<Options>,
    }
    let line: Line = serde_json::from_str(line).ok()?;
    line.fields.or(line.options.and_then(|o| o.fields))
}

/// Options a JSONL line may give beside its query as well as in its `options`: a line's own
/// sources and filters read naturally there (`{"query": "…", "urls": […], "search": false}`).
const LINE_OPTIONS: &[&str] = &[
    "urls",
    "search",
    "documents",
    "include_domains",
    "exclude_domains",
    "fields",
];

/// Moves a line's [`LINE_OPTIONS`] into its `options`; one given in both places is refused.
fn lift_options(fields: &mut serde_json::Map<String, Value>) -> Result<(), LineError> {
    for key in LINE_OPTIONS {
        let Some(value) = fields.remove(*key) else {
            continue;
        };
        let options =
            (fields.entry("options")).or_insert_with(|| Value::Object(Default::default()));
        // Options that are not an object are refused by the line's parse.
        if let Value::Object(options) = options {
            if options.contains_key(*key) {
                return Err(LineError::Twice(key));
            }
            options.insert((*key).to_owned(), value);
        }
    }
    Ok(())
}

/// The error for bytes that are UTF-8 up to `valid`: its line, and its column in characters.
fn not_utf8(bytes: &[u8], valid: usize) -> BatchFileError {
    let before = &bytes[..valid];
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |at| at + 1);
    let column = String::from_utf8_lossy(&before[line_start..])
        .chars()
        .count()
        + 1;
    BatchFileError::Line {
        line: before.iter().filter(|&&b| b == b'\n').count() + 1,
        reason: format!(
            "not UTF-8 (byte 0x{:02X} at column {column}): save the file as UTF-8",
            bytes[valid]
        ),
    }
}

/// A batch's jobs in submission order; written to the object store by [`submit`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Manifest {
    pub batch_id: Uuid,
    pub created_at: chrono::DateTime<chrono::Utc>,
    pub jobs: Vec<ManifestJob>,
    /// Where `job.completed` and `batch.completed` events are posted, if anywhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook: Option<String>,
    /// LLM spend allowed for the batch, in dollars; past it jobs take the non-LLM paths.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_usd: Option<f64>,
    /// The API token (its public id) that submitted the batch; only it sees the batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
}

/// Batch-wide options of `submit`, also stored on their own (`options.json`) so a worker
/// finishing a job reads a few bytes, not the batch's whole manifest.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BatchOptions {
    pub webhook: Option<String>,
    pub budget_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ManifestJob {
    pub job_id: Uuid,
    pub query: String,
    /// The user's id for the job (see [`Question`]); empty in manifests written before jobs
    /// had ids.
    #[serde(default)]
    pub id: String,
    #[serde(default, skip_serializing_if = "Metadata::is_empty")]
    pub metadata: Metadata,
}

/// A budget needs every model in use to have a price: otherwise spend would read 0 and the
/// budget never trip. The error names the models and the setting to add.
pub fn check_budget(
    config: &trawl_config::Config,
    budget_usd: Option<f64>,
) -> Result<(), UnpricedModels> {
    let (Some(_), Some(llm)) = (budget_usd, &config.llm) else {
        return Ok(());
    };
    let unpriced = trawl_llm::prices::unpriced(llm);
    match unpriced.is_empty() {
        true => Ok(()),
        false => Err(UnpricedModels(unpriced)),
    }
}

/// Object writes and publishes a submission keeps going at once.
const SUBMIT_AT_ONCE: usize = 32;

/// Records the batch, then enqueues one search task per question; `progress` is called after
/// each publish. Returns the manifest (batch id and job ids). The questions' ids must be
/// unique ([`parse_batch`] and the API check that).
pub async fn submit(
    rt: &Runtime,
    questions: Vec<Question>,
    options: BatchOptions,
    progress: impl Fn(usize),
) -> Result<Manifest, StageError> {
    submit_as(rt, Uuid::now_v7(), questions, options, progress).await
}

/// [`submit`] under an id the caller chose (from `Uuid::now_v7`), e.g. to hold a quota slot
/// in the batch's name before it exists.
pub async fn submit_as(
    rt: &Runtime,
    batch_id: Uuid,
    questions: Vec<Question>,
    options: BatchOptions,
    progress: impl Fn(usize),
) -> Result<Manifest, StageError> {
    let now = chrono::Utc::now();
    let manifest = Manifest {
        batch_id,
        created_at: now,
        jobs: questions
            .iter()
            .map(|q| ManifestJob {
                job_id: Uuid::now_v7(),
                query: q.task.query.clone(),
                id: q.id.clone(),
                metadata: q.metadata.clone(),
            })
            .collect(),
        webhook: options.webhook.clone(),
        budget_usd: options.budget_usd,
        owner: options.owner.clone(),
    };
    // The record and manifest exist before the first message, so a fast worker never meets a
    // job its batch does not know.
    rt.put_json(&paths::batch_manifest(batch_id), &manifest)
        .await?;
    rt.put_json(&paths::batch_options(batch_id), &options)
        .await?;
    write_inputs(rt, &questions, &manifest).await?;
    let job_ids: Vec<String> = manifest.jobs.iter().map(|j| j.job_id.to_string()).collect();
    rt.store
        .batch_create(&batch_id.to_string(), &job_ids)
        .await?;
    if let Some(usd) = manifest.budget_usd {
        // At least one micro-dollar, so a tiny budget is a budget and not "unlimited".
        let micro = ((usd * 1e6).round() as i64).max(1);
        rt.store
            .batch_add(&batch_id.to_string(), crate::runtime::BUDGET, micro)
            .await?;
    }
    enqueue(rt, questions, &manifest, progress).await?;
    Ok(manifest)
}

/// Each job's `jobs/<job>` index and `input.json`, a few writes at once: a batch of 10,000
/// questions is 20,000 small objects.
async fn write_inputs(
    rt: &Runtime,
    questions: &[Question],
    manifest: &Manifest,
) -> Result<(), StageError> {
    let batch_id = manifest.batch_id;
    let batch_text = batch_id.to_string();
    let writes = questions.iter().zip(&manifest.jobs).map(|(question, job)| {
        let batch_text = &batch_text;
        async move {
            rt.objects
                .put(&paths::job_index(job.job_id), batch_text.as_bytes())
                .await?;
            // The job's own copy of its id and metadata: what ends the job reads this, not
            // the manifest, whose size grows with the batch.
            let input = JobInput {
                id: question.id.clone(),
                metadata: question.metadata.clone(),
                query: question.task.query.clone(),
                options: question.task.options.clone(),
            };
            rt.put_json(&paths::input(batch_id, job.job_id), &input)
                .await
        }
    });
    // Collected first: a stream over the iterator's closure is not Send to the API's router.
    let writes: Vec<_> = writes.collect();
    let mut writes = futures_util::stream::iter(writes).buffer_unordered(SUBMIT_AT_ONCE);
    while let Some(written) = writes.next().await {
        written?;
    }
    drop(writes);
    Ok(())
}

/// Publishes each question's search and arms its deadline, a few at once; `progress` is called
/// after each.
async fn enqueue(
    rt: &Runtime,
    questions: Vec<Question>,
    manifest: &Manifest,
    progress: impl Fn(usize),
) -> Result<(), StageError> {
    let (batch_id, now) = (manifest.batch_id, manifest.created_at);
    let tasks = questions.into_iter().map(|q| q.task);
    let sends = tasks.zip(&manifest.jobs).map(|(task, job)| async move {
        let secs = task
            .options
            .deadline_secs
            .unwrap_or(rt.config.job.deadline_secs);
        let deadline = now + chrono::Duration::seconds(secs as i64);
        let search = Envelope::new(job.job_id, batch_id, deadline, task);
        rt.publish(Queue::Search, &search).await?;
        crate::Job::new(rt, &search)
            .arm_deadline(&search.body.query)
            .await
    });
    let sends: Vec<_> = sends.collect();
    let mut sends = futures_util::stream::iter(sends).buffer_unordered(SUBMIT_AT_ONCE);
    let mut sent = 0;
    while let Some(done) = sends.next().await {
        done?;
        sent += 1;
        progress(sent);
    }
    drop(sends);
    Ok(())
}

pub async fn manifest(rt: &Runtime, batch: Uuid) -> Result<Option<Manifest>, StageError> {
    match rt.objects.get(&paths::batch_manifest(batch)).await? {
        Some(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| StageError::permanent(format!("corrupt batch manifest: {e}"))),
        None => Ok(None),
    }
}

/// A batch's options; the defaults for a batch submitted without (or before) them.
pub async fn options(rt: &Runtime, batch: Uuid) -> Result<BatchOptions, StageError> {
    match rt.objects.get(&paths::batch_options(batch)).await? {
        Some(bytes) => serde_json::from_slice(&bytes)
            .map_err(|e| StageError::permanent(format!("corrupt batch options: {e}"))),
        None => Ok(BatchOptions::default()),
    }
}

/// What was submitted for a job (its id, metadata, question and options); `None` for a job
/// submitted before jobs had this record.
pub async fn job_input(
    rt: &Runtime,
    batch: Uuid,
    job: Uuid,
) -> Result<Option<JobInput>, StageError> {
    match rt.objects.get(&paths::input(batch, job)).await? {
        Some(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| StageError::permanent(format!("corrupt input.json of job {job}: {e}"))),
        None => Ok(None),
    }
}

/// The batch a job belongs to, if the job was submitted.
pub async fn batch_of(rt: &Runtime, job: Uuid) -> Result<Option<Uuid>, StageError> {
    let Some(bytes) = rt.objects.get(&paths::job_index(job)).await? else {
        return Ok(None);
    };
    Ok(std::str::from_utf8(&bytes)
        .ok()
        .and_then(|s| Uuid::parse_str(s.trim()).ok()))
}

/// A batch's record: its progress and counters, with its jobs' statuses when asked for. The
/// store keeps it until `store.batch_ttl_secs` after the batch ends; [`save_ended`] keeps a copy
/// beside the work products (`final.json`), read once the store's has expired.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Record {
    pub progress: trawl_store::BatchProgress,
    /// [`crate::runtime::STARTED`], [`crate::runtime::SPENT`] and [`crate::runtime::BUDGET`].
    pub counters: BTreeMap<String, i64>,
    /// Job id → status: in the saved copy only (the store's are read by [`job_statuses`]).
    #[serde(default)]
    pub jobs: BTreeMap<String, JobState>,
}

impl Record {
    pub fn counter(&self, name: &str) -> i64 {
        self.counters.get(name).copied().unwrap_or(0)
    }

    /// What the batch cost so far, and its sources not used, by outcome (`failed`, `blocked`,
    /// `robots_disallowed` …).
    pub fn usage(&self) -> Usage {
        Usage {
            cost_microdollars: self.counter(crate::runtime::SPENT),
            unused_sources: (self.progress.outcomes.iter())
                .filter(|(outcome, _)| *outcome != "analysed")
                .map(|(outcome, &n)| (outcome.clone(), n))
                .collect(),
        }
    }
}

const COUNTERS: [&str; 3] = [
    crate::runtime::STARTED,
    crate::runtime::SPENT,
    crate::runtime::BUDGET,
];

/// The batch's progress and counters from the store, or the copy saved when it ended; `None`
/// for a batch whose record does not exist (yet: `submit` writes the manifest first).
pub async fn record(rt: &Runtime, batch: Uuid) -> Result<Option<Record>, StageError> {
    let id = batch.to_string();
    let Some(progress) = rt.store.batch_progress(&id).await? else {
        return saved(rt, batch).await;
    };
    let mut counters = BTreeMap::new();
    for name in COUNTERS {
        counters.insert(name.to_owned(), rt.store.batch_counter(&id, name).await?);
    }
    Ok(Some(Record {
        progress,
        counters,
        jobs: BTreeMap::new(),
    }))
}

/// Every job's state (job id → state), from the store or the copy saved when the batch
/// ended: read once for a page of jobs, not once per job.
pub async fn job_statuses(
    rt: &Runtime,
    batch: Uuid,
) -> Result<BTreeMap<String, JobState>, StageError> {
    let jobs = store_jobs(rt, batch).await?;
    if !jobs.is_empty() {
        return Ok(jobs);
    }
    Ok(saved(rt, batch).await?.map(|r| r.jobs).unwrap_or_default())
}

/// The store's job states of `batch`, typed: a state this build does not know (written by a
/// newer one) is an error, not a job silently left out.
async fn store_jobs(rt: &Runtime, batch: Uuid) -> Result<BTreeMap<String, JobState>, StageError> {
    let jobs = rt.store.batch_jobs(&batch.to_string()).await?;
    (jobs.into_iter())
        .map(|(job, state)| Ok((job, parse_state(&state)?)))
        .collect()
}

fn parse_state(state: &str) -> Result<JobState, StageError> {
    (state.parse::<JobState>()).map_err(|e| StageError::permanent(format!("batch record: {e}")))
}

async fn saved(rt: &Runtime, batch: Uuid) -> Result<Option<Record>, StageError> {
    match rt.objects.get(&paths::batch_final(batch)).await? {
        Some(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
            StageError::permanent(format!("corrupt final.json of batch {batch}: {e}"))
        }),
        None => Ok(None),
    }
}

/// A job's state in its batch's record (`None` if the batch has no record).
pub async fn job_status(
    rt: &Runtime,
    batch: Uuid,
    job: Uuid,
) -> Result<Option<JobState>, StageError> {
    let (id, job) = (batch.to_string(), job.to_string());
    if let Some(state) = rt.store.batch_job_status(&id, &job).await? {
        return parse_state(&state).map(Some);
    }
    Ok(saved(rt, batch)
        .await?
        .and_then(|r| r.jobs.get(&job).copied()))
}

/// Saves the batch's record beside its work products, for when the store's has expired: call
/// once the batch has ended (its last job, or a cancellation).
pub async fn save_ended(rt: &Runtime, batch: Uuid) -> Result<(), StageError> {
    if let Some(mut record) = record(rt, batch).await? {
        record.jobs = store_jobs(rt, batch).await?;
        rt.put_json(&paths::batch_final(batch), &record).await?;
    }
    Ok(())
}

/// Cancels the batch: its pending jobs end as `cancelled` and workers skip their messages.
/// False if there is no such batch.
pub async fn cancel(rt: &Runtime, batch: Uuid) -> Result<bool, StageError> {
    if !rt
        .store
        .batch_cancel(&batch.to_string(), rt.batch_ttl())
        .await?
    {
        return Ok(false);
    }
    save_ended(rt, batch).await?;
    Ok(true)
}

/// What a batch has cost so far and which sources its ended jobs could not use.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    pub cost_microdollars: i64,
    /// Sources not used, by outcome (`failed`, `blocked`, `robots_disallowed` …).
    pub unused_sources: BTreeMap<String, u64>,
}

/// What [`collect`] copied.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Collected {
    pub jobs_with_report: usize,
    pub jobs_without_report: usize,
}

/// Copies each job's report and work products to `out/<job>/`.
pub async fn collect(
    rt: &Runtime,
    manifest: &Manifest,
    out: &Path,
) -> Result<Collected, StageError> {
    let io = |e: std::io::Error| {
        StageError::permanent(format!("writing results to {}: {e}", out.display()))
    };
    let mut collected = Collected::default();
    for job in &manifest.jobs {
        let dir = paths::job_dir(manifest.batch_id, job.job_id);
        if rt
            .objects
            .get(&paths::report(manifest.batch_id, job.job_id))
            .await?
            .is_none()
        {
            collected.jobs_without_report += 1;
            continue;
        }
        let target = out.join(job.job_id.to_string());
        tokio::fs::create_dir_all(&target).await.map_err(io)?;
        for name in rt.objects.list_files(&dir).await? {
            let key = paths::job_file(manifest.batch_id, job.job_id, &name);
            if let Some(bytes) = rt.objects.get(&key).await? {
                let path = target.join(&name);
                if let Some(parent) = path.parent() {
                    tokio::fs::create_dir_all(parent).await.map_err(io)?;
                }
                tokio::fs::write(path, bytes).await.map_err(io)?;
            }
        }
        collected.jobs_with_report += 1;
    }
    // The batch summary, written when the last job ended.
    let batch = manifest.batch_id;
    for (name, key) in [
        ("summary.jsonl", paths::summary_jsonl(batch)),
        ("summary.md", paths::summary_md(batch)),
    ] {
        if let Some(bytes) = rt.objects.get(&key).await? {
            tokio::fs::create_dir_all(out).await.map_err(io)?;
            tokio::fs::write(out.join(name), bytes).await.map_err(io)?;
        }
    }
    Ok(collected)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line_error(bytes: &[u8]) -> (usize, String) {
        match parse_batch(bytes) {
            Err(BatchFileError::Line { line, reason }) => (line, reason),
            other => panic!("{:?}: {other:?}", String::from_utf8_lossy(bytes)),
        }
    }

    #[test]
    fn the_language_option_is_a_known_language_in_the_documented_form() {
        let problems = |tag: &str| {
            option_problems(&JobOptions {
                language: Some(tag.into()),
                ..Default::default()
            })
        };
        assert!(problems("pt-BR").is_empty() && problems("zh-Hans-CN").is_empty());
        assert_eq!(problems("deu")[0].0, "language");
        assert!(problems("xx")[0]
            .1
            .contains("is not a language trawl knows"));
    }

    #[test]
    fn the_cache_max_age_is_0_to_30_days() {
        let problems = |secs: u64| {
            option_problems(&JobOptions {
                cache_max_age_secs: Some(secs),
                ..Default::default()
            })
        };
        assert!(problems(0).is_empty());
        assert!(problems(MAX_CACHE_MAX_AGE_SECS).is_empty());
        assert_eq!(
            problems(MAX_CACHE_MAX_AGE_SECS + 1),
            [(
                "cache_max_age_secs",
                "must be 0 to 2592000, not 2592001".to_owned()
            )]
        );
        let tasks =
            parse_batch(br#"{"query": "q", "options": {"cache_max_age_secs": 0}}"#).unwrap();
        assert_eq!(tasks[0].task.options.cache_max_age_secs, Some(0));
        let (line, reason) =
            line_error(br#"{"query": "q", "options": {"cache_max_age_secs": 2592001}}"#);
        assert_eq!(line, 1);
        assert!(
            reason.starts_with("cache_max_age_secs: must be 0 to"),
            "{reason}"
        );
    }

    #[test]
    fn a_line_lists_its_own_urls_and_domains_and_bad_ones_are_named() {
        let tasks = parse_batch(
            br#"{"query": "q", "urls": ["https://www.example.com/a"], "search": false, "include_domains": ["example.com"]}"#,
        )
        .unwrap();
        let options = &tasks[0].task.options;
        assert_eq!(options.urls(), ["https://www.example.com/a".to_string()]);
        assert!(!options.searches());
        assert!(options.domains().allows("www.example.com"));
        // How listed URLs meet the other options is the search record's to say.
        assert!(parse_batch(br#"{"query": "q", "search": false}"#).is_ok());
        for (line, needle) in [
            (
                &br#"{"query": "q", "urls": ["ftp://example.com/x"]}"#[..],
                "urls: item 1: \"ftp://example.com/x\" is not an http or https URL",
            ),
            (
                br#"{"query": "q", "exclude_domains": ["https://example.com/news"]}"#,
                "exclude_domains: \"https://example.com/news\" is not a domain: write the host alone",
            ),
            (
                br#"{"query": "q", "include_domains": []}"#,
                "include_domains: name at least one domain",
            ),
            (
                br#"{"query": "q", "search": true, "options": {"search": false}}"#,
                "search: given beside the query and in options",
            ),
        ] {
            let (n, reason) = line_error(line);
            assert_eq!(n, 1);
            assert!(reason.contains(needle), "{reason}");
        }
    }

    #[test]
    fn a_lines_documents_root_is_checked_and_must_be_allowed() {
        let tasks = parse_batch(
            b"{\"query\": \"q\", \"documents\": \"s3://corp-docs/filings/\"}\nplain question\n",
        )
        .unwrap();
        assert_eq!(
            tasks[0].task.options.documents.as_deref(),
            Some("s3://corp-docs/filings/")
        );
        let allow = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            refused_documents(&tasks, &allow(&["s3://corp-docs/"])),
            None
        );
        let (id, why) = refused_documents(&tasks, &allow(&["file:///srv/docs/"])).unwrap();
        assert_eq!(id, "1");
        assert!(why.to_string().contains("documents.allow"), "{why}");
        let (_, reason) = line_error(br#"{"query": "q", "documents": "/srv/docs"}"#);
        assert!(
            reason.contains("documents: documents root /srv/docs: not a URL"),
            "{reason}"
        );
    }

    #[test]
    fn a_lines_fields_keep_their_order_and_a_bad_schema_is_named() {
        let text = r#"{"query": "Where is Acme?", "fields": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "integer"}}}}"#;
        let q = parse_batch(text.as_bytes()).unwrap();
        let fields = q[0].task.options.fields.as_ref().unwrap();
        let names: Vec<&str> = fields.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["zeta", "alpha"]);
        let bad = r#"{"query": "q", "options": {"fields": {"type": "object", "properties": {"a": {"type": "string", "pattern": "x"}}}}}"#;
        let (line, reason) = line_error(bad.as_bytes());
        assert_eq!(line, 1);
        assert!(
            reason.contains("properties.a.pattern: unsupported keyword"),
            "{reason}"
        );
    }

    #[test]
    fn parses_plain_and_jsonl_lines() {
        let tasks = parse_batch(
            b"# comment\nWhat is zorbium?\n\n{\"query\": \"Who found it?\", \"options\": {\"max_urls\": 3}}\n",
        )
        .unwrap();
        assert_eq!(tasks.len(), 2);
        assert_eq!(tasks[0].task.query, "What is zorbium?");
        assert_eq!(tasks[1].task.options.max_urls, Some(3));
        // Text that merely starts like JSON is a question.
        assert_eq!(parse_batch(b"[draft] what is zorbium?").unwrap().len(), 1);
    }

    /// Issue 25, item 3: a repeated provider is one provider, and a batch's weight in the
    /// queues is bounded.
    #[test]
    fn fan_out_is_bounded() {
        let many = vec!["searxng".to_owned(); 2000];
        let options = JobOptions {
            providers: Some(many),
            ..JobOptions::default()
        };
        let task = check_task("q", options).unwrap();
        assert_eq!(task.options.providers.unwrap(), ["searxng"]);
        let mixed = JobOptions {
            providers: Some(vec!["brave".into(), "searxng".into(), "brave".into()]),
            ..JobOptions::default()
        };
        let task = check_task("q", mixed).unwrap();
        assert_eq!(task.options.providers.unwrap(), ["brave", "searxng"]);

        let questions =
            Question::numbered(vec![
                check_task(&"x".repeat(1000), JobOptions::default())
                    .unwrap();
                100
            ]);
        let bytes = queued_bytes(&questions);
        assert!(bytes > 100_000, "{bytes}");
        assert!(check_queued_bytes(&questions, bytes).is_ok());
        let refused = check_queued_bytes(&questions, bytes - 1)
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains("broker.max_batch_bytes") && refused.contains("split"),
            "{refused}"
        );
    }

    #[test]
    fn names_the_bad_line() {
        for (text, line, needle) in [
            ("ok\n{\"query\": 3}\n", 2, "invalid JSON"),
            ("ok\n\n{\"query\": \"x\"\n", 3, "invalid JSON line"),
            ("ok\nok\n{\"query\": \"q\", \"bogus\": 1}\n", 3, "bogus"),
            ("{\"query\": \"  \"}", 1, "empty query"),
            ("# c\nok\n{\"query\": \"\"}", 3, "empty query"),
            (
                "{\"query\": \"q\", \"options\": {\"max_level\": 7}}",
                1,
                "max_level",
            ),
            (
                "{\"query\": \"q\", \"options\": {\"max_urls\": 1001}}",
                1,
                "max_urls",
            ),
            (
                "ok\n{\"query\": \"x\", \"options\": {\"max_urls\": -1}}",
                2,
                "max_urls",
            ),
            // Past 30 days the deadline's timestamp could overflow.
            (
                "{\"query\": \"q\", \"options\": {\"deadline_secs\": 18446744073709551615}}",
                1,
                "deadline_secs",
            ),
            (
                "{\"query\": \"q\", \"options\": {\"deadline_secs\": 0}}",
                1,
                "deadline_secs",
            ),
            (
                "{\"query\": \"x\", \"options\": {\"providers\": [\"nope\"]}}",
                1,
                "unknown provider",
            ),
        ] {
            let (at, reason) = line_error(text.as_bytes());
            assert_eq!(at, line, "{text}");
            assert!(reason.contains(needle), "{text}: {reason}");
        }
        let huge = "q".repeat(3_000_000);
        assert!(line_error(huge.as_bytes()).1.contains("longer than"));
    }

    #[test]
    fn providers_must_be_known_and_present() {
        let with = |names: &[&str]| JobOptions {
            providers: Some(names.iter().map(|n| n.to_string()).collect()),
            ..Default::default()
        };
        assert!(check_task("q", JobOptions::default()).is_ok());
        assert!(check_task("q", with(&["searxng", "bocha"])).is_ok());
        for (names, needle) in [
            (&[][..], "at least one"),
            (&["searxng", "nope"], "unknown provider \"nope\""),
        ] {
            let err = check_task("q", with(names)).unwrap_err().to_string();
            assert!(
                err.starts_with("providers: ") && err.contains(needle),
                "{err}"
            );
        }
    }

    #[test]
    fn a_bom_and_crlf_read_like_any_file() {
        let tasks =
            parse_batch(b"\xef\xbb\xbf{\"query\": \"What is zorbium?\"}\r\n\r\nWho found it?\r\n")
                .unwrap();
        let queries: Vec<&str> = tasks.iter().map(|t| t.task.query.as_str()).collect();
        assert_eq!(queries, ["What is zorbium?", "Who found it?"]);
    }

    #[test]
    fn bytes_that_are_not_utf8_are_named_by_line_and_column() {
        let (line, reason) = line_error(b"ok\nthe caf\xe9 question\n");
        assert_eq!(line, 2);
        assert!(reason.contains("0xE9 at column 8"), "{reason}");
        let (line, reason) = line_error(&["é\nü".as_bytes(), b"\xff"].concat());
        assert_eq!((line, reason.contains("column 2")), (2, true), "{reason}");
    }

    #[test]
    fn json_that_is_not_an_object_is_refused() {
        for (text, needle) in [
            ("ok\n[\"q\"]\n", "a JSON array"),
            ("\"q\"", "a JSON string"),
            ("ok\nok\n42", "a number"),
            ("true", "a JSON boolean"),
            ("null", "JSON null"),
            (
                "{\"query\": \"q\", \"options\": [5]}",
                "options: must be an object",
            ),
        ] {
            let (line, reason) = line_error(text.as_bytes());
            assert_eq!(line, text.lines().count(), "{text}");
            assert!(reason.contains(needle), "{text}: {reason}");
        }
    }

    fn ids(questions: &[Question]) -> Vec<&str> {
        questions.iter().map(|q| q.id.as_str()).collect()
    }

    #[test]
    fn ids_and_metadata_are_read_and_a_line_without_an_id_has_its_number() {
        let questions = parse_batch(
            b"# comment\nWhat is zorbium?\n\n{\"query\": \"Who found it?\", \"id\": \"ticket-9\", \"metadata\": {\"team\": \"a\", \"n\": [1, 2]}}\n{\"query\": \"When?\"}\n",
        )
        .unwrap();
        assert_eq!(ids(&questions), ["2", "ticket-9", "5"]);
        assert!(questions[0].metadata.is_empty());
        assert_eq!(
            Value::Object(questions[1].metadata.clone()),
            serde_json::json!({"team": "a", "n": [1, 2]})
        );
        assert_eq!(questions[1].task.query, "Who found it?");
        // The longest id, and metadata of exactly the limit, are accepted.
        let longest = "é".repeat(MAX_ID_CHARS);
        let padding = "x".repeat(MAX_METADATA_BYTES - r#"{"k":""}"#.len());
        let line = serde_json::json!({"query": "q", "id": longest, "metadata": {"k": padding}});
        let questions = parse_batch(line.to_string().as_bytes()).unwrap();
        assert_eq!(questions[0].id, longest);
    }

    #[test]
    fn a_bad_id_or_metadata_names_the_line_and_the_field() {
        let long = "i".repeat(MAX_ID_CHARS + 1);
        let big = "x".repeat(MAX_METADATA_BYTES);
        for (line, needle) in [
            (
                serde_json::json!({"query": "q", "id": ""}),
                "id: must be 1 to 128 characters, not 0",
            ),
            (
                serde_json::json!({"query": "q", "id": long}),
                "id: must be 1 to 128 characters, not 129",
            ),
            (
                serde_json::json!({"query": "q", "id": 7}),
                "id: must be a string of 1 to 128 characters, not a number",
            ),
            (
                serde_json::json!({"query": "q", "id": null}),
                "id: must be a string",
            ),
            (
                serde_json::json!({"query": "q", "metadata": [1]}),
                "metadata: must be a JSON object such as {\"team\": \"search\"}, not a JSON array",
            ),
            (
                serde_json::json!({"query": "q", "metadata": "x"}),
                "metadata: must be a JSON object",
            ),
            (
                serde_json::json!({"query": "q", "metadata": null}),
                "not JSON null",
            ),
            (
                serde_json::json!({"query": "q", "metadata": {"k": big}}),
                "metadata: 4104 bytes as JSON, more than the 4096",
            ),
        ] {
            let text = format!("ok\n# c\n{line}\n");
            let (at, reason) = line_error(text.as_bytes());
            assert_eq!(at, 3, "{line}");
            assert!(reason.contains(needle), "{line}: {reason}");
        }
    }

    #[test]
    fn a_repeated_id_names_both_lines() {
        let (line, reason) = line_error(
            b"{\"query\": \"a\", \"id\": \"x\"}\nok\n\n{\"query\": \"b\", \"id\": \"x\"}\n",
        );
        assert_eq!(line, 4);
        assert!(
            reason.contains("id \"x\" is already the id of line 1") && reason.contains("unique"),
            "{reason}"
        );
        // A line's number is its id when it has none: an explicit id may not take it.
        let (line, reason) = line_error(b"first\n{\"query\": \"b\", \"id\": \"1\"}\n");
        assert_eq!(line, 2);
        assert!(reason.contains("already the id of line 1"), "{reason}");
        assert_eq!(repeated_id(["a", "b", "c", "b", "a"]), Some((3, 1)));
        assert_eq!(repeated_id(["a", "b"]), None);
    }

    #[test]
    fn questions_are_sent_to_the_api_with_their_ids() {
        let questions = parse_batch(b"\nq\n{\"query\": \"r\", \"metadata\": {\"a\": 1}}").unwrap();
        assert_eq!(
            serde_json::to_value(&questions).unwrap(),
            serde_json::json!([
                {"query": "q", "options": {}, "id": "2"},
                {"query": "r", "options": {}, "id": "3", "metadata": {"a": 1}},
            ])
        );
        let numbered =
            Question::numbered(vec![questions[0].task.clone(), questions[1].task.clone()]);
        assert_eq!(ids(&numbered), ["1", "2"]);
    }

    #[test]
    fn empty_and_question_less_files_say_so() {
        assert_eq!(parse_batch(b""), Err(BatchFileError::Empty));
        assert_eq!(parse_batch(b"\xef\xbb\xbf"), Err(BatchFileError::Empty));
        assert_eq!(
            parse_batch(b"\n \r\n# c\n"),
            Err(BatchFileError::NoQuestions)
        );
        assert!(parse_batch(b"\n# only comments\n").is_err());
    }
}
