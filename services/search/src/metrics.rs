//! The search stage's metrics, declared once.

use std::sync::atomic::AtomicU64;
use std::sync::LazyLock;

use trawl_telemetry::prometheus_client::metrics::counter::Counter;
use trawl_telemetry::prometheus_client::metrics::family::Family;
use trawl_telemetry::prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use trawl_telemetry::{register, Labels};

pub struct SearchMetrics {
    /// Provider page requests by provider and outcome (`ok`, `empty`, `timeout`, `http_error` …).
    pub provider_requests: Family<Labels, Counter>,
    pub provider_latency: Family<Labels, Histogram>,
    /// Seconds calls waited for their provider's fleet-wide rate limit or a 429's hold.
    pub rate_wait: Family<Labels, Counter<f64, AtomicU64>>,
    pub results_per_question: Histogram,
    pub selected_per_question: Histogram,
}

pub static METRICS: LazyLock<SearchMetrics> = LazyLock::new(|| SearchMetrics {
    provider_requests: register(
        "search_provider_requests",
        "Search provider page requests by provider and outcome",
        Family::default(),
    ),
    provider_latency: register(
        "search_provider_latency_seconds",
        "Search provider response time",
        Family::new_with_constructor(|| Histogram::new(exponential_buckets(0.01, 2.0, 12))),
    ),
    rate_wait: register(
        "search_provider_rate_limit_wait_seconds",
        "Time search provider calls waited for the provider's fleet-wide rate limit",
        Family::default(),
    ),
    results_per_question: register(
        "search_results_per_question",
        "Distinct results found per question",
        Histogram::new([0.0, 1.0, 5.0, 10.0, 20.0, 40.0, 80.0, 160.0]),
    ),
    selected_per_question: register(
        "search_selected_per_question",
        "URLs selected for fetching per question",
        Histogram::new([0.0, 1.0, 2.0, 3.0, 5.0, 8.0, 10.0, 15.0, 20.0]),
    ),
});

pub use trawl_telemetry::labels;
