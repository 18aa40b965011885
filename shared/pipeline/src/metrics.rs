//! Worker metrics, declared once for every stage.

use std::sync::LazyLock;

use trawl_telemetry::prometheus_client::metrics::counter::Counter;
use trawl_telemetry::prometheus_client::metrics::family::Family;
use trawl_telemetry::prometheus_client::metrics::gauge::Gauge;
use trawl_telemetry::prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use trawl_telemetry::{register, Labels};

pub struct WorkerMetrics {
    /// Messages handled, by stage and result (`ok`, `later`, `retry`, `dead`, `skipped`).
    pub messages: Family<Labels, Counter>,
    pub duration: Family<Labels, Histogram>,
    /// Message age when a worker takes it: how long work waits in the queue.
    pub queue_wait: Family<Labels, Histogram>,
    pub in_flight: Family<Labels, Gauge>,
    /// Dead-lettered messages by stage and reason (`undecodable`, `exhausted`, `permanent`).
    pub dead_letters: Family<Labels, Counter>,
    /// Terminal outcomes of selected URLs.
    pub outcomes: Family<Labels, Counter>,
    /// Jobs ended, by status.
    pub jobs: Family<Labels, Counter>,
}

fn seconds_histogram() -> Family<Labels, Histogram> {
    Family::new_with_constructor(|| Histogram::new(exponential_buckets(0.005, 2.5, 14)))
}

pub static METRICS: LazyLock<WorkerMetrics> = LazyLock::new(|| WorkerMetrics {
    messages: register(
        "messages",
        "Messages handled by stage and result",
        Family::default(),
    ),
    duration: register(
        "stage_duration_seconds",
        "Time to handle one message",
        seconds_histogram(),
    ),
    queue_wait: register(
        "queue_wait_seconds",
        "Message age when a worker takes it",
        seconds_histogram(),
    ),
    in_flight: register("in_flight", "Messages being handled", Family::default()),
    dead_letters: register(
        "dead_letters",
        "Messages sent to the dead-letter queue",
        Family::default(),
    ),
    outcomes: register(
        "url_outcomes",
        "Terminal outcomes of selected URLs",
        Family::default(),
    ),
    jobs: register("jobs_finished", "Jobs ended, by status", Family::default()),
});

pub fn labels(pairs: &[(&'static str, &str)]) -> Labels {
    pairs.iter().map(|&(k, v)| (k, v.to_owned())).collect()
}
