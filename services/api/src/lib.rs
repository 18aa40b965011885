//! trawl's HTTP API (`trawl serve`): other systems submit research batches, follow them and
//! collect their reports, in front of the same fleet the CLI drives.
//!
//! - Every `/v1` request needs `Authorization: Bearer <token>`; tokens are made with
//!   `trawl token create` and kept hashed in the store ([`tokens`]). Each token sees only its
//!   own batches, and is rate-limited fleet-wide through the store.
//! - Errors are JSON (`{"error": {"code", "message"}}`, [`error`]).
//! - The OpenAPI 3.1 document is generated from the handlers ([`openapi`]), served at
//!   `/openapi.json`, and kept in the repository as `services/api/openapi.json`.
//! - `/healthz`, `/readyz`, `/metrics` and `/drain` are served without a token.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{DefaultBodyLimit, FromRequestParts, MatchedPath, Request};
use axum::http::request::Parts;
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use trawl_config::Config;
use trawl_pipeline::Runtime;
use trawl_telemetry::{Drain, Readiness};

pub mod error;
mod metrics;
pub mod openapi;
pub mod routes;
pub mod tokens;

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

async fn openapi_json() -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        openapi::document(),
    )
        .into_response()
}

/// The whole API. `readiness` and `drain` back `/readyz` and `/drain`.
pub fn router(state: AppState, readiness: Readiness, drain: Drain) -> Router {
    use axum::routing::{delete, post};
    let limit = state.config.api.max_body_bytes;
    let v1 = Router::new()
        .route("/v1/batches", post(routes::submit))
        .route(
            "/v1/batches/{id}",
            get(routes::get_batch).merge(delete(routes::cancel_batch)),
        )
        .route("/v1/batches/{id}/jobs", get(routes::list_jobs))
        .route("/v1/batches/{id}/events", get(routes::events))
        .route("/v1/jobs/{id}", get(routes::get_job))
        .route(
            "/v1/jobs/{id}/work-products/{*name}",
            get(routes::work_product),
        )
        .route("/openapi.json", get(openapi_json))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(limit))
        .with_state(state);
    v1.merge(trawl_telemetry::routes(readiness, drain))
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
}

/// Serves the API on `api.addr` until SIGTERM, SIGINT or `/drain`; calls `bound` with the
/// address once listening.
pub async fn serve(
    config: Config,
    bound: impl FnOnce(std::net::SocketAddr),
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
    let rt = Runtime::connect(config.clone(), Duration::from_secs(30)).await?;
    metrics::init();
    let readiness = Readiness::default();
    readiness.set(true);
    // A preStop `/drain` stops taking connections; requests in progress finish through the
    // graceful shutdown, so the drain itself has nothing to wait for.
    let drain = Drain::default();
    let shutdown = trawl_pipeline::serve::Shutdown::on_signals_or_drain(&drain);
    let stop = {
        let (drain, readiness) = (drain.clone(), readiness.clone());
        async move {
            shutdown.wait().await;
            readiness.set(false);
            drain.finish();
        }
    };
    let state = AppState {
        rt,
        config: Arc::new(config),
    };
    let app = router(state, readiness, drain);
    bound(local);
    axum::serve(listener, app)
        .with_graceful_shutdown(stop)
        .await
        .map_err(|source| ServeError::Listen { addr, source })
}
