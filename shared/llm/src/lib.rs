//! The LLM client every stage shares: chat completions for OpenAI, Azure OpenAI, Gemini,
//! OpenRouter and self-run OpenAI-compatible servers (Ollama, vLLM, llama.cpp), Anthropic's
//! Messages API, and OpenAI-format embeddings, each step on its own model if configured.
//!
//! - [`Llm::chat`]: one completion, on the model its step maps to (`llm.models`), with a
//!   timeout, retries with back-off on 429 and 5xx (honouring `Retry-After`), parameters fit for
//!   the model's family and learnt from its refusals ([`wire`]), usage (cached and reasoning
//!   tokens included) and cost recorded ([`prices`]), and answers cached in the store by a hash
//!   of the request.
//! - [`Llm::json`]: a completion that must be a JSON value passing the caller's validation:
//!   the answer type's JSON Schema as a structured output where the endpoint takes one (OpenAI's
//!   `json_schema`, Anthropic's forced tool), plain JSON mode where it takes only that (a
//!   refusal is learnt and remembered), robust extraction where it takes neither ([`json`]), and
//!   one repair turn that shows the model its error before giving up.
//! - [`Llm::embed`]: embeddings for semantic rerank, from their own endpoint (`llm.embeddings`).
//!
//! Calls go through the proxy config or the environment names ([`proxy`]). API keys are read
//! once from the variables the config names, sent only in request headers, and never appear in
//! errors, logs or metrics.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tracing::warn;
use trawl_config::{LlmConfig, LlmEndpoint};
use trawl_store::{Cache, Store};

pub mod json;
mod metrics;
pub mod prices;
pub mod proxy;
pub mod wire;

use metrics::METRICS;
use trawl_store::{outside, rate_wait};
use wire::Endpoint;

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("LLM configuration: {0}")]
    Config(String),
    #[error("LLM request failed: {0}")]
    Request(String),
    #[error("LLM request timed out")]
    Timeout,
    #[error("LLM endpoint answered HTTP {status}: {message}")]
    Status { status: u16, message: String },
    #[error("LLM answer could not be read: {0}")]
    Malformed(String),
    #[error("LLM answer was not the JSON asked for: {0}")]
    InvalidJson(String),
    /// The answer was read and checked, and does not answer what was asked.
    #[error("LLM answer does not answer the question: {0}")]
    Unanswered(String),
    /// The batch's budget has no room for the call (or its reservation could not be made).
    #[error("the batch's LLM budget has no room for this call: {0}")]
    Budget(String),
    /// The message's time for LLM calls (`llm.message_time_share` of
    /// `broker.message_timeout_secs`) ran out before or during the call.
    #[error("the stage's LLM time for this message (llm.message_time_share of broker.message_timeout_secs) ran out")]
    OutOfTime,
}

impl LlmError {
    /// A bounded metric label.
    pub fn label(&self) -> &'static str {
        match self {
            LlmError::Config(_) => "config",
            LlmError::Request(_) => "request_error",
            LlmError::Timeout => "timeout",
            LlmError::Status { status: 429, .. } => "rate_limited",
            LlmError::Status { .. } => "http_error",
            LlmError::Malformed(_) => "malformed",
            LlmError::InvalidJson(_) => "invalid_json",
            LlmError::Unanswered(_) => "unanswered",
            LlmError::Budget(_) => "budget",
            LlmError::OutOfTime => "out_of_time",
        }
    }

    fn retryable(&self) -> bool {
        matches!(self, LlmError::Timeout | LlmError::Request(_))
            || matches!(self, LlmError::Status { status, .. } if *status == 429 || *status >= 500)
    }
}

/// The `llm.models` step a request's task belongs to.
pub(crate) fn step_of(task: &str) -> &'static str {
    match task {
        // Planning a follow-up round's searches is analysing the question again.
        "query_analysis" | "follow_up" => "analysis",
        "relevance" => "relevance",
        "select" => "selection",
        "clean" | "judge" => "clean",
        "analysis" | "analysis_news" => "analyse",
        "report" | "fields" => "report",
        _ => "",
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

/// One chat request. `task` names the step (`query_analysis`, `relevance` …): it labels metrics
/// and opens the system prompt, so logs and test doubles can tell the steps apart.
#[derive(Clone, Debug, Serialize)]
pub struct ChatRequest {
    pub task: &'static str,
    pub system: String,
    pub messages: Vec<(Role, String)>,
    pub max_tokens: u32,
    pub temperature: f32,
}

impl ChatRequest {
    pub fn new(task: &'static str, system: &str, user: String) -> Self {
        ChatRequest {
            task,
            system: format!("trawl task: {task}\n{system}"),
            messages: vec![(Role::User, user)],
            max_tokens: 1024,
            temperature: 0.0,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Every input token, those served from the prompt cache included.
    pub input_tokens: u64,
    /// Input tokens served from the prompt cache (billed at the cached price).
    #[serde(default)]
    pub cached_input_tokens: u64,
    /// Every output token, reasoning included.
    pub output_tokens: u64,
    /// Output tokens a reasoning model spent thinking.
    #[serde(default)]
    pub reasoning_tokens: u64,
    /// True when the endpoint reported no usage and the counts are estimated (4 characters a
    /// token), so costs built on them can be marked as estimates.
    #[serde(default)]
    pub estimated: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// The reply with `<think>` blocks removed.
    pub text: String,
    pub usage: Usage,
    pub cached: bool,
}

#[derive(Clone)]
pub struct Llm {
    inner: Arc<Inner>,
    /// Caches answers when set (see [`Llm::with_store`]).
    store: Option<Arc<dyn Store>>,
    /// The batch whose budget each call reserves from and is charged to ([`Llm::for_batch`]).
    batch: Option<Arc<str>>,
    /// What this handle has spent, so a stage can charge its job and batch.
    ledger: Arc<std::sync::Mutex<Spent>>,
}

/// Tokens and money spent through one [`Llm`] handle (answers from the cache cost nothing),
/// and the steps that fell back to their non-LLM path.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Spent {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_microdollars: u64,
    pub requests: u64,
    /// Requests whose usage the endpoint did not report (counts estimated).
    pub estimated_requests: u64,
    /// LLM calls that failed for good, by `step: reason` (`relevance: timeout`): each step
    /// then takes its non-LLM path.
    pub fallbacks: BTreeMap<String, u64>,
}

struct Inner {
    http: reqwest::Client,
    config: LlmConfig,
    main: Endpoint,
    /// Steps with a model of their own.
    steps: HashMap<&'static str, Endpoint>,
    embeddings: Option<Endpoint>,
}

/// How many refused parameters one request may learn before its 400 is final.
const MAX_LEARNT: usize = 4;

impl Llm {
    /// A client for `config`, reading keys from `env`. Every problem at once: a hosted
    /// provider without its key, a proxy that is not a URL.
    pub fn new(config: &LlmConfig, env: &BTreeMap<String, String>) -> Result<Llm, LlmError> {
        let mut problems = Vec::new();
        let mut check = |e: LlmEndpoint, what: &str| {
            let var = e.key_env();
            let endpoint = resolve(config, e, env);
            if endpoint.api_key.is_none() {
                if endpoint.hosted() {
                    problems.push(format!(
                        "{what} uses {} ({}), whose key is not set: export {}",
                        endpoint.model,
                        endpoint.provider.name(),
                        var.as_deref().unwrap_or("its key variable")
                    ));
                } else if let Some(var) = var {
                    // A server of the user's own may run without a key.
                    warn!(key = %var, model = %endpoint.model, "no LLM API key in the environment; sending requests without one");
                }
            }
            if endpoint.price.is_none() {
                warn!(
                    model = %endpoint.model,
                    "no price known for this model: its cost counts as 0, and batches with a budget are refused (set llm.prices)"
                );
            }
            endpoint
        };
        let main = check(config.endpoint(), "[llm]");
        let mut steps = HashMap::new();
        for step in trawl_config::LLM_STEPS {
            if config.models.contains_key(step) {
                steps.insert(
                    step,
                    check(config.step(step), &format!("llm.models.{step}")),
                );
            }
        }
        let embeddings = config
            .embeddings_endpoint()
            .map(|e| check(e, "llm.embeddings"));
        let builder = trawl_http::builder().timeout(Duration::from_secs(config.timeout_secs));
        let builder = proxy::apply(builder, &config.proxy, env);
        if let Err(e) = &builder {
            problems.push(format!("llm.proxy: {e}"));
        }
        let builder = match builder {
            Ok(builder) if problems.is_empty() => builder,
            _ => return Err(LlmError::Config(problems.join("; "))),
        };
        let http = builder
            .build()
            .map_err(|e| LlmError::Request(e.to_string()))?;
        for e in std::iter::once(&main).chain(steps.values()) {
            metrics::init(&e.model);
        }
        Ok(Llm {
            inner: Arc::new(Inner {
                http,
                config: config.clone(),
                main,
                steps,
                embeddings,
            }),
            store: None,
            batch: None,
            ledger: Default::default(),
        })
    }

    /// A handle for one piece of work: caches answers in `store` and keeps its own ledger of
    /// what it spends (cheap: shares the connection pool).
    pub fn with_store(&self, store: Arc<dyn Store>) -> Llm {
        Llm {
            inner: Arc::clone(&self.inner),
            store: Some(store),
            batch: None,
            ledger: Default::default(),
        }
    }

    /// A handle for one piece of a batch's work: as [`Llm::with_store`], and each call first
    /// reserves its estimated cost from the batch's budget in `store` (refused: the call fails
    /// with [`LlmError::Budget`] and its step falls back), then settles what it really cost.
    /// So the budget is a hard cap across the fleet, whatever the number of workers.
    pub fn for_batch(&self, store: Arc<dyn Store>, batch: &str) -> Llm {
        Llm {
            batch: Some(batch.into()),
            ..self.with_store(store)
        }
    }

    /// What this handle has spent so far.
    pub fn spent(&self) -> Spent {
        self.ledger.lock().expect("ledger lock").clone()
    }

    /// Records that `task`'s call failed for good with `error`, so its step falls back to its
    /// non-LLM path (see [`Llm::reject`]).
    fn fell_back<T>(&self, task: &str, result: Result<T, LlmError>) -> Result<T, LlmError> {
        result.map_err(|e| self.reject(task, e))
    }

    /// Records that `task`'s step falls back to its non-LLM path because of `error` (its call
    /// failed for good, or its answer could not be used: a report that cites nothing): in this
    /// handle's ledger (for the job's work products), the process's tally
    /// ([`process_fallbacks`]) and `trawl_llm_fallbacks_total{step, reason}`. Returns `error`.
    pub fn reject(&self, task: &str, error: LlmError) -> LlmError {
        let step = match step_of(task) {
            "" => task,
            step => step,
        };
        let key = format!("{step}: {}", error.label());
        *(self.ledger.lock().expect("ledger lock").fallbacks)
            .entry(key.clone())
            .or_default() += 1;
        *FALLBACKS
            .lock()
            .expect("fallbacks lock")
            .entry(key)
            .or_default() += 1;
        METRICS.fallback(step, error.label());
        error
    }

    /// The endpoint a request of `task` goes to.
    fn endpoint(&self, task: &str) -> &Endpoint {
        (self.inner.steps.get(step_of(task))).unwrap_or(&self.inner.main)
    }

    /// The model a request of `task` goes to.
    pub fn model_of(&self, task: &str) -> &str {
        &self.endpoint(task).model
    }

    /// One completion (from the cache when an identical request was answered before).
    pub async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        self.chat_checked(request, |_| Ok(())).await
    }

    /// A completion that `check` accepts: an answer it refuses is the step's fallback (as
    /// [`Llm::reject`] records it), and is not cached, so the next identical request asks the
    /// model again instead of replaying an answer that could not be used.
    pub async fn chat_checked(
        &self,
        request: &ChatRequest,
        check: impl FnOnce(&ChatResponse) -> Result<(), LlmError>,
    ) -> Result<ChatResponse, LlmError> {
        let result = match self.chat_as(request, wire::Answer::Text).await {
            Ok((response, key)) => match check(&response) {
                Ok(()) => {
                    self.store_cached(&key, &response).await;
                    Ok(response)
                }
                Err(e) => {
                    self.store_refused(&key, request, &response).await;
                    Err(e)
                }
            },
            Err(e) => Err(e),
        };
        self.fell_back(request.task, result)
    }

    /// One completion and its cache key, from the cache when an identical request was
    /// answered before; the caller caches the answer once it has accepted it.
    async fn chat_as(
        &self,
        request: &ChatRequest,
        answer: wire::Answer<'_>,
    ) -> Result<(ChatResponse, String), LlmError> {
        let cfg = &self.inner.config;
        let endpoint = self.endpoint(request.task);
        let key = format!(
            "{:016x}",
            fnv1a(
                &serde_json::to_vec(&(
                    endpoint.provider.name(),
                    &endpoint.model,
                    &endpoint.base_url,
                    request,
                    answer.key()
                ))
                .unwrap_or_default()
            )
        );
        if let Some(cached) = self.cached(&key).await {
            return Ok((cached, key));
        }
        // At temperature 0 the same request gets the same answer: one its step refused before
        // (a retried message asking again) is refused again without paying for it.
        if let Some(refused) = self.refused(&key, request).await {
            return Ok((refused, key));
        }
        let options = wire::Options {
            answer,
            reasoning_effort: &cfg.reasoning_effort,
            reasoning_tokens: cfg.reasoning_tokens,
        };
        let reserved = self.reserve(endpoint, request, &options).await?;
        let mut guard = Unsettled {
            llm: self,
            reserved,
            sending: AtomicBool::new(false),
        };
        // The model's answer, its retries and the fleet's pacing are all waits on the outside:
        // the worker's core is free for other messages meanwhile.
        let result =
            outside::waiting(self.attempts(endpoint, request, &options, &guard.sending)).await;
        let cost = result.as_ref().map_or(0, |(_, cost)| *cost);
        guard.reserved = 0;
        self.settle(reserved, cost).await;
        let (response, _) = result?;
        Ok((response, key))
    }

    /// Reserves the most `request` may cost ([`most_usage`] at the model's price) from the
    /// batch's budget. Nothing to reserve without a batch, a price or a store.
    async fn reserve(
        &self,
        endpoint: &Endpoint,
        request: &ChatRequest,
        options: &wire::Options<'_>,
    ) -> Result<u64, LlmError> {
        let (Some(store), Some(batch), Some(price)) = (&self.store, &self.batch, endpoint.price)
        else {
            return Ok(0);
        };
        let amount = prices::cost_micro(&price, &most_usage(endpoint, request, options)).max(1);
        match store.budget_reserve(batch, amount as i64).await {
            Ok(Some(reserved)) => Ok(reserved.max(0) as u64),
            Ok(None) => Err(LlmError::Budget(format!(
                "{} needs up to ${:.6}",
                request.task,
                amount as f64 / 1e6
            ))),
            // Without the store the cap cannot be kept: no call.
            Err(e) => Err(LlmError::Budget(format!("the store is unavailable: {e}"))),
        }
    }

    /// Waits until the fleet-wide limits of `endpoint`'s model (`llm.requests_per_minute`,
    /// `llm.tokens_per_minute`, `llm.limits`) leave room for `request`, its tokens counted as
    /// the most it may use. Every worker takes its turns from the same slots in the store (a
    /// generic cell rate algorithm per model and kind), so the fleet together keeps to the
    /// limit: over any stretch of time, at most that stretch's share plus one call's worth.
    /// Without a store (or with the store down) calls go unpaced, and a 429 slows only the
    /// handle that met it.
    async fn pace(&self, endpoint: &Endpoint, request: &ChatRequest, options: &wire::Options<'_>) {
        let Some(store) = &self.store else {
            return;
        };
        let limit = self.inner.config.limit_of(&endpoint.model);
        let minute = Duration::from_secs(60);
        // The requests slot is read even without a limit: a 429's hold ([`Llm::hold`]) is
        // kept there.
        let per_request = limit
            .requests_per_minute
            .map_or(Duration::ZERO, |rpm| minute / rpm.max(1));
        let mut turns = vec![("requests", per_request)];
        if let Some(tpm) = limit.tokens_per_minute {
            let most = most_usage(endpoint, request, options);
            let tokens = most.input_tokens + most.output_tokens;
            let share = tokens as f64 / tpm.max(1) as f64;
            turns.push(("tokens", minute.mul_f64(share)));
        }
        let mut waited = Duration::ZERO;
        for (kind, interval) in turns {
            let slot = rate_slot(&endpoint.model, kind);
            match rate_wait::take_turn(store.as_ref(), &slot, interval).await {
                Ok(slept) => waited += slept,
                Err(e) => {
                    warn!(error = %e, model = %endpoint.model, "the LLM rate limit could not be read from the store; calling unpaced");
                    break;
                }
            }
        }
        count_rate_wait(&endpoint.model, waited);
    }

    /// After a 429, holds every worker's calls to `model` for `delay`, not only this one's.
    async fn hold(&self, model: &str, delay: Duration) {
        if let Some(store) = &self.store {
            if let Err(e) = store.rate_hold(&rate_slot(model, "requests"), delay).await {
                warn!(error = %e, model, "a 429's Retry-After could not be shared through the store");
            }
        }
    }

    /// Ends a reservation with what the call cost (nothing if it failed). A reservation the
    /// store could not settle stays reserved: the cap errs on the safe side.
    async fn settle(&self, reserved: u64, cost: u64) {
        let (Some(store), Some(batch)) = (&self.store, &self.batch) else {
            return;
        };
        if reserved == 0 && cost == 0 {
            return;
        }
        if let Err(e) = store
            .budget_settle(batch, reserved as i64, cost as i64)
            .await
        {
            warn!(error = %e, batch = %batch, "LLM spend could not be settled in the store");
        }
    }

    /// Sends `request` until it is answered, its error is final, or its retries are spent;
    /// learns the parameters the model refuses on the way. The answer and what it cost.
    async fn attempts(
        &self,
        endpoint: &Endpoint,
        request: &ChatRequest,
        options: &wire::Options<'_>,
        sending: &AtomicBool,
    ) -> Result<(ChatResponse, u64), LlmError> {
        let cfg = &self.inner.config;
        let (mut attempt, mut learnt) = (0, 0);
        // Rate-limited answers so far, and the time waited after them.
        let (mut limited_turns, mut limited) = (0, Duration::ZERO);
        loop {
            self.pace(endpoint, request, options).await;
            let (url, body) = wire::chat_request(endpoint, request, options);
            let result = self
                .send_timed(endpoint, url, &body, request, sending)
                .await?;
            let model = endpoint.model.as_str();
            match result {
                Ok(response) => {
                    let cost = self.book(endpoint, &response.usage);
                    return Ok((response, cost));
                }
                Err(Failure {
                    error:
                        LlmError::Status {
                            status: 400,
                            message,
                        },
                    param,
                    ..
                }) if learnt < MAX_LEARNT
                    && wire::learn(endpoint, &body, param.as_deref(), &message) =>
                {
                    // The model refused a parameter: ask again without it.
                    learnt += 1;
                }
                // A 429 is the organisation's limit, not this request's fault: it spends no
                // attempt, and every worker waits, not only this one. Within a worker the
                // message timeout ends the wait first (and spends no attempt of the message).
                Err(f)
                    if matches!(f.error, LlmError::Status { status: 429, .. })
                        && limited < MAX_RATE_LIMITED_WAIT =>
                {
                    limited_turns += 1;
                    let wait = backoff(f.retry_after, limited_turns);
                    self.hold(model, wait).await;
                    warn!(task = request.task, wait_secs = wait.as_secs_f64(), error = %f.error, "LLM rate limit met; waiting without spending an attempt");
                    rate_wait::sleep(wait).await;
                    count_rate_wait(model, wait);
                    limited += wait;
                }
                Err(f) if f.error.retryable() && attempt < cfg.max_retries => {
                    attempt += 1;
                    let wait = backoff(f.retry_after, attempt);
                    warn!(task = request.task, attempt, error = %f.error, "LLM request failed; retrying");
                    tokio::time::sleep(wait).await;
                }
                Err(f) => return Err(f.error),
            }
        }
    }

    /// Sends `request` once, within the message's time for answers: a request that could not
    /// be answered in what is left is not sent, one still unanswered when it runs out is cut
    /// (both [`LlmError::OutOfTime`]), and the step takes its non-LLM path. Waits for a rate
    /// limit do not count, nor do 429s: a storm is waited out as any rate limit is.
    async fn send_timed(
        &self,
        endpoint: &Endpoint,
        url: String,
        body: &Value,
        request: &ChatRequest,
        sending: &AtomicBool,
    ) -> Result<Result<ChatResponse, Failure>, LlmError> {
        let left = outside::llm_time_left();
        if left.is_some_and(|l| l < MIN_CALL_TIME) {
            return Err(LlmError::OutOfTime);
        }
        let started = Instant::now();
        sending.store(true, Ordering::Relaxed);
        let sent = self.send(endpoint, url, body, request);
        let result = match left {
            Some(left) => tokio::time::timeout(left, sent).await.ok(),
            None => Some(sent.await),
        };
        sending.store(false, Ordering::Relaxed);
        let Some(result) = result else {
            outside::spend_llm(started.elapsed());
            return Err(LlmError::OutOfTime);
        };
        if !matches!(&result, Err(f) if matches!(f.error, LlmError::Status { status: 429, .. })) {
            outside::spend_llm(started.elapsed());
        }
        count_request(&endpoint.model, request.task, started, &result);
        Ok(result)
    }

    /// Adds an answered call's usage to the metrics and this handle's ledger; what it cost.
    fn book(&self, endpoint: &Endpoint, usage: &Usage) -> u64 {
        let cost = METRICS.record_usage(&endpoint.model, usage, endpoint.price);
        {
            let mut spent = self.ledger.lock().expect("ledger lock");
            spent.input_tokens += usage.input_tokens;
            spent.output_tokens += usage.output_tokens;
            spent.cost_microdollars += cost;
            spent.requests += 1;
            spent.estimated_requests += u64::from(usage.estimated);
        }
        OK_CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        cost
    }

    /// A completion parsed as `T` and checked by `validate`; one repair turn on failure. The
    /// endpoint is given `T`'s JSON Schema ([`schema_of`]) where it takes one, plain JSON mode
    /// where it does not, and neither when `llm.json_mode` is off.
    pub async fn json<T: DeserializeOwned + schemars::JsonSchema, E: std::fmt::Display>(
        &self,
        request: &ChatRequest,
        validate: impl Fn(&T) -> Result<(), E>,
    ) -> Result<(T, Usage), LlmError> {
        let result = self.json_turns(request, &schema_of::<T>(), validate).await;
        self.fell_back(request.task, result)
    }

    /// [`Llm::json`] for an answer whose schema is known only at run time (a job's fields):
    /// the JSON object is checked against nothing but `validate`.
    pub async fn json_value<E: std::fmt::Display>(
        &self,
        request: &ChatRequest,
        schema: &Value,
        validate: impl Fn(&Value) -> Result<(), E>,
    ) -> Result<(Value, Usage), LlmError> {
        let result = self.json_turns(request, schema, validate).await;
        self.fell_back(request.task, result)
    }

    async fn json_turns<T: DeserializeOwned, E: std::fmt::Display>(
        &self,
        request: &ChatRequest,
        schema: &Value,
        validate: impl Fn(&T) -> Result<(), E>,
    ) -> Result<(T, Usage), LlmError> {
        let answer = match self.inner.config.json_mode {
            true => wire::Answer::Schema(schema),
            false => wire::Answer::Text,
        };
        let mut request = request.clone();
        request.max_tokens = request.max_tokens.min(json::allowance(schema));
        let mut usage = Usage::default();
        for turn in 0..2 {
            let (response, key) = self.chat_as(&request, answer).await?;
            usage.add(&response.usage);
            let problem = match json::extract_json(&response.text).map(serde_json::from_str::<T>) {
                Some(Ok(value)) => match validate(&value) {
                    Ok(()) => {
                        // Only an answer that parsed and validated is cached.
                        self.store_cached(&key, &response).await;
                        return Ok((value, usage));
                    }
                    Err(why) => why.to_string(),
                },
                Some(Err(e)) => e.to_string(),
                None => "no JSON object found".to_owned(),
            };
            self.store_refused(&key, &request, &response).await;
            if turn == 1 {
                return Err(LlmError::InvalidJson(problem));
            }
            request.messages.push((Role::Assistant, response.text));
            request.messages.push((
                Role::User,
                format!("That answer was not valid JSON for this task ({problem}). Reply with the JSON object only."),
            ));
        }
        unreachable!("the loop returns on its second turn")
    }

    /// Embeddings of `texts` from the embeddings endpoint (`llm.embeddings`).
    pub async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, LlmError> {
        let result = outside::waiting(self.embed_once(texts)).await;
        self.fell_back("rerank", result)
    }

    async fn embed_once(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, LlmError> {
        #[derive(Deserialize)]
        struct Item {
            index: usize,
            embedding: Vec<f32>,
        }
        #[derive(Deserialize)]
        struct Response {
            data: Vec<Item>,
        }
        let Some(endpoint) = &self.inner.embeddings else {
            return Err(LlmError::Config(
                "no embeddings endpoint: set [llm.embeddings] or llm.embedding_model".into(),
            ));
        };
        let (url, body) = wire::embeddings_request(endpoint, texts);
        let request = wire::authorise(endpoint, self.inner.http.post(url));
        let response = request.json(&body).send().await.map_err(|e| classify(&e))?;
        let status = response.status().as_u16();
        let bytes = response.bytes().await.map_err(|e| classify(&e))?;
        if status != 200 {
            return Err(LlmError::Status {
                status,
                message: wire::error_of(&bytes).0,
            });
        }
        let mut parsed: Response =
            serde_json::from_slice(&bytes).map_err(|e| LlmError::Malformed(e.to_string()))?;
        parsed.data.sort_by_key(|i| i.index);
        Ok(parsed.data.into_iter().map(|i| i.embedding).collect())
    }

    async fn send(
        &self,
        endpoint: &Endpoint,
        url: String,
        body: &Value,
        request: &ChatRequest,
    ) -> Result<ChatResponse, Failure> {
        let failure = |error| Failure {
            error,
            retry_after: None,
            param: None,
        };
        let builder = wire::authorise(endpoint, self.inner.http.post(url));
        let response = (builder.json(body).send().await).map_err(|e| failure(classify(&e)))?;
        let (status, retry) = (response.status().as_u16(), retry_after(&response));
        let bytes = response.bytes().await.map_err(|e| failure(classify(&e)))?;
        if status != 200 {
            let (message, param) = wire::error_of(&bytes);
            return Err(Failure {
                error: LlmError::Status { status, message },
                retry_after: retry,
                param,
            });
        }
        let value: Value = serde_json::from_slice(&bytes)
            .map_err(|e| failure(LlmError::Malformed(e.to_string())))?;
        let (text, mut usage) = wire::chat_answer(endpoint.provider, &value)
            .map_err(|e| failure(LlmError::Malformed(e.to_string())))?;
        if usage.input_tokens == 0 && usage.output_tokens == 0 {
            let sent: usize =
                request.system.len() + request.messages.iter().map(|(_, t)| t.len()).sum::<usize>();
            usage = Usage {
                input_tokens: sent.div_ceil(4) as u64,
                output_tokens: text.len().div_ceil(4) as u64,
                estimated: true,
                ..Usage::default()
            };
        }
        Ok(ChatResponse {
            text: json::strip_think(&text),
            usage,
            cached: false,
        })
    }

    async fn cached(&self, key: &str) -> Option<ChatResponse> {
        let response = self.cache_read(key).await?;
        METRICS.cache_hits.inc();
        Some(response)
    }

    /// The answer to the request of `key` that its step refused, when the request is
    /// deterministic (temperature 0) and the refusal is remembered.
    async fn refused(&self, key: &str, request: &ChatRequest) -> Option<ChatResponse> {
        if request.temperature != 0.0 {
            return None;
        }
        self.cache_read(&refused_key(key)).await
    }

    async fn store_cached(&self, key: &str, response: &ChatResponse) {
        self.cache_write(key, response, Duration::MAX).await;
    }

    /// Remembers that the answer to the request of `key` was refused by its step, for
    /// [`REFUSED_TTL`] at most: long enough for a retried message, short enough for a model that
    /// answered garbage for a while to be asked again.
    async fn store_refused(&self, key: &str, request: &ChatRequest, response: &ChatResponse) {
        if request.temperature != 0.0 || response.cached {
            return;
        }
        self.cache_write(&refused_key(key), response, REFUSED_TTL)
            .await;
    }

    /// A response kept under `key`, marked as cached; none when answers are not cached.
    async fn cache_read(&self, key: &str) -> Option<ChatResponse> {
        let store = self
            .store
            .as_ref()
            .filter(|_| self.inner.config.cache_ttl_secs > 0)?;
        let bytes = store.cache_get(Cache::Llm, key).await.ok()??;
        let mut response: ChatResponse = serde_json::from_slice(&bytes).ok()?;
        response.cached = true;
        Some(response)
    }

    /// Keeps `response` under `key` for `llm.cache_ttl_secs`, or `most` if that is shorter.
    async fn cache_write(&self, key: &str, response: &ChatResponse, most: Duration) {
        let Some(store) = self
            .store
            .as_ref()
            .filter(|_| self.inner.config.cache_ttl_secs > 0)
        else {
            return;
        };
        if let Ok(bytes) = serde_json::to_vec(response) {
            let ttl = Duration::from_secs(self.inner.config.cache_ttl_secs).min(most);
            if let Err(e) = store.cache_put(Cache::Llm, key, &bytes, ttl).await {
                warn!(error = %e, "LLM cache unavailable");
            }
        }
    }
}

/// Where the refused answer to the request of `key` is kept, beside the accepted ones.
fn refused_key(key: &str) -> String {
    format!("{key}:refused")
}

/// How long a refused answer is remembered at most.
const REFUSED_TTL: Duration = Duration::from_secs(3600);

/// The least time left in a message worth starting an LLM call in: less, and its answer could
/// not arrive before the message must end.
const MIN_CALL_TIME: Duration = Duration::from_secs(2);

/// The JSON Schema of `T` as the LLM APIs take it: draft 7, every subschema inline (no
/// `$ref`), without `$schema` and `title`.
pub(crate) fn schema_of<T: schemars::JsonSchema>() -> Value {
    let settings = schemars::generate::SchemaSettings::draft07().with(|s| {
        s.inline_subschemas = true;
    });
    let mut schema = settings
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    if let Some(fields) = schema.as_object_mut() {
        fields.remove("$schema");
        fields.remove("title");
    }
    schema
}

impl Usage {
    fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.cached_input_tokens += other.cached_input_tokens;
        self.output_tokens += other.output_tokens;
        self.reasoning_tokens += other.reasoning_tokens;
        self.estimated |= other.estimated;
    }
}

/// A step that took its non-LLM path because its LLM call failed: the step's log line and its
/// work-product note come from this one value, as the metric and the job's tally come from
/// [`Llm::reject`], which recorded the error. Steps say it the same way everywhere:
/// "LLM judge failed, heuristic score used: timeout: …".
pub struct Fallback<'a> {
    /// What the LLM was asked to do (`judge`, `analysis`, `report` …): a metric label.
    pub step: &'static str,
    /// What was used instead.
    pub instead: &'static str,
    pub error: &'a LlmError,
}

impl Fallback<'_> {
    /// Logs the fallback and returns its note for the work product.
    pub fn emit(&self) -> String {
        let Fallback {
            step,
            instead,
            error,
        } = self;
        warn!(step, error = %error, "LLM {step} failed; {instead} used");
        format!("LLM {step} failed, {instead} used: {error}")
    }
}

/// Every fallback of this process, by `step: reason`.
static FALLBACKS: std::sync::Mutex<BTreeMap<String, u64>> = std::sync::Mutex::new(BTreeMap::new());

/// The LLM calls of this process that failed for good, by `step: reason`, and those that
/// succeeded: `trawl run` tells its user when the LLM never answered.
pub fn process_fallbacks() -> (u64, BTreeMap<String, u64>) {
    let ok = OK_CALLS.load(std::sync::atomic::Ordering::Relaxed);
    (ok, FALLBACKS.lock().expect("fallbacks lock").clone())
}

static OK_CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A request's latency and outcome, by model and task.
fn count_request(
    model: &str,
    task: &'static str,
    started: Instant,
    result: &Result<ChatResponse, Failure>,
) {
    METRICS
        .latency
        .get_or_create(&metrics::labels(&[("model", model)]))
        .observe(started.elapsed().as_secs_f64());
    let outcome = match result {
        Ok(_) => "ok",
        Err(f) => f.error.label(),
    };
    METRICS
        .requests
        .get_or_create(&metrics::labels(&[
            ("model", model),
            ("task", task),
            ("outcome", outcome),
        ]))
        .inc();
}

/// A failed request: the error, the wait the endpoint asked for, the parameter it refused.
struct Failure {
    error: LlmError,
    retry_after: Option<Duration>,
    param: Option<String>,
}

/// `e` as a resolved endpoint: its URL (or the provider's), its key from `env`, its price.
fn resolve(config: &LlmConfig, e: LlmEndpoint, env: &BTreeMap<String, String>) -> Endpoint {
    let provider = e.provider.unwrap_or(config.provider);
    let base_url = match e.base_url.trim() {
        "" => provider.default_base_url().unwrap_or_default().to_owned(),
        url => url.trim_end_matches('/').to_owned(),
    };
    let api_key = (e.key_env())
        .and_then(|var| env.get(&var).cloned())
        .filter(|k| !k.trim().is_empty());
    Endpoint {
        provider,
        base_url,
        price: prices::of(config, &e.model),
        model: e.model,
        api_key,
        api_version: config.api_version.clone(),
    }
}

fn classify(e: &reqwest::Error) -> LlmError {
    if e.is_timeout() {
        LlmError::Timeout
    } else {
        let mut text = e.to_string();
        let mut source = std::error::Error::source(e);
        while let Some(s) = source {
            text.push_str(": ");
            text.push_str(&s.to_string());
            source = s.source();
        }
        LlmError::Request(text)
    }
}

/// The most `request` may use, as providers count it against a limit and a budget: its input
/// at a token per three bytes (tokenizers average nearer four) and its whole output allowance.
fn most_usage(endpoint: &Endpoint, request: &ChatRequest, options: &wire::Options<'_>) -> Usage {
    let sent = request.system.len()
        + (request.messages.iter())
            .map(|(_, t)| t.len() + 16)
            .sum::<usize>()
        + options.answer.schema_len();
    Usage {
        input_tokens: sent.div_ceil(3) as u64,
        output_tokens: u64::from(wire::output_allowance(endpoint, request, options)),
        ..Usage::default()
    }
}

/// The store's rate slot for `model`'s `kind` of limit (`requests`, `tokens`).
fn rate_slot(model: &str, kind: &str) -> String {
    format!("llm:{kind}:{model}")
}

fn retry_after(response: &reqwest::Response) -> Option<Duration> {
    response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map(Duration::from_secs_f64)
}

/// A budget reservation whose call was dropped before it settled (its handler cut off at the
/// message timeout, most often while it waited for a rate limit). Every answer that was not a
/// success is free at the providers, so unless a request was on the wire, nothing was spent and
/// the reservation is given back; one that was on the wire stays reserved, erring on the safe
/// side.
struct Unsettled<'a> {
    llm: &'a Llm,
    reserved: u64,
    sending: AtomicBool,
}

impl Drop for Unsettled<'_> {
    fn drop(&mut self) {
        if self.reserved == 0 || self.sending.load(Ordering::Relaxed) {
            return;
        }
        let (Some(store), Some(batch), Ok(runtime)) = (
            self.llm.store.clone(),
            self.llm.batch.clone(),
            tokio::runtime::Handle::try_current(),
        ) else {
            return;
        };
        let reserved = self.reserved as i64;
        runtime.spawn(async move {
            if let Err(e) = store.budget_settle(&batch, reserved, 0).await {
                warn!(error = %e, batch = %batch, "an abandoned call's reservation could not be given back");
            }
        });
    }
}

/// The most a call waits through 429s before it fails: long past any message timeout, so only
/// a caller outside a worker meets it.
const MAX_RATE_LIMITED_WAIT: Duration = Duration::from_secs(600);

/// How long to wait before asking again: what the provider said (`Retry-After`), else an
/// exponential back-off from half a second by `turn`; never more than a minute.
fn backoff(retry_after: Option<Duration>, turn: u32) -> Duration {
    retry_after
        .unwrap_or(Duration::from_millis(500 * (1 << turn.min(6))))
        .min(Duration::from_secs(60))
}

/// Adds `waited` to the time calls to `model` spent waiting for its rate limit.
fn count_rate_wait(model: &str, waited: Duration) {
    if !waited.is_zero() {
        METRICS
            .rate_wait
            .get_or_create(&metrics::labels(&[("model", model)]))
            .inc_by(waited.as_secs_f64());
    }
}

/// FNV-1a: a stable hash for cache keys (unlike `DefaultHasher`, the same across builds).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
