//! Azure OpenAI: `POST /openai/deployments/{deployment}/chat/completions?api-version=…` and
//! `…/embeddings`, with the key in the `api-key` header. The deployment names the model; the
//! answers are OpenAI's.

use std::collections::HashMap;

use axum::body::Bytes;
use axum::extract::{Path, Query};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use super::openai::{complete, Api};

/// Azure's own errors (authentication, routing): `{"error": {"code", "message"}}`.
fn error(status: StatusCode, message: &str) -> Response {
    let body = json!({"error": {"code": status.as_u16().to_string(), "message": message}});
    (status, Json(body)).into_response()
}

/// The key and the `api-version` every Azure request needs.
fn checked(headers: &HeaderMap, query: &HashMap<String, String>) -> Option<Response> {
    let key = headers
        .get("api-key")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| !v.trim().is_empty());
    if !key {
        return Some(error(
            StatusCode::UNAUTHORIZED,
            "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.",
        ));
    }
    if query.get("api-version").is_none_or(|v| v.is_empty()) {
        return Some(error(StatusCode::NOT_FOUND, "Resource not found"));
    }
    None
}

pub async fn chat_completions(
    Path(deployment): Path<String>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Some(refusal) = checked(&headers, &query) {
        return refusal;
    }
    complete(Api::Azure, Some(&deployment), &body).await
}

pub async fn embeddings(
    Path(deployment): Path<String>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Some(refusal) = checked(&headers, &query) {
        return refusal;
    }
    let mut value: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    value["model"] = json!(deployment);
    match super::embeddings::response(&value) {
        Ok(v) => Json(v).into_response(),
        Err(msg) => Api::Azure.error(
            StatusCode::BAD_REQUEST,
            &msg,
            "invalid_request_error",
            Some("input"),
            None,
        ),
    }
}
