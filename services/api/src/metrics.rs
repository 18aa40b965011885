//! The API's metrics, declared once: requests by route template and status class, and their
//! latency. The route is the template (`/v1/batches/{id}`), never the path, so ids never
//! become labels.

use std::sync::LazyLock;
use std::time::Duration;

use axum::http::StatusCode;
use trawl_telemetry::prometheus_client::metrics::counter::Counter;
use trawl_telemetry::prometheus_client::metrics::family::Family;
use trawl_telemetry::prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use trawl_telemetry::{init_series, labels, register, Labels};

struct ApiMetrics {
    requests: Family<Labels, Counter>,
    duration: Family<Labels, Histogram>,
}

static METRICS: LazyLock<ApiMetrics> = LazyLock::new(|| ApiMetrics {
    requests: register(
        "api_requests",
        "API requests by method, route template and status class",
        Family::default(),
    ),
    duration: register(
        "api_request_duration_seconds",
        "API request latency by route template",
        Family::new_with_constructor(|| Histogram::new(exponential_buckets(0.001, 2.5, 12))),
    ),
});

pub(crate) fn observe(method: &str, route: &str, status: StatusCode, took: Duration) {
    let class = match status.as_u16() {
        200..=299 => "2xx",
        300..=399 => "3xx",
        400..=499 => "4xx",
        _ => "5xx",
    };
    METRICS
        .requests
        .get_or_create(&labels(&[
            ("method", method),
            ("route", route),
            ("status_class", class),
        ]))
        .inc();
    METRICS
        .duration
        .get_or_create(&labels(&[("route", route)]))
        .observe(took.as_secs_f64());
}

pub(crate) fn init() {
    for class in ["2xx", "4xx", "5xx"] {
        init_series(
            &METRICS.requests,
            &[
                ("method", "POST"),
                ("route", "/v1/batches"),
                ("status_class", class),
            ],
        );
    }
}
