//! One run: workers up, the batch in ([`crate::measure`]), workers down, and the run's
//! queues and keys removed again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use tokio::process::{Child, Command};
use trawl_config::Config;
use trawl_integration_tests::benchkit;
use trawl_integration_tests::simweb::Simweb;
use trawl_pipeline::Runtime;

use crate::measure::measure;
use crate::run::Run;
use crate::{Args, Stage, Workers};

const AMQP: &str = "amqp://guest:guest@127.0.0.1:5672/%2f";
const REDIS: &str = "redis://127.0.0.1:6379/";
/// The variable naming the simulated LLM's key; simweb only checks that one is sent.
const LLM_KEY_VAR: &str = "TRAWL_BENCH_FLEET_LLM_KEY";
/// The test S3 server's bucket and credentials (s3rver's own).
const S3_BUCKET: &str = "trawl-test";
const S3_KEY: &str = "S3RVER";

fn s3_endpoint() -> String {
    std::env::var("TRAWL_TEST_S3_ENDPOINT").unwrap_or_else(|_| "http://127.0.0.1:4568".into())
}

/// Where a run's results and work products go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    File,
    S3,
}

/// The fleet's page cache in a run (`cache.max_age_secs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cache {
    /// As the config and the `TRAWL__*` variables passed through say.
    AsConfigured,
    /// Off: every page is fetched.
    Off,
    /// On at its default age, whatever the variables passed through say.
    On,
}

const CACHE_MAX_AGE_VAR: &str = "TRAWL__CACHE__MAX_AGE_SECS";

/// How a run's workers keep their work products and pages.
#[derive(Clone, Copy, Debug)]
pub struct Setup {
    pub output: Output,
    pub cache: Cache,
}

impl Setup {
    /// Work products in a directory of the run's own, the cache as configured.
    pub const FILE: Setup = Setup {
        output: Output::File,
        cache: Cache::AsConfigured,
    };
}

/// The fleet's settings: what makes this run what it is, on top of
/// [`benchkit::simweb_fleet`]'s.
fn settings(
    args: &Args,
    web: &Simweb,
    namespace: &str,
    objects: &Path,
    setup: Setup,
) -> BTreeMap<String, String> {
    let addr = web.addr();
    let mut env = benchkit::simweb_fleet(AMQP, REDIS, namespace, addr, args.timeout_secs);
    match setup.cache {
        Cache::AsConfigured => {}
        Cache::Off => {
            env.insert(CACHE_MAX_AGE_VAR.to_owned(), "0".to_owned());
        }
        Cache::On => {
            env.remove(CACHE_MAX_AGE_VAR);
        }
    }
    let mut set = |k: &str, v: String| {
        env.insert(k.to_owned(), v);
    };
    match setup.output {
        Output::File => set(
            "TRAWL__OUTPUT__URL",
            format!("file://{}", objects.display()),
        ),
        // The S3-protocol server scripts/services-up starts (s3rver), under a prefix of the
        // run's own; its credentials as every S3 tool takes them.
        Output::S3 => {
            set(
                "TRAWL__OUTPUT__URL",
                format!("s3://{S3_BUCKET}/{namespace}"),
            );
            set("TRAWL__OUTPUT__ENDPOINT", s3_endpoint());
            set("TRAWL__OUTPUT__PATH_STYLE", "true".into());
            set("TRAWL__OUTPUT__ALLOW_HTTP", "true".into());
            set("AWS_ACCESS_KEY_ID", S3_KEY.into());
            set("AWS_SECRET_ACCESS_KEY", S3_KEY.into());
        }
    }
    if !args.no_llm {
        set("TRAWL__LLM__PROVIDER", "openai".into());
        set("TRAWL__LLM__BASE_URL", format!("http://{addr}/v1"));
        set("TRAWL__LLM__MODEL", "simweb-1".into());
        set("TRAWL__LLM__API_KEY_ENV", LLM_KEY_VAR.into());
        if let Some(tpm) = args.llm_tokens_per_minute {
            set("TRAWL__LLM__TOKENS_PER_MINUTE", tpm.to_string());
        }
    }
    env
}

pub struct Process {
    pub stage: Stage,
    pub pid: u32,
    pub child: Child,
    pub log: PathBuf,
    /// Where it serves `/metrics`.
    pub metrics: String,
}

fn spawn(
    bins: &Path,
    stage: Stage,
    n: usize,
    env: &BTreeMap<String, String>,
    logs: &Path,
) -> anyhow::Result<Process> {
    let log = logs.join(format!("{}-{n}.log", stage.name()));
    let metrics = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0")?;
        probe.local_addr()?.to_string()
    };
    let file = std::fs::File::create(&log)
        .with_context(|| format!("failed to create {}", log.display()))?;
    let child = Command::new(bins.join(stage.binary()))
        .envs(env)
        .env(LLM_KEY_VAR, "simulated")
        .env("TRAWL__METRICS__ADDR", &metrics)
        .env(
            "RUST_LOG",
            std::env::var("RUST_LOG").unwrap_or("warn".into()),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(file)
        // Its own process group, so a Ctrl-C at the terminal reaches only this driver, which
        // then stops the workers in order and removes the run's queues and keys.
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("failed to start {}", stage.binary()))?;
    let pid = child.id().context("worker exited at once")?;
    Ok(Process {
        stage,
        pid,
        child,
        log,
        metrics,
    })
}

pub fn log_tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(15)..].join("\n")
}

/// Waits until every queue has its workers consuming.
async fn wait_ready(rt: &Runtime, workers: &Workers, procs: &mut [Process]) -> anyhow::Result<()> {
    let started = Instant::now();
    loop {
        for p in procs.iter_mut() {
            if let Some(status) = p.child.try_wait()? {
                bail!(
                    "{} exited during start-up ({status}):\n{}",
                    p.stage.binary(),
                    log_tail(&p.log)
                );
            }
        }
        let mut ready = true;
        for (&stage, &n) in workers {
            ready &= rt.broker.stats(stage.queue()).await?.consumers >= n as u64;
        }
        if ready {
            return Ok(());
        }
        if started.elapsed() > Duration::from_secs(60) {
            bail!("the workers did not all start consuming within a minute");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// SIGTERM to every worker, then a wait for each; returns how each exited.
async fn stop(procs: &mut [Process]) -> Vec<String> {
    for p in procs.iter() {
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &p.pid.to_string()])
            .status();
    }
    let mut exits = Vec::new();
    for p in procs.iter_mut() {
        let exit = match tokio::time::timeout(Duration::from_secs(15), p.child.wait()).await {
            Ok(Ok(s)) if s.success() => "ok".to_owned(),
            Ok(Ok(s)) => format!("{s}"),
            Ok(Err(e)) => format!("wait failed: {e}"),
            Err(_) => {
                let _ = p.child.start_kill();
                let _ = p.child.wait().await;
                "killed after 15 s".to_owned()
            }
        };
        exits.push(exit);
    }
    exits
}

pub async fn run(
    args: &Args,
    bins: &Path,
    web: &Simweb,
    label: &str,
    workers: &Workers,
    questions: &[String],
    setup: Setup,
) -> anyhow::Result<Run> {
    let namespace = format!("bench-fleet-{}", uuid::Uuid::now_v7().simple());
    let logs = args.out.join("logs").join(label);
    std::fs::create_dir_all(&logs)?;
    let kept = args.out.join(format!("objects-{label}"));
    let temp = tempfile::tempdir()?;
    let objects = if args.keep {
        let _ = std::fs::remove_dir_all(&kept);
        kept.clone()
    } else {
        temp.path().to_owned()
    };
    let env = settings(args, web, &namespace, &objects, setup);
    // The driver reads the same store: the S3 client takes its credentials from the process.
    for (k, v) in env.iter().filter(|(k, _)| k.starts_with("AWS_")) {
        std::env::set_var(k, v);
    }
    let config = Config::load(None, &env).context("failed to load the fleet's config")?;
    let rt = Runtime::connect(config, Duration::from_secs(10))
        .await
        .context("RabbitMQ and Redis must run (scripts/services-up)")?;

    let mut procs = Vec::new();
    let mut result = async {
        for (&stage, &n) in workers {
            for i in 0..n {
                procs.push(spawn(bins, stage, i, &env, &logs)?);
            }
        }
        wait_ready(&rt, workers, &mut procs).await?;
        measure(args, &rt, web, label, workers, questions, &mut procs).await
    }
    .await;
    let exits = stop(&mut procs).await;
    if let Ok(run) = &mut result {
        for (w, exit) in run.worker_stats.iter_mut().zip(exits) {
            w.exit = exit;
        }
    }
    let cleaned = async {
        rt.broker.delete_all().await?;
        rt.store.delete_all().await?;
        anyhow::Ok(())
    }
    .await
    .with_context(|| format!("failed to remove the run's queues and keys ({namespace}*)"));
    match (result, cleaned) {
        (Ok(run), Ok(())) => Ok(run),
        (Ok(_), Err(e)) => Err(e),
        // The run's own failure is the one to report; a failed clean-up is only mentioned.
        (Err(e), cleaned) => {
            if let Err(c) = cleaned {
                eprintln!("bench-fleet: {c:#}");
            }
            Err(e)
        }
    }
}
