//! A scripted LLM: OpenAI-compatible chat completions (`POST /v1/chat/completions`),
//! Anthropic's Messages API (`POST /v1/messages`), OpenAI-compatible embeddings
//! (`POST /v1/embeddings`) and `GET /v1/models`; Azure OpenAI's deployment routes
//! ([`azure`]) and Gemini's OpenAI-compatible endpoint ([`gemini`]). Reasoning models refuse
//! what OpenAI's refuse ([`openai`]); [`calls`] lists every chat request answered.
//!
//! Chat replies are a deterministic function of the conversation ([`script`]):
//! * The system prompt's first line `trawl task: <task>` picks the task (OpenAI: the first
//!   `system`/`developer` message; Anthropic: the top-level `system`). The prompt is the last
//!   user message that does not contain `not valid JSON`.
//! * `query_analysis`, `relevance` and `select` answer JSON ([`tasks`] documents the prompt
//!   lines they read), as do the clean stage's `judge`, `analysis` and `analysis_news` and
//!   synthesize's `fields`; `report` and `clean` answer prose and markdown ([`clean_tasks`]
//!   documents the clean stage's tasks, `fields`, and their `simweb:dirty`,
//!   `simweb:drop-code`, `simweb:clean-short`, `simweb:extra-key` and `simweb:fields-wrong`
//!   markers); any other task, or none, answers
//!   `SIMULATED: <first 100 chars>`.
//! * Markers in the prompt: `simweb:badjson` (prose until a later user message contains
//!   `not valid JSON`), `simweb:badjson-always`, `simweb:fenced`, `simweb:think`,
//!   `simweb:llm-429` (first request per prompt, process-wide), `simweb:llm-500`,
//!   `simweb:llm-slow` (30 s), `simweb:no-json-mode` (OpenAI 400 on `response_format`),
//!   `simweb:no-json-schema` (OpenAI 400 on a `json_schema` response format only),
//!   `simweb:llm-hang` (never answers), `simweb:llm-hang-once` (the first request per
//!   prompt never answers; [`script::hangs`] counts them) and `simweb:ramble` (640 words of
//!   thinking aloud before a JSON answer).
//! * A chat completion stops at the request's allowance (`max_completion_tokens` or
//!   `max_tokens`), with `finish_reason: length`, as a model does.
//! * [`script::set_trouble`] puts a model in trouble for every request to it, whatever the
//!   prompt: garbage answers, or 500s.
//! * Requests need a key: OpenAI `Authorization: Bearer <key>`, Anthropic `x-api-key` plus
//!   `anthropic-version` (a forced tool gets the JSON answer as a `tool_use` block's input).
//!
//! Embeddings are 64-dimensional hashed bags of lower-cased words ([`embeddings::embed`]).

use axum::http::{header, HeaderMap};
use serde_json::{json, Value};

pub mod anthropic;
pub mod azure;
pub mod clean_tasks;
pub mod embeddings;
pub mod gemini;
pub mod openai;
pub mod org_limits;
pub mod script;
pub mod tasks;

pub use anthropic::messages;
pub use embeddings::embeddings;
pub use openai::{calls, chat_completions, Call};

pub const MODEL: &str = "simweb-1";
/// Fixed so responses are byte-identical across runs.
const CREATED: u64 = 1_700_000_000;

/// Text of a message's `content`, which may be a string or a list of parts.
fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

/// Rough token count: words, which is all tests need for `usage`.
fn tokens(s: &str) -> u64 {
    s.split_whitespace().count() as u64
}

/// Whether `Authorization: Bearer <non-empty>` is present.
fn has_bearer(headers: &HeaderMap) -> bool {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .is_some_and(|(scheme, key)| {
            scheme.eq_ignore_ascii_case("bearer") && !key.trim().is_empty()
        })
}

pub async fn models() -> axum::Json<Value> {
    axum::Json(json!({
        "object": "list",
        "data": [{"id": MODEL, "object": "model", "created": CREATED, "owned_by": "simweb"}],
    }))
}

/// A server with just the LLM routes on `127.0.0.1:0`; returns `http://ADDR`.
#[cfg(test)]
pub(crate) async fn test_server() -> String {
    use axum::routing::{get, post};
    let app = axum::Router::new()
        .route("/v1/chat/completions", post(chat_completions))
        .route("/v1/messages", post(messages))
        .route("/v1/embeddings", post(embeddings))
        .route("/v1/models", get(models));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_must_be_non_empty() {
        let h = |v: &str| {
            let mut m = HeaderMap::new();
            m.insert(header::AUTHORIZATION, v.parse().expect("header"));
            m
        };
        assert!(has_bearer(&h("Bearer sk-1")));
        assert!(has_bearer(&h("bearer x")));
        assert!(!has_bearer(&h("Bearer ")));
        assert!(!has_bearer(&h("Basic abc")));
        assert!(!has_bearer(&HeaderMap::new()));
    }

    #[tokio::test]
    async fn models_lists_the_simulated_model() {
        let base = test_server().await;
        let v: Value = reqwest::get(format!("{base}/v1/models"))
            .await
            .expect("get")
            .json()
            .await
            .expect("json");
        assert_eq!(v["data"][0]["id"], MODEL);
    }
}
