//! Brave Search API: `GET /res/v1/web/search` and `GET /res/v1/news/search` with `q`, `count`
//! (web ≤ 20, news ≤ 50), `offset` (a page index 0–9) and `freshness`, keyed by the
//! `X-Subscription-Token` header. Descriptions are HTML with matched words in `<strong>`, as
//! Brave sends them. The `query` object also echoes the `freshness` received, which real Brave
//! does not do, so tests can check what a client sent.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};

use super::super::render::{escape, site_name};
use super::super::search::tokenize;
use super::super::server::AppState;
use super::Ranked;

pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route(
            "/res/v1/web/search",
            get(|s, h, q| search(s, h, q, Vertical::Web)),
        )
        .route(
            "/res/v1/news/search",
            get(|s, h, q| search(s, h, q, Vertical::News)),
        )
}

#[derive(Clone, Copy, PartialEq)]
enum Vertical {
    Web,
    News,
}

/// Brave's error envelope.
fn error(status: StatusCode, code: &str, detail: &str) -> Response {
    let body = json!({
        "type": "ErrorResponse",
        "error": {
            "id": "00000000-0000-4000-8000-000000000000",
            "status": status.as_u16(),
            "code": code,
            "detail": detail,
            "meta": {"component": "authentication"},
        },
        "time": 1_700_000_000,
    });
    (status, Json(body)).into_response()
}

fn invalid(detail: &str) -> Response {
    error(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION", detail)
}

async fn search(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    Query(params): Query<HashMap<String, String>>,
    vertical: Vertical,
) -> Response {
    let token = headers
        .get("x-subscription-token")
        .and_then(|v| v.to_str().ok())
        .map(str::trim);
    match token {
        None => return invalid("Unable to validate request parameter(s)"),
        Some("") => {
            return error(
                StatusCode::UNAUTHORIZED,
                "SUBSCRIPTION_TOKEN_INVALID",
                "The provided subscription token is invalid.",
            )
        }
        Some(_) => {}
    }
    let Some(q) = params.get("q").map(|s| s.trim()).filter(|s| !s.is_empty()) else {
        return invalid("Unable to validate request parameter(s)");
    };
    let max_count = if vertical == Vertical::Web { 20 } else { 50 };
    let count = match params.get("count").map(|c| c.parse::<usize>()) {
        None => 20,
        Some(Ok(c)) if (1..=max_count).contains(&c) => c,
        Some(_) => return invalid("count is out of range"),
    };
    let offset = match params.get("offset").map(|o| o.parse::<usize>()) {
        None => 0,
        Some(Ok(o)) if o <= 9 => o,
        Some(_) => return invalid("offset must be between 0 and 9"),
    };
    let freshness = params.get("freshness").cloned();
    if let Some(f) = &freshness {
        if !["pd", "pw", "pm", "py"].contains(&f.as_str()) && !f.contains("to") {
            return invalid("freshness is invalid");
        }
    }
    if let Some(failure) = super::hook(q).await {
        return failure;
    }
    // One extra result tells whether another page exists.
    let mut ranked = super::ranked(&state, q, offset * count, count + 1);
    let more = ranked.len() > count && offset < 9;
    ranked.truncate(count);
    let terms: BTreeSet<String> = tokenize(q).into_iter().collect();
    let results: Vec<Value> = ranked.iter().map(|r| result(r, &terms, vertical)).collect();
    let query = json!({
        "original": q,
        "show_strict_warning": false,
        "is_navigational": false,
        "is_news_breaking": false,
        "spellcheck_off": true,
        "country": "us",
        "bad_results": false,
        "should_fallback": false,
        "postal_code": "",
        "city": "",
        "header_country": "",
        "more_results_available": more,
        "state": "",
        "freshness": freshness,
    });
    // `mixed.main` lists the order in which Brave's own page shows the web results.
    let main: Vec<Value> = (0..results.len())
        .map(|i| json!({"type": "web", "index": i, "all": false}))
        .collect();
    let body = match vertical {
        Vertical::News => json!({"type": "news", "query": query, "results": results}),
        // Brave leaves the `web` section out when nothing matched.
        Vertical::Web if results.is_empty() => json!({"type": "search", "query": query}),
        Vertical::Web => json!({
            "type": "search",
            "query": query,
            "mixed": {
                "type": "mixed",
                "main": main,
                "top": [],
                "side": [],
            },
            "web": {"type": "search", "results": results, "family_friendly": true},
        }),
    };
    Json(body).into_response()
}

fn result(r: &Ranked, terms: &BTreeSet<String>, vertical: Vertical) -> Value {
    let parsed = url::Url::parse(&r.url).ok();
    let host = parsed
        .as_ref()
        .and_then(|u| u.host_str())
        .unwrap_or_default()
        .to_owned();
    let path = parsed.as_ref().map(|u| u.path()).unwrap_or("/");
    // Deterministic, plausible ages: lower-ranked results are a little older.
    let days = r.position % 28 + 1;
    let meta_url = json!({
        "scheme": "http",
        "netloc": host,
        "hostname": host,
        "favicon": format!("https://imgs.search.brave.com/favicon/{host}"),
        "path": format!("› {}", path.trim_start_matches('/').replace('/', " › ")),
    });
    let mut v = json!({
        "title": escape(&r.title),
        "url": r.url,
        "description": highlight(&r.snippet, terms),
        "age": format!("{days} days ago"),
        "page_age": format!("2024-05-{:02}T08:00:00", 29 - days),
        "meta_url": meta_url,
    });
    if let Some(obj) = v.as_object_mut() {
        if vertical == Vertical::News {
            obj.insert("type".into(), json!("news_result"));
            obj.insert("breaking".into(), json!(false));
        } else {
            obj.insert("type".into(), json!("search_result"));
            obj.insert("subtype".into(), json!("generic"));
            obj.insert("is_source_local".into(), json!(false));
            obj.insert("is_source_both".into(), json!(false));
            obj.insert("language".into(), json!("en"));
            obj.insert("family_friendly".into(), json!(true));
            obj.insert(
                "profile".into(),
                json!({"name": site_name(&host), "url": r.url, "long_name": host, "img": ""}),
            );
        }
    }
    v
}

/// HTML-escapes `text` and wraps each word that is a query term in `<strong>`, as Brave does.
fn highlight(text: &str, terms: &BTreeSet<String>) -> String {
    let mut out = String::with_capacity(text.len() + 32);
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if word.is_empty() {
            return;
        }
        if terms.contains(&word.to_lowercase()) {
            out.push_str("<strong>");
            out.push_str(word);
            out.push_str("</strong>");
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_alphanumeric() {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push_str(&escape(c.encode_utf8(&mut [0; 4])));
        }
    }
    flush(&mut word, &mut out);
    out
}
