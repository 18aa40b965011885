//! Webhooks: a signed `POST` to a caller-supplied URL when a job or a batch completes.
//!
//! - The body is the [`Event`] as JSON. Event ids are deterministic (`job.completed:<job>`,
//!   `batch.completed:<batch>`), so a receiver can deduplicate redeliveries. A
//!   `job.completed` event's `data` holds `batch_id`, `job_id`, `status`, `cited`, `report` (its
//!   object key) and the job's own `id` and `metadata`, as the user submitted them, and, for a
//!   job that asked for fields, its `answer` (as `answer.json`).
//! - Headers: `Content-Type: application/json`, `X-Trawl-Event`, `X-Trawl-Event-Id`,
//!   `X-Trawl-Timestamp` (unix seconds) and, when a secret is configured, `X-Trawl-Signature:
//!   v1=<hex>`, an HMAC-SHA256 over `{timestamp}.{body}` (see [`signature`]). Receivers should
//!   recompute it over the raw body and reject stale timestamps to stop replays. Every attempt
//!   is signed afresh with its own timestamp.
//! - Delivery: a 2xx is success. 429, 5xx, timeouts and connection errors are retried, up to
//!   `attempts` in all, with exponential back-off from `first_backoff` (a `Retry-After` in
//!   seconds wins, capped at 60 s). Any other status fails at once. Each attempt has 10 s in all.
//! - Webhook URLs are user input, so they go through the fetch stage's SSRF guard: http(s)
//!   only, literal addresses checked before sending, names resolved by the guarded resolver
//!   (no DNS rebinding window), no proxy, and redirects are never followed.

use std::fmt;
use std::time::Duration;

use chrono::{DateTime, Utc};
use hmac::{Hmac, KeyInit, Mac};
use reqwest::header::{HeaderValue, CONTENT_TYPE, RETRY_AFTER};
use reqwest::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::Sha256;
use trawl_guard::{refusal_in, resolver, Guard};
use url::Url;
use uuid::Uuid;

pub(crate) const HEADER_EVENT: &str = "x-trawl-event";
pub(crate) const HEADER_EVENT_ID: &str = "x-trawl-event-id";
pub(crate) const HEADER_TIMESTAMP: &str = "x-trawl-timestamp";
pub(crate) const HEADER_SIGNATURE: &str = "x-trawl-signature";

pub(crate) const JOB_COMPLETED: &str = "job.completed";
pub(crate) const BATCH_COMPLETED: &str = "batch.completed";

/// Time allowed for one attempt, connection, request and response included.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(10);
/// Upper bound for any wait between attempts, `Retry-After` included.
const MAX_BACKOFF: Duration = Duration::from_secs(60);

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Event {
    /// Deterministic: the same event delivered twice carries the same id.
    pub id: String,
    /// `job.completed` or `batch.completed`.
    pub kind: String,
    pub created_at: DateTime<Utc>,
    pub data: Value,
}

impl Event {
    /// `data` is typically the job's result summary. When it is an object, `batch_id` and
    /// `job_id` are added to it (unless already there); otherwise it is wrapped as
    /// `{"batch_id", "job_id", "value": data}`.
    pub(crate) fn job_completed(batch: Uuid, job: Uuid, data: Value) -> Event {
        Event {
            id: format!("{JOB_COMPLETED}:{job}"),
            kind: JOB_COMPLETED.into(),
            created_at: Utc::now(),
            data: with_ids(
                data,
                &[("batch_id", batch.to_string()), ("job_id", job.to_string())],
            ),
        }
    }

    /// As [`Event::job_completed`], with `batch_id` only.
    pub(crate) fn batch_completed(batch: Uuid, data: Value) -> Event {
        Event {
            id: format!("{BATCH_COMPLETED}:{batch}"),
            kind: BATCH_COMPLETED.into(),
            created_at: Utc::now(),
            data: with_ids(data, &[("batch_id", batch.to_string())]),
        }
    }
}

fn with_ids(data: Value, ids: &[(&str, String)]) -> Value {
    let mut map = match data {
        Value::Object(map) => map,
        Value::Null => serde_json::Map::new(),
        other => {
            let mut map = serde_json::Map::new();
            map.insert("value".into(), other);
            map
        }
    };
    for (key, id) in ids {
        map.entry(*key).or_insert_with(|| Value::String(id.clone()));
    }
    Value::Object(map)
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub(crate) enum WebhookError {
    /// The URL is malformed, not http(s), or points at a private or reserved address.
    #[error("webhook URL refused: {0}")]
    Refused(String),
    /// The receiver answered with a status that is not worth retrying (4xx other than 429,
    /// or a redirect, which is never followed).
    #[error("webhook answered HTTP {status}")]
    Status { status: u16 },
    /// Every attempt failed with a retryable error; `last` says how the last one failed.
    #[error("webhook failed after {attempts} attempts: {last}")]
    Exhausted { attempts: u32, last: String },
}

/// `v1=<hex HMAC-SHA256 of "{timestamp}.{body}">`.
pub fn signature(secret: &[u8], timestamp: i64, body: &[u8]) -> String {
    let mut mac =
        <Hmac<Sha256> as KeyInit>::new_from_slice(secret).expect("HMAC accepts keys of any length");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!("v1={}", to_hex(&mac.finalize().into_bytes()))
}

fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 0x0f)] as char);
    }
    out
}

pub(crate) struct Webhooks {
    client: reqwest::Client,
    guard: Guard,
    secret: Option<Vec<u8>>,
    attempts: u32,
    first_backoff: Duration,
    timeout: Duration,
}

impl fmt::Debug for Webhooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print the secret, only whether there is one.
        f.debug_struct("Webhooks")
            .field("signed", &self.secret.is_some())
            .field("attempts", &self.attempts)
            .field("first_backoff", &self.first_backoff)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// Why [`Webhooks::new`] refused its settings.
#[derive(Debug, thiserror::Error)]
pub enum WebhookSetupError {
    #[error("webhook attempts must be at least 1")]
    NoAttempts,
    #[error("webhook secret is set but empty")]
    EmptySecret,
    #[error("webhook client: {0}")]
    Client(#[from] reqwest::Error),
}

/// How one attempt ended, when it did not succeed.
enum Failure {
    Final(WebhookError),
    Retry {
        reason: String,
        retry_after: Option<Duration>,
    },
}

impl Webhooks {
    /// `secret`: HMAC key (from the environment variable the config names); `fetch`: the fetch
    /// config, whose SSRF guard and resolver apply to webhook targets too.
    ///
    /// Fails when `attempts` is 0, when the secret is set but empty (a misconfiguration that
    /// would otherwise silently send unverifiable signatures), or when the client cannot be
    /// built.
    pub fn new(
        secret: Option<String>,
        fetch: &trawl_config::FetchConfig,
        attempts: u32,
        first_backoff: Duration,
    ) -> Result<Webhooks, WebhookSetupError> {
        if attempts == 0 {
            return Err(WebhookSetupError::NoAttempts);
        }
        if secret.as_deref().is_some_and(str::is_empty) {
            return Err(WebhookSetupError::EmptySecret);
        }
        let guard = Guard::new(&fetch.allow_networks);
        let client = trawl_http::builder()
            .user_agent(format!("{}-webhook", fetch.user_agent))
            .dns_resolver(resolver(guard.clone(), &fetch.resolve))
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(ATTEMPT_TIMEOUT)
            .build()?;
        Ok(Webhooks {
            client,
            guard,
            secret: secret.map(String::into_bytes),
            attempts,
            first_backoff,
            timeout: ATTEMPT_TIMEOUT,
        })
    }

    /// Delivers `event` to `url`, retrying as the module documentation describes.
    pub async fn send(&self, url: &str, event: &Event) -> Result<(), WebhookError> {
        let url = Url::parse(url).map_err(|e| WebhookError::Refused(format!("bad URL: {e}")))?;
        self.guard
            .check_url(&url)
            .map_err(|r| WebhookError::Refused(r.to_string()))?;
        // Serialised once: every attempt carries the same body (and so the same id and
        // created_at); only the timestamp and signature change.
        let body = serde_json::to_vec(event)
            .map_err(|e| WebhookError::Refused(format!("event not serialisable: {e}")))?;
        // Logged without query or credentials: webhook URLs often carry tokens there.
        let target = format!(
            "{}://{}{}",
            url.scheme(),
            url.host_str().unwrap_or_default(),
            url.port().map(|p| format!(":{p}")).unwrap_or_default()
        );

        let mut backoff = self.first_backoff;
        let mut attempt = 1;
        loop {
            let (reason, retry_after) = match self.attempt(&url, event, &body).await {
                Ok(()) => {
                    tracing::debug!(%target, event = %event.id, attempt, "webhook delivered");
                    return Ok(());
                }
                Err(Failure::Final(err)) => {
                    tracing::warn!(%target, event = %event.id, attempt, error = %err, "webhook failed");
                    return Err(err);
                }
                Err(Failure::Retry {
                    reason,
                    retry_after,
                }) => (reason, retry_after),
            };
            if attempt >= self.attempts {
                tracing::warn!(%target, event = %event.id, attempt, %reason, "webhook attempts exhausted");
                return Err(WebhookError::Exhausted {
                    attempts: attempt,
                    last: reason,
                });
            }
            let wait = retry_after.unwrap_or(backoff).min(MAX_BACKOFF);
            tracing::info!(%target, event = %event.id, attempt, %reason, wait_ms = wait.as_millis() as u64, "webhook will be retried");
            tokio::time::sleep(wait).await;
            backoff = backoff.saturating_mul(2).min(MAX_BACKOFF);
            attempt += 1;
        }
    }

    async fn attempt(&self, url: &Url, event: &Event, body: &[u8]) -> Result<(), Failure> {
        let timestamp = Utc::now().timestamp();
        let mut request = self
            .client
            .post(url.clone())
            .timeout(self.timeout)
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
            .header(HEADER_EVENT, event.kind.as_str())
            .header(HEADER_EVENT_ID, event.id.as_str())
            .header(HEADER_TIMESTAMP, timestamp.to_string());
        if let Some(secret) = &self.secret {
            request = request.header(HEADER_SIGNATURE, signature(secret, timestamp, body));
        }
        let response = match request.body(body.to_vec()).send().await {
            Ok(response) => response,
            Err(err) => return Err(transport_failure(&err)),
        };
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
            let retry_after = response
                .headers()
                .get(RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map(|secs| Duration::from_secs(secs).min(MAX_BACKOFF));
            return Err(Failure::Retry {
                reason: format!("HTTP {}", status.as_u16()),
                retry_after,
            });
        }
        Err(Failure::Final(WebhookError::Status {
            status: status.as_u16(),
        }))
    }
}

/// A refusal by the guarded resolver is final; any other transport error (timeout, connection
/// refused or reset, DNS failure) is worth another try.
fn transport_failure(err: &reqwest::Error) -> Failure {
    if let Some(refusal) = refusal_in(err) {
        return Failure::Final(WebhookError::Refused(refusal.to_string()));
    }
    let kind = if err.is_timeout() {
        "timed out"
    } else if err.is_connect() {
        "connection failed"
    } else {
        "request failed"
    };
    let mut reason = format!("{kind}: {err}");
    let mut source = std::error::Error::source(err);
    while let Some(e) = source {
        reason.push_str(&format!(": {e}"));
        source = e.source();
    }
    Failure::Retry {
        reason,
        retry_after: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use std::time::Instant;

    use axum::body::Bytes;
    use axum::extract::State;
    use axum::http::{HeaderMap, StatusCode as AxumStatus};
    use axum::response::{IntoResponse, Response};
    use sha2::Digest;
    use trawl_config::FetchConfig;

    /// HMAC-SHA256 written out from RFC 2104, independent of the `hmac` crate.
    fn reference_hmac(key: &[u8], message: &[u8]) -> String {
        let mut block = [0u8; 64];
        if key.len() > 64 {
            block[..32].copy_from_slice(&Sha256::digest(key));
        } else {
            block[..key.len()].copy_from_slice(key);
        }
        let ipad: Vec<u8> = block.iter().map(|b| b ^ 0x36).collect();
        let opad: Vec<u8> = block.iter().map(|b| b ^ 0x5c).collect();
        let inner = Sha256::new()
            .chain_update(&ipad)
            .chain_update(message)
            .finalize();
        let outer = Sha256::new()
            .chain_update(&opad)
            .chain_update(inner)
            .finalize();
        outer.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn reference_hmac_matches_rfc_4231() {
        // RFC 4231, test case 2.
        assert_eq!(
            reference_hmac(b"Jefe", b"what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn signature_matches_a_known_vector_and_an_independent_recomputation() {
        // Computed with Python: hmac.new(b"whsec_test", b'1700000000.{"hello":"world"}', sha256)
        assert_eq!(
            signature(b"whsec_test", 1_700_000_000, br#"{"hello":"world"}"#),
            "v1=f592bbf3951cfc94e560eecfb5d9dd4da6b0fff2e626235f8ab4b54860925d0b"
        );
        let long_key = [0xaau8; 131];
        for (key, ts, body) in [
            (&b"k"[..], 0i64, &b""[..]),
            (
                &b"secret"[..],
                1_712_345_678,
                &br#"{"id":"job.completed:x"}"#[..],
            ),
            (&long_key[..], -5, &b"\x00\xff binary"[..]),
        ] {
            let mut message = format!("{ts}.").into_bytes();
            message.extend_from_slice(body);
            assert_eq!(
                signature(key, ts, body),
                format!("v1={}", reference_hmac(key, &message))
            );
        }
        assert_ne!(
            signature(b"secret", 1, b"body"),
            signature(b"secret", 2, b"body"),
            "the timestamp is signed"
        );
    }

    #[test]
    fn event_ids_are_deterministic() {
        let batch = Uuid::from_u128(1);
        let job = Uuid::from_u128(2);
        let a = Event::job_completed(batch, job, serde_json::json!({"status": "done"}));
        let b = Event::job_completed(batch, job, serde_json::json!({"status": "done"}));
        assert_eq!(a.id, b.id);
        assert_eq!(a.id, format!("job.completed:{job}"));
        assert_eq!(a.kind, "job.completed");
        assert_eq!(a.data["status"], "done");
        assert_eq!(a.data["job_id"], job.to_string());
        assert_eq!(a.data["batch_id"], batch.to_string());

        let c = Event::batch_completed(batch, Value::Null);
        assert_eq!(c.id, format!("batch.completed:{batch}"));
        assert_eq!(c.kind, "batch.completed");
        assert_eq!(c.data, serde_json::json!({"batch_id": batch.to_string()}));

        let d = Event::batch_completed(batch, serde_json::json!([1, 2]));
        assert_eq!(d.data["value"], serde_json::json!([1, 2]));
        let round: Event = serde_json::from_slice(&serde_json::to_vec(&d).unwrap()).unwrap();
        assert_eq!(round, d);
    }

    #[test]
    fn new_rejects_bad_settings_and_debug_hides_the_secret() {
        let fetch = FetchConfig::default();
        assert!(Webhooks::new(None, &fetch, 0, Duration::ZERO).is_err());
        assert!(Webhooks::new(Some(String::new()), &fetch, 3, Duration::ZERO).is_err());
        let hooks = Webhooks::new(Some("hunter2".into()), &fetch, 3, Duration::ZERO).unwrap();
        let shown = format!("{hooks:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("signed: true"), "{shown}");
    }

    // --- a tiny receiver -------------------------------------------------------------------

    #[derive(Clone, Debug)]
    struct Received {
        headers: HeaderMap,
        body: Bytes,
        at: Instant,
    }

    #[derive(Clone, Copy, Default)]
    struct Behaviour {
        /// The first `fail_first` requests are answered with `fail_status`.
        fail_first: usize,
        fail_status: u16,
        retry_after: Option<u64>,
        /// The first `hang_first` requests are answered only after this long.
        hang_first: usize,
        hang: Duration,
    }

    #[derive(Clone)]
    struct Receiver {
        behaviour: Behaviour,
        received: Arc<Mutex<Vec<Received>>>,
    }

    impl Receiver {
        fn received(&self) -> Vec<Received> {
            self.received.lock().unwrap().clone()
        }
    }

    async fn record(State(rx): State<Receiver>, headers: HeaderMap, body: Bytes) -> Response {
        let n = {
            let mut received = rx.received.lock().unwrap();
            received.push(Received {
                headers,
                body,
                at: Instant::now(),
            });
            received.len()
        };
        let b = rx.behaviour;
        if n <= b.hang_first {
            tokio::time::sleep(b.hang).await;
        }
        if n <= b.fail_first {
            let status = AxumStatus::from_u16(b.fail_status).unwrap();
            let mut response = (status, "nope").into_response();
            if let Some(secs) = b.retry_after {
                response
                    .headers_mut()
                    .insert("retry-after", secs.to_string().parse().unwrap());
            }
            return response;
        }
        (AxumStatus::OK, "ok").into_response()
    }

    /// Starts a receiver on 127.0.0.1:0; returns it and its `http://127.0.0.1:port/hook` URL.
    async fn receiver(behaviour: Behaviour) -> (Receiver, String) {
        let rx = Receiver {
            behaviour,
            received: Arc::default(),
        };
        let app = axum::Router::new()
            .route("/hook", axum::routing::post(record))
            .with_state(rx.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        (rx, format!("http://{addr}/hook"))
    }

    fn loopback() -> FetchConfig {
        FetchConfig {
            allow_networks: vec!["127.0.0.0/8".into()],
            ..Default::default()
        }
    }

    fn hooks(secret: Option<&str>, attempts: u32) -> Webhooks {
        Webhooks::new(
            secret.map(String::from),
            &loopback(),
            attempts,
            Duration::from_millis(10),
        )
        .unwrap()
    }

    fn event() -> Event {
        Event::job_completed(
            Uuid::from_u128(0xba7c),
            Uuid::from_u128(0x10b),
            serde_json::json!({"status": "done", "sources": 3}),
        )
    }

    fn header<'a>(r: &'a Received, name: &str) -> Option<&'a str> {
        r.headers.get(name).map(|v| v.to_str().unwrap())
    }

    #[tokio::test]
    async fn sends_signed_event_with_headers() {
        let (rx, url) = receiver(Behaviour::default()).await;
        let ev = event();
        let before = Utc::now().timestamp();
        hooks(Some("s3cret"), 3).send(&url, &ev).await.unwrap();
        let got = rx.received();
        assert_eq!(got.len(), 1);
        let r = &got[0];
        assert_eq!(header(r, "content-type"), Some("application/json"));
        assert_eq!(header(r, "x-trawl-event"), Some("job.completed"));
        assert_eq!(header(r, "x-trawl-event-id"), Some(ev.id.as_str()));
        let ts: i64 = header(r, "x-trawl-timestamp").unwrap().parse().unwrap();
        assert!((before..=Utc::now().timestamp()).contains(&ts));
        // The receiver's side: recompute over the raw body with the shared secret.
        let mut message = format!("{ts}.").into_bytes();
        message.extend_from_slice(&r.body);
        assert_eq!(
            header(r, "x-trawl-signature").unwrap(),
            format!("v1={}", reference_hmac(b"s3cret", &message))
        );
        let body: Event = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(body, ev);
    }

    #[tokio::test]
    async fn no_secret_means_no_signature() {
        let (rx, url) = receiver(Behaviour::default()).await;
        hooks(None, 3).send(&url, &event()).await.unwrap();
        let got = rx.received();
        assert_eq!(got.len(), 1);
        assert!(got[0].headers.get("x-trawl-signature").is_none());
        assert!(got[0].headers.get("x-trawl-timestamp").is_some());
    }

    #[tokio::test]
    async fn retries_503_then_succeeds() {
        let (rx, url) = receiver(Behaviour {
            fail_first: 2,
            fail_status: 503,
            ..Default::default()
        })
        .await;
        hooks(Some("k"), 3).send(&url, &event()).await.unwrap();
        let got = rx.received();
        assert_eq!(got.len(), 3);
        // Same event each time, so the receiver can deduplicate.
        let ids: Vec<_> = got.iter().map(|r| header(r, "x-trawl-event-id")).collect();
        assert!(ids.iter().all(|id| *id == ids[0]));
        assert!(got.iter().all(|r| r.body == got[0].body));
    }

    #[tokio::test]
    async fn retries_429_and_gives_up_after_the_attempts() {
        let (rx, url) = receiver(Behaviour {
            fail_first: usize::MAX,
            fail_status: 429,
            ..Default::default()
        })
        .await;
        let err = hooks(None, 3).send(&url, &event()).await.unwrap_err();
        assert_eq!(
            err,
            WebhookError::Exhausted {
                attempts: 3,
                last: "HTTP 429".into()
            }
        );
        assert_eq!(rx.received().len(), 3);
    }

    #[tokio::test]
    async fn client_errors_are_not_retried() {
        let (rx, url) = receiver(Behaviour {
            fail_first: usize::MAX,
            fail_status: 400,
            ..Default::default()
        })
        .await;
        let err = hooks(None, 5).send(&url, &event()).await.unwrap_err();
        assert_eq!(err, WebhookError::Status { status: 400 });
        assert_eq!(rx.received().len(), 1);
    }

    #[tokio::test]
    async fn redirects_are_not_followed() {
        let (rx, url) = receiver(Behaviour {
            fail_first: usize::MAX,
            fail_status: 307,
            ..Default::default()
        })
        .await;
        let err = hooks(None, 3).send(&url, &event()).await.unwrap_err();
        assert_eq!(err, WebhookError::Status { status: 307 });
        assert_eq!(rx.received().len(), 1);
    }

    #[tokio::test]
    async fn retry_after_is_honoured() {
        let (rx, url) = receiver(Behaviour {
            fail_first: 1,
            fail_status: 503,
            retry_after: Some(1),
            ..Default::default()
        })
        .await;
        // The back-off alone would wait 10 ms.
        hooks(None, 2).send(&url, &event()).await.unwrap();
        let got = rx.received();
        assert_eq!(got.len(), 2);
        let gap = got[1].at - got[0].at;
        assert!(gap >= Duration::from_millis(950), "waited only {gap:?}");
        assert!(gap < Duration::from_secs(5), "waited {gap:?}");
    }

    #[tokio::test]
    async fn timeouts_are_retried() {
        let (rx, url) = receiver(Behaviour {
            hang_first: 1,
            hang: Duration::from_secs(3),
            ..Default::default()
        })
        .await;
        let mut hooks = hooks(None, 2);
        hooks.timeout = Duration::from_millis(300);
        hooks.send(&url, &event()).await.unwrap();
        assert_eq!(rx.received().len(), 2);

        hooks.attempts = 1;
        let (_rx, url) = receiver(Behaviour {
            hang_first: 1,
            hang: Duration::from_secs(3),
            ..Default::default()
        })
        .await;
        match hooks.send(&url, &event()).await.unwrap_err() {
            WebhookError::Exhausted { attempts: 1, last } => {
                assert!(last.starts_with("timed out"), "{last}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn connection_errors_are_retried() {
        // A port that was free a moment ago: nothing listens there.
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let err = hooks(None, 3)
            .send(&format!("http://127.0.0.1:{port}/hook"), &event())
            .await
            .unwrap_err();
        match err {
            WebhookError::Exhausted { attempts: 3, last } => {
                assert!(last.starts_with("connection failed"), "{last}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn private_targets_are_refused_without_a_request() {
        let (rx, url) = receiver(Behaviour::default()).await;
        let port = Url::parse(&url).unwrap().port().unwrap();
        let closed = Webhooks::new(
            Some("k".into()),
            &FetchConfig {
                resolve: [("hook.test".to_string(), format!("127.0.0.1:{port}"))]
                    .into_iter()
                    .collect(),
                ..Default::default()
            },
            3,
            Duration::from_millis(10),
        )
        .unwrap();
        for target in [
            "http://169.254.169.254/latest/meta-data/".to_string(),
            url.clone(),
            // A name that resolves to loopback: refused by the guarded resolver, not retried.
            format!("http://hook.test:{port}/hook"),
            "http://[::1]/hook".into(),
            "http://2130706433/hook".into(),
            "file:///etc/passwd".into(),
            "ftp://example.org/".into(),
            "not a url".into(),
        ] {
            let started = Instant::now();
            let err = closed.send(&target, &event()).await.unwrap_err();
            assert!(matches!(err, WebhookError::Refused(_)), "{target}: {err:?}");
            assert!(
                started.elapsed() < Duration::from_secs(2),
                "{target} retried"
            );
        }
        assert!(rx.received().is_empty(), "a refused URL reached the server");

        // The metadata address stays refused even with loopback allow-listed.
        let err = hooks(None, 3)
            .send("http://169.254.169.254/latest/meta-data/", &event())
            .await
            .unwrap_err();
        assert!(matches!(err, WebhookError::Refused(_)), "{err:?}");
    }

    #[tokio::test]
    async fn resolver_overrides_apply_when_allowed() {
        let (rx, url) = receiver(Behaviour::default()).await;
        let port = Url::parse(&url).unwrap().port().unwrap();
        let mut fetch = loopback();
        fetch
            .resolve
            .insert("hook.test".into(), format!("127.0.0.1:{port}"));
        let hooks = Webhooks::new(None, &fetch, 1, Duration::ZERO).unwrap();
        hooks
            .send(&format!("http://hook.test:{port}/hook"), &event())
            .await
            .unwrap();
        assert_eq!(rx.received().len(), 1);
    }

    #[tokio::test]
    async fn the_same_event_sent_twice_has_the_same_id() {
        let (rx, url) = receiver(Behaviour::default()).await;
        let hooks = hooks(Some("k"), 1);
        let ev = event();
        hooks.send(&url, &ev).await.unwrap();
        hooks.send(&url, &ev).await.unwrap();
        // Rebuilt from the same ids (as after a worker restart): same id, too.
        let rebuilt = event();
        hooks.send(&url, &rebuilt).await.unwrap();
        let got = rx.received();
        assert_eq!(got.len(), 3);
        for r in &got {
            assert_eq!(header(r, "x-trawl-event-id"), Some(ev.id.as_str()));
            let body: Event = serde_json::from_slice(&r.body).unwrap();
            assert_eq!(body.id, ev.id);
        }
    }
}
