//! Bocha Web Search API: `POST /v1/web-search` with a JSON body
//! `{"query","freshness","summary","count","page"}` and `Authorization: Bearer <key>`, answered
//! in Bocha's `{"code","log_id","msg","data"}` envelope. `queryContext` also echoes the
//! `freshness` received, which real Bocha does not do, so tests can check what a client sent.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};

use super::super::render::site_name;
use super::super::server::AppState;
use super::Ranked;

const FRESHNESS: [&str; 5] = ["noLimit", "oneDay", "oneWeek", "oneMonth", "oneYear"];

pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new().route("/v1/web-search", post(web_search))
}

#[derive(Deserialize)]
struct Request {
    #[serde(default)]
    query: String,
    #[serde(default)]
    freshness: Option<String>,
    #[serde(default)]
    summary: bool,
    #[serde(default)]
    count: Option<u64>,
    #[serde(default)]
    page: Option<u64>,
}

/// A per-request id like Bocha's 16 hex digits, derived from the query so answers stay
/// deterministic.
fn log_id(query: &str) -> String {
    let hash = query.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    format!("{hash:016x}")
}

fn error(status: StatusCode, msg: &str, query: &str) -> Response {
    let body = json!({"code": status.as_u16(), "msg": msg, "log_id": log_id(query)});
    (status, Json(body)).into_response()
}

async fn web_search(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let bearer = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|k| !k.trim().is_empty());
    if !bearer {
        return error(StatusCode::UNAUTHORIZED, "Invalid API KEY", "");
    }
    let Ok(req) = serde_json::from_slice::<Request>(&body) else {
        return error(StatusCode::BAD_REQUEST, "Invalid request body", "");
    };
    let q = req.query.trim();
    if q.is_empty() {
        return error(StatusCode::BAD_REQUEST, "Missing parameter query", "");
    }
    let freshness = req.freshness.as_deref().unwrap_or("noLimit");
    // Bocha also takes `YYYY-MM-DD..YYYY-MM-DD` ranges and single dates.
    if !FRESHNESS.contains(&freshness) && !freshness.starts_with(|c: char| c.is_ascii_digit()) {
        return error(StatusCode::BAD_REQUEST, "Invalid parameter freshness", q);
    }
    let count = req.count.unwrap_or(10);
    if !(1..=50).contains(&count) {
        return error(StatusCode::BAD_REQUEST, "Invalid parameter count", q);
    }
    let page = req.page.unwrap_or(1).max(1);
    if let Some(failure) = super::hook(q).await {
        return failure;
    }
    // Both fit: count ≤ 50, and a page beyond usize is beyond every result anyway.
    let count = count as usize;
    let offset = usize::try_from(page - 1)
        .unwrap_or(usize::MAX)
        .saturating_mul(count);
    let total = super::ranked(&state, q, 0, usize::MAX).len();
    let ranked = super::ranked(&state, q, offset, count);
    let id = log_id(q);
    let query_context = json!({"originalQuery": q, "freshness": freshness});
    let data = if total == 0 {
        // Bocha leaves `webPages` out when nothing matched.
        json!({"_type": "SearchResponse", "queryContext": query_context, "images": null, "videos": null})
    } else {
        let value: Vec<Value> = ranked
            .iter()
            .map(|r| web_page(r, req.summary, &id))
            .collect();
        json!({
            "_type": "SearchResponse",
            "queryContext": query_context,
            "webPages": {
                "webSearchUrl": format!("https://bochaai.com/search?q={}", url_encode(q)),
                "totalEstimatedMatches": total,
                "value": value,
                "someResultsRemoved": false,
            },
            "images": null,
            "videos": null,
        })
    };
    Json(json!({"code": 200, "log_id": id, "msg": null, "data": data})).into_response()
}

fn web_page(r: &Ranked, summary: bool, log_id: &str) -> Value {
    let host = url::Url::parse(&r.url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_default();
    // The snippet is a short cut of the summary, as Bocha's is.
    let snippet: String = r.snippet.chars().take(120).collect();
    let day = 28 - (r.position % 27);
    let mut v = json!({
        "id": format!("https://api.bochaai.com/v1/#WebPages.{}", r.position - 1),
        "name": r.title,
        "url": r.url,
        "displayUrl": r.url,
        "snippet": snippet,
        "siteName": site_name(&host),
        "siteIcon": format!("https://th.bochaai.com/favicon?domain_url={}", r.url),
        "datePublished": format!("2024-05-{day:02}T08:00:00+08:00"),
        "dateLastCrawled": format!("2024-05-{day:02}T08:00:00Z"),
        "cachedPageUrl": null,
        "language": null,
        "isFamilyFriendly": null,
        "isNavigational": null,
        "logId": log_id,
    });
    if summary {
        if let Some(obj) = v.as_object_mut() {
            obj.insert("summary".into(), json!(r.snippet));
        }
    }
    v
}

fn url_encode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}
