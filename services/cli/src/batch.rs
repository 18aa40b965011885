//! `trawl submit | status | results | cancel`: batches on the fleet.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, ensure, Context};
use indicatif::{ProgressBar, ProgressStyle};
use trawl_config::Config;
use trawl_messages::{JobOptions, JobStatus};
use trawl_pipeline::batch::{
    collect, manifest, option_problems, submit as enqueue, BatchOptions, Collected,
};
use trawl_pipeline::results::{job_result, JobResult};
use trawl_pipeline::Runtime;
use trawl_store::BatchProgress;
use uuid::Uuid;

use crate::remote::Remote;

/// Where the batch commands send their requests: the fleet's broker and store (the config's
/// `broker.url`, `store.url`), or a `trawl serve` in front of it.
#[derive(clap::Args)]
pub(crate) struct ServerArgs {
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
        Remote::new(server.clone(), token.clone()).map(Some)
    }
}

#[derive(clap::Args)]
pub struct SubmitArgs {
    /// One question per line, or JSONL lines {"query": "…", "id": "…", "metadata": {…},
    /// "options": {"max_urls": 5}}; a line without an id has its line number as id. With
    /// --template: a CSV table whose header names its columns.
    file: PathBuf,
    /// One question per row of FILE (a CSV table): "What is the headquarters city of
    /// {company}?" fills {company} from the row's company column. The row's columns come back
    /// as its metadata, an id column is its id (else its line number).
    #[arg(long, value_name = "TEXT")]
    template: Option<String>,
    /// POST signed `job.completed` and `batch.completed` events to this URL.
    #[arg(long, value_name = "URL")]
    webhook: Option<String>,
    /// LLM spend allowed for the batch, in dollars (priced with llm.*_price_per_mtok); once
    /// spent, the remaining jobs are written without the LLM.
    #[arg(long, value_name = "USD")]
    budget: Option<f64>,
    /// Every question reads only pages of this domain and its subdomains (repeatable), unless
    /// its line sets include_domains itself.
    #[arg(long = "include-domain", value_name = "DOMAIN")]
    include_domains: Vec<String>,
    /// No question reads pages of this domain or its subdomains (repeatable), unless its line
    /// sets exclude_domains itself.
    #[arg(long = "exclude-domain", value_name = "DOMAIN")]
    exclude_domains: Vec<String>,
    /// Read pages the fleet fetched within SECS seconds from its page cache instead of fetching
    /// them; 0 fetches every page. Default: cache.max_age_secs. A line's cache_max_age_secs
    /// wins.
    #[arg(long = "cache-max-age", value_name = "SECS")]
    cache_max_age_secs: Option<u64>,
    /// Every question fills these fields (a JSON Schema object whose properties are the
    /// values wanted; docs/fields.md), unless its line gives its own `fields`. Each job then
    /// writes answer.json, and `trawl results --format csv` has a column per field.
    #[arg(long, value_name = "SCHEMA.json")]
    fields: Option<PathBuf>,
    /// Every question also searches and reads this documents root (s3://bucket/prefix,
    /// file:///dir …), unless its line names its own `documents`; the server's
    /// documents.allow must hold it.
    #[arg(long, value_name = "URL")]
    documents: Option<String>,
    #[command(flatten)]
    server: ServerArgs,
}

impl SubmitArgs {
    /// The batch-wide options the flags give, which each line's own options override.
    fn defaults(&self) -> anyhow::Result<JobOptions> {
        let listed = |l: &[String]| (!l.is_empty()).then(|| l.to_vec());
        Ok(JobOptions {
            include_domains: listed(&self.include_domains),
            exclude_domains: listed(&self.exclude_domains),
            cache_max_age_secs: self.cache_max_age_secs,
            documents: self.documents.clone(),
            fields: (self.fields.as_deref())
                .map(trawl_cli::input::read_fields)
                .transpose()?,
            ..JobOptions::default()
        })
    }
}

/// The `trawl submit` flag that sets the batch-wide option `key`.
fn flag(key: &str) -> String {
    match key {
        "cache_max_age_secs" => "--cache-max-age".to_owned(),
        // include_domains → --include-domain, a flag given once per domain.
        other => format!("--{}", other.trim_end_matches('s').replace('_', "-")),
    }
}

/// The batch-wide `defaults`, checked: a problem is named by its flag.
fn check_defaults(defaults: &JobOptions) -> anyhow::Result<()> {
    match option_problems(defaults).into_iter().next() {
        Some((key, problem)) => bail!("{}: {problem}", flag(key)),
        None => Ok(()),
    }
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
    /// jsonl: DIR/results.jsonl (one job per line). Each JSON record holds the question's id
    /// and metadata, its status, report, sources and answer (its fields). csv:
    /// DIR/results.csv, a row per question: id, query, status, metadata, and each field with
    /// <field>_source.
    #[arg(long, value_parser = ["md", "json", "jsonl", "csv"], default_value = "md")]
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
    ensure!(
        config.broker.url.is_some() && config.store.url.is_some(),
        "batches need a fleet: set broker.url and store.url (TRAWL__BROKER__URL, TRAWL__STORE__URL), or use a `trawl serve` with --server URL --token T; `trawl run` answers one question without one"
    );
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
    // A file is about what its questions weigh in the queues: past that bound it is refused
    // before it is read whole.
    let what = format!("{} (broker.max_batch_bytes)", args.file.display());
    let bytes = trawl_cli::input::read_file(&args.file, config.broker.max_batch_bytes, &what)?;
    let invalid = || format!("{} is not a valid batch", args.file.display());
    let defaults = args.defaults()?;
    check_defaults(&defaults)?;
    let questions =
        trawl_pipeline::batch::questions_from_file(&bytes, args.template.as_deref(), &defaults)
            .with_context(invalid)?;
    if let Some(url) = &args.webhook {
        let parsed =
            url::Url::parse(url).with_context(|| format!("invalid --webhook URL {url:?}"))?;
        ensure!(
            matches!(parsed.scheme(), "http" | "https"),
            "--webhook must be an http(s) URL"
        );
    }
    ensure!(
        args.budget.is_none_or(|b| b.is_finite() && b > 0.0),
        "--budget must be a positive amount of dollars"
    );
    trawl_pipeline::batch::check_queued_bytes(&questions, config.broker.max_batch_bytes)
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.file.display()))?;
    let (jobs, batch_id) = if let Some(remote) = args.server.remote()? {
        // Read above, so UTF-8: the server reads it again, as this did.
        let body = crate::remote::FileBatch {
            file: std::str::from_utf8(&bytes).with_context(invalid)?,
            template: args.template.as_deref(),
            options: &defaults,
            webhook: args.webhook.as_deref(),
            budget_usd: args.budget,
        };
        let created = (remote.submit(&body).await).context("failed to submit the batch")?;
        (created.jobs.len(), created.batch_id)
    } else {
        trawl_pipeline::batch::check_budget(&config, args.budget)?;
        let allow = &config.documents.allow;
        if let Some((id, e)) = trawl_pipeline::batch::refused_documents(&questions, allow) {
            bail!("{}: question {id}: documents: {e}", args.file.display());
        }
        let rt = fleet(config).await?;
        let progress = bar(questions.len() as u64, "enqueued");
        let options = BatchOptions {
            webhook: args.webhook,
            budget_usd: args.budget,
            owner: None,
        };
        let manifest =
            enqueue(&rt, questions, options, |n| progress.set_position(n as u64)).await?;
        progress.finish_and_clear();
        (manifest.jobs.len(), manifest.batch_id)
    };
    eprintln!("enqueued {jobs} questions");
    println!("{batch_id}");
    Ok(ExitCode::SUCCESS)
}

/// `counts` as `name n, name n, …`.
fn list(counts: &BTreeMap<String, u64>) -> String {
    let parts: Vec<String> = counts.iter().map(|(k, v)| format!("{k} {v}")).collect();
    parts.join(", ")
}

fn describe(p: &BatchProgress) -> String {
    let mut s = format!("{}/{} jobs ended", p.finished, p.total);
    if !p.by_status.is_empty() {
        s.push_str(&format!(" ({})", list(&p.by_status)));
    }
    if p.cancelled {
        s.push_str(", cancelled");
    }
    s
}

/// The last line of `trawl status`.
fn cost_line(cost_usd: f64, unused_sources: &BTreeMap<String, u64>) -> String {
    let unused = if unused_sources.is_empty() {
        "none".into()
    } else {
        list(unused_sources)
    };
    format!("cost so far: ${cost_usd:.4}; sources not used: {unused}")
}

pub async fn status(config: Config, args: StatusArgs) -> anyhow::Result<ExitCode> {
    if let Some(remote) = args.server.remote()? {
        return status_remote(&remote, args).await;
    }
    let rt = fleet(config).await?;
    let batch = args.batch.to_string();
    let get = || async {
        trawl_pipeline::batch::record(&rt, args.batch)
            .await?
            .with_context(|| {
                format!("no batch {batch} (was it submitted to this store and prefix?)")
            })
    };
    let mut record = get().await?;
    if args.wait {
        let progress = bar(record.progress.total, "jobs");
        while !record.progress.is_done() {
            progress.set_position(record.progress.finished);
            progress.set_message(describe(&record.progress));
            tokio::time::sleep(Duration::from_millis(500)).await;
            record = get().await?;
        }
        progress.finish_and_clear();
    }
    println!("batch {batch}: {}", describe(&record.progress));
    let code = exit_code(args.wait, &record.progress);
    // The fleet's queues, so an operator sees where pending work waits.
    let mut depths = Vec::new();
    for q in trawl_cli::monitor::queues() {
        depths.push(format!("{} {}", q.label(), rt.broker.depth(q).await?));
    }
    println!("queues (all batches): {}", depths.join(", "));
    let usage = record.usage();
    println!(
        "{}",
        cost_line(usage.cost_microdollars as f64 / 1e6, &usage.unused_sources)
    );
    Ok(code)
}

/// `status --wait` tells a script whether every job ended without failing.
fn exit_code(waited: bool, progress: &BatchProgress) -> ExitCode {
    let failed = progress.by_status.get(JobStatus::Failed.as_str()) > Some(&0);
    match waited && failed {
        true => ExitCode::from(crate::UNANSWERED),
        false => ExitCode::SUCCESS,
    }
}

/// `trawl status` through the API, which serves no queue depths: that line is left out.
async fn status_remote(remote: &Remote, args: StatusArgs) -> anyhow::Result<ExitCode> {
    let batch = args.batch;
    let get = || async {
        remote
            .batch(batch)
            .await
            .with_context(|| format!("failed to read batch {batch}"))
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
    let progress = crate::remote::progress(&s);
    println!("batch {batch}: {}", describe(&progress));
    println!("{}", cost_line(s.cost_usd, &s.unused_sources));
    Ok(exit_code(args.wait, &progress))
}

pub async fn results(config: Config, args: ResultsArgs) -> anyhow::Result<ExitCode> {
    if let Some(remote) = args.server.remote()? {
        return results_remote(&remote, args).await;
    }
    let rt = Runtime::embedded(config)?;
    let manifest = manifest(&rt, args.batch)
        .await?
        .with_context(|| format!("no batch {} under {}", args.batch, rt.objects.location()))?;
    if args.format != "md" {
        let mut records = Export::create(&args.out, &args.format)?;
        let statuses = trawl_pipeline::batch::job_statuses(&rt, manifest.batch_id).await?;
        for job in &manifest.jobs {
            records.push(&job_result(&rt, manifest.batch_id, job, &statuses, false).await?)?;
        }
        return records.finish(&args.out);
    }
    wrote_reports(&args.out, &collect(&rt, &manifest, &args.out).await?);
    Ok(ExitCode::SUCCESS)
}

/// DIR/results.json (`format` json: one array, as `serde_json::to_string_pretty` writes it) or
/// DIR/results.jsonl, written a record at a time so that no export is held whole. It is
/// written beside its place and moved there once whole, so a failed export leaves none.
struct Records {
    file: std::io::BufWriter<std::fs::File>,
    path: PathBuf,
    part: PathBuf,
    json: bool,
    count: usize,
}

impl Records {
    fn create(out: &Path, format: &str) -> anyhow::Result<Records> {
        std::fs::create_dir_all(out)
            .with_context(|| format!("failed to create {}", out.display()))?;
        // `format` is json or jsonl: the file's extension.
        let path = out.join(format!("results.{format}"));
        let part = out.join(format!("results.{format}.part"));
        let file = std::fs::File::create(&part)
            .with_context(|| format!("failed to create {}", part.display()))?;
        Ok(Records {
            file: std::io::BufWriter::new(file),
            path,
            part,
            json: format == "json",
            count: 0,
        })
    }

    fn push(&mut self, record: &JobResult) -> anyhow::Result<()> {
        let written = if self.json {
            // An array element pretty-printed is the record's own lines, two spaces in.
            let pretty = serde_json::to_string_pretty(record)?.replace('\n', "\n  ");
            let open = if self.count == 0 { "[\n" } else { ",\n" };
            write!(self.file, "{open}  {pretty}")
        } else {
            serde_json::to_writer(&mut self.file, record)?;
            self.file.write_all(b"\n")
        };
        written.context("failed to write the results")?;
        self.count += 1;
        Ok(())
    }

    fn finish(mut self) -> anyhow::Result<ExitCode> {
        if self.json {
            let close = if self.count == 0 { "[]" } else { "\n]" };
            self.file
                .write_all(close.as_bytes())
                .context("failed to write the results")?;
        }
        self.file.flush().context("failed to write the results")?;
        std::fs::rename(&self.part, &self.path)
            .with_context(|| format!("failed to write {}", self.path.display()))?;
        eprintln!("wrote {} jobs to {}", self.count, self.path.display());
        Ok(ExitCode::SUCCESS)
    }
}

/// A batch's results as JSON records, written as they come, or as a CSV table.
enum Export {
    Records(Records),
    Table(trawl_pipeline::table::Table),
}

impl Export {
    fn create(out: &Path, format: &str) -> anyhow::Result<Export> {
        Ok(match format {
            "csv" => Export::Table(Default::default()),
            _ => Export::Records(Records::create(out, format)?),
        })
    }

    fn push(&mut self, job: &JobResult) -> anyhow::Result<()> {
        match self {
            Export::Records(r) => r.push(job),
            Export::Table(t) => {
                t.push(job);
                Ok(())
            }
        }
    }

    fn finish(self, out: &Path) -> anyhow::Result<ExitCode> {
        match self {
            Export::Records(r) => r.finish(),
            Export::Table(t) => {
                let rows = t.len();
                std::fs::create_dir_all(out)
                    .with_context(|| format!("failed to create {}", out.display()))?;
                // Beside its place first, so a failed export leaves none.
                let (path, part) = (out.join("results.csv"), out.join("results.csv.part"));
                let file = std::fs::File::create(&part)
                    .with_context(|| format!("failed to create {}", part.display()))?;
                t.write(std::io::BufWriter::new(file))
                    .context("failed to write the results")?;
                std::fs::rename(&part, &path)
                    .with_context(|| format!("failed to write {}", path.display()))?;
                eprintln!("wrote {rows} jobs to {}", path.display());
                Ok(ExitCode::SUCCESS)
            }
        }
    }
}

fn wrote_reports(out: &Path, collected: &Collected) {
    let pending = match collected.jobs_without_report {
        0 => String::new(),
        n => format!(" ({n} jobs have no report yet)"),
    };
    let with_report = collected.jobs_with_report;
    eprintln!("wrote {with_report} reports to {}{pending}", out.display());
}

/// `trawl results` through the API: the same files, from the batch's export (a request per
/// page of jobs), written as the lines come. The batch summary (`summary.jsonl`, `summary.md`)
/// is not served by the API, so it is absent.
async fn results_remote(remote: &Remote, args: ResultsArgs) -> anyhow::Result<ExitCode> {
    let batch = args.batch;
    let status = remote
        .batch(batch)
        .await
        .with_context(|| format!("failed to read batch {batch}"))?;
    let md = args.format == "md";
    let mut export = remote.export(batch, status.total, md);
    let progress = bar(status.total, "jobs");
    let failed = || format!("failed to read the results of batch {batch}");
    if !md {
        let mut records = Export::create(&args.out, &args.format)?;
        while let Some(job) = export.next().await.with_context(failed)? {
            records.push(&job)?;
            progress.inc(1);
        }
        progress.finish_and_clear();
        return records.finish(&args.out);
    }
    let mut collected = Collected::default();
    while let Some(job) = export.next().await.with_context(failed)? {
        progress.inc(1);
        let (Some(_), Some(products)) = (&job.report, &job.work_products) else {
            collected.jobs_without_report += 1;
            continue;
        };
        let target = args.out.join(job.job_id.to_string());
        for (name, text) in products {
            let path = target.join(safe_relative(name).with_context(|| {
                format!("the server named a work product {name:?}, which is not a relative path")
            })?);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .with_context(|| format!("failed to create {}", parent.display()))?;
            }
            std::fs::write(&path, text)
                .with_context(|| format!("failed to write {}", path.display()))?;
        }
        collected.jobs_with_report += 1;
    }
    progress.finish_and_clear();
    wrote_reports(&args.out, &collected);
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

pub async fn cancel(config: Config, args: CancelArgs) -> anyhow::Result<ExitCode> {
    if let Some(remote) = args.server.remote()? {
        remote
            .cancel(args.batch)
            .await
            .with_context(|| format!("failed to cancel batch {}", args.batch))?;
    } else {
        let rt = fleet(config).await?;
        let found = trawl_pipeline::batch::cancel(&rt, args.batch).await?;
        ensure!(found, "no batch {}", args.batch);
    }
    println!("cancelled {}", args.batch);
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    use trawl_pipeline::batch::{parse_batch, Question};

    /// `questions` with the batch's `defaults`, checked as `trawl submit` checks them.
    fn with_defaults(
        questions: Vec<Question>,
        defaults: &JobOptions,
    ) -> anyhow::Result<Vec<Question>> {
        check_defaults(defaults)?;
        trawl_pipeline::batch::with_defaults(questions, defaults)
            .map_err(|(id, e)| anyhow::anyhow!("question {id:?}: {e}"))
    }

    #[test]
    fn the_batchs_domains_hold_where_a_line_is_silent() {
        let questions = parse_batch(
            br#"{"query": "a"}
{"query": "b", "include_domains": ["example.org"]}"#,
        )
        .unwrap();
        let defaults = JobOptions {
            include_domains: Some(vec!["gov".into()]),
            ..JobOptions::default()
        };
        let checked = with_defaults(questions, &defaults).unwrap();
        assert!(checked[0].task.options.domains().allows("data.census.gov"));
        assert!(!checked[1].task.options.domains().allows("data.census.gov"));
        assert!(checked[1].task.options.domains().allows("www.example.org"));
        // A wrong flag is named as the flag.
        let bad = JobOptions {
            exclude_domains: Some(vec!["https://example.org/".into()]),
            ..JobOptions::default()
        };
        let err = with_defaults(checked, &bad).unwrap_err().to_string();
        assert!(
            err.starts_with("--exclude-domain: \"https://example.org/\" is not a domain"),
            "{err}"
        );
    }

    #[test]
    fn the_batchs_cache_max_age_holds_where_a_line_is_silent() {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            submit: SubmitArgs,
        }
        let args =
            <Cli as clap::Parser>::try_parse_from(["trawl", "b.jsonl", "--cache-max-age", "0"])
                .unwrap()
                .submit;
        assert_eq!(args.defaults().unwrap().cache_max_age_secs, Some(0));
        let questions = parse_batch(
            br#"{"query": "a"}
{"query": "b", "options": {"cache_max_age_secs": 3600}}"#,
        )
        .unwrap();
        let defaults = JobOptions {
            cache_max_age_secs: Some(0),
            ..JobOptions::default()
        };
        let checked = with_defaults(questions, &defaults).unwrap();
        assert_eq!(checked[0].task.options.cache_max_age_secs, Some(0));
        assert_eq!(checked[1].task.options.cache_max_age_secs, Some(3600));
        let too_old = JobOptions {
            cache_max_age_secs: Some(2_592_001),
            ..JobOptions::default()
        };
        let err = with_defaults(checked, &too_old).unwrap_err().to_string();
        assert!(
            err.starts_with("--cache-max-age: must be 0 to 2592000"),
            "{err}"
        );
    }

    #[test]
    fn status_wait_exits_3_when_jobs_failed() {
        let progress = |failed: u64| BatchProgress {
            total: 3,
            finished: 3,
            by_status: [
                ("done".to_string(), 3 - failed),
                ("failed".to_string(), failed),
            ]
            .into_iter()
            .collect(),
            ..Default::default()
        };
        assert_eq!(
            exit_code(true, &progress(1)),
            ExitCode::from(crate::UNANSWERED)
        );
        assert_eq!(exit_code(true, &progress(0)), ExitCode::SUCCESS);
        // Without --wait the status is a snapshot, not a verdict.
        assert_eq!(exit_code(false, &progress(1)), ExitCode::SUCCESS);
    }

    fn record(n: u128) -> JobResult {
        JobResult {
            id: n.to_string(),
            metadata: serde_json::json!({"k": [n as u64, "a\nb"]})
                .as_object()
                .cloned()
                .unwrap_or_default(),
            job_id: Uuid::from_u128(n),
            query: format!("question {n}"),
            status: trawl_messages::JobState::Ended(trawl_messages::JobStatus::Done),
            writer: Some(trawl_messages::ReportWriter::Extractive),
            duration_ms: Some(12),
            cost_usd: Some(0.25),
            report: Some("# r\n\n[1] x".into()),
            sources: serde_json::json!([{"idx": 0}]),
            answer: None,
            work_products: None,
            asked: Vec::new(),
        }
    }

    /// Written a record at a time, the files are what serialising the whole list would give.
    #[test]
    fn records_stream_to_the_files_a_whole_list_would_make() {
        let dir = std::env::temp_dir().join(format!("trawl-records-{}", Uuid::now_v7()));
        for count in [0, 1, 3] {
            let all: Vec<JobResult> = (0..count).map(record).collect();
            for format in ["json", "jsonl"] {
                let mut records = Records::create(&dir, format).unwrap();
                for r in &all {
                    records.push(r).unwrap();
                }
                records.finish().unwrap();
                let name = format!("results.{format}");
                let written = std::fs::read_to_string(dir.join(&name)).unwrap();
                let whole = if format == "json" {
                    serde_json::to_string_pretty(&all).unwrap()
                } else {
                    all.iter()
                        .map(|r| serde_json::to_string(r).unwrap() + "\n")
                        .collect()
                };
                assert_eq!(written, whole, "{count} in {format}");
                assert!(!dir.join(format!("{name}.part")).exists());
            }
        }
        std::fs::remove_dir_all(dir).unwrap();
    }
}
