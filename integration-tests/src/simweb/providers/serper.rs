//! Serper's API: `POST /search` and `POST /news`, key in `X-API-KEY`, JSON body
//! `{"q", "num", "page", "tbs"}`. The answer echoes what it parsed under `searchParameters`
//! (as Serper does), which is how tests check what a client sent.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};

use super::super::server::AppState;

pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/search", post(search))
        .route("/news", post(news))
}

#[derive(Deserialize)]
struct Params {
    #[serde(default)]
    q: String,
    num: Option<usize>,
    page: Option<usize>,
    tbs: Option<String>,
}

async fn search(State(state): State<Arc<AppState>>, headers: HeaderMap, body: Bytes) -> Response {
    answer(&state, &headers, &body, false).await
}

async fn news(State(state): State<Arc<AppState>>, headers: HeaderMap, body: Bytes) -> Response {
    answer(&state, &headers, &body, true).await
}

fn error(status: StatusCode, message: &str) -> Response {
    (
        status,
        Json(json!({"message": message, "statusCode": status.as_u16()})),
    )
        .into_response()
}

async fn answer(state: &AppState, headers: &HeaderMap, body: &[u8], news: bool) -> Response {
    let has_key = headers
        .get("x-api-key")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| !v.trim().is_empty());
    if !has_key {
        return error(StatusCode::FORBIDDEN, "Unauthorized.");
    }
    let Ok(params) = serde_json::from_slice::<Params>(body) else {
        return error(StatusCode::BAD_REQUEST, "Invalid JSON body.");
    };
    let q = params.q.trim();
    if q.is_empty() {
        return error(StatusCode::BAD_REQUEST, "Missing query parameter.");
    }
    if let Some(failure) = super::hook(q).await {
        return failure;
    }
    let num = params.num.unwrap_or(10).clamp(1, 100);
    let page = params.page.unwrap_or(1).max(1);
    let kind = if news { "news" } else { "search" };
    let mut search_parameters = json!({
        "q": q, "type": kind, "num": num, "page": page, "engine": "google",
    });
    if let Some(tbs) = &params.tbs {
        search_parameters["tbs"] = tbs.as_str().into();
    }
    let ranked = super::ranked(state, q, (page - 1) * num, num);
    let items: Vec<Value> = ranked
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut item = json!({
                "title": r.title, "link": r.url, "snippet": r.snippet, "position": r.position,
            });
            if news {
                let source = url::Url::parse(&r.url)
                    .ok()
                    .and_then(|u| u.host_str().map(str::to_owned))
                    .unwrap_or_default();
                item["date"] = format!("{} hours ago", i + 1).into();
                item["source"] = source.into();
            }
            item
        })
        .collect();
    let list = if news { "news" } else { "organic" };
    let mut out = json!({"searchParameters": search_parameters, "credits": 1});
    out[list] = items.into();
    if !news && !ranked.is_empty() {
        out["relatedSearches"] = json!([{"query": format!("{q} explained")}]);
    }
    Json(out).into_response()
}
