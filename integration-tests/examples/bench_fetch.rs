//! The trawl side of `scripts/bench-fetch`: trawl's real fetch stage (the worker loop, the SSRF
//! guard, robots.txt cached in Redis, the shared per-host rate limit in Redis, HTTP, charset
//! decoding, and a confirmed publish of each page to the clean queue) over the local RabbitMQ and
//! Redis, fetching a URL list from simweb. Prints one JSON line: pages, pages fetched, wall and
//! CPU seconds of this process.
//!
//! `--write-urls FILE` writes simweb's bench URL list (with simweb's port in every URL, so a
//! client that resolves `*.test` to 127.0.0.1 reaches it too) and exits.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use clap::Parser;
use serde_json::json;
use trawl_config::Config;
use trawl_integration_tests::procfs;
use trawl_integration_tests::simweb::bench;
use trawl_messages::{Envelope, FetchTask, JobOptions, Queue, SearchTask, Source, SourceKind};
use trawl_pipeline::fanin::{JobMeta, OutcomeRecord};
use trawl_pipeline::metrics::{labels, METRICS};
use trawl_pipeline::serve::Shutdown;
use trawl_pipeline::Job;
use trawl_pipeline::{run_worker, Runtime};

const AMQP: &str = "amqp://guest:guest@127.0.0.1:5672/%2f";
const REDIS: &str = "redis://127.0.0.1:6379/";
/// Publishers of the task list (not measured): confirms make one publisher slow.
const PUBLISHERS: usize = 16;

#[derive(Parser, Debug)]
#[command(about = "trawl's fetch stage over simweb's bench hosts")]
struct Args {
    /// simweb's address: `*.test` resolves to it.
    #[arg(long)]
    simweb: SocketAddr,
    /// Write the URL list to FILE and exit.
    #[arg(long, value_name = "FILE")]
    write_urls: Option<PathBuf>,
    #[arg(long, default_value_t = 200)]
    hosts: usize,
    #[arg(long, default_value_t = 10)]
    pages: usize,
    /// Fetch the URLs in FILE (one a line).
    #[arg(long, value_name = "FILE")]
    urls: Option<PathBuf>,
    /// fetch.min_interval_ms: spacing of requests to one host.
    #[arg(long, default_value_t = 100)]
    interval_ms: u64,
    /// broker.prefetch: messages the worker handles at once.
    #[arg(long, default_value_t = 64)]
    concurrency: u16,
    /// Give up waiting after this long.
    #[arg(long, default_value_t = 120)]
    timeout_secs: u64,
}

fn write_urls(args: &Args, path: &Path) -> anyhow::Result<()> {
    let port = args.simweb.port();
    let text: String = bench::urls(args.hosts, args.pages)
        .into_iter()
        .map(|u| format!("{}\n", u.replacen(".test/", &format!(".test:{port}/"), 1)))
        .collect();
    std::fs::write(path, text).with_context(|| format!("failed to write {}", path.display()))
}

fn config(args: &Args, namespace: &str, out: &Path) -> anyhow::Result<Config> {
    // TRAWL__* variables of the environment apply (to try other settings), except those that
    // make this run what it is.
    let mut env: BTreeMap<String, String> = std::env::vars()
        .filter(|(k, _)| k.starts_with("TRAWL__"))
        .collect();
    for (k, v) in [
        ("TRAWL__BROKER__URL", AMQP.to_owned()),
        ("TRAWL__STORE__URL", REDIS.to_owned()),
        ("TRAWL__BROKER__NAMESPACE", namespace.to_owned()),
        ("TRAWL__STORE__PREFIX", namespace.to_owned()),
        ("TRAWL__OUTPUT__URL", format!("file://{}", out.display())),
        (
            "TRAWL__FETCH__RESOLVE",
            format!("{{ \"*.test\" = \"{}\" }}", args.simweb),
        ),
        ("TRAWL__FETCH__ALLOW_NETWORKS", "[\"127.0.0.0/8\"]".into()),
        (
            "TRAWL__FETCH__MIN_INTERVAL_MS",
            args.interval_ms.to_string(),
        ),
        // One request in flight per host, as Scrapy's CONCURRENT_REQUESTS_PER_DOMAIN = 1.
        ("TRAWL__FETCH__MAX_PER_HOST", "1".into()),
        ("TRAWL__BROKER__PREFETCH", args.concurrency.to_string()),
    ] {
        env.insert(k.to_owned(), v);
    }
    Config::load(None, &env).context("failed to load config")
}

fn source(idx: usize, url: &str) -> Source {
    Source {
        idx: idx as u32,
        url: url.to_owned(),
        title: String::new(),
        snippet: String::new(),
        provider: "bench".into(),
        position: idx as u32 + 1,
        score: 1.0,
        kind: SourceKind::Page,
        file_type: None,
    }
}

/// Fetch messages handled with `result` so far (`ok`: a page published, an escalation or a
/// terminal outcome; `later`: deferred): read in process, so waiting costs nothing.
fn handled(result: &str) -> u64 {
    METRICS
        .messages
        .get_or_create(&labels(&[
            ("stage", Queue::Fetch.label()),
            ("result", result),
        ]))
        .get()
}

/// Fetched pages (on the clean queue) and terminal outcomes recorded, by outcome name.
async fn progress(rt: &Runtime, job: &str) -> anyhow::Result<(u64, BTreeMap<String, u64>)> {
    let fetched = rt.broker.depth(Queue::Clean).await?;
    let mut ended = BTreeMap::new();
    for bytes in rt.store.fanin_outcomes(job).await?.values() {
        let record: OutcomeRecord = serde_json::from_slice(bytes)?;
        *ended.entry(record.outcome.name().to_owned()).or_insert(0) += 1;
    }
    Ok((fetched, ended))
}

async fn fetch(args: &Args, path: &Path) -> anyhow::Result<serde_json::Value> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("failed to read {}", path.display()))?;
    let urls: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let n = urls.len();
    let namespace = format!("bench-fetch-{}", uuid::Uuid::now_v7().simple());
    let out = tempfile::tempdir()?;
    let config = config(args, &namespace, out.path())?;
    let stage = trawl_fetch::FetchStage::new(&config).context("failed to build the fetch stage")?;
    let rt = Runtime::connect(config, Duration::from_secs(10))
        .await
        .context("RabbitMQ and Redis must run (scripts/services-up)")?;
    let result = measure(args, &rt, stage, &urls).await;
    rt.broker.delete_all().await?;
    rt.store.delete_all().await?;
    let m = result?;
    Ok(json!({
        "pages": n,
        "ok": m.fetched,
        "secs": m.secs,
        "cpu_secs": m.cpu,
        "services_cpu_secs": m.services,
        "rabbitmq_cpu_secs": m.rabbitmq,
        "redis_cpu_secs": m.redis,
        "ended": m.ended,
        "deferred": handled("later"),
        "retried": handled("retry"),
    }))
}

struct Measured {
    fetched: u64,
    secs: f64,
    cpu: f64,
    services: f64,
    /// The same, apart; `None` when the server was not found.
    rabbitmq: Option<f64>,
    redis: Option<f64>,
    ended: BTreeMap<String, u64>,
}

async fn measure(
    args: &Args,
    rt: &Runtime,
    stage: trawl_fetch::FetchStage,
    urls: &[&str],
) -> anyhow::Result<Measured> {
    let n = urls.len();
    let query = "fetch benchmark".to_owned();
    let job = Envelope::new(
        uuid::Uuid::now_v7(),
        uuid::Uuid::now_v7(),
        chrono::Utc::now() + chrono::Duration::hours(1),
        SearchTask::new(query.clone(), JobOptions::default()),
    );
    let sources: Vec<Source> = urls.iter().enumerate().map(|(i, u)| source(i, u)).collect();
    let meta = JobMeta {
        query: query.clone(),
        sources: sources.clone(),
        ..Default::default()
    };
    Job::new(rt, &job).open(meta).await?;

    // The whole list waits in the fetch queue before the clock starts, in list order; the
    // worker takes it from there as it would from the search stage.
    let tasks: Vec<Vec<u8>> = sources
        .into_iter()
        .map(|source| {
            job.follow(FetchTask {
                query: query.clone(),
                source,
                level: 0,
                max_level: 1,
                depth: 0,
                domains: Default::default(),
                cache_max_age_secs: None,
                documents: None,
            })
            .encode()
        })
        .collect();
    let per = n.div_ceil(PUBLISHERS).max(1);
    let mut publishers = Vec::new();
    for chunk in tasks.chunks(per) {
        let (rt, chunk) = (rt.clone(), chunk.to_vec());
        publishers.push(tokio::spawn(async move {
            for body in chunk {
                rt.broker
                    .publish(Queue::Fetch, trawl_broker::Message::new(body))
                    .await?;
            }
            Ok::<_, trawl_broker::BrokerError>(())
        }));
    }
    for p in publishers {
        p.await??;
    }

    let job_id = job.job_id.to_string();
    let (stop, shutdown) = Shutdown::manual();
    // The RabbitMQ and Redis this run uses (found by their ports), not other brokers here.
    let services = procfs::services();
    let cpu_self = || procfs::cpu_secs("self").context("cannot read /proc/self/stat");
    let (cpu0, services0) = (cpu_self()?, procfs::services_cpu(&services));
    let started = Instant::now();
    let worker = tokio::spawn(run_worker(
        Arc::new(stage),
        rt.clone(),
        Queue::Fetch,
        shutdown.wait(),
        Default::default(),
    ));
    let limit = Duration::from_secs(args.timeout_secs);
    // Every message handled is the cheap signal; the clean queue's depth and the fan-in
    // record say whether each URL really got its page or its outcome (escalations also count
    // as handled).
    let (fetched, ended) = loop {
        if handled("ok") >= n as u64 || started.elapsed() > limit {
            let (fetched, ended) = progress(rt, &job_id).await?;
            if fetched + ended.values().sum::<u64>() >= n as u64 || started.elapsed() > limit {
                break (fetched, ended);
            }
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    let secs = started.elapsed().as_secs_f64();
    let cpu = cpu_self()? - cpu0;
    let services1 = procfs::services_cpu(&services);
    let apart = |port| {
        let pid = procfs::listener(port)?;
        Some(services1.get(&pid)? - services0.get(&pid)?)
    };
    let (rabbitmq, redis) = (apart(5672), apart(6379));
    let services = procfs::services_cpu_between(&services0, &services1);
    let _ = stop.send(true);
    worker.await??;
    if started.elapsed() > limit {
        eprintln!("bench_fetch: gave up after {limit:?}");
    }
    Ok(Measured {
        fetched,
        secs,
        cpu,
        services,
        rabbitmq,
        redis,
        ended,
    })
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if let Some(path) = &args.write_urls {
        return write_urls(&args, path);
    }
    let Some(path) = &args.urls else {
        bail!("give --urls FILE or --write-urls FILE");
    };
    let report = fetch(&args, path).await?;
    println!("{report}");
    Ok(())
}
