//! Anthropic Messages API: `POST /v1/messages`.

use axum::body::Bytes;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use super::script::{fnv1a, Chat, Msg, Outcome};
use super::{content_text, tokens};

/// Anthropic's error envelope.
pub fn error(status: StatusCode, kind: &str, message: &str) -> Response {
    let body = json!({"type": "error", "error": {"type": kind, "message": message}});
    (status, Json(body)).into_response()
}

/// The request as the script sees it, plus the model name to echo. Like the real API it
/// requires `model`, `max_tokens` and a non-empty `messages` of user/assistant turns.
pub fn parse(body: &Value) -> Result<(Chat, String), String> {
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .ok_or("model: Field required")?;
    let allowance = body
        .get("max_tokens")
        .and_then(Value::as_u64)
        .ok_or("max_tokens: Field required")?;
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .filter(|m| !m.is_empty())
        .ok_or("messages: at least one message is required")?;
    // Structured output on Anthropic: a forced tool, whose input is the answer.
    let forced = body.pointer("/tool_choice/type").and_then(Value::as_str) == Some("tool")
        && body
            .get("tools")
            .and_then(Value::as_array)
            .is_some_and(|t| !t.is_empty());
    let mut chat = Chat {
        system: content_text(body.get("system").unwrap_or(&Value::Null)),
        allowance: Some(allowance),
        format: forced.then_some("tool"),
        ..Chat::default()
    };
    for m in messages {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        if role != "user" && role != "assistant" {
            return Err(format!(
                "messages: Unexpected role {role:?}. Allowed roles are \"user\" or \"assistant\"; use the top-level \"system\" parameter for a system prompt"
            ));
        }
        chat.messages.push(Msg {
            role: role.to_string(),
            text: content_text(m.get("content").unwrap_or(&Value::Null)),
        });
    }
    Ok((chat, model.to_string()))
}

/// The reply as a content block: a `tool_use` block with the reply as its input when a tool
/// was forced and the reply is a JSON object, else text.
fn content(chat: &Chat, reply: &str) -> Value {
    match serde_json::from_str::<Value>(reply) {
        Ok(input) if chat.format == Some("tool") && input.is_object() => {
            let name = chat.task().unwrap_or("answer");
            json!({"type": "tool_use", "id": format!("toolu_sim{:016x}", fnv1a(reply.as_bytes())), "name": name, "input": input})
        }
        _ => json!({"type": "text", "text": reply}),
    }
}

/// A `message` object carrying `reply`.
pub fn message(chat: &Chat, model: &str, reply: &str) -> Value {
    let block = content(chat, reply);
    let stop_reason = match block["type"] == "tool_use" {
        true => "tool_use",
        false => "end_turn",
    };
    let input_tokens =
        tokens(&chat.system) + chat.messages.iter().map(|m| tokens(&m.text)).sum::<u64>();
    let h = fnv1a(chat.prompt().as_bytes());
    json!({
        "id": format!("msg_sim{h:016x}"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [block],
        "stop_reason": stop_reason,
        "stop_sequence": null,
        "usage": {"input_tokens": input_tokens, "output_tokens": tokens(reply),
            "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
    })
}

pub async fn messages(headers: HeaderMap, body: Bytes) -> Response {
    let present = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| !v.trim().is_empty())
    };
    if !present("x-api-key") {
        return error(
            StatusCode::UNAUTHORIZED,
            "authentication_error",
            "invalid x-api-key",
        );
    }
    if !present("anthropic-version") {
        return error(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            "anthropic-version: header is required",
        );
    }
    let parsed = serde_json::from_slice::<Value>(&body)
        .map_err(|e| format!("invalid JSON body: {e}"))
        .and_then(|v| parse(&v));
    let (chat, model) = match parsed {
        Ok(p) => p,
        Err(msg) => return error(StatusCode::BAD_REQUEST, "invalid_request_error", &msg),
    };
    let response = answer(&chat, &model).await;
    super::openai::record("anthropic", &chat, &model, response.status());
    response
}

async fn answer(chat: &Chat, model: &str) -> Response {
    match chat.respond(model).await {
        Outcome::Reply(reply) => Json(message(chat, model, &reply)).into_response(),
        Outcome::RateLimited => {
            let mut r = error(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limit_error",
                "This request would exceed the rate limit for your organization. Please try again later.",
            );
            r.headers_mut()
                .insert(header::RETRY_AFTER, "1".parse().expect("header value"));
            r
        }
        Outcome::ServerError => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "api_error",
            "Internal server error",
        ),
        // Anthropic has no response_format, so JSON mode is never set.
        Outcome::JsonModeUnsupported => error(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            "response_format: Extra inputs are not permitted",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::super::script::PROSE;
    use super::super::test_server;
    use super::*;

    async fn post(
        base: &str,
        key: Option<&str>,
        version: bool,
        body: &Value,
    ) -> (u16, HeaderMap, Value) {
        let mut req = reqwest::Client::new()
            .post(format!("{base}/v1/messages"))
            .json(body);
        if let Some(k) = key {
            req = req.header("x-api-key", k);
        }
        if version {
            req = req.header("anthropic-version", "2023-06-01");
        }
        let resp = req.send().await.expect("send");
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        (status, headers, resp.json().await.expect("json body"))
    }

    fn body(task: &str, prompt: &str) -> Value {
        json!({
            "model": "claude-test",
            "max_tokens": 512,
            "system": format!("trawl task: {task}\nAnswer in JSON."),
            "messages": [{"role": "user", "content": [{"type": "text", "text": prompt}]}],
        })
    }

    fn text(v: &Value) -> &str {
        v["content"][0]["text"].as_str().expect("text")
    }

    const SELECT: &str = "Question: How tall is Mount Ferrow and who first climbed it?\n\
        Pick at most 1 result.\n\
        1. Hiking boots | http://shop.test/boots | Buy boots\n\
        2. Mount Ferrow | http://peaks.test/ferrow | The peak rises 4,210 m\n\
        3. Ferrow summit | http://peaks.test/summit | First climbed in 1911";

    #[tokio::test]
    async fn anthropic_over_http() {
        let base = test_server().await;

        let (status, _, v) = post(&base, None, true, &body("select", SELECT)).await;
        assert_eq!(status, 401);
        assert_eq!(
            v,
            json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}})
        );
        assert_eq!(
            post(&base, Some(" "), true, &body("select", SELECT))
                .await
                .0,
            401
        );
        assert_eq!(
            post(&base, Some("k"), false, &body("select", SELECT))
                .await
                .0,
            400
        );

        let (status, _, v) = post(&base, Some("k"), true, &body("select", SELECT)).await;
        assert_eq!(status, 200);
        assert_eq!(v["type"], "message");
        assert_eq!(v["role"], "assistant");
        assert_eq!(v["model"], "claude-test");
        assert_eq!(v["stop_reason"], "end_turn");
        assert!(v["stop_sequence"].is_null());
        assert!(v["id"].as_str().is_some_and(|s| s.starts_with("msg_")));
        assert!(v["usage"]["input_tokens"].as_u64().is_some_and(|n| n > 0));
        assert!(v["usage"]["output_tokens"].as_u64().is_some_and(|n| n > 0));
        assert_eq!(
            serde_json::from_str::<Value>(text(&v)).expect("json"),
            json!({"selected": [2]})
        );

        let rel = "Question: Who designed the Frell protocol?\nTitle: Frell protocol\nURL: http://a.test/\nSnippet: Port 4100";
        let (_, _, v) = post(
            &base,
            Some("k"),
            true,
            &json!({
                "model": "m", "max_tokens": 64, "system": "trawl task: relevance",
                "messages": [{"role": "user", "content": rel}],
            }),
        )
        .await;
        assert_eq!(
            serde_json::from_str::<Value>(text(&v)).expect("json")["relevant"],
            true
        );

        // Repair and markers behave as with OpenAI.
        let always = format!("{SELECT}\nsimweb:badjson-always anthropic");
        let mut repair = body("select", &always);
        let msgs = repair["messages"].as_array_mut().expect("messages");
        msgs.push(json!({"role": "assistant", "content": PROSE}));
        msgs.push(json!({"role": "user", "content": "That is not valid JSON."}));
        assert_eq!(text(&post(&base, Some("k"), true, &repair).await.2), PROSE);

        let limited = body("select", &format!("{SELECT}\nsimweb:llm-429 anthropic"));
        let (status, headers, v) = post(&base, Some("k"), true, &limited).await;
        assert_eq!(status, 429);
        assert_eq!(
            headers.get("retry-after").and_then(|h| h.to_str().ok()),
            Some("1")
        );
        assert_eq!(v["type"], "error");
        assert_eq!(v["error"]["type"], "rate_limit_error");
        assert_eq!(post(&base, Some("k"), true, &limited).await.0, 200);

        let failing = body("select", "simweb:llm-500 anthropic");
        let (status, _, v) = post(&base, Some("k"), true, &failing).await;
        assert_eq!(status, 500);
        assert_eq!(v["error"]["type"], "api_error");

        // Request validation like the real API.
        let mut no_max = body("select", SELECT);
        no_max.as_object_mut().expect("object").remove("max_tokens");
        assert_eq!(post(&base, Some("k"), true, &no_max).await.0, 400);
        let system_role = json!({"model": "m", "max_tokens": 5, "messages": [{"role": "system", "content": "x"}]});
        let (status, _, v) = post(&base, Some("k"), true, &system_role).await;
        assert_eq!(status, 400);
        assert_eq!(v["error"]["type"], "invalid_request_error");
    }
}
