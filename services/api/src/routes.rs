//! The API's resources: batches, their jobs, and each job's report and work products.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Json;
use futures_util::{Stream, StreamExt};
use serde::{Deserialize, Deserializer, Serialize};
use sha2::{Digest, Sha256};
use trawl_messages::{paths, JobOptions, JobState, Metadata};
use trawl_pipeline::batch::{self, BatchOptions, Manifest, ManifestJob, Question};
use trawl_pipeline::results::{job_result, JobResult};
use trawl_store::{BatchProgress, Cache};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::error::{ApiError, ErrorBody, RateLimited, ReadOnly, Unauthorized, Unavailable};
use crate::{AppState, Caller, Writer};

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct QuestionIn {
    /// The research question: at most 2000 characters, not only whitespace.
    // The pattern's class is what `str::trim` removes (Unicode White_Space), so the document
    // refuses what `check_task` refuses; a test below holds the two together.
    #[schema(
        min_length = 1,
        max_length = 2000,
        pattern = r"[^\t\n\x0B\x0C\r \x85\xA0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]"
    )]
    pub query: String,
    /// Your own id for the question, returned with its results: 1 to 128 characters, unique in
    /// the batch. Without one, the question's id is its position in `questions`, from 1.
    // Read as any JSON value (null included) so that `check_user`, shared with batch files,
    // refuses a wrong one by naming the field.
    #[serde(default, deserialize_with = "given")]
    #[schema(value_type = String, min_length = 1, max_length = 128, required = false)]
    pub id: Option<serde_json::Value>,
    /// Your own JSON object, returned with the question's results: at most 4096 bytes as JSON.
    #[serde(default, deserialize_with = "given")]
    #[schema(value_type = Object, required = false)]
    pub metadata: Option<serde_json::Value>,
    #[serde(default)]
    pub options: JobOptions,
}

/// A field that is present, whatever its value: JSON null is `Some(Null)`, so it is refused as
/// the wrong type instead of read as absent.
fn given<'de, D: Deserializer<'de>>(d: D) -> Result<Option<serde_json::Value>, D::Error> {
    serde_json::Value::deserialize(d).map(Some)
}

/// A batch to research.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BatchIn {
    /// The questions: with `rows`, at most `maxItems`, this server's `api.max_questions`; more
    /// is a 413.
    #[serde(default)]
    pub questions: Vec<QuestionIn>,
    /// One question per row of `rows`, after `questions`: "What is the headquarters city of
    /// {company}?" fills {company} from the row's `company`. A row's values come back as its
    /// metadata, its `id` as its id (else its position in `rows` from 1).
    pub template: Option<String>,
    /// The rows `template` is filled from, each an object of column → value.
    #[schema(value_type = Option<Vec<Object>>)]
    pub rows: Option<Vec<serde_json::Map<String, serde_json::Value>>>,
    /// The text of a batch file, read as `trawl submit` reads one: a question per line, or
    /// JSONL lines (`{"query": "…", "id": "…", "metadata": {…}, "options": {…}}`); with
    /// `template` (and no `rows`), CSV whose header line names the columns, a question per row.
    /// Its questions come after `questions`; a bad line is refused by its number (`file: line
    /// 3: …`). A line without an id has its line number as id.
    pub file: Option<String>,
    /// Defaults for every question's options.
    #[serde(default)]
    pub options: JobOptions,
    /// Receives signed `job.completed` and `batch.completed` events: an http(s) URL.
    #[schema(pattern = r"^https?://[^/?#\x00-\x20\x7F]+([/?#][^\x00-\x20\x7F]*)?$")]
    pub webhook: Option<String>,
    /// LLM spend allowed for the batch in dollars; past it, jobs are written without the LLM.
    #[schema(exclusive_minimum = 0.0)]
    pub budget_usd: Option<f64>,
}

#[derive(Serialize, Deserialize, ToSchema)]
pub struct JobRef {
    pub job_id: Uuid,
    /// The question's id: yours, or its position in `questions` (from 1) when it had none.
    pub id: String,
    pub query: String,
}

#[derive(Serialize, Deserialize, ToSchema)]
pub struct BatchCreated {
    pub batch_id: Uuid,
    pub created_at: chrono::DateTime<chrono::Utc>,
    pub jobs: Vec<JobRef>,
}

#[derive(Serialize, Deserialize, ToSchema)]
pub struct BatchStatus {
    pub batch_id: Uuid,
    pub created_at: chrono::DateTime<chrono::Utc>,
    pub total: u64,
    /// Jobs whose search has run.
    pub started: u64,
    /// Jobs ended, whatever their status.
    pub finished: u64,
    /// Ended jobs by status: done, partial, no_sources, no_answer, failed, cancelled.
    pub by_status: BTreeMap<String, u64>,
    pub cancelled: bool,
    /// True once every job has ended.
    pub done: bool,
    /// LLM spend so far, in dollars.
    pub cost_usd: f64,
    /// Sources the ended jobs could not use, by outcome (failed, blocked, robots_disallowed …).
    pub unused_sources: BTreeMap<String, u64>,
}

#[derive(Serialize, Deserialize, ToSchema)]
pub(crate) struct JobSummary {
    pub job_id: Uuid,
    /// The question's id, as submitted or given by position.
    pub id: String,
    /// The question's metadata, as submitted.
    #[schema(value_type = Object)]
    pub metadata: Metadata,
    pub query: String,
    /// pending, or how the job ended.
    #[schema(value_type = String)]
    pub status: JobState,
}

#[derive(Serialize, Deserialize, ToSchema)]
pub(crate) struct JobPage {
    pub jobs: Vec<JobSummary>,
    /// Pass as `cursor` for the next page; absent on the last.
    pub next_cursor: Option<String>,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct PageQuery {
    /// From a previous page's `next_cursor`; opaque, and only the values this API returned for
    /// the batch are cursors (any other is a 400).
    pub cursor: Option<String>,
    /// Jobs per page, 1 to 500 (default 100).
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<usize>,
    /// Only the jobs in this state: pending, done, partial, no_sources, no_answer, failed or
    /// cancelled.
    #[param(pattern = "^(pending|done|partial|no_sources|no_answer|failed|cancelled)$")]
    pub status: Option<String>,
}

#[derive(Serialize, Deserialize, ToSchema)]
pub struct Job {
    pub job_id: Uuid,
    pub batch_id: Uuid,
    /// The question's id, as submitted or given by position.
    pub id: String,
    /// The question's metadata, as submitted.
    #[schema(value_type = Object)]
    pub metadata: Metadata,
    pub query: String,
    #[schema(value_type = String)]
    pub status: JobState,
    /// The report in markdown with numbered citations, once the job has ended.
    pub report: Option<String>,
    /// Names to fetch from `/v1/jobs/{id}/work-products/{name}`.
    pub work_products: Vec<String>,
}

/// The path's parameters. A path axum cannot decode (percent-encoded bytes that are not UTF-8)
/// names no batch or job, so it is a 404 like any unknown id.
fn path_params<T>(path: Result<Path<T>, PathRejection>) -> Result<T, ApiError> {
    path.map(|Path(params)| params)
        .map_err(|_| ApiError::not_found("no such batch or job"))
}

/// The pattern `BatchIn.webhook` documents, in code: an http(s) URL with a host and no spaces
/// or control characters.
/// `application/json`, with parameters (`; charset=utf-8`) or not, in any case; not
/// `application/jsonfoo`.
fn is_json_media_type(value: &str) -> bool {
    let essence = value.split(';').next().unwrap_or("").trim();
    essence.eq_ignore_ascii_case("application/json")
}

fn webhook_ok(url: &str) -> bool {
    let Some(rest) = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
    else {
        return false;
    };
    let host_len = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    host_len > 0 && rest.chars().all(|c| c > ' ' && c != '\x7f')
}

/// The pattern the `Idempotency-Key` parameter documents, in code: 1 to 255 visible ASCII
/// characters, no spaces.
fn idempotency_key_ok(key: &[u8]) -> bool {
    (1..=255).contains(&key.len()) && key.iter().all(|b| (b'!'..=b'~').contains(b))
}

/// One event of the stream, as an event-stream parser delivers it.
// Only describes the stream: the handler writes events through axum's `Sse`.
#[derive(ToSchema)]
#[allow(dead_code)]
pub(crate) struct BatchEvent {
    pub event: BatchEventKind,
    /// For `progress` and `done`, a BatchStatus as JSON; for `error`, what failed, as text.
    pub data: String,
}

/// `progress` whenever the batch's status changes; then `done` once every job has ended, or
/// `error` when the fleet could not answer. Either of those is the stream's last event.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum BatchEventKind {
    Progress,
    Done,
    Error,
}

pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What an Idempotency-Key remembers.
#[derive(Serialize, Deserialize)]
struct Remembered {
    fingerprint: String,
    batch_id: Uuid,
}

fn created(manifest: &Manifest) -> BatchCreated {
    BatchCreated {
        batch_id: manifest.batch_id,
        created_at: manifest.created_at,
        jobs: manifest
            .jobs
            .iter()
            .map(|j| JobRef {
                job_id: j.job_id,
                id: j.id.clone(),
                query: j.query.clone(),
            })
            .collect(),
    }
}

/// The token a request was made with, as its holder may see it.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct TokenInfo {
    /// Its public id, as `trawl token list` shows it.
    pub id: String,
    pub name: String,
    /// A read-only token reads the batches of another token and can submit or cancel none.
    pub read_only: bool,
    pub created_at: chrono::DateTime<chrono::Utc>,
}

/// The token this request was made with: a client checks a token with it before using it.
#[utoipa::path(
    get, path = "/v1/token", tag = "batches", operation_id = "token_info",
    responses(
        (status = 200, description = "The token's id, name and scope", body = TokenInfo),
        (status = 401, response = Unauthorized),
        (status = 429, response = RateLimited),
        (status = 503, response = Unavailable),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn token_info(caller: Caller) -> Json<TokenInfo> {
    let record = caller.0;
    Json(TokenInfo {
        read_only: record.read_only(),
        name: record.display_name(),
        id: record.id,
        created_at: record.created_at,
    })
}

/// The batch if it exists and `caller` submitted it; any other batch is "not found", so ids
/// of other tokens' batches cannot be probed.
async fn owned(state: &AppState, caller: &Caller, id: &str) -> Result<Manifest, ApiError> {
    let missing = || ApiError::not_found(format!("no batch {id}"));
    let batch = Uuid::parse_str(id).map_err(|_| missing())?;
    match batch::manifest(&state.rt, batch).await? {
        Some(m) if m.owner.as_deref() == Some(caller.0.owner()) => Ok(m),
        _ => Err(missing()),
    }
}

/// Where a batch's body has something else than the JSON object it must have.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
enum NotAnObject {
    #[error("the body must be a JSON object")]
    Body,
    #[error("options: must be an object")]
    Options,
    /// The question at this index (from 0).
    #[error("questions[{0}]: must be an object")]
    Question(usize),
    #[error("questions[{0}].options: must be an object")]
    QuestionOptions(usize),
}

/// serde builds a struct from a JSON array as readily as from an object (`["q"]` would be a
/// question, its fields by position). The document says object, so an array where an object
/// belongs is refused; any other wrong type is serde's to refuse.
fn arrays_are_not_objects(batch: &serde_json::Value) -> Result<(), NotAnObject> {
    use serde_json::Value;
    let options_ok =
        |v: &serde_json::Map<String, Value>| !matches!(v.get("options"), Some(Value::Array(_)));
    let Value::Object(batch) = batch else {
        return Err(NotAnObject::Body);
    };
    if !options_ok(batch) {
        return Err(NotAnObject::Options);
    }
    let Some(Value::Array(questions)) = batch.get("questions") else {
        return Ok(());
    };
    for (i, question) in questions.iter().enumerate() {
        match question {
            Value::Array(_) => return Err(NotAnObject::Question(i)),
            Value::Object(q) if !options_ok(q) => return Err(NotAnObject::QuestionOptions(i)),
            _ => {}
        }
    }
    Ok(())
}

/// The batch in `body`, checked: its questions and batch-wide options.
fn parse_batch_in(
    body: &[u8],
    max_questions: usize,
) -> Result<(Vec<Question>, BatchOptions), ApiError> {
    // RFC 8259 lets a parser ignore a byte order mark, and editors on Windows write one.
    let body = body.strip_prefix(b"\xef\xbb\xbf").unwrap_or(body);
    let value: serde_json::Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("the body is not valid JSON: {e}")))?;
    arrays_are_not_objects(&value).map_err(|e| ApiError::invalid(e.to_string()))?;
    drop(value);
    // Read from the text, not the value: a schema's fields keep the order they were given in.
    let mut input: BatchIn = serde_json::from_slice(body)
        .map_err(|e| ApiError::invalid(format!("the body is not a batch: {e}")))?;
    let rows = input.rows.take().unwrap_or_default();
    let file = input.file.take();
    if input.template.is_none() && !rows.is_empty() {
        return Err(ApiError::invalid(
            "template and rows: rows need a template, such as \"What is the headquarters city of {company}?\"",
        ));
    }
    if file.is_some() && !rows.is_empty() {
        return Err(ApiError::invalid(
            "file and rows: give the template's rows once, as rows or as a CSV file",
        ));
    }
    let count = input.questions.len() + rows.len();
    if count == 0 && file.is_none() {
        return Err(ApiError::invalid("questions: the batch holds no questions"));
    }
    too_many(count, max_questions)?;
    let options = batch_options(input.webhook, input.budget_usd)?;
    // A template is checked even when nothing fills it: one that could never make a question
    // is a mistake to name, not to ignore.
    if let Some(template) = &input.template {
        trawl_pipeline::template::Template::parse(template)
            .map_err(|e| ApiError::invalid(e.to_string()))?;
    }
    let defaults = &input.options;
    if !rows.is_empty() || file.is_some() {
        let problems = batch::option_problems(defaults);
        if let Some((key, problem)) = problems.first() {
            return Err(ApiError::invalid(format!("options.{key}: {problem}")));
        }
    }
    let templated = match (&input.template, file) {
        // A template without rows makes no question; the questions are the batch.
        (Some(template), None) if !rows.is_empty() => {
            trawl_pipeline::template::questions_from_rows(template, &rows, defaults)
                .map_err(|e| ApiError::invalid(e.to_string()))?
        }
        (template, Some(file)) => {
            batch::questions_from_file(file.as_bytes(), template.as_deref(), defaults)
                .map_err(|e| ApiError::invalid(format!("file: {e}")))?
        }
        _ => Vec::new(),
    };
    let mut tasks = listed(input.questions, defaults)?;
    // Template rows and the file's questions come after the questions, each named by its own
    // id or its position in `rows` or line in `file`.
    tasks.extend(templated);
    too_many(tasks.len(), max_questions)?;
    if let Some((i, first)) = batch::repeated_id(tasks.iter().map(|q| q.id.as_str())) {
        return Err(ApiError::invalid(format!(
            "questions[{i}]: id {:?} is already the id of questions[{first}]; ids must be unique in the batch (a question without an id has its position, from 1, as id, and one of the file its line number)",
            tasks[i].id
        )));
    }
    Ok((tasks, options))
}

/// The batch-wide options, checked.
fn batch_options(
    webhook: Option<String>,
    budget_usd: Option<f64>,
) -> Result<BatchOptions, ApiError> {
    if webhook.as_deref().is_some_and(|url| !webhook_ok(url)) {
        return Err(ApiError::invalid(
            "webhook: must be an http(s) URL with a host and no spaces or control characters",
        ));
    }
    if budget_usd.is_some_and(|b| !b.is_finite() || b <= 0.0) {
        return Err(ApiError::invalid(
            "budget_usd: must be a positive amount of dollars",
        ));
    }
    Ok(BatchOptions {
        webhook,
        budget_usd,
        owner: None,
    })
}

/// The batch's `questions`, each checked with the batch's `defaults` where it is silent and
/// named by its index.
fn listed(questions: Vec<QuestionIn>, defaults: &JobOptions) -> Result<Vec<Question>, ApiError> {
    let mut tasks = Vec::with_capacity(questions.len());
    for (i, q) in questions.into_iter().enumerate() {
        let options = q.options.or(defaults);
        let invalid =
            |reason: &dyn std::fmt::Display| ApiError::invalid(format!("questions[{i}]: {reason}"));
        let task = batch::check_task(&q.query, options).map_err(|e| invalid(&e))?;
        let (id, metadata) =
            batch::check_user(q.id, q.metadata, || (i + 1).to_string()).map_err(|e| invalid(&e))?;
        tasks.push(Question { task, id, metadata });
    }
    Ok(tasks)
}

/// A 413 for a batch of `count` questions past `max`.
fn too_many(count: usize, max: usize) -> Result<(), ApiError> {
    if count <= max {
        return Ok(());
    }
    Err(ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "too_large",
        format!(
            "questions: {count} questions, more than the {max} a batch may hold (api.max_questions); split the batch"
        ),
    ))
}

enum BodyError {
    TooLarge,
    Read(axum::Error),
}

/// Past `api.max_body_bytes`, the rest of a body is still read (and dropped) for up to this many
/// bytes or this long before the 413 goes out.
const DRAIN_BYTES: usize = 64 << 20;
const DRAIN_TIME: Duration = Duration::from_secs(5);

/// `body`, if it is at most `limit` bytes. One over the limit is read on to its end (within
/// [`DRAIN_BYTES`] and [`DRAIN_TIME`], so a hostile client gains nothing) before the refusal:
/// a server that answers and closes while the client is still sending makes the client's
/// kernel meet a reset, which can discard the answer, so the client sees a broken connection
/// instead of the 413 that says what to do.
async fn read_body(body: Body, limit: usize) -> Result<Bytes, BodyError> {
    let mut stream = body.into_data_stream();
    let mut kept = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(BodyError::Read)?;
        if kept.len() + chunk.len() > limit {
            let mut drained = kept.len() + chunk.len();
            let _ = tokio::time::timeout(DRAIN_TIME, async {
                while let Some(Ok(chunk)) = stream.next().await {
                    drained += chunk.len();
                    if drained > DRAIN_BYTES {
                        break;
                    }
                }
            })
            .await;
            return Err(BodyError::TooLarge);
        }
        kept.extend_from_slice(&chunk);
    }
    Ok(Bytes::from(kept))
}

/// Submit a batch of questions.
///
/// With an `Idempotency-Key`, a retried request (same key, same body) returns the batch the
/// first one created instead of a second batch.
#[utoipa::path(
    post, path = "/v1/batches", tag = "batches",
    request_body = BatchIn,
    params(("Idempotency-Key" = Option<String>, Header, pattern = r"^[!-~]{1,255}$",
        description = "Makes retries safe: the same key and body return the first batch. 1 to 255 visible ASCII characters, no spaces")),
    responses(
        (status = 201, description = "Batch enqueued", body = BatchCreated, links(
            ("status" = (operation_id = "get_batch", parameters(("id" = "$response.body#/batch_id")))),
            ("jobs" = (operation_id = "list_jobs", parameters(("id" = "$response.body#/batch_id")))),
            ("first_job" = (operation_id = "get_job", parameters(("id" = "$response.body#/jobs/0/job_id")))),
            ("cancel" = (operation_id = "cancel_batch", parameters(("id" = "$response.body#/batch_id")))),
            ("results" = (operation_id = "export_results", parameters(("id" = "$response.body#/batch_id")))),
        )),
        (status = 200, description = "Replayed: this key already created the batch", body = BatchCreated,
            headers(("Idempotent-Replayed" = String, description = "`true`"))),
        (status = 400, description = "The body is not JSON, or the Idempotency-Key is malformed", body = ErrorBody),
        (status = 401, response = Unauthorized),
        (status = 403, description = "The token is read-only (`read_only`), or a question names a documents root this server's `documents.allow` does not hold (`documents_not_allowed`; its message names the question)", body = ErrorBody),
        (status = 409, description = "A request with this Idempotency-Key is still being handled", body = ErrorBody,
            headers(("Retry-After" = u32, description = "Seconds to wait before retrying"))),
        (status = 413, description = "The body is over api.max_body_bytes, or the batch over api.max_questions", body = ErrorBody),
        (status = 415, description = "The body is not application/json", body = ErrorBody),
        (status = 422, description = "Not a valid batch, or the Idempotency-Key was used with another body", body = ErrorBody),
        (status = 429, description = "Over api.rate_per_sec (`rate_limited`), or over the token's quota of questions per UTC day or of open batches (`quota_exceeded`; its message says which and what to do)", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait before retrying; for the daily quota, until 00:00 UTC; absent for open batches"))),
        (status = 503, response = Unavailable),
    ),
    security(("bearer" = []))
)]
pub async fn submit(
    State(state): State<AppState>,
    Writer(caller): Writer,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let limit = state.config.api.max_body_bytes;
    let body = read_body(body, limit).await.map_err(|e| match e {
        BodyError::TooLarge => ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            format!(
                "the request body is larger than api.max_body_bytes ({limit} bytes); split the batch into several requests"
            ),
        ),
        BodyError::Read(e) => ApiError::bad_request(format!("the request body could not be read: {e}")),
    })?;
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(is_json_media_type);
    if !json {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "send the batch as JSON with Content-Type: application/json",
        ));
    }
    let (tasks, mut options) = parse_batch_in(&body, state.config.api.max_questions)?;
    fits_this_server(&state.config, &tasks, &options)?;
    options.owner = Some(caller.0.id.clone());

    let key = match headers.get("idempotency-key") {
        None => None,
        Some(v) if idempotency_key_ok(v.as_bytes()) => Some(format!(
            "{}:{}",
            caller.0.id,
            String::from_utf8_lossy(v.as_bytes())
        )),
        Some(_) => {
            return Err(ApiError::bad_request(
                "Idempotency-Key: must be 1 to 255 visible ASCII characters, without spaces",
            ))
        }
    };
    let Some(key) = key else {
        let manifest = submit_within_quota(&state, &caller, tasks, options).await?;
        return Ok((StatusCode::CREATED, Json(created(&manifest))).into_response());
    };

    let fingerprint = sha256_hex(&body);
    let store = &state.rt.store;
    let lock = format!("idempotency:{key}");
    if let Some(done) = store.cache_get(Cache::Idempotency, &key).await? {
        return replay(&state, &done, &fingerprint).await;
    }
    let Some(lock) = trawl_store::lock(store, &lock, Duration::from_secs(60)).await? else {
        let mut e = ApiError::new(
            StatusCode::CONFLICT,
            "in_progress",
            "a request with this Idempotency-Key is still being handled; retry after the Retry-After header",
        );
        e.retry_after = Some(1);
        return Err(e);
    };
    let result = submit_once(&state, &caller, &key, fingerprint, tasks, options).await;
    // Let go on every path, errors included: a retry would otherwise be answered 409 until the
    // lock expires (as it still is when the release itself fails).
    let _ = lock.release().await;
    result
}

/// What a valid batch must also be for this server: documents roots it allows, an LLM whose
/// spend it can price, and no more than its queues take at once.
fn fits_this_server(
    config: &trawl_config::Config,
    tasks: &[Question],
    options: &BatchOptions,
) -> Result<(), ApiError> {
    if let Some((id, e)) = batch::refused_documents(tasks, &config.documents.allow) {
        // Valid as written, but not for this server: refused as a read-only token is.
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "documents_not_allowed",
            format!("question {id:?}: documents: {e}"),
        ));
    }
    batch::check_budget(config, options.budget_usd)
        .map_err(|e| ApiError::invalid(e.to_string()))?;
    batch::check_queued_bytes(tasks, config.broker.max_batch_bytes)
        .map_err(|e| ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "too_large", e.to_string()))
}

/// [`submit`] under the Idempotency-Key's lock: submits the batch and remembers it under `key`.
async fn submit_once(
    state: &AppState,
    caller: &Caller,
    key: &str,
    fingerprint: String,
    tasks: Vec<batch::Question>,
    options: batch::BatchOptions,
) -> Result<Response, ApiError> {
    let store = &state.rt.store;
    // The first request may have finished between the lookup and the lock.
    if let Some(done) = store.cache_get(Cache::Idempotency, key).await? {
        return replay(state, &done, &fingerprint).await;
    }
    let manifest = submit_within_quota(state, caller, tasks, options).await?;
    let remembered = Remembered {
        fingerprint,
        batch_id: manifest.batch_id,
    };
    let ttl = Duration::from_secs(state.config.api.idempotency_ttl_secs);
    let bytes = serde_json::to_vec(&remembered).expect("serialisable");
    store
        .cache_put(Cache::Idempotency, key, &bytes, ttl)
        .await?;
    Ok((StatusCode::CREATED, Json(created(&manifest))).into_response())
}

/// Submits the batch under the caller's quotas ([`crate::quotas`]); what a failed submission
/// took is given back.
async fn submit_within_quota(
    state: &AppState,
    caller: &Caller,
    tasks: Vec<batch::Question>,
    options: batch::BatchOptions,
) -> Result<Manifest, ApiError> {
    let batch_id = Uuid::now_v7();
    let taken = crate::quotas::take(state, &caller.0.id, batch_id, tasks.len()).await?;
    // Indexed for `GET /v1/batches` before anything is queued: a store error then refuses the
    // submission whole, where after it a retry would queue the batch twice. An entry whose
    // submission failed has no manifest, and the listing skips it.
    let indexed = (state.rt.store)
        .owner_batch_add(&caller.0.id, &batch_id.to_string())
        .await;
    if let Err(e) = indexed {
        crate::quotas::give_back(&*state.rt.store, taken).await;
        return Err(e.into());
    }
    match batch::submit_as(&state.rt, batch_id, tasks, options, |_| {}).await {
        Ok(manifest) => Ok(manifest),
        Err(e) => {
            crate::quotas::give_back(&*state.rt.store, taken).await;
            Err(e.into())
        }
    }
}

async fn replay(state: &AppState, done: &[u8], fingerprint: &str) -> Result<Response, ApiError> {
    let remembered: Remembered = serde_json::from_slice(done)
        .map_err(|e| ApiError::unavailable(format!("corrupt idempotency record: {e}")))?;
    if remembered.fingerprint != fingerprint {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "idempotency_conflict",
            "this Idempotency-Key was used with a different body; use a new key for a new batch",
        ));
    }
    let manifest = batch::manifest(&state.rt, remembered.batch_id)
        .await?
        .ok_or_else(|| ApiError::unavailable("the remembered batch has no manifest"))?;
    let mut response = (StatusCode::OK, Json(created(&manifest))).into_response();
    response
        .headers_mut()
        .insert("idempotent-replayed", HeaderValue::from_static("true"));
    Ok(response)
}

async fn status_of(state: &AppState, manifest: &Manifest) -> Result<BatchStatus, ApiError> {
    // No record yet: the batch is being submitted (its manifest is written first).
    let record = batch::record(&state.rt, manifest.batch_id)
        .await?
        .unwrap_or_else(|| batch::Record {
            progress: BatchProgress {
                total: manifest.jobs.len() as u64,
                ..Default::default()
            },
            ..Default::default()
        });
    let usage = record.usage();
    let started = record.counter(trawl_pipeline::runtime::STARTED).max(0) as u64;
    let progress = record.progress;
    Ok(BatchStatus {
        batch_id: manifest.batch_id,
        created_at: manifest.created_at,
        total: progress.total,
        started: started.min(progress.total),
        finished: progress.finished,
        done: progress.is_done(),
        by_status: progress.by_status,
        cancelled: progress.cancelled,
        cost_usd: usage.cost_microdollars as f64 / 1e6,
        unused_sources: usage.unused_sources,
    })
}

/// A batch's progress, cost and unusable sources.
#[utoipa::path(
    get, path = "/v1/batches/{id}", tag = "batches",
    params(("id" = String, Path, format = Uuid, description = "Batch id")),
    responses(
        (status = 200, description = "The batch's status", body = BatchStatus),
        (status = 401, response = Unauthorized),
        (status = 404, description = "No batch with this id was submitted with this token", body = ErrorBody),
        (status = 429, response = RateLimited),
        (status = 503, response = Unavailable),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn get_batch(
    State(state): State<AppState>,
    caller: Caller,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<BatchStatus>, ApiError> {
    let id = path_params(path)?;
    let manifest = owned(&state, &caller, &id).await?;
    Ok(Json(status_of(&state, &manifest).await?))
}

/// Cancel a batch: its pending jobs end as `cancelled` and workers skip their messages.
///
/// The batch is not removed: its status, its jobs and the reports of jobs that ended before the
/// cancellation stay readable. Cancelling again changes nothing.
#[utoipa::path(
    delete, path = "/v1/batches/{id}", tag = "batches",
    params(("id" = String, Path, format = Uuid, description = "Batch id")),
    responses(
        (status = 200, description = "Cancelled; the batch's status after it", body = BatchStatus, links(
            ("events" = (operation_id = "events", parameters(("id" = "$response.body#/batch_id")),
                description = "Once the jobs in progress have ended, the stream sends `done` and closes")),
        )),
        (status = 401, response = Unauthorized),
        (status = 403, response = ReadOnly),
        (status = 404, description = "No batch with this id was submitted with this token", body = ErrorBody),
        (status = 429, response = RateLimited),
        (status = 503, response = Unavailable),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn cancel_batch(
    State(state): State<AppState>,
    Writer(caller): Writer,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<BatchStatus>, ApiError> {
    let id = path_params(path)?;
    let manifest = owned(&state, &caller, &id).await?;
    batch::cancel(&state.rt, manifest.batch_id).await?;
    Ok(Json(status_of(&state, &manifest).await?))
}

/// Batches per page of `GET /v1/batches` when the request does not say, and at most.
const BATCH_PAGE: usize = 20;
const BATCH_PAGE_MAX: usize = 100;

#[derive(Serialize, Deserialize, ToSchema)]
pub(crate) struct BatchPage {
    /// Newest first.
    pub batches: Vec<BatchStatus>,
    /// Pass as `cursor` for the next (older) page; absent on the last.
    pub next_cursor: Option<String>,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct BatchPageQuery {
    /// From a previous page's `next_cursor`: the batches older than it.
    pub cursor: Option<String>,
    /// Batches per page, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<usize>,
}

/// The batches this token submitted, newest first, a page at a time (the newest 10,000).
#[utoipa::path(
    get, path = "/v1/batches", tag = "batches",
    params(BatchPageQuery),
    responses(
        (status = 200, description = "A page of batches", body = BatchPage, links(
            ("batch" = (operation_id = "get_batch", parameters(("id" = "$response.body#/batches/0/batch_id")))),
            ("next_page" = (operation_id = "list_batches", parameters(("cursor" = "$response.body#/next_cursor")))),
        )),
        (status = 400, description = "`limit` is not 1 to 100, or `cursor` is not a batch id", body = ErrorBody),
        (status = 401, response = Unauthorized),
        (status = 429, response = RateLimited),
        (status = 503, response = Unavailable),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn list_batches(
    State(state): State<AppState>,
    caller: Caller,
    query: Result<Query<BatchPageQuery>, QueryRejection>,
) -> Result<Json<BatchPage>, ApiError> {
    let Query(page) = query.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let limit = page.limit.unwrap_or(BATCH_PAGE);
    if !(1..=BATCH_PAGE_MAX).contains(&limit) {
        return Err(ApiError::bad_request(format!(
            "limit: must be 1 to {BATCH_PAGE_MAX}"
        )));
    }
    // The cursor is the last batch id of the previous page, in the canonical form.
    let before = match page.cursor.as_deref() {
        None => None,
        Some(c) => Some(
            (Uuid::parse_str(c).ok().map(|u| u.to_string()))
                .ok_or_else(|| ApiError::bad_request("cursor: not a cursor this API returned"))?,
        ),
    };
    // One more than asked, to know whether a next page exists.
    let mut ids = (state.rt.store)
        .owner_batches(caller.0.owner(), before.as_deref(), limit + 1)
        .await?;
    let more = ids.len() > limit;
    ids.truncate(limit);
    let mut batches = Vec::with_capacity(ids.len());
    for id in &ids {
        // A batch whose manifest is gone (the object store's retention removed it) is skipped.
        let Ok(uuid) = Uuid::parse_str(id) else {
            continue;
        };
        if let Some(manifest) = batch::manifest(&state.rt, uuid).await? {
            batches.push(status_of(&state, &manifest).await?);
        }
    }
    Ok(Json(BatchPage {
        batches,
        next_cursor: more.then(|| ids.last().cloned()).flatten(),
    }))
}

const PAGE_MAX: usize = 500;

/// A batch's jobs in submission order, a page at a time.
#[utoipa::path(
    get, path = "/v1/batches/{id}/jobs", tag = "batches",
    params(("id" = String, Path, format = Uuid, description = "Batch id"), PageQuery),
    responses(
        (status = 200, description = "A page of jobs", body = JobPage, links(
            ("job" = (operation_id = "get_job", parameters(("id" = "$response.body#/jobs/0/job_id")))),
            ("next_page" = (operation_id = "list_jobs", parameters(
                ("id" = "$request.path.id"), ("cursor" = "$response.body#/next_cursor")))),
        )),
        (status = 400, description = "`limit` is not 1 to 500, `cursor` is not one this API returned, or `status` is not a job state", body = ErrorBody),
        (status = 401, response = Unauthorized),
        (status = 404, description = "No batch with this id was submitted with this token", body = ErrorBody),
        (status = 429, response = RateLimited),
        (status = 503, response = Unavailable),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn list_jobs(
    State(state): State<AppState>,
    caller: Caller,
    path: Result<Path<String>, PathRejection>,
    query: Result<Query<PageQuery>, QueryRejection>,
) -> Result<Json<JobPage>, ApiError> {
    let id = path_params(path)?;
    let Query(page) = query.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let manifest = owned(&state, &caller, &id).await?;
    let start = match page.cursor.as_deref() {
        None => 0,
        Some(c) => c
            .parse::<usize>()
            .ok()
            .filter(|&n| n <= manifest.jobs.len())
            .ok_or_else(|| ApiError::bad_request("cursor: not a cursor this API returned"))?,
    };
    let limit = page.limit.unwrap_or(100);
    if !(1..=PAGE_MAX).contains(&limit) {
        return Err(ApiError::bad_request(format!(
            "limit: must be 1 to {PAGE_MAX}"
        )));
    }
    let wanted = match page.status.as_deref() {
        None => None,
        Some(s) => Some(s.parse::<JobState>().map_err(|_| {
            ApiError::bad_request(format!(
                "status: {s:?} is not pending, done, partial, no_sources, no_answer, failed or cancelled"
            ))
        })?),
    };
    let statuses = batch::job_statuses(&state.rt, manifest.batch_id).await?;
    let status_of = |j: &ManifestJob| -> JobState {
        (statuses.get(&j.job_id.to_string()).copied()).unwrap_or_default()
    };
    // The page's jobs from `start` on, and where the next page starts: the cursor is a place in
    // the batch, so a filtered page skips the jobs between its matches.
    let mut jobs = Vec::with_capacity(limit);
    let mut next = None;
    for (at, j) in manifest.jobs.iter().enumerate().skip(start) {
        let status = status_of(j);
        if wanted.is_some_and(|w| w != status) {
            continue;
        }
        if jobs.len() == limit {
            next = Some(at.to_string());
            break;
        }
        jobs.push(JobSummary {
            job_id: j.job_id,
            id: j.id.clone(),
            metadata: j.metadata.clone(),
            query: j.query.clone(),
            status,
        });
    }
    Ok(Json(JobPage {
        jobs,
        next_cursor: next,
    }))
}

/// Jobs per page of the results export when the request does not say, and at most.
const EXPORT_PAGE: usize = 1000;
const EXPORT_PAGE_MAX: usize = 5000;
/// Jobs whose results are read at once while a page streams: enough to hide the object store's
/// latency, few enough that the server holds only that many jobs' results at any time.
const EXPORT_READ_AHEAD: usize = 8;
/// The response header that carries the next page's cursor.
pub const NEXT_CURSOR: &str = "x-next-cursor";

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct ExportQuery {
    /// From the previous page's `X-Next-Cursor` header; opaque, and only the values this API
    /// returned for the batch are cursors (any other is a 400).
    pub cursor: Option<String>,
    /// Jobs per page, 1 to 5000 (default 1000).
    #[param(minimum = 1, maximum = 5000)]
    pub limit: Option<usize>,
    /// Add each ended job's work products (`work_products`: every file of its folder, as
    /// `trawl results` copies them), not only its report and sources.
    pub work_products: Option<bool>,
    /// `jsonl` (default): a JobResult per line; `csv`: the page as a table with a header
    /// line, a row per job: id, query, status, its metadata, and each field with
    /// `<field>_source`; `md`: the page's reports one after another, each under its question.
    #[param(pattern = "^(jsonl|csv|md)$")]
    pub format: Option<String>,
}

/// Every job of a batch with its results, one JSON line per job, a page at a time.
///
/// Jobs come in submission order, each line a JobResult: the question's `id` and `metadata`,
/// its status, report and sources (a pending job has no report yet). The next page's cursor is
/// in the `X-Next-Cursor` header, absent on the last page. Sent gzip-compressed when the request
/// accepts it (`Accept-Encoding: gzip`). The page is streamed as its jobs are read, so a broken
/// connection ends it early: a client counts the lines (`limit` on every page but the last).
#[utoipa::path(
    get, path = "/v1/batches/{id}/results", tag = "batches", operation_id = "export_results",
    params(("id" = String, Path, format = Uuid, description = "Batch id"), ExportQuery),
    responses(
        (status = 200, description = "One JSON line (a JobResult) per job of the page, `schema` describing one line; with `format=csv`, the page as a CSV table; with `format=md`, its reports in markdown",
            content(
                (JobResult = "application/x-ndjson"),
                (String = "text/csv"),
                (String = "text/markdown"),
            ),
            headers(
                ("X-Next-Cursor" = String, description = "Pass as `cursor` for the next page; absent on the last page"),
            )),
        (status = 400, description = "`limit` is not 1 to 5000, `cursor` is not one this API returned for the batch, or `format` is not jsonl, csv or md", body = ErrorBody),
        (status = 401, response = Unauthorized),
        (status = 404, description = "No batch with this id was submitted with this token", body = ErrorBody),
        (status = 429, response = RateLimited),
        (status = 503, response = Unavailable),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn export_results(
    State(state): State<AppState>,
    caller: Caller,
    path: Result<Path<String>, PathRejection>,
    query: Result<Query<ExportQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let id = path_params(path)?;
    let Query(page) = query.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let manifest = owned(&state, &caller, &id).await?;
    let limit = page.limit.unwrap_or(EXPORT_PAGE);
    if !(1..=EXPORT_PAGE_MAX).contains(&limit) {
        return Err(ApiError::bad_request(format!(
            "limit: must be 1 to {EXPORT_PAGE_MAX}"
        )));
    }
    // A cursor is the id of the page's first job: it names a place in the batch that stays
    // put (jobs are never added to a batch), and one from another batch names none.
    let start = match page.cursor.as_deref() {
        None => 0,
        Some(cursor) => Uuid::parse_str(cursor)
            .ok()
            .and_then(|first| manifest.jobs.iter().position(|j| j.job_id == first))
            .ok_or_else(|| {
                ApiError::bad_request("cursor: not a cursor this API returned for this batch")
            })?,
    };
    let end = (start + limit).min(manifest.jobs.len());
    let next = manifest.jobs.get(end).map(|j| j.job_id.to_string());
    let batch = manifest.batch_id;
    // Only the page's entries are kept while it streams; each job's results are read when its
    // line is due, a few ahead, and dropped once sent.
    let jobs: Vec<ManifestJob> = manifest.jobs.into_iter().take(end).skip(start).collect();
    let products = page.work_products.unwrap_or(false);
    // The statuses of jobs without a job.json yet, read once for the page.
    let statuses = Arc::new(batch::job_statuses(&state.rt, batch).await?);
    let (content_type, markdown) = match page.format.as_deref() {
        None | Some("jsonl") => ("application/x-ndjson", false),
        Some("md") => ("text/markdown; charset=utf-8", true),
        Some("csv") => return csv_page(&state.rt, batch, jobs, statuses, next).await,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "format: {other:?} is not jsonl, csv or md"
            )))
        }
    };
    let rt = state.rt.clone();
    let lines = futures_util::stream::iter(jobs)
        .map(move |job| {
            let (rt, statuses) = (rt.clone(), Arc::clone(&statuses));
            async move { export_line(&rt, batch, &job, &statuses, products, markdown).await }
        })
        .buffered(EXPORT_READ_AHEAD);
    let mut response = Response::new(Body::from_stream(lines));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    if let Some(next) = next.and_then(|n| HeaderValue::from_str(&n).ok()) {
        headers.insert(NEXT_CURSOR, next);
    }
    Ok(response)
}

/// A page of the export as a CSV table: its header needs every job's metadata keys and
/// fields, so the page's rows are read before it is sent.
async fn csv_page(
    rt: &trawl_pipeline::Runtime,
    batch: Uuid,
    jobs: Vec<ManifestJob>,
    statuses: Arc<BTreeMap<String, JobState>>,
    next: Option<String>,
) -> Result<Response, ApiError> {
    let mut table = trawl_pipeline::table::Table::default();
    let results = futures_util::stream::iter(jobs)
        .map(|job| {
            let (rt, statuses) = (rt.clone(), Arc::clone(&statuses));
            async move { job_result(&rt, batch, &job, &statuses, false).await }
        })
        .buffered(EXPORT_READ_AHEAD);
    futures_util::pin_mut!(results);
    while let Some(result) = results.next().await {
        table.push(&result?);
    }
    let mut body = Vec::new();
    table
        .write(&mut body)
        .map_err(|e| ApiError::unavailable(format!("the table could not be written: {e}")))?;
    let mut response = Response::new(Body::from(body));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/csv; charset=utf-8"),
    );
    if let Some(next) = next.and_then(|n| HeaderValue::from_str(&n).ok()) {
        headers.insert(NEXT_CURSOR, next);
    }
    Ok(response)
}

/// One line of the export (or, `markdown`, one job's report under its question). An error
/// ends the response early (the connection is closed without the last chunk), which the client
/// sees as a broken page, never as a short one.
async fn export_line(
    rt: &trawl_pipeline::Runtime,
    batch: Uuid,
    job: &ManifestJob,
    statuses: &BTreeMap<String, JobState>,
    products: bool,
    markdown: bool,
) -> Result<Bytes, trawl_pipeline::StageError> {
    let result: JobResult = job_result(rt, batch, job, statuses, products).await.inspect_err(|e| {
        tracing::warn!(batch_id = %batch, job_id = %job.job_id, error = %e, "results export broken off");
    })?;
    if markdown {
        let report = result.report.as_deref().unwrap_or("_No report yet._\n");
        return Ok(Bytes::from(format!(
            "## {}. {}\n\nStatus: {}\n\n{}\n\n---\n\n",
            result.id,
            result.query.replace('\n', " "),
            result.status,
            report.trim_end()
        )));
    }
    let mut line = serde_json::to_vec(&result)
        .map_err(|e| trawl_pipeline::StageError::permanent(e.to_string()))?;
    line.push(b'\n');
    Ok(Bytes::from(line))
}

/// The job and its owner's manifest, if `caller` may see it.
async fn owned_job(
    state: &AppState,
    caller: &Caller,
    id: &str,
) -> Result<(Uuid, Manifest), ApiError> {
    let missing = || ApiError::not_found(format!("no job {id}"));
    let job = Uuid::parse_str(id).map_err(|_| missing())?;
    let batch = batch::batch_of(&state.rt, job).await?.ok_or_else(missing)?;
    let manifest = owned(state, caller, &batch.to_string())
        .await
        .map_err(|_| missing())?;
    Ok((job, manifest))
}

/// A job's status and, once it has ended, its report.
#[utoipa::path(
    get, path = "/v1/jobs/{id}", tag = "jobs",
    params(("id" = String, Path, format = Uuid, description = "Job id")),
    responses(
        (status = 200, description = "The job", body = Job, links(
            ("report" = (operation_id = "report_view", parameters(("id" = "$response.body#/job_id")))),
            ("work_product" = (operation_id = "work_product", parameters(
                ("id" = "$response.body#/job_id"), ("name" = "$response.body#/work_products/0")))),
        )),
        (status = 401, response = Unauthorized),
        (status = 404, description = "No job with this id in a batch submitted with this token", body = ErrorBody),
        (status = 429, response = RateLimited),
        (status = 503, response = Unavailable),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn get_job(
    State(state): State<AppState>,
    caller: Caller,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<Job>, ApiError> {
    let head = job_head(&state, &caller, path).await?;
    let (batch, job) = (head.batch_id, head.job_id);
    let report = state
        .rt
        .objects
        .get(&paths::report(batch, job))
        .await?
        .map(|b| String::from_utf8_lossy(&b).into_owned());
    let work_products = if report.is_some() {
        state
            .rt
            .objects
            .list_files(&paths::job_dir(batch, job))
            .await?
    } else {
        Vec::new()
    };
    Ok(Json(Job {
        job_id: job,
        batch_id: batch,
        id: head.id,
        metadata: head.metadata,
        query: head.query,
        status: head.status,
        report,
        work_products,
    }))
}

/// What every view of a job starts from: which job, of which batch, asked what, and where it
/// stands.
struct JobHead {
    job_id: Uuid,
    batch_id: Uuid,
    id: String,
    metadata: Metadata,
    query: String,
    status: JobState,
}

async fn job_head(
    state: &AppState,
    caller: &Caller,
    path: Result<Path<String>, PathRejection>,
) -> Result<JobHead, ApiError> {
    let id = path_params(path)?;
    let (job, manifest) = owned_job(state, caller, &id).await?;
    let batch = manifest.batch_id;
    let entry = manifest.jobs.into_iter().find(|j| j.job_id == job);
    let (id, metadata, query) = entry
        .map(|j| (j.id, j.metadata, j.query))
        .unwrap_or_default();
    let status = (batch::job_status(&state.rt, batch, job).await?).unwrap_or_default();
    Ok(JobHead {
        job_id: job,
        batch_id: batch,
        id,
        metadata,
        query,
        status,
    })
}

/// A source the report cites, as a reader following `[n]` wants it.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct CitationView {
    /// Its number in the report, `[n]`.
    pub n: u32,
    /// Its `idx` in `sources.json`.
    pub idx: u32,
    pub title: String,
    /// Its URL; `#page=N` when the report cites a page of a document (a PDF).
    pub url: String,
    /// The page of a document it is cited at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
    /// The passages of the source that support the report's statements citing it first,
    /// from `claims.json`; the answer's quotes from it when it asked for fields.
    pub quotes: Vec<String>,
}

/// A job's report ready to read: HTML, and what each citation stands for.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct ReportView {
    pub job_id: Uuid,
    pub batch_id: Uuid,
    pub id: String,
    pub query: String,
    #[schema(value_type = String)]
    pub status: JobState,
    /// The report rendered to HTML once the job has ended: text from pages escaped, no images,
    /// links only to http(s) pages, each citation marker a link `<a class="cite"
    /// href="#cite-n" data-cite="n">`.
    pub html: Option<String>,
    /// The cited sources, by number.
    pub citations: Vec<CitationView>,
    /// The job's fields (`answer.json`), when it asked for fields and has ended.
    #[schema(value_type = Option<Object>)]
    pub answer: Option<trawl_messages::Answer>,
}

/// Quotes kept per citation: enough to see what it stands for.
const QUOTES_PER_CITATION: usize = 5;

/// A job's report as HTML with its citations' sources and quotes: what the web app shows.
#[utoipa::path(
    get, path = "/v1/jobs/{id}/report", tag = "jobs", operation_id = "report_view",
    params(("id" = String, Path, format = Uuid, description = "Job id")),
    responses(
        (status = 200, description = "The report, its citations and answer; `html` is null until the job has ended", body = ReportView),
        (status = 401, response = Unauthorized),
        (status = 404, description = "No job with this id in a batch submitted with this token", body = ErrorBody),
        (status = 429, response = RateLimited),
        (status = 503, response = Unavailable),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn report_view(
    State(state): State<AppState>,
    caller: Caller,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<ReportView>, ApiError> {
    let head = job_head(&state, &caller, path).await?;
    let (batch, job) = (head.batch_id, head.job_id);
    let objects = &state.rt.objects;
    let report = objects.get(&paths::report(batch, job)).await?;
    let mut view = ReportView {
        job_id: job,
        batch_id: batch,
        id: head.id,
        query: head.query,
        status: head.status,
        html: (report.as_deref())
            .map(|md| crate::render::report_html(&String::from_utf8_lossy(md))),
        citations: Vec::new(),
        answer: None,
    };
    if report.is_none() {
        return Ok(Json(view));
    }
    // A work product that is missing or unreadable (written by an older version) leaves its
    // part of the view empty.
    fn json<T: serde::de::DeserializeOwned>(bytes: Option<Vec<u8>>) -> Option<T> {
        bytes.and_then(|b| serde_json::from_slice(&b).ok())
    }
    let sources: Vec<SourceRead> =
        json(objects.get(&paths::sources(batch, job)).await?).unwrap_or_default();
    let claims: Vec<ClaimRead> =
        json(objects.get(&paths::claims(batch, job)).await?).unwrap_or_default();
    view.answer = json(objects.get(&paths::answer(batch, job)).await?);
    view.citations = citations(&sources, &claims, view.answer.as_ref());
    Ok(Json(view))
}

/// What the report view reads of a `sources.json` entry.
#[derive(Deserialize)]
struct SourceRead {
    idx: u32,
    url: String,
    #[serde(default)]
    title: String,
    cited_as: Option<u32>,
    #[serde(default)]
    cited_page: Option<u32>,
}

/// What the report view reads of a `claims.json` entry.
#[derive(Deserialize)]
struct ClaimRead {
    sources: Vec<u32>,
    #[serde(default)]
    passage: String,
}

/// The cited sources in citation order, each with the passages that made it a statement's
/// best source, and the quotes of the fields answered from it.
fn citations(
    sources: &[SourceRead],
    claims: &[ClaimRead],
    answer: Option<&trawl_messages::Answer>,
) -> Vec<CitationView> {
    let mut cited: Vec<CitationView> = (sources.iter())
        .filter_map(|s| {
            Some(CitationView {
                n: s.cited_as?,
                idx: s.idx,
                title: s.title.clone(),
                url: match s.cited_page {
                    Some(page) => format!("{}#page={page}", s.url),
                    None => s.url.clone(),
                },
                page: s.cited_page,
                quotes: Vec::new(),
            })
        })
        .collect();
    cited.sort_by_key(|c| c.n);
    let field_quotes = (answer.into_iter())
        .flat_map(|a| a.fields.iter().map(|(_, f)| f))
        .filter_map(|f| Some((*f.sources.first()?, f.quote.as_deref()?)));
    // A field's source is named by its number in the report, a claim's by its idx.
    let numbers: BTreeMap<u32, u32> = cited.iter().map(|c| (c.idx, c.n)).collect();
    let claim_quotes = (claims.iter())
        .filter_map(|c| Some((*numbers.get(c.sources.first()?)?, c.passage.as_str())));
    for (n, quote) in claim_quotes.chain(field_quotes) {
        let Some(c) = cited.iter_mut().find(|c| c.n == n) else {
            continue;
        };
        let quote = quote.trim();
        if !quote.is_empty()
            && c.quotes.len() < QUOTES_PER_CITATION
            && !c.quotes.iter().any(|q| q == quote)
        {
            c.quotes.push(quote.to_owned());
        }
    }
    cited
}

/// One work product of an ended job: `report.md`, `sources.json`, `search.json`, `job.json`,
/// `docs/<n>.json` …
#[utoipa::path(
    get, path = "/v1/jobs/{id}/work-products/{name}", tag = "jobs",
    params(
        ("id" = String, Path, format = Uuid, description = "Job id"),
        ("name" = String, Path, description = "A name from the job's `work_products`"),
    ),
    responses(
        (status = 200, description = "The file, typed by its extension: .md, .json, .jsonl, anything else as bytes", content(
            (String = "text/markdown"),
            (serde_json::Value = "application/json"),
            (String = "application/x-ndjson"),
            // OpenAPI 3.1 describes raw bytes by leaving out the schema.
            ("application/octet-stream"),
        )),
        (status = 401, response = Unauthorized),
        (status = 404, description = "No such job for this token, or the job has no work product of that name", body = ErrorBody),
        (status = 429, response = RateLimited),
        (status = 503, response = Unavailable),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn work_product(
    State(state): State<AppState>,
    caller: Caller,
    path: Result<Path<(String, String)>, PathRejection>,
) -> Result<Response, ApiError> {
    let (id, name) = path_params(path)?;
    let (job, manifest) = owned_job(&state, &caller, &id).await?;
    let missing = || ApiError::not_found(format!("job {id} has no work product {name:?}"));
    let safe = !name.is_empty()
        && name
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..");
    if !safe {
        return Err(missing());
    }
    let key = format!("{}/{name}", paths::job_dir(manifest.batch_id, job));
    let bytes = state.rt.objects.get(&key).await?.ok_or_else(missing)?;
    let content_type = match name.rsplit('.').next() {
        Some("md") => "text/markdown; charset=utf-8",
        Some("json") => "application/json",
        Some("jsonl") => "application/x-ndjson",
        _ => "application/octet-stream",
    };
    Ok(([(header::CONTENT_TYPE, content_type)], bytes).into_response())
}

/// A batch's progress as server-sent events: a `progress` event (a BatchStatus) whenever it
/// changes, then `done` when every job has ended.
#[utoipa::path(
    get, path = "/v1/batches/{id}/events", tag = "batches",
    params(("id" = String, Path, format = Uuid, description = "Batch id")),
    responses(
        (status = 200, description = "An event stream; `schema` describes one event (OpenAPI 3.1 has no item schema)", content_type = "text/event-stream", body = BatchEvent),
        (status = 401, response = Unauthorized),
        (status = 404, description = "No batch with this id was submitted with this token", body = ErrorBody),
        (status = 429, response = RateLimited),
        (status = 503, response = Unavailable),
    ),
    security(("bearer" = []))
)]
pub async fn events(
    State(state): State<AppState>,
    caller: Caller,
    path: Result<Path<String>, PathRejection>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let id = path_params(path)?;
    let manifest = owned(&state, &caller, &id).await?;
    let stream = futures_util::stream::unfold(
        (state, manifest, None::<String>, false),
        |(state, manifest, last, ended)| async move {
            if ended {
                return None;
            }
            let mut last = last;
            loop {
                let status = match status_of(&state, &manifest).await {
                    Ok(s) => s,
                    Err(e) => {
                        let event = Event::default().event("error").data(e.message);
                        return Some((Ok(event), (state, manifest, last, true)));
                    }
                };
                let json = serde_json::to_string(&status).expect("serialisable");
                if status.done {
                    let event = Event::default().event("done").data(json);
                    return Some((Ok(event), (state, manifest, last, true)));
                }
                if last.as_deref() != Some(json.as_str()) {
                    let event = Event::default().event("progress").data(json.clone());
                    last = Some(json);
                    return Some((Ok(event), (state, manifest, last, false)));
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        },
    );
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A body over the limit is refused only once the client has sent it all (so the 413
    /// reaches a client still sending), and what it sends past the limit is not kept.
    #[tokio::test]
    async fn a_body_over_the_limit_is_read_to_its_end_then_refused() {
        let sent = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = Arc::clone(&sent);
        let chunks = futures_util::stream::iter(0..100).map(move |_| {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Ok::<_, Infallible>(Bytes::from(vec![b'x'; 1000]))
        });
        let result = read_body(Body::from_stream(chunks), 10_000).await;
        assert!(matches!(result, Err(BodyError::TooLarge)));
        assert_eq!(sent.load(std::sync::atomic::Ordering::SeqCst), 100);

        let small = read_body(Body::from("{}"), 10_000).await;
        assert_eq!(small.ok().as_deref(), Some(b"{}".as_slice()));
    }

    /// An error once the Idempotency-Key's lock is taken (here: the batch cannot be written)
    /// lets the lock go, so the client's immediate retry is handled again instead of being
    /// answered 409 until the lock expires.
    #[tokio::test]
    async fn a_failed_submission_lets_its_idempotency_key_go() {
        let mut config = trawl_config::Config::default();
        // Under a file, not a directory: every write of the batch fails.
        config.output.url = "file:///dev/null/trawl".into();
        let state = AppState {
            rt: trawl_pipeline::Runtime::embedded(config.clone()).unwrap(),
            config: Arc::new(config),
        };
        let (_, record) = crate::tokens::create(&*state.rt.store, "ci", crate::tokens::Scope::Full)
            .await
            .unwrap();
        let mut answers = Vec::new();
        for _ in 0..2 {
            let mut headers = HeaderMap::new();
            let json = HeaderValue::from_static("application/json");
            headers.insert(header::CONTENT_TYPE, json);
            headers.insert("idempotency-key", HeaderValue::from_static("retry-me"));
            let body = Body::from(r#"{"questions": [{"query": "q"}]}"#);
            let answer = submit(
                State(state.clone()),
                Writer(Caller(record.clone())),
                headers,
                body,
            )
            .await;
            let e = answer.expect_err("the batch cannot be written");
            answers.push((e.status, e.code));
        }
        assert_ne!(answers[0].0, StatusCode::CONFLICT, "{answers:?}");
        assert_eq!(answers[0], answers[1], "the retry was not handled again");
    }

    /// The pattern the served document gives at `pointer`, compiled as a client would.
    fn documented(pointer: &str) -> regex::Regex {
        let doc: serde_json::Value = serde_json::from_str(&crate::openapi::document()).unwrap();
        let pattern = doc
            .pointer(pointer)
            .and_then(serde_json::Value::as_str)
            .unwrap_or_else(|| panic!("no pattern at {pointer}"));
        regex::Regex::new(pattern).unwrap()
    }

    #[test]
    fn only_json_is_json() {
        for ok in [
            "application/json",
            "application/json; charset=utf-8",
            "Application/JSON",
        ] {
            assert!(is_json_media_type(ok), "{ok}");
        }
        for bad in [
            "application/jsonfoo",
            "application/json-seq",
            "text/json",
            "",
        ] {
            assert!(!is_json_media_type(bad), "{bad}");
        }
    }

    #[test]
    fn the_webhook_rule_is_the_documented_pattern() {
        let pattern = documented("/components/schemas/BatchIn/properties/webhook/pattern");
        for (url, ok) in [
            ("https://hooks.example/trawl?sig=1#x", true),
            ("http://10.0.0.1:8080", true),
            ("http://bücher.example/ä", true),
            ("http://h?", true),
            ("", false),
            ("https://", false),
            ("http:///path", false),
            ("ftp://h/", false),
            ("HTTP://h", false),
            ("http://h /x", false),
            ("http://h/x\n", false),
            ("http://h/\u{7f}", false),
        ] {
            assert_eq!(webhook_ok(url), ok, "{url:?}");
            assert_eq!(pattern.is_match(url), ok, "{url:?} against the document");
        }
    }

    #[test]
    fn the_idempotency_key_rule_is_the_documented_pattern() {
        let pattern = documented("/paths/~1v1~1batches/post/parameters/0/schema/pattern");
        let longest = "k".repeat(255);
        let too_long = "k".repeat(256);
        for (key, ok) in [
            ("run-42", true),
            ("!~", true),
            (longest.as_str(), true),
            ("", false),
            (too_long.as_str(), false),
            ("two words", false),
            ("tab\t", false),
            ("clé", false),
        ] {
            assert_eq!(idempotency_key_ok(key.as_bytes()), ok, "{key:?}");
            assert_eq!(pattern.is_match(key), ok, "{key:?} against the document");
        }
    }

    /// `check_task` trims Unicode White_Space; the query's pattern must call blank exactly those
    /// characters, or the document would promise queries the API refuses (or the reverse).
    #[test]
    fn a_blank_query_is_what_the_document_calls_blank() {
        let pattern = documented("/components/schemas/QuestionIn/properties/query/pattern");
        for c in (0..=0x3000u32)
            .filter_map(char::from_u32)
            .chain(['\u{feff}'])
        {
            let query = format!(" {c}\t");
            let accepted = batch::check_task(&query, JobOptions::default()).is_ok();
            assert_eq!(pattern.is_match(&query), accepted, "U+{:04X}", c as u32);
        }
        let doc: serde_json::Value = serde_json::from_str(&crate::openapi::document()).unwrap();
        let max = &doc["components"]["schemas"]["QuestionIn"]["properties"]["query"]["maxLength"];
        assert_eq!(max.as_u64(), Some(batch::MAX_QUERY_CHARS as u64));
        let longest = "q".repeat(batch::MAX_QUERY_CHARS);
        assert!(batch::check_task(&longest, JobOptions::default()).is_ok());
        assert!(batch::check_task(&format!("{longest} "), JobOptions::default()).is_err());
    }

    #[test]
    fn arrays_where_objects_belong_are_refused() {
        for (body, needle) in [
            (r#"[[{"query": "q"}]]"#, "JSON object"),
            (
                r#"{"questions": [["q"]]}"#,
                "questions[0]: must be an object",
            ),
            (
                r#"{"questions": [{"query": "q", "options": [5]}]}"#,
                "questions[0].options",
            ),
            (
                r#"{"questions": [{"query": "q"}], "options": [null]}"#,
                "options: must",
            ),
        ] {
            let err = parse_batch_in(body.as_bytes(), 10).expect_err(body);
            assert_eq!(
                (err.status, err.code),
                (StatusCode::UNPROCESSABLE_ENTITY, "invalid_request")
            );
            assert!(err.message.contains(needle), "{body}: {}", err.message);
        }
        let (tasks, _) = parse_batch_in(
            br#"{"questions": [{"query": "q", "options": {"max_level": 1.0}}]}"#,
            10,
        )
        .unwrap();
        assert_eq!(tasks[0].task.options.max_level, Some(1));
        let err = parse_batch_in(b"{\"questions\": [", 10).unwrap_err();
        assert_eq!(err.status, StatusCode::BAD_REQUEST);
    }

    /// A wrong option names its field; a provider must be one the document lists; a byte
    /// order mark before the JSON is ignored.
    #[test]
    fn bad_options_name_their_field_and_providers_are_the_documented_ones() {
        for body in [
            r#"{"questions": [{"query": "q", "options": {"max_urls": -1}}]}"#,
            r#"{"questions": [{"query": "q"}], "options": {"max_urls": 1e30}}"#,
        ] {
            let err = parse_batch_in(body.as_bytes(), 10).expect_err(body);
            assert_eq!(err.status, StatusCode::UNPROCESSABLE_ENTITY);
            assert!(err.message.contains("max_urls"), "{body}: {}", err.message);
        }
        let doc: serde_json::Value = serde_json::from_str(&crate::openapi::document()).unwrap();
        let names: Vec<&str> = doc["components"]["schemas"]["ProviderName"]["enum"]
            .as_array()
            .expect("an enumeration of provider names")
            .iter()
            .filter_map(serde_json::Value::as_str)
            .collect();
        assert_eq!(names, trawl_messages::PROVIDERS);
        for name in names {
            let body = format!(
                r#"{{"questions": [{{"query": "q", "options": {{"providers": ["{name}"]}}}}]}}"#
            );
            assert!(parse_batch_in(body.as_bytes(), 10).is_ok(), "{name}");
        }
        for (providers, needle) in [
            (r#"["searxng", "nope"]"#, "unknown provider \"nope\""),
            ("[]", "at least one"),
        ] {
            let body = format!(
                r#"{{"questions": [{{"query": "q", "options": {{"providers": {providers}}}}}]}}"#
            );
            let err = parse_batch_in(body.as_bytes(), 10).unwrap_err();
            assert!(
                err.message.starts_with("questions[0]: providers: ")
                    && err.message.contains(needle),
                "{}",
                err.message
            );
        }
        let bom = b"\xef\xbb\xbf{\"questions\": [{\"query\": \"q\"}]}";
        assert_eq!(parse_batch_in(bom, 10).unwrap().0[0].task.query, "q");
    }

    /// Ids and metadata are checked as a batch file's are, named by question; a question without
    /// an id has its position from 1, and ids may not repeat.
    #[test]
    fn ids_and_metadata_are_checked_and_named_by_question() {
        let (questions, _) = parse_batch_in(
            br#"{"questions": [{"query": "a"}, {"query": "b", "id": "mine", "metadata": {"k": [1]}}, {"query": "c"}]}"#,
            10,
        )
        .unwrap();
        let ids: Vec<&str> = questions.iter().map(|q| q.id.as_str()).collect();
        assert_eq!(ids, ["1", "mine", "3"]);
        assert_eq!(
            serde_json::Value::Object(questions[1].metadata.clone()),
            serde_json::json!({"k": [1]})
        );
        for (body, needle) in [
            (
                r#"{"questions": [{"query": "a", "id": ""}]}"#,
                "questions[0]: id: must be 1 to 128",
            ),
            (
                r#"{"questions": [{"query": "a"}, {"query": "b", "id": null}]}"#,
                "questions[1]: id: must be a string",
            ),
            (
                r#"{"questions": [{"query": "a", "id": 5}]}"#,
                "questions[0]: id: must be a string of 1 to 128 characters, not a number",
            ),
            (
                r#"{"questions": [{"query": "a", "metadata": []}]}"#,
                "questions[0]: metadata: must be a JSON object",
            ),
            (
                r#"{"questions": [{"query": "a", "metadata": null}]}"#,
                "questions[0]: metadata: must be a JSON object",
            ),
            (
                r#"{"questions": [{"query": "a", "id": "x"}, {"query": "b"}, {"query": "c", "id": "x"}]}"#,
                "questions[2]: id \"x\" is already the id of questions[0]",
            ),
            (
                r#"{"questions": [{"query": "a", "id": "2"}, {"query": "b"}]}"#,
                "questions[1]: id \"2\" is already the id of questions[0]",
            ),
        ] {
            let err = parse_batch_in(body.as_bytes(), 10).expect_err(body);
            assert_eq!(err.status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
            assert!(err.message.contains(needle), "{body}: {}", err.message);
        }
        let big = format!(
            r#"{{"questions": [{{"query": "a", "metadata": {{"k": "{}"}}}}]}}"#,
            "x".repeat(batch::MAX_METADATA_BYTES)
        );
        let err = parse_batch_in(big.as_bytes(), 10).unwrap_err();
        assert!(
            err.message.starts_with("questions[0]: metadata: "),
            "{}",
            err.message
        );

        let doc: serde_json::Value = serde_json::from_str(&crate::openapi::document()).unwrap();
        let question = &doc["components"]["schemas"]["QuestionIn"];
        let id = &question["properties"]["id"];
        assert_eq!(id["maxLength"].as_u64(), Some(batch::MAX_ID_CHARS as u64));
        assert_eq!(
            (id["minLength"].as_u64(), id["type"].as_str()),
            (Some(1), Some("string")),
            "{id}"
        );
        assert_eq!(question["properties"]["metadata"]["type"], "object");
        let required = question["required"].as_array().unwrap();
        assert!(
            !required.iter().any(|r| r == "id" || r == "metadata"),
            "{required:?}"
        );
    }

    #[test]
    fn job_option_bounds_are_the_documented_ones() {
        let doc: serde_json::Value = serde_json::from_str(&crate::openapi::document()).unwrap();
        let options = &doc["components"]["schemas"]["JobOptions"]["properties"];
        assert_eq!(
            options["max_urls"]["maximum"].as_u64(),
            Some(trawl_messages::MAX_URLS as u64)
        );
        assert_eq!(
            options["deadline_secs"]["maximum"].as_u64(),
            Some(trawl_messages::MAX_DEADLINE_SECS)
        );
    }

    /// A file's text is read as `trawl submit` reads a file: a question or JSONL line per line
    /// (CSV rows with a template), after `questions`, with the batch's options where a line is
    /// silent; a bad line is named by its number and nothing is made of the rest.
    #[test]
    fn a_batch_file_is_read_as_the_cli_reads_it_and_named_by_line() {
        let body = serde_json::json!({
            "questions": [{"query": "first", "id": "q"}],
            "file": "What is a?\n# a comment\n{\"query\": \"b\", \"id\": \"b1\", \"options\": {\"max_urls\": 2}}\n",
            "options": {"max_urls": 7},
        });
        let (questions, _) = parse_batch_in(body.to_string().as_bytes(), 10).unwrap();
        let read: Vec<(&str, &str, Option<usize>)> = (questions.iter())
            .map(|q| {
                (
                    q.id.as_str(),
                    q.task.query.as_str(),
                    q.task.options.max_urls,
                )
            })
            .collect();
        assert_eq!(
            read,
            [
                ("q", "first", Some(7)),
                ("1", "What is a?", Some(7)),
                ("b1", "b", Some(2))
            ]
        );

        let csv = serde_json::json!({
            "template": "Where is {company} based?",
            "file": "id,company\nc1,Acme\nc2,Globex\n",
        });
        let (questions, _) = parse_batch_in(csv.to_string().as_bytes(), 10).unwrap();
        assert_eq!(questions[1].task.query, "Where is Globex based?");
        assert_eq!(questions[1].id, "c2");

        for (body, status, needle) in [
            (
                serde_json::json!({"file": "{\"query\": \"ok\"}\n{\"query\": \n"}),
                StatusCode::UNPROCESSABLE_ENTITY,
                "file: line 2: invalid JSON line",
            ),
            (
                serde_json::json!({"file": "\n# only a comment\n"}),
                StatusCode::UNPROCESSABLE_ENTITY,
                "file: the file holds no questions",
            ),
            (
                serde_json::json!({"template": "Where is {company}?", "file": "id,name\n1,Acme\n"}),
                StatusCode::UNPROCESSABLE_ENTITY,
                "file: ",
            ),
            (
                serde_json::json!({"template": "Where is {c}?", "rows": [{"c": "x"}], "file": "c\ny\n"}),
                StatusCode::UNPROCESSABLE_ENTITY,
                "file and rows:",
            ),
            (
                serde_json::json!({"file": "a\nb\nc\n"}),
                StatusCode::PAYLOAD_TOO_LARGE,
                "3 questions, more than the 2",
            ),
            // A template that could never make a question is named, rows or not.
            (
                serde_json::json!({"questions": [{"query": "a"}], "template": ""}),
                StatusCode::UNPROCESSABLE_ENTITY,
                "the template",
            ),
        ] {
            let err = parse_batch_in(body.to_string().as_bytes(), 2).expect_err(&body.to_string());
            assert_eq!(err.status, status, "{body}: {}", err.message);
            assert!(err.message.contains(needle), "{body}: {}", err.message);
        }
    }

    /// Each citation gets the passages of the statements that cite it first, and the quotes of
    /// the fields answered from it; an uncited source is not a citation.
    #[test]
    fn citations_carry_their_quotes() {
        let sources: Vec<SourceRead> = serde_json::from_value(serde_json::json!([
            {"idx": 4, "url": "https://a.example/a.pdf", "title": "A", "cited_as": 2, "cited_page": 41},
            {"idx": 7, "url": "https://b.example/", "title": "B", "cited_as": 1},
            {"idx": 9, "url": "https://c.example/", "title": "C", "cited_as": null},
        ]))
        .unwrap();
        let claims: Vec<ClaimRead> = serde_json::from_value(serde_json::json!([
            {"sources": [7, 4], "passage": "B says so."},
            {"sources": [7], "passage": "B says so."},
            {"sources": [4], "passage": " A agrees. "},
            {"sources": [], "passage": "nobody"},
        ]))
        .unwrap();
        let answer: trawl_messages::Answer = serde_json::from_value(serde_json::json!({
            "fields": {"city": {"status": "found", "value": "Paris", "sources": [2], "quote": "A names Paris."}},
            "by": "extractive",
        }))
        .unwrap();
        let cited = citations(&sources, &claims, Some(&answer));
        let read: Vec<(u32, u32, Vec<&str>)> = (cited.iter())
            .map(|c| (c.n, c.idx, c.quotes.iter().map(String::as_str).collect()))
            .collect();
        assert_eq!(
            read,
            [
                (1, 7, vec!["B says so."]),
                (2, 4, vec!["A agrees.", "A names Paris."]),
            ]
        );
        // A document is cited at its page.
        assert_eq!(cited[1].url, "https://a.example/a.pdf#page=41");
        assert_eq!((cited[0].page, cited[1].page), (None, Some(41)));
    }
}
