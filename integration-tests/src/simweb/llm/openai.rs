//! OpenAI-compatible `POST /v1/chat/completions`.

use axum::body::Bytes;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

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
    chat.json_mode = matches!(
        body.pointer("/response_format/type")
            .and_then(Value::as_str),
        Some("json_object" | "json_schema")
    );
    let model = body.get("model").and_then(Value::as_str).unwrap_or(MODEL);
    Ok((chat, model.to_string()))
}

/// A `chat.completion` object carrying `reply`.
pub fn completion(chat: &Chat, model: &str, reply: &str) -> Value {
    let prompt_tokens =
        tokens(&chat.system) + chat.messages.iter().map(|m| tokens(&m.text)).sum::<u64>();
    let completion_tokens = tokens(reply);
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
            "finish_reason": "stop",
        }],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    })
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
    let parsed = serde_json::from_slice::<Value>(&body)
        .map_err(|e| format!("invalid JSON body: {e}"))
        .and_then(|v| parse(&v));
    let (chat, model) = match parsed {
        Ok(p) => p,
        Err(msg) => {
            return error(
                StatusCode::BAD_REQUEST,
                &msg,
                "invalid_request_error",
                None,
                None,
            )
        }
    };
    match chat.respond().await {
        Outcome::Reply(reply) => Json(completion(&chat, &model, &reply)).into_response(),
        Outcome::RateLimited => {
            let mut r = error(
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
        Outcome::ServerError => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "The server had an error while processing your request. Sorry about that!",
            "server_error",
            None,
            None,
        ),
        Outcome::JsonModeUnsupported => error(
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
