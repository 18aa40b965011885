//! `trawl submit | status | results | cancel`: batches on the fleet.

use std::path::PathBuf;
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
}

#[derive(clap::Args)]
pub struct StatusArgs {
    batch: Uuid,
    /// Wait with a progress bar until every job has ended.
    #[arg(long)]
    wait: bool,
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
}

#[derive(clap::Args)]
pub struct CancelArgs {
    batch: Uuid,
}

/// The fleet's services; batches need a shared broker and store.
async fn fleet(config: Config) -> anyhow::Result<Runtime> {
    if config.broker.url.is_none() || config.store.url.is_none() {
        bail!("batches need a fleet: set broker.url and store.url (TRAWL__BROKER__URL, TRAWL__STORE__URL); `trawl run` answers one question without one");
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
    let text = std::fs::read_to_string(&args.file)
        .with_context(|| format!("failed to read {}", args.file.display()))?;
    let tasks = parse_batch(&text)
        .with_context(|| format!("{} is not a valid batch", args.file.display()))?;
    let rt = fleet(config).await?;
    let progress = bar(tasks.len() as u64, "enqueued");
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

pub async fn status(config: Config, args: StatusArgs) -> anyhow::Result<ExitCode> {
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
    let unusable: Vec<String> = usage
        .unused_sources
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    println!(
        "cost so far: ${:.4}; sources not used: {}",
        usage.cost_microdollars as f64 / 1e6,
        if unusable.is_empty() {
            "none".into()
        } else {
            unusable.join(", ")
        }
    );
    Ok(ExitCode::SUCCESS)
}

pub async fn results(config: Config, args: ResultsArgs) -> anyhow::Result<ExitCode> {
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
        std::fs::create_dir_all(&args.out)
            .with_context(|| format!("failed to create {}", args.out.display()))?;
        let (name, text) = if args.format == "json" {
            ("results.json", serde_json::to_string_pretty(&records)?)
        } else {
            (
                "results.jsonl",
                records.iter().map(|r| r.to_string() + "\n").collect(),
            )
        };
        std::fs::write(args.out.join(name), text)
            .with_context(|| format!("failed to write {name}"))?;
        eprintln!(
            "wrote {} jobs to {}",
            records.len(),
            args.out.join(name).display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let collected = collect(&rt, &manifest, &args.out).await?;
    eprintln!(
        "wrote {} reports to {}{}",
        collected.jobs_with_report,
        args.out.display(),
        if collected.jobs_without_report > 0 {
            format!(
                " ({} jobs have no report yet)",
                collected.jobs_without_report
            )
        } else {
            String::new()
        }
    );
    Ok(ExitCode::SUCCESS)
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
        out.push(serde_json::json!({
            "job_id": job.job_id,
            "query": job.query,
            "status": record["status"],
            "writer": record["writer"],
            "duration_ms": record["duration_ms"],
            "cost_usd": record["total_cost_microdollars"].as_i64().map(|c| c as f64 / 1e6),
            "report": report,
            "sources": sources,
        }));
    }
    Ok(out)
}

pub async fn cancel(config: Config, args: CancelArgs) -> anyhow::Result<ExitCode> {
    let rt = fleet(config).await?;
    if !rt.store.batch_cancel(&args.batch.to_string()).await? {
        bail!("no batch {}", args.batch);
    }
    println!("cancelled {}", args.batch);
    Ok(ExitCode::SUCCESS)
}
