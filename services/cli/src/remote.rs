//! A client of trawl's HTTP API (`trawl serve`), for the batch commands' `--server URL --token T`.
//!
//! Requests are retried a few times when the answer says a retry can succeed: 429 (after its
//! Retry-After), 409 (another attempt with the same Idempotency-Key is still being handled),
//! 502–504, and transport failures. Retrying a submission is safe because every attempt of one
//! `trawl submit` carries the same Idempotency-Key, so the server returns the first batch rather
//! than creating a second. The token is sent only in the Authorization header and never
//! appears in an error.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use reqwest::{Method, Response, StatusCode};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use trawl_api::routes::{BatchCreated, BatchStatus, Job, JobPage, JobSummary};
use trawl_messages::SearchTask;
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
/// The API's largest page.
const PAGE: usize = 500;

#[derive(Debug)]
pub enum RemoteError {
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

    pub fn status(&self) -> Option<u16> {
        match self {
            RemoteError::Api { status, .. } => Some(*status),
            _ => None,
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

/// `POST /v1/batches`: the API's `BatchIn`.
#[derive(Serialize)]
struct BatchIn<'a> {
    /// A `SearchTask` serialises as the API's `QuestionIn`: `query` and `options`.
    questions: &'a [SearchTask],
    #[serde(skip_serializing_if = "Option::is_none")]
    webhook: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    budget_usd: Option<f64>,
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
    pub fn new(base: Url, token: String) -> Result<Remote, String> {
        if !matches!(base.scheme(), "http" | "https") || base.cannot_be_a_base() {
            return Err(format!("--server must be an http(s) URL, not {base}"));
        }
        if token.trim().is_empty() {
            return Err("--token is empty".to_owned());
        }
        let http = reqwest::Client::builder()
            .user_agent(concat!("trawl/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(120))
            .build()
            .map_err(|e| format!("cannot start an HTTP client: {}", root_cause(&e)))?;
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

    /// Sends the request `build` makes, retrying as the module docs say; a success, or the
    /// error of the last attempt.
    async fn send(
        &self,
        build: impl Fn() -> reqwest::RequestBuilder,
    ) -> Result<Response, RemoteError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let (error, delay) = match build().bearer_auth(&self.token).send().await {
                Ok(response) if response.status().is_success() => return Ok(response),
                Ok(response) => {
                    let status = response.status();
                    let retry_after = response
                        .headers()
                        .get(reqwest::header::RETRY_AFTER)
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_owned);
                    let body = response.bytes().await.unwrap_or_default();
                    let error = RemoteError::from_answer(status, &body);
                    let delay = retryable(status)
                        .then(|| retry_delay(retry_after.as_deref(), attempt))
                        .flatten()
                        .filter(|_| attempt < ATTEMPTS);
                    (error, delay)
                }
                Err(e) if e.is_connect() => {
                    let error = RemoteError::Unreachable {
                        server: self.server(),
                        detail: root_cause(&e),
                    };
                    let delay = retry_delay(None, attempt).filter(|_| attempt < CONNECT_ATTEMPTS);
                    (error, delay)
                }
                Err(e) => {
                    let detail = if e.is_timeout() {
                        "no answer in time".to_owned()
                    } else {
                        root_cause(&e)
                    };
                    let error = RemoteError::Transport {
                        server: self.server(),
                        detail,
                    };
                    (
                        error,
                        retry_delay(None, attempt).filter(|_| attempt < ATTEMPTS),
                    )
                }
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
        let bytes = response.bytes().await.map_err(|e| RemoteError::Transport {
            server: self.server(),
            detail: root_cause(&e),
        })?;
        serde_json::from_slice(&bytes).map_err(|e| RemoteError::Transport {
            server: self.server(),
            detail: format!("the answer is not what this trawl expects ({e}); is it a trawl API?"),
        })
    }

    /// Submits a batch; retries of this call's attempts are one batch, never several.
    pub async fn submit(
        &self,
        tasks: &[SearchTask],
        webhook: Option<&str>,
        budget_usd: Option<f64>,
    ) -> Result<BatchCreated, RemoteError> {
        let body = serde_json::to_vec(&BatchIn {
            questions: tasks,
            webhook,
            budget_usd,
        })
        .expect("a batch serialises");
        let key = Uuid::now_v7().to_string();
        let url = self.url(&["v1", "batches"]);
        let response = self
            .send(|| {
                self.http
                    .post(url.clone())
                    .header("Idempotency-Key", &key)
                    .header(reqwest::header::CONTENT_TYPE, "application/json")
                    .body(body.clone())
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

    /// Every job of the batch, in submission order, following the pages' cursors.
    pub async fn jobs(&self, batch: Uuid) -> Result<Vec<JobSummary>, RemoteError> {
        let mut jobs = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let mut url = self.url(&["v1", "batches", &batch.to_string(), "jobs"]);
            url.query_pairs_mut()
                .append_pair("limit", &PAGE.to_string());
            if let Some(c) = &cursor {
                url.query_pairs_mut().append_pair("cursor", c);
            }
            let page: JobPage = self.json(Method::GET, url).await?;
            jobs.extend(page.jobs);
            match page.next_cursor {
                Some(next) if Some(&next) != cursor.as_ref() => cursor = Some(next),
                _ => return Ok(jobs),
            }
        }
    }

    pub async fn job(&self, job: Uuid) -> Result<Job, RemoteError> {
        let url = self.url(&["v1", "jobs", &job.to_string()]);
        self.json(Method::GET, url).await
    }

    /// One work product of a job (`report.md`, `docs/1.json` …); `None` if it has none by
    /// that name.
    pub async fn work_product(
        &self,
        job: Uuid,
        name: &str,
    ) -> Result<Option<Vec<u8>>, RemoteError> {
        let mut segments = vec!["v1", "jobs"];
        let id = job.to_string();
        segments.push(&id);
        segments.push("work-products");
        segments.extend(name.split('/'));
        let url = self.url(&segments);
        match self.send(|| self.http.get(url.clone())).await {
            Ok(response) => response
                .bytes()
                .await
                .map(|b| Some(b.to_vec()))
                .map_err(|e| RemoteError::Transport {
                    server: self.server(),
                    detail: root_cause(&e),
                }),
            Err(e) if e.status() == Some(404) => Ok(None),
            Err(e) => Err(e),
        }
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
        assert_eq!(e.status(), Some(413));
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

    #[test]
    fn a_batch_is_sent_in_the_apis_shape() {
        let tasks = trawl_pipeline::batch::parse_batch(
            b"What is zorbium?\n{\"query\": \"Who found it?\", \"options\": {\"max_urls\": 3}}",
        )
        .unwrap();
        let body = serde_json::to_value(BatchIn {
            questions: &tasks,
            webhook: None,
            budget_usd: Some(2.5),
        })
        .unwrap();
        assert_eq!(
            body,
            serde_json::json!({
                "questions": [
                    {"query": "What is zorbium?", "options": {}},
                    {"query": "Who found it?", "options": {"max_urls": 3}},
                ],
                "budget_usd": 2.5,
            })
        );
    }
}
