//! `trawl mcp`: trawl's tools for agents over the Model Context Protocol, on the official Rust
//! SDK (rmcp), over stdio or streamable HTTP.
//!
//! - `research`: a question → the cited report and its sources, kept within `mcp.max_tokens`;
//!   the full work products are referenced by path. It waits for the report, which takes
//!   longer than many clients wait for one call (60 s), so for those:
//! - `research_start` → a `research_id` at once; `research_status` → where the job is;
//!   `research_result` → the report once the job has ended.
//! - Each job's work products are resources, `trawl://jobs/{batch}/{job}/{name}`, linked from
//!   the results; every research result also carries its fields as structured content.
//! - `search`: a question → the search stage's analysis and scored results, without fetching.
//! - `extract`: a URL → its main content as markdown (robots.txt, the SSRF guard, levels 0–1).
//!
//! With `broker.url` and `store.url` set, `research` goes to the fleet and HTTP callers need an
//! API token (`trawl token create`); otherwise every stage runs in this process, as in
//! `trawl run`, and the HTTP transport listens on loopback only.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock as Content, Implementation, ListResourceTemplatesResult,
    PaginatedRequestParams, ProgressNotificationParam, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{
    schemars, tool, tool_handler, tool_router, ErrorData, RoleServer, ServerHandler, ServiceExt,
};
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio::sync::Mutex;
use trawl_config::Config;
use trawl_fetch::http::Fetcher;
use trawl_fetch::one::fetch_one;
use trawl_messages::{paths, JobOptions, JobRecord};
use trawl_pipeline::batch::{check_task, TaskError};
use trawl_pipeline::serve::{signals, Shutdown};
use trawl_pipeline::{Runtime, StageError};
use trawl_search::SearchStage;
use trawl_synthesize::tokens::Tokenizer;
use uuid::Uuid;

use crate::embedded::{prepare_browser, submit_one, Embedded};
use crate::extract::{of_fetched, render, Format};

#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("failed to start the stages: {0}")]
    Stages(#[from] crate::embedded::StartError),
    #[error("failed to start the stages: {0}")]
    Search(#[from] trawl_search::stage::BuildError),
    #[error("failed to start the stages: HTTP client: {0}")]
    Fetcher(reqwest::Error),
    #[error(transparent)]
    Connect(#[from] trawl_pipeline::runtime::ConnectError),
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        addr: String,
        source: std::io::Error,
    },
    #[error("{0} is not a loopback address: without a shared store (store.url) there are no API tokens to check, so `trawl mcp --http` listens on 127.0.0.1 or ::1 only")]
    NotLoopback(String),
    #[error("the MCP session failed: {0}")]
    Session(String),
}

/// `trawl mcp`'s arguments.
#[derive(clap::Args)]
pub struct McpArgs {
    /// Serve streamable HTTP at /mcp instead of stdio, on mcp.addr or this address.
    #[arg(long, value_name = "HOST:PORT", num_args = 0..=1, default_missing_value = "")]
    pub http: Option<String>,
}

/// Runs `trawl mcp`: one stdio session, or HTTP until SIGTERM or SIGINT.
pub async fn run(config: Config, args: McpArgs) -> anyhow::Result<std::process::ExitCode> {
    let env: BTreeMap<String, String> = std::env::vars().collect();
    // stdout may be the protocol channel: logs go to stderr.
    trawl_telemetry::init_logs(config.secret_values(&env));
    // Bound before the stages start, so a taken port or a refused address fails at once.
    let listener = match args.http.as_deref() {
        None => None,
        Some("") => Some(listen(&config.mcp.addr, has_fleet(&config)).await?),
        Some(addr) => Some(listen(addr, has_fleet(&config)).await?),
    };
    let backend = Arc::new(Backend::start(config, &env).await?);
    let served = match listener {
        None => serve_stdio(backend.clone()).await,
        Some(listener) => {
            let shutdown = Shutdown::on(signals(), &trawl_telemetry::Drain::default());
            serve_http(
                backend.clone(),
                listener,
                |local| eprintln!("MCP server listening on http://{local}/mcp"),
                shutdown.wait(),
            )
            .await
        }
    };
    backend.stop().await;
    served?;
    Ok(std::process::ExitCode::SUCCESS)
}

/// What every session shares: the runtime (fleet or in-process stages) and the tools' parts.
pub struct Backend {
    rt: Runtime,
    /// The in-process stages when there is no fleet; stopped when the server ends.
    embedded: Mutex<Option<Embedded>>,
    /// Research goes to a fleet, whose store holds the API tokens HTTP callers must show.
    fleet: bool,
    search: SearchStage,
    fetcher: Fetcher,
    /// The reading model is unknown: the pessimistic estimate keeps results within the limit.
    tokens: Tokenizer,
}

impl Backend {
    /// Connects to the fleet when one is configured, else starts every stage in this process.
    /// API keys are looked up in `env`.
    pub async fn start(
        mut config: Config,
        env: &BTreeMap<String, String>,
    ) -> Result<Backend, McpError> {
        let fleet = has_fleet(&config);
        let (rt, embedded) = if fleet {
            let rt = Runtime::connect(config, Duration::from_secs(30)).await?;
            (rt, None)
        } else {
            let webdriver = prepare_browser(&mut config).await;
            let embedded = Embedded::start(config, env)?.keep(webdriver);
            (embedded.rt.clone(), Some(embedded))
        };
        let search = SearchStage::with_env(&rt.config, env)?;
        let fetcher = Fetcher::new(&rt.config.fetch).map_err(McpError::Fetcher)?;
        Ok(Backend {
            rt,
            embedded: Mutex::new(embedded),
            fleet,
            search,
            fetcher,
            tokens: Tokenizer::approx(),
        })
    }

    /// Stops the in-process stages, letting their work in hand finish.
    pub async fn stop(&self) {
        if let Some(embedded) = self.embedded.lock().await.take() {
            embedded.stop().await;
        }
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
pub(crate) struct ResearchArgs {
    /// The research question, in any language.
    pub question: String,
    /// Most web pages to read (default: the server's search.max_urls).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub max_urls: Option<usize>,
    /// Highest fetch level: 0–1 plain HTTP, 2–3 a real browser.
    #[serde(default)]
    #[schemars(range(min = 0, max = 3))]
    pub max_level: Option<u8>,
    /// Search providers to try, in order (searxng, duckduckgo, serper, serpapi, tavily, brave,
    /// newsapi, bocha).
    #[serde(default)]
    pub providers: Option<Vec<String>>,
    /// Recency window: any, day, week, month or year.
    #[serde(default)]
    pub freshness: Option<String>,
    /// Read only pages of these domains and their subdomains (e.g. ["example.com", "gov"]).
    #[serde(default)]
    pub include_domains: Option<Vec<String>>,
    /// Never read pages of these domains or their subdomains.
    #[serde(default)]
    pub exclude_domains: Option<Vec<String>>,
    /// URLs to read as sources, before what search finds.
    #[serde(default)]
    pub urls: Option<Vec<String>>,
    /// Read pages the fleet fetched within this many seconds from its page cache instead of
    /// fetching them; 0 fetches every page (default: the server's cache.max_age_secs).
    #[serde(default)]
    #[schemars(range(min = 0, max = 2592000))]
    pub cache_max_age_secs: Option<u64>,
}

impl ResearchArgs {
    fn into_job(self) -> (String, JobOptions) {
        let options = JobOptions {
            max_urls: self.max_urls,
            max_level: self.max_level,
            providers: self.providers,
            freshness: self.freshness,
            include_domains: self.include_domains,
            exclude_domains: self.exclude_domains,
            urls: self.urls,
            cache_max_age_secs: self.cache_max_age_secs,
            ..JobOptions::default()
        };
        (self.question, options)
    }
}

/// A research job's id for agents: its batch and job, which locate its work products.
fn research_id(batch: Uuid, job: Uuid) -> String {
    format!("{batch}/{job}")
}

/// Why a tool call failed; the text is what the agent reads.
#[derive(Debug, thiserror::Error)]
enum ToolError {
    #[error("{0:?} is not a research_id: pass the one research_start returned")]
    ResearchId(String),
    #[error("bad query: {0}")]
    BadQuery(TaskError),
    #[error("bad question: {0}")]
    BadQuestion(TaskError),
    /// Every provider's failure, as the search stage lists them.
    #[error("every search provider failed: {0}")]
    SearchFailed(String),
    #[error("could not enqueue the question: {0}")]
    Enqueue(StageError),
    #[error("cancelled; job {job} of batch {batch} was stopped")]
    Cancelled { batch: Uuid, job: Uuid },
    #[error("the store failed: {0}")]
    Store(#[from] trawl_store::StoreError),
    #[error("no report after {secs} s (mcp.research_timeout_secs); job {job} of batch {batch} is still running: `trawl status {batch}` follows it")]
    TimedOut { secs: u64, batch: Uuid, job: Uuid },
    #[error("no research {}: it never existed, or it ended long enough ago to be forgotten", research_id(*.batch, *.job))]
    NoResearch { batch: Uuid, job: Uuid },
    #[error("could not read the job's state: {0}")]
    JobState(StageError),
    #[error("could not read {key}: {source}")]
    Read {
        key: String,
        source: trawl_store::ObjectError,
    },
    /// A job that ended, by its status, without writing a report.
    #[error("job {job} ended ({status}) without a report")]
    NoReport { job: Uuid, status: String },
    #[error("invalid URL {url:?}: {source}")]
    BadUrl {
        url: String,
        source: url::ParseError,
    },
    #[error("{url}: {source}")]
    Fetch {
        url: String,
        source: trawl_fetch::one::OneError,
    },
}

fn parse_research_id(id: &str) -> Result<(Uuid, Uuid), ToolError> {
    let parsed = id
        .split_once('/')
        .and_then(|(b, j)| Some((Uuid::parse_str(b).ok()?, Uuid::parse_str(j).ok()?)));
    parsed.ok_or_else(|| ToolError::ResearchId(id.to_owned()))
}

/// Where a job's work product `name` is, as a resource.
fn resource_uri(batch: Uuid, job: Uuid, name: &str) -> String {
    format!("trawl://jobs/{batch}/{job}/{name}")
}

/// The batch, job and work product a resource URI names; `None` for any other URI, or a name
/// that would leave the job's folder.
fn parse_resource_uri(uri: &str) -> Option<(Uuid, Uuid, String)> {
    let rest = uri.strip_prefix("trawl://jobs/")?;
    let mut parts = rest.splitn(3, '/');
    let batch = Uuid::parse_str(parts.next()?).ok()?;
    let job = Uuid::parse_str(parts.next()?).ok()?;
    let name = parts.next()?;
    let safe = !name.is_empty()
        && name
            .split('/')
            .all(|seg| !seg.is_empty() && seg != "." && seg != "..");
    safe.then(|| (batch, job, name.to_owned()))
}

#[derive(Deserialize, schemars::JsonSchema)]
pub(crate) struct SearchArgs {
    /// The question or search query.
    pub query: String,
    /// Most results to return, best first (default 10).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub max_results: Option<usize>,
    /// Search providers to try, in order.
    #[serde(default)]
    pub providers: Option<Vec<String>>,
    /// Recency window: any, day, week, month or year.
    #[serde(default)]
    pub freshness: Option<String>,
    /// Only results from these domains and their subdomains.
    #[serde(default)]
    pub include_domains: Option<Vec<String>>,
    /// No results from these domains or their subdomains.
    #[serde(default)]
    pub exclude_domains: Option<Vec<String>>,
}

#[derive(Deserialize, schemars::JsonSchema)]
pub(crate) struct ResearchIdArgs {
    /// The `research_id` that `research_start` returned.
    pub research_id: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
pub struct ExtractArgs {
    /// An http(s) URL.
    pub url: String,
}

/// The MCP server: one per session, all sharing one [`Backend`].
#[derive(Clone)]
pub(crate) struct TrawlMcp {
    backend: Arc<Backend>,
    tool_router: ToolRouter<TrawlMcp>,
}

#[tool_router]
impl TrawlMcp {
    pub fn new(backend: Arc<Backend>) -> TrawlMcp {
        TrawlMcp {
            backend,
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        description = "Research a question on the web: searches, reads the best sources and writes a report with numbered citations [n], a Sources list and noted conflicts between sources. Takes from seconds to minutes; sends progress notifications when asked. Long reports are cut to the server's token limit; the full report and every work product are referenced by path."
    )]
    async fn research(
        &self,
        Parameters(args): Parameters<ResearchArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        match self.run_research(&args.into_job(), &ctx).await {
            Ok(done) => done,
            Err(message) => reply(Err(message)),
        }
    }

    #[tool(
        description = "Start researching a question and return at once with a research_id; the research runs in the background (seconds to minutes). Follow it with research_status and collect the cited report with research_result. Use this instead of `research` when your client gives up on calls longer than a minute."
    )]
    async fn research_start(&self, Parameters(args): Parameters<ResearchArgs>) -> CallToolResult {
        match self.start(&args.into_job()).await {
            Ok((batch, job)) => CallToolResult::structured(json!({
                "research_id": research_id(batch, job),
                "status": "pending",
                "next": "call research_status, then research_result, with this research_id",
            })),
            Err(message) => reply(Err(message)),
        }
    }

    #[tool(
        description = "Where a research started with research_start is: status (pending while it runs: searching, then reading its sources, then writing; then done, partial, no_sources, no_answer, failed or cancelled), finished, and how many sources were chosen, settled and read."
    )]
    async fn research_status(
        &self,
        Parameters(args): Parameters<ResearchIdArgs>,
    ) -> CallToolResult {
        match parse_research_id(&args.research_id) {
            Ok((batch, job)) => match self.status(batch, job).await {
                Ok(status) => CallToolResult::structured(status),
                Err(message) => reply(Err(message)),
            },
            Err(message) => reply(Err(message)),
        }
    }

    #[tool(
        description = "The result of a research started with research_start: once it has finished, the report with numbered citations [n] and its sources (cut to the server's token limit; the whole report and every work product are linked as resources); before that, its status and when to ask again."
    )]
    async fn research_result(
        &self,
        Parameters(args): Parameters<ResearchIdArgs>,
    ) -> CallToolResult {
        let (batch, job) = match parse_research_id(&args.research_id) {
            Ok(ids) => ids,
            Err(message) => return reply(Err(message)),
        };
        match self.status(batch, job).await {
            Ok(status) if status["finished"] == true => self
                .research_result_of(batch, job)
                .await
                .unwrap_or_else(|m| reply(Err(m))),
            Ok(mut status) => {
                status["next"] =
                    "still running: call research_result again in a few seconds".into();
                CallToolResult::structured(status)
            }
            Err(message) => reply(Err(message)),
        }
    }

    #[tool(
        description = "Search the web for a question without reading the pages: returns the query analysis (sub-queries, news or not, data points sought) and the results with their relevance scores (position 40% + title 30% + snippet 30%), those worth reading marked selected."
    )]
    async fn search(&self, Parameters(args): Parameters<SearchArgs>) -> CallToolResult {
        reply(self.run_search(args).await)
    }

    #[tool(
        description = "Read one web page or file (PDF, DOCX, CSV …) and return its main content as markdown: navigation, ads and boilerplate removed; code, tables and lists kept. Honours robots.txt; pages that need a real browser are reported as blocked."
    )]
    async fn extract(&self, Parameters(args): Parameters<ExtractArgs>) -> CallToolResult {
        reply(self.run_extract(&args.url).await)
    }
}

/// A tool's text, or its failure as a tool error the agent reads.
fn reply(result: Result<String, ToolError>) -> CallToolResult {
    match result {
        Ok(text) => CallToolResult::success(vec![Content::text(text)]),
        Err(e) => CallToolResult::error(vec![Content::text(e.to_string())]),
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for TrawlMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("trawl", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "trawl researches questions on the web. Use `research` for a cited report \
                 (or `research_start`, `research_status` and `research_result` when calls must \
                 return within a minute), `search` to see what the web offers for a query, and \
                 `extract` to read one page. A job's work products are resources \
                 trawl://jobs/{batch}/{job}/{name}.",
        )
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let template = ResourceTemplate::new("trawl://jobs/{batch}/{job}/{name}", "work-product")
            .with_description(
                "A research job's work product: report.md, sources.json, search.json, job.json, \
                 claims.json, docs/N.json …; research results link the ones their job has",
            );
        Ok(ListResourceTemplatesResult::with_all_items(vec![template]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri;
        let not_found = || {
            ErrorData::resource_not_found(
                format!("no work product at {uri}: URIs are trawl://jobs/BATCH/JOB/NAME"),
                None,
            )
        };
        let (batch, job, name) = parse_resource_uri(&uri).ok_or_else(not_found)?;
        let key = format!("{}/{name}", paths::job_dir(batch, job));
        let bytes = (self.backend.rt.objects.get(&key).await)
            .map_err(|e| ErrorData::internal_error(format!("could not read {uri}: {e}"), None))?
            .ok_or_else(not_found)?;
        let mime = if name.ends_with(".md") {
            "text/markdown"
        } else {
            "application/json"
        };
        let contents = ResourceContents::TextResourceContents {
            uri: uri.clone(),
            mime_type: Some(mime.into()),
            text: String::from_utf8_lossy(&bytes).into_owned(),
            meta: None,
        };
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}

/// How often `research` looks at its job while waiting.
const POLL: Duration = Duration::from_millis(300);

impl TrawlMcp {
    async fn run_search(&self, args: SearchArgs) -> Result<String, ToolError> {
        let options = JobOptions {
            providers: args.providers,
            freshness: args.freshness,
            include_domains: args.include_domains,
            exclude_domains: args.exclude_domains,
            ..JobOptions::default()
        };
        let task = check_task(&args.query, options).map_err(ToolError::BadQuery)?;
        let rt = &self.backend.rt;
        let search = &self.backend.search;
        let llm = trawl_pipeline::JobLlm::unbudgeted(search.llm(), rt.store.clone());
        let found = search.find(rt, &task, &llm).await;
        if found.unanswered() {
            return Err(ToolError::SearchFailed(found.errors()));
        }
        let found = found.record;
        let limit = args.max_results.unwrap_or(10).max(1);
        let results: Vec<serde_json::Value> = found
            .results
            .iter()
            .take(limit)
            .map(|s| {
                json!({
                    "url": s.url,
                    "title": s.result.title,
                    "snippet": s.result.snippet,
                    "provider": s.result.provider,
                    "score": (s.score * 1000.0).round() / 1000.0,
                    "selected": s.selected,
                    "kind": s.kind,
                    "file_type": s.file_type,
                })
            })
            .collect();
        let answers: Vec<serde_json::Value> = found
            .answers
            .iter()
            .map(|(provider, answer)| json!({"provider": provider, "answer": answer}))
            .collect();
        let body = json!({
            "query": task.query,
            "sub_queries": found.analysis.sub_queries,
            "is_news": found.analysis.is_news,
            "data_points": found.analysis.target_data_points,
            "answers": answers,
            "results": results,
            "total_results": found.results.len(),
        });
        let text = serde_json::to_string_pretty(&body).unwrap_or_default();
        Ok(self.fit(&text, "", ""))
    }

    /// Checks the question and enqueues it as a batch of its own: (batch, job).
    async fn start(
        &self,
        (question, options): &(String, JobOptions),
    ) -> Result<(Uuid, Uuid), ToolError> {
        let task = check_task(question, options.clone()).map_err(ToolError::BadQuestion)?;
        (submit_one(&self.backend.rt, task).await).map_err(ToolError::Enqueue)
    }

    async fn run_research(
        &self,
        asked: &(String, JobOptions),
        ctx: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ToolError> {
        let rt = &self.backend.rt;
        let (batch, job) = self.start(asked).await?;
        let progress_token = ctx.meta.get_progress_token();
        let deadline =
            tokio::time::Instant::now() + Duration::from_secs(rt.config.mcp.research_timeout_secs);
        let mut last = None;
        loop {
            if ctx.ct.is_cancelled() {
                let _ = trawl_pipeline::batch::cancel(rt, batch).await;
                return Err(ToolError::Cancelled { batch, job });
            }
            let progress = rt.store.batch_progress(&batch.to_string()).await?;
            if progress.as_ref().is_some_and(|p| p.is_done()) {
                break;
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(ToolError::TimedOut {
                    secs: rt.config.mcp.research_timeout_secs,
                    batch,
                    job,
                });
            }
            if let Some(token) = &progress_token {
                let progress = trawl_pipeline::fanin::progress(rt, &job.to_string()).await;
                let p = progress.ok().flatten().unwrap_or_default();
                if last != Some(p) {
                    last = Some(p);
                    let note = ProgressNotificationParam::new(token.clone(), p.settled as f64);
                    let note = if p.chosen > 0 {
                        note.with_total(p.chosen as f64)
                            .with_message(format!("read {} of {} sources", p.settled, p.chosen))
                    } else {
                        note.with_message("searching")
                    };
                    let _ = ctx.peer.notify_progress(note).await;
                }
            }
            tokio::select! {
                _ = tokio::time::sleep(POLL) => {}
                _ = ctx.ct.cancelled() => {}
            }
        }
        self.research_result_of(batch, job).await
    }

    /// Where the job is, for `research_status` (and `research_result` before it has ended).
    async fn status(&self, batch: Uuid, job: Uuid) -> Result<Value, ToolError> {
        let rt = &self.backend.rt;
        let ended = (rt.store)
            .batch_job_status(&batch.to_string(), &job.to_string())
            .await?
            .ok_or(ToolError::NoResearch { batch, job })?;
        let progress = (trawl_pipeline::fanin::progress(rt, &job.to_string()).await)
            .map_err(ToolError::JobState)?;
        let p = progress.unwrap_or_default();
        let finished = ended != trawl_store::PENDING;
        let status = match (finished, progress) {
            (true, _) => ended,
            (false, None) => "searching".into(),
            (false, Some(p)) if p.all_settled() => "writing".into(),
            (false, Some(_)) => "reading".into(),
        };
        Ok(json!({
            "research_id": research_id(batch, job),
            "status": status,
            "finished": finished,
            "sources_chosen": p.chosen,
            "sources_fetched": p.fetched,
            "sources_settled": p.settled,
            "sources_read": p.read,
        }))
    }

    /// The report and its work products within the token limit, the work products linked as
    /// resources, and the result's fields as structured content.
    async fn research_result_of(
        &self,
        batch: Uuid,
        job: Uuid,
    ) -> Result<CallToolResult, ToolError> {
        let rt = &self.backend.rt;
        let read = |key: String| async move {
            (rt.objects.get(&key).await).map_err(|source| ToolError::Read { key, source })
        };
        let record: Option<JobRecord> = read(paths::job_record(batch, job))
            .await?
            .and_then(|b| serde_json::from_slice(&b).ok());
        let status = record.as_ref().map_or("unknown", |r| r.status.as_str());
        let report = read(paths::report(batch, job))
            .await?
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .ok_or_else(|| ToolError::NoReport {
                job,
                status: status.to_owned(),
            })?;
        // Every file, `docs/N.json` included, each linked as a resource; the footer names only
        // what is directly under the job's folder (`docs` once), leaving the token budget to
        // the report.
        let dir = paths::job_dir(batch, job);
        let files = rt.objects.list_files(&dir).await.unwrap_or_default();
        let mut names: Vec<&str> = (files.iter()).filter_map(|f| f.split('/').next()).collect();
        names.dedup();
        let root = rt.objects.where_is(&dir);
        let mut footer = format!("\n\n---\njob {job} (batch {batch}): {status}");
        if let Some(r) = &record {
            let cost = r.total_cost_microdollars as f64 / 1e6;
            footer.push_str(&format!(", LLM cost ${cost:.4}"));
        }
        footer.push_str(&format!("\nwork products in {root}: {}", names.join(", ")));
        let text = self.fit(&report, &footer, &format!("{root}/report.md"));
        let sources: Value = match read(paths::sources(batch, job)).await? {
            Some(bytes) => serde_json::from_slice(&bytes).unwrap_or(Value::Null),
            None => Value::Null,
        };
        let links: Vec<String> = (files.iter())
            .map(|n| resource_uri(batch, job, n))
            .collect();
        let structured = json!({
            "research_id": research_id(batch, job),
            "status": status,
            "finished": true,
            "cost_usd": record.as_ref().map(|r| r.total_cost_microdollars as f64 / 1e6),
            "report_uri": resource_uri(batch, job, "report.md"),
            "sources": sources,
            "work_products": links,
        });
        let mut content = vec![Content::text(text)];
        content.extend((files.iter()).map(|n| {
            Content::resource_link(Resource::new(resource_uri(batch, job, n), n.clone()))
        }));
        let mut result = CallToolResult::success(content);
        result.structured_content = Some(structured);
        Ok(result)
    }

    async fn run_extract(&self, url: &str) -> Result<String, ToolError> {
        let parsed = url::Url::parse(url).map_err(|source| ToolError::BadUrl {
            url: url.to_owned(),
            source,
        })?;
        let page = fetch_one(&self.backend.rt, &self.backend.fetcher, &parsed)
            .await
            .map_err(|source| ToolError::Fetch {
                url: url.to_owned(),
                source,
            })?;
        let extracted = of_fetched(page.body, &page.final_url, Some(&page.content_type));
        let text = render(&extracted, &page.final_url, Format::Markdown, true);
        let footer = format!("\n\n---\nsource: {}", page.final_url);
        Ok(self.fit(&text, &footer, &page.final_url))
    }

    /// `body` then `footer`, within `mcp.max_tokens`; a cut says where the whole is.
    fn fit(&self, body: &str, footer: &str, whole_at: &str) -> String {
        let limit = self.backend.rt.config.mcp.max_tokens;
        fit(body, footer, whole_at, limit, &self.backend.tokens)
    }
}

/// `body` cut at the last paragraph (else line, else character) boundary that lets it, a note
/// about the cut and `footer` hold at most `limit` tokens; `body` and `footer` as they are when
/// they fit. A footer longer than half the limit gives way to the body.
pub fn fit(body: &str, footer: &str, whole_at: &str, limit: usize, tokens: &Tokenizer) -> String {
    if tokens.count(body) + tokens.count(footer) <= limit {
        return format!("{body}{footer}");
    }
    let footer = Some(footer)
        .filter(|f| tokens.count(f) <= limit / 2)
        .unwrap_or("");
    let total = tokens.count(body);
    let note = |kept: usize| {
        if whole_at.is_empty() {
            format!("\n\n[… cut to {kept} of {total} tokens]")
        } else {
            format!("\n\n[… cut to {kept} of {total} tokens; the whole is at {whole_at}]")
        }
    };
    let budget = limit.saturating_sub(tokens.count(footer) + tokens.count(&note(total)));
    let fits = |end: usize| tokens.count(&body[..end]) <= budget;
    // Candidate ends, coarsest first: paragraphs, then lines, then characters.
    let paragraphs: Vec<usize> = body.match_indices("\n\n").map(|(i, _)| i).collect();
    let lines: Vec<usize> = body.match_indices('\n').map(|(i, _)| i).collect();
    let chars: Vec<usize> = body.char_indices().map(|(i, _)| i).collect();
    let end = [paragraphs, lines, chars]
        .into_iter()
        .find_map(|ends| {
            // The last end that fits; `fits` is monotone in `end`.
            let n = ends.partition_point(|&e| fits(e));
            (n > 0).then(|| ends[n - 1])
        })
        .unwrap_or(0);
    let kept = &body[..end];
    format!("{kept}{}{footer}", note(tokens.count(kept)))
}

/// Serves one session on stdin/stdout until the client closes it.
pub(crate) async fn serve_stdio(backend: Arc<Backend>) -> Result<(), McpError> {
    TrawlMcp::new(backend)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| McpError::Session(e.to_string()))?
        .waiting()
        .await
        .map_err(|e| McpError::Session(e.to_string()))?;
    Ok(())
}

/// Serves streamable HTTP at `/mcp` on `listener` (from [`listen`]) until `shutdown` resolves;
/// calls `bound` with its address first. Requests need an API token when the backend is a fleet; browsers'
/// requests (any `Origin`) and unexpected `Host` names are refused either way.
pub(crate) async fn serve_http(
    backend: Arc<Backend>,
    listener: TcpListener,
    bound: impl FnOnce(SocketAddr),
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), McpError> {
    use axum::middleware::from_fn_with_state;
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let local = listener.local_addr().map_err(|source| McpError::Listen {
        addr: "the MCP socket".into(),
        source,
    })?;
    let hosts = &backend.rt.config.mcp.allowed_hosts;
    let mut config = StreamableHttpServerConfig::default().enforce_origin_validation();
    if !hosts.is_empty() {
        config = config.with_allowed_hosts(hosts.clone());
    }
    let cancel = config.cancellation_token.clone();
    let service = StreamableHttpService::new(
        {
            let backend = backend.clone();
            move || Ok(TrawlMcp::new(backend.clone()))
        },
        LocalSessionManager::default().into(),
        config,
    );
    let mut app = axum::Router::new().nest_service("/mcp", service);
    if backend.fleet {
        app = app.layer(from_fn_with_state(backend.clone(), authenticate));
    }
    bound(local);
    // Responses are event streams with a keep-alive every 15 s, inside the idle limit.
    trawl_telemetry::http::serve(
        listener,
        app,
        trawl_telemetry::http::ConnLimits::default(),
        "mcp",
        async move {
            shutdown.await;
            cancel.cancel();
        },
    )
    .await;
    Ok(())
}

/// Whether the config names a fleet (broker and store).
fn has_fleet(config: &Config) -> bool {
    config.broker.url.is_some() && config.store.url.is_some()
}

/// Binds the HTTP transport; without a fleet there is no token store to check callers
/// against, so only a loopback address is allowed.
pub async fn listen(addr: &str, fleet: bool) -> Result<TcpListener, McpError> {
    let listen = |source| McpError::Listen {
        addr: addr.to_owned(),
        source,
    };
    let listener = TcpListener::bind(addr).await.map_err(listen)?;
    let local = listener.local_addr().map_err(listen)?;
    if !fleet && !local.ip().is_loopback() {
        return Err(McpError::NotLoopback(local.to_string()));
    }
    Ok(listener)
}

/// Lets a request through only with a valid API token (the same tokens as `trawl serve`).
async fn authenticate(
    axum::extract::State(backend): axum::extract::State<Arc<Backend>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::http::{header, StatusCode};
    use axum::response::IntoResponse;
    let refuse = |message: &str| {
        (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            axum::Json(json!({"error": {"code": "unauthorized", "message": message}})),
        )
            .into_response()
    };
    let bearer = request.headers().get(header::AUTHORIZATION);
    let bearer = bearer.and_then(|v| v.to_str().ok()?.strip_prefix("Bearer "));
    let Some(token) = bearer.map(str::trim) else {
        return refuse(
            "send an API token as Authorization: Bearer <token> (create one with `trawl token create`)",
        );
    };
    match trawl_api::tokens::verify(&*backend.rt.store, token).await {
        // Every tool does work for the fleet (research, a search, a fetch): none only reads.
        Ok(Some(record)) if record.read_only() => (
            StatusCode::FORBIDDEN,
            axum::Json(json!({"error": {"code": "read_only", "message": "this token is read-only: MCP's tools research, search and fetch, so they need a token that may submit work"}})),
        )
            .into_response(),
        Ok(Some(_)) => next.run(request).await,
        Ok(None) => refuse("unknown or revoked API token"),
        Err(e) => {
            tracing::warn!(error = %e, "token check failed");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                axum::Json(json!({"error": {"code": "unavailable", "message": "the token store is unreachable; retry shortly"}})),
            )
                .into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_keeps_what_fits_and_cuts_at_a_paragraph() {
        let tokens = Tokenizer::approx();
        let footer = "\n\n---\nfooter";
        let short = "one paragraph.\n\nanother.";
        assert_eq!(
            fit(short, footer, "/r.md", 1000, &tokens),
            format!("{short}{footer}")
        );
        let para = "word ".repeat(200);
        let long = format!("{para}\n\n{para}\n\n{para}");
        let limit = tokens.count(&format!("{para}\n\n{para}")) + 60;
        let out = fit(&long, footer, "/r.md", limit, &tokens);
        assert!(
            tokens.count(&out) <= limit,
            "{} > {limit}",
            tokens.count(&out)
        );
        assert!(out.ends_with(footer), "the footer stays: {out}");
        assert!(out.contains("the whole is at /r.md"), "{out}");
        // Cut at a paragraph: two paragraphs kept, not a broken third.
        let kept = out.split("\n\n[…").next().unwrap();
        assert_eq!(kept.trim_end().matches("\n\n").count(), 1, "{kept}");
    }

    #[test]
    fn fit_cuts_inside_one_huge_line_on_a_char_boundary() {
        let tokens = Tokenizer::approx();
        let body = "é".repeat(10_000);
        let out = fit(&body, "", "", 1000, &tokens);
        assert!(tokens.count(&out) <= 1000);
        assert!(out.starts_with("éé") && out.contains("[… cut to"), "{out}");
    }
}
