//! trawl's HTTP API (`trawl serve`): other systems submit research batches, follow them and
//! collect their reports, in front of the same fleet the CLI drives.
//!
//! - Every `/v1` request needs `Authorization: Bearer <token>`; tokens are made with
//!   `trawl token create` and kept hashed in the store ([`tokens`]). Each token sees only its
//!   own batches (a read-only one those of the token it reads for, and it changes nothing:
//!   [`Writer`]), and is rate-limited fleet-wide through the store.
//! - Errors are JSON (`{"error": {"code", "message"}}`, [`error`]).
//! - A batch's results come out in bulk from `GET /v1/batches/{id}/results`
//!   ([`routes::export_results`]): one JSON line per job, a page per request, streamed as each
//!   job is read (the server holds a few jobs at a time, never the batch), gzip when accepted.
//! - The OpenAPI 3.1 document is generated from the handlers ([`openapi`]), served at
//!   `/openapi.json` with this server's limits, and kept in the repository (default limits) as
//!   `services/api/openapi.json`. integration-tests/tests/end_to_end/api_schema.rs runs schemathesis
//!   against the served one.
//! - Per-token quotas (questions a day, open batches) are kept fleet-wide in the store
//!   (`quotas`); request metrics are declared once in `metrics`.
//! - The web app for batches is served at `/` unless `api.ui = false` ([`ui`]).
//! - `/healthz`, `/readyz` and `/metrics` are served without a token, on the API's address and
//!   on `metrics.addr`; `/drain` (it stops the server) only on `metrics.addr`, like a worker's.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{FromRequestParts, MatchedPath, Request};
use axum::http::request::Parts;
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use tower_http::compression::CompressionLayer;
use trawl_config::Config;
use trawl_pipeline::Runtime;
use trawl_telemetry::Readiness;

pub mod error;
mod metrics;
pub mod openapi;
mod quotas;
mod render;
pub mod routes;
pub mod tokens;
mod ui;

use error::ApiError;

#[derive(Clone)]
pub struct AppState {
    pub rt: Runtime,
    pub config: Arc<Config>,
}

/// The token a request was made with: its extractor authenticates and rate-limits.
pub struct Caller(pub tokens::TokenRecord);

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let value = parts
            .headers
            .get(header::AUTHORIZATION)
            .ok_or_else(|| {
                ApiError::unauthorized(
                    "send an API token as Authorization: Bearer <token> (create one with `trawl token create`)",
                )
            })?;
        let token = value
            .to_str()
            .ok()
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim)
            .ok_or_else(|| {
                ApiError::unauthorized("the Authorization header must be Bearer <token>")
            })?;
        let record = tokens::verify(&*state.rt.store, token)
            .await?
            .ok_or_else(|| ApiError::unauthorized("unknown or revoked API token"))?;
        let count = state
            .rt
            .store
            .window_count(&format!("api:{}", record.id), Duration::from_secs(1))
            .await?;
        if count > u64::from(state.config.api.rate_per_sec) {
            let mut e = ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limited",
                format!(
                    "more than {} requests per second for this token (api.rate_per_sec); retry after the Retry-After header",
                    state.config.api.rate_per_sec
                ),
            );
            e.retry_after = Some(1);
            return Err(e);
        }
        Ok(Caller(record))
    }
}

/// A caller that may change state (submit, cancel): a read-only token is refused with 403.
pub struct Writer(pub Caller);

impl FromRequestParts<AppState> for Writer {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let caller = Caller::from_request_parts(parts, state).await?;
        if caller.0.read_only() {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "read_only",
                "this token is read-only: it reads batches but cannot submit or cancel them; use the token it reads for",
            ));
        }
        Ok(Writer(caller))
    }
}

/// Counts every request by its route template (never the path itself) and status class.
async fn observe(request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|m| m.as_str().to_owned())
        .unwrap_or_else(|| "unmatched".to_owned());
    // Any string is a valid method: only the known ones become label values.
    let method: &'static str = match request.method().as_str() {
        "GET" => "GET",
        "POST" => "POST",
        "DELETE" => "DELETE",
        "PUT" => "PUT",
        "PATCH" => "PATCH",
        "HEAD" => "HEAD",
        "OPTIONS" => "OPTIONS",
        _ => "other",
    };
    let started = Instant::now();
    let response = next.run(request).await;
    metrics::observe(method, &route, response.status(), started.elapsed());
    response
}

async fn not_found() -> ApiError {
    ApiError::not_found("no such endpoint; the API is described at /openapi.json")
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "this endpoint does not take that method; see /openapi.json",
    )
}

/// The whole API; `readiness` backs `/readyz`.
pub fn router(state: AppState, readiness: Readiness) -> Router {
    use axum::routing::{delete, post};
    let document = axum::body::Bytes::from(openapi::document_for(&state.config.api));
    let openapi_json = move || async move {
        ([(header::CONTENT_TYPE, "application/json")], document).into_response()
    };
    let v1 = Router::new()
        .route(
            "/v1/batches",
            post(routes::submit).merge(get(routes::list_batches)),
        )
        .route(
            "/v1/batches/{id}",
            get(routes::get_batch).merge(delete(routes::cancel_batch)),
        )
        .route("/v1/batches/{id}/jobs", get(routes::list_jobs))
        .route("/v1/batches/{id}/events", get(routes::events))
        // gzip when the request accepts it: a page of reports compresses several times over.
        // Only here: compressing the event stream would hold its events back.
        .route(
            "/v1/batches/{id}/results",
            get(routes::export_results).layer(CompressionLayer::new().gzip(true)),
        )
        .route("/v1/jobs/{id}", get(routes::get_job))
        .route("/v1/jobs/{id}/report", get(routes::report_view))
        .route("/v1/token", get(routes::token_info))
        .route(
            "/v1/jobs/{id}/work-products/{*name}",
            get(routes::work_product),
        )
        .route("/openapi.json", get(openapi_json));
    let v1 = match state.config.api.ui {
        true => v1.merge(ui::router()),
        false => v1,
    };
    let v1 = v1
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(state);
    v1.merge(trawl_telemetry::probes(readiness))
        .layer(axum::middleware::from_fn(observe))
}

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("`trawl serve` fronts a fleet: set broker.url and store.url (TRAWL__BROKER__URL, TRAWL__STORE__URL)")]
    NotConfigured,
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        addr: String,
        source: std::io::Error,
    },
    #[error(transparent)]
    Connect(#[from] trawl_pipeline::runtime::ConnectError),
    #[error(transparent)]
    Metrics(#[from] trawl_telemetry::ServeError),
    #[error(transparent)]
    Worker(#[from] trawl_pipeline::serve::WorkerError),
}

/// What the API allows each client connection (api.header_timeout_secs …).
fn conn_limits(api: &trawl_config::ApiConfig) -> trawl_telemetry::http::ConnLimits {
    trawl_telemetry::http::ConnLimits {
        header_timeout: Duration::from_secs(api.header_timeout_secs),
        idle_timeout: Duration::from_secs(api.idle_timeout_secs),
        max_connections: api.max_connections,
        max_per_client: api.max_connections_per_client,
    }
}

/// Serves the API on `api.addr`, and `/metrics`, `/healthz`, `/readyz` and `/drain` on
/// `metrics.addr` (unless empty), until `stop` resolves (the process's signals) or `/drain`;
/// calls `bound` with the API's address once listening.
pub async fn serve(
    config: Config,
    bound: impl FnOnce(std::net::SocketAddr),
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    if config.broker.url.is_none() || config.store.url.is_none() {
        return Err(ServeError::NotConfigured);
    }
    let addr = config.api.addr.clone();
    let listener = tokio::net::TcpListener::bind(&addr)
        .await
        .map_err(|source| ServeError::Listen {
            addr: addr.clone(),
            source,
        })?;
    let local = listener.local_addr().map_err(|source| ServeError::Listen {
        addr: addr.clone(),
        source,
    })?;
    let ops = trawl_pipeline::serve::Ops::start(&config.metrics.addr, stop).await?;
    // Live (and not ready) while connecting, like a worker.
    let rt = Runtime::connect(config.clone(), Duration::from_secs(30)).await?;
    metrics::init();
    // The API reads what the workers write: it checks it sees their object store as they do.
    let Some(watch) = trawl_pipeline::serve::SharedWatch::start(&rt, "trawl serve", &ops).await?
    else {
        ops.finish().await;
        return Ok(());
    };
    ops.readiness.set(true);
    // A preStop `/drain` stops taking connections; requests in progress finish through the
    // graceful shutdown (an event stream may outlast any drain), so the drain answers at once.
    let stop = {
        let (drain, readiness) = (ops.drain.clone(), ops.readiness.clone());
        let shutdown = ops.shutdown.clone();
        async move {
            shutdown.wait().await;
            readiness.set(false);
            drain.finish();
        }
    };
    let api = config.api.clone();
    let state = AppState {
        rt,
        config: Arc::new(config),
    };
    let app = router(state, ops.readiness.clone());
    bound(local);
    trawl_telemetry::http::serve(listener, app, conn_limits(&api), "api", stop).await;
    let not_shared = watch.finish().await;
    ops.finish().await;
    match not_shared {
        Some(e) => Err(ServeError::Worker(
            trawl_pipeline::serve::WorkerError::NotShared(e),
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    async fn get(addr: std::net::SocketAddr, path: &str) -> String {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        let request = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        s.write_all(request.as_bytes()).await.unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).await.unwrap();
        out
    }

    /// Whoever may call the API reaches the probes and the document, never `/drain`: it would
    /// stop the server. `/drain` is on `metrics.addr` only.
    #[tokio::test]
    async fn the_api_address_serves_probes_and_the_document_but_not_drain() {
        // Nothing here reads or writes the object store, so its default root is never touched.
        let env = BTreeMap::from([("TRAWL__API__MAX_QUESTIONS".to_owned(), "7".to_owned())]);
        let config = Config::load(None, &env).unwrap();
        let state = AppState {
            rt: Runtime::embedded(config.clone()).unwrap(),
            config: Arc::new(config),
        };
        let readiness = Readiness::default();
        readiness.set(true);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = router(state, readiness);
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

        for path in ["/healthz", "/readyz", "/metrics"] {
            assert!(get(addr, path).await.starts_with("HTTP/1.1 200"), "{path}");
        }
        let drain = get(addr, "/drain").await;
        assert!(drain.starts_with("HTTP/1.1 404"), "{drain}");
        let doc = get(addr, "/openapi.json").await;
        assert!(doc.starts_with("HTTP/1.1 200"), "{doc}");
        assert!(
            doc.contains("\"maxItems\": 7"),
            "the served document states the limit"
        );
    }

    /// The web app is served at `/` and every app path, under its policy, unless `api.ui` is
    /// off; the API is the same either way.
    #[tokio::test]
    async fn the_web_app_is_served_unless_turned_off() {
        for ui in [true, false] {
            let env = BTreeMap::from([("TRAWL__API__UI".to_owned(), ui.to_string())]);
            let config = Config::load(None, &env).unwrap();
            let state = AppState {
                rt: Runtime::embedded(config.clone()).unwrap(),
                config: Arc::new(config),
            };
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let app = router(state, Readiness::default());
            tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
            for path in ["/", "/batches/x", "/jobs/y", "/ui/app.js"] {
                let page = get(addr, path).await;
                let head = page.split("\r\n\r\n").next().unwrap().to_ascii_lowercase();
                match ui {
                    true => {
                        assert!(page.starts_with("HTTP/1.1 200"), "{path}: {head}");
                        assert!(head.contains("content-security-policy: default-src 'self'"));
                    }
                    false => assert!(page.starts_with("HTTP/1.1 404"), "{path}: {head}"),
                }
            }
            let api = get(addr, "/v1/batches").await;
            assert!(api.starts_with("HTTP/1.1 401"), "{api}");
        }
    }
}
