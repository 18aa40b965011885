//! The broker's metrics, declared once: reconnections and publisher confirms.

use std::sync::LazyLock;

use trawl_telemetry::prometheus_client::metrics::counter::Counter;
use trawl_telemetry::prometheus_client::metrics::family::Family;
use trawl_telemetry::prometheus_client::metrics::gauge::Gauge;
use trawl_telemetry::{init_series, labels, register, Labels};

struct BrokerMetrics {
    reconnects: Counter,
    publishes: Family<Labels, Counter>,
    unconfirmed: Gauge,
}

static METRICS: LazyLock<BrokerMetrics> = LazyLock::new(|| BrokerMetrics {
    reconnects: register(
        "broker_reconnects",
        "Broker connections re-established after a failure",
        Counter::default(),
    ),
    publishes: register(
        "broker_publishes",
        "Publishes by whether the broker confirmed them (confirmed, failed)",
        Family::default(),
    ),
    unconfirmed: register(
        "broker_unconfirmed_publishes",
        "Publishes sent and not yet confirmed by the broker",
        Gauge::default(),
    ),
});

pub(crate) fn reconnected() {
    METRICS.reconnects.inc();
}

pub(crate) fn published(confirmed: bool) {
    let result = if confirmed { "confirmed" } else { "failed" };
    METRICS
        .publishes
        .get_or_create(&labels(&[("result", result)]))
        .inc();
}

/// Counts a publish as unconfirmed for as long as it lives, whichever way it ends.
pub(crate) struct Unconfirmed;

impl Unconfirmed {
    pub(crate) fn start() -> Self {
        METRICS.unconfirmed.inc();
        Unconfirmed
    }
}

impl Drop for Unconfirmed {
    fn drop(&mut self) {
        METRICS.unconfirmed.dec();
    }
}

/// Creates the broker's series at zero (and registers them) before the first publish.
pub fn init() {
    for result in ["confirmed", "failed"] {
        init_series(&METRICS.publishes, &[("result", result)]);
    }
}
