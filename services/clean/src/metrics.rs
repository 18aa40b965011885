//! The clean stage's metrics, declared once.

use std::sync::LazyLock;

use trawl_telemetry::prometheus_client::metrics::counter::Counter;
use trawl_telemetry::prometheus_client::metrics::family::Family;
use trawl_telemetry::prometheus_client::metrics::histogram::Histogram;
use trawl_telemetry::{register, Labels};

pub(crate) struct CleanMetrics {
    /// Cleanliness scores by source (`heuristic`, `llm`).
    pub cleanliness: Family<Labels, Histogram>,
    /// Steps by step (`judge`, `cleaning`, `analysis`, `cache`) and result: `llm`,
    /// `heuristic`, `extractive`, `applied`, `rejected` (the guard kept the original),
    /// `skipped`, `failed` (fell back), `hit`, `miss`.
    pub steps: Family<Labels, Counter>,
}

pub static METRICS: LazyLock<CleanMetrics> = LazyLock::new(|| CleanMetrics {
    cleanliness: register(
        "clean_cleanliness",
        "Cleanliness score of extracted content (0 furniture, 1 clean) by who judged it",
        Family::new_with_constructor(|| {
            Histogram::new([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0])
        }),
    ),
    steps: register(
        "clean_steps",
        "Clean stage steps (judge, cleaning, analysis, cache) by result",
        Family::default(),
    ),
});

/// Counts one step's result.
pub fn step(step: &'static str, result: &'static str) {
    METRICS
        .steps
        .get_or_create(&vec![
            ("step", step.to_owned()),
            ("result", result.to_owned()),
        ])
        .inc();
}
