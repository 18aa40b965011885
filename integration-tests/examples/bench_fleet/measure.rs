//! Measuring one run: submit the batch, sample until it ends, read the jobs' records, and
//! add it all up.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::Value;
use trawl_integration_tests::simweb::{bench, Simweb};
use trawl_messages::{paths, JobOptions, Queue, SearchTask};
use trawl_pipeline::batch::{self, BatchOptions, Manifest};
use trawl_pipeline::Runtime;
use trawl_store::BatchProgress;

use crate::fleet::{log_tail, Process};
use crate::run::{Run, Sample, StageStats, WorkerStats};
use crate::scrape::{self, Gauges};
use crate::{Args, Interrupted, Stage, Workers};
use trawl_integration_tests::procfs::{
    cpu_secs, machine_jiffies, services, services_cpu, services_cpu_between, status_mb,
};

fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    // Nearest rank.
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// Before the batch goes in: idle memory and every CPU counter the run is measured from.
struct Before {
    idle_rss: Vec<f64>,
    cpu: Vec<f64>,
    services_pids: Vec<String>,
    services: BTreeMap<String, f64>,
    services_idle_per_sec: f64,
    simweb: f64,
    machine: (u64, u64),
}

fn workers_cpu(procs: &[Process]) -> Vec<f64> {
    procs
        .iter()
        .map(|p| cpu_secs(&p.pid.to_string()).unwrap_or(0.0))
        .collect()
}

async fn before(procs: &[Process]) -> Before {
    // Let allocators settle after start-up, then take the idle figures; RabbitMQ's and
    // Redis's CPU meanwhile is their background rate.
    const IDLE: Duration = Duration::from_secs(3);
    let services_pids = services();
    if services_pids.len() < 2 {
        eprintln!(
            "bench-fleet: found no process listening on 5672 or 6379; \
             RabbitMQ's and Redis's CPU is not counted"
        );
    }
    let idle0 = services_cpu(&services_pids);
    tokio::time::sleep(IDLE).await;
    let services = services_cpu(&services_pids);
    Before {
        idle_rss: procs
            .iter()
            .map(|p| status_mb(p.pid, "VmRSS").unwrap_or(0.0))
            .collect(),
        cpu: workers_cpu(procs),
        services_idle_per_sec: services_cpu_between(&idle0, &services) / IDLE.as_secs_f64(),
        services_pids,
        services,
        simweb: cpu_secs("self").unwrap_or(0.0),
        machine: machine_jiffies(),
    }
}

/// What sampling the run until its batch ended gave.
struct Sampled {
    manifest: Manifest,
    progress: BatchProgress,
    samples: Vec<Sample>,
    submit_secs: f64,
    /// Submission start to the sample that saw the batch done.
    secs: f64,
}

/// Submits the batch and samples every `--sample-ms` until it ends.
async fn sample(
    args: &Args,
    rt: &Runtime,
    label: &str,
    workers: &Workers,
    questions: &[String],
    procs: &mut [Process],
    cpu0: &[f64],
) -> anyhow::Result<Sampled> {
    let total = questions.len() as u64;
    let bar = ProgressBar::new(total).with_style(
        ProgressStyle::with_template(&format!(
            "{label:>14} {{bar:30}} {{pos}}/{{len}} jobs ({{elapsed}}) {{msg}}"
        ))
        .expect("a valid template"),
    );
    let options = JobOptions {
        fields: args.fields.then(fields),
        ..JobOptions::default()
    };
    let tasks: Vec<SearchTask> = questions
        .iter()
        .map(|q| SearchTask::new(q.clone(), options.clone()))
        .collect();
    let started = Instant::now();
    // Submitted alongside the sampling, so the queues are watched from the first message.
    let mut submitter = Some({
        let rt = rt.clone();
        tokio::spawn(async move {
            let questions = batch::Question::numbered(tasks);
            let manifest = batch::submit(&rt, questions, BatchOptions::default(), |_| {}).await;
            (manifest, started.elapsed())
        })
    });
    let mut manifest: Option<Manifest> = None;
    let mut submit_secs = 0.0;
    let mut samples: Vec<Sample> = Vec::new();
    let limit = Duration::from_secs(args.timeout_secs);
    let tick = Duration::from_millis(args.sample_ms.max(50));
    let client = reqwest::Client::new();
    let addrs: Vec<String> = procs.iter().map(|p| p.metrics.clone()).collect();
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    loop {
        if submitter.as_ref().is_some_and(|s| s.is_finished()) {
            let (m, secs) = submitter.take().expect("checked").await?;
            manifest = Some(m.context("failed to submit the batch")?);
            submit_secs = secs.as_secs_f64();
        }
        let t = started.elapsed();
        let mut ready = BTreeMap::new();
        for &stage in workers.keys() {
            ready.insert(stage, rt.broker.depth(stage.queue()).await?);
        }
        let progress = match &manifest {
            Some(m) => rt.store.batch_progress(&m.batch_id.to_string()).await?,
            None => None,
        };
        let finished = progress.as_ref().map_or(0, |p| p.finished);
        bar.set_position(finished);
        bar.set_message(
            ready
                .iter()
                .map(|(s, n)| format!("{} {n}", s.name()))
                .collect::<Vec<_>>()
                .join(" · "),
        );
        let gauges =
            futures_util::future::join_all(addrs.iter().map(|a| scrape::scrape(&client, a))).await;
        samples.push(Sample {
            t: t.as_secs_f64(),
            ready,
            finished,
            cpu: workers_cpu(procs)
                .iter()
                .zip(cpu0)
                .map(|(now, then)| now - then)
                .collect(),
            gauges,
        });
        if let (Some(manifest), Some(progress)) = (&manifest, progress) {
            if progress.is_done() {
                bar.finish_and_clear();
                return Ok(Sampled {
                    manifest: manifest.clone(),
                    progress,
                    samples,
                    submit_secs,
                    secs: started.elapsed().as_secs_f64(),
                });
            }
        }
        for p in procs.iter_mut() {
            if let Some(status) = p.child.try_wait()? {
                bar.abandon();
                bail!(
                    "{} exited during the run ({status}):\n{}",
                    p.stage.binary(),
                    log_tail(&p.log)
                );
            }
        }
        if t > limit {
            bar.abandon();
            bail!(
                "{label}: {finished}/{total} jobs ended after {limit:?}; see the logs in {}",
                args.out.join("logs").display()
            );
        }
        tokio::select! {
            _ = tokio::time::sleep(tick) => {}
            _ = &mut ctrl_c => {
                bar.abandon();
                return Err(Interrupted.into());
            }
        }
    }
}

/// What the jobs' own records (`job.json`) say.
#[derive(Default)]
struct JobFigures {
    /// Submission to report, seconds, sorted.
    latencies: Vec<f64>,
    /// Milliseconds each stage spent on the jobs' messages, summed.
    handling_ms: BTreeMap<String, f64>,
    sources: f64,
}

async fn job_figures(rt: &Runtime, manifest: &Manifest) -> anyhow::Result<JobFigures> {
    let mut f = JobFigures::default();
    for job in &manifest.jobs {
        let key = paths::job_record(manifest.batch_id, job.job_id);
        let Ok(Some(bytes)) = rt.objects.get(&key).await else {
            continue;
        };
        let record: Value =
            serde_json::from_slice(&bytes).with_context(|| format!("failed to parse {key}"))?;
        f.latencies
            .push(record["duration_ms"].as_f64().unwrap_or(0.0) / 1000.0);
        f.sources += record["sources_selected"].as_f64().unwrap_or(0.0);
        for (stage, ms) in record["stage_ms"].as_object().into_iter().flatten() {
            *f.handling_ms.entry(stage.clone()).or_default() += ms.as_f64().unwrap_or(0.0);
        }
    }
    if f.latencies.len() < manifest.jobs.len() {
        eprintln!(
            "bench-fleet: only {} of {} jobs have a job.json; latencies cover those",
            f.latencies.len(),
            manifest.jobs.len()
        );
    }
    f.latencies.sort_by(f64::total_cmp);
    Ok(f)
}

/// Jobs per minute between the 10th and the 90th percentile of job ends. Every job of the
/// batch is created at submission, so a job's latency is when it ended.
fn steady_rate(sorted_latencies: &[f64]) -> f64 {
    let n = sorted_latencies.len();
    let (t0, t1) = (
        percentile(sorted_latencies, 0.1),
        percentile(sorted_latencies, 0.9),
    );
    if n < 10 || t1 <= t0 {
        return 0.0;
    }
    0.8 * n as f64 / (t1 - t0) * 60.0
}

/// The stage that stayed saturated longest bounded the batch: work waited for it while the
/// stages after it waited for work. Shares within 2 points of the longest count as ties, which
/// go to the later stage, whose backlog is the one that held the jobs back.
fn bottleneck(stages: &BTreeMap<Stage, StageStats>) -> Stage {
    let longest = stages.values().map(|s| s.saturated).fold(0.0, f64::max);
    stages
        .iter()
        .filter(|(_, s)| s.saturated >= longest - 0.02)
        .map(|(&stage, _)| stage)
        .next_back()
        .unwrap_or(Stage::Fetch)
}

/// The in-flight and waiting figures of the workers at `mine` (indexes into each sample's
/// gauges) over a run of `secs`.
fn in_flight_figures(samples: &[Sample], mine: &[usize], secs: f64) -> StageStats {
    let of = |s: &Sample| -> Vec<Gauges> { mine.iter().filter_map(|&i| s.gauges[i]).collect() };
    let answered: Vec<Vec<Gauges>> = (samples.iter().map(of)).filter(|g| !g.is_empty()).collect();
    let n = answered.len().max(1) as f64;
    let mean = |f: fn(&Gauges) -> f64| -> f64 {
        answered
            .iter()
            .map(|g| g.iter().map(f).sum::<f64>() / g.len() as f64)
            .sum::<f64>()
            / n
    };
    let share = |part: fn(&Gauges) -> f64, whole: fn(&Gauges) -> f64| -> f64 {
        answered
            .iter()
            .map(|g| g.iter().map(part).sum::<f64>() / g.iter().map(whole).sum::<f64>().max(1.0))
            .sum::<f64>()
            / n
    };
    // Counters: their growth from the first sample to the last, over every worker of the stage.
    let grown = |f: fn(&Gauges) -> f64| -> f64 {
        match (answered.first(), answered.last()) {
            (Some(a), Some(b)) => b.iter().map(f).sum::<f64>() - a.iter().map(f).sum::<f64>(),
            _ => 0.0,
        }
    };
    let mean_in_flight = mean(|g| g.in_flight);
    // Message-seconds in flight, as if at least one message per worker: an idle stage's
    // occasional wait is not its bound.
    let in_flight_secs = mean_in_flight.max(1.0) * mine.len() as f64 * secs.max(1e-9);
    StageStats {
        mean_in_flight,
        cache_hits: grown(|g| g.cache_hits).round() as u64,
        cache_misses: grown(|g| g.cache_misses).round() as u64,
        cache_revalidated: grown(|g| g.cache_revalidated).round() as u64,
        in_flight_share: share(|g| g.in_flight, |g| g.capacity),
        bytes_share: share(|g| g.bytes, |g| g.bytes_capacity),
        rate_limit_share: (grown(|g| g.rate_wait_secs) / in_flight_secs).min(1.0),
        politeness_share: (grown(|g| g.politeness_wait_secs) / in_flight_secs).min(1.0),
        ..StageStats::default()
    }
}

/// What bounded a stage: its CPU; its workers' limits on messages or bytes in flight; a rate
/// limit or hosts' politeness that its messages waited on; or, with room to spare and work
/// waiting for it, the latency of what its messages wait on. A stage whose queue was mostly
/// empty was bounded by the stages before it.
fn bound(s: &StageStats) -> &'static str {
    if s.cpu_per_worker > 0.8 {
        "CPU"
    } else if s.rate_limit_share > 0.3 {
        "rate limit"
    } else if s.politeness_share > 0.3 {
        "politeness"
    } else if s.bytes_share > 0.85 {
        "in-flight bytes"
    } else if s.in_flight_share > 0.85 {
        "in-flight messages (prefetch)"
    } else if s.saturated > 0.5 {
        "outside calls' latency"
    } else {
        "work from earlier stages"
    }
}

/// Of simweb's (host, path, requests): the requests for the fleet questions' source pages
/// (`/q/…` on a bench host; robots.txt is not a page) and the distinct pages they asked for.
fn page_requests(snapshot: &[(String, String, u64)]) -> (u64, u64) {
    let pages = || {
        (snapshot.iter()).filter(|(host, path, _)| {
            let bench_host = host.starts_with("bench-") && host.ends_with(".test");
            bench_host && host != bench::STATS_HOST && path.starts_with("/q/")
        })
    };
    (pages().map(|(_, _, n)| n).sum(), pages().count() as u64)
}

pub async fn measure(
    args: &Args,
    rt: &Runtime,
    web: &Simweb,
    label: &str,
    workers: &Workers,
    questions: &[String],
    procs: &mut [Process],
) -> anyhow::Result<Run> {
    let before = before(procs).await;
    web.stats().reset();
    bench::reset_gaps();
    let sampled = sample(args, rt, label, workers, questions, procs, &before.cpu).await?;
    let cpu = workers_cpu(procs);
    let services = services_cpu_between(&before.services, &services_cpu(&before.services_pids));
    let simweb_cpu = cpu_secs("self").unwrap_or(0.0) - before.simweb;
    let machine = machine_jiffies();
    let machine_busy =
        (machine.0 - before.machine.0) as f64 / (machine.1 - before.machine.1).max(1) as f64;

    let worker_stats: Vec<WorkerStats> = procs
        .iter()
        .zip(cpu.iter().zip(&before.cpu))
        .zip(&before.idle_rss)
        .map(|((p, (now, then)), &idle)| WorkerStats {
            stage: p.stage,
            pid: p.pid,
            idle_rss_mb: idle,
            peak_rss_mb: status_mb(p.pid, "VmHWM").unwrap_or(0.0),
            cpu_secs: now - then,
            exit: String::new(),
        })
        .collect();
    let figures = job_figures(rt, &sampled.manifest).await?;
    let Sampled {
        progress, samples, ..
    } = sampled;
    let jobs = progress.total;
    let per_job = |x: f64| x / jobs.max(1) as f64;
    // The last job's end, to the millisecond; the sampling saw it up to one tick later.
    let wall = figures
        .latencies
        .last()
        .copied()
        .filter(|_| figures.latencies.len() as u64 == jobs)
        .unwrap_or(sampled.secs);

    let mut stages = BTreeMap::new();
    for (&stage, &n) in workers {
        let cpu: f64 = worker_stats
            .iter()
            .filter(|w| w.stage == stage)
            .map(|w| w.cpu_secs)
            .sum();
        let depths: Vec<u64> = samples.iter().map(|s| s.ready[&stage]).collect();
        let count = depths.len().max(1) as f64;
        let mine: Vec<usize> = (procs.iter().enumerate())
            .filter(|(_, p)| p.stage == stage)
            .map(|(i, _)| i)
            .collect();
        let mut s = StageStats {
            workers: n,
            cpu_secs: cpu,
            cpu_ms_per_job: per_job(cpu) * 1000.0,
            // CPU was counted up to the sample that saw the batch done.
            cpu_per_worker: cpu / sampled.secs / n as f64,
            saturated: depths.iter().filter(|&&d| d > 0).count() as f64 / count,
            mean_ready: depths.iter().sum::<u64>() as f64 / count,
            max_ready: depths.iter().copied().max().unwrap_or(0),
            handling_ms_per_job: figures.handling_ms.get(stage.name()).map(|&ms| per_job(ms)),
            ..in_flight_figures(&samples, &mine, sampled.secs)
        };
        s.bound = bound(&s).to_owned();
        stages.insert(stage, s);
    }
    let pages = ["analysed", "irrelevant"]
        .iter()
        .map(|o| progress.outcomes.get(*o).copied().unwrap_or(0))
        .sum::<u64>();
    let fetch_clean: f64 = [Stage::Fetch, Stage::Clean]
        .iter()
        .filter_map(|s| stages.get(s))
        .map(|s| s.cpu_secs)
        .sum();
    let trawl_cpu: f64 = stages.values().map(|s| s.cpu_secs).sum();
    let llm_requests = web.stats().count(|_, path| path.starts_with("/v1/"));
    let (page_requests, distinct_pages_requested) = page_requests(&web.stats().snapshot());
    let (llm_peak_tokens_per_minute, llm_largest_call_tokens) =
        web.stats().llm_peak_tokens_per_minute();
    let llm_failed = (samples.iter().rev())
        .find(|s| s.gauges.iter().all(Option::is_some))
        .map_or(0.0, |s| {
            s.gauges.iter().flatten().map(|g| g.llm_failed).sum()
        });
    let latencies = &figures.latencies;
    Ok(Run {
        label: label.to_owned(),
        workers: workers.clone(),
        jobs,
        wall_secs: wall,
        submit_secs: sampled.submit_secs,
        jobs_per_min: jobs as f64 / wall * 60.0,
        steady_jobs_per_min: steady_rate(latencies),
        latency_p50_secs: percentile(latencies, 0.5),
        latency_p95_secs: percentile(latencies, 0.95),
        latency_max_secs: latencies.last().copied().unwrap_or(0.0),
        statuses: progress.by_status.clone(),
        outcomes: progress.outcomes.clone(),
        sources_per_job: figures.sources / latencies.len().max(1) as f64,
        pages,
        page_requests,
        distinct_pages_requested,
        llm_requests,
        llm_peak_tokens_per_minute,
        llm_largest_call_tokens,
        llm_rate_limited: web.stats().llm_rate_limited(),
        llm_failed: llm_failed as u64,
        dead_letters: rt.broker.depth(Queue::Dead).await?,
        bottleneck: bottleneck(&stages),
        stages,
        trawl_cpu_ms_per_job: per_job(trawl_cpu) * 1000.0,
        cpu_ms_per_page: fetch_clean / pages.max(1) as f64 * 1000.0,
        services_cpu_secs: services,
        services_idle_cpu_per_sec: before.services_idle_per_sec,
        simweb_cpu_secs: simweb_cpu,
        machine_busy,
        host_gaps: bench::gaps(),
        worker_stats,
        samples,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steady_rate_spans_the_middle_80_percent() {
        // One job ending every second from t = 1: 800 jobs between t = 100 and t = 900.
        let ends: Vec<f64> = (1..=1000).map(f64::from).collect();
        assert!(
            (steady_rate(&ends) - 60.0).abs() < 0.1,
            "{}",
            steady_rate(&ends)
        );
        assert_eq!(steady_rate(&[5.0; 20]), 0.0);
    }

    #[test]
    fn the_bound_is_the_first_limit_a_stage_met() {
        let stats = |cpu, share, bytes, rate| StageStats {
            cpu_per_worker: cpu,
            in_flight_share: share,
            bytes_share: bytes,
            rate_limit_share: rate,
            saturated: 0.9,
            ..StageStats::default()
        };
        assert_eq!(bound(&stats(0.95, 1.0, 0.1, 0.0)), "CPU");
        assert_eq!(
            bound(&stats(0.1, 1.0, 0.1, 0.0)),
            "in-flight messages (prefetch)"
        );
        assert_eq!(bound(&stats(0.1, 0.4, 0.95, 0.0)), "in-flight bytes");
        assert_eq!(bound(&stats(0.1, 1.0, 0.1, 0.6)), "rate limit");
        assert_eq!(bound(&stats(0.1, 0.3, 0.1, 0.0)), "outside calls' latency");
        let idle = StageStats {
            saturated: 0.1,
            ..stats(0.1, 0.1, 0.1, 0.0)
        };
        assert_eq!(bound(&idle), "work from earlier stages");
    }

    #[test]
    fn ties_in_saturation_go_to_the_later_stage() {
        let stage = |saturated| StageStats {
            saturated,
            ..StageStats::default()
        };
        let stages = BTreeMap::from([
            (Stage::Search, stage(0.2)),
            (Stage::Fetch, stage(0.91)),
            (Stage::Clean, stage(0.90)),
            (Stage::Synthesize, stage(0.0)),
        ]);
        assert_eq!(bottleneck(&stages), Stage::Clean);
        let stages = BTreeMap::from([(Stage::Search, stage(0.9)), (Stage::Fetch, stage(0.5))]);
        assert_eq!(bottleneck(&stages), Stage::Search);
    }

    #[test]
    fn page_requests_count_source_pages_on_bench_hosts_only() {
        let row = |h: &str, p: &str, n| (h.to_owned(), p.to_owned(), n);
        let snapshot = [
            row("bench-3.test", "/q/0/1", 2),
            row("bench-3.test", "/robots.txt", 1),
            row("bench-7.test", "/q/5/0", 1),
            row("bench-7.test", "/page/5", 4),
            row("127.0.0.1", "/v1/chat/completions", 9),
            row("daily-orbit.test", "/q/0/1", 3),
        ];
        assert_eq!(page_requests(&snapshot), (3, 2));
    }

    #[test]
    fn percentiles_take_the_nearest_rank() {
        let v: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(percentile(&v, 0.5), 10.0);
        assert_eq!(percentile(&v, 0.95), 19.0);
        assert_eq!(percentile(&v, 1.0), 20.0);
        assert_eq!(percentile(&[], 0.5), 0.0);
    }
}

/// The fields `--fields` asks every question for.
fn fields() -> trawl_messages::Fields {
    let schema = serde_json::json!({"type": "object", "properties": {
        "year": {"type": "integer"},
        "author": {"type": "string"},
        "figure": {"type": "number"},
    }});
    trawl_messages::Fields::parse(schema).expect("a valid schema")
}
