//! SerpApi's Google engine: `GET /search.json?engine=google&q=…&api_key=…&num=…&start=…`
//! (`tbm=nws` for news). Like SerpApi it answers "no results" as a 200 carrying an `error`, and
//! offers `serpapi_pagination.next` only when another page exists.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};

use super::super::server::AppState;

const NO_RESULTS: &str = "Google hasn't returned any results for this query.";

pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new().route("/search.json", get(search))
}

fn error(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({ "error": message }))).into_response()
}

async fn search(
    State(state): State<Arc<AppState>>,
    Query(params): Query<HashMap<String, String>>,
) -> Response {
    let get = |name: &str| params.get(name).map(|v| v.trim()).filter(|v| !v.is_empty());
    if get("api_key").is_none() {
        return error(
            StatusCode::UNAUTHORIZED,
            "Invalid API key. Your API key should be here: https://serpapi.com/manage-api-key",
        );
    }
    let engine = get("engine").unwrap_or("google");
    if engine != "google" {
        return error(
            StatusCode::BAD_REQUEST,
            &format!("Unsupported `{engine}` search engine."),
        );
    }
    let Some(q) = get("q") else {
        return error(StatusCode::BAD_REQUEST, "Missing query `q` parameter.");
    };
    if let Some(failure) = super::hook(q).await {
        return failure;
    }
    let num = get("num")
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(10)
        .clamp(1, 100);
    let start = get("start")
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(0);
    let news = get("tbm") == Some("nws");
    // One extra result tells whether a next page exists.
    let mut ranked = super::ranked(&state, q, start, num + 1);
    let has_next = ranked.len() > num;
    ranked.truncate(num);

    let mut search_parameters = json!({
        "engine": "google", "q": q, "google_domain": "google.com", "device": "desktop",
        "num": num.to_string(), "start": start,
    });
    for name in ["tbm", "tbs"] {
        if let Some(v) = get(name) {
            search_parameters[name] = v.into();
        }
    }
    let mut out = json!({
        "search_metadata": {
            "id": "6650f0c2e1b2a3c4d5e6f708",
            "status": "Success",
            "json_endpoint": "https://serpapi.com/searches/6650f0c2e1b2a3c4d5e6f708.json",
            "created_at": "2024-05-24 20:00:00 UTC",
            "processed_at": "2024-05-24 20:00:00 UTC",
            "total_time_taken": 1.02,
        },
        "search_parameters": search_parameters,
    });
    if ranked.is_empty() {
        out["search_information"] = json!({"organic_results_state": "Fully empty"});
        out["error"] = NO_RESULTS.into();
        return Json(out).into_response();
    }
    out["search_information"] = json!({
        "organic_results_state": "Results for exact spelling",
        "query_displayed": q,
        "total_results": 1000 + ranked.len(),
        "time_taken_displayed": 0.31,
    });
    let items: Vec<Value> = ranked
        .iter()
        .map(|r| {
            let host = url::Url::parse(&r.url)
                .ok()
                .and_then(|u| u.host_str().map(str::to_owned))
                .unwrap_or_default();
            let mut item = json!({
                "position": r.position, "title": r.title, "link": r.url, "snippet": r.snippet,
                "source": host,
            });
            if news {
                item["date"] = format!("{} days ago", r.position).into();
            } else {
                item["displayed_link"] = r.url.clone().into();
            }
            item
        })
        .collect();
    out[if news {
        "news_results"
    } else {
        "organic_results"
    }] = items.into();
    let current = start / num + 1;
    let mut pagination = json!({ "current": current, "other_pages": {} });
    if has_next {
        let mut next = url::Url::parse("https://serpapi.com/search.json").ok();
        if let Some(next) = next.as_mut() {
            next.query_pairs_mut()
                .append_pair("engine", "google")
                .append_pair("q", q)
                .append_pair("num", &num.to_string())
                .append_pair("start", &(start + num).to_string());
        }
        let next = next.map(String::from).unwrap_or_default();
        pagination["next_link"] = next.clone().into();
        pagination["next"] = next.into();
    }
    out["serpapi_pagination"] = pagination;
    Json(out).into_response()
}
