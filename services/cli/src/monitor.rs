//! `trawl monitor`: the fleet's own gauges, sampled from the broker and the store.
//!
//! Workers each see their own messages; nobody sees the queues or the batches as a whole. One
//! monitor per fleet samples them every `--interval` seconds: messages ready and consumers per
//! queue (a passive declare, so it works on any RabbitMQ, plugins or not), and the jobs of open
//! batches by state. Dashboards read these, and so do the backlog and no-consumer alerts.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::LazyLock;
use std::time::Duration;

use anyhow::Context;
use tracing::{info, warn};
use trawl_config::Config;
use trawl_messages::{JobStatus, Queue, StageKind};
use trawl_pipeline::runtime::{BUDGET, SPENT, STARTED};
use trawl_pipeline::serve::Ops;
use trawl_pipeline::Runtime;
use trawl_store::BatchProgress;
use trawl_telemetry::prometheus_client::metrics::family::Family;
use trawl_telemetry::prometheus_client::metrics::gauge::Gauge;
use trawl_telemetry::{init_series, labels, register, Labels};

#[derive(clap::Args)]
pub struct MonitorArgs {
    /// Seconds between samples.
    #[arg(long, default_value_t = 15, value_parser = clap::value_parser!(u64).range(1..))]
    interval: u64,
}

struct MonitorMetrics {
    queue_messages: Family<Labels, Gauge>,
    queue_consumers: Family<Labels, Gauge>,
    batches_open: Gauge,
    batch_jobs: Family<Labels, Gauge>,
    budget_used: Gauge<f64, std::sync::atomic::AtomicU64>,
    up: Family<Labels, Gauge>,
}

static METRICS: LazyLock<MonitorMetrics> = LazyLock::new(|| MonitorMetrics {
    queue_messages: register(
        "queue_messages",
        "Messages ready in each trawl queue",
        Family::default(),
    ),
    queue_consumers: register(
        "queue_consumers",
        "Consumers of each trawl queue",
        Family::default(),
    ),
    batches_open: register(
        "batches_open",
        "Batches with jobs not yet ended",
        Gauge::default(),
    ),
    batch_jobs: register(
        "batch_jobs",
        "Jobs of open batches by state",
        Family::default(),
    ),
    budget_used: register(
        "batch_budget_used_ratio",
        "The highest share of its LLM budget any open batch has spent",
        Gauge::default(),
    ),
    up: register(
        "monitor_up",
        "1 when the monitor's last sample of the target (broker, store) succeeded",
        Family::default(),
    ),
});

/// Every stage's queue, and the dead letters.
pub fn queues() -> impl Iterator<Item = Queue> {
    (StageKind::ALL.iter().map(|k| k.queue())).chain([Queue::Dead])
}

/// Job states reported for open batches: not started, started, and each way a job ends.
fn states() -> impl Iterator<Item = &'static str> {
    ["pending", "running"]
        .into_iter()
        .chain(JobStatus::ALL.iter().map(|s| s.as_str()))
}

/// What one sample of the open batches adds up to.
#[derive(Debug, Default, PartialEq)]
pub struct BatchSummary {
    pub open: u64,
    pub jobs: BTreeMap<&'static str, u64>,
    /// Highest spent/budget over batches that have a budget.
    pub budget_used: f64,
}

/// One open batch as the store holds it.
pub struct OpenBatch {
    pub progress: BatchProgress,
    pub started: i64,
    pub spent: i64,
    pub budget: i64,
}

/// Adds up open batches. A job counts as running once its search opened it and until it
/// ends; cancelled jobs that never started make `started` overshoot, so running is capped by
/// the jobs still unfinished.
pub fn summarise(batches: &[OpenBatch]) -> BatchSummary {
    let mut summary = BatchSummary {
        open: batches.len() as u64,
        jobs: states().map(|s| (s, 0)).collect(),
        budget_used: 0.0,
    };
    for b in batches {
        let p = &b.progress;
        let unfinished = p.total.saturating_sub(p.finished);
        let running = (b.started.max(0) as u64)
            .saturating_sub(p.finished)
            .min(unfinished);
        *summary.jobs.entry("pending").or_default() += unfinished - running;
        *summary.jobs.entry("running").or_default() += running;
        for (status, &n) in &p.by_status {
            if let Some(state) = states().find(|&s| s == status) {
                *summary.jobs.entry(state).or_default() += n;
            }
        }
        if b.budget > 0 {
            summary.budget_used = summary.budget_used.max(b.spent as f64 / b.budget as f64);
        }
    }
    summary
}

async fn open_batches(rt: &Runtime) -> Result<Vec<OpenBatch>, trawl_store::StoreError> {
    let mut out = Vec::new();
    for id in rt.store.batches_open().await? {
        // A batch that finished between the two reads is simply not open any more.
        let Some(progress) = rt.store.batch_progress(&id).await? else {
            continue;
        };
        out.push(OpenBatch {
            progress,
            started: rt.store.batch_counter(&id, STARTED).await?,
            spent: rt.store.batch_counter(&id, SPENT).await?,
            budget: rt.store.batch_counter(&id, BUDGET).await?,
        });
    }
    Ok(out)
}

/// Takes one sample into the gauges. A target that cannot answer keeps its last values and
/// reads `trawl_monitor_up{target} 0`, which alerts on.
pub async fn sample(rt: &Runtime) {
    let m = &*METRICS;
    let mut broker_up = true;
    for queue in queues() {
        match rt.broker.stats(queue).await {
            Ok(stats) => {
                let l = labels(&[("queue", queue.label())]);
                m.queue_messages.get_or_create(&l).set(stats.ready as i64);
                m.queue_consumers
                    .get_or_create(&l)
                    .set(stats.consumers as i64);
            }
            Err(e) => {
                warn!(queue = %queue, error = %e, "cannot sample the queue");
                broker_up = false;
            }
        }
    }
    let store_up = match open_batches(rt).await {
        Ok(batches) => {
            let summary = summarise(&batches);
            m.batches_open.set(summary.open as i64);
            for (state, n) in summary.jobs {
                m.batch_jobs
                    .get_or_create(&labels(&[("state", state)]))
                    .set(n as i64);
            }
            m.budget_used.set(summary.budget_used);
            true
        }
        Err(e) => {
            warn!(error = %e, "cannot sample the batches");
            false
        }
    };
    for (target, up) in [("broker", broker_up), ("store", store_up)] {
        m.up.get_or_create(&labels(&[("target", target)]))
            .set(i64::from(up));
    }
}

fn init() {
    let m = &*METRICS;
    for queue in queues() {
        init_series(&m.queue_messages, &[("queue", queue.label())]);
        init_series(&m.queue_consumers, &[("queue", queue.label())]);
    }
    for state in states() {
        init_series(&m.batch_jobs, &[("state", state)]);
    }
    for target in ["broker", "store"] {
        init_series(&m.up, &[("target", target)]);
    }
}

pub async fn run(config: Config, args: MonitorArgs) -> anyhow::Result<ExitCode> {
    trawl_telemetry::init_logs(config.secret_values(&std::env::vars().collect()));
    anyhow::ensure!(
        config.broker.url.is_some() && config.store.url.is_some(),
        "the monitor samples a fleet: set broker.url and store.url (TRAWL__BROKER__URL, TRAWL__STORE__URL)"
    );
    anyhow::ensure!(
        !config.metrics.addr.is_empty(),
        "the monitor exports metrics: set metrics.addr (TRAWL__METRICS__ADDR)"
    );
    init();
    let ops = Ops::start(&config.metrics.addr, trawl_pipeline::serve::signals()).await?;
    info!(interval_secs = args.interval, "monitor sampling");
    let rt = Runtime::connect(config, Duration::from_secs(30))
        .await
        .context("the monitor cannot reach the fleet")?;
    ops.readiness.set(true);
    let mut tick = tokio::time::interval(Duration::from_secs(args.interval));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let stop = ops.shutdown.clone().wait();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            _ = &mut stop => break,
            _ = tick.tick() => sample(&rt).await,
        }
    }
    ops.finish().await;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(total: u64, statuses: &[(&str, u64)], started: i64) -> OpenBatch {
        let by_status: BTreeMap<String, u64> =
            statuses.iter().map(|&(s, n)| (s.to_owned(), n)).collect();
        OpenBatch {
            progress: BatchProgress {
                total,
                finished: by_status.values().sum(),
                by_status,
                ..Default::default()
            },
            started,
            spent: 0,
            budget: 0,
        }
    }

    #[test]
    fn jobs_are_pending_running_or_ended() {
        let mut a = batch(10, &[("done", 3), ("failed", 1)], 7);
        a.spent = 45;
        a.budget = 50;
        // Cancelled before any started: started (0) is below finished.
        let b = batch(5, &[("cancelled", 5)], 0);
        let s = summarise(&[a, b]);
        assert_eq!(s.open, 2);
        assert_eq!(s.jobs["pending"], 3);
        assert_eq!(s.jobs["running"], 3);
        assert_eq!(s.jobs["done"], 3);
        assert_eq!(s.jobs["failed"], 1);
        assert_eq!(s.jobs["cancelled"], 5);
        assert_eq!(s.jobs["partial"], 0);
        assert!((s.budget_used - 0.9).abs() < 1e-9);
    }

    #[test]
    fn running_never_exceeds_the_unfinished_jobs() {
        // A redelivered search may count a start twice.
        let s = summarise(&[batch(4, &[("done", 1)], 9)]);
        assert_eq!((s.jobs["pending"], s.jobs["running"]), (0, 3));
    }

    #[tokio::test]
    async fn samples_queues_and_batches_into_gauges() {
        let rt = Runtime::connect(Config::default(), Duration::from_secs(1))
            .await
            .unwrap();
        rt.broker
            .publish(Queue::Clean, trawl_broker::Message::new(b"{}".to_vec()))
            .await
            .unwrap();
        let _consumer = rt.broker.consume(Queue::Search, 1).await.unwrap();
        rt.store
            .batch_create("b1", &["j1".into(), "j2".into()])
            .await
            .unwrap();
        rt.store.batch_add("b1", STARTED, 1).await.unwrap();
        init();
        sample(&rt).await;
        let text = trawl_telemetry::render();
        for line in [
            "trawl_queue_messages{queue=\"clean\"} 1",
            "trawl_queue_consumers{queue=\"search\"} 1",
            "trawl_queue_messages{queue=\"dead\"} 0",
            "trawl_batches_open 1",
            "trawl_batch_jobs{state=\"pending\"} 1",
            "trawl_batch_jobs{state=\"running\"} 1",
            "trawl_monitor_up{target=\"store\"} 1",
        ] {
            assert!(text.contains(line), "{line} missing from\n{text}");
        }
    }
}
