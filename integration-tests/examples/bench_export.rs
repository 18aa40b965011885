//! The driver of `scripts/bench-export`: what exporting a big batch through the HTTP API costs,
//! against reading the same batch straight from the object store, in the same run.
//!
//! simweb runs in this process; one release worker per stage and a `trawl serve` run on the
//! local RabbitMQ and Redis under a namespace of their own, with the results on tmpfs where
//! there is one. A batch of simweb's soak questions (each the least work every stage can do:
//! one page of under 1 KB, no LLM) goes in through the API, so the API's token owns it, and
//! runs to its end. Then, in each round, the batch is exported twice with the real CLI:
//! `trawl results --server` (the API's `GET /v1/batches/{id}/results`, a request per page)
//! and `trawl results` without it (the object store read directly, the way before the API had
//! an export), alternating which goes first. The serve process's memory comes from the
//! kernel: VmRSS just before each API export and VmHWM after it, the high-water mark reset
//! before the export (`/proc/PID/clear_refs`), so the peak is the export's and not the
//! submission's. The requests the CLI made come from the server's own request counter. Last,
//! one page is fetched with and without `Accept-Encoding: gzip` to show what compression
//! saves on the wire.
//!
//! Not measured: a real network (all loopback) or a remote object store (file://).

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, ensure, Context as _};
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use tokio::process::{Child, Command};
use trawl_config::Config;
use trawl_integration_tests::benchkit;
use trawl_integration_tests::procfs::{cpu_secs, status_kib};
use trawl_integration_tests::simweb::{soak, Corpus, Simweb};
use trawl_messages::Queue;
use trawl_pipeline::Runtime;
use uuid::Uuid;

const AMQP: &str = "amqp://guest:guest@127.0.0.1:5672/%2f";
const REDIS: &str = "redis://127.0.0.1:6379/";
const STAGES: [(&str, Queue); 4] = [
    ("search", Queue::Search),
    ("fetch", Queue::Fetch),
    ("clean", Queue::Clean),
    ("synthesize", Queue::Synthesize),
];
/// The export's default page, as both the API and `trawl results --server` use it.
const PAGE: usize = 1000;
/// The export's route as the API's request counter labels it.
const EXPORT_ROUTE: &str = "route=\"/v1/batches/{id}/results\"";

#[derive(Parser, Debug)]
#[command(about = "Exporting a big batch through trawl's API against reading the store directly")]
struct Args {
    /// Jobs in the batch (simweb soak questions 0..N).
    #[arg(long, default_value_t = 10_000)]
    jobs: usize,
    /// Rounds of the two exports; the figures are the rounds' medians.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Where the processes' logs go.
    #[arg(long, default_value = "target/bench-export")]
    out: PathBuf,
    /// Directory holding the release binaries (default: this example's target dir).
    #[arg(long)]
    bins: Option<PathBuf>,
    /// Give up on the batch after this long.
    #[arg(long, default_value_t = 1800)]
    timeout_secs: u64,
}

/// A process this run started, and where its stderr goes.
struct Process {
    name: String,
    pid: u32,
    child: Child,
    log: PathBuf,
}

fn log_tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(15)..].join("\n")
}

/// Fails naming the first process that has exited: none of them should, before the end.
fn check_alive(procs: &mut [Process]) -> anyhow::Result<()> {
    for p in procs.iter_mut() {
        if let Some(status) = p.child.try_wait()? {
            bail!("{} exited ({status}):\n{}", p.name, log_tail(&p.log));
        }
    }
    Ok(())
}

/// Everything that makes the run what it is, on top of [`benchkit::simweb_fleet`]'s.
fn settings(
    args: &Args,
    web: &Simweb,
    namespace: &str,
    objects: &Path,
) -> BTreeMap<String, String> {
    let mut env = benchkit::simweb_fleet(AMQP, REDIS, namespace, web.addr(), args.timeout_secs);
    let mut set = |k: &str, v: String| {
        env.insert(k.to_owned(), v);
    };
    set(
        "TRAWL__OUTPUT__URL",
        format!("file://{}", objects.display()),
    );
    // The soak's pages sit on 50 hosts: at the default second between two requests to a host
    // fetching would take 200 s per 10 000 jobs; the chaos soak uses the same 50 ms.
    set("TRAWL__FETCH__MIN_INTERVAL_MS", "50".into());
    // A batch of N questions in one request (the defaults take 10 000 in 4 MiB).
    let questions = args.jobs.max(10_000);
    set("TRAWL__API__MAX_QUESTIONS", questions.to_string());
    set("TRAWL__API__MAX_BODY_BYTES", (questions * 512).to_string());
    env
}

/// A `trawl` command with the fleet's environment, never the caller's API settings: a
/// TRAWL_SERVER in the environment would turn a direct read into an API one.
fn trawl(bins: &Path, env: &BTreeMap<String, String>) -> Command {
    let mut cmd = Command::new(bins.join("trawl"));
    cmd.envs(env)
        .env_remove("TRAWL_SERVER")
        .env_remove("TRAWL_TOKEN")
        .env(
            "RUST_LOG",
            std::env::var("RUST_LOG").unwrap_or("warn".into()),
        )
        .stdin(Stdio::null())
        .kill_on_drop(true);
    cmd
}

fn spawn(mut cmd: Command, name: &str, logs: &Path) -> anyhow::Result<Process> {
    let log = logs.join(format!("{name}.log"));
    let file = std::fs::File::create(&log)
        .with_context(|| format!("failed to create {}", log.display()))?;
    let child = cmd
        .stdout(Stdio::null())
        .stderr(file)
        // Its own process group, so a Ctrl-C at the terminal reaches only this driver, which
        // then stops the processes and removes the run's queues and keys.
        .process_group(0)
        .spawn()
        .with_context(|| format!("failed to start {name}"))?;
    let pid = child
        .id()
        .with_context(|| format!("{name} exited at once"))?;
    Ok(Process {
        name: name.to_owned(),
        pid,
        child,
        log,
    })
}

/// Runs a short `trawl` command to its end; its stdout, or its stderr as the error.
async fn output(mut cmd: Command, what: &str) -> anyhow::Result<String> {
    let out = cmd
        .output()
        .await
        .with_context(|| format!("failed to run {what}"))?;
    if !out.status.success() {
        bail!(
            "{what} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// SIGTERM to each process, then a wait for it; a process still there after 15 s is killed.
async fn stop(procs: &mut [Process]) {
    for p in procs.iter() {
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &p.pid.to_string()])
            .status();
    }
    for p in procs.iter_mut() {
        if tokio::time::timeout(Duration::from_secs(15), p.child.wait())
            .await
            .is_err()
        {
            eprintln!("bench-export: {} did not stop within 15 s; killed", p.name);
            let _ = p.child.start_kill();
            let _ = p.child.wait().await;
        }
    }
}

fn free_port() -> anyhow::Result<u16> {
    let listener =
        std::net::TcpListener::bind("127.0.0.1:0").context("failed to find a free port")?;
    Ok(listener.local_addr()?.port())
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// The API server as this run reaches it.
struct Server {
    base: String,
    pid: u32,
    token: String,
    http: reqwest::Client,
}

impl Server {
    /// Requests the export route has answered so far, from the server's own counter (every
    /// status class: a retried page is a request made too).
    async fn export_requests(&self) -> anyhow::Result<u64> {
        let text = self
            .http
            .get(format!("{}/metrics", self.base))
            .send()
            .await
            .and_then(|r| r.error_for_status())
            .context("failed to read the server's /metrics")?
            .text()
            .await?;
        Ok(text
            .lines()
            .filter(|l| l.starts_with("trawl_api_requests_total{") && l.contains(EXPORT_ROUTE))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum::<f64>() as u64)
    }

    fn rss_kib(&self) -> anyhow::Result<u64> {
        status_kib(self.pid, "VmRSS").context("failed to read the server's VmRSS")
    }
}

/// One timed `trawl results BATCH --format jsonl` into `dir`: its wall time, and the file it
/// wrote, which must hold one line per job.
async fn export(
    bins: &Path,
    env: &BTreeMap<String, String>,
    batch: Uuid,
    dir: &Path,
    server: Option<&Server>,
    jobs: usize,
) -> anyhow::Result<(f64, PathBuf)> {
    let _ = std::fs::remove_dir_all(dir);
    let mut cmd = trawl(bins, env);
    cmd.args(["results", &batch.to_string(), "--format", "jsonl", "--out"])
        .arg(dir);
    if let Some(server) = server {
        cmd.args(["--server", &server.base])
            .env("TRAWL_TOKEN", &server.token);
    }
    let what = if server.is_some() {
        "trawl results --server"
    } else {
        "trawl results"
    };
    let started = Instant::now();
    output(cmd, what).await?;
    let secs = started.elapsed().as_secs_f64();
    let path = dir.join("results.jsonl");
    let bytes =
        std::fs::read(&path).with_context(|| format!("{what} wrote no {}", path.display()))?;
    let lines = bytes.iter().filter(|&&b| b == b'\n').count();
    ensure!(lines == jobs, "{what} wrote {lines} lines for {jobs} jobs");
    Ok((secs, path))
}

/// What one round measured.
struct Round {
    api_secs: f64,
    direct_secs: f64,
    requests: u64,
    rss_before_kib: u64,
    hwm_kib: u64,
    /// Whether the high-water mark was reset before the export; if not, `hwm_kib` is the
    /// process's peak since it started.
    hwm_reset: bool,
    server_cpu_secs: f64,
    identical: bool,
    bytes: u64,
}

/// The two exports, `api_first` or the other way round.
async fn round(
    bins: &Path,
    env: &BTreeMap<String, String>,
    batch: Uuid,
    server: &Server,
    scratch: &Path,
    jobs: usize,
    api_first: bool,
) -> anyhow::Result<Round> {
    let direct_dir = scratch.join("direct");
    let api_dir = scratch.join("api");
    let mut direct = None;
    if !api_first {
        direct = Some(export(bins, env, batch, &direct_dir, None, jobs).await?);
    }
    // VmHWM cannot be read for a span of time, only reset to the present RSS (Linux 4.0+):
    // without the reset it would be the submission's peak, or an earlier round's.
    let hwm_reset = std::fs::write(format!("/proc/{}/clear_refs", server.pid), "5").is_ok();
    let requests0 = server.export_requests().await?;
    let rss_before_kib = server.rss_kib()?;
    let cpu0 = cpu_secs(&server.pid.to_string()).unwrap_or(0.0);
    let (api_secs, api_file) = export(bins, env, batch, &api_dir, Some(server), jobs).await?;
    let cpu1 = cpu_secs(&server.pid.to_string()).unwrap_or(0.0);
    let hwm_kib = status_kib(server.pid, "VmHWM").context("failed to read the server's VmHWM")?;
    let requests = server.export_requests().await? - requests0;
    let (direct_secs, direct_file) = match direct {
        Some(d) => d,
        None => export(bins, env, batch, &direct_dir, None, jobs).await?,
    };
    let api_bytes = std::fs::read(&api_file)?;
    let identical = api_bytes == std::fs::read(&direct_file)?;
    Ok(Round {
        api_secs,
        direct_secs,
        requests,
        rss_before_kib,
        hwm_kib,
        hwm_reset,
        server_cpu_secs: cpu1 - cpu0,
        identical,
        bytes: api_bytes.len() as u64,
    })
}

/// One page of the export as the wire carries it, asked for with `encoding`: its bytes (still
/// compressed), the Content-Encoding it came with, and the time to its last byte.
async fn page(
    server: &Server,
    batch: Uuid,
    encoding: &str,
) -> anyhow::Result<(Vec<u8>, Option<String>, f64)> {
    let started = Instant::now();
    let response = server
        .http
        .get(format!(
            "{}/v1/batches/{batch}/results?limit={PAGE}",
            server.base
        ))
        .bearer_auth(&server.token)
        .header(reqwest::header::ACCEPT_ENCODING, encoding)
        .send()
        .await
        .and_then(|r| r.error_for_status())
        .with_context(|| format!("failed to read a page with Accept-Encoding: {encoding}"))?;
    let coding = response
        .headers()
        .get(reqwest::header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body = response.bytes().await?.to_vec();
    Ok((body, coding, started.elapsed().as_secs_f64()))
}

/// The first page plain and gzip-compressed, `rounds` times each: median times, and the
/// bytes of each (the same every time; the gzip one is checked to inflate to the plain one).
async fn gzip_page(
    server: &Server,
    batch: Uuid,
    rounds: usize,
) -> anyhow::Result<(usize, f64, usize, f64, usize)> {
    let (mut plain_secs, mut gzip_secs) = (Vec::new(), Vec::new());
    let (mut plain, mut gzip) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let (body, coding, secs) = page(server, batch, "identity").await?;
        ensure!(coding.is_none(), "a plain page came as {coding:?}");
        plain = body;
        plain_secs.push(secs);
        let (body, coding, secs) = page(server, batch, "gzip").await?;
        ensure!(
            coding.as_deref() == Some("gzip"),
            "a page asked for with gzip came as {coding:?}"
        );
        gzip = body;
        gzip_secs.push(secs);
    }
    let mut inflated = Vec::new();
    flate2::read::GzDecoder::new(gzip.as_slice())
        .read_to_end(&mut inflated)
        .context("the gzip page does not inflate")?;
    ensure!(
        inflated == plain,
        "the gzip page inflates to other bytes than the plain one"
    );
    let lines = plain.iter().filter(|&&b| b == b'\n').count();
    Ok((
        plain.len(),
        median(&plain_secs),
        gzip.len(),
        median(&gzip_secs),
        lines,
    ))
}

/// Waits until every stage's queue has its worker and the API answers /readyz.
async fn wait_ready(rt: &Runtime, base: &str, procs: &mut [Process]) -> anyhow::Result<()> {
    let http = reqwest::Client::new();
    let started = Instant::now();
    loop {
        check_alive(procs)?;
        let mut ready = true;
        for (_, queue) in STAGES {
            ready &= rt.broker.stats(queue).await?.consumers >= 1;
        }
        ready &= http
            .get(format!("{base}/readyz"))
            .send()
            .await
            .is_ok_and(|r| r.status().is_success());
        if ready {
            return Ok(());
        }
        if started.elapsed() > Duration::from_secs(60) {
            bail!("the workers and the API were not all ready within a minute");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Waits for the batch's end; the count of jobs by status.
async fn wait_done(
    args: &Args,
    rt: &Runtime,
    batch: Uuid,
    procs: &mut [Process],
) -> anyhow::Result<BTreeMap<String, u64>> {
    let bar = ProgressBar::new(args.jobs as u64).with_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} jobs ended ({elapsed})")
            .expect("a valid template"),
    );
    let started = Instant::now();
    let limit = Duration::from_secs(args.timeout_secs);
    loop {
        let progress = rt
            .store
            .batch_progress(&batch.to_string())
            .await?
            .with_context(|| format!("the store has no batch {batch}"))?;
        bar.set_position(progress.finished);
        if progress.is_done() {
            bar.finish_and_clear();
            return Ok(progress.by_status);
        }
        if let Err(e) = check_alive(procs) {
            bar.abandon();
            return Err(e);
        }
        if started.elapsed() > limit {
            bar.abandon();
            bail!(
                "{}/{} jobs ended after {limit:?}; see the logs in {}",
                progress.finished,
                progress.total,
                args.out.join("logs").display()
            );
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// The run proper, once the processes' environment is settled: everything from starting the
/// fleet to the printed figures. The processes it starts go into `procs`, for the caller to
/// stop whatever happens here.
async fn measure(
    args: &Args,
    bins: &Path,
    env: &BTreeMap<String, String>,
    rt: &Runtime,
    scratch: &Path,
    procs: &mut Vec<Process>,
) -> anyhow::Result<()> {
    let logs = args.out.join("logs");
    std::fs::create_dir_all(&logs)
        .with_context(|| format!("failed to create {}", logs.display()))?;
    for (stage, _) in STAGES {
        let mut cmd = Command::new(bins.join(format!("trawl-{stage}")));
        cmd.envs(env)
            .env(
                "RUST_LOG",
                std::env::var("RUST_LOG").unwrap_or("warn".into()),
            )
            .stdin(Stdio::null())
            .kill_on_drop(true);
        procs.push(spawn(cmd, stage, &logs)?);
    }
    let port = free_port()?;
    let base = format!("http://127.0.0.1:{port}");
    let mut serve = trawl(bins, env);
    serve.args(["serve", "--addr", &format!("127.0.0.1:{port}")]);
    procs.push(spawn(serve, "serve", &logs)?);
    let serve_pid = procs
        .last()
        .map(|p| p.pid)
        .context("serve was not started")?;
    wait_ready(rt, &base, procs).await?;
    let idle_kib = status_kib(serve_pid, "VmRSS").context("failed to read the server's VmRSS")?;

    let mut create = trawl(bins, env);
    create.args(["token", "create", "--name", "bench"]);
    let token = output(create, "trawl token create").await?;
    let server = Server {
        base,
        pid: serve_pid,
        token,
        // Plain HTTP with every content coding left to the caller, so that a gzip page's
        // bytes are counted as they travel.
        http: reqwest::Client::builder()
            .no_gzip()
            .no_brotli()
            .no_deflate()
            .build()
            .context("failed to start an HTTP client")?,
    };

    let file = scratch.join("questions.txt");
    let questions: String = (0..args.jobs).map(|k| soak::question(k) + "\n").collect();
    std::fs::write(&file, questions)
        .with_context(|| format!("failed to write {}", file.display()))?;
    let mut submit = trawl(bins, env);
    submit
        .args(["submit", "--server", &server.base])
        .arg(&file)
        .env("TRAWL_TOKEN", &server.token);
    let started = Instant::now();
    let batch = output(submit, "trawl submit --server").await?;
    let submit_secs = started.elapsed().as_secs_f64();
    let batch = Uuid::parse_str(&batch)
        .with_context(|| format!("trawl submit printed {batch:?}, not a batch id"))?;
    let submitted_kib = server.rss_kib()?;
    eprintln!("bench-export: batch {batch} submitted in {submit_secs:.1} s; waiting for its end");
    let by_status = wait_done(args, rt, batch, procs).await?;
    let run_secs = started.elapsed().as_secs_f64();
    let statuses: Vec<String> = by_status.iter().map(|(k, v)| format!("{k} {v}")).collect();
    println!(
        "batch {batch}: {} jobs submitted through the API in {submit_secs:.1} s, all ended \
         {run_secs:.0} s after the submission began ({})",
        args.jobs,
        statuses.join(", ")
    );
    println!(
        "serve RSS: {:.1} MiB idle, {:.1} MiB after the submission, {:.1} MiB once the batch ended",
        mib(idle_kib),
        mib(submitted_kib),
        mib(server.rss_kib()?)
    );

    let mut rounds = Vec::new();
    for i in 0..args.rounds {
        let api_first = i % 2 == 0;
        let r = round(bins, env, batch, &server, scratch, args.jobs, api_first).await?;
        check_alive(procs)?;
        println!(
            "round {}: API {:.2} s in {} requests (serve RSS {:.1} → peak {:.1} MiB, CPU {:.2} s) · \
             direct {:.2} s · {} first · outputs {}",
            i + 1,
            r.api_secs,
            r.requests,
            mib(r.rss_before_kib),
            mib(r.hwm_kib),
            r.server_cpu_secs,
            r.direct_secs,
            if api_first { "API" } else { "direct" },
            if r.identical { "identical" } else { "DIFFER" },
        );
        rounds.push(r);
    }
    let (plain, plain_secs, gzip, gzip_secs, page_lines) =
        gzip_page(&server, batch, args.rounds).await?;

    let thousands = args.jobs as f64 / 1000.0;
    let api = median(&rounds.iter().map(|r| r.api_secs).collect::<Vec<_>>());
    let direct = median(&rounds.iter().map(|r| r.direct_secs).collect::<Vec<_>>());
    let cpu = median(&rounds.iter().map(|r| r.server_cpu_secs).collect::<Vec<_>>());
    let requests: Vec<String> = rounds.iter().map(|r| r.requests.to_string()).collect();
    let first = rounds.first().context("--rounds must be at least 1")?;
    let peak = rounds.iter().map(|r| r.hwm_kib).max().unwrap_or(0);
    let bytes = first.bytes;
    println!();
    println!(
        "export of {} jobs to results.jsonl ({:.1} MB), median of {} round(s):",
        args.jobs,
        bytes as f64 / 1e6,
        rounds.len()
    );
    println!(
        "  through the API (trawl results --server, gzip on the wire): {api:.2} s, {:.0} ms per \
         1000 jobs, requests per export: {} ({} expected at {PAGE} a page); serve CPU {cpu:.2} s",
        api * 1000.0 / thousands,
        requests.join(", "),
        args.jobs.div_ceil(PAGE),
    );
    println!(
        "  direct from the store (trawl results): {direct:.2} s, {:.0} ms per 1000 jobs",
        direct * 1000.0 / thousands
    );
    println!("  ratio API / direct: {:.2}", api / direct);
    // The first export is the one a fresh server makes; what the later rounds start from
    // shows whether the memory it took is given back.
    let last = rounds.last().unwrap_or(first);
    println!(
        "  serve RSS before the first export {:.1} MiB → peak {:.1} MiB during it (+{:.1} MiB); \
         before the last {:.1} MiB, highest peak of the {} round(s) {:.1} MiB{}",
        mib(first.rss_before_kib),
        mib(first.hwm_kib),
        mib(first.hwm_kib.saturating_sub(first.rss_before_kib)),
        mib(last.rss_before_kib),
        rounds.len(),
        mib(peak),
        if rounds.iter().all(|r| r.hwm_reset) {
            " (peaks from a high-water mark reset before each export)"
        } else {
            " (VmHWM could not be reset: peaks are the highest since serve started)"
        }
    );
    println!(
        "  API and direct outputs byte for byte the same: {}",
        if rounds.iter().all(|r| r.identical) {
            "yes"
        } else {
            "NO"
        }
    );
    println!(
        "one page of {page_lines} jobs: plain {:.2} MB in {:.0} ms, gzip {:.2} MB in {:.0} ms \
         ({:.1}× smaller; medians of {})",
        plain as f64 / 1e6,
        plain_secs * 1000.0,
        gzip as f64 / 1e6,
        gzip_secs * 1000.0,
        plain as f64 / gzip.max(1) as f64,
        args.rounds
    );
    Ok(())
}

/// The machine as the run found it: other work on it skews every figure.
fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load: Vec<&str> = load.split_whitespace().take(3).collect();
    format!("{cores} cores, load average {}", load.join(" "))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    ensure!(
        (1..soak::MAX_QUESTIONS).contains(&args.jobs),
        "--jobs must be 1 to {}",
        soak::MAX_QUESTIONS - 1
    );
    ensure!(args.rounds >= 1, "--rounds must be at least 1");
    let bins = benchkit::release_bins(args.bins.as_deref())?;
    for name in [
        "trawl",
        "trawl-search",
        "trawl-fetch",
        "trawl-clean",
        "trawl-synthesize",
    ] {
        let path = bins.join(name);
        ensure!(
            path.exists(),
            "{} is missing: build the binaries first (cargo build --release --workspace --bins)",
            path.display()
        );
    }
    let web = Simweb::start(Arc::new(Corpus::generate()), "127.0.0.1:0".parse()?)
        .await
        .context("failed to start simweb")?;
    let namespace = format!("bench-export-{}", Uuid::now_v7().simple());
    // The results of thousands of jobs go to tmpfs where there is one: removing a hundred
    // thousand files from a disk that discards every freed block takes minutes.
    let shm = Path::new("/dev/shm");
    let objects = if shm.is_dir() {
        tempfile::tempdir_in(shm)
    } else {
        tempfile::tempdir()
    }
    .context("failed to create the object store's directory")?;
    let scratch = tempfile::tempdir().context("failed to create a scratch directory")?;
    let env = settings(&args, &web, &namespace, objects.path());
    println!(
        "bench-export: {} soak jobs, {} round(s); {}; one worker per stage and `trawl serve`, \
         results under file://{}",
        args.jobs,
        args.rounds,
        machine(),
        objects.path().display()
    );
    let config = Config::load(None, &env).context("failed to load the fleet's config")?;
    let rt = Runtime::connect(config, Duration::from_secs(10))
        .await
        .context("RabbitMQ and Redis must run (scripts/services-up)")?;

    let mut procs = Vec::new();
    let result = tokio::select! {
        r = measure(&args, &bins, &env, &rt, scratch.path(), &mut procs) => r,
        _ = tokio::signal::ctrl_c() => Err(anyhow!("interrupted")),
    };
    stop(&mut procs).await;
    let cleaned = async {
        rt.broker.delete_all().await?;
        rt.store.delete_all().await?;
        anyhow::Ok(())
    }
    .await
    .with_context(|| format!("failed to remove the run's queues and keys ({namespace}*)"));
    match (result, cleaned) {
        (Ok(()), cleaned) => cleaned,
        // The run's own failure is the one to report; a failed clean-up is only mentioned.
        (Err(e), cleaned) => {
            if let Err(c) = cleaned {
                eprintln!("bench-export: {c:#}");
            }
            Err(e)
        }
    }
}
