//! Tavily's search API: `POST /search` with `Authorization: Bearer <key>` and a JSON body
//! `{"query", "max_results", "include_answer", "topic", "time_range", …}`. One page only; the
//! `answer` is written from the top result, as Tavily summarises its sources.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};

use super::super::server::AppState;

pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new().route("/search", post(search))
}

#[derive(Deserialize)]
struct Params {
    #[serde(default)]
    query: String,
    max_results: Option<usize>,
    #[serde(default)]
    include_answer: bool,
    topic: Option<String>,
}

fn error(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({"detail": {"error": message}}))).into_response()
}

async fn search(State(state): State<Arc<AppState>>, headers: HeaderMap, body: Bytes) -> Response {
    let has_key = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|k| !k.trim().is_empty());
    if !has_key {
        return error(
            StatusCode::UNAUTHORIZED,
            "Unauthorized: missing or invalid API key.",
        );
    }
    let Ok(params) = serde_json::from_slice::<Params>(&body) else {
        return error(StatusCode::BAD_REQUEST, "Invalid JSON body.");
    };
    let query = params.query.trim();
    if query.is_empty() {
        return error(StatusCode::BAD_REQUEST, "Query is missing.");
    }
    let max_results = params.max_results.unwrap_or(5);
    if max_results > 20 {
        return error(
            StatusCode::BAD_REQUEST,
            "max_results must be between 0 and 20.",
        );
    }
    if let Some(topic) = params.topic.as_deref() {
        if !["general", "news", "finance"].contains(&topic) {
            return error(StatusCode::BAD_REQUEST, "Invalid topic.");
        }
    }
    if let Some(failure) = super::hook(query).await {
        return failure;
    }
    let ranked = super::ranked(&state, query, 0, max_results);
    let answer = match ranked.first() {
        Some(top) if params.include_answer => {
            Value::from(format!("Based on the sources: {}", top.snippet))
        }
        _ => Value::Null,
    };
    let results: Vec<Value> = ranked
        .iter()
        .map(|r| {
            json!({
                "title": r.title,
                "url": r.url,
                "content": r.snippet,
                // Tavily's relevance scores fall with rank; these are made up but ordered.
                "score": 0.95 - 0.03 * r.position as f64,
                "raw_content": null,
            })
        })
        .collect();
    Json(json!({
        "query": query,
        "follow_up_questions": null,
        "answer": answer,
        "images": [],
        "results": results,
        "response_time": 0.52,
        "request_id": "4a1c2b3d-0000-4000-8000-simweb000001",
    }))
    .into_response()
}
