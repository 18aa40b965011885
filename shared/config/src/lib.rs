//! trawl's configuration: built-in defaults < `trawl.toml` (or `--config`) < environment
//! `TRAWL__SECTION__KEY`.
//!
//! The environment is passed in as a map, so tests never touch the process environment. Every
//! section denies unknown keys (a typo is an error, not a silently ignored setting) and
//! [`Config::validate`] reports every problem at once. The key names are a public interface
//! (docs/design.md): scripts, Helm values and outside harnesses set them.
//!
//! Secrets (passwords inside URLs, API keys) never reach logs: [`Config`]'s `Debug` goes through
//! [`redact_url`].

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

mod example;
pub use example::example;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("failed to read config file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("invalid config: {0}")]
    Parse(String),
    #[error("invalid config:\n  - {}", .0.join("\n  - "))]
    Invalid(Vec<String>),
}

#[derive(Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub broker: BrokerConfig,
    pub store: StoreConfig,
    pub output: OutputConfig,
    pub job: JobConfig,
    pub search: SearchConfig,
    pub fetch: FetchConfig,
    pub clean: CleanConfig,
    pub synthesize: SynthesizeConfig,
    pub report: ReportConfig,
    pub research: ResearchConfig,
    pub llm: Option<LlmConfig>,
    pub metrics: MetricsConfig,
    pub api: ApiConfig,
    pub mcp: McpConfig,
}

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct BrokerConfig {
    /// AMQP URL; absent means the embedded in-memory broker.
    pub url: Option<String>,
    /// Prefix of every queue name (`trawl.search` …); tests use a unique one.
    pub namespace: String,
    /// Messages a worker handles at once while they use its core, and the broker's window over
    /// them: the window grows by this step for messages waiting on outside calls (a model's
    /// answer, a search provider, a web host, a rate limit), up to `max_waiting` more, so with a
    /// slow LLM a worker keeps hundreds of messages waiting while its CPU stays busy, and with a
    /// fast one it holds about this many. A worker killed loses nothing: what it held goes back
    /// to the queue, each message one delivery nearer `delivery_limit`.
    pub prefetch: u16,
    /// Most messages a worker lets wait on outside calls on top of `prefetch`; all of them stay
    /// within `max_in_flight_bytes`. 0 keeps the window at `prefetch`.
    pub max_waiting: u32,
    /// Most bytes a worker's messages in flight may hold together: each message's estimate
    /// (its stage's footprint: a page being extracted holds several times its size) is reserved
    /// before it is handled, and a message that does not fit waits, unacknowledged. Keep it
    /// well below the worker's memory limit.
    pub max_in_flight_bytes: u64,
    /// Attempts (first try included) before a failing message goes to the dead-letter queue.
    pub max_attempts: u32,
    /// Delay tiers for retries, in seconds, one per retry; the last repeats.
    pub retry_delays_secs: Vec<u64>,
    /// Extra, shorter delay tiers in milliseconds for work deferred rather than failed (a host
    /// whose rate limit has no slot yet): a deferral waits for the smallest tier that covers it.
    pub defer_delays_ms: Vec<u64>,
    /// Redeliveries (crashed workers, requeues) RabbitMQ allows before dead-lettering a message.
    /// Set explicitly because RabbitMQ 3.x quorum queues have no default limit. 20, RabbitMQ
    /// 4's default: a killed worker gives back every message it held, most of them waiting and
    /// never the cause, and with hundreds held a message can be a bystander to several kills.
    pub delivery_limit: u32,
    /// How long a worker may take to finish in-flight work after SIGTERM.
    pub shutdown_grace_secs: u64,
    /// The most one message may take before its worker abandons it and retries it later. Must
    /// stay below `consumer_timeout_secs`, so a hung handler never holds a delivery until the
    /// broker closes the channel.
    pub message_timeout_secs: u64,
    /// The broker's consumer timeout, in seconds: RabbitMQ's `consumer_timeout` (rabbitmq.conf,
    /// in milliseconds there; 30 min by default). RabbitMQ closes a channel that holds a delivery
    /// unacknowledged for longer, and every delivery in flight on it goes back to the queue.
    /// trawl cannot read it from the broker: set it when the broker's differs from the default,
    /// so validation keeps `message_timeout_secs` below it. Leave a margin of a minute or so:
    /// settling a message after its handler (the job-status read, the retry publish) comes on
    /// top and can take tens of seconds while Redis or RabbitMQ struggle.
    pub consumer_timeout_secs: u64,
    /// Publish a `ResearchResult` to `trawl.results` for each ended job. Off by default: the
    /// batch record and the object store are the record of results, and a queue nobody
    /// consumes would grow until RabbitMQ's memory alarm blocks every publisher.
    pub results_queue: bool,
    /// Bounds of `trawl.results`, whether or not anything is published to it: past
    /// `results_max_length` messages the oldest are dropped, and a message older than
    /// `results_ttl_secs` is dropped unread.
    pub results_max_length: u32,
    pub results_ttl_secs: u64,
    /// Most bytes of search tasks one batch may put into the queues; a larger submission is
    /// refused with what to change.
    pub max_batch_bytes: u64,
}

impl Default for BrokerConfig {
    fn default() -> Self {
        BrokerConfig {
            url: None,
            namespace: "trawl".into(),
            prefetch: 8,
            max_waiting: 512,
            max_in_flight_bytes: 256 * 1024 * 1024,
            max_attempts: 4,
            retry_delays_secs: vec![1, 5, 30],
            defer_delays_ms: vec![25, 50, 100, 250, 500],
            delivery_limit: 20,
            shutdown_grace_secs: 30,
            message_timeout_secs: 300,
            consumer_timeout_secs: 1800,
            results_queue: false,
            results_max_length: 10_000,
            results_ttl_secs: 24 * 3600,
            max_batch_bytes: 256 * 1024 * 1024,
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct StoreConfig {
    /// Redis URL; absent means the in-memory store.
    pub url: Option<String>,
    /// Prefix of every key (`trawl:` …); tests use a unique one.
    pub prefix: String,
    /// TTL of job records (fan-in, synthesis leases).
    pub job_ttl_secs: u64,
    /// TTL of cached robots.txt rules (at most 24 h by RFC 9309).
    pub robots_ttl_secs: u64,
    /// TTL of cached robots.txt errors (5xx, unreachable).
    pub robots_error_ttl_secs: u64,
    /// How long a batch's record (progress, job statuses, counters) stays in the store once
    /// its last job has ended or it was cancelled; afterwards its status is read from the
    /// `final.json` saved beside its work products.
    pub batch_ttl_secs: u64,
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            url: None,
            prefix: "trawl".into(),
            job_ttl_secs: 7 * 24 * 3600,
            robots_ttl_secs: 24 * 3600,
            robots_error_ttl_secs: 600,
            batch_ttl_secs: 30 * 24 * 3600,
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct OutputConfig {
    /// Object store for results and work products: `file:///path` (a local directory; only
    /// for a fleet whose workers share that disk), `s3://bucket/prefix` (AWS S3 or any
    /// S3-compatible server), `gs://bucket/prefix`, `az://container/prefix`, or `memory://`
    /// (this process only: `trawl run`, tests). Credentials never go here: they come from the
    /// standard variables (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`;
    /// `GOOGLE_APPLICATION_CREDENTIALS`; `AZURE_STORAGE_ACCOUNT_NAME`, `AZURE_STORAGE_ACCOUNT_KEY`)
    /// or the instance or pod identity (IRSA's web identity token file, ECS/EKS, IMDS).
    pub url: String,
    /// S3-compatible endpoint (`http://127.0.0.1:9000`); `AWS_ENDPOINT_URL` when unset.
    pub endpoint: Option<String>,
    /// Region; `AWS_REGION` / `AWS_DEFAULT_REGION` when unset, else `us-east-1`.
    pub region: Option<String>,
    /// Path-style requests (`endpoint/bucket/key`), which most S3-compatible servers want;
    /// virtual-hosted style (`bucket.endpoint/key`, AWS's default) when false.
    pub path_style: Option<bool>,
    /// Plain HTTP to the endpoint; `AWS_ALLOW_HTTP` when unset.
    pub allow_http: Option<bool>,
    /// Bound of one request to the object store, in seconds.
    pub timeout_secs: u64,
    /// Retries of one request (5xx, timeouts, connection errors) before the store counts as
    /// unavailable: the message is then retried later without spending an attempt.
    pub max_retries: u32,
    /// Seconds between checks that every worker of the fleet sees the same store (each
    /// writes a probe object that the others must read).
    pub shared_check_secs: u64,
}

impl Default for OutputConfig {
    fn default() -> Self {
        OutputConfig {
            url: "file://./trawl-output".into(),
            endpoint: None,
            region: None,
            path_style: None,
            allow_http: None,
            timeout_secs: 30,
            max_retries: 3,
            shared_check_secs: 5,
        }
    }
}

/// The schemes `output.url` takes.
pub(crate) const OUTPUT_SCHEMES: [&str; 6] = ["file", "s3", "s3a", "gs", "az", "memory"];

impl OutputConfig {
    /// What is wrong with the output settings, if anything.
    fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let scheme = self
            .url
            .split_once("://")
            .map(|(s, _)| s.to_ascii_lowercase());
        match scheme.as_deref() {
            Some(s) if OUTPUT_SCHEMES.contains(&s) => {
                let rest = &self.url[s.len() + 3..];
                let authority = rest.split('/').next().unwrap_or("");
                if authority.contains('@') {
                    problems.push(format!(
                        "output.url must not carry credentials (got {}): set AWS_ACCESS_KEY_ID \
                         and AWS_SECRET_ACCESS_KEY (or the provider's variables) in the environment",
                        redact_url(&self.url)
                    ));
                } else if matches!(s, "s3" | "s3a" | "gs" | "az") && authority.is_empty() {
                    problems.push(format!(
                        "output.url {} names no bucket: write {s}://BUCKET/PREFIX",
                        self.url
                    ));
                }
            }
            _ => problems.push(format!(
                "output.url must be file:///DIR, s3://BUCKET/PREFIX, gs://BUCKET/PREFIX, \
                 az://CONTAINER/PREFIX or memory:// (got {})",
                redact_url(&self.url)
            )),
        }
        if let Some(endpoint) = &self.endpoint {
            if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
                problems.push(format!(
                    "output.endpoint must be an http:// or https:// URL (got {})",
                    redact_url(endpoint)
                ));
            } else if endpoint
                .split("://")
                .nth(1)
                .is_some_and(|r| r.split('/').next().is_some_and(|a| a.contains('@')))
            {
                problems.push("output.endpoint must not carry credentials".into());
            }
        }
        if self.timeout_secs == 0 || self.shared_check_secs == 0 {
            problems
                .push("output.timeout_secs and output.shared_check_secs must be at least 1".into());
        }
        problems
    }

    /// The directory of a `file://` URL.
    pub fn local_dir(&self) -> Option<std::path::PathBuf> {
        let (scheme, path) = self.url.split_once("://")?;
        scheme
            .eq_ignore_ascii_case("file")
            .then(|| std::path::PathBuf::from(path))
    }
}

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct JobConfig {
    /// Seconds from submission until a job is synthesised with whatever has arrived.
    pub deadline_secs: u64,
}

impl Default for JobConfig {
    fn default() -> Self {
        JobConfig { deadline_secs: 600 }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct SearchConfig {
    /// Provider chain for general questions, tried in order.
    pub providers: Vec<String>,
    /// Provider chain for news questions.
    pub news_providers: Vec<String>,
    pub searxng_url: String,
    /// Base URL per provider, overriding its public endpoint (a proxy, a test server).
    pub endpoints: BTreeMap<String, String>,
    /// Environment variable holding each provider's API key, overriding the conventional name
    /// (`SERPER_API_KEY` …). A provider whose key is missing is skipped.
    pub api_key_env: BTreeMap<String, String>,
    /// Requests per second the whole fleet may send each provider (`brave = 1`, `serper =
    /// 5`): every worker takes its turns from one slot per provider in the store, and a
    /// provider's 429 with `Retry-After` holds every worker's calls to it. A provider not
    /// listed is not paced.
    pub requests_per_second: BTreeMap<String, f64>,
    /// Proxy for search-provider calls (`http://host:port`); empty: `HTTPS_PROXY`,
    /// `HTTP_PROXY`, `NO_PROXY`. Page fetches never use a proxy.
    pub proxy: String,
    /// Results asked of the providers per sub-query (pagination stops there or when dry).
    pub results_per_query: usize,
    /// Default recency window: any, day, week, month or year.
    pub freshness: String,
    /// How long a provider's answer to one (query, page) is reused.
    pub cache_ttl_secs: u64,
    /// Ask the LLM whether each candidate is relevant (needs `[llm]`; cached per question and URL).
    pub llm_relevance: bool,
    /// Reorder candidates by embedding similarity to the question (needs `llm.embedding_model`).
    pub rerank: bool,
    /// `score` (the formula) or `llm` (the LLM picks from the result list; the score is the fallback).
    pub selection: Selection,
    /// Results scoring below this are not fetched.
    pub min_relevance: f64,
    /// At most this many URLs are fetched per question.
    pub max_urls: usize,
    pub timeout_secs: u64,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            providers: vec!["searxng".into(), "duckduckgo".into()],
            news_providers: vec!["searxng".into(), "duckduckgo".into()],
            searxng_url: "http://127.0.0.1:8888".into(),
            proxy: String::new(),
            endpoints: BTreeMap::new(),
            api_key_env: BTreeMap::new(),
            requests_per_second: BTreeMap::new(),
            results_per_query: 15,
            freshness: "any".into(),
            cache_ttl_secs: 24 * 3600,
            llm_relevance: false,
            rerank: false,
            selection: Selection::Score,
            min_relevance: 0.3,
            max_urls: 10,
            timeout_secs: 15,
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct FetchConfig {
    /// Host pattern (`*.test`, `example.org`) to `ip:port`, applied before DNS.
    pub resolve: BTreeMap<String, String>,
    /// Networks (CIDR) that may be fetched although private or loopback. Empty by default.
    pub allow_networks: Vec<String>,
    /// Highest escalation level: 0 honest HTTP, 1 browser-like HTTP, 2 real browser, 3 stealth
    /// browser. A batch may lower it.
    pub max_level: u8,
    /// WebDriver endpoint (chromedriver or a Selenium pod) for levels 2 and 3.
    pub webdriver_url: String,
    /// Browser sessions one browser worker keeps open (and so pages it renders at once).
    pub browser_sessions: usize,
    /// Time a browser page may take to load and settle.
    pub browser_timeout_secs: u64,
    /// Extra Chromium command-line switches (a Selenium grid's own image may need some).
    pub browser_args: Vec<String>,
    /// Where the browser worker's SSRF proxy listens: Chromium reaches the web only through it.
    /// The default suits a browser on the same machine or in the same pod (a sidecar). Whatever
    /// can reach it can fetch through it (within the guard): keep it reachable by the browser
    /// alone.
    pub browser_proxy_listen: String,
    /// The proxy's `host:port` as the browser sees it, when the browser runs elsewhere (a
    /// Selenium container: this worker's service name and a fixed `browser_proxy_listen`
    /// port). Empty: the address the proxy bound.
    pub browser_proxy_advertise: String,
    /// Product token matched against robots.txt groups, and sent in the User-Agent header.
    pub user_agent: String,
    /// Total time for one plain-HTTP fetch, body included (a slow drip ends here).
    pub timeout_secs: u64,
    /// Longest wait for the next bytes of a response (a stalled server ends here).
    pub idle_timeout_secs: u64,
    /// Bodies larger than this end as `too_large`.
    pub max_bytes: u64,
    pub max_redirects: usize,
    /// Minimum spacing between two requests to one host, across the whole fleet: from the
    /// later of the previous request's send and its end.
    pub min_interval_ms: u64,
    /// A task whose host's next turn comes within this long books that turn and waits for it
    /// in the worker, its message unacknowledged (it holds little of the worker's
    /// `broker.max_in_flight_bytes`); a longer wait goes back to the broker through a delay
    /// queue. 0: every wait goes through the broker.
    pub wait_in_worker_ms: u64,
    /// Requests in flight to one host at once, across the whole fleet. With 1 (the default)
    /// a host sees its requests at least `min_interval_ms` apart however the fleet's machines
    /// delay them, since the interval counts from the previous request's end; with more, sends
    /// are spaced by the interval but a delayed request may arrive closer to the next.
    pub max_per_host: u32,
    /// How long the level that got a host's page is remembered, so later tasks start there.
    pub level_memory_secs: u64,
    /// Shallow crawl: links followed from a fetched page, in hops (0: off, the default).
    pub crawl_depth: u8,
    /// Pages a job's crawl may add, across all its sources.
    pub crawl_max_pages: u32,
    /// Follow only links to the page's own site (its host and subdomains).
    pub crawl_same_domain: bool,
}

impl Default for FetchConfig {
    fn default() -> Self {
        FetchConfig {
            resolve: BTreeMap::new(),
            allow_networks: Vec::new(),
            max_level: 3,
            webdriver_url: "http://127.0.0.1:9515".into(),
            user_agent: "trawl".into(),
            browser_sessions: 2,
            browser_timeout_secs: 45,
            browser_args: Vec::new(),
            browser_proxy_listen: "127.0.0.1:0".into(),
            browser_proxy_advertise: String::new(),
            timeout_secs: 20,
            idle_timeout_secs: 10,
            max_bytes: 10 * 1024 * 1024,
            max_redirects: 5,
            min_interval_ms: 1000,
            wait_in_worker_ms: 5000,
            max_per_host: 1,
            level_memory_secs: 24 * 3600,
            crawl_depth: 0,
            crawl_max_pages: 10,
            crawl_same_domain: true,
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct CleanConfig {
    /// A source whose analysis scores below this ends as `irrelevant`.
    pub min_relevance: f64,
    /// Markdown kept per source, in characters.
    pub max_chars: usize,
    /// Content whose cleanliness score (0 to 1) is at or above this skips LLM cleaning.
    pub judge_threshold: f64,
    /// Let the LLM judge cleanliness on a sample of the page (needs `[llm]`); without it the
    /// heuristic score decides.
    pub llm_judge: bool,
    /// Let the LLM clean content judged below `judge_threshold` (needs `[llm]`). A cleaning
    /// that loses code blocks, shell commands or tables is discarded and the reason recorded.
    pub llm_cleaning: bool,
    /// Let the LLM write each source's analysis (needs `[llm]`); without it, extractive.
    pub llm_analysis: bool,
    /// Characters of the page the LLM judge sees (from its start and its end).
    pub judge_sample_chars: usize,
    /// Pages longer than this, in characters, are not LLM-cleaned (the reason is recorded);
    /// shorter ones are cleaned in chunks of about 8,000 characters.
    pub llm_clean_max_chars: usize,
    /// Characters of the page the LLM analysis sees; a longer page is cut to its paragraphs
    /// most relevant to the question.
    pub llm_analysis_max_chars: usize,
    /// How long a source's analysis is reused for the same content and question (0: no cache).
    pub cache_ttl_secs: u64,
}

impl Default for CleanConfig {
    fn default() -> Self {
        CleanConfig {
            min_relevance: 0.15,
            max_chars: 200_000,
            judge_threshold: 0.7,
            llm_judge: true,
            llm_cleaning: true,
            llm_analysis: true,
            judge_sample_chars: 4_000,
            llm_clean_max_chars: 32_000,
            llm_analysis_max_chars: 16_000,
            cache_ttl_secs: 7 * 24 * 3600,
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct SynthesizeConfig {
    /// Token budget of the prompt given to the report writer (sources, question, instructions).
    pub max_tokens: usize,
    /// Sentences the extractive report takes in all.
    pub sentences: usize,
    /// Language of LLM reports for jobs without a `language` option; empty: the question's
    /// language, as detected.
    pub language: String,
    /// Environment variable holding the HMAC key that signs webhook deliveries.
    pub webhook_secret_env: String,
    /// Delivery attempts per webhook event.
    pub webhook_attempts: u32,
}

impl Default for SynthesizeConfig {
    fn default() -> Self {
        SynthesizeConfig {
            max_tokens: 20_000,
            sentences: 6,
            language: String::new(),
            webhook_secret_env: "TRAWL_WEBHOOK_SECRET".into(),
            webhook_attempts: 5,
        }
    }
}

/// The report a job ends with.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ReportConfig {
    /// Most tokens the LLM's report may take (a job's `report_max_tokens` option overrides it).
    pub max_tokens: u32,
    /// A statement of the report that no source read supports: `drop` it, or `keep` it under
    /// an "Unverified" heading, without a citation.
    pub unverified: Unverified,
    /// The report's shape: `answer` (a short paragraph), `brief` (the answer, then details
    /// under short headings) or `detailed` (a thorough account); a job's `report_type` option
    /// overrides it.
    #[serde(rename = "type")]
    #[schemars(with = "String")]
    pub kind: trawl_messages::ReportType,
}

impl Default for ReportConfig {
    fn default() -> Self {
        ReportConfig {
            max_tokens: 1500,
            unverified: Unverified::Drop,
            kind: trawl_messages::ReportType::Brief,
        }
    }
}

/// The most rounds of research a job may have (`research.max_rounds`).
pub const MAX_ROUNDS: u32 = 5;

/// The largest `broker.max_waiting`: RabbitMQ gives each of a worker's consumers at most
/// `prefetch` messages, so a window is that many consumers on one channel.
pub const MAX_WAITING: u32 = 8192;

/// The smallest `broker.max_in_flight_bytes`: below it a worker could hold no ordinary page.
pub const MIN_IN_FLIGHT_BYTES: u64 = 1 << 20;

/// Follow-up research rounds: once a round's sources are in, a job that still lacks a target
/// data point or a sub-query searches again for it.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ResearchConfig {
    /// Rounds of research per job, the question's own search included: 1 turns follow-ups off.
    pub max_rounds: u32,
    /// New URLs one follow-up round may add to its job.
    pub urls_per_round: usize,
    /// A follow-up round starts only while this much of the job's deadline is left.
    pub min_secs_left: u64,
}

impl Default for ResearchConfig {
    fn default() -> Self {
        ResearchConfig {
            max_rounds: 2,
            urls_per_round: 5,
            min_secs_left: 30,
        }
    }
}

/// What becomes of a report's statement that no source supports (`report.unverified`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Unverified {
    #[default]
    Drop,
    Keep,
}

/// How search picks the URLs to fetch (`search.selection`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Selection {
    /// The formula's score, best first.
    #[default]
    Score,
    /// The LLM picks from the result list; the score decides when it cannot answer.
    Llm,
}

/// The LLM APIs trawl speaks.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Deserialize,
    Serialize,
    strum::IntoStaticStr,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum LlmProvider {
    /// OpenAI's API (`https://api.openai.com/v1`), or an OpenAI-compatible server at `base_url`.
    Openai,
    /// Azure OpenAI: `base_url` is the resource's endpoint (`https://NAME.openai.azure.com`) and
    /// `model` the deployment's name; the key goes in the `api-key` header.
    Azure,
    /// Anthropic's Messages API.
    Anthropic,
    /// Google Gemini, through its OpenAI-compatible endpoint.
    Gemini,
    /// OpenRouter (`https://openrouter.ai/api/v1`), models named `vendor/model`.
    Openrouter,
    /// A server of your own that speaks OpenAI's API (Ollama, vLLM, llama.cpp): `base_url`
    /// required, a key only if the server wants one.
    OpenaiCompatible,
}

impl LlmProvider {
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// The public endpoint; `None` where each deployment has its own.
    pub fn default_base_url(self) -> Option<&'static str> {
        match self {
            LlmProvider::Openai => Some("https://api.openai.com/v1"),
            LlmProvider::Anthropic => Some("https://api.anthropic.com"),
            LlmProvider::Gemini => Some("https://generativelanguage.googleapis.com/v1beta/openai"),
            LlmProvider::Openrouter => Some("https://openrouter.ai/api/v1"),
            LlmProvider::Azure | LlmProvider::OpenaiCompatible => None,
        }
    }

    /// The variable that holds the key when `api_key_env` is empty; `None` for servers that
    /// need none.
    pub(crate) fn default_key_env(self) -> Option<&'static str> {
        match self {
            LlmProvider::Openai => Some("OPENAI_API_KEY"),
            LlmProvider::Azure => Some("AZURE_OPENAI_API_KEY"),
            LlmProvider::Anthropic => Some("ANTHROPIC_API_KEY"),
            LlmProvider::Gemini => Some("GEMINI_API_KEY"),
            LlmProvider::Openrouter => Some("OPENROUTER_API_KEY"),
            LlmProvider::OpenaiCompatible => None,
        }
    }

    /// Whether the provider serves `/embeddings` in OpenAI's format.
    pub(crate) fn has_embeddings(self) -> bool {
        self != LlmProvider::Anthropic
    }
}

/// The LLM steps, each of which may have its own model (`llm.models`).
pub const LLM_STEPS: [&str; 6] = [
    "analysis",
    "relevance",
    "selection",
    "clean",
    "analyse",
    "report",
];

/// One model behind one endpoint: a step's own (`llm.models.STEP`) or the embeddings'
/// (`llm.embeddings`). Empty fields take the main `[llm]` section's.
#[derive(Clone, Debug, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct LlmEndpoint {
    pub provider: Option<LlmProvider>,
    pub base_url: String,
    pub model: String,
    pub api_key_env: String,
}

impl LlmEndpoint {
    /// The variable that holds this endpoint's key: `api_key_env`, or the provider's.
    pub fn key_env(&self) -> Option<String> {
        match (self.api_key_env.trim(), self.provider) {
            ("", Some(p)) => p.default_key_env().map(str::to_owned),
            ("", None) => None,
            (var, _) => Some(var.to_owned()),
        }
    }
}

/// A step's model: a name served by the main provider, or a model behind another endpoint.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum StepModel {
    Name(String),
    Endpoint(LlmEndpoint),
}

impl StepModel {
    /// The step's endpoint, with the main section's settings where it names none.
    pub fn resolve(&self, main: &LlmConfig) -> LlmEndpoint {
        match self {
            StepModel::Name(model) => LlmEndpoint {
                model: model.clone(),
                ..main.endpoint()
            },
            StepModel::Endpoint(e) => main.fill(e),
        }
    }
}

/// Dollars per million tokens.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelPrice {
    pub input: f64,
    /// Input tokens served from the provider's prompt cache; `input` when absent.
    #[serde(default)]
    pub cached_input: Option<f64>,
    pub output: f64,
}

/// Fleet-wide limits on one model's calls (`llm.limits`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RateLimit {
    pub requests_per_minute: Option<u32>,
    pub tokens_per_minute: Option<u64>,
}

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct LlmConfig {
    /// openai, azure, anthropic, gemini, openrouter or openai-compatible.
    pub provider: LlmProvider,
    /// Empty: the provider's public endpoint.
    pub base_url: String,
    /// The model (Azure: the deployment) every step uses unless `models` names another.
    pub model: String,
    /// Name of the environment variable that holds the API key (never the key itself). Empty:
    /// the provider's (`OPENAI_API_KEY`, `AZURE_OPENAI_API_KEY`, `ANTHROPIC_API_KEY`,
    /// `GEMINI_API_KEY`, `OPENROUTER_API_KEY`); an openai-compatible server may need none.
    pub api_key_env: String,
    /// Azure OpenAI's `api-version`.
    pub api_version: String,
    /// Models per step: `analysis`, `relevance`, `selection`, `clean`, `analyse`, `report`; a
    /// model name, or `{ provider, base_url, model, api_key_env }` for another endpoint.
    pub models: BTreeMap<String, StepModel>,
    pub timeout_secs: u64,
    /// Retries on 429 and 5xx, with back-off (honouring Retry-After).
    pub max_retries: u32,
    /// Ask for JSON output where the endpoint supports it (`response_format`).
    pub json_mode: bool,
    /// How long an identical request's answer is reused (0: no cache).
    pub cache_ttl_secs: u64,
    /// Reasoning models (o-series, gpt-5, Gemini 2.5): `minimal`, `low`, `medium` or `high`;
    /// empty: the model's default.
    pub reasoning_effort: String,
    /// Tokens a reasoning model may spend thinking, on top of each answer's allowance.
    pub reasoning_tokens: u32,
    /// Prices per model in dollars per million tokens (`{ input, cached_input, output }`), over
    /// the built-in table of well-known models.
    pub prices: BTreeMap<String, ModelPrice>,
    /// The main model's prices, per million tokens (older form of `prices`).
    pub input_price_per_mtok: Option<f64>,
    pub output_price_per_mtok: Option<f64>,
    /// Proxy for LLM calls (`http://host:port`); empty: `HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`.
    pub proxy: String,
    /// The embeddings endpoint for semantic rerank (any provider with OpenAI's `/embeddings`).
    pub embeddings: Option<LlmEndpoint>,
    /// Embedding model on the main endpoint (shorthand for `embeddings.model`).
    pub embedding_model: String,
    /// Requests a minute each model may take from the whole fleet (an organisation's RPM),
    /// shared by every worker through the store; absent: no limit. A call waits for its turn
    /// instead of meeting a 429.
    pub requests_per_minute: Option<u32>,
    /// Tokens a minute each model may take from the whole fleet (an organisation's TPM),
    /// counted as providers count them: the prompt's estimate plus the answer's whole
    /// allowance. Absent: no limit.
    pub tokens_per_minute: Option<u64>,
    /// Limits per model where models differ: a table per model name with `requests_per_minute`
    /// and `tokens_per_minute` (`[llm.limits."gpt-4o"]`); what an entry leaves out is the
    /// limit above.
    pub limits: BTreeMap<String, RateLimit>,
    /// Share of `broker.message_timeout_secs` a stage's LLM calls may spend answering in one
    /// message (0 to 1; waits for a rate limit do not count). Past it the remaining steps take
    /// their non-LLM paths, so a slow model never holds a handler until its message is
    /// abandoned and retried, every answer asked again.
    pub message_time_share: f64,
}

impl Default for LlmConfig {
    fn default() -> Self {
        LlmConfig {
            provider: LlmProvider::Openai,
            base_url: String::new(),
            model: "gpt-4o-mini".into(),
            api_key_env: String::new(),
            api_version: "2024-10-21".into(),
            models: BTreeMap::new(),
            timeout_secs: 60,
            max_retries: 3,
            json_mode: true,
            cache_ttl_secs: 7 * 24 * 3600,
            reasoning_effort: String::new(),
            reasoning_tokens: 4096,
            prices: BTreeMap::new(),
            input_price_per_mtok: None,
            output_price_per_mtok: None,
            proxy: String::new(),
            embeddings: None,
            embedding_model: String::new(),
            requests_per_minute: None,
            tokens_per_minute: None,
            limits: BTreeMap::new(),
            message_time_share: 0.8,
        }
    }
}

impl LlmConfig {
    /// The main endpoint.
    pub fn endpoint(&self) -> LlmEndpoint {
        LlmEndpoint {
            provider: Some(self.provider),
            base_url: self.base_url.clone(),
            model: self.model.clone(),
            api_key_env: self.api_key_env.clone(),
        }
    }

    /// `e` with the main section's provider, and its URL and key when `e` keeps its provider.
    fn fill(&self, e: &LlmEndpoint) -> LlmEndpoint {
        let provider = e.provider.unwrap_or(self.provider);
        let same = provider == self.provider;
        let pick = |own: &str, main: &str| match (own.is_empty(), same) {
            (true, true) => main.to_owned(),
            _ => own.to_owned(),
        };
        LlmEndpoint {
            provider: Some(provider),
            base_url: pick(&e.base_url, &self.base_url),
            model: if e.model.is_empty() {
                self.model.clone()
            } else {
                e.model.clone()
            },
            api_key_env: pick(&e.api_key_env, &self.api_key_env),
        }
    }

    /// The endpoint `step` uses.
    pub fn step(&self, step: &str) -> LlmEndpoint {
        match self.models.get(step) {
            Some(m) => m.resolve(self),
            None => self.endpoint(),
        }
    }

    /// The embeddings endpoint, if any is configured.
    pub fn embeddings_endpoint(&self) -> Option<LlmEndpoint> {
        match (&self.embeddings, self.embedding_model.is_empty()) {
            (Some(e), _) => Some(self.fill(e)),
            (None, false) => Some(LlmEndpoint {
                model: self.embedding_model.clone(),
                ..self.endpoint()
            }),
            (None, true) => None,
        }
    }

    /// Every endpoint in use: the main one, each step's and the embeddings'.
    pub fn endpoints(&self) -> Vec<LlmEndpoint> {
        let mut all = vec![self.endpoint()];
        all.extend(self.models.values().map(|m| m.resolve(self)));
        all.extend(self.embeddings_endpoint());
        all
    }

    /// The fleet-wide limits `model`'s calls keep to: its `limits` entry, and the section's
    /// own limits for what the entry leaves out.
    pub fn limit_of(&self, model: &str) -> RateLimit {
        let own = self.limits.get(model).copied().unwrap_or_default();
        RateLimit {
            requests_per_minute: own.requests_per_minute.or(self.requests_per_minute),
            tokens_per_minute: own.tokens_per_minute.or(self.tokens_per_minute),
        }
    }

    /// Problems with this section, for [`Config::validate`].
    fn problems(&self, problems: &mut Vec<String>) {
        if !(self.message_time_share > 0.0 && self.message_time_share <= 1.0) {
            problems.push(format!(
                "llm.message_time_share: must be above 0 and at most 1, not {}",
                self.message_time_share
            ));
        }
        let mut limits = vec![(
            "llm".to_string(),
            RateLimit {
                requests_per_minute: self.requests_per_minute,
                tokens_per_minute: self.tokens_per_minute,
            },
        )];
        limits.extend(
            self.limits
                .iter()
                .map(|(m, l)| (format!("llm.limits.{m:?}"), *l)),
        );
        for (at, limit) in limits {
            if limit.requests_per_minute == Some(0) {
                problems.push(format!(
                    "{at}.requests_per_minute: must be at least 1, not 0 (leave it out for no limit)"
                ));
            }
            if limit.tokens_per_minute == Some(0) {
                problems.push(format!(
                    "{at}.tokens_per_minute: must be at least 1, not 0 (leave it out for no limit)"
                ));
            }
        }
        for step in self.models.keys() {
            if !LLM_STEPS.contains(&step.as_str()) {
                problems.push(format!(
                    "llm.models.{step}: not a step (the steps are {})",
                    LLM_STEPS.join(", ")
                ));
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        for e in self.endpoints() {
            let provider = e.provider.unwrap_or(self.provider);
            if e.model.trim().is_empty() {
                problems.push(format!("llm: a {} endpoint has no model", provider.name()));
            }
            if e.base_url.trim().is_empty()
                && provider.default_base_url().is_none()
                && seen.insert(provider)
            {
                problems.push(format!(
                    "llm: provider {} needs base_url (its endpoint: {})",
                    provider.name(),
                    match provider {
                        LlmProvider::Azure => "https://NAME.openai.azure.com",
                        _ => "the server's OpenAI-compatible URL, e.g. http://127.0.0.1:11434/v1 for Ollama",
                    }
                ));
            }
        }
        if let Some(e) = self.embeddings_endpoint() {
            if !e.provider.unwrap_or(self.provider).has_embeddings() {
                problems.push(
                    "llm: anthropic serves no embeddings; set [llm.embeddings] with a provider that does (openai, azure, gemini, openai-compatible)"
                        .into(),
                );
            }
        }
        for (model, price) in &self.prices {
            let values = [Some(price.input), price.cached_input, Some(price.output)];
            if values
                .into_iter()
                .flatten()
                .any(|v| !v.is_finite() || v < 0.0)
            {
                problems.push(format!(
                    "llm.prices.{model:?}: prices must be numbers of dollars per million tokens, 0 or more"
                ));
            }
        }
        for (name, v) in [
            ("input_price_per_mtok", self.input_price_per_mtok),
            ("output_price_per_mtok", self.output_price_per_mtok),
        ] {
            if v.is_some_and(|v| !v.is_finite() || v < 0.0) {
                problems.push(format!("llm.{name} must be 0 or more"));
            }
        }
        if !["", "minimal", "low", "medium", "high"].contains(&self.reasoning_effort.as_str()) {
            problems.push(format!(
                "llm.reasoning_effort must be minimal, low, medium, high or empty (got {:?})",
                self.reasoning_effort
            ));
        }
        if self.timeout_secs == 0 {
            problems.push("llm.timeout_secs must be at least 1".into());
        }
    }
}

/// `trawl serve`: the HTTP API in front of the fleet.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ApiConfig {
    /// Where the API listens.
    pub addr: String,
    /// Largest request body accepted, in bytes.
    pub max_body_bytes: usize,
    /// Most questions one batch may hold.
    pub max_questions: usize,
    /// Requests per second allowed to each token, counted in one-second windows shared by every
    /// API replica.
    pub rate_per_sec: u32,
    /// How long an Idempotency-Key is remembered.
    pub idempotency_ttl_secs: u64,
    /// A request's head must arrive within this many seconds of the connection being ready for
    /// it (also how long an idle keep-alive connection stays open).
    pub header_timeout_secs: u64,
    /// A connection on which nothing moves either way for this long is closed.
    pub idle_timeout_secs: u64,
    /// Most connections open at once.
    pub max_connections: usize,
    /// Most connections open at once from one client address (IPv6: one /64); 0 for no limit,
    /// e.g. behind a proxy that opens them all (then limit clients at the proxy).
    pub max_connections_per_client: usize,
    /// Questions each token may submit per UTC day, counted across every replica; 0 for no
    /// limit.
    pub questions_per_day: u64,
    /// Batches each token may have open (with jobs not yet ended) at once; 0 for no limit.
    pub open_batches: u64,
}

impl Default for ApiConfig {
    fn default() -> Self {
        ApiConfig {
            addr: "0.0.0.0:8080".into(),
            max_body_bytes: 4 << 20,
            max_questions: 10_000,
            rate_per_sec: 20,
            idempotency_ttl_secs: 24 * 3600,
            header_timeout_secs: 10,
            idle_timeout_secs: 60,
            max_connections: 4096,
            max_connections_per_client: 256,
            questions_per_day: 100_000,
            open_batches: 100,
        }
    }
}

/// `trawl mcp`: trawl's tools for agents over the Model Context Protocol.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct McpConfig {
    /// Where `trawl mcp --http` listens (streamable HTTP at `/mcp`).
    pub addr: String,
    /// Most tokens one tool result may hold; a longer report or page is cut at a paragraph and
    /// the full work products are referenced instead.
    pub max_tokens: usize,
    /// How long the `research` tool waits for its report before answering with the job's id.
    pub research_timeout_secs: u64,
    /// Host names (or host:port) the HTTP transport answers to, against DNS rebinding; empty
    /// means loopback names only. Listing a public name needs an API token on every request,
    /// which `trawl mcp --http` requires whenever a shared store is configured.
    pub allowed_hosts: Vec<String>,
}

impl Default for McpConfig {
    fn default() -> Self {
        McpConfig {
            addr: "127.0.0.1:8765".into(),
            max_tokens: 20_000,
            research_timeout_secs: 900,
            allowed_hosts: Vec::new(),
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct MetricsConfig {
    /// Where `/metrics`, `/healthz` and `/readyz` listen; empty disables the endpoint.
    pub addr: String,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        MetricsConfig {
            addr: "0.0.0.0:9464".into(),
        }
    }
}

impl Config {
    /// Loads defaults, then `file` if given, then `TRAWL__SECTION__KEY` entries of `env`.
    pub fn load(
        file: Option<&Path>,
        env: &BTreeMap<String, String>,
    ) -> Result<Config, ConfigError> {
        let mut table = match file {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
                    path: path.display().to_string(),
                    source,
                })?;
                toml::from_str::<toml::Table>(&text)
                    .map_err(|e| ConfigError::Parse(format!("{}: {e}", path.display())))?
            }
            None => toml::Table::new(),
        };
        apply_env(&mut table, env)?;
        let config: Config = toml::Value::Table(table)
            .try_into()
            .map_err(|e: toml::de::Error| ConfigError::Parse(e.to_string()))?;
        config.validate()?;
        Ok(config)
    }

    /// The file to read when none is named: `trawl.toml` in `cwd`, else `trawl/trawl.toml` in
    /// `$XDG_CONFIG_HOME` (`~/.config` when unset), as other command-line tools look.
    pub fn discover(cwd: &Path, env: &BTreeMap<String, String>) -> Option<PathBuf> {
        let here = cwd.join("trawl.toml");
        let user = (env.get("XDG_CONFIG_HOME").filter(|d| !d.is_empty()))
            .map(PathBuf::from)
            .or_else(|| env.get("HOME").map(|home| Path::new(home).join(".config")))
            .map(|dir| dir.join("trawl").join("trawl.toml"));
        [Some(here), user]
            .into_iter()
            .flatten()
            .find(|p| p.is_file())
    }

    /// Loads from the process environment; the binaries' entry point.
    pub fn from_process(file: Option<&Path>) -> Result<Config, ConfigError> {
        let env: BTreeMap<String, String> = std::env::vars().collect();
        Config::load(file, &env)
    }

    /// The secret values this config names: passwords in `broker.url` and `store.url` (as
    /// written and percent-decoded), and the values of the variables that hold the LLM, search
    /// provider and webhook keys (read from `env`). For the log redactor.
    pub fn secret_values(&self, env: &BTreeMap<String, String>) -> Vec<String> {
        let mut values = Vec::new();
        for url in [&self.broker.url, &self.store.url].into_iter().flatten() {
            if let Some(password) = url_password(url) {
                if let Ok(decoded) = percent_encoding::percent_decode_str(&password).decode_utf8() {
                    values.push(decoded.into_owned());
                }
                values.push(password);
            }
        }
        let llm_vars: Vec<String> = (self.llm.iter())
            .flat_map(|l| l.endpoints())
            .filter_map(|e| e.key_env())
            .collect();
        let vars = llm_vars
            .iter()
            .chain(self.search.api_key_env.values())
            .chain([&self.synthesize.webhook_secret_env]);
        values.extend(vars.filter_map(|name| env.get(name)).cloned());
        values
    }

    /// The effective configuration as TOML, every key with its value (defaults included) and
    /// the password of every URL in it replaced by `***`: what `trawl config show` prints.
    /// Keys are named by environment variables, never held here, so nothing else is secret.
    pub fn show(&self) -> String {
        fn redact(v: &mut toml::Value) {
            match v {
                toml::Value::String(s) if s.contains("://") => *s = redact_url(s),
                toml::Value::Array(items) => items.iter_mut().for_each(redact),
                toml::Value::Table(t) => t.iter_mut().for_each(|(_, v)| redact(v)),
                _ => {}
            }
        }
        let mut table = toml::Value::try_from(self).expect("the configuration serialises");
        redact(&mut table);
        toml::to_string(&table).expect("a TOML table serialises")
    }

    /// Every problem at once, so a user fixes their file in one go.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let mut problems = Vec::new();
        let name_ok = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        };
        if !name_ok(&self.broker.namespace) {
            problems
                .push("broker.namespace must be non-empty letters, digits, '-', '_' or '.'".into());
        }
        if !name_ok(&self.store.prefix) {
            problems.push("store.prefix must be non-empty letters, digits, '-', '_' or '.'".into());
        }
        if self.broker.prefetch == 0 {
            problems.push(format!(
                "broker.prefetch must be at least 1 (got {})",
                self.broker.prefetch
            ));
        }
        if self.broker.max_waiting > MAX_WAITING {
            problems.push(format!(
                "broker.max_waiting must be at most {MAX_WAITING} (got {}); a worker that must hold more should be several workers",
                self.broker.max_waiting
            ));
        }
        for (provider, rps) in &self.search.requests_per_second {
            if !(rps.is_finite() && *rps > 0.0) {
                problems.push(format!(
                    "search.requests_per_second.{provider}: must be above 0, not {rps} (leave it out for no limit)"
                ));
            }
        }
        if self.broker.max_in_flight_bytes < MIN_IN_FLIGHT_BYTES {
            problems.push(format!(
                "broker.max_in_flight_bytes must be at least {MIN_IN_FLIGHT_BYTES} (1 MiB; got {})",
                self.broker.max_in_flight_bytes
            ));
        }
        if self.broker.max_attempts == 0 {
            problems.push(format!(
                "broker.max_attempts must be at least 1 (got {})",
                self.broker.max_attempts
            ));
        }
        if self.broker.retry_delays_secs.is_empty() || self.broker.retry_delays_secs.contains(&0) {
            problems.push("broker.retry_delays_secs must list delays of at least 1 second".into());
        }
        if self.api.max_body_bytes == 0 || self.api.max_questions == 0 || self.api.rate_per_sec == 0
        {
            problems.push(
                "api.max_body_bytes, api.max_questions and api.rate_per_sec must be at least 1"
                    .into(),
            );
        }
        if self.api.header_timeout_secs == 0
            || self.api.idle_timeout_secs == 0
            || self.api.max_connections == 0
        {
            problems.push(
                "api.header_timeout_secs, api.idle_timeout_secs and api.max_connections must be at least 1"
                    .into(),
            );
        }
        if !(1..=MAX_ROUNDS).contains(&self.research.max_rounds) {
            problems.push(format!(
                "research.max_rounds must be 1 to {MAX_ROUNDS} (got {})",
                self.research.max_rounds
            ));
        }
        if !(1..=100).contains(&self.research.urls_per_round) {
            problems.push(format!(
                "research.urls_per_round must be 1 to 100 (got {})",
                self.research.urls_per_round
            ));
        }
        if !(100..=16_000).contains(&self.report.max_tokens) {
            problems.push(format!(
                "report.max_tokens must be 100 to 16000 (got {})",
                self.report.max_tokens
            ));
        }
        if self.mcp.max_tokens < 100 || self.mcp.research_timeout_secs == 0 {
            problems.push(
                "mcp.max_tokens must be at least 100 and mcp.research_timeout_secs at least 1"
                    .into(),
            );
        }
        if self.broker.message_timeout_secs == 0 {
            problems.push(format!(
                "broker.message_timeout_secs must be at least 1 (got {})",
                self.broker.message_timeout_secs
            ));
        }
        if self.broker.message_timeout_secs >= self.broker.consumer_timeout_secs {
            problems.push(format!(
                "broker.message_timeout_secs ({}) must be below broker.consumer_timeout_secs ({}), \
                 the broker's consumer_timeout: past it RabbitMQ closes the worker's channel and \
                 redelivers everything in flight on it (raise consumer_timeout in rabbitmq.conf \
                 and set broker.consumer_timeout_secs to match, or lower the message timeout)",
                self.broker.message_timeout_secs, self.broker.consumer_timeout_secs
            ));
        }
        if self.broker.defer_delays_ms.contains(&0) {
            problems.push("broker.defer_delays_ms must list delays of at least 1 ms".into());
        }
        if self.fetch.max_level > 3 {
            problems.push(format!(
                "fetch.max_level must be 0 to 3 (got {})",
                self.fetch.max_level
            ));
        }
        if self.fetch.max_per_host == 0 || self.fetch.browser_sessions == 0 {
            problems
                .push("fetch.max_per_host and fetch.browser_sessions must be at least 1".into());
        }
        if self.broker.results_max_length == 0 || self.broker.results_ttl_secs == 0 {
            problems.push(
                "broker.results_max_length and broker.results_ttl_secs must be at least 1".into(),
            );
        }
        if self.broker.delivery_limit == 0 {
            problems.push(format!(
                "broker.delivery_limit must be at least 1 (got {})",
                self.broker.delivery_limit
            ));
        }
        if self.store.robots_ttl_secs > 24 * 3600 {
            problems.push(format!(
                "store.robots_ttl_secs must be at most 86400 (RFC 9309; got {})",
                self.store.robots_ttl_secs
            ));
        }
        problems.extend(self.output.problems());
        if !(0.0..=1.0).contains(&self.search.min_relevance) {
            problems.push(format!(
                "search.min_relevance must be between 0 and 1 (got {})",
                self.search.min_relevance
            ));
        }
        if !(0.0..=1.0).contains(&self.clean.min_relevance)
            || !(0.0..=1.0).contains(&self.clean.judge_threshold)
        {
            problems.push(
                "clean.min_relevance and clean.judge_threshold must be between 0 and 1".into(),
            );
        }
        if self.clean.judge_sample_chars < 200 || self.clean.llm_analysis_max_chars < 200 {
            problems.push(
                "clean.judge_sample_chars and clean.llm_analysis_max_chars must be at least 200"
                    .into(),
            );
        }
        if self.search.max_urls == 0 {
            problems.push(format!(
                "search.max_urls must be at least 1 (got {})",
                self.search.max_urls
            ));
        }
        if !matches!(
            self.search.freshness.as_str(),
            "any" | "day" | "week" | "month" | "year"
        ) {
            problems.push(format!(
                "search.freshness must be any, day, week, month or year (got {:?})",
                self.search.freshness
            ));
        }
        let needs_llm = self.search.llm_relevance
            || self.search.rerank
            || self.search.selection == Selection::Llm;
        if needs_llm && self.llm.is_none() {
            problems.push("search.llm_relevance, search.rerank and search.selection = \"llm\" need an [llm] section".into());
        }
        if self.search.rerank
            && self
                .llm
                .as_ref()
                .is_some_and(|l| l.embeddings_endpoint().is_none())
        {
            problems.push(
                "search.rerank needs embeddings: [llm.embeddings] (provider, model …) or llm.embedding_model"
                    .into(),
            );
        }
        if self.search.results_per_query == 0 {
            problems.push(format!(
                "search.results_per_query must be at least 1 (got {})",
                self.search.results_per_query
            ));
        }
        if self.search.providers.is_empty() {
            problems.push("search.providers must name at least one provider".into());
        }
        for (pattern, addr) in &self.fetch.resolve {
            if !host_pattern(pattern) {
                problems.push(format!(
                    "fetch.resolve.\"{pattern}\" is not a host pattern: use a host name \
                     (example.org) or a domain with its subdomains (*.example.org)"
                ));
            }
            if addr.parse::<std::net::SocketAddr>().is_err() {
                problems.push(format!(
                    "fetch.resolve.\"{pattern}\" must be ip:port (got {addr:?})"
                ));
            }
        }
        for net in &self.fetch.allow_networks {
            if parse_cidr(net).is_none() {
                problems.push(format!(
                    "fetch.allow_networks: {net:?} is not a CIDR like 10.0.0.0/8"
                ));
            }
        }
        if self.fetch.user_agent.trim().is_empty() {
            problems.push("fetch.user_agent must not be empty".into());
        }
        if (self.fetch.browser_proxy_listen)
            .parse::<std::net::SocketAddr>()
            .is_err()
        {
            problems.push(format!(
                "fetch.browser_proxy_listen must be ip:port (got {:?})",
                self.fetch.browser_proxy_listen
            ));
        }
        let advertise = &self.fetch.browser_proxy_advertise;
        if !advertise.is_empty()
            && !advertise.rsplit_once(':').is_some_and(|(host, port)| {
                !host.is_empty() && port.parse::<u16>().is_ok_and(|p| p > 0)
            })
        {
            problems.push(format!(
                "fetch.browser_proxy_advertise must be host:port or empty (got {advertise:?})"
            ));
        }
        if let Some(llm) = &self.llm {
            llm.problems(&mut problems);
        }
        if !self.metrics.addr.is_empty()
            && self.metrics.addr.parse::<std::net::SocketAddr>().is_err()
        {
            problems.push(format!(
                "metrics.addr must be ip:port or empty (got {:?})",
                self.metrics.addr
            ));
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(ConfigError::Invalid(problems))
        }
    }
}

/// The password of a URL's userinfo, as [`redact_url`] finds it.
fn url_password(url: &str) -> Option<String> {
    let (_, rest) = url.split_once("://")?;
    let (userinfo, _) = rest.rsplit_once('@')?;
    let (_, password) = userinfo.split_once(':')?;
    (!password.is_empty()).then(|| password.to_owned())
}

/// `TRAWL__SEARCH__MAX_URLS=5` sets `search.max_urls`. Values are read as TOML when they parse
/// (numbers, booleans, arrays, inline tables) and as plain strings otherwise.
fn apply_env(table: &mut toml::Table, env: &BTreeMap<String, String>) -> Result<(), ConfigError> {
    for (key, raw) in env {
        let Some(path) = key.strip_prefix("TRAWL__") else {
            continue;
        };
        let parts: Vec<String> = path.split("__").map(|p| p.to_ascii_lowercase()).collect();
        if parts.iter().any(String::is_empty) {
            return Err(ConfigError::Parse(format!(
                "malformed environment key {key}"
            )));
        }
        let value = toml::from_str::<toml::Table>(&format!("v = {raw}"))
            .ok()
            .and_then(|mut t| t.remove("v"))
            .unwrap_or_else(|| toml::Value::String(raw.clone()));
        let (last, sections) = parts.split_last().expect("split yields one part at least");
        let mut node = &mut *table;
        for section in sections {
            let entry = node
                .entry(section.clone())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            node = entry
                .as_table_mut()
                .ok_or_else(|| ConfigError::Parse(format!("{key}: {section} is not a section")))?;
        }
        node.insert(last.clone(), value);
    }
    Ok(())
}

/// A `fetch.resolve` key: a host name, or `*.` and a domain (which matches the domain and its
/// subdomains). A bare `*` would match nothing, so it is refused rather than ignored.
fn host_pattern(pattern: &str) -> bool {
    let host = pattern.strip_prefix("*.").unwrap_or(pattern);
    !host.is_empty()
        && host.len() <= 253
        && host.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        })
}

/// Parses `a.b.c.d/n` or `x::y/n`.
pub fn parse_cidr(s: &str) -> Option<(std::net::IpAddr, u8)> {
    let (addr, len) = s.split_once('/')?;
    let addr: std::net::IpAddr = addr.parse().ok()?;
    let len: u8 = len.parse().ok()?;
    let max = if addr.is_ipv4() { 32 } else { 128 };
    (len <= max).then_some((addr, len))
}

/// Hides the password of a URL such as `amqp://user:secret@host/`.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    // Up to the last `@`, not the first `/`: a password with an unencoded `/`, `#`, `?` or `@`
    // would otherwise end the userinfo early and show. An `@` in a path or query masks more
    // than it must, which is the safe side.
    match rest.rsplit_once('@') {
        Some((userinfo, host_and_tail)) => {
            let user = userinfo.split(':').next().unwrap_or("");
            let user = if user.contains(['/', '#', '?']) {
                ""
            } else {
                user
            };
            format!("{scheme}://{user}:***@{host_and_tail}")
        }
        None => url.to_owned(),
    }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut broker = self.broker.clone();
        broker.url = broker.url.as_deref().map(redact_url);
        let mut store = self.store.clone();
        store.url = store.url.as_deref().map(redact_url);
        f.debug_struct("Config")
            .field("broker", &broker)
            .field("store", &store)
            .field("output", &self.output)
            .field("job", &self.job)
            .field("search", &self.search)
            .field("fetch", &self.fetch)
            .field("clean", &self.clean)
            .field("synthesize", &self.synthesize)
            .field("research", &self.research)
            .field("llm", &self.llm)
            .field("metrics", &self.metrics)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovery_prefers_the_working_directory_then_the_user_config() {
        let root = std::env::temp_dir().join(format!("trawl-discover-{}", std::process::id()));
        let (cwd, xdg, home) = (root.join("cwd"), root.join("xdg"), root.join("home"));
        for dir in [&cwd, &xdg.join("trawl"), &home.join(".config/trawl")] {
            std::fs::create_dir_all(dir).unwrap();
        }
        let env = |xdg: Option<&Path>| {
            let mut env = BTreeMap::from([("HOME".to_owned(), home.display().to_string())]);
            if let Some(xdg) = xdg {
                env.insert("XDG_CONFIG_HOME".into(), xdg.display().to_string());
            }
            env
        };
        assert_eq!(Config::discover(&cwd, &env(Some(&xdg))), None);
        std::fs::write(home.join(".config/trawl/trawl.toml"), "").unwrap();
        assert_eq!(
            Config::discover(&cwd, &env(None)),
            Some(home.join(".config/trawl/trawl.toml"))
        );
        std::fs::write(xdg.join("trawl/trawl.toml"), "").unwrap();
        assert_eq!(
            Config::discover(&cwd, &env(Some(&xdg))),
            Some(xdg.join("trawl/trawl.toml"))
        );
        std::fs::write(cwd.join("trawl.toml"), "").unwrap();
        assert_eq!(
            Config::discover(&cwd, &env(Some(&xdg))),
            Some(cwd.join("trawl.toml"))
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn defaults_follow_the_design() {
        let c = Config::load(None, &env(&[])).unwrap();
        assert!(c.broker.url.is_none() && c.store.url.is_none());
        assert_eq!(c.search.min_relevance, 0.3);
        assert_eq!(c.search.max_urls, 10);
        assert!(
            c.fetch.allow_networks.is_empty(),
            "SSRF guard must be closed by default"
        );
    }

    #[test]
    fn the_report_section_takes_its_shape_and_policy_by_name() {
        let c = Config::load(
            None,
            &env(&[
                ("TRAWL__REPORT__TYPE", "answer"),
                ("TRAWL__REPORT__UNVERIFIED", "keep"),
            ]),
        )
        .unwrap();
        assert_eq!(c.report.kind, trawl_messages::ReportType::Answer);
        assert_eq!(c.report.unverified, Unverified::Keep);
        let e = Config::load(None, &env(&[("TRAWL__REPORT__TYPE", "long")])).unwrap_err();
        assert!(
            e.to_string().contains("answer") && e.to_string().contains("type"),
            "{e}"
        );
    }

    #[test]
    fn research_rounds_are_bounded() {
        let c = Config::load(None, &env(&[("TRAWL__RESEARCH__MAX_ROUNDS", "3")])).unwrap();
        assert_eq!(c.research.max_rounds, 3);
        assert_eq!(c.research.urls_per_round, 5);
        let e = Config::load(
            None,
            &env(&[
                ("TRAWL__RESEARCH__MAX_ROUNDS", "0"),
                ("TRAWL__RESEARCH__URLS_PER_ROUND", "0"),
            ]),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("research.max_rounds must be 1 to 5 (got 0)"),
            "{e}"
        );
        assert!(
            e.contains("research.urls_per_round must be 1 to 100 (got 0)"),
            "{e}"
        );
    }

    #[test]
    fn file_then_environment_override() {
        let dir = std::env::temp_dir().join(format!("trawl-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("trawl.toml");
        std::fs::write(
            &path,
            "[search]\nmax_urls = 4\nsearxng_url = \"http://a\"\n[fetch]\nresolve = { \"*.test\" = \"127.0.0.1:9000\" }\n",
        )
        .unwrap();
        let c = Config::load(
            Some(&path),
            &env(&[
                ("TRAWL__SEARCH__SEARXNG_URL", "http://b:8888"),
                ("TRAWL__FETCH__ALLOW_NETWORKS", "[\"127.0.0.0/8\"]"),
                (
                    "TRAWL__BROKER__URL",
                    "amqp://guest:guest@127.0.0.1:5672/%2f",
                ),
                ("UNRELATED", "x"),
            ]),
        )
        .unwrap();
        assert_eq!(c.search.max_urls, 4);
        assert_eq!(c.search.searxng_url, "http://b:8888");
        assert_eq!(c.fetch.allow_networks, vec!["127.0.0.0/8"]);
        assert_eq!(c.fetch.resolve["*.test"], "127.0.0.1:9000");
        assert!(
            !format!("{c:?}").contains("guest:guest"),
            "password leaked into Debug"
        );
    }

    #[test]
    fn unknown_keys_and_bad_values_are_all_reported() {
        let err = Config::load(None, &env(&[("TRAWL__SEARCH__MAX_URL", "3")])).unwrap_err();
        assert!(err.to_string().contains("max_url"), "{err}");

        let err = Config::load(
            None,
            &env(&[
                ("TRAWL__SEARCH__MIN_RELEVANCE", "2.0"),
                ("TRAWL__FETCH__MAX_LEVEL", "9"),
                ("TRAWL__FETCH__BROWSER_PROXY_LISTEN", "fetch-browser:9470"),
                ("TRAWL__FETCH__BROWSER_PROXY_ADVERTISE", "fetch-browser"),
            ]),
        )
        .unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("min_relevance") && text.contains("max_level"),
            "{text}"
        );
        assert!(
            text.contains("browser_proxy_listen") && text.contains("browser_proxy_advertise"),
            "{text}"
        );
    }

    #[test]
    fn rate_limits_and_the_byte_cap_refuse_zero_or_negative() {
        let dir = std::env::temp_dir().join(format!("trawl-limits-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("trawl.toml");
        let load = |text: &str| {
            std::fs::write(&path, text).unwrap();
            Config::load(Some(&path), &env(&[]))
        };
        let c = load(
            "[llm]\nrequests_per_minute = 500\ntokens_per_minute = 200000\n\
             [llm.limits.\"gpt-4o\"]\ntokens_per_minute = 30000\n",
        )
        .unwrap();
        let llm = c.llm.unwrap();
        let own = llm.limit_of("gpt-4o");
        assert_eq!(own.requests_per_minute, Some(500));
        assert_eq!(own.tokens_per_minute, Some(30_000));
        assert_eq!(llm.limit_of("gpt-4o-mini").tokens_per_minute, Some(200_000));

        let err = load("[llm]\ntokens_per_minute = 0\n[llm.limits.m]\nrequests_per_minute = 0\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("llm.tokens_per_minute: must be at least 1, not 0"),
            "{err}"
        );
        assert!(
            err.contains("llm.limits.\"m\".requests_per_minute: must be at least 1"),
            "{err}"
        );
        let err = load("[llm]\nrequests_per_minute = -5\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("requests_per_minute") && err.contains("-5"),
            "{err}"
        );
        let err = Config::load(None, &env(&[("TRAWL__LLM__TOKENS_PER_MINUTE", "0")]))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("llm.tokens_per_minute: must be at least 1"),
            "{err}"
        );
        let c = load(
            "[search.requests_per_second]
brave = 0.5
",
        )
        .unwrap();
        assert_eq!(c.search.requests_per_second["brave"], 0.5);
        let err = load(
            "[search.requests_per_second]
brave = 0
serper = -1
",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("search.requests_per_second.brave: must be above 0, not 0")
                && err.contains("search.requests_per_second.serper: must be above 0, not -1"),
            "{err}"
        );
        let err = load("[broker]\nmax_in_flight_bytes = 1000\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("broker.max_in_flight_bytes must be at least"),
            "{err}"
        );
        let err = load("[broker]\nmax_waiting = 100000\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("broker.max_waiting must be at most 8192 (got 100000)"),
            "{err}"
        );
    }

    #[test]
    fn show_prints_every_section_and_no_password() {
        let c = Config::load(
            None,
            &env(&[
                ("TRAWL__BROKER__URL", "amqp://u:p%40ss@h/%2f"),
                (
                    "TRAWL__SEARCH__SEARXNG_URL",
                    "http://admin:hunter2@searx:8888",
                ),
            ]),
        )
        .unwrap();
        let shown = c.show();
        assert!(
            !shown.contains("p%40ss") && !shown.contains("hunter2"),
            "{shown}"
        );
        assert!(shown.contains("amqp://u:***@h/%2f"), "{shown}");
        for section in ["[broker]", "[search]", "[fetch]", "[research]", "[report]"] {
            assert!(shown.contains(section), "{section} missing:\n{shown}");
        }
        // What it prints loads back as the same configuration.
        let dir = std::env::temp_dir().join(format!("trawl-show-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("trawl.toml");
        std::fs::write(&path, &shown).unwrap();
        let again = Config::load(Some(&path), &env(&[])).unwrap();
        assert_eq!(again.show(), shown);
    }

    #[test]
    fn resolve_keys_must_be_host_patterns() {
        let file = |patterns: &[&str]| {
            let entries: Vec<String> = (patterns.iter())
                .map(|p| format!("\"{p}\" = \"127.0.0.1:9000\""))
                .collect();
            format!("[fetch]\nresolve = {{ {} }}\n", entries.join(", "))
        };
        let dir = std::env::temp_dir().join(format!("trawl-resolve-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("trawl.toml");
        std::fs::write(&path, file(&["*", "a b.test", "*.test", "Example.org"])).unwrap();
        let err = Config::load(Some(&path), &env(&[]))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("fetch.resolve.\"*\" is not a host pattern")
                && err.contains("\"a b.test\" is not a host pattern")
                && !err.contains("*.test\" is not")
                && !err.contains("Example.org\" is not"),
            "{err}"
        );
    }

    #[test]
    fn message_timeout_must_stay_below_the_consumer_timeout() {
        let err = Config::load(
            None,
            &env(&[("TRAWL__BROKER__MESSAGE_TIMEOUT_SECS", "1800")]),
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("broker.consumer_timeout_secs (1800)"),
            "{err}"
        );
        let c = Config::load(
            None,
            &env(&[
                ("TRAWL__BROKER__MESSAGE_TIMEOUT_SECS", "1800"),
                ("TRAWL__BROKER__CONSUMER_TIMEOUT_SECS", "3600"),
            ]),
        )
        .unwrap();
        assert_eq!(c.broker.message_timeout_secs, 1800);
    }

    #[test]
    fn names_its_secret_values() {
        let env = env(&[
            ("TRAWL__BROKER__URL", "amqp://u:p%40ss-word@h/%2f"),
            ("TRAWL__STORE__URL", "redis://:r/pw#1@h:6379/"),
            ("TRAWL__LLM__API_KEY_ENV", "MY_MODEL"),
            ("MY_MODEL", "sk-model-value"),
            ("TRAWL_WEBHOOK_SECRET", "whsec-value"),
        ]);
        let config = Config::load(None, &env).unwrap();
        let values = config.secret_values(&env);
        for secret in [
            "p%40ss-word",
            "p@ss-word",
            "r/pw#1",
            "sk-model-value",
            "whsec-value",
        ] {
            assert!(values.iter().any(|v| v == secret), "{secret} in {values:?}");
        }
    }

    #[test]
    fn redacts_passwords() {
        assert_eq!(
            redact_url("amqp://u:p@h:5672/%2f"),
            "amqp://u:***@h:5672/%2f"
        );
        assert_eq!(redact_url("redis://h:6379/"), "redis://h:6379/");
        // Passwords with the characters that end a URL's authority, unencoded.
        for (url, secret) in [
            ("amqp://u:pa/ss@h:5672/%2f", "pa/ss"),
            ("amqp://u:pa#ss@h:5672/%2f", "pa#ss"),
            ("redis://:p@ss@h:6379/", "p@ss"),
            ("redis://u:a?b/c#d@h:6379/0", "a?b/c#d"),
            ("amqp://u/x:secret@h/", "secret"),
        ] {
            let shown = redact_url(url);
            assert!(!shown.contains(secret), "{url} → {shown}");
            assert!(shown.contains(":***@h"), "{url} → {shown}");
        }
    }
}
