//! DuckDuckGo's HTML endpoint: `GET|POST /html/` with `q`, the offset `s` (and `df`), answering
//! a results page in DDG's markup: `result__a` links through `//duckduckgo.com/l/?uddg=…`
//! redirects, `result__snippet` with matched terms in `<b>`, a "Next" form when there is more,
//! and a `no-results` block when there is nothing. DDG decides the page size itself (no count
//! parameter), here ten. A query containing `simweb:captcha` gets DDG's bot-check page, which
//! DDG serves with HTTP 202.

use std::collections::HashMap;
use std::fmt::Write;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use super::super::render::escape;
use super::super::server::AppState;

const PAGE: usize = 10;

pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new().route("/html/", get(html).post(html))
}

/// DDG's HTML escaping: the usual four plus `'` as `&#x27;`.
fn esc(s: &str) -> String {
    escape(s).replace('\'', "&#x27;")
}

fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html PUBLIC \"-//W3C//DTD HTML 4.01 Transitional//EN\">\n<html>\n<head>\n\
         <meta http-equiv=\"content-type\" content=\"text/html; charset=UTF-8\">\n\
         <title>{}</title>\n</head>\n<body>\n\
         <div class=\"header_wrapper\"><form id=\"search_form\" action=\"/html/\" method=\"post\">\
         <input class=\"search__input\" type=\"text\" name=\"q\" value=\"\"></form></div>\n\
         {body}\n</body>\n</html>\n",
        esc(title)
    )
}

async fn html(
    State(state): State<Arc<AppState>>,
    RawQuery(raw): RawQuery,
    body: Bytes,
) -> Response {
    // GET carries the fields in the query string, POST in a form body; the body wins.
    let raw = raw.unwrap_or_default();
    let params: HashMap<String, String> = url::form_urlencoded::parse(raw.as_bytes())
        .chain(url::form_urlencoded::parse(&body))
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    let q = params.get("q").map(|q| q.trim()).unwrap_or_default();
    if q.is_empty() {
        return Html(page("DuckDuckGo", "<div id=\"links\"></div>")).into_response();
    }
    if q.contains("simweb:captcha") {
        let body = "<div class=\"anomaly-modal__modal\" data-testid=\"anomaly-modal\">\
             <div class=\"anomaly-modal__title\">Unfortunately, bots use DuckDuckGo too.</div>\
             <div class=\"anomaly-modal__description\">Please complete the following challenge \
             to confirm this search was made by a human.</div></div>";
        return (StatusCode::ACCEPTED, Html(page("DuckDuckGo", body))).into_response();
    }
    if let Some(failure) = super::hook(q).await {
        return failure;
    }
    let offset = params
        .get("s")
        .and_then(|s| s.parse::<usize>().ok())
        .unwrap_or(0);
    // One extra result tells whether to show the "Next" form.
    let mut ranked = super::ranked(&state, q, offset, PAGE + 1);
    let more = ranked.len() > PAGE;
    ranked.truncate(PAGE);
    let title = format!("{q} at DuckDuckGo");
    if ranked.is_empty() {
        let body = "<div id=\"links\" class=\"results\">\
             <div class=\"result results_links results_links_deep result--no-result\">\
             <div class=\"no-results\">No  results.</div></div></div>";
        return Html(page(&title, body)).into_response();
    }
    let terms: Vec<String> = q
        .split_whitespace()
        .map(|t| {
            t.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .filter(|t| t.chars().count() > 3)
        .collect();
    let mut body = String::from("<div id=\"links\" class=\"results\">\n");
    for r in &ranked {
        let encoded: String = url::form_urlencoded::byte_serialize(r.url.as_bytes()).collect();
        let href = format!(
            "//duckduckgo.com/l/?uddg={encoded}&amp;rut=abc{}",
            r.position
        );
        let shown = r
            .url
            .trim_start_matches("http://")
            .trim_start_matches("https://");
        let _ = write!(
            body,
            "<div class=\"result results_links results_links_deep web-result \">\n\
             <div class=\"links_main links_deep result__body\">\n\
             <h2 class=\"result__title\">\n\
             <a rel=\"nofollow\" class=\"result__a\" href=\"{href}\">{}</a>\n</h2>\n\
             <div class=\"result__extras\"><div class=\"result__extras__url\">\
             <a class=\"result__url\" href=\"{href}\">{}</a></div></div>\n\
             <a class=\"result__snippet\" href=\"{href}\">{}</a>\n\
             <div class=\"clear\"></div>\n</div>\n</div>\n",
            esc(&r.title),
            esc(shown),
            bold_terms(&r.snippet, &terms)
        );
    }
    if more {
        let _ = write!(
            body,
            "<div class=\"nav-link\">\n<form action=\"/html/\" method=\"post\">\n\
             <input type=\"submit\" class=\"btn btn--alt\" value=\"Next\" />\n\
             <input type=\"hidden\" name=\"q\" value=\"{}\" />\n\
             <input type=\"hidden\" name=\"s\" value=\"{}\" />\n\
             <input type=\"hidden\" name=\"v\" value=\"l\" />\n\
             <input type=\"hidden\" name=\"o\" value=\"json\" />\n\
             <input type=\"hidden\" name=\"dc\" value=\"{}\" />\n\
             <input type=\"hidden\" name=\"api\" value=\"d.js\" />\n\
             </form>\n</div>\n",
            esc(q),
            offset + PAGE,
            offset + PAGE + 1
        );
    }
    body.push_str("</div>");
    Html(page(&title, &body)).into_response()
}

/// The snippet escaped, with words matching a query term in `<b>` as DDG marks them.
fn bold_terms(snippet: &str, terms: &[String]) -> String {
    snippet
        .split(' ')
        .map(|word| {
            let core = word.trim_matches(|c: char| !c.is_alphanumeric());
            if !core.is_empty() && terms.contains(&core.to_lowercase()) {
                let core = esc(core);
                esc(word).replacen(&core, &format!("<b>{core}</b>"), 1)
            } else {
                esc(word)
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
