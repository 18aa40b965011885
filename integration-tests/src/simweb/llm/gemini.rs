//! Gemini's OpenAI-compatible endpoint: `POST /v1beta/openai/chat/completions` and
//! `…/embeddings`, Bearer key, errors as Google's list of `{"error": {code, message, status}}`.

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::Value;

use super::has_bearer;
use super::openai::{complete, Api};

fn unauthenticated() -> Response {
    Api::Gemini.error(
        StatusCode::UNAUTHORIZED,
        "Missing or invalid Authorization header.",
        "",
        None,
        None,
    )
}

pub async fn chat_completions(headers: HeaderMap, body: Bytes) -> Response {
    if !has_bearer(&headers) {
        return unauthenticated();
    }
    complete(Api::Gemini, None, &body).await
}

pub async fn embeddings(headers: HeaderMap, body: Bytes) -> Response {
    if !has_bearer(&headers) {
        return unauthenticated();
    }
    let value: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    match super::embeddings::response(&value) {
        Ok(v) => Json(v).into_response(),
        Err(msg) => Api::Gemini.error(StatusCode::BAD_REQUEST, &msg, "", None, None),
    }
}
