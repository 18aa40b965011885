//! NewsAPI: `GET /v2/everything` with `q`, `pageSize` (≤ 100), `page`, `sortBy`, `language` and
//! `from`/`to`, keyed by the `X-Api-Key` header, an `Authorization` header or the `apiKey`
//! parameter. Like the free plan it stops at 100 results with HTTP 426 `maximumResultsReached`;
//! the `simweb:maxresults` marker asks for that answer on the first page.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};

use super::super::render::site_name;
use super::super::server::AppState;
use super::Ranked;

/// The developer plan's cap on `page * pageSize`.
const MAX_RESULTS: usize = 100;

pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new().route("/v2/everything", get(everything))
}

fn error(status: StatusCode, code: &str, message: &str) -> Response {
    (
        status,
        Json(json!({"status": "error", "code": code, "message": message})),
    )
        .into_response()
}

fn has_key(headers: &HeaderMap, params: &HashMap<String, String>) -> bool {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| !v.trim().is_empty())
    };
    header("x-api-key")
        || header("authorization")
        || params.get("apiKey").is_some_and(|k| !k.trim().is_empty())
}

/// NewsAPI takes an ISO 8601 date or date-time; this checks the `YYYY-MM-DD` head.
fn iso_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 10
        && b[4] == b'-'
        && b[7] == b'-'
        && [0, 1, 2, 3, 5, 6, 8, 9]
            .iter()
            .all(|&i| b[i].is_ascii_digit())
        && (b.len() == 10 || b[10] == b'T')
}

async fn everything(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    Query(params): Query<HashMap<String, String>>,
) -> Response {
    if !has_key(&headers, &params) {
        return error(
            StatusCode::UNAUTHORIZED,
            "apiKeyMissing",
            "Your API key is missing. Append this to the URL with the apiKey param, or use the x-api-key HTTP header.",
        );
    }
    let Some(q) = params.get("q").map(|s| s.trim()).filter(|s| !s.is_empty()) else {
        return error(
            StatusCode::BAD_REQUEST,
            "parametersMissing",
            "Required parameters are missing, the scope of your search is too broad. Please set any of the following required parameters and try again: q, qInTitle, sources, domains.",
        );
    };
    let page_size = match params.get("pageSize").map(|s| s.parse::<usize>()) {
        None => 100,
        Some(Ok(n)) if (1..=100).contains(&n) => n,
        Some(_) => {
            return error(
                StatusCode::BAD_REQUEST,
                "parameterInvalid",
                "pageSize must be between 1 and 100.",
            )
        }
    };
    let page = match params.get("page").map(|s| s.parse::<usize>()) {
        None => 1,
        Some(Ok(n)) if n >= 1 => n,
        Some(_) => {
            return error(
                StatusCode::BAD_REQUEST,
                "parameterInvalid",
                "page must be a positive integer.",
            )
        }
    };
    for name in ["from", "to"] {
        if params.get(name).is_some_and(|d| !iso_date(d)) {
            return error(
                StatusCode::BAD_REQUEST,
                "parameterInvalid",
                &format!("The '{name}' parameter is not in a valid format. Use ISO 8601."),
            );
        }
    }
    if q.contains("simweb:maxresults") || page.saturating_mul(page_size) > MAX_RESULTS {
        let start = (page - 1).saturating_mul(page_size);
        return error(
            StatusCode::UPGRADE_REQUIRED,
            "maximumResultsReached",
            &format!(
                "You have requested too many results. Developer accounts are limited to a max of {MAX_RESULTS} results. You are trying to request results {start} to {}. Please upgrade to a paid plan if you need more results.",
                start.saturating_add(page_size)
            ),
        );
    }
    if let Some(failure) = super::hook(q).await {
        return failure;
    }
    let total = super::ranked(&state, q, 0, usize::MAX).len();
    let articles: Vec<Value> = super::ranked(&state, q, (page - 1) * page_size, page_size)
        .iter()
        .map(article)
        .collect();
    Json(json!({"status": "ok", "totalResults": total, "articles": articles})).into_response()
}

fn article(r: &Ranked) -> Value {
    let host = url::Url::parse(&r.url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_default();
    let site = site_name(&host);
    // NewsAPI truncates `content` to 200 characters and appends how many were cut.
    let content = if r.snippet.chars().count() > 200 {
        let head: String = r.snippet.chars().take(200).collect();
        format!(
            "{head}… [+{} chars]",
            r.snippet.chars().count().saturating_sub(200)
        )
    } else {
        r.snippet.clone()
    };
    // Deterministic dates: lower-ranked articles are a little older.
    let day = 28 - (r.position % 27);
    json!({
        "source": {"id": null, "name": site},
        "author": format!("{site} Staff"),
        "title": r.title,
        "description": r.snippet,
        "url": r.url,
        "urlToImage": null,
        "publishedAt": format!("2024-05-{day:02}T{:02}:00:00Z", r.position % 24),
        "content": content,
    })
}
