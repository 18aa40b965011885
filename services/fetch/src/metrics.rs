//! The fetch stage's metrics, declared once. Labels come from fixed sets: levels 0–3, results,
//! block kinds, decisions; never a URL or a host.

use std::sync::LazyLock;
use std::time::Duration;

use trawl_telemetry::prometheus_client::metrics::counter::Counter;
use trawl_telemetry::prometheus_client::metrics::family::Family;
use trawl_telemetry::prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use trawl_telemetry::{register, Labels};

pub struct FetchMetrics {
    /// Attempts by level and result (`page`, `blocked`, `retry`, `ended`).
    pub attempts: Family<Labels, Counter>,
    /// Blocks met, by level and kind (`http_403`, `cloudflare`, `script_shell` …).
    pub blocks: Family<Labels, Counter>,
    /// Tasks moved up a level, by `from` and `to`.
    pub escalations: Family<Labels, Counter>,
    /// robots.txt decisions (`allowed`, `disallowed`).
    pub robots: Family<Labels, Counter>,
    /// URLs the SSRF guard refused before any request.
    pub ssrf_refusals: Counter,
    /// Tasks deferred because their host was busy, by `limit` (`rate`, `slot`, `retry_after`,
    /// `robots`: another worker is fetching the host's robots.txt),
    /// and how long they were told to wait.
    pub deferrals: Family<Labels, Counter>,
    pub deferral_wait: Histogram,
}

pub static METRICS: LazyLock<FetchMetrics> = LazyLock::new(|| FetchMetrics {
    attempts: register(
        "fetch_attempts",
        "Fetch attempts by escalation level and result",
        Family::default(),
    ),
    blocks: register(
        "fetch_blocks",
        "Blocks met by fetch, by level and kind",
        Family::default(),
    ),
    escalations: register(
        "fetch_escalations",
        "Fetch tasks moved up an escalation level",
        Family::default(),
    ),
    robots: register(
        "fetch_robots_decisions",
        "robots.txt decisions",
        Family::default(),
    ),
    ssrf_refusals: register(
        "fetch_ssrf_refusals",
        "URLs refused by the SSRF guard before any request",
        Counter::default(),
    ),
    deferrals: register(
        "fetch_deferrals",
        "Fetch tasks deferred because their host was busy, by limit",
        Family::default(),
    ),
    deferral_wait: register(
        "fetch_deferral_wait_seconds",
        "Wait a deferred fetch task was given",
        Histogram::new(exponential_buckets(0.01, 2.5, 10)),
    ),
});

pub fn labels(pairs: &[(&'static str, &str)]) -> Labels {
    pairs.iter().map(|&(k, v)| (k, v.to_owned())).collect()
}

/// Counts one deferral of `limit` kind lasting `wait`.
pub fn deferred(limit: &'static str, wait: Duration) {
    METRICS
        .deferrals
        .get_or_create(&labels(&[("limit", limit)]))
        .inc();
    METRICS.deferral_wait.observe(wait.as_secs_f64());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_are_exported_under_trawl_names() {
        deferred("rate", Duration::from_millis(120));
        METRICS.ssrf_refusals.inc();
        let text = trawl_telemetry::render();
        for name in [
            "trawl_fetch_deferrals_total{limit=\"rate\"} ",
            "trawl_fetch_deferral_wait_seconds_bucket",
            "trawl_fetch_ssrf_refusals_total ",
        ] {
            assert!(text.contains(name), "{name} missing from\n{text}");
        }
    }
}
