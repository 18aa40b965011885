//! The driver of `scripts/bench-fleet`: trawl as a fleet, measured end to end.
//!
//! One run starts simweb in this process (with a simulated LLM latency), N release worker
//! processes per stage on the local RabbitMQ and Redis under a namespace of their own, submits
//! a batch of simweb's fleet questions (each finds ten 10–40 KB pages spread over a thousand
//! hosts, fetched under the default per-host politeness), and samples every half second until
//! the batch ends: messages ready in each stage's queue, and each worker's CPU time and memory
//! from the kernel's own accounting (`/proc/PID/stat`, `/proc/PID/status`). The jobs'
//! `job.json` give their latencies. A second run with one stage's workers doubled (by default
//! the stage that bounded the first) shows what adding workers buys. `--overlap` instead runs
//! a batch of questions that share their sources twice, the page cache off and then on, and
//! compares the pages fetched and the CPU per job ([`report::Overlap`]). `--fields` asks every
//! question for three fields as data, to compare its CPU per job with a run without.
//!
//! Modules: [`fleet`] starts and stops one run's workers; [`measure`] submits the batch and
//! samples it to its end into a [`run::Run`]; `trawl_integration_tests::procfs` reads the kernel's accounting;
//! [`report`] turns runs into the printed summary, and [`files`] into `results.json`,
//! `results.md` and an SVG of queue depth over time.

mod files;
mod fleet;
mod measure;
mod report;
mod run;
mod scrape;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context as _};
use clap::Parser;
use trawl_integration_tests::simweb::{fleet as questions, Corpus, Options, Simweb};
use trawl_messages::Queue;

/// A stage of the pipeline as the benchmark sees it: a binary and the queue it consumes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    Search,
    Fetch,
    Clean,
    Synthesize,
}

impl Stage {
    /// In pipeline order.
    pub const ALL: [Stage; 4] = [Stage::Search, Stage::Fetch, Stage::Clean, Stage::Synthesize];

    pub fn name(self) -> &'static str {
        match self {
            Stage::Search => "search",
            Stage::Fetch => "fetch",
            Stage::Clean => "clean",
            Stage::Synthesize => "synthesize",
        }
    }

    pub fn binary(self) -> String {
        format!("trawl-{}", self.name())
    }

    pub fn queue(self) -> Queue {
        match self {
            Stage::Search => Queue::Search,
            Stage::Fetch => Queue::Fetch,
            Stage::Clean => Queue::Clean,
            Stage::Synthesize => Queue::Synthesize,
        }
    }

    fn parse(s: &str) -> Option<Stage> {
        Stage::ALL.into_iter().find(|st| st.name() == s)
    }
}

/// Workers per stage.
pub type Workers = BTreeMap<Stage, usize>;

#[derive(Parser, Debug)]
#[command(about = "trawl's throughput as a fleet: jobs/minute, latency, CPU and memory per stage")]
pub struct Args {
    /// Questions in the batch (simweb fleet questions 0..N).
    #[arg(long, default_value_t = 1000)]
    pub questions: usize,
    /// Worker processes per stage.
    #[arg(long, default_value_t = 1)]
    pub workers: usize,
    /// After the first run, run again with this stage's workers doubled: search, fetch, clean,
    /// synthesize, `auto` (the stage that bounded the first run) or `none`.
    #[arg(long, default_value = "auto")]
    pub double: String,
    /// Latency simweb adds to every LLM request.
    #[arg(long, default_value_t = 200)]
    pub llm_latency_ms: u64,
    /// Run without `[llm]`: every stage takes its non-LLM path.
    #[arg(long)]
    pub no_llm: bool,
    /// Give the fleet `llm.tokens_per_minute` = N and simweb's LLM the same limit (429 with
    /// Retry-After past it): the run then reports the most tokens the fleet sent in any
    /// minute, as the provider counted them, against N plus one call.
    #[arg(long, value_name = "N", conflicts_with = "no_llm", value_parser = clap::value_parser!(u64).range(1..))]
    pub llm_tokens_per_minute: Option<u64>,
    /// Where results.json, results.md, the queue-depth SVGs and the workers' logs go.
    #[arg(long, default_value = "target/bench-fleet")]
    pub out: PathBuf,
    /// Directory holding the release worker binaries (default: this example's target dir).
    #[arg(long)]
    pub bins: Option<PathBuf>,
    /// Milliseconds between two samples.
    #[arg(long, default_value_t = 500)]
    pub sample_ms: u64,
    /// Give up on a run after this long.
    #[arg(long, default_value_t = 3600)]
    pub timeout_secs: u64,
    /// Run the first run's workers again with the results and work products on S3 (s3rver,
    /// as scripts/services-up starts it) instead of a local directory, and compare the two.
    #[arg(long)]
    pub compare_s3: bool,
    /// Keep each run's work products (reports, job.json …) under OUT/objects-<run>.
    #[arg(long)]
    pub keep: bool,
    /// The fleet's page cache: questions whose sources overlap (groups of questions that
    /// select the same ten pages, 200 distinct pages in all), run with the cache off and then
    /// on, each from an empty cache; prints the pages fetched against the distinct pages and
    /// the CPU per job of both runs. No doubled run.
    #[arg(long, conflicts_with = "compare_s3")]
    pub overlap: bool,
    /// Every question asks for three fields as data (a year, a name and a number; see
    /// docs/fields.md): compare its CPU per job with a run without.
    #[arg(long)]
    pub fields: bool,
}

/// Ctrl-C: the run stopped its workers and removed its queues and keys; not a failure to
/// explain with a backtrace.
#[derive(Debug)]
pub struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted")
    }
}

impl std::error::Error for Interrupted {}

#[tokio::main]
async fn main() -> anyhow::Result<ExitCode> {
    match bench(Args::parse()).await {
        Err(e) if e.is::<Interrupted>() => {
            eprintln!("bench-fleet: interrupted; the run's workers, queues and keys are gone");
            Ok(ExitCode::from(130))
        }
        other => other.map(|()| ExitCode::SUCCESS),
    }
}

async fn bench(args: Args) -> anyhow::Result<()> {
    if args.questions == 0 || args.questions > questions::MAX_QUESTIONS {
        bail!("--questions must be 1 to {}", questions::MAX_QUESTIONS);
    }
    if args.workers == 0 {
        bail!("--workers must be at least 1");
    }
    if args.overlap && !["auto", "none"].contains(&args.double.as_str()) {
        bail!("--overlap runs no doubled run: leave out --double");
    }
    let double = match args.double.as_str() {
        _ if args.overlap => None,
        "none" => None,
        "auto" => Some(None),
        s => Some(Some(Stage::parse(s).with_context(|| {
            format!("--double takes search, fetch, clean, synthesize, auto or none, not {s:?}")
        })?)),
    };
    let bins = trawl_integration_tests::benchkit::release_bins(args.bins.as_deref())?;
    for stage in Stage::ALL {
        let path = bins.join(stage.binary());
        if !path.exists() {
            bail!(
                "{} is missing: build the workers first (cargo build --release --workspace --bins)",
                path.display()
            );
        }
    }
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("failed to create {}", args.out.display()))?;

    let options = Options {
        llm_latency: Duration::from_millis(args.llm_latency_ms),
        llm_tokens_per_minute: args.llm_tokens_per_minute,
        ..Options::default()
    };
    let web = Simweb::start_with(
        Arc::new(Corpus::generate()),
        "127.0.0.1:0".parse()?,
        options,
    )
    .await
    .context("failed to start simweb")?;
    let batch = if args.overlap {
        questions::overlap_questions(args.questions)
    } else {
        questions::questions(args.questions)
    };
    let distinct = questions::distinct_sources(&batch).len() as u64;
    let machine = report::Machine::read();
    eprintln!("{}", machine.line());
    eprintln!(
        "bench-fleet: {} questions × {} sources ({distinct} distinct pages) over {} hosts, \
         {} worker(s) per stage, LLM {}",
        args.questions,
        questions::SOURCES,
        questions::HOSTS,
        args.workers,
        if args.no_llm {
            "off".to_owned()
        } else {
            let limit = (args.llm_tokens_per_minute)
                .map_or(String::new(), |n| format!(", {n} tokens a minute"));
            format!("simulated, {} ms a request{limit}", args.llm_latency_ms)
        }
    );

    let base: Workers = Stage::ALL.iter().map(|&s| (s, args.workers)).collect();
    if args.overlap {
        return overlap(&args, &bins, &web, &base, &batch, distinct, machine).await;
    }
    let first = fleet::run(
        &args,
        &bins,
        &web,
        "base",
        &base,
        &batch,
        fleet::Setup::FILE,
    )
    .await?;
    println!("{}", report::run_text(&first));
    let mut runs = vec![first];
    let on_s3 = if args.compare_s3 {
        let s3 = fleet::run(
            &args,
            &bins,
            &web,
            "base-s3",
            &base,
            &batch,
            fleet::Setup {
                output: fleet::Output::S3,
                cache: fleet::Cache::AsConfigured,
            },
        )
        .await?;
        println!("{}", report::run_text(&s3));
        println!("{}", report::output_text(&runs[0], &s3));
        Some(s3)
    } else {
        None
    };
    if let Some(choice) = double {
        let stage = choice.unwrap_or(runs[0].bottleneck);
        let mut doubled = base.clone();
        doubled.insert(stage, args.workers * 2);
        let label = format!("{}x2", stage.name());
        let second = fleet::run(
            &args,
            &bins,
            &web,
            &label,
            &doubled,
            &batch,
            fleet::Setup::FILE,
        )
        .await?;
        println!("{}", report::run_text(&second));
        runs.push(second);
    }
    let scaling = (runs.len() == 2).then(|| report::Scaling::of(&runs[0], &runs[1]));
    runs.extend(on_s3);
    if let Some(s) = &scaling {
        println!("{}", s.text());
    }
    let results = report::Results {
        machine,
        command: std::env::args().collect::<Vec<_>>().join(" "),
        questions: args.questions,
        llm_latency_ms: (!args.no_llm).then_some(args.llm_latency_ms),
        llm_tokens_per_minute: args.llm_tokens_per_minute,
        runs,
        scaling,
        overlap: None,
    };
    finish(&args, &results)
}

/// `--overlap`: the batch with the page cache off, then on, each on a namespace and object
/// store of its own (so each cache starts empty), and the two compared.
async fn overlap(
    args: &Args,
    bins: &std::path::Path,
    web: &Simweb,
    workers: &Workers,
    batch: &[String],
    distinct: u64,
    machine: report::Machine,
) -> anyhow::Result<()> {
    let mut runs = Vec::new();
    for (label, cache) in [
        ("cache-off", fleet::Cache::Off),
        ("cache-on", fleet::Cache::On),
    ] {
        let run = fleet::run(
            args,
            bins,
            web,
            label,
            workers,
            batch,
            fleet::Setup {
                output: fleet::Output::File,
                cache,
            },
        )
        .await?;
        println!("{}", report::run_text(&run));
        runs.push(run);
    }
    let overlap = report::Overlap::of(
        questions::OVERLAP_GROUPS.min(args.questions),
        distinct,
        &runs[0],
        &runs[1],
    );
    println!("{}", overlap.text(&runs[0], &runs[1]));
    let results = report::Results {
        machine,
        command: std::env::args().collect::<Vec<_>>().join(" "),
        questions: args.questions,
        llm_latency_ms: (!args.no_llm).then_some(args.llm_latency_ms),
        llm_tokens_per_minute: args.llm_tokens_per_minute,
        runs,
        scaling: None,
        overlap: Some(overlap),
    };
    finish(args, &results)
}

/// The targets, and the output directory's files.
fn finish(args: &Args, results: &report::Results) -> anyhow::Result<()> {
    println!("{}", report::targets_text(results));
    files::write(&args.out, results)?;
    eprintln!(
        "bench-fleet: wrote {}/results.json, results.md and queue-depth-*.svg",
        args.out.display()
    );
    Ok(())
}
