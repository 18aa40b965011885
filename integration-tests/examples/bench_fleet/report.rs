//! What the runs add up to: the text printed after each run and the targets of issue 10
//! ([`crate::files`] writes the same to the output directory).

use std::fmt::Write as _;

use serde::Serialize;

use crate::run::{Run, StageStats};
use crate::Stage;

/// Targets on the 2-core machine, LLM latency and browser levels excluded (issue 10).
const PAGE_CPU_MS: f64 = 5.0;
const JOB_CPU_MS: f64 = 60.0;
const IDLE_RSS_MB: f64 = 30.0;
const PEAK_RSS_MB: f64 = 150.0;
const SCALING_OF_LINEAR: f64 = 0.85;

#[derive(Debug, Serialize)]
pub struct Machine {
    pub cores: usize,
    pub cpu: String,
    pub memory_gb: f64,
    pub kernel: String,
    /// 1, 5 and 15 minute load averages when the benchmark started.
    pub load_average: String,
}

impl Machine {
    pub fn read() -> Machine {
        let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
        let cpuinfo = read("/proc/cpuinfo");
        let meminfo = read("/proc/meminfo");
        let field = |text: &str, key: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(key))
                .map(|v| v.trim_start_matches([' ', '\t', ':']).trim().to_owned())
                .unwrap_or_default()
        };
        let mem_kb: f64 = field(&meminfo, "MemTotal")
            .trim_end_matches("kB")
            .trim()
            .parse()
            .unwrap_or(0.0);
        Machine {
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            cpu: field(&cpuinfo, "model name"),
            memory_gb: mem_kb / 1024.0 / 1024.0,
            kernel: read("/proc/sys/kernel/osrelease").trim().to_owned(),
            load_average: read("/proc/loadavg")
                .split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" "),
        }
    }

    pub fn line(&self) -> String {
        format!(
            "machine: {} cores ({}), {:.1} GB, Linux {}; load average {} at the start \
             (other work on the machine skews every figure)",
            self.cores, self.cpu, self.memory_gb, self.kernel, self.load_average
        )
    }
}

/// What doubling one stage's workers did.
#[derive(Debug, Serialize)]
pub struct Scaling {
    pub stage: Stage,
    pub from: usize,
    pub to: usize,
    /// Jobs/min of the second run over the first: what a user's batch gains.
    pub speedup: f64,
    /// The same between 10 % and 90 % of jobs ended; noisy when jobs end in a burst.
    pub steady_speedup: f64,
    /// Speedup over the linear one (to / from).
    pub of_linear: f64,
    /// Whether the doubled stage bounded the first run; if not, no speedup is expected.
    pub was_bottleneck: bool,
    pub bottleneck_after: Stage,
    pub machine_busy_before: f64,
}

impl Scaling {
    pub fn of(base: &Run, doubled: &Run) -> Scaling {
        let stage = doubled
            .workers
            .iter()
            .find(|(s, n)| base.workers.get(s) != Some(n))
            .map(|(&s, _)| s)
            .unwrap_or(base.bottleneck);
        let (from, to) = (base.workers[&stage], doubled.workers[&stage]);
        let speedup = ratio(doubled.jobs_per_min, base.jobs_per_min);
        Scaling {
            stage,
            from,
            to,
            speedup,
            steady_speedup: ratio(doubled.steady_jobs_per_min, base.steady_jobs_per_min),
            of_linear: speedup / (to as f64 / from as f64),
            was_bottleneck: base.bottleneck == stage,
            bottleneck_after: doubled.bottleneck,
            machine_busy_before: base.machine_busy,
        }
    }

    pub fn text(&self) -> String {
        let mut t = format!(
            "scaling: {} workers {} → {}: jobs/min ×{:.2} = {:.0} % of linear (steady rate ×{:.2})",
            self.stage.name(),
            self.from,
            self.to,
            self.speedup,
            self.of_linear * 100.0,
            self.steady_speedup
        );
        if !self.was_bottleneck {
            t.push_str(&format!(
                " (but {} was not the bottleneck of the base run)",
                self.stage.name()
            ));
        }
        let _ = write!(
            t,
            "; bottleneck now {}; machine CPU {:.0} % busy during the base run",
            self.bottleneck_after.name(),
            self.machine_busy_before * 100.0
        );
        t
    }
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        0.0
    }
}

#[derive(Debug, Serialize)]
pub struct Results {
    pub machine: Machine,
    pub command: String,
    pub questions: usize,
    /// Simulated LLM latency per request; absent when the run had no `[llm]`.
    pub llm_latency_ms: Option<u64>,
    /// `llm.tokens_per_minute` the fleet and simweb's LLM were given.
    pub llm_tokens_per_minute: Option<u64>,
    pub runs: Vec<Run>,
    pub scaling: Option<Scaling>,
    /// `--overlap`: the page cache off against on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overlap: Option<Overlap>,
}

/// Pages fetched may exceed the distinct pages by this much with the cache on (issue 44).
const FETCHED_PER_DISTINCT: f64 = 1.1;

/// `--overlap`: one batch of questions whose sources overlap, with the fleet's page cache off
/// and then on, each run from an empty cache.
#[derive(Debug, Serialize)]
pub struct Overlap {
    /// Groups of questions that select the same sources.
    pub groups: usize,
    /// Distinct source pages the batch's questions select.
    pub distinct_pages: u64,
    /// Page requests simweb answered (robots.txt not counted), each run.
    pub fetched_cache_off: u64,
    pub fetched_cache_on: u64,
    /// `fetched_cache_on` over `distinct_pages`; issue 44 asks for at most 1.1.
    pub fetched_per_distinct: f64,
    /// Every worker's CPU per job, each run.
    pub cpu_ms_per_job_cache_off: f64,
    pub cpu_ms_per_job_cache_on: f64,
    /// Cache on over cache off.
    pub cpu_on_over_off: f64,
    pub cache_off: String,
    pub cache_on: String,
}

impl Overlap {
    pub fn of(groups: usize, distinct_pages: u64, off: &Run, on: &Run) -> Overlap {
        Overlap {
            groups,
            distinct_pages,
            fetched_cache_off: off.page_requests,
            fetched_cache_on: on.page_requests,
            fetched_per_distinct: ratio(on.page_requests as f64, distinct_pages as f64),
            cpu_ms_per_job_cache_off: off.trawl_cpu_ms_per_job,
            cpu_ms_per_job_cache_on: on.trawl_cpu_ms_per_job,
            cpu_on_over_off: ratio(on.trawl_cpu_ms_per_job, off.trawl_cpu_ms_per_job),
            cache_off: off.label.clone(),
            cache_on: on.label.clone(),
        }
    }

    pub fn fetched_met(&self) -> bool {
        self.fetched_cache_on as f64 <= FETCHED_PER_DISTINCT * self.distinct_pages as f64
    }

    /// The two lines issue 44 asks for.
    pub fn summary(&self) -> String {
        format!(
            "pages fetched {} for {} distinct ({:.2} × distinct with the cache on, goal ≤ {} ×: {}; \
             {} with it off)\n\
             CPU per job: cache on {:.1} ms, cache off {:.1} ms (on/off {:.2})",
            self.fetched_cache_on,
            self.distinct_pages,
            self.fetched_per_distinct,
            FETCHED_PER_DISTINCT,
            verdict(Some(self.fetched_met())),
            self.fetched_cache_off,
            self.cpu_ms_per_job_cache_on,
            self.cpu_ms_per_job_cache_off,
            self.cpu_on_over_off
        )
    }

    /// The runs side by side, then [`Overlap::summary`].
    pub fn text(&self, off: &Run, on: &Run) -> String {
        let mut t = format!(
            "\npage cache: {} questions in {} groups sharing their sources, {} distinct pages; \
             the same batch with the cache off and on, each from an empty cache\n",
            on.jobs, self.groups, self.distinct_pages
        );
        let _ = writeln!(
            t,
            "  {:<30} {:>11} {:>11} {:>8}",
            "", "cache off", "cache on", "on/off"
        );
        let mut row = |what: &str, a: f64, b: f64, unit: &str, digits: usize| {
            let _ = writeln!(
                t,
                "  {what:<30} {:>11} {:>11} {:>8}",
                format!("{a:.digits$}{unit}"),
                format!("{b:.digits$}{unit}"),
                if a > 0.0 {
                    format!("{:.2}", b / a)
                } else {
                    "-".to_owned()
                }
            );
        };
        row(
            "pages fetched",
            off.page_requests as f64,
            on.page_requests as f64,
            "",
            0,
        );
        row(
            "distinct pages fetched",
            off.distinct_pages_requested as f64,
            on.distinct_pages_requested as f64,
            "",
            0,
        );
        for (what, f) in [
            (
                "fetch cache hits",
                (|s: &StageStats| s.cache_hits) as fn(&StageStats) -> u64,
            ),
            ("fetch cache misses", |s| s.cache_misses),
            ("fetch cache revalidated", |s| s.cache_revalidated),
        ] {
            let of = |r: &Run| r.stages.get(&Stage::Fetch).map_or(0, f) as f64;
            row(what, of(off), of(on), "", 0);
        }
        row(
            "trawl CPU per job",
            off.trawl_cpu_ms_per_job,
            on.trawl_cpu_ms_per_job,
            " ms",
            1,
        );
        for stage in Stage::ALL {
            if let (Some(a), Some(b)) = (off.stages.get(&stage), on.stages.get(&stage)) {
                row(
                    &format!("{} CPU per job", stage.name()),
                    a.cpu_ms_per_job,
                    b.cpu_ms_per_job,
                    " ms",
                    1,
                );
            }
        }
        row("jobs per minute", off.jobs_per_min, on.jobs_per_min, "", 1);
        row(
            "latency p50",
            off.latency_p50_secs,
            on.latency_p50_secs,
            " s",
            1,
        );
        row(
            "sources per job",
            off.sources_per_job,
            on.sources_per_job,
            "",
            1,
        );
        t.push_str(&self.summary());
        t
    }
}

pub fn workers_text(run: &Run) -> String {
    run.workers
        .iter()
        .map(|(s, n)| format!("{} {n}", s.name()))
        .collect::<Vec<_>>()
        .join(" · ")
}

fn counts_text(counts: &std::collections::BTreeMap<String, u64>) -> String {
    counts
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// Share of the machine's CPU this run's processes used: workers, RabbitMQ, Redis, simweb.
fn own_busy(run: &Run) -> f64 {
    let trawl: f64 = run.stages.values().map(|s| s.cpu_secs).sum();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    (trawl + run.services_cpu_secs + run.simweb_cpu_secs) / (run.wall_secs * cores).max(1e-9)
}

/// Why the bottleneck is slow, as far as the numbers say.
fn bottleneck_text(run: &Run) -> String {
    let s = &run.stages[&run.bottleneck];
    let why = match s.bound.as_str() {
        "CPU" => "CPU-bound: more workers need more cores".to_owned(),
        _ if run.machine_busy > 0.85 => format!(
            "bound by {}, and the machine's CPU was {:.0} % busy ({:.0} % this run's), which \
             slows every stage",
            s.bound,
            run.machine_busy * 100.0,
            own_busy(run) * 100.0
        ),
        bound => format!(
            "bound by {bound}: {:.0} messages in flight per worker, {:.0} % of its prefetch and \
             {:.0} % of its byte cap; {:.0} % of their time waiting for a rate limit, {:.0} % for \
             hosts' turns",
            s.mean_in_flight,
            s.in_flight_share * 100.0,
            s.bytes_share * 100.0,
            s.rate_limit_share * 100.0,
            s.politeness_share * 100.0
        ),
    };
    format!(
        "bottleneck: {} (work waited in its queue {:.0} % of the run; {:.2} of a core per worker, {why})",
        run.bottleneck.name(),
        s.saturated * 100.0,
        s.cpu_per_worker
    )
}

const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// One text line per queue: the most messages ready in each of `columns` time slices, scaled
/// to that queue's own maximum.
pub fn sparklines(run: &Run, columns: usize) -> String {
    let end = run.samples.last().map_or(0.0, |s| s.t).max(1e-9);
    let mut out = format!(
        "queue depth (messages ready), 0–{end:.0} s, {:.1} s a column:\n",
        end / columns as f64
    );
    for &stage in run.workers.keys() {
        let mut cols: Vec<Option<u64>> = vec![None; columns];
        for s in &run.samples {
            let c = ((s.t / end * columns as f64) as usize).min(columns - 1);
            cols[c] = Some(cols[c].unwrap_or(0).max(s.ready[&stage]));
        }
        // A slice no sample fell in (columns shorter than the sampling interval) shows the
        // slice before it, not an empty queue.
        let mut last = 0;
        let cols: Vec<u64> = cols
            .into_iter()
            .map(|c| {
                last = c.unwrap_or(last);
                last
            })
            .collect();
        let max = cols.iter().copied().max().unwrap_or(0);
        let line: String = cols
            .iter()
            .map(|&v| {
                if v == 0 {
                    ' '
                } else {
                    let level = (v as f64 / max as f64 * 8.0).ceil() as usize;
                    BARS[level.clamp(1, 8) - 1]
                }
            })
            .collect();
        let _ = writeln!(out, "  {:<11}|{line}| max {max}", stage.name());
    }
    out
}

pub fn run_text(run: &Run) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "\n== run {}: {}", run.label, workers_text(run));
    let _ = writeln!(
        t,
        "{} jobs in {:.1} s: {:.1} jobs/min (steady {:.1}); latency p50 {:.1} s, p95 {:.1} s, max {:.1} s \
         (submission to report; the batch went in within {:.1} s)",
        run.jobs,
        run.wall_secs,
        run.jobs_per_min,
        run.steady_jobs_per_min,
        run.latency_p50_secs,
        run.latency_p95_secs,
        run.latency_max_secs,
        run.submit_secs
    );
    let _ = writeln!(
        t,
        "jobs: {}; sources {:.1}/job: {}; {} pages fetched and cleaned; {:.1} LLM requests/job; {} dead letters",
        counts_text(&run.statuses),
        run.sources_per_job,
        counts_text(&run.outcomes),
        run.pages,
        run.llm_requests as f64 / run.jobs.max(1) as f64,
        run.dead_letters
    );
    let cache = |stage: Stage, f: fn(&StageStats) -> u64| run.stages.get(&stage).map_or(0, f);
    let _ = writeln!(
        t,
        "source pages fetched from simweb: {} requests for {} distinct pages; page cache: fetch \
         {} hits, {} misses, {} revalidated; clean {} hits, {} misses",
        run.page_requests,
        run.distinct_pages_requested,
        cache(Stage::Fetch, |s| s.cache_hits),
        cache(Stage::Fetch, |s| s.cache_misses),
        cache(Stage::Fetch, |s| s.cache_revalidated),
        cache(Stage::Clean, |s| s.cache_hits),
        cache(Stage::Clean, |s| s.cache_misses),
    );
    let _ = writeln!(
        t,
        "{:<11}{:>8}{:>9}{:>12}{:>12}{:>14}{:>11}{:>12}{:>11}{:>11}  bound",
        "stage",
        "workers",
        "CPU s",
        "CPU ms/job",
        "CPU/worker",
        "handling ms/j",
        "saturated",
        "mean ready",
        "max ready",
        "in flight"
    );
    for (stage, s) in &run.stages {
        let _ = writeln!(
            t,
            "{:<11}{:>8}{:>9.1}{:>12.2}{:>12.2}{:>14}{:>10.0}%{:>12.1}{:>11}{:>11.1}  {}",
            stage.name(),
            s.workers,
            s.cpu_secs,
            s.cpu_ms_per_job,
            s.cpu_per_worker,
            s.handling_ms_per_job
                .map_or("-".to_owned(), |ms| format!("{ms:.0}")),
            s.saturated * 100.0,
            s.mean_ready,
            s.max_ready,
            s.mean_in_flight,
            s.bound
        );
    }
    let _ = writeln!(
        t,
        "trawl CPU {:.1} ms/job; fetch+clean {:.2} ms/page; RabbitMQ+Redis {:.1} s, {:.1} ms/job \
         over their background of {:.2} CPU s/s before the run; simweb and this driver {:.1} s; \
         machine CPU {:.0} % busy ({:.0} % this run's)",
        run.trawl_cpu_ms_per_job,
        run.cpu_ms_per_page,
        run.services_cpu_secs,
        (run.services_cpu_secs - run.services_idle_cpu_per_sec * run.wall_secs).max(0.0)
            / run.jobs.max(1) as f64
            * 1000.0,
        run.services_idle_cpu_per_sec,
        run.simweb_cpu_secs,
        run.machine_busy * 100.0,
        own_busy(run) * 100.0
    );
    let _ = writeln!(
        t,
        "{:<14}{:>9}{:>9}{:>8}  exit",
        "worker", "idle MB", "peak MB", "CPU s"
    );
    let mut index = std::collections::BTreeMap::<Stage, usize>::new();
    for w in &run.worker_stats {
        let i = index.entry(w.stage).or_default();
        let _ = writeln!(
            t,
            "{:<14}{:>9.1}{:>9.1}{:>8.1}  {}",
            format!("{}-{i}", w.stage.name()),
            w.idle_rss_mb,
            w.peak_rss_mb,
            w.cpu_secs,
            w.exit
        );
        *i += 1;
    }
    let _ = writeln!(
        t,
        "LLM: at most {} tokens answered in any minute (largest call {}), as the provider counts them; \
         {} requests refused with a 429; {} calls failed for good",
        run.llm_peak_tokens_per_minute,
        run.llm_largest_call_tokens,
        run.llm_rate_limited,
        run.llm_failed
    );
    let g = &run.host_gaps;
    let ms = |k: &str| g[k].as_f64().map_or("-".to_owned(), |v| format!("{v:.0}"));
    let _ = writeln!(
        t,
        "per-host spacing of page requests (ms): min {}, p1 {}, median {} over {} gaps on {} hosts",
        ms("min_ms"),
        ms("p01_ms"),
        ms("median_ms"),
        g["gaps"],
        g["hosts"]
    );
    t.push_str(&sparklines(run, 60));
    t.push_str(&bottleneck_text(run));
    t
}

/// The same workers with their output on a local directory and on S3, side by side.
pub fn output_text(file: &Run, s3: &Run) -> String {
    let peak = |run: &Run| {
        (run.worker_stats.iter())
            .map(|w| w.peak_rss_mb)
            .fold(0.0, f64::max)
    };
    let ratio = |a: f64, b: f64| if a > 0.0 { b / a } else { f64::NAN };
    let mut t = String::from("\noutput on file:// and on s3:// (same workers, same batch)\n");
    t.push_str(&format!(
        "  {:<26} {:>10} {:>10} {:>8}\n",
        "", "file://", "s3://", "s3/file"
    ));
    let mut row = |what: &str, a: f64, b: f64, unit: &str| {
        t.push_str(&format!(
            "  {what:<26} {a:>8.2}{unit} {b:>8.2}{unit} {:>8.2}\n",
            ratio(a, b)
        ));
    };
    row(
        "trawl CPU per job",
        file.trawl_cpu_ms_per_job,
        s3.trawl_cpu_ms_per_job,
        "ms",
    );
    row(
        "fetch+clean CPU per page",
        file.cpu_ms_per_page,
        s3.cpu_ms_per_page,
        "ms",
    );
    for stage in Stage::ALL {
        if let (Some(a), Some(b)) = (file.stages.get(&stage), s3.stages.get(&stage)) {
            row(
                &format!("{} CPU per job", stage.name()),
                a.cpu_ms_per_job,
                b.cpu_ms_per_job,
                "ms",
            );
        }
    }
    row("peak RSS, largest worker", peak(file), peak(s3), "MB");
    row("jobs per minute", file.jobs_per_min, s3.jobs_per_min, "  ");
    t
}

pub struct Target {
    pub what: String,
    pub measured: String,
    pub goal: String,
    pub met: Option<bool>,
}

pub fn targets(results: &Results) -> Vec<Target> {
    let Some(base) = results.runs.first() else {
        return Vec::new();
    };
    let max_of = |f: fn(&crate::run::WorkerStats) -> f64| {
        results
            .runs
            .iter()
            .flat_map(|r| &r.worker_stats)
            .map(f)
            .fold(0.0, f64::max)
    };
    let idle = max_of(|w| w.idle_rss_mb);
    let peak = max_of(|w| w.peak_rss_mb);
    let mut out = vec![
        Target {
            what: "fetch+clean CPU per page".into(),
            measured: format!("{:.2} ms", base.cpu_ms_per_page),
            goal: format!("< {PAGE_CPU_MS} ms"),
            met: Some(base.cpu_ms_per_page < PAGE_CPU_MS),
        },
        Target {
            what: format!("trawl CPU per job ({:.1} sources)", base.sources_per_job),
            measured: format!("{:.1} ms", base.trawl_cpu_ms_per_job),
            goal: format!("< {JOB_CPU_MS} ms"),
            met: Some(base.trawl_cpu_ms_per_job < JOB_CPU_MS),
        },
        Target {
            what: "idle RSS, largest worker".into(),
            measured: format!("{idle:.1} MB"),
            goal: format!("< {IDLE_RSS_MB} MB"),
            met: Some(idle < IDLE_RSS_MB),
        },
        Target {
            what: "peak RSS, largest worker".into(),
            measured: format!("{peak:.1} MB"),
            goal: format!("< {PEAK_RSS_MB} MB"),
            met: Some(peak < PEAK_RSS_MB),
        },
    ];
    if let Some(limit) = results.llm_tokens_per_minute {
        for run in &results.runs {
            let most = limit + run.llm_largest_call_tokens;
            out.push(Target {
                what: format!("LLM tokens in any minute ({})", run.label),
                measured: run.llm_peak_tokens_per_minute.to_string(),
                goal: format!("<= {most}"),
                met: Some(run.llm_peak_tokens_per_minute <= most),
            });
            out.push(Target {
                what: format!("LLM calls failed, 429s ({})", run.label),
                measured: format!("{}, {}", run.llm_failed, run.llm_rate_limited),
                goal: "0, any".into(),
                met: Some(run.llm_failed == 0),
            });
        }
    }
    if let Some(o) = &results.overlap {
        out.push(Target {
            what: "pages fetched, cache on (--overlap)".into(),
            measured: format!("{} for {}", o.fetched_cache_on, o.distinct_pages),
            goal: format!(
                "<= {:.0}",
                (FETCHED_PER_DISTINCT * o.distinct_pages as f64).floor()
            ),
            met: Some(o.fetched_met()),
        });
        out.push(Target {
            what: "trawl CPU per job, cache on / off".into(),
            measured: format!(
                "{:.1} / {:.1} ms",
                o.cpu_ms_per_job_cache_on, o.cpu_ms_per_job_cache_off
            ),
            goal: "on < off".into(),
            met: Some(o.cpu_ms_per_job_cache_on < o.cpu_ms_per_job_cache_off),
        });
    }
    if let Some(s) = &results.scaling {
        out.push(Target {
            what: format!("{} workers {} → {}", s.stage.name(), s.from, s.to),
            measured: format!("{:.0} % of linear", s.of_linear * 100.0),
            goal: format!(">= {:.0} %", SCALING_OF_LINEAR * 100.0),
            // Only a bottleneck doubled while CPU is free is expected to scale.
            met: (s.was_bottleneck && s.machine_busy_before < 0.8)
                .then_some(s.of_linear >= SCALING_OF_LINEAR),
        });
    }
    out
}

pub fn verdict(met: Option<bool>) -> &'static str {
    match met {
        Some(true) => "met",
        Some(false) => "MISSED",
        None => "n/a",
    }
}

pub fn targets_text(results: &Results) -> String {
    let issues = if results.overlap.is_some() {
        "10, 24 and 44"
    } else {
        "10 and 24"
    };
    let mut t = format!(
        "\ntargets of issues {issues} (LLM latency and browser levels excluded; broker overhead: scripts/bench-broker)\n",
    );
    for x in targets(results) {
        let _ = writeln!(
            t,
            "  {:<34}{:>18}  {:<12}{}",
            x.what,
            x.measured,
            x.goal,
            verdict(x.met)
        );
    }
    if results
        .scaling
        .as_ref()
        .is_some_and(|s| !s.was_bottleneck || s.machine_busy_before >= 0.8)
    {
        t.push_str(
            "  (scaling n/a: the doubled stage did not bound the base run, or CPU was not free)\n",
        );
    }
    t
}
