//! `[llm]`: the optional LLM: its providers, the endpoint of each step and of embeddings,
//! prices, and the fleet-wide rate limits of each model.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

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

    /// Problems with this section, for [`crate::Config::validate`].
    pub(crate) fn problems(&self, problems: &mut Vec<String>) {
        if !(self.message_time_share > 0.0 && self.message_time_share <= 1.0) {
            problems.push(format!(
                "llm.message_time_share: must be above 0 and at most 1, not {}",
                self.message_time_share
            ));
        }
        self.limit_problems(problems);
        self.endpoint_problems(problems);
        self.price_problems(problems);
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

    /// A limit of 0 would hold every call forever: no limit is written by leaving it out.
    fn limit_problems(&self, problems: &mut Vec<String>) {
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
    }

    /// Every step named is one trawl has, and every endpoint in use can be reached and asked.
    fn endpoint_problems(&self, problems: &mut Vec<String>) {
        for step in self.models.keys() {
            if !LLM_STEPS.contains(&step.as_str()) {
                problems.push(format!(
                    "llm.models.{step}: not a step (the steps are {})",
                    LLM_STEPS.join(", ")
                ));
            }
        }
        // A missing base_url is said once per provider, however many steps use it.
        let mut seen = BTreeSet::new();
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
    }

    /// Prices feed the cost of every job and its budget: a negative or non-finite one would
    /// make both meaningless.
    fn price_problems(&self, problems: &mut Vec<String>) {
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
    }
}
