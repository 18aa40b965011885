//! Chat completions in OpenAI's format, as OpenAI (`POST /v1/chat/completions`), Azure OpenAI
//! (`POST /openai/deployments/{deployment}/chat/completions?api-version=…`, key in `api-key`)
//! and Gemini's OpenAI-compatible endpoint (`POST /v1beta/openai/chat/completions`, errors as
//! a list) serve them.
//!
//! A reasoning model (a name starting `o1`, `o3`, `o4` or `gpt-5`, or holding `reasoning`)
//! refuses `max_tokens` and a `temperature` other than 1 with OpenAI's own 400 bodies, and
//! reports reasoning tokens in its usage. A system prompt seen before is reported as cached
//! input (`prompt_tokens_details.cached_tokens`), as OpenAI's prefix caching does. Every
//! request is recorded for [`calls`].

use axum::body::Bytes;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use std::collections::HashSet;
use std::sync::{LazyLock, Mutex};

use super::script::{fnv1a, Chat, Msg, Outcome};
use super::{content_text, has_bearer, tokens, CREATED, MODEL};

/// OpenAI's error envelope.
pub fn error(
    status: StatusCode,
    message: &str,
    kind: &str,
    param: Option<&str>,
    code: Option<&str>,
) -> Response {
    let body = json!({"error": {"message": message, "type": kind, "param": param, "code": code}});
    (status, Json(body)).into_response()
}

/// The request as the script sees it, plus the model name to echo.
pub fn parse(body: &Value) -> Result<(Chat, String), String> {
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .ok_or_else(|| "'messages' must be an array".to_string())?;
    let mut chat = Chat::default();
    for m in messages {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        let text = content_text(m.get("content").unwrap_or(&Value::Null));
        match role {
            "system" | "developer" => {
                if !chat.system.is_empty() {
                    chat.system.push('\n');
                }
                chat.system.push_str(&text);
            }
            "user" | "assistant" | "tool" => chat.messages.push(Msg {
                role: role.to_string(),
                text,
            }),
            other => return Err(format!("invalid role in 'messages': {other:?}")),
        }
    }
    chat.format = match body
        .pointer("/response_format/type")
        .and_then(Value::as_str)
    {
        Some("json_schema") => Some("json_schema"),
        Some("json_object") => Some("json_object"),
        _ => None,
    };
    chat.json_mode = chat.format.is_some();
    chat.allowance = ["max_completion_tokens", "max_tokens"]
        .iter()
        .find_map(|k| body.get(*k).and_then(Value::as_u64));
    let model = body.get("model").and_then(Value::as_str).unwrap_or(MODEL);
    Ok((chat, model.to_string()))
}

/// A `chat.completion` object carrying `reply`, cut where the request's allowance ends (as a
/// model stops there, `finish_reason: length`).
pub fn completion(chat: &Chat, model: &str, reply: &str) -> Value {
    let prompt_tokens =
        tokens(&chat.system) + chat.messages.iter().map(|m| tokens(&m.text)).sum::<u64>();
    let reasoning_tokens = if reasoning_model(model) { 64 } else { 0 };
    let room = (chat.allowance).map(|a| a.saturating_sub(reasoning_tokens));
    let (reply, finish) = match room {
        Some(room) if tokens(reply) > room => {
            let words: Vec<&str> = reply.split_whitespace().take(room as usize).collect();
            (words.join(" "), "length")
        }
        _ => (reply.to_owned(), "stop"),
    };
    let reply = reply.as_str();
    let completion_tokens = tokens(reply) + reasoning_tokens;
    let cached_tokens = match SYSTEMS_SEEN
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(fnv1a(chat.system.as_bytes()))
    {
        true => 0,
        false => tokens(&chat.system),
    };
    // A stable id derived from the prompt, so identical calls look identical.
    let h = fnv1a(chat.prompt().as_bytes());
    json!({
        "id": format!("chatcmpl-sim{h:016x}"),
        "object": "chat.completion",
        "created": CREATED,
        "model": model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": reply},
            "logprobs": null,
            "finish_reason": finish,
        }],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": cached_tokens, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": reasoning_tokens, "audio_tokens": 0,
                "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
        },
    })
}

/// System prompts seen, process-wide: a second request with one reports it as cached input.
static SYSTEMS_SEEN: LazyLock<Mutex<HashSet<u64>>> = LazyLock::new(Default::default);

/// One chat request as simweb answered it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// `openai`, `azure`, `gemini` or `anthropic`.
    pub api: &'static str,
    pub task: String,
    pub model: String,
    pub status: u16,
    /// The answer's token allowance the request sent (`max_completion_tokens` or `max_tokens`).
    pub allowance: Option<u64>,
    /// How structured output was asked for: `json_schema`, `json_object` or `tool` (Anthropic).
    pub format: Option<&'static str>,
}

static CALLS: LazyLock<Mutex<Vec<Call>>> = LazyLock::new(Default::default);

/// Every chat request this process's simwebs answered, in order.
pub fn calls() -> Vec<Call> {
    CALLS.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

pub(super) fn record(api: &'static str, chat: &Chat, model: &str, status: StatusCode) {
    CALLS.lock().unwrap_or_else(|e| e.into_inner()).push(Call {
        api,
        task: chat.task().unwrap_or_default().to_owned(),
        model: model.to_owned(),
        status: status.as_u16(),
        allowance: chat.allowance,
        format: chat.format,
    });
}

/// The APIs that speak chat completions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    OpenAi,
    Azure,
    Gemini,
    /// A keyless OpenAI-compatible server.
    Local,
}

impl Api {
    fn name(self) -> &'static str {
        match self {
            Api::OpenAi => "openai",
            Api::Azure => "azure",
            Api::Gemini => "gemini",
            Api::Local => "local",
        }
    }

    /// The API's error body: OpenAI's envelope (Azure passes it through), or Gemini's list
    /// with a gRPC status.
    pub fn error(
        self,
        status: StatusCode,
        message: &str,
        kind: &str,
        param: Option<&str>,
        code: Option<&str>,
    ) -> Response {
        match self {
            Api::Gemini => {
                let grpc = match status.as_u16() {
                    400 => "INVALID_ARGUMENT",
                    401 | 403 => "PERMISSION_DENIED",
                    429 => "RESOURCE_EXHAUSTED",
                    _ => "INTERNAL",
                };
                let body = json!([{"error": {"code": status.as_u16(), "message": message, "status": grpc}}]);
                (status, Json(body)).into_response()
            }
            _ => error(status, message, kind, param, code),
        }
    }
}

/// Whether simweb's model `model` behaves as OpenAI's reasoning models do.
pub fn reasoning_model(model: &str) -> bool {
    let name = model.rsplit('/').next().unwrap_or(model);
    ["o1", "o3", "o4", "gpt-5"]
        .iter()
        .any(|p| name.starts_with(p))
        || name.contains("reasoning")
}

/// What a reasoning model refuses in `body`, as OpenAI answers it; and, with the
/// `simweb:no-json-schema` marker, a `json_schema` response format, as servers without
/// structured outputs answer it.
fn refused(api: Api, model: &str, body: &Value, chat: &Chat) -> Option<Response> {
    if chat.format == Some("json_schema") && chat.prompt().contains("simweb:no-json-schema") {
        return Some(api.error(
            StatusCode::BAD_REQUEST,
            "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.",
            "invalid_request_error",
            Some("response_format"),
            None,
        ));
    }
    if !reasoning_model(model) {
        return None;
    }
    if body.get("max_tokens").is_some() {
        return Some(api.error(
            StatusCode::BAD_REQUEST,
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
            "invalid_request_error",
            Some("max_tokens"),
            Some("unsupported_parameter"),
        ));
    }
    match body.get("temperature").and_then(Value::as_f64) {
        Some(t) if t != 1.0 => Some(api.error(
            StatusCode::BAD_REQUEST,
            &format!("Unsupported value: 'temperature' does not support {t} with this model. Only the default (1) value is supported."),
            "invalid_request_error",
            Some("temperature"),
            Some("unsupported_value"),
        )),
        _ => None,
    }
}

/// A server of one's own (Ollama, llama.cpp) under `/local/v1`: no key needed.
pub async fn local_chat_completions(body: Bytes) -> Response {
    complete(Api::Local, None, &body).await
}

pub async fn chat_completions(headers: HeaderMap, body: Bytes) -> Response {
    if !has_bearer(&headers) {
        return error(
            StatusCode::UNAUTHORIZED,
            "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth.",
            "invalid_request_error",
            None,
            Some("invalid_api_key"),
        );
    }
    complete(Api::OpenAi, None, &body).await
}

/// Answers a chat completion through `api`; `deployment` (Azure) names the model.
pub async fn complete(api: Api, deployment: Option<&str>, body: &[u8]) -> Response {
    let value =
        serde_json::from_slice::<Value>(body).map_err(|e| format!("invalid JSON body: {e}"));
    let parsed = value.and_then(|v| parse(&v).map(|p| (v, p)));
    let (value, (chat, model)) = match parsed {
        Ok(p) => p,
        Err(msg) => {
            return api.error(
                StatusCode::BAD_REQUEST,
                &msg,
                "invalid_request_error",
                None,
                None,
            )
        }
    };
    let model = deployment.map(str::to_owned).unwrap_or(model);
    let response = match refused(api, &model, &value, &chat) {
        Some(refusal) => refusal,
        None => answer(api, &chat, &model).await,
    };
    record(api.name(), &chat, &model, response.status());
    response
}

async fn answer(api: Api, chat: &Chat, model: &str) -> Response {
    match chat.respond(model).await {
        Outcome::Reply(reply) => Json(completion(chat, model, &reply)).into_response(),
        Outcome::RateLimited => {
            let mut r = api.error(
                StatusCode::TOO_MANY_REQUESTS,
                "Rate limit reached for requests. Please try again in 1s.",
                "requests",
                None,
                Some("rate_limit_exceeded"),
            );
            r.headers_mut()
                .insert(header::RETRY_AFTER, "1".parse().expect("header value"));
            r
        }
        Outcome::ServerError => api.error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "The server had an error while processing your request. Sorry about that!",
            "server_error",
            None,
            None,
        ),
        Outcome::JsonModeUnsupported => api.error(
            StatusCode::BAD_REQUEST,
            "response_format is not supported",
            "invalid_request_error",
            Some("response_format"),
            None,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::super::script::PROSE;
    use super::super::test_server;
    use super::*;

    #[test]
    fn completion_echoes_last_user_message() {
        let body = json!({"model": "gpt-4o-mini", "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": [{"type": "text", "text": "second question"}]},
        ]});
        let (chat, model) = parse(&body).expect("valid request");
        let v = completion(&chat, &model, &chat.reply());
        assert_eq!(
            v["choices"][0]["message"]["content"],
            "SIMULATED: second question"
        );
        assert_eq!(v["model"], "gpt-4o-mini");
        assert_eq!(v["usage"]["total_tokens"], 9);
        assert!(parse(&json!({})).is_err());
    }

    async fn post(base: &str, key: Option<&str>, body: &Value) -> (u16, HeaderMap, Value) {
        let mut req = reqwest::Client::new()
            .post(format!("{base}/v1/chat/completions"))
            .json(body);
        if let Some(k) = key {
            req = req.bearer_auth(k);
        }
        let resp = req.send().await.expect("send");
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        (status, headers, resp.json().await.expect("json body"))
    }

    fn body(task: &str, prompt: &str) -> Value {
        json!({"model": "m", "messages": [
            {"role": "system", "content": format!("trawl task: {task}\nAnswer in JSON.")},
            {"role": "user", "content": prompt},
        ]})
    }

    fn content(v: &Value) -> &str {
        v["choices"][0]["message"]["content"]
            .as_str()
            .expect("content")
    }

    #[tokio::test]
    async fn openai_over_http() {
        let base = test_server().await;
        let q = "Question: What is the melting point of Zorblium and who first isolated it?";

        let (status, _, v) = post(&base, None, &body("query_analysis", q)).await;
        assert_eq!(status, 401);
        assert_eq!(v["error"]["code"], "invalid_api_key");
        assert_eq!(
            post(&base, Some(""), &body("query_analysis", q)).await.0,
            401
        );

        let (status, _, v) = post(&base, Some("sk-test"), &body("query_analysis", q)).await;
        assert_eq!(status, 200);
        assert_eq!(v["object"], "chat.completion");
        let qa: Value = serde_json::from_str(content(&v)).expect("json reply");
        assert_eq!(qa["target_data_points"][0], "melting point");

        // Repair conversation: prose first, JSON after "not valid JSON".
        let bad = format!("{q}\nsimweb:badjson openai");
        let (_, _, v) = post(&base, Some("k"), &body("query_analysis", &bad)).await;
        assert_eq!(content(&v), PROSE);
        let mut repair = body("query_analysis", &bad);
        let msgs = repair["messages"].as_array_mut().expect("messages");
        msgs.push(json!({"role": "assistant", "content": PROSE}));
        msgs.push(json!({"role": "user", "content": "Your reply was not valid JSON. Reply with only the JSON object."}));
        let (_, _, v) = post(&base, Some("k"), &repair).await;
        assert_eq!(
            serde_json::from_str::<Value>(content(&v)).expect("json"),
            qa
        );

        // 429 once per prompt, with Retry-After.
        let limited = body("relevance", &format!("{q}\nsimweb:llm-429 openai-http"));
        let (status, headers, v) = post(&base, Some("k"), &limited).await;
        assert_eq!(status, 429);
        assert_eq!(
            headers.get("retry-after").and_then(|h| h.to_str().ok()),
            Some("1")
        );
        assert_eq!(v["error"]["code"], "rate_limit_exceeded");
        assert_eq!(post(&base, Some("k"), &limited).await.0, 200);
        assert_eq!(post(&base, Some("k"), &limited).await.0, 200);

        let failing = body("relevance", "simweb:llm-500 openai");
        let (status, _, v) = post(&base, Some("k"), &failing).await;
        assert_eq!(status, 500);
        assert_eq!(v["error"]["type"], "server_error");
        assert_eq!(post(&base, Some("k"), &failing).await.0, 500);

        // JSON mode refused only with the marker; without response_format it works.
        let mut no_json = body("relevance", &format!("{q}\nsimweb:no-json-mode"));
        assert_eq!(post(&base, Some("k"), &no_json).await.0, 200);
        no_json["response_format"] = json!({"type": "json_object"});
        let (status, _, v) = post(&base, Some("k"), &no_json).await;
        assert_eq!(status, 400);
        assert_eq!(
            v,
            json!({"error": {"message": "response_format is not supported", "type": "invalid_request_error", "param": "response_format", "code": null}})
        );
        let mut json_mode = body("relevance", q);
        json_mode["response_format"] = json!({"type": "json_object"});
        assert_eq!(post(&base, Some("k"), &json_mode).await.0, 200);
    }
}
