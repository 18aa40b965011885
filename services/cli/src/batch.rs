//! `trawl submit | status | results | cancel`: batches on the fleet.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context};
use indicatif::{ProgressBar, ProgressStyle};
use trawl_config::Config;
use trawl_pipeline::batch::{collect, manifest, parse_batch, submit as enqueue};
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
    /// Directory to write <job>/report.md, sources.json and the other work products into.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
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
    let manifest = enqueue(&rt, tasks, args.webhook.clone(), |n| {
        progress.set_position(n as u64)
    })
    .await?;
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

pub async fn cancel(config: Config, args: CancelArgs) -> anyhow::Result<ExitCode> {
    let rt = fleet(config).await?;
    if !rt.store.batch_cancel(&args.batch.to_string()).await? {
        bail!("no batch {}", args.batch);
    }
    println!("cancelled {}", args.batch);
    Ok(ExitCode::SUCCESS)
}
