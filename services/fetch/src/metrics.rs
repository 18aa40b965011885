//! The fetch stage's metrics, declared once. Labels come from fixed sets: levels 0–3, results,
//! block kinds, decisions; never a URL or a host.

use std::sync::LazyLock;
use std::time::Duration;

use trawl_telemetry::prometheus_client::metrics::counter::Counter;
use trawl_telemetry::prometheus_client::metrics::family::Family;
use trawl_telemetry::prometheus_client::metrics::gauge::Gauge;
use trawl_telemetry::prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use trawl_telemetry::{init_series, register, Labels};

pub struct FetchMetrics {
    /// Attempts by level and result (`page`, `not_modified`, `blocked`, `retry`, `ended`).
    pub attempts: Family<Labels, Counter>,
    /// Responses by level and status class (`2xx` … `5xx`; `none` when no response came).
    pub responses: Family<Labels, Counter>,
    /// Blocks met, by level and kind (`http_403`, `cloudflare`, `script_shell` …).
    pub blocks: Family<Labels, Counter>,
    /// Tasks moved up a level, by `from` and `to`.
    pub escalations: Family<Labels, Counter>,
    /// robots.txt decisions (`allowed`, `disallowed`).
    pub robots: Family<Labels, Counter>,
    /// What the SSRF guard refused before connecting: a task's URL, a redirect hop, and each
    /// request of a browser page that the browser's proxy refused.
    pub ssrf_refusals: Counter,
    /// Tasks deferred because their host was busy, by `limit` (`rate`, `slot`, `retry_after`,
    /// `robots`: another worker is fetching the host's robots.txt; `page`: another job is
    /// fetching the page, for the page cache),
    /// and how long they were told to wait.
    pub deferrals: Family<Labels, Counter>,
    pub deferral_wait: Histogram,
    /// Waits for a host's turn spent in the worker, the task's message held
    /// (`fetch.wait_in_worker_ms`), instead of a deferral through the broker.
    pub host_wait: Histogram,
    /// Browser sessions of this worker, by state (`busy` rendering a page, `idle` pooled).
    pub browser_sessions: Family<Labels, Gauge>,
    /// Sessions this worker may have at once (`fetch.browser_sessions`).
    pub browser_sessions_max: Gauge,
    /// Pages that found every session busy and had to wait for one.
    pub browser_waits: Counter,
}

pub static METRICS: LazyLock<FetchMetrics> = LazyLock::new(|| FetchMetrics {
    attempts: register(
        "fetch_attempts",
        "Fetch attempts by escalation level and result",
        Family::default(),
    ),
    responses: register(
        "fetch_responses",
        "Fetch responses by escalation level and status class",
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
        "URLs and browser requests refused by the SSRF guard before any connection",
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
    host_wait: register(
        "fetch_host_wait_seconds",
        "Wait for a host's turn spent in the worker instead of a deferral",
        Histogram::new(exponential_buckets(0.01, 2.5, 10)),
    ),
    browser_sessions: register(
        "fetch_browser_sessions",
        "Browser sessions by state (busy, idle)",
        Family::default(),
    ),
    browser_sessions_max: register(
        "fetch_browser_sessions_max",
        "Browser sessions this worker may have at once",
        Gauge::default(),
    ),
    browser_waits: register(
        "fetch_browser_waits",
        "Pages that waited for a free browser session",
        Counter::default(),
    ),
});

pub use trawl_telemetry::labels;

const LEVELS: [&str; 4] = ["0", "1", "2", "3"];
const STATUS_CLASSES: [&str; 6] = ["1xx", "2xx", "3xx", "4xx", "5xx", "none"];

/// Counts one response (or none) at `level`.
pub fn response(level: u8, status: Option<u16>) {
    let class = match status {
        Some(s @ 100..=599) => STATUS_CLASSES[usize::from(s / 100 - 1)],
        _ => "none",
    };
    METRICS
        .responses
        .get_or_create(&labels(&[
            ("level", LEVELS[usize::from(level.min(3))]),
            ("status_class", class),
        ]))
        .inc();
}

/// Creates the fetch series that dashboards and alerts read at zero: per level, attempts and
/// responses; escalations between neighbouring levels; robots decisions; deferrals; and the
/// browser pool's gauges.
pub fn init() {
    let kinds = crate::block::Block::all_kinds();
    for level in LEVELS {
        for kind in &kinds {
            init_series(&METRICS.blocks, &[("level", level), ("kind", kind)]);
        }
        for result in ["page", "not_modified", "blocked", "retry", "ended"] {
            init_series(&METRICS.attempts, &[("level", level), ("result", result)]);
        }
        for class in STATUS_CLASSES {
            init_series(
                &METRICS.responses,
                &[("level", level), ("status_class", class)],
            );
        }
    }
    for (from, to) in [("0", "1"), ("1", "2"), ("2", "3")] {
        init_series(&METRICS.escalations, &[("from", from), ("to", to)]);
    }
    for decision in ["allowed", "disallowed"] {
        init_series(&METRICS.robots, &[("decision", decision)]);
    }
    for limit in ["rate", "slot", "retry_after", "robots", "page"] {
        init_series(&METRICS.deferrals, &[("limit", limit)]);
    }
    for state in ["busy", "idle"] {
        init_series(&METRICS.browser_sessions, &[("state", state)]);
    }
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
        response(1, Some(404));
        response(2, None);
        let text = trawl_telemetry::render();
        for name in [
            "trawl_fetch_deferrals_total{limit=\"rate\"} ",
            "trawl_fetch_deferral_wait_seconds_bucket",
            "trawl_fetch_ssrf_refusals_total ",
        ] {
            assert!(text.contains(name), "{name} missing from\n{text}");
        }
        for series in [
            "trawl_fetch_responses_total{level=\"1\",status_class=\"4xx\"} ",
            "trawl_fetch_responses_total{level=\"2\",status_class=\"none\"} ",
        ] {
            let count = text
                .lines()
                .find_map(|l| l.strip_prefix(series))
                .and_then(|n| n.parse::<u64>().ok());
            assert!(
                count.is_some_and(|n| n >= 1),
                "{series} not counted in\n{text}"
            );
        }
    }
}
