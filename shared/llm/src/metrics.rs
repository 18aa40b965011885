//! LLM metrics, declared once: requests, latency, tokens and cost by model.

use std::sync::atomic::AtomicU64;
use std::sync::LazyLock;

use trawl_telemetry::prometheus_client::metrics::counter::Counter;
use trawl_telemetry::prometheus_client::metrics::family::Family;
use trawl_telemetry::prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use trawl_telemetry::{init_series, register, Labels};

use crate::prices::Price;
use crate::Usage;

pub(crate) struct LlmMetrics {
    /// Requests by model, task and outcome (`ok`, `timeout`, `rate_limited` …).
    pub requests: Family<Labels, Counter>,
    pub latency: Family<Labels, Histogram>,
    /// Tokens by model and kind (`input`, `cached_input`, `output`, `reasoning`; the cached
    /// input is part of the input, the reasoning part of the output).
    pub tokens: Family<Labels, Counter>,
    /// Spend by model, in dollars (the base unit; the stores keep exact micro-dollars).
    pub cost: Family<Labels, Counter<f64, AtomicU64>>,
    pub cache_hits: Counter,
    /// LLM calls that failed for good, by step and reason: the step took its non-LLM path.
    pub fallbacks: Family<Labels, Counter>,
    /// Time calls waited for their turn under the fleet-wide limits, by model.
    pub rate_wait: Family<Labels, Counter<f64, AtomicU64>>,
}

pub(crate) static METRICS: LazyLock<LlmMetrics> = LazyLock::new(|| LlmMetrics {
    requests: register(
        "llm_requests",
        "LLM requests by model, task and outcome",
        Family::default(),
    ),
    latency: register(
        "llm_latency_seconds",
        "LLM response time",
        Family::new_with_constructor(|| Histogram::new(exponential_buckets(0.05, 2.0, 12))),
    ),
    tokens: register(
        "llm_tokens",
        "LLM tokens by model and kind",
        Family::default(),
    ),
    cost: register(
        "llm_cost_dollars",
        "LLM spend by model, from configured prices",
        Family::default(),
    ),
    cache_hits: register(
        "llm_cache_hits",
        "LLM answers served from the cache",
        Counter::default(),
    ),
    fallbacks: register(
        "llm_fallbacks",
        "LLM calls that failed for good, by step and reason (the step took its non-LLM path)",
        Family::default(),
    ),
    rate_wait: register(
        "llm_rate_limit_wait_seconds",
        "Time LLM calls waited for their turn under the fleet-wide rate limits, by model",
        Family::default(),
    ),
});

impl LlmMetrics {
    pub fn fallback(&self, step: &str, reason: &str) {
        self.fallbacks
            .get_or_create(&labels(&[("step", step), ("reason", reason)]))
            .inc();
    }

    /// Counts the tokens and returns their cost in micro-dollars (0 without a price).
    pub(crate) fn record_usage(&self, model: &str, usage: &Usage, price: Option<Price>) -> u64 {
        for (kind, n) in [
            ("input", usage.input_tokens),
            ("cached_input", usage.cached_input_tokens),
            ("output", usage.output_tokens),
            ("reasoning", usage.reasoning_tokens),
        ] {
            self.tokens
                .get_or_create(&labels(&[("model", model), ("kind", kind)]))
                .inc_by(n);
        }
        let micro = price.map_or(0, |p| crate::prices::cost_micro(&p, usage));
        self.cost
            .get_or_create(&labels(&[("model", model)]))
            .inc_by(micro as f64 / 1e6);
        micro
    }
}

pub(crate) use trawl_telemetry::labels;

/// Creates `model`'s token and cost series at zero, so spend panels show the configured model
/// before its first call.
pub(crate) fn init(model: &str) {
    for kind in ["input", "cached_input", "output", "reasoning"] {
        init_series(&METRICS.tokens, &[("model", model), ("kind", kind)]);
    }
    init_series(&METRICS.cost, &[("model", model)]);
    init_series(&METRICS.latency, &[("model", model)]);
    init_series(&METRICS.rate_wait, &[("model", model)]);
}
