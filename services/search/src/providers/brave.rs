//! Brave Search API: `GET {base}/res/v1/web/search` (or `/res/v1/news/search` for news) with
//! `q`, `count`, `offset` (a page *index* 0–9, not a result offset) and `freshness=pd|pw|pm|py`,
//! authenticated by the `X-Subscription-Token` header. Brave marks matched words with `<strong>`
//! and escapes the rest as HTML; hits carry plain text.

use serde::Deserialize;

use super::duckduckgo::text;
use super::{
    json, locale, secret, window, Endpoint, Hit, PageRequest, Provider, ProviderError, ResultPage,
};

const NAME: &str = "brave";
/// Brave rejects `count` above 20 on web search (422) ...
const MAX_WEB_COUNT: u32 = 20;
/// ... and above 50 on news search.
const MAX_NEWS_COUNT: u32 = 50;
/// `offset` is capped at 9, so Brave serves at most ten pages per query.
const MAX_PAGES: u32 = 10;

pub struct Brave(pub Endpoint);

#[derive(Deserialize)]
struct Response {
    #[serde(default)]
    query: Option<QueryInfo>,
    /// Web search nests its results here.
    #[serde(default)]
    web: Option<Results>,
    /// News search puts them at the top level.
    #[serde(default)]
    results: Option<Vec<Result>>,
}

#[derive(Deserialize)]
struct QueryInfo {
    #[serde(default)]
    more_results_available: bool,
}

#[derive(Deserialize)]
struct Results {
    #[serde(default)]
    results: Vec<Result>,
}

#[derive(Deserialize)]
struct Result {
    url: String,
    #[serde(default)]
    title: String,
    #[serde(default)]
    description: String,
}

/// Results asked per page, within the vertical's limit.
fn count(request: &PageRequest<'_>) -> u32 {
    let max = if request.news {
        MAX_NEWS_COUNT
    } else {
        MAX_WEB_COUNT
    };
    request.per_page.clamp(1, max)
}

impl Provider for Brave {
    fn name(&self) -> &'static str {
        NAME
    }

    fn takes_site_operators(&self) -> bool {
        true
    }

    fn request(
        &self,
        http: &reqwest::Client,
        request: &PageRequest<'_>,
    ) -> std::result::Result<Option<reqwest::RequestBuilder>, ProviderError> {
        if request.page > MAX_PAGES {
            // Brave would answer 422 for offset > 9; past its last page there is simply nothing.
            return Ok(None);
        }
        let path = if request.news {
            "/res/v1/news/search"
        } else {
            "/res/v1/web/search"
        };
        let mut query = vec![
            ("q", request.query.to_owned()),
            ("count", count(request).to_string()),
            ("offset", request.page.saturating_sub(1).to_string()),
        ];
        // Past day/week/month/year: pd, pw, pm, py.
        if let Some(w) = window(request.freshness) {
            query.push(("freshness", format!("p{}", &w[..1])));
        }
        if let Some(lang) = locale::brave_lang(request.locale) {
            query.push(("search_lang", lang.to_owned()));
        }
        if let Some(country) = locale::country(request.locale) {
            query.push(("country", country.to_ascii_uppercase()));
        }
        let mut builder = http
            .get(format!("{}{path}", self.0.base_url))
            .header(reqwest::header::ACCEPT, "application/json")
            .query(&query);
        if let Some(key) = &self.0.api_key {
            builder = builder.header("X-Subscription-Token", secret(NAME, key)?);
        }
        Ok(Some(builder))
    }

    fn read(
        &self,
        body: &[u8],
        request: &PageRequest<'_>,
    ) -> std::result::Result<ResultPage, ProviderError> {
        let body: Response = json(NAME, body)?;
        let results = match (body.web, body.results) {
            (Some(web), _) => web.results,
            (None, Some(results)) => results,
            // A web answer without a `web` section is how Brave says "no results".
            (None, None) => Vec::new(),
        };
        let more = request.page < MAX_PAGES
            && results.len() >= count(request) as usize
            && body.query.is_some_and(|q| q.more_results_available);
        let hits = (results.into_iter())
            .map(|r| Hit {
                url: r.url,
                title: text(&r.title),
                snippet: text(&r.description),
            })
            .collect();
        Ok(ResultPage::of(hits, more))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{
        contract, endpoint, http, question, request, simweb, Expect, Pages,
    };
    use super::*;
    use crate::providers::Freshness;

    #[tokio::test]
    async fn brave_pages_and_errors() {
        let web = simweb().await;
        let p: &dyn Provider = &Brave(endpoint(&web, "brave", Some("test-key")));
        let keyless = Brave(endpoint(&web, "brave", None));
        let Pages { first, .. } = contract(p, Some(&keyless), Expect::keyed("test-key")).await;
        assert!(first
            .hits
            .iter()
            .all(|h| !h.snippet.contains('<') && !h.title.contains('<')));

        let q = question();
        let mut news = request(&q.query, 1);
        news.news = true;
        let news = p.page(&http(), &news).await.unwrap();
        assert!(news.hits.iter().any(|h| q.answer_urls.contains(&h.url)));

        let beyond = p.page(&http(), &request(&q.query, 11)).await.unwrap();
        assert!(beyond.hits.is_empty() && !beyond.more);
    }

    #[tokio::test]
    async fn brave_sends_freshness_and_strips_tags() {
        let web = simweb().await;
        let p: &dyn Provider = &Brave(endpoint(&web, "brave", Some("test-key")));
        let q = question();
        let mut req = request(&q.query, 1);
        req.freshness = Freshness::Week;
        // simweb echoes the freshness it received in the `query` object.
        let raw: serde_json::Value = p
            .request(&http(), &req)
            .unwrap()
            .unwrap()
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(raw["query"]["freshness"], "pw");
        let described = raw["web"]["results"][0]["description"].as_str().unwrap();
        assert!(described.contains("<strong>"), "{described}");
        let page = p.page(&http(), &req).await.unwrap();
        assert!(!page.hits[0].snippet.contains("<strong>"));
        assert_eq!(text("a <strong>b</strong> &amp; c&#x27;s"), "a b & c's");
    }
}
