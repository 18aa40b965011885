//! A client of trawl's HTTP API (`trawl serve`), for the batch commands' `--server URL --token T`.
//!
//! Requests are retried a few times when the answer says a retry can succeed: 429 (after its
//! Retry-After), 409 (another attempt with the same Idempotency-Key is still being handled),
//! 502–504, and transport failures. Retrying a submission is safe because every attempt of one
//! `trawl submit` carries the same Idempotency-Key, so the server returns the first batch rather
//! than creating a second. The token is sent only in the Authorization header and never
//! appears in an error.
//!
//! A batch's results come from the export (`GET /v1/batches/{id}/results`), a page of jobs per
//! request, read a line at a time by [`Export`]. It does not trust the server: a page is at
//! most `limit` lines and the batch at most its job count, a cursor may not come back, the
//! pages may not outnumber what the job count needs, and no line may pass
//! [`MAX_EXPORT_LINE`]. A page that breaks off is asked for again and its lines already
//! handed out are skipped, so a caller writing lines to disk as they come never sees one twice.

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::time::Duration;

use reqwest::{Method, Response, StatusCode};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use trawl_api::routes::{BatchCreated, BatchStatus, NEXT_CURSOR};
use trawl_messages::JobOptions;
use trawl_pipeline::results::JobResult;
use trawl_store::BatchProgress;
use url::Url;
use uuid::Uuid;

/// Attempts per request when the server asks to retry or the connection breaks mid-request.
const ATTEMPTS: u32 = 5;
/// Attempts when nothing answers at all: enough to ride out a server restart, few enough
/// that a mistyped URL is reported within seconds.
const CONNECT_ATTEMPTS: u32 = 3;
/// Longest Retry-After honoured; a server asking for more is reported instead of waited on.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);
/// Jobs per page of the results export; fewer when every work product comes along, so that a
/// page stays short and a retried one repeats little.
const EXPORT_PAGE: usize = 1000;
const EXPORT_PAGE_WITH_PRODUCTS: usize = 100;
/// Longest line of the export accepted, in bytes: one job's results, with its work products
/// when asked for. A line is held whole while it is decoded, so this bounds the client's memory.
pub(crate) const MAX_EXPORT_LINE: usize = 64 << 20;
/// Longest wait for the next bytes of a page before it is asked for again.
const EXPORT_IDLE: Duration = Duration::from_secs(60);
/// Longest a page may take in all: it replaces the client's request timeout, which a page of
/// work products could outlast while bytes keep coming.
const EXPORT_PAGE_TIME: Duration = Duration::from_secs(3600);
/// Longest cursor accepted: the API's are job ids.
const MAX_CURSOR: usize = 256;

#[derive(Debug)]
pub(crate) enum RemoteError {
    /// Nothing answered at the server's address.
    Unreachable { server: String, detail: String },
    /// The server answered with an error status.
    Api {
        status: u16,
        code: String,
        message: String,
    },
    /// The connection failed mid-request, or the answer is not the API's.
    Transport { server: String, detail: String },
}

impl RemoteError {
    /// The error a non-success answer stands for; `body` is the API's `{"error": {…}}`, or
    /// whatever a proxy in front of it sent.
    fn from_answer(status: StatusCode, body: &[u8]) -> RemoteError {
        #[derive(Deserialize)]
        struct Body {
            error: Detail,
        }
        #[derive(Deserialize)]
        struct Detail {
            code: String,
            message: String,
        }
        let (code, message) = match serde_json::from_slice::<Body>(body) {
            Ok(b) => (b.error.code, b.error.message),
            Err(_) => {
                let text = String::from_utf8_lossy(body);
                let text: String = text.trim().chars().take(200).collect();
                let code = status
                    .canonical_reason()
                    .unwrap_or("error")
                    .to_lowercase()
                    .replace(' ', "_");
                let message = if text.is_empty() {
                    "the answer holds no trawl API error; is --server the address of `trawl serve`?"
                        .to_owned()
                } else {
                    text
                };
                (code, message)
            }
        };
        RemoteError::Api {
            status: status.as_u16(),
            code,
            message,
        }
    }
}

impl fmt::Display for RemoteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RemoteError::Unreachable { server, detail } => write!(
                f,
                "cannot reach the server: is `trawl serve` running at {server}? ({detail})"
            ),
            RemoteError::Api {
                status,
                code,
                message,
            } => {
                let what = match status {
                    401 | 403 => "the server refused the token",
                    404 => "not found on the server",
                    409 => "the server is still handling an earlier attempt",
                    413 => "the server refused the batch as too large",
                    429 => "the server is rate-limiting this token",
                    400..=499 => "the server rejected the request",
                    _ => "the server failed",
                };
                write!(f, "{what} ({status} {code}): {message}")
            }
            RemoteError::Transport { server, detail } => {
                write!(f, "the exchange with {server} failed: {detail}")
            }
        }
    }
}

impl std::error::Error for RemoteError {}

/// The innermost cause of a transport error ("Connection refused (os error 111)"), which says
/// more than reqwest's "error sending request".
fn root_cause(e: &reqwest::Error) -> String {
    let mut cause: &dyn std::error::Error = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

/// How long to wait before attempt `attempt + 1`: the server's Retry-After (seconds) if it gave
/// one, else an exponential back-off from half a second. `None`: do not wait that long.
fn retry_delay(retry_after: Option<&str>, attempt: u32) -> Option<Duration> {
    match retry_after.and_then(|v| v.trim().parse::<u64>().ok()) {
        Some(secs) => Some(Duration::from_secs(secs)).filter(|d| *d <= MAX_RETRY_AFTER),
        None => Some(Duration::from_millis(500) * 2u32.pow(attempt.saturating_sub(1).min(6))),
    }
}

fn retryable(status: StatusCode) -> bool {
    matches!(status.as_u16(), 409 | 429 | 502 | 503 | 504)
}

/// A batch as `trawl submit` sends it to a server: its file as it is, for the server to read as
/// the CLI did (a CSV table with `template`), with the batch's option defaults. The body weighs
/// what the file does, however many questions share a schema of fields; the API's `BatchIn`.
#[derive(Serialize)]
pub struct FileBatch<'a> {
    pub file: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub template: Option<&'a str>,
    #[serde(skip_serializing_if = "is_default")]
    pub options: &'a JobOptions,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub webhook: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_usd: Option<f64>,
}

fn is_default(options: &&JobOptions) -> bool {
    **options == JobOptions::default()
}

/// The store's record as the API reports it, so both modes describe a batch alike.
pub fn progress(status: &BatchStatus) -> BatchProgress {
    BatchProgress {
        total: status.total,
        finished: status.finished,
        by_status: status.by_status.clone(),
        outcomes: BTreeMap::new(),
        cancelled: status.cancelled,
    }
}

/// One `trawl serve`, reached with one token.
pub struct Remote {
    base: Url,
    token: String,
    http: reqwest::Client,
}

impl fmt::Debug for Remote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the token.
        f.debug_struct("Remote")
            .field("base", &self.server())
            .finish_non_exhaustive()
    }
}

impl Remote {
    /// A client of the API at `base` (`http(s)://host[:port][/prefix]`).
    pub fn new(base: Url, token: String) -> anyhow::Result<Remote> {
        if !matches!(base.scheme(), "http" | "https") || base.cannot_be_a_base() {
            anyhow::bail!("--server must be an http(s) URL, not {base}");
        }
        if token.trim().is_empty() {
            anyhow::bail!("--token is empty");
        }
        let http = trawl_http::builder()
            .user_agent(concat!("trawl/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(120))
            .build()
            .map_err(|e| anyhow::anyhow!("cannot start an HTTP client: {}", root_cause(&e)))?;
        Ok(Remote {
            base,
            token: token.trim().to_owned(),
            http,
        })
    }

    /// `segments` under the base URL, each percent-encoded on its own.
    fn url(&self, segments: &[&str]) -> Url {
        let mut url = self.base.clone();
        url.path_segments_mut()
            .expect("checked in new: a base URL")
            .pop_if_empty()
            .extend(segments);
        url
    }

    /// The server as errors name it: without any credentials written into the URL.
    fn server(&self) -> String {
        let mut shown = self.base.clone();
        let _ = shown.set_username("");
        let _ = shown.set_password(None);
        shown.as_str().trim_end_matches('/').to_owned()
    }

    /// A failed exchange with this server.
    fn transport(&self, detail: String) -> RemoteError {
        RemoteError::Transport {
            server: self.server(),
            detail,
        }
    }

    /// Sends the request `build` makes, retrying as the module docs say; a success, or the
    /// error of the last attempt.
    async fn send(
        &self,
        build: impl Fn() -> reqwest::RequestBuilder,
    ) -> Result<Response, RemoteError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let backoff = |attempts| retry_delay(None, attempt).filter(|_| attempt < attempts);
            let (error, delay) = match build().bearer_auth(&self.token).send().await {
                Ok(response) if response.status().is_success() => return Ok(response),
                Ok(response) => {
                    let status = response.status();
                    let retry_after = response
                        .headers()
                        .get(reqwest::header::RETRY_AFTER)
                        .and_then(|v| v.to_str().ok());
                    let delay = (retryable(status) && attempt < ATTEMPTS)
                        .then(|| retry_delay(retry_after, attempt))
                        .flatten();
                    let body = response.bytes().await.unwrap_or_default();
                    (RemoteError::from_answer(status, &body), delay)
                }
                Err(e) if e.is_connect() => {
                    let error = RemoteError::Unreachable {
                        server: self.server(),
                        detail: root_cause(&e),
                    };
                    (error, backoff(CONNECT_ATTEMPTS))
                }
                Err(e) if e.is_timeout() => (
                    self.transport("no answer in time".into()),
                    backoff(ATTEMPTS),
                ),
                Err(e) => (self.transport(root_cause(&e)), backoff(ATTEMPTS)),
            };
            match delay {
                Some(delay) => tokio::time::sleep(delay).await,
                None => return Err(error),
            }
        }
    }

    async fn json<T: DeserializeOwned>(&self, method: Method, url: Url) -> Result<T, RemoteError> {
        let response = self
            .send(|| self.http.request(method.clone(), url.clone()))
            .await?;
        self.decode(response).await
    }

    async fn decode<T: DeserializeOwned>(&self, response: Response) -> Result<T, RemoteError> {
        let bytes = response
            .bytes()
            .await
            .map_err(|e| self.transport(root_cause(&e)))?;
        serde_json::from_slice(&bytes).map_err(|e| {
            self.transport(format!(
                "the answer is not what this trawl expects ({e}); is it a trawl API?"
            ))
        })
    }

    /// Submits a batch; retries of this call's attempts are one batch, never several.
    pub async fn submit(&self, body: &FileBatch<'_>) -> Result<BatchCreated, RemoteError> {
        let key = Uuid::now_v7().to_string();
        let url = self.url(&["v1", "batches"]);
        let response = self
            .send(|| {
                self.http
                    .post(url.clone())
                    .header("Idempotency-Key", &key)
                    .json(body)
            })
            .await?;
        self.decode(response).await
    }

    pub async fn batch(&self, batch: Uuid) -> Result<BatchStatus, RemoteError> {
        let url = self.url(&["v1", "batches", &batch.to_string()]);
        self.json(Method::GET, url).await
    }

    pub async fn cancel(&self, batch: Uuid) -> Result<BatchStatus, RemoteError> {
        let url = self.url(&["v1", "batches", &batch.to_string()]);
        self.json(Method::DELETE, url).await
    }

    /// The batch's jobs with their results, a line at a time: `total` is the batch's job count
    /// (from [`Remote::batch`]), which bounds what the server may send; with `work_products`,
    /// each ended job's every file comes along.
    pub fn export(&self, batch: Uuid, total: u64, work_products: bool) -> Export<'_> {
        let limit = if work_products {
            EXPORT_PAGE_WITH_PRODUCTS
        } else {
            EXPORT_PAGE
        };
        let total = usize::try_from(total).unwrap_or(usize::MAX);
        Export {
            remote: self,
            batch,
            work_products,
            limit,
            total,
            max_pages: total / limit + 1,
            max_line: MAX_EXPORT_LINE,
            cursor: None,
            seen: HashSet::new(),
            received: 0,
            response: None,
            buffer: Vec::new(),
            scanned: 0,
            next: None,
            page_lines: 0,
            skip: 0,
            attempt: 0,
            done: false,
        }
    }
}

/// A batch's export being read: [`Export::next`] gives one job's results at a time.
pub struct Export<'a> {
    remote: &'a Remote,
    batch: Uuid,
    work_products: bool,
    limit: usize,
    total: usize,
    /// Pages a batch of `total` jobs needs at most: more means the server is looping.
    max_pages: usize,
    /// Longest line accepted ([`MAX_EXPORT_LINE`]).
    max_line: usize,
    /// The cursor of the page being read; `None` for the first.
    cursor: Option<String>,
    /// Every cursor the server has sent, the page being read's among them.
    seen: HashSet<String>,
    /// Lines handed out, over every page.
    received: usize,
    /// The page's response while it is being read.
    response: Option<Response>,
    /// Bytes received and not yet handed out as lines; `scanned` of them hold no line end.
    buffer: Vec<u8>,
    scanned: usize,
    /// The next page's cursor, as the page's first answer gave it.
    next: Option<String>,
    /// Lines of this page handed out; after a retry, `skip` of the page's lines are dropped
    /// again, and `attempt` counts the page's retries.
    page_lines: usize,
    skip: usize,
    attempt: u32,
    done: bool,
}

impl Export<'_> {
    fn violation(&self, detail: String) -> RemoteError {
        self.remote.transport(format!(
            "the results export of batch {}: {detail}",
            self.batch
        ))
    }

    /// The next job's results; `None` once every job of the batch has come.
    pub async fn next(&mut self) -> Result<Option<JobResult>, RemoteError> {
        loop {
            if self.done {
                return Ok(None);
            }
            if let Some(line) = self.take_line()? {
                if self.skip > 0 {
                    self.skip -= 1;
                    continue;
                }
                return self.accept(&line).map(Some);
            }
            let Some(response) = self.response.as_mut() else {
                self.open().await?;
                continue;
            };
            match tokio::time::timeout(EXPORT_IDLE, response.chunk()).await {
                Ok(Ok(Some(chunk))) => self.buffer.extend_from_slice(&chunk),
                Ok(Ok(None)) => self.end_page().await?,
                Ok(Err(e)) => self.broken(root_cause(&e)).await?,
                Err(_) => {
                    self.broken(format!("no data for {} s", EXPORT_IDLE.as_secs()))
                        .await?
                }
            }
        }
    }

    /// The next whole line of the buffer, if it holds one.
    fn take_line(&mut self) -> Result<Option<Vec<u8>>, RemoteError> {
        let line = match self.buffer[self.scanned..].iter().position(|&b| b == b'\n') {
            Some(at) => {
                let mut line: Vec<u8> = self.buffer.drain(..=self.scanned + at).collect();
                line.pop();
                self.scanned = 0;
                Some(line)
            }
            None => {
                self.scanned = self.buffer.len();
                None
            }
        };
        // A whole line, or the start of one still coming.
        if line.as_ref().unwrap_or(&self.buffer).len() > self.max_line {
            return Err(self.violation(format!(
                "a line is longer than {} bytes, more than this client takes for one job",
                self.max_line
            )));
        }
        Ok(line)
    }

    fn accept(&mut self, line: &[u8]) -> Result<JobResult, RemoteError> {
        let n = self.received + 1;
        let job: JobResult = serde_json::from_slice(line)
            .map_err(|e| self.violation(format!("line {n} is not a job's results ({e})")))?;
        if self.work_products && job.report.is_some() && job.work_products.is_none() {
            return Err(
                self.violation(format!("job {} came without its work products", job.job_id))
            );
        }
        self.received += 1;
        self.page_lines += 1;
        if self.page_lines > self.limit || self.received > self.total {
            return Err(self.violation(format!(
                "more lines than asked for ({} per page, {} jobs in the batch)",
                self.limit, self.total
            )));
        }
        Ok(job)
    }

    /// Asks for the page at `cursor`: a new page, or the same one again after it broke off.
    async fn open(&mut self) -> Result<(), RemoteError> {
        let again = self.attempt > 0;
        // Every page but the first is named by a cursor in `seen`: this is page `seen.len() + 1`.
        if !again && self.seen.len() >= self.max_pages {
            return Err(self.violation(format!(
                "more than the {} pages {} jobs take at {} a page",
                self.max_pages, self.total, self.limit
            )));
        }
        let remote = self.remote;
        let mut url = remote.url(&["v1", "batches", &self.batch.to_string(), "results"]);
        url.query_pairs_mut()
            .append_pair("limit", &self.limit.to_string());
        if self.work_products {
            url.query_pairs_mut().append_pair("work_products", "true");
        }
        if let Some(cursor) = &self.cursor {
            url.query_pairs_mut().append_pair("cursor", cursor);
        }
        let response = remote
            .send(|| remote.http.get(url.clone()).timeout(EXPORT_PAGE_TIME))
            .await?;
        let next = match response.headers().get(NEXT_CURSOR).map(|v| v.to_str()) {
            None => None,
            Some(Ok(next)) if !next.is_empty() && next.len() <= MAX_CURSOR => Some(next.to_owned()),
            Some(_) => return Err(self.violation("the next page's cursor is malformed".into())),
        };
        if again && next != self.next {
            return Err(self.violation("a page asked for again named another next page".into()));
        }
        match &next {
            // A cursor that comes back would walk the same pages for ever.
            Some(next) if !again && !self.seen.insert(next.clone()) => {
                return Err(self.violation(format!("the cursor {next:?} came back")));
            }
            _ => self.next = next,
        }
        self.response = Some(response);
        Ok(())
    }

    /// The page's response ended: it must have ended on a line end and held what was asked.
    async fn end_page(&mut self) -> Result<(), RemoteError> {
        if !self.buffer.is_empty() {
            return self.broken("the page ended inside a line".into()).await;
        }
        self.response = None;
        match self.next.take() {
            Some(next) => {
                if self.page_lines != self.limit {
                    return Err(self.violation(format!(
                        "a page that is not the last held {} of {} jobs",
                        self.page_lines, self.limit
                    )));
                }
                self.cursor = Some(next);
                (self.page_lines, self.skip, self.attempt) = (0, 0, 0);
            }
            None => {
                if self.received != self.total {
                    return Err(self.violation(format!(
                        "{} of the batch's {} jobs came",
                        self.received, self.total
                    )));
                }
                self.done = true;
            }
        }
        Ok(())
    }

    /// The page broke off: ask for it again (its lines already handed out are skipped), or
    /// give up after as many attempts as any request gets.
    async fn broken(&mut self, detail: String) -> Result<(), RemoteError> {
        self.response = None;
        self.buffer.clear();
        self.scanned = 0;
        self.attempt += 1;
        if self.attempt >= ATTEMPTS {
            return Err(self.remote.transport(format!(
                "the results export of batch {} broke off after {} jobs: {detail}",
                self.batch, self.received
            )));
        }
        self.skip = self.page_lines;
        if let Some(delay) = retry_delay(None, self.attempt) {
            tokio::time::sleep(delay).await;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_errors_say_what_happened_and_the_servers_reason() {
        let e = RemoteError::from_answer(
            StatusCode::UNAUTHORIZED,
            br#"{"error":{"code":"unauthorized","message":"unknown or revoked API token"}}"#,
        );
        assert_eq!(
            e.to_string(),
            "the server refused the token (401 unauthorized): unknown or revoked API token"
        );
        let e = RemoteError::from_answer(
            StatusCode::PAYLOAD_TOO_LARGE,
            br#"{"error":{"code":"too_large","message":"questions: 51 questions, more than the 50 a batch may hold"}}"#,
        );
        assert_eq!(
            e.to_string(),
            "the server refused the batch as too large (413 too_large): questions: 51 questions, more than the 50 a batch may hold"
        );
        assert!(matches!(e, RemoteError::Api { status: 413, .. }));
    }

    #[test]
    fn a_proxys_page_is_reported_by_its_status_and_text() {
        let e = RemoteError::from_answer(StatusCode::BAD_GATEWAY, b"  <html>Bad Gateway</html>\n");
        assert_eq!(
            e.to_string(),
            "the server failed (502 bad_gateway): <html>Bad Gateway</html>"
        );
        let e = RemoteError::from_answer(StatusCode::NOT_FOUND, b"");
        assert_eq!(
            e.to_string(),
            "not found on the server (404 not_found): the answer holds no trawl API error; is --server the address of `trawl serve`?"
        );
        let long = "x".repeat(5000);
        let e = RemoteError::from_answer(StatusCode::INTERNAL_SERVER_ERROR, long.as_bytes());
        assert!(e.to_string().len() < 300);
    }

    #[test]
    fn unreachable_servers_suggest_starting_one() {
        let e = RemoteError::Unreachable {
            server: "http://127.0.0.1:9".into(),
            detail: "Connection refused (os error 111)".into(),
        };
        assert_eq!(
            e.to_string(),
            "cannot reach the server: is `trawl serve` running at http://127.0.0.1:9? (Connection refused (os error 111))"
        );
    }

    #[test]
    fn retries_wait_as_the_server_asks_within_reason() {
        assert_eq!(retry_delay(Some("1"), 1), Some(Duration::from_secs(1)));
        assert_eq!(retry_delay(Some(" 3 "), 4), Some(Duration::from_secs(3)));
        assert_eq!(retry_delay(Some("3600"), 1), None);
        // An HTTP date, or none: the back-off.
        let date = Some("Wed, 21 Oct 2015 07:28:00 GMT");
        assert_eq!(retry_delay(date, 1), Some(Duration::from_millis(500)));
        assert_eq!(retry_delay(None, 2), Some(Duration::from_secs(1)));
        assert_eq!(retry_delay(None, 4), Some(Duration::from_secs(4)));
        for status in [409, 429, 502, 503, 504] {
            assert!(retryable(StatusCode::from_u16(status).unwrap()), "{status}");
        }
        for status in [400, 401, 404, 413, 415, 422, 500] {
            assert!(
                !retryable(StatusCode::from_u16(status).unwrap()),
                "{status}"
            );
        }
    }

    #[test]
    fn paths_are_joined_under_the_base_and_encoded_per_segment() {
        let remote = |base: &str| Remote::new(Url::parse(base).unwrap(), "t".into()).unwrap();
        let r = remote("http://h:8080");
        assert_eq!(
            r.url(&["v1", "batches"]).as_str(),
            "http://h:8080/v1/batches"
        );
        let r = remote("https://h/trawl/");
        assert_eq!(
            r.url(&["v1", "jobs", "j", "work-products", "docs", "a b?.json"])
                .as_str(),
            "https://h/trawl/v1/jobs/j/work-products/docs/a%20b%3F.json"
        );
        assert!(Remote::new(Url::parse("ftp://h").unwrap(), "t".into()).is_err());
        assert!(Remote::new(Url::parse("http://h").unwrap(), " ".into()).is_err());
    }

    #[test]
    fn neither_the_token_nor_url_credentials_are_shown() {
        let r = Remote::new(Url::parse("http://h").unwrap(), "trawl_secret".into()).unwrap();
        assert!(!format!("{r:?}").contains("secret"));
        let r = Remote::new(Url::parse("https://u:pw@h:8/p/").unwrap(), "t".into()).unwrap();
        assert_eq!(r.server(), "https://h:8/p");
    }

    /// The file goes as it is, the batch's options once, nothing unset.
    #[test]
    fn a_batch_is_sent_in_the_apis_shape() {
        let file = "What is zorbium?\n{\"query\": \"Who found it?\", \"id\": \"z-2\"}\n";
        let options = JobOptions {
            max_urls: Some(3),
            ..JobOptions::default()
        };
        let body = serde_json::to_value(FileBatch {
            file,
            template: None,
            options: &options,
            webhook: None,
            budget_usd: Some(2.5),
        })
        .unwrap();
        assert_eq!(
            body,
            serde_json::json!({"file": file, "options": {"max_urls": 3}, "budget_usd": 2.5})
        );
        let bare = FileBatch {
            file: "id,company\n1,Acme\n",
            template: Some("Where is {company}?"),
            options: &JobOptions::default(),
            webhook: Some("https://hooks.example/t"),
            budget_usd: None,
        };
        assert_eq!(
            serde_json::to_value(bare).unwrap(),
            serde_json::json!({"file": "id,company\n1,Acme\n", "template": "Where is {company}?", "webhook": "https://hooks.example/t"})
        );
    }

    // --- the export against a server that misbehaves ----------------------------------------

    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use axum::extract::{Query, State};
    use axum::response::IntoResponse;

    /// How the fake server answers page `n` (from 0) of an export: its lines, its next cursor,
    /// and whether it breaks off after the lines (without ending the response properly).
    type Pages =
        Arc<dyn Fn(usize, Option<&str>) -> (Vec<String>, Option<String>, bool) + Send + Sync>;

    #[derive(Clone)]
    struct Fake {
        pages: Pages,
        requests: Arc<AtomicUsize>,
    }

    fn line(n: usize) -> String {
        serde_json::json!({
            "id": n.to_string(), "metadata": {}, "job_id": Uuid::from_u128(n as u128),
            "query": format!("q{n}"), "status": "pending", "writer": null, "duration_ms": null,
            "cost_usd": null, "report": null, "sources": null,
        })
        .to_string()
    }

    async fn page(
        State(fake): State<Fake>,
        Query(query): Query<BTreeMap<String, String>>,
    ) -> axum::response::Response {
        let n = fake.requests.fetch_add(1, Ordering::SeqCst);
        let (lines, next, breaks) = (fake.pages)(n, query.get("cursor").map(String::as_str));
        let mut body: Vec<Result<String, std::io::Error>> =
            lines.into_iter().map(|l| Ok(l + "\n")).collect();
        if breaks {
            body.push(Err(std::io::Error::other("broken off")));
        }
        let mut response =
            axum::body::Body::from_stream(futures_util::stream::iter(body)).into_response();
        if let Some(next) = next {
            response
                .headers_mut()
                .insert(NEXT_CURSOR, next.parse().unwrap());
        }
        response
    }

    /// Exports `total` jobs from a fake server answering pages as `pages` says; the lines'
    /// ids in order, or the error, and the number of requests.
    async fn export_from(
        total: u64,
        pages: impl Fn(usize, Option<&str>) -> (Vec<String>, Option<String>, bool)
            + Send
            + Sync
            + 'static,
    ) -> (Result<Vec<String>, String>, usize) {
        let fake = Fake {
            pages: Arc::new(pages),
            requests: Arc::default(),
        };
        let app = axum::Router::new()
            .route("/v1/batches/{id}/results", axum::routing::get(page))
            .with_state(fake.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        let remote =
            Remote::new(Url::parse(&format!("http://{addr}")).unwrap(), "t".into()).unwrap();
        let mut export = remote.export(Uuid::nil(), total, false);
        // Lines here are short: a small limit keeps the test's memory small.
        export.max_line = 64 << 10;
        let mut ids = Vec::new();
        let result = loop {
            match export.next().await {
                Ok(Some(job)) => ids.push(job.id),
                Ok(None) => break Ok(ids),
                Err(e) => break Err(e.to_string()),
            }
        };
        (result, fake.requests.load(Ordering::SeqCst))
    }

    /// Page `p` of `total` jobs at EXPORT_PAGE a page, as a correct server sends it.
    fn honest(total: usize, p: usize) -> (Vec<String>, Option<String>) {
        let start = p * EXPORT_PAGE;
        let end = (start + EXPORT_PAGE).min(total);
        let next = (end < total).then(|| format!("c{end}"));
        ((start..end).map(line).collect(), next)
    }

    #[tokio::test]
    async fn an_export_follows_cursors_to_the_end() {
        let total = 2 * EXPORT_PAGE + 3;
        let (ids, requests) = export_from(total as u64, move |n, _| {
            let (lines, next) = honest(total, n);
            (lines, next, false)
        })
        .await;
        let ids = ids.unwrap();
        assert_eq!(ids.len(), total);
        assert_eq!((ids[0].as_str(), ids[total - 1].as_str()), ("0", "2002"));
        assert_eq!(requests, 3);
    }

    #[tokio::test]
    async fn a_page_that_breaks_off_is_asked_for_again_without_repeating_lines() {
        let total = EXPORT_PAGE + 10;
        let (ids, requests) = export_from(total as u64, move |n, cursor| {
            // The first request breaks off after 5 lines; the next asks for the same page.
            let p = usize::from(cursor.is_some());
            let (lines, next) = honest(total, p);
            if n == 0 {
                (lines[..5].to_vec(), next, true)
            } else {
                (lines, next, false)
            }
        })
        .await;
        let ids = ids.unwrap();
        let unique: HashSet<&String> = ids.iter().collect();
        assert_eq!((ids.len(), unique.len()), (total, total));
        assert_eq!(requests, 3);
    }

    #[tokio::test]
    async fn a_server_that_loops_or_oversends_is_refused() {
        // The same cursor for ever.
        let (result, requests) = export_from(5_000, |n, _| {
            (
                (n * EXPORT_PAGE..(n + 1) * EXPORT_PAGE).map(line).collect(),
                Some("again".into()),
                false,
            )
        })
        .await;
        let err = result.unwrap_err();
        assert!(err.contains("the cursor \"again\" came back"), "{err}");
        assert_eq!(requests, 2);
        // New cursors for ever, each page holding nothing.
        let (result, requests) =
            export_from(1_500, |n, _| (Vec::new(), Some(format!("c{n}")), false)).await;
        let err = result.unwrap_err();
        assert!(
            err.contains("a page that is not the last held 0 of 1000 jobs"),
            "{err}"
        );
        assert_eq!(requests, 1);
        // A short batch: the last page leaves jobs out.
        let (result, _) = export_from(3, |_, _| ((0..2).map(line).collect(), None, false)).await;
        assert!(result.unwrap_err().contains("2 of the batch's 3 jobs came"));
        // More lines on a page than asked for.
        let (result, _) = export_from(10_000, |_, _| {
            ((0..EXPORT_PAGE + 1).map(line).collect(), None, false)
        })
        .await;
        assert!(result.unwrap_err().contains("more lines than asked for"));
        // Not a job's results.
        let (result, _) = export_from(1, |_, _| (vec!["{\"oops\": 1}".into()], None, false)).await;
        assert!(result
            .unwrap_err()
            .contains("line 1 is not a job's results"));
    }

    #[tokio::test]
    async fn a_line_past_the_limit_is_refused() {
        let (result, _) =
            export_from(1, |_, _| (vec!["x".repeat((64 << 10) + 1)], None, false)).await;
        let err = result.unwrap_err();
        assert!(err.contains("a line is longer than 65536 bytes"), "{err}");
    }
}
