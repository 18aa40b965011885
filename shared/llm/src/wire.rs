//! Each provider's wire format: where a chat request goes, its headers and body, and how the
//! answer and its usage read back; and what a model has refused, remembered per model.
//!
//! OpenAI, Azure OpenAI, Gemini, OpenRouter and self-run servers speak chat completions;
//! Anthropic speaks its Messages API. Parameters follow the model's family: OpenAI's reasoning
//! models (the o-series, gpt-5) take `max_completion_tokens` and no `temperature`, with
//! `reasoning_effort` when configured; OpenAI's own API and Azure take `max_completion_tokens`
//! from every model; other servers take `max_tokens`. A model that still refuses a parameter
//! (a 400 that names it) is asked again without it, and the change is remembered for the
//! process's life and logged once ([`Quirks`]).

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use serde_json::{json, Value};
use trawl_config::LlmProvider;

use crate::{ChatRequest, Usage};

/// One model behind one endpoint, resolved from config.
#[derive(Clone, Debug)]
pub struct Endpoint {
    pub provider: LlmProvider,
    /// Without a trailing slash.
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    /// Azure's `api-version`.
    pub api_version: String,
    pub price: Option<trawl_config::ModelPrice>,
}

impl Endpoint {
    /// Whether this is a provider's public API (a missing key is a mistake there), rather than
    /// a server of the user's own.
    pub fn hosted(&self) -> bool {
        match self.provider {
            LlmProvider::Azure => true,
            LlmProvider::OpenaiCompatible => false,
            p => p.default_base_url().is_some_and(|url| url == self.base_url),
        }
    }

    /// Process-wide name of the model, for [`Quirks`] and logs.
    fn key(&self) -> String {
        format!("{} {} {}", self.provider.name(), self.base_url, self.model)
    }
}

/// Whether `model` is one of OpenAI's reasoning models, which refuse `temperature` and
/// `max_tokens` (also through Azure and OpenRouter, `openai/o3`).
pub fn reasoning_model(model: &str) -> bool {
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    let o_series = ["o1", "o3", "o4"].iter().any(|p| {
        name.strip_prefix(p)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('-'))
    });
    o_series || (name.starts_with("gpt-5") && !name.contains("-chat"))
}

/// What a model has refused, learnt from its 400s.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Quirks {
    pub no_temperature: bool,
    /// `Some(true)`: `max_completion_tokens`; `Some(false)`: `max_tokens`; `None`: the default.
    pub completion_tokens: Option<bool>,
    pub no_reasoning_effort: bool,
    /// `response_format` of type `json_schema` refused: `json_object` instead.
    pub no_schema: bool,
    pub no_response_format: bool,
    /// Anthropic tool use refused: the JSON comes as text.
    pub no_tools: bool,
}

fn quirks() -> &'static Mutex<HashMap<String, Quirks>> {
    static QUIRKS: OnceLock<Mutex<HashMap<String, Quirks>>> = OnceLock::new();
    QUIRKS.get_or_init(Default::default)
}

pub(crate) fn quirks_of(endpoint: &Endpoint) -> Quirks {
    (quirks().lock().expect("quirks lock").get(&endpoint.key()))
        .copied()
        .unwrap_or_default()
}

/// The parameters a chat body may carry that a model can refuse.
const REFUSABLE: [&str; 7] = [
    "max_tokens",
    "max_completion_tokens",
    "temperature",
    "reasoning_effort",
    "response_format",
    "tool_choice",
    "tools",
];

/// Learns from a 400 that names a parameter the request sent: remembers the change for the
/// model and returns true (the request is worth sending again), logging once per change.
pub fn learn(endpoint: &Endpoint, body: &Value, param: Option<&str>, message: &str) -> bool {
    let sent: Vec<&str> = REFUSABLE
        .into_iter()
        .filter(|p| body.get(p).is_some())
        .collect();
    // The error's own `param` (OpenAI, Azure), else the parameter the message names first
    // ("'max_tokens' is not supported … use 'max_completion_tokens'"); only one this request
    // sent, so a refusal already acted on is not acted on again.
    let named = match param {
        Some(p) => REFUSABLE.into_iter().find(|r| *r == p),
        None => (REFUSABLE.into_iter())
            .filter_map(|p| message.find(p).map(|at| (at, p)))
            .min()
            .map(|(_, p)| p),
    };
    let Some(refused) = named.filter(|p| sent.contains(p)) else {
        return false;
    };
    let mut map = quirks().lock().expect("quirks lock");
    let entry = map.entry(endpoint.key()).or_default();
    let before = *entry;
    match refused {
        "max_tokens" => entry.completion_tokens = Some(true),
        "max_completion_tokens" => entry.completion_tokens = Some(false),
        "temperature" => entry.no_temperature = true,
        "reasoning_effort" => entry.no_reasoning_effort = true,
        "tools" | "tool_choice" => entry.no_tools = true,
        // A schema refused falls back to plain JSON mode, and that to none.
        _ if body["response_format"]["type"] == "json_schema" => entry.no_schema = true,
        _ => entry.no_response_format = true,
    }
    let changed = *entry != before;
    if changed {
        tracing::warn!(
            provider = endpoint.provider.name(),
            model = %endpoint.model,
            parameter = refused,
            "the model refuses this parameter; sending without it from now on"
        );
    }
    changed
}

/// The shape of answer a request asks for.
#[derive(Clone, Copy, Debug)]
pub enum Answer<'a> {
    Text,
    /// Any JSON object (`response_format: json_object`).
    Json,
    /// JSON that fits this schema: OpenAI's `json_schema` response format (Azure, Gemini,
    /// OpenRouter and most servers of one's own take it too), Anthropic's forced tool use.
    Schema(&'a Value),
}

impl Answer<'_> {
    /// What distinguishes the answer asked for, for the answer cache's key.
    pub fn key(&self) -> (&'static str, Option<&Value>) {
        match self {
            Answer::Text => ("text", None),
            Answer::Json => ("json", None),
            Answer::Schema(schema) => ("schema", Some(schema)),
        }
    }

    /// Bytes the answer's schema adds to a request (it is sent, and billed, as input).
    pub(crate) fn schema_len(&self) -> usize {
        match self {
            Answer::Schema(schema) => schema.to_string().len(),
            _ => 0,
        }
    }
}

/// What a chat request asks for beyond the conversation.
pub struct Options<'a> {
    pub answer: Answer<'a>,
    pub reasoning_effort: &'a str,
    pub reasoning_tokens: u32,
}

/// The most output tokens a request may take: its `max_tokens`, and a reasoning model's
/// thinking room on top (which counts against its completion tokens).
pub(crate) fn output_allowance(
    endpoint: &Endpoint,
    request: &ChatRequest,
    options: &Options,
) -> u32 {
    match endpoint.provider != LlmProvider::Anthropic && reasoning_model(&endpoint.model) {
        true => request.max_tokens.saturating_add(options.reasoning_tokens),
        false => request.max_tokens,
    }
}

/// The request's URL and body, and whether the key goes in Azure's `api-key` header.
pub(crate) fn chat_request(
    endpoint: &Endpoint,
    request: &ChatRequest,
    options: &Options,
) -> (String, Value) {
    let turns: Vec<Value> = (request.messages.iter())
        .map(|(role, text)| json!({"role": role, "content": text}))
        .collect();
    let quirks = quirks_of(endpoint);
    if endpoint.provider == LlmProvider::Anthropic {
        let mut body = json!({
            "model": endpoint.model,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "system": request.system,
            "messages": turns,
        });
        if let (Answer::Schema(schema), false) = (options.answer, quirks.no_tools) {
            // Structured output on Anthropic: one tool whose input is the answer, forced.
            body["tools"] = json!([{
                "name": request.task,
                "description": "Give the answer to the task as this tool's input.",
                "input_schema": schema,
            }]);
            body["tool_choice"] = json!({"type": "tool", "name": request.task});
        }
        return (format!("{}/v1/messages", endpoint.base_url), body);
    }
    let reasoning = reasoning_model(&endpoint.model);
    let mut messages = vec![json!({"role": "system", "content": request.system})];
    messages.extend(turns);
    let mut body = json!({"model": endpoint.model, "messages": messages});
    let completion_tokens = quirks.completion_tokens.unwrap_or(
        reasoning
            || matches!(endpoint.provider, LlmProvider::Azure)
            || endpoint.hosted() && endpoint.provider == LlmProvider::Openai,
    );
    let allowance = output_allowance(endpoint, request, options);
    let field = if completion_tokens {
        "max_completion_tokens"
    } else {
        "max_tokens"
    };
    body[field] = json!(allowance);
    if !reasoning && !quirks.no_temperature {
        body["temperature"] = json!(request.temperature);
    }
    if reasoning && !options.reasoning_effort.is_empty() && !quirks.no_reasoning_effort {
        body["reasoning_effort"] = json!(options.reasoning_effort);
    }
    match options.answer {
        Answer::Schema(schema) if !quirks.no_schema && !quirks.no_response_format => {
            body["response_format"] = json!({"type": "json_schema", "json_schema": {
                "name": request.task, "schema": schema, "strict": false,
            }});
        }
        Answer::Schema(_) | Answer::Json if !quirks.no_response_format => {
            body["response_format"] = json!({"type": "json_object"});
        }
        _ => {}
    }
    let url = match endpoint.provider {
        LlmProvider::Azure => format!(
            "{}/openai/deployments/{}/chat/completions?api-version={}",
            endpoint.base_url, endpoint.model, endpoint.api_version
        ),
        _ => format!("{}/chat/completions", endpoint.base_url),
    };
    (url, body)
}

/// The embeddings request's URL and body (OpenAI's format, Azure's URL).
pub(crate) fn embeddings_request(endpoint: &Endpoint, texts: &[String]) -> (String, Value) {
    let body = json!({"model": endpoint.model, "input": texts});
    let url = match endpoint.provider {
        LlmProvider::Azure => format!(
            "{}/openai/deployments/{}/embeddings?api-version={}",
            endpoint.base_url, endpoint.model, endpoint.api_version
        ),
        _ => format!("{}/embeddings", endpoint.base_url),
    };
    (url, body)
}

/// The headers that carry the key and the API version.
pub(crate) fn authorise(
    endpoint: &Endpoint,
    builder: reqwest::RequestBuilder,
) -> reqwest::RequestBuilder {
    let builder = match endpoint.provider {
        LlmProvider::Anthropic => builder.header("anthropic-version", "2023-06-01"),
        _ => builder,
    };
    match (&endpoint.api_key, endpoint.provider) {
        (Some(key), LlmProvider::Anthropic) => builder.header("x-api-key", key),
        (Some(key), LlmProvider::Azure) => builder.header("api-key", key),
        (Some(key), _) => builder.bearer_auth(key),
        (None, _) => builder,
    }
}

/// What a chat reply lacks where its answer should be.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum NoAnswer {
    /// A reasoning model spent its allowance thinking.
    #[error(
        "the model used its whole token allowance before answering (raise llm.reasoning_tokens)"
    )]
    AllowanceSpent,
    #[error("no choices[0].message.content")]
    NoContent,
}

/// The reply's text and usage, or what is missing.
pub(crate) fn chat_answer(
    provider: LlmProvider,
    value: &Value,
) -> Result<(String, Usage), NoAnswer> {
    let n = |v: &Value| v.as_u64().unwrap_or(0);
    if provider == LlmProvider::Anthropic {
        let blocks = || value["content"].as_array().into_iter().flatten();
        let mut text = blocks()
            .filter_map(|c| c["text"].as_str())
            .collect::<Vec<_>>()
            .join("");
        // A forced tool's input is the structured answer.
        if let Some(input) = blocks()
            .find(|c| c["type"] == "tool_use")
            .map(|c| &c["input"])
        {
            text = input.to_string();
        }
        let u = &value["usage"];
        // Anthropic counts cache reads and writes apart from `input_tokens`.
        let cached = n(&u["cache_read_input_tokens"]);
        let usage = Usage {
            input_tokens: n(&u["input_tokens"]) + cached + n(&u["cache_creation_input_tokens"]),
            cached_input_tokens: cached,
            output_tokens: n(&u["output_tokens"]),
            reasoning_tokens: 0,
            estimated: false,
        };
        return Ok((text, usage));
    }
    let message = &value["choices"][0]["message"];
    let text = match &message["content"] {
        Value::String(s) => s.clone(),
        // A reasoning model that spent its allowance thinking answers `null`.
        Value::Null if value["choices"][0]["finish_reason"] == "length" => {
            return Err(NoAnswer::AllowanceSpent)
        }
        _ => return Err(NoAnswer::NoContent),
    };
    let u = &value["usage"];
    let usage = Usage {
        input_tokens: n(&u["prompt_tokens"]),
        cached_input_tokens: n(&u["prompt_tokens_details"]["cached_tokens"]),
        output_tokens: n(&u["completion_tokens"]),
        reasoning_tokens: n(&u["completion_tokens_details"]["reasoning_tokens"]),
        estimated: false,
    };
    Ok((text, usage))
}

/// The provider's error message and the parameter it names, if any: `error.message` and
/// `error.param` (OpenAI, Azure, Anthropic, OpenRouter), or Gemini's list of errors.
pub(crate) fn error_of(bytes: &[u8]) -> (String, Option<String>) {
    let value: Value = serde_json::from_slice(bytes).unwrap_or(Value::Null);
    let error = match &value {
        Value::Array(list) => list.first().map(|e| &e["error"]).unwrap_or(&Value::Null),
        v => &v["error"],
    };
    let message = error["message"]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).into_owned());
    (message, error["param"].as_str().map(str::to_owned))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(provider: LlmProvider, base_url: &str, model: &str) -> Endpoint {
        Endpoint {
            provider,
            base_url: base_url.into(),
            model: model.into(),
            api_key: Some("k".into()),
            api_version: "2024-10-21".into(),
            price: None,
        }
    }

    fn options() -> Options<'static> {
        Options {
            answer: Answer::Json,
            reasoning_effort: "low",
            reasoning_tokens: 1000,
        }
    }

    #[test]
    fn reasoning_models_are_known_by_name() {
        for m in [
            "o1",
            "o3-mini",
            "o4-mini-2025-04-16",
            "gpt-5",
            "gpt-5-mini",
            "openai/o3",
        ] {
            assert!(reasoning_model(m), "{m}");
        }
        for m in [
            "gpt-4o-mini",
            "gpt-5-chat-latest",
            "o1x",
            "llama3.1:8b",
            "claude-sonnet-4",
        ] {
            assert!(!reasoning_model(m), "{m}");
        }
    }

    #[test]
    fn each_family_gets_its_parameters() {
        let request = ChatRequest::new("relevance", "s", "u".into());
        let openai = endpoint(
            LlmProvider::Openai,
            "https://api.openai.com/v1",
            "gpt-5-mini",
        );
        let (url, body) = chat_request(&openai, &request, &options());
        assert_eq!(url, "https://api.openai.com/v1/chat/completions");
        assert_eq!(body["max_completion_tokens"], 1024 + 1000);
        assert!(body.get("temperature").is_none() && body.get("max_tokens").is_none());
        assert_eq!(body["reasoning_effort"], "low");

        let classic = endpoint(
            LlmProvider::Openai,
            "https://api.openai.com/v1",
            "gpt-4o-mini",
        );
        let (_, body) = chat_request(&classic, &request, &options());
        assert_eq!(body["max_completion_tokens"], 1024);
        assert_eq!(body["temperature"], 0.0);
        assert!(body.get("reasoning_effort").is_none());

        let ollama = endpoint(
            LlmProvider::OpenaiCompatible,
            "http://127.0.0.1:11434/v1",
            "llama3.1:8b",
        );
        let (_, body) = chat_request(&ollama, &request, &options());
        assert_eq!(body["max_tokens"], 1024);

        let azure = endpoint(LlmProvider::Azure, "https://r.openai.azure.com", "prod-4o");
        let (url, body) = chat_request(&azure, &request, &options());
        assert_eq!(
            url,
            "https://r.openai.azure.com/openai/deployments/prod-4o/chat/completions?api-version=2024-10-21"
        );
        assert_eq!(body["max_completion_tokens"], 1024);

        let claude = endpoint(
            LlmProvider::Anthropic,
            "https://api.anthropic.com",
            "claude-sonnet-4",
        );
        let (url, body) = chat_request(&claude, &request, &options());
        assert_eq!(url, "https://api.anthropic.com/v1/messages");
        assert_eq!(body["max_tokens"], 1024);
        assert_eq!(body["system"], request.system);
    }

    #[test]
    fn a_schema_goes_as_each_api_takes_it() {
        let request = ChatRequest::new("relevance", "s", "u".into());
        let schema = json!({"type": "object", "properties": {"relevant": {"type": "boolean"}}});
        let options = Options {
            answer: Answer::Schema(&schema),
            reasoning_effort: "",
            reasoning_tokens: 0,
        };
        let openai = endpoint(LlmProvider::Openai, "http://schema.test/v1", "m-schema");
        let (_, body) = chat_request(&openai, &request, &options);
        assert_eq!(body["response_format"]["type"], "json_schema");
        assert_eq!(body["response_format"]["json_schema"]["name"], "relevance");
        assert_eq!(body["response_format"]["json_schema"]["schema"], schema);
        // Refused: plain JSON mode, then nothing.
        assert!(learn(
            &openai,
            &body,
            Some("response_format"),
            "not supported"
        ));
        let (_, body) = chat_request(&openai, &request, &options);
        assert_eq!(body["response_format"], json!({"type": "json_object"}));
        assert!(learn(
            &openai,
            &body,
            Some("response_format"),
            "not supported"
        ));
        assert!(chat_request(&openai, &request, &options)
            .1
            .get("response_format")
            .is_none());

        let claude = endpoint(LlmProvider::Anthropic, "http://schema.test", "c-schema");
        let (_, body) = chat_request(&claude, &request, &options);
        assert_eq!(body["tools"][0]["input_schema"], schema);
        assert_eq!(
            body["tool_choice"],
            json!({"type": "tool", "name": "relevance"})
        );
        let answer = json!({"content": [{"type": "tool_use", "id": "t", "name": "relevance",
            "input": {"relevant": true}}], "usage": {"input_tokens": 3, "output_tokens": 2}});
        let (text, _) = chat_answer(LlmProvider::Anthropic, &answer).unwrap();
        assert_eq!(text, r#"{"relevant":true}"#);
    }

    #[test]
    fn a_refused_parameter_is_learnt_once_per_model() {
        let request = ChatRequest::new("relevance", "s", "u".into());
        let e = endpoint(
            LlmProvider::OpenaiCompatible,
            "http://learn.test/v1",
            "m-refuses",
        );
        let (_, body) = chat_request(&e, &request, &options());
        let msg = "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.";
        assert!(learn(&e, &body, Some("max_tokens"), msg));
        let (_, body) = chat_request(&e, &request, &options());
        assert!(body.get("max_tokens").is_none());
        assert_eq!(body["max_completion_tokens"], 1024);
        // The same refusal again changes nothing, so it is not retried for ever.
        assert!(!learn(&e, &body, Some("max_tokens"), msg));
        // Named in the message only.
        let msg = "Unsupported value: 'temperature' does not support 0 with this model.";
        assert!(learn(&e, &body, None, msg));
        assert!(chat_request(&e, &request, &options())
            .1
            .get("temperature")
            .is_none());
        // Another model keeps its parameters.
        let other = endpoint(
            LlmProvider::OpenaiCompatible,
            "http://learn.test/v1",
            "m-other",
        );
        assert!(chat_request(&other, &request, &options())
            .1
            .get("temperature")
            .is_some());
        assert!(!learn(&e, &body, None, "something else went wrong"));
    }

    #[test]
    fn usage_counts_cached_and_reasoning_tokens() {
        let openai = json!({"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 50,
                "prompt_tokens_details": {"cached_tokens": 60},
                "completion_tokens_details": {"reasoning_tokens": 30}}});
        let (text, u) = chat_answer(LlmProvider::Openai, &openai).unwrap();
        assert_eq!(text, "hi");
        assert_eq!(
            (
                u.input_tokens,
                u.cached_input_tokens,
                u.output_tokens,
                u.reasoning_tokens
            ),
            (100, 60, 50, 30)
        );
        let anthropic = json!({"content": [{"type": "text", "text": "hi"}],
            "usage": {"input_tokens": 10, "cache_read_input_tokens": 80, "cache_creation_input_tokens": 5, "output_tokens": 7}});
        let (_, u) = chat_answer(LlmProvider::Anthropic, &anthropic).unwrap();
        assert_eq!(
            (u.input_tokens, u.cached_input_tokens, u.output_tokens),
            (95, 80, 7)
        );
        let thinking =
            json!({"choices": [{"message": {"content": null}, "finish_reason": "length"}]});
        assert!(chat_answer(LlmProvider::Openai, &thinking)
            .unwrap_err()
            .to_string()
            .contains("reasoning_tokens"));
        let gemini = br#"[{"error": {"code": 400, "message": "Invalid JSON payload received. Unknown name \"reasoning_effort\"", "status": "INVALID_ARGUMENT"}}]"#;
        assert_eq!(
            error_of(gemini).0,
            "Invalid JSON payload received. Unknown name \"reasoning_effort\""
        );
    }
}
