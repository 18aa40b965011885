//! The figures of one run, as `results.json` holds them.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::scrape::Gauges;
use crate::{Stage, Workers};

/// Queue depths, jobs ended and every worker's CPU so far, at `t` seconds after submission
/// began.
#[derive(Clone, Debug, Serialize)]
pub struct Sample {
    pub t: f64,
    pub ready: BTreeMap<Stage, u64>,
    pub finished: u64,
    /// CPU seconds since the run began, per worker in the order of [`Run::worker_stats`].
    pub cpu: Vec<f64>,
    /// What each worker's `/metrics` said, in the same order (none: it did not answer).
    pub gauges: Vec<Option<Gauges>>,
}

#[derive(Clone, Debug, Serialize)]
pub struct WorkerStats {
    pub stage: Stage,
    pub pid: u32,
    /// Resident memory once started and connected, before any work (VmRSS).
    pub idle_rss_mb: f64,
    /// Highest resident memory over its life (VmHWM).
    pub peak_rss_mb: f64,
    /// CPU over the run, from submission to the batch's end.
    pub cpu_secs: f64,
    /// How it exited on SIGTERM; anything but "ok" is worth a look at its log.
    pub exit: String,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct StageStats {
    pub workers: usize,
    pub cpu_secs: f64,
    pub cpu_ms_per_job: f64,
    /// CPU over the run's time per worker: 1.0 is one core kept busy.
    pub cpu_per_worker: f64,
    /// Share of samples in which messages waited in the stage's queue: every worker's
    /// prefetch window was full, so the stage took work as fast as it could.
    pub saturated: f64,
    pub mean_ready: f64,
    pub max_ready: u64,
    /// Mean time the stage spent on one job's messages, LLM waits included (job.json; none
    /// for synthesize, which writes job.json before its own time is known).
    pub handling_ms_per_job: Option<f64>,
    /// Messages in flight per worker, on average over the samples, and as a share of the
    /// prefetch; bytes in flight as a share of the byte cap.
    pub mean_in_flight: f64,
    pub in_flight_share: f64,
    pub bytes_share: f64,
    /// Of the time messages were in flight, the share their calls waited for a rate limit, and
    /// the share fetch tasks waited for their hosts' turns.
    pub rate_limit_share: f64,
    pub politeness_share: f64,
    /// What bounded the stage: see `measure::bound`.
    pub bound: String,
    /// The fleet's page cache as the stage's workers counted it over the run
    /// (`trawl_cache_hits_total`, `trawl_cache_misses_total`, `trawl_cache_revalidated_total`):
    /// fetch for pages, clean for their extracted text.
    pub cache_hits: u64,
    pub cache_misses: u64,
    pub cache_revalidated: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Run {
    pub label: String,
    pub workers: Workers,
    pub jobs: u64,
    /// Submission start to the last job's end.
    pub wall_secs: f64,
    pub submit_secs: f64,
    pub jobs_per_min: f64,
    /// Between 10 % and 90 % of jobs ended: the rate without ramp-up and tail.
    pub steady_jobs_per_min: f64,
    /// Submission to report, per job (the batch is submitted at once, so queueing counts).
    pub latency_p50_secs: f64,
    pub latency_p95_secs: f64,
    pub latency_max_secs: f64,
    pub statuses: BTreeMap<String, u64>,
    /// Sources by terminal outcome.
    pub outcomes: BTreeMap<String, u64>,
    pub sources_per_job: f64,
    /// Sources fetched and cleaned (analysed or found irrelevant).
    pub pages: u64,
    /// Requests for source pages (`/q/…` on the bench hosts, robots.txt not counted) as
    /// simweb saw them: the pages the fleet fetched, from the web rather than its cache.
    pub page_requests: u64,
    /// The distinct pages among them.
    pub distinct_pages_requested: u64,
    pub llm_requests: u64,
    /// The most tokens of LLM requests answered within any minute, as the provider counts them
    /// for its limit (prompt characters / 4 + the answer allowance), and the largest one call.
    pub llm_peak_tokens_per_minute: u64,
    pub llm_largest_call_tokens: u64,
    /// LLM requests the provider refused with a 429.
    pub llm_rate_limited: u64,
    /// LLM calls that failed for good, every worker's at the batch's end.
    pub llm_failed: u64,
    pub dead_letters: u64,
    pub stages: BTreeMap<Stage, StageStats>,
    /// Every worker's CPU per job.
    pub trawl_cpu_ms_per_job: f64,
    /// Fetch and clean workers' CPU per page fetched and cleaned.
    pub cpu_ms_per_page: f64,
    /// RabbitMQ and Redis over the run (other clients of them count too).
    pub services_cpu_secs: f64,
    /// Their CPU per second while the fleet sat idle before the run: housekeeping and other
    /// clients, the part of `services_cpu_secs` that is not this run's.
    pub services_idle_cpu_per_sec: f64,
    /// This process: simweb serving pages, search and the LLM, plus the sampling.
    pub simweb_cpu_secs: f64,
    /// Share of the machine's CPU in use over the run, by anything (/proc/stat): near 1.0
    /// the run measured a full machine, not the fleet.
    pub machine_busy: f64,
    pub bottleneck: Stage,
    /// How page requests to one host were spaced, as simweb saw them.
    pub host_gaps: Value,
    pub worker_stats: Vec<WorkerStats>,
    pub samples: Vec<Sample>,
}
