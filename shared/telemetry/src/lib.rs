//! Logs and metrics for every trawl binary.
//!
//! - [`init_logs`]: `tracing` to stderr, filtered by `RUST_LOG` (default `info`), JSON when
//!   `TRAWL_LOG_FORMAT=json` (what a log pipeline in a cluster wants).
//! - [`registry`]: the process-wide Prometheus registry. Each crate declares its metrics in its
//!   own `metrics.rs` and registers them here, once.
//! - [`serve`]: `/metrics`, `/healthz`, `/readyz` and `/drain` on the configured address.
//! - [`http`]: serving a router to clients that may be hostile (every server trawl runs): header
//!   and idle timeouts, and connection limits in all and per client.
//!
//! Labels come from fixed sets only (stage, outcome, level, reason …), never a URL or id.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use axum::extract::ConnectInfo;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::Router;
use prometheus_client::registry::Registry;

pub mod http;

pub use prometheus_client;

/// Label set used by every trawl metric: a few `(name, value)` pairs from fixed sets.
pub type Labels = Vec<(&'static str, String)>;

/// A label set from `(name, value)` pairs.
pub fn labels(pairs: &[(&'static str, &str)]) -> Labels {
    pairs.iter().map(|&(k, v)| (k, v.to_owned())).collect()
}

/// Creates `family`'s series for `pairs` at its zero value, so it is scraped before its first
/// event (a rate over a series that does not exist yet is no data, not zero).
pub fn init_series<M, C>(
    family: &prometheus_client::metrics::family::Family<Labels, M, C>,
    pairs: &[(&'static str, &str)],
) where
    C: prometheus_client::metrics::family::MetricConstructor<M>,
{
    drop(family.get_or_create(&labels(pairs)));
}

static REGISTRY: OnceLock<Mutex<Registry>> = OnceLock::new();

/// The process-wide registry.
pub fn registry() -> &'static Mutex<Registry> {
    REGISTRY.get_or_init(|| Mutex::new(Registry::with_prefix("trawl")))
}

/// Registers `metric` under `trawl_<name>`; call once per metric, from a crate's `metrics.rs`.
pub fn register<M>(name: &str, help: &str, metric: M) -> M
where
    M: prometheus_client::registry::Metric + Clone,
{
    registry()
        .lock()
        .expect("registry lock")
        .register(name, help, metric.clone());
    metric
}

/// The registry in the OpenMetrics text format.
pub fn render() -> String {
    let mut out = String::new();
    let registry = registry().lock().expect("registry lock");
    prometheus_client::encoding::text::encode(&mut out, &registry).expect("writing to a String");
    out
}

const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
const CLASSIC: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The registry in the format the scraper asked for: OpenMetrics when its `Accept` names it
/// (Prometheus does), else the classic text format that `curl`, `promtool check metrics` and
/// older scrapers read.
pub(crate) fn render_for(accept: &str) -> (&'static str, String) {
    if accept.contains("application/openmetrics-text") {
        (OPENMETRICS, render())
    } else {
        (CLASSIC, to_classic(&render()))
    }
}

/// OpenMetrics text as the classic Prometheus text format: a counter's family is named with
/// its `_total` suffix there, and `# UNIT` and `# EOF` do not exist.
fn to_classic(openmetrics: &str) -> String {
    let counters: std::collections::HashSet<&str> = openmetrics
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.strip_suffix(" counter"))
        .collect();
    let mut out = String::with_capacity(openmetrics.len());
    for line in openmetrics.lines() {
        if line.starts_with("# UNIT ") || line == "# EOF" {
            continue;
        }
        let meta = ["# HELP ", "# TYPE "]
            .into_iter()
            .find_map(|p| line.strip_prefix(p).map(|rest| (p, rest)));
        match meta {
            Some((prefix, rest)) => {
                let (name, tail) = rest.split_once(' ').unwrap_or((rest, ""));
                let name = if counters.contains(name) {
                    format!("{name}_total")
                } else {
                    name.to_owned()
                };
                let tail = if tail == "unknown" { "untyped" } else { tail };
                out.push_str(format!("{prefix}{name} {tail}").trim_end());
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

/// The secret values no log line may show, whichever library wrote the line: every value of
/// an environment variable whose name says it is one ([`looks_secret`]), and what the binary
/// adds with [`add_secrets`] (passwords inside URLs, variables that config names).
static SECRETS: OnceLock<std::sync::RwLock<Vec<String>>> = OnceLock::new();

/// Shorter values would scrub ordinary words and numbers out of every line.
const MIN_SECRET_CHARS: usize = 6;

fn secrets() -> &'static std::sync::RwLock<Vec<String>> {
    SECRETS.get_or_init(|| {
        let found = std::env::vars()
            .filter(|(name, _)| looks_secret(name))
            .map(|(_, value)| value);
        std::sync::RwLock::new(secret_list(found))
    })
}

fn secret_list(values: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut list: Vec<String> = values
        .into_iter()
        .filter(|v| v.chars().count() >= MIN_SECRET_CHARS)
        .collect();
    // Longest first, so a secret that holds another is scrubbed whole; equal values next to
    // each other, so each is kept once.
    list.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    list.dedup();
    list
}

/// Whether an environment variable's name says its value is a secret (`OPENAI_API_KEY`,
/// `AWS_SECRET_ACCESS_KEY`, `TRAWL_TOKEN`, `REDIS_PASSWORD` …).
pub(crate) fn looks_secret(name: &str) -> bool {
    let name = name.to_ascii_uppercase();
    ["KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL"]
        .iter()
        .any(|word| name.split('_').any(|part| part.starts_with(word)))
        || name.ends_with("ACCESS_KEY_ID")
}

/// Adds values to scrub from every log line and every text passed to [`scrub`].
pub(crate) fn add_secrets(values: impl IntoIterator<Item = String>) {
    let mut list = secrets().write().expect("secrets lock");
    let all = std::mem::take(&mut *list).into_iter().chain(values);
    *list = secret_list(all);
}

/// `text` with every known secret value replaced by `***`.
pub fn scrub(text: &str) -> std::borrow::Cow<'_, str> {
    let list = secrets().read().expect("secrets lock");
    if !list.iter().any(|s| text.contains(s.as_str())) {
        return text.into();
    }
    let mut clean = text.to_owned();
    for secret in list.iter() {
        clean = clean.replace(secret.as_str(), "***");
    }
    clean.into()
}

/// Standard error through [`scrub`]: the fmt layer writes each event in one call, so a secret
/// never straddles two writes.
struct ScrubbedStderr;

impl std::io::Write for ScrubbedStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        std::io::stderr().write_all(scrub(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// Starts logging to stderr, with every known secret and `secrets` (what config names: see
/// [`add_secrets`]) scrubbed from every line. Safe to call more than once (tests).
pub fn init_logs(secrets: Vec<String>) {
    use tracing_subscriber::EnvFilter;
    add_secrets(secrets);
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let json = std::env::var("TRAWL_LOG_FORMAT").is_ok_and(|v| v == "json");
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(|| ScrubbedStderr);
    let _ = if json {
        builder.json().try_init()
    } else {
        builder.try_init()
    };
}

/// Readiness as `/readyz` reports it: set once the worker has connected and consumes. While
/// not ready, `/readyz` says why when a reason was given (a store it cannot reach).
#[derive(Clone, Default)]
pub struct Readiness(Arc<AtomicBool>, Arc<std::sync::Mutex<Option<String>>>);

impl Readiness {
    pub fn set(&self, ready: bool) {
        if ready {
            *self.1.lock().expect("readiness lock") = None;
        }
        self.0.store(ready, Ordering::SeqCst);
    }

    /// Not ready, because of `reason` (which must hold no secret).
    pub fn unready(&self, reason: impl Into<String>) {
        *self.1.lock().expect("readiness lock") = Some(reason.into());
        self.0.store(false, Ordering::SeqCst);
    }

    pub fn get(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    fn reason(&self) -> Option<String> {
        self.1.lock().expect("readiness lock").clone()
    }
}

/// A request to stop taking work, and word that the work in hand is done. `/drain` (the
/// Kubernetes preStop hook) requests it and answers once the worker reports it finished, so a
/// pod has settled its messages before it is sent SIGTERM.
#[derive(Clone)]
pub struct Drain {
    requested: tokio::sync::watch::Sender<bool>,
    finished: tokio::sync::watch::Sender<bool>,
}

impl Default for Drain {
    fn default() -> Self {
        Drain {
            requested: tokio::sync::watch::Sender::new(false),
            finished: tokio::sync::watch::Sender::new(false),
        }
    }
}

impl Drain {
    pub fn request(&self) {
        self.requested.send_replace(true);
    }

    /// Resolves once a drain has been requested.
    pub async fn requested(&self) {
        let _ = self.requested.subscribe().wait_for(|&r| r).await;
    }

    /// Called by the worker when it has stopped and settled everything it held.
    pub fn finish(&self) {
        self.finished.send_replace(true);
    }

    pub async fn finished(&self) {
        let _ = self.finished.subscribe().wait_for(|&f| f).await;
    }
}

/// `/metrics`, `/healthz`, `/readyz` and `/drain`, for [`serve`].
pub fn routes(readiness: Readiness, drain: Drain) -> Router {
    probes(readiness.clone()).route(
        "/drain",
        post(
            move |ConnectInfo(peer): ConnectInfo<SocketAddr>, headers: HeaderMap| async move {
                if let Err(why) = drain_allowed(peer.ip(), &headers) {
                    return (StatusCode::FORBIDDEN, why).into_response();
                }
                readiness.set(false);
                drain.request();
                drain.finished().await;
                "drained".into_response()
            },
        ),
    )
}

/// `/drain` stops the process, so only someone on the machine (in Kubernetes, the pod: the
/// preStop hook runs `trawl drain`) may ask for it: a POST from a loopback address. A browser
/// adds `Origin` to every POST, so a page an operator opens cannot send one from its
/// machine either.
fn drain_allowed(peer: std::net::IpAddr, headers: &HeaderMap) -> Result<(), &'static str> {
    if !peer.to_canonical().is_loopback() {
        return Err("/drain is answered only to this machine: run `trawl drain` on it (in Kubernetes the preStop hook does)\n");
    }
    if headers.contains_key(header::ORIGIN) || headers.contains_key("sec-fetch-site") {
        return Err("/drain is not answered to a browser: run `trawl drain`\n");
    }
    Ok(())
}

/// `/metrics`, `/healthz` and `/readyz` without `/drain`, for servers (the API) that expose
/// them beside their own routes: whoever reaches those routes must not be able to stop the
/// process.
pub fn probes(readiness: Readiness) -> Router {
    Router::new()
        .route(
            "/metrics",
            get(|headers: axum::http::HeaderMap| async move {
                let accept = headers
                    .get(axum::http::header::ACCEPT)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default();
                let (content_type, body) = render_for(accept);
                ([(axum::http::header::CONTENT_TYPE, content_type)], body)
            }),
        )
        .route("/healthz", get(|| async { "ok" }))
        .route(
            "/readyz",
            get(move || async move {
                if readiness.get() {
                    (StatusCode::OK, "ready".to_owned())
                } else {
                    let text = match readiness.reason() {
                        Some(reason) => format!("not ready: {reason}"),
                        None => "not ready".to_owned(),
                    };
                    (StatusCode::SERVICE_UNAVAILABLE, text)
                }
            }),
        )
}

#[derive(Debug, thiserror::Error)]
#[error("cannot listen for metrics on {addr}: {source}")]
pub struct ServeError {
    addr: String,
    source: std::io::Error,
}

/// Serves `/metrics`, `/healthz`, `/readyz` and `/drain` until `shutdown` resolves; returns the
/// bound address (useful with port 0) once listening, and the server's task, which ends after
/// `shutdown` once the requests in progress (a `/drain` waiting for its worker) are answered.
pub async fn serve(
    addr: &str,
    readiness: Readiness,
    drain: Drain,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(SocketAddr, tokio::task::JoinHandle<()>), ServeError> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError {
            addr: addr.to_owned(),
            source,
        })?;
    let bound = listener.local_addr().map_err(|source| ServeError {
        addr: addr.to_owned(),
        source,
    })?;
    let app = routes(readiness, drain);
    let task = tokio::spawn(http::serve(
        listener,
        app,
        http::ConnLimits::default(),
        "metrics",
        shutdown,
    ));
    Ok((bound, task))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_known_by_their_names_and_scrubbed_longest_first() {
        for name in [
            "OPENAI_API_KEY",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_ACCESS_KEY_ID",
            "TRAWL_TOKEN",
            "REDIS_PASSWORD",
            "TRAWL_WEBHOOK_SECRET",
            "AZURE_STORAGE_ACCOUNT_KEY",
        ] {
            assert!(looks_secret(name), "{name}");
        }
        for name in ["PATH", "HOME", "TRAWL__BROKER__URL", "RUST_LOG", "MONKEY"] {
            assert!(!looks_secret(name), "{name}");
        }
        add_secrets([
            "hunter2-long".to_owned(),
            "hunter2-long-er".to_owned(),
            "abc".to_owned(),
        ]);
        assert_eq!(
            scrub("a hunter2-long-er and a hunter2-long, abc"),
            "a *** and a ***, abc"
        );
        // Added again among others of its length, a value is still listed once.
        add_secrets([
            "zz-other-123".to_owned(),
            "hunter2-long".to_owned(),
            "aa-other-123".to_owned(),
        ]);
        let list = secrets().read().unwrap().clone();
        assert_eq!(
            list.iter().filter(|s| *s == "hunter2-long").count(),
            1,
            "{list:?}"
        );
    }
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn request(addr: SocketAddr, method: &str, path: &str, headers: &str) -> String {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n{headers}Connection: close\r\n\r\n"
        );
        s.write_all(head.as_bytes()).await.unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).await.unwrap();
        out
    }

    async fn get(addr: SocketAddr, path: &str) -> String {
        request(addr, "GET", path, "").await
    }

    #[test]
    fn drain_is_allowed_from_loopback_and_never_from_a_browser() {
        let none = HeaderMap::new();
        for peer in ["127.0.0.1", "127.3.2.1", "::1", "::ffff:127.0.0.1"] {
            assert!(
                drain_allowed(peer.parse().unwrap(), &none).is_ok(),
                "{peer}"
            );
        }
        for peer in [
            "10.0.0.7",
            "192.168.1.2",
            "::ffff:10.0.0.7",
            "fe80::1",
            "0.0.0.0",
        ] {
            assert!(
                drain_allowed(peer.parse().unwrap(), &none).is_err(),
                "{peer}"
            );
        }
        let mut browser = HeaderMap::new();
        browser.insert(header::ORIGIN, "http://evil.example".parse().unwrap());
        assert!(drain_allowed("127.0.0.1".parse().unwrap(), &browser).is_err());
        let mut fetch = HeaderMap::new();
        fetch.insert("sec-fetch-site", "cross-site".parse().unwrap());
        assert!(drain_allowed("127.0.0.1".parse().unwrap(), &fetch).is_err());
    }

    #[test]
    fn openmetrics_is_offered_to_who_asks_for_it() {
        let (content_type, body) = render_for("application/openmetrics-text;version=1.0.0");
        assert!(content_type.starts_with("application/openmetrics-text"));
        assert!(body.ends_with("# EOF\n"));
    }

    #[test]
    fn classic_format_names_counters_with_their_suffix() {
        let om = "# HELP trawl_x Things.\n# TYPE trawl_x counter\n# UNIT trawl_x things\n\
                  trawl_x_total{a=\"b\"} 3\n# HELP trawl_g G.\n# TYPE trawl_g gauge\ntrawl_g 1\n# EOF\n";
        assert_eq!(
            to_classic(om),
            "# HELP trawl_x_total Things.\n# TYPE trawl_x_total counter\n\
             trawl_x_total{a=\"b\"} 3\n# HELP trawl_g G.\n# TYPE trawl_g gauge\ntrawl_g 1\n"
        );
    }

    #[tokio::test]
    async fn serves_metrics_health_and_readiness() {
        let counter: prometheus_client::metrics::counter::Counter =
            register("test_events", "Events seen by the test", Default::default());
        counter.inc();
        let readiness = Readiness::default();
        let drain = Drain::default();
        let (addr, _) = serve(
            "127.0.0.1:0",
            readiness.clone(),
            drain.clone(),
            std::future::pending(),
        )
        .await
        .unwrap();
        assert!(get(addr, "/healthz").await.starts_with("HTTP/1.1 200"));
        assert!(get(addr, "/readyz").await.starts_with("HTTP/1.1 503"));
        readiness.set(true);
        assert!(get(addr, "/readyz").await.starts_with("HTTP/1.1 200"));
        let metrics = get(addr, "/metrics").await;
        assert!(metrics.contains("trawl_test_events_total 1"), "{metrics}");
        assert!(
            metrics.contains("# TYPE trawl_test_events_total counter")
                && !metrics.contains("# EOF"),
            "not the classic format: {metrics}"
        );

        // A GET (what a link, an image or an old preStop hook sends) and a browser's POST change
        // nothing.
        assert!(get(addr, "/drain").await.starts_with("HTTP/1.1 405"));
        let from_page = request(addr, "POST", "/drain", "Origin: http://evil.example\r\n").await;
        assert!(from_page.starts_with("HTTP/1.1 403"), "{from_page}");
        assert!(readiness.get());
        // A POST from this machine asks the worker to stop, reads not-ready, and answers once
        // the worker is done.
        let answer = tokio::spawn(request(addr, "POST", "/drain", ""));
        tokio::time::timeout(std::time::Duration::from_secs(5), drain.requested())
            .await
            .expect("drain requested");
        assert!(!readiness.get());
        assert!(!answer.is_finished());
        drain.finish();
        assert!(answer.await.unwrap().ends_with("drained"));
    }
}
