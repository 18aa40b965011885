//! OpenAI-compatible chat completions. The reply is a deterministic function of the last
//! user message so tests can assert the LLM path was taken without a real model.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

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

pub fn completion(body: &Value) -> Result<Value, String> {
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .ok_or_else(|| "'messages' must be an array".to_string())?;
    let last_user = messages
        .iter()
        .rev()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
        .map(|m| content_text(m.get("content").unwrap_or(&Value::Null)))
        .unwrap_or_default();
    let prompt_tokens: u64 = messages
        .iter()
        .map(|m| tokens(&content_text(m.get("content").unwrap_or(&Value::Null))))
        .sum();
    let head: String = last_user.chars().take(100).collect();
    let reply = format!("SIMULATED: {head}");
    let completion_tokens = tokens(&reply);
    let model = body.get("model").and_then(Value::as_str).unwrap_or(MODEL);
    // A stable id derived from the prompt (FNV-1a), so identical calls look identical.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in last_user.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    Ok(json!({
        "id": format!("chatcmpl-sim{h:016x}"),
        "object": "chat.completion",
        "created": CREATED,
        "model": model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": reply},
            "logprobs": null,
            "finish_reason": "stop",
        }],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }))
}

pub async fn chat_completions(body: axum::body::Bytes) -> Response {
    let parsed: Result<Value, String> =
        serde_json::from_slice(&body).map_err(|e| format!("invalid JSON body: {e}"));
    match parsed.and_then(|v| completion(&v)) {
        Ok(v) => Json(v).into_response(),
        // OpenAI's error envelope, so clients surface the message.
        Err(msg) => (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": {"message": msg, "type": "invalid_request_error", "param": null, "code": null}})),
        )
            .into_response(),
    }
}

pub async fn models() -> Json<Value> {
    Json(json!({
        "object": "list",
        "data": [{"id": MODEL, "object": "model", "created": CREATED, "owned_by": "simweb"}],
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completion_echoes_last_user_message() {
        let body = json!({"model": "gpt-4o-mini", "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": [{"type": "text", "text": "second question"}]},
        ]});
        let v = completion(&body).expect("valid request");
        assert_eq!(
            v["choices"][0]["message"]["content"],
            "SIMULATED: second question"
        );
        assert_eq!(v["model"], "gpt-4o-mini");
        assert_eq!(v, completion(&body).expect("valid request"));
        assert!(completion(&json!({})).is_err());
    }
}
