//! `trawl submit | status | results | cancel`: batches on the fleet.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context};
use indicatif::{ProgressBar, ProgressStyle};
use trawl_config::Config;
use trawl_messages::Queue;
use trawl_pipeline::batch::{
    collect, manifest, parse_batch, submit as enqueue, BatchOptions, Manifest,
};
use trawl_pipeline::Runtime;
use trawl_store::BatchProgress;
use uuid::Uuid;

use crate::remote::Remote;

/// Where the batch commands send their requests: the fleet's broker and store (the config's
/// `broker.url`, `store.url`), or a `trawl serve` in front of it.
#[derive(clap::Args)]
pub struct ServerArgs {
    /// Use the trawl HTTP API at URL (`trawl serve`) instead of the broker and store.
    #[arg(long, env = "TRAWL_SERVER", value_name = "URL")]
    server: Option<url::Url>,
    /// API token for --server (`trawl token create`). Prefer the environment variable: a
    /// command-line argument is visible to every user of the machine.
    #[arg(
        long,
        env = "TRAWL_TOKEN",
        value_name = "TOKEN",
        hide_env_values = true
    )]
    token: Option<String>,
}

impl ServerArgs {
    /// The API client if --server was given.
    fn remote(&self) -> anyhow::Result<Option<Remote>> {
        let Some(server) = &self.server else {
            return Ok(None);
        };
        let Some(token) = &self.token else {
            bail!("--server needs an API token: pass --token or set TRAWL_TOKEN");
        };
        Remote::new(server.clone(), token.clone())
            .map(Some)
            .map_err(anyhow::Error::msg)
    }
}

#[derive(clap::Args)]
pub struct SubmitArgs {
    /// One question per line, or JSONL lines {"query": "…", "options": {"max_urls": 5}}.
    file: PathBuf,
    /// POST signed `job.completed` and `batch.completed` events to this URL.
    #[arg(long, value_name = "URL")]
    webhook: Option<String>,
    /// LLM spend allowed for the batch, in dollars (priced with llm.*_price_per_mtok); once
    /// spent, the remaining jobs are written without the LLM.
    #[arg(long, value_name = "USD")]
    budget: Option<f64>,
    #[command(flatten)]
    server: ServerArgs,
}

#[derive(clap::Args)]
pub struct StatusArgs {
    batch: Uuid,
    /// Wait with a progress bar until every job has ended.
    #[arg(long)]
    wait: bool,
    #[command(flatten)]
    server: ServerArgs,
}

#[derive(clap::Args)]
pub struct ResultsArgs {
    batch: Uuid,
    /// Directory to write into.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// md: DIR/<job>/report.md and every work product; json: DIR/results.json (one array);
    /// jsonl: DIR/results.jsonl (one job per line). Each JSON record holds the question, status,
    /// report, citations and sources.
    #[arg(long, value_parser = ["md", "json", "jsonl"], default_value = "md")]
    format: String,
    #[command(flatten)]
    server: ServerArgs,
}

#[derive(clap::Args)]
pub struct CancelArgs {
    batch: Uuid,
    #[command(flatten)]
    server: ServerArgs,
}

/// The fleet's services; batches need a shared broker and store.
async fn fleet(config: Config) -> anyhow::Result<Runtime> {
    if config.broker.url.is_none() || config.store.url.is_none() {
        bail!("batches need a fleet: set broker.url and store.url (TRAWL__BROKER__URL, TRAWL__STORE__URL), or use a `trawl serve` with --server URL --token T; `trawl run` answers one question without one");
    }
    Ok(Runtime::connect(config, Duration::from_secs(10)).await?)
}

fn bar(len: u64, what: &str) -> ProgressBar {
    ProgressBar::new(len).with_style(
        ProgressStyle::with_template(&format!(
            "{{bar:40}} {{pos}}/{{len}} {what} {{msg}} ({{elapsed}})"
        ))
        .expect("a valid template"),
    )
}

pub async fn submit(config: Config, args: SubmitArgs) -> anyhow::Result<ExitCode> {
    let bytes = std::fs::read(&args.file)
        .with_context(|| format!("failed to read {}", args.file.display()))?;
    let tasks = parse_batch(&bytes)
        .with_context(|| format!("{} is not a valid batch", args.file.display()))?;
    if let Some(url) = &args.webhook {
        let parsed =
            url::Url::parse(url).with_context(|| format!("invalid --webhook URL {url:?}"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            bail!("--webhook must be an http(s) URL");
        }
    }
    if args.budget.is_some_and(|b| !b.is_finite() || b <= 0.0) {
        bail!("--budget must be a positive amount of dollars");
    }
    if let Some(remote) = args.server.remote()? {
        let created = remote
            .submit(&tasks, args.webhook.as_deref(), args.budget)
            .await
            .context("failed to submit the batch")?;
        eprintln!("enqueued {} questions", created.jobs.len());
        println!("{}", created.batch_id);
        return Ok(ExitCode::SUCCESS);
    }
    let rt = fleet(config).await?;
    let progress = bar(tasks.len() as u64, "enqueued");
    let options = BatchOptions {
        webhook: args.webhook.clone(),
        budget_usd: args.budget,
        owner: None,
    };
    let manifest = enqueue(&rt, tasks, options, |n| progress.set_position(n as u64)).await?;
    progress.finish_and_clear();
    eprintln!("enqueued {} questions", manifest.jobs.len());
    println!("{}", manifest.batch_id);
    Ok(ExitCode::SUCCESS)
}

fn describe(p: &BatchProgress) -> String {
    let parts: Vec<String> = p
        .by_status
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    let mut s = format!("{}/{} jobs ended", p.finished, p.total);
    if !parts.is_empty() {
        s.push_str(&format!(" ({})", parts.join(", ")));
    }
    if p.cancelled {
        s.push_str(", cancelled");
    }
    s
}

/// The last line of `trawl status`.
fn cost_line(cost_usd: f64, unused_sources: &BTreeMap<String, u64>) -> String {
    let unusable: Vec<String> = unused_sources
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    format!(
        "cost so far: ${cost_usd:.4}; sources not used: {}",
        if unusable.is_empty() {
            "none".into()
        } else {
            unusable.join(", ")
        }
    )
}

pub async fn status(config: Config, args: StatusArgs) -> anyhow::Result<ExitCode> {
    if let Some(remote) = args.server.remote()? {
        return status_remote(&remote, args).await;
    }
    let rt = fleet(config).await?;
    let batch = args.batch.to_string();
    let get = || async {
        rt.store.batch_progress(&batch).await?.with_context(|| {
            format!("no batch {batch} (was it submitted to this store and prefix?)")
        })
    };
    let mut p = get().await?;
    if args.wait {
        let progress = bar(p.total, "jobs");
        while !p.is_done() {
            progress.set_position(p.finished);
            progress.set_message(describe(&p));
            tokio::time::sleep(Duration::from_millis(500)).await;
            p = get().await?;
        }
        progress.finish_and_clear();
    }
    println!("batch {batch}: {}", describe(&p));
    // The fleet's queues, so an operator sees where pending work waits.
    let mut depths = Vec::new();
    for q in [
        Queue::Search,
        Queue::Fetch,
        Queue::Clean,
        Queue::Synthesize,
        Queue::Dead,
    ] {
        depths.push(format!("{} {}", q.label(), rt.broker.depth(q).await?));
    }
    println!("queues (all batches): {}", depths.join(", "));
    let usage = trawl_pipeline::batch::usage(&rt, args.batch, &p).await?;
    println!(
        "{}",
        cost_line(usage.cost_microdollars as f64 / 1e6, &usage.unused_sources)
    );
    Ok(ExitCode::SUCCESS)
}

/// `trawl status` through the API, which serves no queue depths: that line is left out.
async fn status_remote(remote: &Remote, args: StatusArgs) -> anyhow::Result<ExitCode> {
    let get = || async {
        remote
            .batch(args.batch)
            .await
            .with_context(|| format!("failed to read batch {}", args.batch))
    };
    let mut s = get().await?;
    if args.wait {
        let progress = bar(s.total, "jobs");
        while !s.done {
            progress.set_position(s.finished);
            progress.set_message(describe(&crate::remote::progress(&s)));
            // Slower than the local poll: every request counts against the token's rate.
            tokio::time::sleep(Duration::from_secs(1)).await;
            s = get().await?;
        }
        progress.finish_and_clear();
    }
    println!(
        "batch {}: {}",
        args.batch,
        describe(&crate::remote::progress(&s))
    );
    println!("{}", cost_line(s.cost_usd, &s.unused_sources));
    Ok(ExitCode::SUCCESS)
}

pub async fn results(config: Config, args: ResultsArgs) -> anyhow::Result<ExitCode> {
    if let Some(remote) = args.server.remote()? {
        return results_remote(&remote, args).await;
    }
    let rt = Runtime::embedded(config);
    let manifest = manifest(&rt, args.batch).await?.with_context(|| {
        format!(
            "no batch {} under {}",
            args.batch,
            rt.objects.root().display()
        )
    })?;
    if args.format != "md" {
        let records = json_records(&rt, &manifest).await?;
        return write_records(&args.out, &args.format, &records);
    }
    let collected = collect(&rt, &manifest, &args.out).await?;
    wrote_reports(
        &args.out,
        collected.jobs_with_report,
        collected.jobs_without_report,
    );
    Ok(ExitCode::SUCCESS)
}

/// Writes DIR/results.json (`format` json) or DIR/results.jsonl.
fn write_records(
    out: &Path,
    format: &str,
    records: &[serde_json::Value],
) -> anyhow::Result<ExitCode> {
    std::fs::create_dir_all(out).with_context(|| format!("failed to create {}", out.display()))?;
    let (name, text) = if format == "json" {
        ("results.json", serde_json::to_string_pretty(&records)?)
    } else {
        (
            "results.jsonl",
            records.iter().map(|r| r.to_string() + "\n").collect(),
        )
    };
    std::fs::write(out.join(name), text).with_context(|| format!("failed to write {name}"))?;
    eprintln!(
        "wrote {} jobs to {}",
        records.len(),
        out.join(name).display()
    );
    Ok(ExitCode::SUCCESS)
}

fn wrote_reports(out: &Path, with_report: usize, without_report: usize) {
    eprintln!(
        "wrote {with_report} reports to {}{}",
        out.display(),
        if without_report > 0 {
            format!(" ({without_report} jobs have no report yet)")
        } else {
            String::new()
        }
    );
}

/// The JSON record of one job, alike in both modes: `record` is its job.json (or only a
/// status while it has none).
fn json_record(
    job_id: Uuid,
    query: &str,
    record: &serde_json::Value,
    report: Option<String>,
    sources: serde_json::Value,
) -> serde_json::Value {
    serde_json::json!({
        "job_id": job_id,
        "query": query,
        "status": record["status"],
        "writer": record["writer"],
        "duration_ms": record["duration_ms"],
        "cost_usd": record["total_cost_microdollars"].as_i64().map(|c| c as f64 / 1e6),
        "report": report,
        "sources": sources,
    })
}

/// `trawl results` through the API: the same files, a job and its work products at a time.
/// The batch summary (`summary.jsonl`, `summary.md`) is not served by the API, so it is absent.
async fn results_remote(remote: &Remote, args: ResultsArgs) -> anyhow::Result<ExitCode> {
    let batch = args.batch;
    let jobs = remote
        .jobs(batch)
        .await
        .with_context(|| format!("failed to list the jobs of batch {batch}"))?;
    let progress = bar(jobs.len() as u64, "jobs");
    let mut records = Vec::new();
    let (mut with_report, mut without_report) = (0, 0);
    for summary in &jobs {
        let id = summary.job_id;
        let job = remote
            .job(id)
            .await
            .with_context(|| format!("failed to read job {id}"))?;
        if args.format != "md" {
            let product = |name: &'static str| async move {
                let bytes = remote
                    .work_product(id, name)
                    .await
                    .with_context(|| format!("failed to read {name} of job {id}"))?;
                bytes
                    .map(|b| serde_json::from_slice::<serde_json::Value>(&b))
                    .transpose()
                    .with_context(|| format!("{name} of job {id} is not JSON"))
            };
            let record = match product("job.json").await? {
                Some(record) => record,
                None => serde_json::json!({"status": job.status}),
            };
            let sources = product("sources.json").await?.unwrap_or_default();
            records.push(json_record(
                id,
                &summary.query,
                &record,
                job.report,
                sources,
            ));
        } else if job.report.is_none() {
            without_report += 1;
        } else {
            let target = args.out.join(id.to_string());
            for name in &job.work_products {
                let Some(relative) = safe_relative(name) else {
                    bail!("the server named a work product {name:?}, which is not a relative path");
                };
                let Some(bytes) = remote
                    .work_product(id, name)
                    .await
                    .with_context(|| format!("failed to read {name} of job {id}"))?
                else {
                    continue;
                };
                let path = target.join(relative);
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent)
                        .with_context(|| format!("failed to create {}", parent.display()))?;
                }
                std::fs::write(&path, bytes)
                    .with_context(|| format!("failed to write {}", path.display()))?;
            }
            with_report += 1;
        }
        progress.inc(1);
    }
    progress.finish_and_clear();
    if args.format != "md" {
        return write_records(&args.out, &args.format, &records);
    }
    wrote_reports(&args.out, with_report, without_report);
    Ok(ExitCode::SUCCESS)
}

/// `name` as a path that stays inside the job's directory, whatever the server sent.
fn safe_relative(name: &str) -> Option<PathBuf> {
    let path = Path::new(name);
    path.components()
        .all(|c| matches!(c, std::path::Component::Normal(_)))
        .then(|| path.to_path_buf())
        .filter(|p| p.components().next().is_some())
}

/// One JSON record per job: question, status and figures from job.json, the report, sources.
async fn json_records(rt: &Runtime, manifest: &Manifest) -> anyhow::Result<Vec<serde_json::Value>> {
    let mut out = Vec::new();
    for job in &manifest.jobs {
        let dir = trawl_messages::paths::job_dir(manifest.batch_id, job.job_id);
        let read = |name: &'static str| {
            let key = format!("{dir}/{name}");
            async move { rt.objects.get(&key).await }
        };
        let record: serde_json::Value = match read("job.json").await? {
            Some(b) => serde_json::from_slice(&b)?,
            None => serde_json::json!({"status": "pending"}),
        };
        let report = read("report.md")
            .await?
            .map(|b| String::from_utf8_lossy(&b).into_owned());
        let sources: serde_json::Value = match read("sources.json").await? {
            Some(b) => serde_json::from_slice(&b)?,
            None => serde_json::Value::Null,
        };
        out.push(json_record(
            job.job_id, &job.query, &record, report, sources,
        ));
    }
    Ok(out)
}

pub async fn cancel(config: Config, args: CancelArgs) -> anyhow::Result<ExitCode> {
    if let Some(remote) = args.server.remote()? {
        remote
            .cancel(args.batch)
            .await
            .with_context(|| format!("failed to cancel batch {}", args.batch))?;
        println!("cancelled {}", args.batch);
        return Ok(ExitCode::SUCCESS);
    }
    let rt = fleet(config).await?;
    if !rt.store.batch_cancel(&args.batch.to_string()).await? {
        bail!("no batch {}", args.batch);
    }
    println!("cancelled {}", args.batch);
    Ok(ExitCode::SUCCESS)
}
