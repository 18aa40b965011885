//! `trawl run "QUESTION"`: every stage in this process over the in-memory broker and store.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use trawl_config::Config;
use trawl_messages::{paths, Envelope, JobOptions, JobStatus, Queue, ResearchResult, SearchRecord};
use trawl_pipeline::batch::check_task;
use trawl_pipeline::Runtime;

#[derive(clap::Args)]
pub struct RunArgs {
    /// The research question.
    question: String,
}

pub async fn run(mut config: Config, args: RunArgs) -> anyhow::Result<ExitCode> {
    let task = check_task(&args.question, JobOptions::default())
        .map_err(|e| anyhow::anyhow!("bad question: {e}"))?;
    let env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
    // This command learns its job's end from the (in-memory) results queue.
    config.broker.results_queue = true;
    let webdriver = trawl_cli::embedded::prepare_browser(&mut config).await;
    let embedded = trawl_cli::embedded::Embedded::start(config, &env)
        .map_err(|e| anyhow::anyhow!("failed to start: {e}"))?
        .keep(webdriver);
    let rt = embedded.rt.clone();
    let mut results = rt.broker.consume(Queue::Results, 1).await?;
    let mut dead = rt.broker.consume(Queue::Dead, 1).await?;
    let (batch, job) = trawl_cli::embedded::submit_one(&rt, task).await?;

    let bar = ProgressBar::new_spinner().with_style(
        ProgressStyle::with_template("{spinner} {elapsed} {msg}").expect("a valid template"),
    );
    bar.set_message("searching");
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    let outcome: anyhow::Result<ResearchResult> = loop {
        tokio::select! {
            Some(d) = results.next() => {
                let env = Envelope::<ResearchResult>::decode(&d.message.body);
                d.ack().await?;
                if let Some(env) = env.ok().filter(|env| env.job_id == job) {
                    break Ok(env.body);
                }
            }
            Some(d) = dead.next() => {
                let reason = d.message.headers.get(trawl_broker::HEADER_REASON).cloned().unwrap_or_default();
                let queue = d.message.headers.get(trawl_broker::HEADER_QUEUE).cloned().unwrap_or_default();
                d.ack().await?;
                break Err(anyhow::anyhow!("the {queue} stage gave up: {reason}"));
            }
            _ = tick.tick() => {
                bar.tick();
                if let Ok(Some((meta, records))) = trawl_pipeline::fanin::job_state(&rt, &job.to_string()).await {
                    bar.set_message(format!("reading sources: {}/{} done", records.len(), meta.sources.len()));
                }
            }
        }
    };
    bar.finish_and_clear();
    embedded.stop().await;
    let result = outcome?;

    let report = rt
        .objects
        .get(&paths::report(batch, job))
        .await?
        .context("the report was not written")?;
    println!("{}", String::from_utf8_lossy(&report));
    if matches!(result.status, JobStatus::NoSources | JobStatus::NoAnswer) {
        explain_search(&rt, batch, job).await;
    }
    if rt.config.llm.is_some() {
        explain_fallbacks();
    }
    eprintln!(
        "work products: {}",
        rt.objects.where_is(&paths::job_dir(batch, job))
    );
    Ok(match result.status {
        JobStatus::Done | JobStatus::Partial => ExitCode::SUCCESS,
        _ => ExitCode::from(crate::UNANSWERED),
    })
}

/// Says which LLM steps fell back to their non-LLM path, loudly when the LLM never answered:
/// a wrong URL, model or key should not pass for a working setup.
fn explain_fallbacks() {
    let (answered, fallbacks) = trawl_llm::process_fallbacks();
    if fallbacks.is_empty() {
        return;
    }
    let list = (fallbacks.iter())
        .map(|(step, n)| format!("{step} ×{n}"))
        .collect::<Vec<_>>()
        .join(", ");
    if answered == 0 {
        eprintln!(
            "warning: every LLM call failed ({list}): the report was written without the LLM; check llm.base_url, llm.model and the API key"
        );
    } else {
        eprintln!("note: some LLM steps fell back to their non-LLM path ({list})");
    }
}

/// When nothing could be cited, say what the search providers reported: most often the cause
/// is a provider that is not running or not configured.
async fn explain_search(rt: &Runtime, batch: uuid::Uuid, job: uuid::Uuid) {
    let Ok(Some(bytes)) = rt.objects.get(&paths::search(batch, job)).await else {
        return;
    };
    let Ok(record) = serde_json::from_slice::<SearchRecord>(&bytes) else {
        return;
    };
    for attempt in record.attempts.iter().filter(|a| a.failed()) {
        eprintln!("search: {}: {}", attempt.provider, attempt.detail);
    }
    if record.results.is_empty() {
        eprintln!(
            "hint: check search.providers and search.searxng_url ({})",
            rt.config.search.searxng_url
        );
    }
}
