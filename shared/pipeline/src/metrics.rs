//! Worker metrics, declared once for every stage.

use std::sync::atomic::AtomicU64;
use std::sync::LazyLock;

use trawl_telemetry::prometheus_client::metrics::counter::Counter;
use trawl_telemetry::prometheus_client::metrics::family::Family;
use trawl_telemetry::prometheus_client::metrics::gauge::Gauge;
use trawl_telemetry::prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use trawl_telemetry::{init_series, register, Labels};

pub struct WorkerMetrics {
    /// Messages handled, by stage and result (`ok`, `later`, `retry`, `dead`, `skipped`).
    pub messages: Family<Labels, Counter>,
    pub duration: Family<Labels, Histogram>,
    /// Message age when a worker takes it: how long work waits in the queue.
    pub queue_wait: Family<Labels, Histogram>,
    pub in_flight: Family<Labels, Gauge>,
    /// Messages a worker may hold at once: `prefetch` using its core plus `max_waiting` waiting.
    pub capacity: Family<Labels, Gauge>,
    /// Messages in flight that wait on an outside call (a model, a search provider, a web
    /// host, a rate limit) rather than use the worker's core.
    pub waiting: Family<Labels, Gauge>,
    /// Bytes the messages being handled have reserved ([`crate::in_flight`]).
    pub in_flight_bytes: Family<Labels, Gauge>,
    /// The worker's byte cap (`broker.max_in_flight_bytes`): in-flight bytes over it, or
    /// in-flight messages over `capacity`, is saturation.
    pub in_flight_bytes_capacity: Family<Labels, Gauge>,
    /// Seconds deliveries waited, unacknowledged, for room under the byte cap or a CPU slot.
    pub admission_wait: Family<Labels, Counter<f64, AtomicU64>>,
    /// Messages put back for another attempt, by stage and what failed (`broker`, `store`,
    /// `objects`, `timeout`, `rate_limit`, `stage`).
    pub retries: Family<Labels, Counter>,
    /// Dead-lettered messages by stage and reason (`undecodable`, `exhausted`, `permanent`).
    pub dead_letters: Family<Labels, Counter>,
    /// Terminal outcomes of selected URLs, by outcome and the fetch level they ended at.
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
    capacity: register(
        "worker_capacity",
        "Messages a worker may hold at once (prefetch busy plus max_waiting waiting)",
        Family::default(),
    ),
    waiting: register(
        "waiting_messages",
        "Messages in flight waiting on an outside call (a model, a provider, a host, a rate limit)",
        Family::default(),
    ),
    in_flight_bytes: register(
        "in_flight_bytes",
        "Bytes reserved by the messages being handled",
        Family::default(),
    ),
    in_flight_bytes_capacity: register(
        "in_flight_bytes_capacity",
        "Bytes the messages a worker handles may reserve together",
        Family::default(),
    ),
    admission_wait: register(
        "admission_wait_seconds",
        "Time deliveries waited for room under the worker's byte cap or for a free CPU slot",
        Family::default(),
    ),
    retries: register(
        "retries",
        "Messages put back for another attempt, by what failed",
        Family::default(),
    ),
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

/// Fetch levels as label values.
pub const LEVELS: [&str; 4] = ["0", "1", "2", "3"];

/// Creates a worker's known label sets at zero, so dashboards and alerts (a rate, a ratio, an
/// `absent()`) see a series from the first scrape rather than after the first event.
pub fn init(queue: trawl_broker::Queue, broker: &trawl_config::BrokerConfig) {
    trawl_broker::init_metrics();
    trawl_store::init_metrics();
    let stage = queue.label();
    let m = &*METRICS;
    init_series(&m.in_flight, &[("stage", stage)]);
    init_series(&m.in_flight_bytes, &[("stage", stage)]);
    init_series(&m.waiting, &[("stage", stage)]);
    init_series(&m.admission_wait, &[("stage", stage)]);
    let by_stage = labels(&[("stage", stage)]);
    m.in_flight_bytes_capacity
        .get_or_create(&by_stage)
        .set(i64::try_from(broker.max_in_flight_bytes).unwrap_or(i64::MAX));
    for result in ["ok", "later", "retry", "dead", "skipped"] {
        init_series(&m.messages, &[("stage", stage), ("result", result)]);
    }
    for reason in [
        "broker",
        "store",
        "objects",
        "timeout",
        "rate_limit",
        "stage",
    ] {
        init_series(&m.retries, &[("stage", stage), ("reason", reason)]);
    }
    for reason in ["undecodable", "exhausted", "permanent"] {
        init_series(&m.dead_letters, &[("stage", stage), ("reason", reason)]);
    }
    init_series(&m.duration, &[("stage", stage)]);
    init_series(&m.queue_wait, &[("stage", stage)]);
    // Outcomes are recorded by fetch and clean; job ends by synthesize.
    if matches!(
        queue,
        trawl_broker::Queue::Fetch | trawl_broker::Queue::FetchBrowser | trawl_broker::Queue::Clean
    ) {
        for outcome in trawl_messages::Outcome::NAMES {
            for level in LEVELS {
                init_series(&m.outcomes, &[("outcome", outcome), ("level", level)]);
            }
        }
    }
    if queue == trawl_broker::Queue::Synthesize {
        for status in trawl_messages::JobStatus::ALL {
            init_series(&m.jobs, &[("status", status.as_str())]);
        }
    }
}

pub use trawl_telemetry::labels;
