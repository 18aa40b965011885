//! Logs and metrics for every trawl binary.
//!
//! - [`init_logs`]: `tracing` to stderr, filtered by `RUST_LOG` (default `info`), JSON when
//!   `TRAWL_LOG_FORMAT=json` (what a log pipeline in a cluster wants).
//! - [`registry`]: the process-wide Prometheus registry. Each crate declares its metrics in its
//!   own `metrics.rs` and registers them here, once.
//! - [`serve`]: `/metrics`, `/healthz` and `/readyz` on the configured address.
//!
//! Labels come from fixed sets only (stage, outcome, level, reason …), never a URL or id.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use axum::http::StatusCode;
use axum::routing::get;
use axum::Router;
use prometheus_client::registry::Registry;

pub use prometheus_client;

/// Label set used by every trawl metric: a few `(name, value)` pairs from fixed sets.
pub type Labels = Vec<(&'static str, String)>;

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

/// The registry in Prometheus text format.
pub fn render() -> String {
    let mut out = String::new();
    let registry = registry().lock().expect("registry lock");
    prometheus_client::encoding::text::encode(&mut out, &registry).expect("writing to a String");
    out
}

/// Starts logging to stderr. Safe to call more than once (tests).
pub fn init_logs() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let json = std::env::var("TRAWL_LOG_FORMAT").is_ok_and(|v| v == "json");
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = if json {
        builder.json().try_init()
    } else {
        builder.try_init()
    };
}

/// Readiness as `/readyz` reports it: set once the worker has connected and consumes.
#[derive(Clone, Default)]
pub struct Readiness(Arc<AtomicBool>);

impl Readiness {
    pub fn set(&self, ready: bool) {
        self.0.store(ready, Ordering::SeqCst);
    }

    pub fn get(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

#[derive(Debug, thiserror::Error)]
#[error("cannot listen for metrics on {addr}: {source}")]
pub struct ServeError {
    addr: String,
    source: std::io::Error,
}

/// Serves `/metrics`, `/healthz` and `/readyz` until `shutdown` resolves; returns the bound
/// address (useful with port 0) once listening.
pub async fn serve(
    addr: &str,
    readiness: Readiness,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<SocketAddr, ServeError> {
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
    let app = Router::new()
        .route("/metrics", get(|| async { render() }))
        .route("/healthz", get(|| async { "ok" }))
        .route(
            "/readyz",
            get(move || async move {
                if readiness.get() {
                    (StatusCode::OK, "ready")
                } else {
                    (StatusCode::SERVICE_UNAVAILABLE, "not ready")
                }
            }),
        );
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app)
            .with_graceful_shutdown(shutdown)
            .await
        {
            tracing::warn!(error = %e, "metrics server stopped");
        }
    });
    Ok(bound)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn get(addr: SocketAddr, path: &str) -> String {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.write_all(
            format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes(),
        )
        .await
        .unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).await.unwrap();
        out
    }

    #[tokio::test]
    async fn serves_metrics_health_and_readiness() {
        let counter: prometheus_client::metrics::counter::Counter =
            register("test_events", "Events seen by the test", Default::default());
        counter.inc();
        let readiness = Readiness::default();
        let addr = serve("127.0.0.1:0", readiness.clone(), std::future::pending())
            .await
            .unwrap();
        assert!(get(addr, "/healthz").await.starts_with("HTTP/1.1 200"));
        assert!(get(addr, "/readyz").await.starts_with("HTTP/1.1 503"));
        readiness.set(true);
        assert!(get(addr, "/readyz").await.starts_with("HTTP/1.1 200"));
        let metrics = get(addr, "/metrics").await;
        assert!(metrics.contains("trawl_test_events_total 1"), "{metrics}");
    }
}
