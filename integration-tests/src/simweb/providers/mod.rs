//! The commercial search providers' wire formats over the same corpus as the SearXNG endpoint,
//! each under its own path prefix so one server can stand in for all of them (point a
//! provider's `search.endpoints` entry at `http://ADDR/<prefix>`):
//!
//! | provider | prefix | endpoint(s) |
//! |---|---|---|
//! | DuckDuckGo | `/duckduckgo` | `GET|POST /html/` |
//! | Serper | `/serper` | `POST /search`, `POST /news` |
//! | SerpApi | `/serpapi` | `GET /search.json` |
//! | Tavily | `/tavily` | `POST /search` |
//! | Brave | `/brave` | `GET /res/v1/web/search`, `GET /res/v1/news/search` |
//! | NewsAPI | `/newsapi` | `GET /v2/everything` |
//! | Bocha | `/bocha` | `POST /v1/web-search` |
//!
//! Queries containing these markers trigger failures, for testing error handling everywhere:
//! `simweb:error` (HTTP 500), `simweb:html` (200 with an HTML body), `simweb:malformed` (200 with
//! truncated JSON), `simweb:429` (429 with `Retry-After: 7`), `simweb:slow` (answers after 30 s),
//! `simweb:empty` (a well-formed answer with no results). Requests without the provider's API key
//! header get its 401/403 answer.

use std::sync::Arc;

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;

use super::server::AppState;

pub mod bocha;
pub mod brave;
pub mod duckduckgo;
pub mod newsapi;
pub mod serpapi;
pub mod serper;
pub mod tavily;

pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .nest("/duckduckgo", duckduckgo::routes())
        .nest("/serper", serper::routes())
        .nest("/serpapi", serpapi::routes())
        .nest("/tavily", tavily::routes())
        .nest("/brave", brave::routes())
        .nest("/newsapi", newsapi::routes())
        .nest("/bocha", bocha::routes())
}

/// The failure a marker in `query` asks for, if any (`simweb:empty` is left to each provider,
/// which answers its own empty shape).
pub(crate) async fn hook(query: &str) -> Option<Response> {
    if query.contains("simweb:error") {
        return Some((StatusCode::INTERNAL_SERVER_ERROR, "internal error").into_response());
    }
    if query.contains("simweb:html") {
        return Some(
            (
                [(header::CONTENT_TYPE, "text/html")],
                "<html><body><h1>Please verify you are human</h1></body></html>",
            )
                .into_response(),
        );
    }
    if query.contains("simweb:malformed") {
        return Some(
            (
                [(header::CONTENT_TYPE, "application/json")],
                "{\"results\": [{\"url\": \"http://a.te",
            )
                .into_response(),
        );
    }
    if query.contains("simweb:429") {
        return Some(
            (
                StatusCode::TOO_MANY_REQUESTS,
                [(header::RETRY_AFTER, "7")],
                "slow down",
            )
                .into_response(),
        );
    }
    if query.contains("simweb:slow") {
        tokio::time::sleep(std::time::Duration::from_secs(30)).await;
        return Some((StatusCode::GATEWAY_TIMEOUT, "too slow").into_response());
    }
    None
}

/// A result as every provider format needs it.
pub(crate) struct Ranked {
    pub url: String,
    pub title: String,
    pub snippet: String,
    /// 1-based rank over the whole result list.
    pub position: usize,
}

/// Results `offset..offset + count` for `query`, ranked as the SearXNG endpoint ranks them;
/// none for `simweb:empty`.
pub(crate) fn ranked(state: &AppState, query: &str, offset: usize, count: usize) -> Vec<Ranked> {
    if query.contains("simweb:empty") {
        return Vec::new();
    }
    let pages = state.corpus.pages();
    state
        .index
        .search(query)
        .into_iter()
        .enumerate()
        .skip(offset)
        .take(count)
        .map(|(i, hit)| {
            let page = &pages[hit.page];
            Ranked {
                url: page.url.clone(),
                title: page.title.clone(),
                snippet: state.index.snippet(&page.text, query),
                position: i + 1,
            }
        })
        .collect()
}
