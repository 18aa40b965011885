//! One axum server for the whole fake web. Search and LLM endpoints answer on any Host
//! (tests point `searxng_url`/`base_url` at `127.0.0.1:PORT`); everything else is routed
//! by the Host header so `*.test` names resolved to this address behave like real sites.

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Query, Request, State};
use axum::http::{header, HeaderMap, StatusCode, Uri};
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::json;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use super::corpus::Corpus;
use super::render::{escape, simple_page};
use super::search::{results_html, searxng_json, searxng_response, SearchIndex};
use super::{bench, docs, files, fleet, guarded, hostile, llm, soak};

/// Every request's host, path and arrival time, shared with tests; counts are taken from it.
#[derive(Debug, Default)]
pub struct Stats {
    /// (host, path, arrival) in arrival order.
    log: Mutex<Vec<(String, String, Instant)>>,
    /// LLM requests refused with a 429 by the per-minute limits.
    llm_rate_limited: std::sync::atomic::AtomicU64,
    /// (arrival, counted tokens) of every LLM request answered, in arrival order.
    llm_answered: Mutex<Vec<(Instant, u64)>>,
    /// Pages changed since the corpus made them ("host path" → revision): each revision adds
    /// a paragraph and changes the page's ETag.
    revisions: Mutex<std::collections::HashMap<String, u32>>,
    /// Conditional requests answered 304 Not Modified.
    not_modified: std::sync::atomic::AtomicU64,
}

impl Stats {
    fn entries(&self) -> std::sync::MutexGuard<'_, Vec<(String, String, Instant)>> {
        // A panic elsewhere must not hide the log from the test that wants it.
        self.log.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Changes the corpus page at `host` `path`: its next response carries a new paragraph
    /// (the sentence [`revised_sentence`] gives) and a new ETag.
    pub fn revise(&self, host: &str, path: &str) -> u32 {
        let mut revisions = self.revisions.lock().unwrap_or_else(|e| e.into_inner());
        let revision = revisions.entry(format!("{host} {path}")).or_default();
        *revision += 1;
        *revision
    }

    fn revision(&self, host: &str, path: &str) -> u32 {
        let revisions = self.revisions.lock().unwrap_or_else(|e| e.into_inner());
        revisions
            .get(&format!("{host} {path}"))
            .copied()
            .unwrap_or(0)
    }

    /// Conditional requests answered 304 Not Modified.
    pub fn not_modified(&self) -> u64 {
        self.not_modified.load(std::sync::atomic::Ordering::Relaxed)
    }

    pub fn record(&self, host: &str, path: &str) {
        self.record_at(host, path, Instant::now());
    }

    fn record_at(&self, host: &str, path: &str, at: Instant) {
        self.entries()
            .push((host.to_string(), path.to_string(), at));
    }

    /// LLM requests refused with a 429 by the per-minute limits.
    pub fn llm_rate_limited(&self) -> u64 {
        self.llm_rate_limited
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The most tokens of LLM requests answered within any minute, counted as an
    /// organisation's limit counts them ([`llm::org_limits::counted_tokens`]), and the largest
    /// single request: what `Options::llm_tokens_per_minute` must have held to within one call.
    pub fn llm_peak_tokens_per_minute(&self) -> (u64, u64) {
        let log = self.llm_answered.lock().unwrap_or_else(|e| e.into_inner());
        llm::org_limits::peak(&log, Duration::from_secs(60))
    }

    /// Requests to any path on `host`.
    pub fn hits(&self, host: &str) -> u64 {
        self.count(|h, _| h == host)
    }

    pub fn path_hits(&self, host: &str, path: &str) -> u64 {
        self.count(|h, p| h == host && p == path)
    }

    /// Requests whose (host, path) `matches`.
    pub fn count(&self, matches: impl Fn(&str, &str) -> bool) -> u64 {
        (self.entries().iter())
            .filter(|(h, p, _)| matches(h, p))
            .count() as u64
    }

    /// Every (host, path, count), sorted.
    pub fn snapshot(&self) -> Vec<(String, String, u64)> {
        let mut counts: BTreeMap<(String, String), u64> = BTreeMap::new();
        for (h, p, _) in self.entries().iter() {
            *counts.entry((h.clone(), p.clone())).or_insert(0) += 1;
        }
        counts.into_iter().map(|((h, p), n)| (h, p, n)).collect()
    }

    /// `host`'s requests as (path, arrival), in arrival order.
    pub fn log(&self, host: &str) -> Vec<(String, Instant)> {
        self.entries()
            .iter()
            .filter(|(h, _, _)| h == host)
            .map(|(_, p, at)| (p.clone(), *at))
            .collect()
    }

    /// Smallest gap between consecutive requests to `host`; `None` below two requests.
    /// With `skip_robots`, `/robots.txt` requests are left out before pairing, since a
    /// crawler may fetch robots.txt right before its first page.
    pub fn min_gap(&self, host: &str, skip_robots: bool) -> Option<Duration> {
        let times: Vec<Instant> = self
            .log(host)
            .into_iter()
            .filter(|(p, _)| !(skip_robots && p == "/robots.txt"))
            .map(|(_, at)| at)
            .collect();
        times
            .windows(2)
            .map(|w| w[1].saturating_duration_since(w[0]))
            .min()
    }

    pub fn reset(&self) {
        self.entries().clear();
        (self.llm_answered.lock().unwrap_or_else(|e| e.into_inner())).clear();
        self.llm_rate_limited
            .store(0, std::sync::atomic::Ordering::Relaxed);
    }
}

pub(crate) struct AppState {
    pub(crate) corpus: Arc<Corpus>,
    pub(crate) index: SearchIndex,
    pub(crate) stats: Arc<Stats>,
    pub(crate) options: Options,
    /// The LLM requests answered in the last minute, for the per-minute limits.
    llm_window: Mutex<llm::org_limits::Window>,
    /// When the server started, for `llm_rate_limited_for`.
    started: Instant,
}

/// How a simweb behaves beyond its corpus; the default is what every test gets.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Added to every LLM request (chat, messages, embeddings) before it is answered, so a
    /// benchmark sees a model's latency without a model's cost; zero by default.
    pub llm_latency: Duration,
    /// LLM requests (chat, messages, embeddings) answered in any 60 s; past it a request gets
    /// a 429 with `Retry-After` (the seconds until the oldest leaves the window) and the
    /// provider's rate-limit error body, as an organisation's RPM limit answers. `None`: no
    /// limit.
    pub llm_requests_per_minute: Option<u32>,
    /// Tokens of LLM requests answered in any 60 s, each counted before it is answered as
    /// OpenAI's limiter counts it (prompt characters / 4 + the answer allowance); past it a
    /// 429 as an organisation's TPM limit answers. `None`: no limit.
    pub llm_tokens_per_minute: Option<u64>,
    /// For this long after it starts, every LLM request gets the 429 of an organisation over
    /// its limit, with `Retry-After: 1`: a provider that refuses for minutes, shortened.
    pub llm_rate_limited_for: Duration,
    /// A model's speed: each LLM answer arrives after its output tokens (as its `usage`
    /// counts them) at this many a second, as a small local model on a laptop's CPU answers
    /// (llama.cpp or Ollama: 2–10 tokens a second). `None`: at once.
    pub llm_tokens_per_second: Option<f64>,
}

/// A running simweb; the server stops when this is dropped.
#[derive(Debug)]
pub struct Simweb {
    addr: SocketAddr,
    stats: Arc<Stats>,
    handle: JoinHandle<()>,
}

impl Simweb {
    /// Binds `addr` (port 0 picks a free port) and starts serving.
    pub async fn start(corpus: Arc<Corpus>, addr: SocketAddr) -> std::io::Result<Simweb> {
        Simweb::start_with(corpus, addr, Options::default()).await
    }

    /// [`Simweb::start`] with non-default [`Options`].
    pub async fn start_with(
        corpus: Arc<Corpus>,
        addr: SocketAddr,
        options: Options,
    ) -> std::io::Result<Simweb> {
        let (addr, stats, handle) = start(corpus, addr, options).await?;
        Ok(Simweb {
            addr,
            stats,
            handle,
        })
    }

    /// A simweb on a free loopback port, for this crate's unit tests.
    #[cfg(test)]
    pub(crate) async fn for_tests() -> Simweb {
        let addr = "127.0.0.1:0".parse().expect("a socket address");
        Simweb::start(Arc::new(Corpus::generate()), addr)
            .await
            .expect("simweb starts")
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`, for `searxng_url` and the LLM `base_url` (add `/v1`).
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn stats(&self) -> Arc<Stats> {
        self.stats.clone()
    }

    pub fn hits(&self, host: &str) -> u64 {
        self.stats.hits(host)
    }

    pub fn path_hits(&self, host: &str, path: &str) -> u64 {
        self.stats.path_hits(host, path)
    }
}

impl Drop for Simweb {
    fn drop(&mut self) {
        self.handle.abort();
    }
}

/// Binds `addr` and serves until the task is aborted; returns the bound address.
pub async fn serve(
    corpus: Arc<Corpus>,
    addr: SocketAddr,
) -> std::io::Result<(SocketAddr, JoinHandle<()>)> {
    let (addr, _stats, handle) = start(corpus, addr, Options::default()).await?;
    Ok((addr, handle))
}

async fn start(
    corpus: Arc<Corpus>,
    addr: SocketAddr,
    options: Options,
) -> std::io::Result<(SocketAddr, Arc<Stats>, JoinHandle<()>)> {
    let listener = TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let stats = Arc::new(Stats::default());
    let state = Arc::new(AppState {
        index: SearchIndex::build(&corpus),
        corpus,
        stats: stats.clone(),
        options,
        llm_window: Mutex::default(),
        started: Instant::now(),
    });
    let app = router(state);
    let handle = tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!(error = %e, "simweb server stopped");
        }
    });
    Ok((bound, stats, handle))
}

fn router(state: Arc<AppState>) -> Router {
    let llm = Router::new()
        .route("/v1/chat/completions", post(llm::chat_completions))
        .route("/v1/messages", post(llm::messages))
        .route("/v1/embeddings", post(llm::embeddings))
        .route("/v1/models", get(llm::models))
        .route(
            "/openai/deployments/{deployment}/chat/completions",
            post(llm::azure::chat_completions),
        )
        .route(
            "/openai/deployments/{deployment}/embeddings",
            post(llm::azure::embeddings),
        )
        .route(
            "/v1beta/openai/chat/completions",
            post(llm::gemini::chat_completions),
        )
        .route("/v1beta/openai/embeddings", post(llm::gemini::embeddings))
        .route(
            "/local/v1/chat/completions",
            post(llm::openai::local_chat_completions),
        )
        .layer(middleware::from_fn_with_state(state.clone(), llm_gate));
    Router::new()
        .route("/search", get(search))
        .merge(llm)
        .route("/healthz", get(|| async { "ok" }))
        .merge(super::providers::routes())
        .fallback(site)
        .layer(middleware::from_fn_with_state(state.clone(), count))
        .with_state(state)
}

/// Host from the Host header (or an absolute-form URI), lowercased, without port.
fn host_of(headers: &HeaderMap, uri: &Uri) -> String {
    let raw = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .or_else(|| uri.authority().map(|a| a.to_string()))
        .unwrap_or_default();
    let without_port = match raw.rsplit_once(':') {
        Some((h, port)) if !port.is_empty() && port.chars().all(|c| c.is_ascii_digit()) => h,
        _ => raw.as_str(),
    };
    without_port.trim_end_matches('.').to_ascii_lowercase()
}

/// What every LLM route shares: the per-minute limits, then the configured latency.
async fn llm_gate(State(state): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    let anthropic = req.uri().path().ends_with("/messages");
    if state.started.elapsed() < state.options.llm_rate_limited_for {
        return rate_limited(&state, anthropic, None);
    }
    // The body is read here to count its tokens, then handed on whole.
    let (parts, body) = req.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 64 << 20).await else {
        return StatusCode::PAYLOAD_TOO_LARGE.into_response();
    };
    let tokens = serde_json::from_slice(&bytes).map_or(0, |v| llm::org_limits::counted_tokens(&v));
    let now = Instant::now();
    let admitted = state
        .llm_window
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .admit(
            now,
            tokens,
            state.options.llm_requests_per_minute,
            state.options.llm_tokens_per_minute,
        );
    if let Err(refusal) = admitted {
        return rate_limited(&state, anthropic, Some(refusal));
    }
    (state
        .stats
        .llm_answered
        .lock()
        .unwrap_or_else(|e| e.into_inner()))
    .push((now, tokens));
    if !state.options.llm_latency.is_zero() {
        tokio::time::sleep(state.options.llm_latency).await;
    }
    let response = (next.run(Request::from_parts(parts, axum::body::Body::from(bytes)))).await;
    match state.options.llm_tokens_per_second {
        Some(speed) if speed > 0.0 => at_speed(response, speed).await,
        _ => response,
    }
}

/// `response` once a model writing `speed` tokens a second would have written its answer.
async fn at_speed(response: Response, speed: f64) -> Response {
    let (parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 64 << 20).await else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let usage = serde_json::from_slice::<serde_json::Value>(&bytes).ok();
    let tokens = (usage.as_ref())
        .and_then(|v| {
            (v["usage"]["completion_tokens"].as_u64()).or(v["usage"]["output_tokens"].as_u64())
        })
        .unwrap_or(0);
    tokio::time::sleep(Duration::from_secs_f64(tokens as f64 / speed)).await;
    Response::from_parts(parts, axum::body::Body::from(bytes))
}

/// The provider's 429 for a request over one of the organisation's per-minute limits (`None`:
/// over a limit simweb does not name, to be tried again in a second).
fn rate_limited(
    state: &AppState,
    anthropic: bool,
    refusal: Option<llm::org_limits::Refusal>,
) -> Response {
    use llm::org_limits::Kind;
    state
        .stats
        .llm_rate_limited
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let retry_after = refusal.map_or(1, |r| r.retry_after);
    let (what, limit) = match refusal.map(|r| r.kind) {
        Some(Kind::Tokens) => (
            "tokens",
            state.options.llm_tokens_per_minute.map(|l| l.to_string()),
        ),
        _ => (
            "requests",
            state.options.llm_requests_per_minute.map(|l| l.to_string()),
        ),
    };
    let mut response = if anthropic {
        llm::anthropic::error(
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limit_error",
            &format!(
                "This request would exceed your organization's rate limit of {what} per minute."
            ),
        )
    } else {
        let short = if what == "tokens" { "TPM" } else { "RPM" };
        let limit = limit.unwrap_or_else(|| "-".to_owned());
        llm::openai::error(
            StatusCode::TOO_MANY_REQUESTS,
            &format!("Rate limit reached for {what} per min ({short}): Limit {limit}. Please try again in {retry_after}s."),
            what,
            None,
            Some("rate_limit_exceeded"),
        )
    };
    let value = retry_after.to_string().parse().expect("a header value");
    response.headers_mut().insert(header::RETRY_AFTER, value);
    response
}

async fn count(State(state): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    let host = host_of(req.headers(), req.uri());
    state.stats.record(&host, req.uri().path());
    next.run(req).await
}

async fn search(
    State(state): State<Arc<AppState>>,
    Query(params): Query<HashMap<String, String>>,
) -> Response {
    let Some(q) = params.get("q").map(|s| s.trim()).filter(|s| !s.is_empty()) else {
        return (StatusCode::BAD_REQUEST, Json(json!({"error": "missing q"}))).into_response();
    };
    let pageno = params
        .get("pageno")
        .and_then(|p| p.parse::<usize>().ok())
        .unwrap_or(1)
        .max(1);
    if let Some(failure) = super::providers::hook(q).await {
        return failure;
    }
    if params.get("format").map(String::as_str) == Some("json") {
        if q.contains("simweb:empty") {
            return Json(searxng_response(q, 0, Vec::new())).into_response();
        }
        if let Some(body) = fleet::searxng_json(q, pageno) {
            return Json(body).into_response();
        }
        if let Some(body) = hostile::searxng_json(q, pageno) {
            return Json(body).into_response();
        }
        if let Some(body) = soak::searxng_json(q, pageno) {
            return Json(body).into_response();
        }
        Json(searxng_json(&state.corpus, &state.index, q, pageno)).into_response()
    } else {
        Html(results_html(&state.corpus, &state.index, q, pageno)).into_response()
    }
}

fn not_found(what: &str) -> Response {
    let body = simple_page(
        "404 Not Found",
        &format!("<p>{} was not found on this server.</p>", escape(what)),
    );
    (StatusCode::NOT_FOUND, Html(body)).into_response()
}

async fn site(State(state): State<Arc<AppState>>, headers: HeaderMap, uri: Uri) -> Response {
    let host = host_of(&headers, &uri);
    let path = uri.path();
    if host == hostile::HOST {
        return hostile::handle(path).unwrap_or_else(|| not_found(path));
    }
    if host == docs::HOST {
        return docs::handle(path).unwrap_or_else(|| not_found(path));
    }
    if host == files::HOST {
        return files::handle(path).unwrap_or_else(|| not_found(path));
    }
    if let Some(response) = guarded::handle(&host, &uri, &headers).await {
        return response;
    }
    if let Some(response) = bench::handle(&host, path) {
        return response;
    }
    if let Some(response) = soak::handle(&host, path) {
        return response;
    }
    let Some(info) = state.corpus.host(&host) else {
        return not_found(&host);
    };
    if path == "/robots.txt" {
        let (status, body) = info.robots.response();
        let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
        return (
            status,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            body,
        )
            .into_response();
    }
    if path == "/" {
        let links: String = state
            .corpus
            .host_pages(&host)
            .map(|p| {
                format!(
                    "<li><a href=\"{}\">{}</a></li>\n",
                    escape(&p.path),
                    escape(&p.title)
                )
            })
            .collect();
        let title = super::render::site_name(&host);
        return Html(simple_page(&title, &format!("<ul>\n{links}</ul>"))).into_response();
    }
    match state.corpus.page_at(&host, path) {
        Some(page) => corpus_page(&state.stats, &headers, &host, path, &page.html),
        None => not_found(path),
    }
}

/// The paragraph revision `n` of a page adds.
pub fn revised_sentence(n: u32) -> String {
    format!("Revision {n} of this page corrects an earlier account of the events.")
}

/// A corpus page with its validators, as a web server behind a CDN answers: an `ETag` that
/// changes with the page and a fixed `Last-Modified`, and 304 to an `If-None-Match` that
/// names the current ETag.
fn corpus_page(stats: &Stats, headers: &HeaderMap, host: &str, path: &str, html: &str) -> Response {
    let revision = stats.revision(host, path);
    let mut hasher = std::hash::DefaultHasher::new();
    std::hash::Hash::hash(html, &mut hasher);
    let etag = format!("\"{:016x}-{revision}\"", std::hash::Hasher::finish(&hasher));
    let validators = [
        (header::ETAG, etag.clone()),
        (
            header::LAST_MODIFIED,
            "Mon, 02 Nov 2026 08:00:00 GMT".to_owned(),
        ),
    ];
    let asked = (headers.get(header::IF_NONE_MATCH)).and_then(|v| v.to_str().ok());
    if asked == Some(etag.as_str()) {
        stats
            .not_modified
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        return (StatusCode::NOT_MODIFIED, validators).into_response();
    }
    let html = match revision {
        0 => html.to_owned(),
        n => {
            // Inside the main content, wherever this layout keeps it.
            let end = ["</article>", "</main>", "</body>"]
                .into_iter()
                .find(|tag| html.contains(tag))
                .unwrap_or("</html>");
            html.replacen(end, &format!("<p>{}</p>{end}", revised_sentence(n)), 1)
        }
    };
    (validators, Html(html)).into_response()
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    use super::*;

    /// Past the limit, both APIs answer as their providers do: 429, Retry-After, and the
    /// provider's rate-limit error.
    #[tokio::test]
    async fn llm_requests_past_the_limit_get_the_providers_429() {
        let web = Simweb::start_with(
            Arc::new(Corpus::generate()),
            "127.0.0.1:0".parse().expect("addr"),
            Options {
                llm_requests_per_minute: Some(1),
                ..Options::default()
            },
        )
        .await
        .expect("start");
        let http = reqwest::Client::new();
        let chat = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
        let post = |path: &str, body: &serde_json::Value| {
            http.post(format!("{}{path}", web.base_url()))
                .bearer_auth("sk-test")
                .header("x-api-key", "sk-test")
                .header("anthropic-version", "2023-06-01")
                .json(body)
                .send()
        };
        let first = post("/v1/chat/completions", &chat).await.expect("send");
        assert_eq!(first.status(), 200);
        let refused = post("/v1/chat/completions", &chat).await.expect("send");
        assert_eq!(refused.status(), 429);
        let retry: u64 = refused.headers()[header::RETRY_AFTER]
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!((1..=60).contains(&retry), "Retry-After: {retry}");
        let body: serde_json::Value = refused.json().await.expect("json");
        assert_eq!(body["error"]["code"], "rate_limit_exceeded", "{body}");
        let messages = json!({"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]});
        let refused = post("/v1/messages", &messages).await.expect("send");
        assert_eq!(refused.status(), 429);
        let body: serde_json::Value = refused.json().await.expect("json");
        assert_eq!(body["error"]["type"], "rate_limit_error", "{body}");
        assert_eq!(web.stats().llm_rate_limited(), 2);
    }

    /// A token limit refuses the request that would pass it, names TPM, and counts only what
    /// it answered.
    #[tokio::test]
    async fn llm_requests_past_the_token_limit_get_a_tpm_429() {
        let web = Simweb::start_with(
            Arc::new(Corpus::generate()),
            "127.0.0.1:0".parse().expect("addr"),
            Options {
                llm_tokens_per_minute: Some(150),
                ..Options::default()
            },
        )
        .await
        .expect("start");
        let http = reqwest::Client::new();
        // "user" + "hi" = 6 characters → 2 tokens, plus 60 allowed: 62 each.
        let chat = json!({"model": "m", "max_completion_tokens": 60,
            "messages": [{"role": "user", "content": "hi"}]});
        let send = || {
            http.post(format!("{}/v1/chat/completions", web.base_url()))
                .bearer_auth("sk-test")
                .json(&chat)
                .send()
        };
        assert_eq!(send().await.expect("send").status(), 200);
        assert_eq!(send().await.expect("send").status(), 200);
        let refused = send().await.expect("send");
        assert_eq!(refused.status(), 429);
        assert!(refused.headers().contains_key(header::RETRY_AFTER));
        let body: serde_json::Value = refused.json().await.expect("json");
        assert_eq!(body["error"]["type"], "tokens", "{body}");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap_or("")
                .contains("(TPM): Limit 150"),
            "{body}"
        );
        assert_eq!(web.stats().llm_rate_limited(), 1);
        assert_eq!(web.stats().llm_peak_tokens_per_minute(), (124, 62));
    }

    async fn raw(
        addr: SocketAddr,
        method: &str,
        host: &str,
        path: &str,
        body: &str,
    ) -> (u16, String) {
        let mut s = TcpStream::connect(addr).await.expect("connect");
        let req = format!(
            "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nAuthorization: Bearer test\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        s.write_all(req.as_bytes()).await.expect("write");
        let mut buf = Vec::new();
        s.read_to_end(&mut buf).await.expect("read");
        let text = String::from_utf8_lossy(&buf).to_string();
        let status = text
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        (status, text)
    }

    #[tokio::test]
    async fn serves_pages_robots_search_and_llm() {
        let corpus = Arc::new(Corpus::generate());
        let web = Simweb::start(corpus.clone(), "127.0.0.1:0".parse().expect("addr"))
            .await
            .expect("start");
        let addr = web.addr();
        let page = corpus
            .pages()
            .iter()
            .find(|p| p.allowed_for_trawl())
            .expect("page");

        let (status, text) = raw(addr, "GET", &format!("{}:9000", page.host), &page.path, "").await;
        assert_eq!(status, 200);
        assert!(text.contains(&format!("<h1>{}</h1>", escape(&page.title))));
        assert_eq!(web.path_hits(&page.host, &page.path), 1);

        assert_eq!(raw(addr, "GET", &page.host, "/nope", "").await.0, 404);
        assert_eq!(raw(addr, "GET", "unknown-host.test", "/", "").await.0, 404);
        assert_eq!(raw(addr, "GET", &page.host, "/", "").await.0, 200);

        let err_host = corpus
            .host_info()
            .iter()
            .find(|h| h.robots == crate::simweb::Robots::ServerError)
            .expect("host");
        assert_eq!(
            raw(addr, "GET", &err_host.name, "/robots.txt", "").await.0,
            500
        );
        assert_eq!(web.path_hits(&err_host.name, "/robots.txt"), 1);

        let q = &corpus.questions()[0];
        let path = format!(
            "/search?q={}&format=json",
            q.query.replace(' ', "+").replace('?', "%3F")
        );
        let (status, text) = raw(addr, "GET", "127.0.0.1", &path, "").await;
        assert_eq!(status, 200);
        assert!(
            text.contains("\"results\"") && text.contains(&q.fetchable_answer_urls[0]),
            "{text}"
        );

        let body = r#"{"model":"m","messages":[{"role":"user","content":"hello there"}]}"#;
        let (status, text) = raw(addr, "POST", "127.0.0.1", "/v1/chat/completions", body).await;
        assert_eq!(status, 200);
        assert!(text.contains("SIMULATED: hello there") && text.contains("chat.completion"));

        let (status, text) = raw(addr, "GET", "hostile.test", "/redirect-loop", "").await;
        assert_eq!(status, 302);
        assert!(text
            .to_ascii_lowercase()
            .contains("location: http://hostile.test/redirect-loop"));
    }

    #[tokio::test]
    async fn fleet_questions_and_llm_latency() {
        let latency = Duration::from_millis(300);
        let web = Simweb::start_with(
            Arc::new(Corpus::generate()),
            "127.0.0.1:0".parse().expect("addr"),
            Options {
                llm_latency: latency,
                ..Options::default()
            },
        )
        .await
        .expect("start");
        let addr = web.addr();

        let q = fleet::question(3);
        let path = format!(
            "/search?q={}&format=json",
            q.replace(' ', "+").replace('?', "%3F")
        );
        let (status, text) = raw(addr, "GET", "127.0.0.1", &path, "").await;
        assert_eq!(status, 200);
        assert!(text.contains(&fleet::source_url(3, 0)), "{text}");
        let host = format!("bench-{}.test", fleet::host_of(3, 0));
        let (status, text) = raw(addr, "GET", &host, "/q/3/0", "").await;
        assert_eq!(status, 200);
        assert!(text.contains("survey 3"));
        assert_eq!(
            raw(addr, "GET", "bench-10000.test", "/q/3/0", "").await.0,
            404
        );

        let started = Instant::now();
        let body = r#"{"model":"m","messages":[{"role":"user","content":"hello"}]}"#;
        let (status, _) = raw(addr, "POST", "127.0.0.1", "/v1/chat/completions", body).await;
        assert_eq!(status, 200);
        assert!(started.elapsed() >= latency, "{:?}", started.elapsed());
    }

    #[test]
    fn log_keeps_arrival_order_and_min_gap_skips_robots() {
        let stats = Stats::default();
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        stats.record_at("a.test", "/robots.txt", at(0));
        stats.record_at("a.test", "/x", at(100));
        stats.record_at("b.test", "/y", at(150));
        stats.record_at("a.test", "/y", at(2100));
        stats.record_at("a.test", "/robots.txt", at(2150));
        stats.record_at("a.test", "/z", at(4100));

        let paths: Vec<String> = stats.log("a.test").into_iter().map(|(p, _)| p).collect();
        assert_eq!(paths, ["/robots.txt", "/x", "/y", "/robots.txt", "/z"]);
        assert_eq!(stats.log("a.test")[1].1, at(100));
        assert_eq!(
            stats.min_gap("a.test", false),
            Some(Duration::from_millis(50))
        );
        assert_eq!(
            stats.min_gap("a.test", true),
            Some(Duration::from_millis(2000))
        );
        assert_eq!(stats.min_gap("b.test", false), None);
        assert_eq!(stats.min_gap("c.test", true), None);
        assert_eq!(stats.count(|_, p| p == "/robots.txt"), 2);
        assert_eq!(
            (stats.hits("a.test"), stats.path_hits("a.test", "/y")),
            (5, 1)
        );

        stats.reset();
        assert!(stats.log("a.test").is_empty());
        assert_eq!(stats.hits("a.test"), 0);
    }

    #[tokio::test]
    async fn plain_serve_returns_bound_address() {
        let (addr, handle) = serve(
            Arc::new(Corpus::generate()),
            "127.0.0.1:0".parse().expect("addr"),
        )
        .await
        .expect("serve");
        assert_ne!(addr.port(), 0);
        assert_eq!(raw(addr, "GET", "x", "/healthz", "").await.0, 200);
        handle.abort();
    }
}
