//! The LLM client every stage shares: OpenAI-compatible chat completions (OpenAI, Ollama,
//! vLLM, llama.cpp server) and Anthropic's Messages API, plus OpenAI-compatible embeddings.
//!
//! - [`Llm::chat`]: one completion, with a timeout, retries with back-off on 429 and 5xx
//!   (honouring `Retry-After`), token usage and cost recorded, and answers cached in the store by
//!   a hash of the request.
//! - [`Llm::json`]: a completion that must be a JSON value passing the caller's validation:
//!   JSON mode where the endpoint supports it (an endpoint that rejects `response_format` is
//!   asked again without it, and remembered), robust extraction where it does not ([`json`]),
//!   and one repair turn that shows the model its error before giving up.
//! - [`Llm::embed`]: embeddings for semantic rerank.
//!
//! The API key is read once from the environment variable the config names, sent only in
//! request headers, and never appears in errors, logs or metrics.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tracing::warn;
use trawl_config::LlmConfig;
use trawl_store::{Cache, Store};

pub mod json;
mod metrics;

use metrics::METRICS;

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
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
}

impl LlmError {
    /// A bounded metric label.
    pub fn label(&self) -> &'static str {
        match self {
            LlmError::Request(_) => "request_error",
            LlmError::Timeout => "timeout",
            LlmError::Status { status: 429, .. } => "rate_limited",
            LlmError::Status { .. } => "http_error",
            LlmError::Malformed(_) => "malformed",
            LlmError::InvalidJson(_) => "invalid_json",
        }
    }

    fn retryable(&self) -> bool {
        matches!(self, LlmError::Timeout | LlmError::Request(_))
            || matches!(self, LlmError::Status { status, .. } if *status == 429 || *status >= 500)
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
    pub input_tokens: u64,
    pub output_tokens: u64,
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
    /// What this handle has spent, so a stage can charge its job and batch.
    ledger: Arc<std::sync::Mutex<Spent>>,
}

/// Tokens and money spent through one [`Llm`] handle (answers from the cache cost nothing).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Spent {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_microdollars: u64,
    pub requests: u64,
    /// Requests whose usage the endpoint did not report (counts estimated).
    pub estimated_requests: u64,
}

struct Inner {
    http: reqwest::Client,
    config: LlmConfig,
    base_url: String,
    api_key: Option<String>,
    /// Cleared when the endpoint rejects `response_format`.
    json_mode: AtomicBool,
}

impl Llm {
    /// A client for `config`, reading the key from `env`.
    pub fn new(config: &LlmConfig, env: &BTreeMap<String, String>) -> Result<Llm, LlmError> {
        let anthropic = config.provider == "anthropic";
        let base_url = match (config.base_url.trim(), anthropic) {
            ("", true) => "https://api.anthropic.com".to_owned(),
            ("", false) => "https://api.openai.com/v1".to_owned(),
            (url, _) => url.trim_end_matches('/').to_owned(),
        };
        let key_var = match (config.api_key_env.trim(), anthropic) {
            ("", true) => "ANTHROPIC_API_KEY",
            ("", false) => "OPENAI_API_KEY",
            (var, _) => var,
        };
        let api_key = env.get(key_var).filter(|k| !k.trim().is_empty()).cloned();
        if api_key.is_none() {
            // Local servers (Ollama, llama.cpp) run without a key; a hosted one will answer 401.
            warn!(
                key = key_var,
                "no LLM API key in the environment; sending requests without one"
            );
        }
        metrics::init(&config.model);
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(config.timeout_secs))
            .no_proxy()
            .build()
            .map_err(|e| LlmError::Request(e.to_string()))?;
        Ok(Llm {
            inner: Arc::new(Inner {
                http,
                base_url,
                api_key,
                json_mode: AtomicBool::new(config.json_mode),
                config: config.clone(),
            }),
            store: None,
            ledger: Default::default(),
        })
    }

    /// A handle for one piece of work: caches answers in `store` and keeps its own ledger of
    /// what it spends (cheap: shares the connection pool).
    pub fn with_store(&self, store: Arc<dyn Store>) -> Llm {
        Llm {
            inner: Arc::clone(&self.inner),
            store: Some(store),
            ledger: Default::default(),
        }
    }

    /// What this handle has spent so far.
    pub fn spent(&self) -> Spent {
        *self.ledger.lock().expect("ledger lock")
    }

    pub fn model(&self) -> &str {
        &self.inner.config.model
    }

    /// One completion (from the cache when an identical request was answered before).
    pub async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        self.chat_mode(request, false).await
    }

    async fn chat_mode(
        &self,
        request: &ChatRequest,
        json_mode: bool,
    ) -> Result<ChatResponse, LlmError> {
        let cfg = &self.inner.config;
        let key = format!(
            "{:016x}",
            fnv1a(
                &serde_json::to_vec(&(
                    &cfg.provider,
                    &cfg.model,
                    &self.inner.base_url,
                    request,
                    json_mode
                ))
                .unwrap_or_default()
            )
        );
        if let Some(cached) = self.cached(&key).await {
            return Ok(cached);
        }
        let mut attempt = 0;
        loop {
            let started = Instant::now();
            let result = self.send(request, json_mode).await;
            let model = cfg.model.as_str();
            METRICS
                .latency
                .get_or_create(&metrics::labels(&[("model", model)]))
                .observe(started.elapsed().as_secs_f64());
            let outcome = match &result {
                Ok(_) => "ok",
                Err((e, _)) => e.label(),
            };
            METRICS
                .requests
                .get_or_create(&metrics::labels(&[
                    ("model", model),
                    ("task", request.task),
                    ("outcome", outcome),
                ]))
                .inc();
            match result {
                Ok(response) => {
                    let cost = METRICS.record_usage(
                        model,
                        &response.usage,
                        cfg.input_price_per_mtok,
                        cfg.output_price_per_mtok,
                    );
                    {
                        let mut spent = self.ledger.lock().expect("ledger lock");
                        spent.input_tokens += response.usage.input_tokens;
                        spent.output_tokens += response.usage.output_tokens;
                        spent.cost_microdollars += cost;
                        spent.requests += 1;
                        spent.estimated_requests += u64::from(response.usage.estimated);
                    }
                    self.store_cached(&key, &response).await;
                    return Ok(response);
                }
                Err((e, retry_after)) if e.retryable() && attempt < cfg.max_retries => {
                    attempt += 1;
                    let backoff =
                        retry_after.unwrap_or(Duration::from_millis(500 * (1 << attempt.min(6))));
                    warn!(task = request.task, attempt, error = %e, "LLM request failed; retrying");
                    tokio::time::sleep(backoff.min(Duration::from_secs(60))).await;
                }
                Err((e, _)) => return Err(e),
            }
        }
    }

    /// A completion parsed as `T` and checked by `validate`; one repair turn on failure.
    pub async fn json<T: DeserializeOwned>(
        &self,
        request: &ChatRequest,
        validate: impl Fn(&T) -> Result<(), String>,
    ) -> Result<(T, Usage), LlmError> {
        let mut request = request.clone();
        let mut usage = Usage::default();
        for turn in 0..2 {
            let json_mode = self.inner.json_mode.load(Ordering::Relaxed);
            let response = match self.chat_mode(&request, json_mode).await {
                Err(LlmError::Status {
                    status: 400,
                    message,
                }) if json_mode && message.contains("response_format") => {
                    // The endpoint does not do JSON mode: ask again without it, and remember.
                    self.inner.json_mode.store(false, Ordering::Relaxed);
                    self.chat_mode(&request, false).await?
                }
                other => other?,
            };
            usage.input_tokens += response.usage.input_tokens;
            usage.output_tokens += response.usage.output_tokens;
            usage.estimated |= response.usage.estimated;
            let problem = match json::extract_json(&response.text).map(serde_json::from_str::<T>) {
                Some(Ok(value)) => match validate(&value) {
                    Ok(()) => return Ok((value, usage)),
                    Err(why) => why,
                },
                Some(Err(e)) => e.to_string(),
                None => "no JSON object found".to_owned(),
            };
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

    /// Embeddings of `texts` from the configured embedding model.
    pub async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, LlmError> {
        #[derive(Deserialize)]
        struct Item {
            index: usize,
            embedding: Vec<f32>,
        }
        #[derive(Deserialize)]
        struct Response {
            data: Vec<Item>,
        }
        let body = json!({"model": self.inner.config.embedding_model, "input": texts});
        let request = self.authorised(
            self.inner
                .http
                .post(format!("{}/embeddings", self.inner.base_url)),
            false,
        );
        let response = request.json(&body).send().await.map_err(|e| classify(&e))?;
        let (status, retry) = (response.status().as_u16(), retry_after(&response));
        let bytes = response.bytes().await.map_err(|e| classify(&e))?;
        if status != 200 {
            let _ = retry;
            return Err(LlmError::Status {
                status,
                message: error_message(&bytes),
            });
        }
        let mut parsed: Response =
            serde_json::from_slice(&bytes).map_err(|e| LlmError::Malformed(e.to_string()))?;
        parsed.data.sort_by_key(|i| i.index);
        Ok(parsed.data.into_iter().map(|i| i.embedding).collect())
    }

    fn authorised(
        &self,
        builder: reqwest::RequestBuilder,
        anthropic: bool,
    ) -> reqwest::RequestBuilder {
        match (&self.inner.api_key, anthropic) {
            (Some(key), true) => builder.header("x-api-key", key),
            (Some(key), false) => builder.bearer_auth(key),
            (None, _) => builder,
        }
    }

    async fn send(
        &self,
        request: &ChatRequest,
        json_mode: bool,
    ) -> Result<ChatResponse, (LlmError, Option<Duration>)> {
        let cfg = &self.inner.config;
        let anthropic = cfg.provider == "anthropic";
        let turns: Vec<Value> = request
            .messages
            .iter()
            .map(|(role, text)| json!({"role": role, "content": text}))
            .collect();
        let (url, body) = if anthropic {
            let body = json!({"model": cfg.model, "max_tokens": request.max_tokens, "temperature": request.temperature, "system": request.system, "messages": turns});
            (format!("{}/v1/messages", self.inner.base_url), body)
        } else {
            let mut messages = vec![json!({"role": "system", "content": request.system})];
            messages.extend(turns);
            let mut body = json!({"model": cfg.model, "max_tokens": request.max_tokens, "temperature": request.temperature, "messages": messages});
            if json_mode {
                body["response_format"] = json!({"type": "json_object"});
            }
            (format!("{}/chat/completions", self.inner.base_url), body)
        };
        let mut builder = self.authorised(self.inner.http.post(url), anthropic);
        if anthropic {
            builder = builder.header("anthropic-version", "2023-06-01");
        }
        let response = builder
            .json(&body)
            .send()
            .await
            .map_err(|e| (classify(&e), None))?;
        let (status, retry) = (response.status().as_u16(), retry_after(&response));
        let bytes = response.bytes().await.map_err(|e| (classify(&e), None))?;
        if status != 200 {
            return Err((
                LlmError::Status {
                    status,
                    message: error_message(&bytes),
                },
                retry,
            ));
        }
        let value: Value = serde_json::from_slice(&bytes)
            .map_err(|e| (LlmError::Malformed(e.to_string()), None))?;
        let (text, usage) = if anthropic {
            let text = value["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c["text"].as_str())
                .collect::<Vec<_>>()
                .join("");
            let usage = Usage {
                input_tokens: value["usage"]["input_tokens"].as_u64().unwrap_or(0),
                output_tokens: value["usage"]["output_tokens"].as_u64().unwrap_or(0),
                estimated: false,
            };
            (text, usage)
        } else {
            let text = value["choices"][0]["message"]["content"]
                .as_str()
                .map(str::to_owned);
            let Some(text) = text else {
                return Err((
                    LlmError::Malformed("no choices[0].message.content".into()),
                    None,
                ));
            };
            let usage = Usage {
                input_tokens: value["usage"]["prompt_tokens"].as_u64().unwrap_or(0),
                output_tokens: value["usage"]["completion_tokens"].as_u64().unwrap_or(0),
                estimated: false,
            };
            (text, usage)
        };
        let mut usage = usage;
        if usage.input_tokens == 0 && usage.output_tokens == 0 {
            let sent: usize =
                request.system.len() + request.messages.iter().map(|(_, t)| t.len()).sum::<usize>();
            usage = Usage {
                input_tokens: sent.div_ceil(4) as u64,
                output_tokens: text.len().div_ceil(4) as u64,
                estimated: true,
            };
        }
        Ok(ChatResponse {
            text: json::strip_think(&text),
            usage,
            cached: false,
        })
    }

    async fn cached(&self, key: &str) -> Option<ChatResponse> {
        let store = self
            .store
            .as_ref()
            .filter(|_| self.inner.config.cache_ttl_secs > 0)?;
        let bytes = store.cache_get(Cache::Llm, key).await.ok()??;
        let mut response: ChatResponse = serde_json::from_slice(&bytes).ok()?;
        response.cached = true;
        METRICS.cache_hits.inc();
        Some(response)
    }

    async fn store_cached(&self, key: &str, response: &ChatResponse) {
        let Some(store) = self
            .store
            .as_ref()
            .filter(|_| self.inner.config.cache_ttl_secs > 0)
        else {
            return;
        };
        if let Ok(bytes) = serde_json::to_vec(response) {
            let ttl = Duration::from_secs(self.inner.config.cache_ttl_secs);
            if let Err(e) = store.cache_put(Cache::Llm, key, &bytes, ttl).await {
                warn!(error = %e, "LLM cache unavailable");
            }
        }
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

fn retry_after(response: &reqwest::Response) -> Option<Duration> {
    response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map(Duration::from_secs_f64)
}

/// The provider's error message (`error.message` in both APIs), or the body's start.
fn error_message(bytes: &[u8]) -> String {
    serde_json::from_slice::<Value>(bytes)
        .ok()
        .and_then(|v| v["error"]["message"].as_str().map(str::to_owned))
        .unwrap_or_else(|| String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).into_owned())
}

/// FNV-1a: a stable hash for cache keys (unlike `DefaultHasher`, the same across builds).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
