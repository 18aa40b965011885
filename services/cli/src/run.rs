//! `trawl run "QUESTION"`: every stage in this process over the in-memory broker and store.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use trawl_broker::Subscription;
use trawl_config::Config;
use trawl_messages::documents::Root;
use trawl_messages::{
    paths, Envelope, JobOptions, JobStatus, Queue, ReportType, ResearchResult, SearchRecord,
};
use trawl_pipeline::batch::{check_task, option_problems};
use trawl_pipeline::results::job_result;
use trawl_pipeline::Runtime;

/// Flags win over the config file and the environment: each one replaces what they say.
#[derive(clap::Args)]
pub struct RunArgs {
    /// The research question.
    question: String,
    /// Search providers to use, in order (repeat the flag or separate by commas): searxng,
    /// duckduckgo, serper, serpapi, tavily, brave, newsapi, bocha. Default: search.providers.
    #[arg(long = "provider", value_name = "NAME", value_delimiter = ',')]
    providers: Vec<String>,
    /// Most pages to fetch, 1 to 1000. Default: search.max_urls.
    #[arg(long, value_name = "N")]
    max_urls: Option<usize>,
    /// Highest fetch level: 0-1 plain HTTP, 2-3 a real browser. Default: fetch.max_level.
    #[arg(long, value_name = "LEVEL")]
    max_level: Option<u8>,
    /// Search results scoring below this (0 to 1) are not fetched. Default: search.min_relevance.
    #[arg(long, value_name = "SCORE")]
    min_relevance: Option<f64>,
    /// Only results from the last day, week, month or year (or any). Default: search.freshness.
    #[arg(long, value_name = "WINDOW")]
    freshness: Option<String>,
    /// The report's shape: answer, brief or detailed. Default: report.type.
    #[arg(long, value_name = "TYPE", value_parser = report_type)]
    report_type: Option<ReportType>,
    /// The question's language as a tag (de, pt-BR, zh): providers are asked for it and the
    /// report is written in it. Default: detected from the question.
    #[arg(long, value_name = "TAG")]
    language: Option<String>,
    /// Read only pages of this domain and its subdomains (repeatable; `gov` takes every .gov
    /// host): search asks for them, and nothing outside is fetched or cited.
    #[arg(long = "include-domain", value_name = "DOMAIN")]
    include_domains: Vec<String>,
    /// Never read pages of this domain or its subdomains (repeatable); wins over
    /// --include-domain.
    #[arg(long = "exclude-domain", value_name = "DOMAIN")]
    exclude_domains: Vec<String>,
    /// A URL to read as a source, before what search finds (repeatable).
    #[arg(long = "url", value_name = "URL")]
    urls: Vec<String>,
    /// Search nothing: read only the --url pages.
    #[arg(long, requires = "urls")]
    no_search: bool,
    /// Your own documents as sources, searched beside the web (with --provider documents,
    /// instead of it): a folder, which this run indexes and may read, or a documents root URL
    /// (s3://bucket/prefix, gs://, az://), which documents.allow must hold. Sources from it
    /// are cited as doc://<path>#page=N.
    #[arg(long, value_name = "DIR|URL")]
    documents: Option<String>,
    /// Seconds until the report is written with the sources read so far.
    #[arg(long, value_name = "SECS")]
    deadline: Option<u64>,
    /// Read pages the fleet fetched within SECS seconds from its page cache instead of fetching
    /// them; 0 fetches every page. Default: cache.max_age_secs.
    #[arg(long = "cache-max-age", value_name = "SECS")]
    cache_max_age: Option<u64>,
    /// Fill these fields as data: a JSON Schema object whose properties are the values wanted
    /// (docs/fields.md). The job writes answer.json, the report shows them first, and
    /// `--format json` prints them under "answer".
    #[arg(long, value_name = "SCHEMA.json")]
    fields: Option<PathBuf>,
    /// Write the report without the LLM (extractive), even when one is configured.
    #[arg(long)]
    no_llm: bool,
    /// md: the report in markdown; json: the job's record (status, report, sources) as JSON.
    #[arg(long, value_enum, default_value = "md")]
    format: Format,
    /// Directory for the work products (the job's folder is printed on stderr). Default:
    /// output.url, ./trawl-output.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

/// A repeated flag's values as an option: absent when the flag is.
fn listed(values: &[String]) -> Option<Vec<String>> {
    (!values.is_empty()).then(|| values.to_vec())
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Format {
    Md,
    Json,
}

/// `--report-type`, by the names the config file and the API use.
fn report_type(name: &str) -> anyhow::Result<ReportType> {
    name.parse()
        .map_err(|_| anyhow::anyhow!("{name:?} is not a report type: answer, brief or detailed"))
}

impl RunArgs {
    /// The job's options from the flags, or every problem with them, each naming its flag.
    fn options(&self) -> Result<JobOptions, Vec<String>> {
        let options = JobOptions {
            max_urls: self.max_urls,
            min_relevance: self.min_relevance,
            max_level: self.max_level,
            providers: (!self.providers.is_empty()).then(|| self.providers.clone()),
            freshness: self.freshness.clone(),
            deadline_secs: self.deadline,
            cache_max_age_secs: self.cache_max_age,
            report_max_tokens: None,
            report_type: self.report_type,
            language: self.language.clone(),
            include_domains: listed(&self.include_domains),
            exclude_domains: listed(&self.exclude_domains),
            urls: listed(&self.urls),
            search: self.no_search.then_some(false),
            documents: match self.documents_root() {
                Ok(root) => root,
                Err(e) => return Err(vec![format!("--documents: {e}")]),
            },
            fields: match self.fields.as_deref().map(trawl_cli::input::read_fields) {
                Some(Ok(fields)) => Some(fields),
                Some(Err(e)) => return Err(vec![format!("{e:#}")]),
                None => None,
            },
        };
        let flag = |key: &str| match key {
            "providers" => "--provider".to_owned(),
            "include_domains" => "--include-domain".to_owned(),
            "exclude_domains" => "--exclude-domain".to_owned(),
            "urls" => "--url".to_owned(),
            "search" => "--no-search".to_owned(),
            "deadline_secs" => "--deadline".to_owned(),
            "cache_max_age_secs" => "--cache-max-age".to_owned(),
            other => format!("--{}", other.replace('_', "-")),
        };
        let problems: Vec<String> = (option_problems(&options).into_iter())
            .map(|(key, problem)| format!("{}: {problem}", flag(key)))
            .collect();
        if problems.is_empty() {
            Ok(options)
        } else {
            Err(problems)
        }
    }

    /// The root `--documents` names: a URL as given, a folder as its `file://` URL (it must
    /// exist).
    fn documents_root(&self) -> Result<Option<String>, String> {
        let Some(given) = self.documents.as_deref() else {
            return Ok(None);
        };
        if given.contains("://") {
            return Ok(Some(given.to_owned()));
        }
        let dir = std::path::Path::new(given);
        if !dir.is_dir() {
            return Err(format!("no folder at {given}"));
        }
        let root = Root::folder(dir).map_err(|e| e.to_string())?;
        Ok(Some(root.url().to_owned()))
    }

    /// Makes the configuration say what the flags say, so the stages (which read it) agree
    /// with the job's options: a provider named here is built, a browser is started only when
    /// the level allows one, and the work products go where asked.
    fn apply(&self, config: &mut Config) -> anyhow::Result<()> {
        if !self.providers.is_empty() {
            config.search.providers = self.providers.clone();
            config.search.news_providers = self.providers.clone();
        }
        if let Some(level) = self.max_level {
            config.fetch.max_level = level;
        }
        if self.no_llm {
            config.llm = None;
        }
        // A folder given here is this run's to read.
        if let (Some(dir), Ok(Some(root))) = (&self.documents, self.documents_root()) {
            if !dir.contains("://") {
                config.documents.allow.push(root);
            }
        }
        if let Some(dir) = &self.out {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("--out {}: cannot create the directory", dir.display()))?;
            let dir = std::path::absolute(dir)?;
            config.output.url = format!("file://{}", dir.display());
        }
        Ok(())
    }
}

pub async fn run(
    mut config: Config,
    env: &BTreeMap<String, String>,
    args: RunArgs,
) -> anyhow::Result<ExitCode> {
    let options = match args.options() {
        Ok(options) => options,
        Err(problems) => {
            for problem in problems {
                eprintln!("error: {problem}");
            }
            return Ok(ExitCode::from(2));
        }
    };
    let task =
        check_task(&args.question, options).map_err(|e| anyhow::anyhow!("the question: {e}"))?;
    args.apply(&mut config)?;
    if let Some(root) = &task.options.documents {
        Root::allowed(root, &config.documents.allow)
            .map_err(|e| anyhow::anyhow!("--documents: {e}"))?;
    }
    let progress = Progress::new();
    progress.stage("checking the search providers");
    check_providers(&config, env).await?;
    // This command learns its job's end from the (in-memory) results queue.
    config.broker.results_queue = true;
    let webdriver = trawl_cli::embedded::prepare_browser(&mut config).await;
    let embedded = trawl_cli::embedded::Embedded::start(config, env)
        .map_err(|e| anyhow::anyhow!("failed to start: {e}"))?
        .keep(webdriver);
    let rt = embedded.rt.clone();
    let results = rt.broker.consume(Queue::Results, 1).await?;
    let dead = rt.broker.consume(Queue::Dead, 1).await?;
    let (batch, job) = trawl_cli::embedded::submit_one(&rt, task).await?;

    progress.stage("searching");
    let outcome = wait_for(&rt, (results, dead), job, &progress).await?;
    embedded.stop().await;
    let result = outcome?;
    progress.finish(&format!(
        "{} in {:.1} s",
        result.status.as_str(),
        progress.started.elapsed().as_secs_f64()
    ));

    print_result(&rt, args.format, batch, job).await?;
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

/// Waits for `job`'s result on the results queue, showing its progress, or for a stage to
/// dead-letter one of its messages. The outer error (a delivery that cannot be acked) ends the
/// run at once; the inner one is the job's.
async fn wait_for(
    rt: &Runtime,
    (mut results, mut dead): (Box<dyn Subscription>, Box<dyn Subscription>),
    job: uuid::Uuid,
    progress: &Progress,
) -> anyhow::Result<anyhow::Result<ResearchResult>> {
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    Ok(loop {
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
                if let Some(stage) = job_stage(rt, &job.to_string()).await {
                    progress.stage(&stage);
                }
                progress.tick();
            }
        }
    })
}

/// Prints what `--format` asks for: the report's markdown, or the job's record as JSON.
async fn print_result(
    rt: &Runtime,
    format: Format,
    batch: uuid::Uuid,
    job: uuid::Uuid,
) -> anyhow::Result<()> {
    match format {
        Format::Md => {
            let report = rt
                .objects
                .get(&paths::report(batch, job))
                .await?
                .context("the report was not written")?;
            println!("{}", String::from_utf8_lossy(&report));
        }
        Format::Json => {
            let manifest = trawl_pipeline::batch::manifest(rt, batch)
                .await?
                .context("the batch's manifest was not written")?;
            let record = job_result(rt, batch, &manifest.jobs[0], &BTreeMap::new(), false).await?;
            println!("{}", serde_json::to_string_pretty(&record)?);
        }
    }
    Ok(())
}

/// What the run is doing, on stderr: a spinner when stderr is a terminal, otherwise one line
/// per change (a log or CI keeps a readable trace, without a line every tick).
struct Progress {
    bar: Option<ProgressBar>,
    last: std::cell::RefCell<String>,
    started: Instant,
}

impl Progress {
    fn new() -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            ProgressBar::new_spinner().with_style(
                ProgressStyle::with_template("{spinner} {elapsed} {msg}")
                    .expect("a valid template"),
            )
        });
        Progress {
            bar,
            last: Default::default(),
            started: Instant::now(),
        }
    }

    fn stage(&self, what: &str) {
        let mut last = self.last.borrow_mut();
        if *last == what {
            return;
        }
        *last = what.to_owned();
        match &self.bar {
            Some(bar) => bar.set_message(what.to_owned()),
            None => eprintln!("trawl: {what}"),
        }
    }

    fn tick(&self) {
        if let Some(bar) = &self.bar {
            bar.tick();
        }
    }

    fn finish(&self, what: &str) {
        match &self.bar {
            Some(bar) => bar.finish_and_clear(),
            None => eprintln!("trawl: {what}"),
        }
    }
}

/// The job's stage as a reader would put it: searching until sources are chosen, then how many
/// were fetched and read, then writing.
async fn job_stage(rt: &Runtime, job: &str) -> Option<String> {
    let p = trawl_pipeline::fanin::progress(rt, job).await.ok()??;
    if p.all_settled() {
        return Some("writing the report".into());
    }
    Some(format!(
        "{} sources chosen: {} fetched, {} read, {} settled",
        p.chosen, p.fetched, p.read, p.settled
    ))
}

/// Stops the run within seconds when no search provider could answer, saying what to set,
/// instead of retrying absent providers for half a minute and printing an empty report.
async fn check_providers(config: &Config, env: &BTreeMap<String, String>) -> anyhow::Result<()> {
    let names = &config.search.providers;
    let probed =
        trawl_search::providers::probe(names, &config.search, env, Duration::from_secs(3)).await;
    if probed.iter().any(|(_, answer)| answer.is_ok()) {
        return Ok(());
    }
    let why: Vec<String> = (probed.iter())
        .map(|(name, answer)| format!("  {name}: {}", answer.as_ref().expect_err("none is ok")))
        .collect();
    anyhow::bail!(
        "no search provider can answer:\n{}\nSet TRAWL__SEARCH__SEARXNG_URL to a SearXNG instance with JSON output \
         enabled, or a provider's API key (e.g. SERPER_API_KEY with --provider serper). \
         To try trawl without the internet, run scripts/demo.",
        why.join("\n")
    )
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

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        run: RunArgs,
    }

    fn parse(args: &[&str]) -> RunArgs {
        Cli::try_parse_from([&["trawl"], args].concat())
            .unwrap()
            .run
    }

    #[test]
    fn every_bad_flag_is_named_at_once() {
        let args = parse(&[
            "q",
            "--max-urls",
            "0",
            "--max-level",
            "7",
            "--provider",
            "searxng,bing",
            "--freshness",
            "fortnight",
            "--deadline",
            "0",
            "--language",
            "klingon",
            "--cache-max-age",
            "2592001",
        ]);
        let problems = args.options().unwrap_err();
        assert_eq!(problems.len(), 7, "{problems:?}");
        for expected in [
            "--max-urls: must be 1 to 1000, not 0",
            "--max-level: must be 0 to 3, not 7",
            "--provider: unknown provider \"bing\"",
            "--freshness: must be any, day, week, month or year, not \"fortnight\"",
            "--deadline: must be 1 to",
            "--language: \"klingon\" is not a language trawl knows",
            "--cache-max-age: must be 0 to 2592000, not 2592001",
        ] {
            assert!(
                problems.iter().any(|p| p.starts_with(expected)),
                "{expected} in {problems:?}"
            );
        }
    }

    #[test]
    fn flags_win_over_the_configuration() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("products");
        let out_arg = out.to_str().unwrap();
        let args = parse(&[
            "q",
            "--provider",
            "serper",
            "--provider",
            "brave",
            "--max-level",
            "1",
            "--no-llm",
            "--out",
            out_arg,
            "--max-urls",
            "4",
            "--report-type",
            "answer",
        ]);
        let mut config = Config {
            llm: Some(Default::default()),
            ..Default::default()
        };
        args.apply(&mut config).unwrap();
        assert_eq!(config.search.providers, ["serper", "brave"]);
        assert_eq!(config.search.news_providers, ["serper", "brave"]);
        assert_eq!(config.fetch.max_level, 1);
        assert!(config.llm.is_none());
        assert_eq!(config.output.url, format!("file://{}", out.display()));
        assert!(out.is_dir());
        let options = args.options().unwrap();
        assert_eq!(options.max_urls, Some(4));
        assert_eq!(options.report_type, Some(ReportType::Answer));
        assert_eq!(options.providers.unwrap(), ["serper", "brave"]);
        assert!(parse(&["q", "--language", "pt-BR"]).options().is_ok());
        let cache = parse(&["q", "--cache-max-age", "0"]).options().unwrap();
        assert_eq!(cache.cache_max_age_secs, Some(0));
        assert_eq!(
            parse(&["q"]).options().unwrap().cache_max_age_secs,
            None,
            "without the flag, cache.max_age_secs"
        );
    }
}
