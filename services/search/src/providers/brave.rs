//! Brave Search API: `GET {base}/res/v1/web/search` (or `/res/v1/news/search` for news) with
//! `q`, `count`, `offset` (a page *index* 0–9, not a result offset) and `freshness=pd|pw|pm|py`,
//! authenticated by the `X-Subscription-Token` header.

use async_trait::async_trait;
use serde::Deserialize;

use super::{
    json_body, Endpoint, Freshness, Hit, PageRequest, Provider, ProviderError, ResultPage,
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

/// Brave's freshness codes: past day/week/month/year.
fn freshness(f: Freshness) -> Option<&'static str> {
    match f {
        Freshness::Any => None,
        Freshness::Day => Some("pd"),
        Freshness::Week => Some("pw"),
        Freshness::Month => Some("pm"),
        Freshness::Year => Some("py"),
    }
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

impl Brave {
    /// The request for one page; separate so tests can inspect what is sent.
    fn build(&self, http: &reqwest::Client, request: &PageRequest<'_>) -> reqwest::RequestBuilder {
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
        if let Some(f) = freshness(request.freshness) {
            query.push(("freshness", f.to_owned()));
        }
        let mut builder = http
            .get(format!("{}{path}", self.0.base_url))
            .header(reqwest::header::ACCEPT, "application/json")
            .query(&query);
        if let Some(key) = &self.0.api_key {
            builder = builder.header("X-Subscription-Token", key);
        }
        builder
    }
}

#[async_trait]
impl Provider for Brave {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn page(
        &self,
        http: &reqwest::Client,
        request: &PageRequest<'_>,
    ) -> std::result::Result<ResultPage, ProviderError> {
        if request.page > MAX_PAGES {
            // Brave would answer 422 for offset > 9; past its last page there is simply nothing.
            return Ok(ResultPage::default());
        }
        let response = self
            .build(http, request)
            .send()
            .await
            .map_err(|e| ProviderError::from_reqwest(NAME, &e))?;
        ProviderError::check_status(NAME, &response)?;
        let body: Response = json_body(NAME, response).await?;
        let results = match (body.web, body.results) {
            (Some(web), _) => web.results,
            (None, Some(results)) => results,
            // A web answer without a `web` section is how Brave says "no results".
            (None, None) => Vec::new(),
        };
        let more = request.page < MAX_PAGES
            && results.len() >= count(request) as usize
            && body.query.is_some_and(|q| q.more_results_available);
        Ok(ResultPage {
            hits: results
                .into_iter()
                .map(|r| Hit {
                    url: r.url,
                    title: strip_tags(&r.title),
                    snippet: strip_tags(&r.description),
                })
                .collect(),
            answer: None,
            more,
        })
    }
}

/// Brave marks matched words with `<strong>` and escapes the rest as HTML; hits carry plain text.
fn strip_tags(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_tag = false;
    for c in s.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#x27;", "'")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::super::testing::{
        contract, endpoint, http, question, request, simweb, Expect, Pages,
    };
    use super::*;

    #[tokio::test]
    async fn brave_pages_and_errors() {
        let web = simweb().await;
        let p = Brave(endpoint(&web, "brave", Some("test-key")));
        let keyless = Brave(endpoint(&web, "brave", None));
        let Pages { first, .. } = contract(&p, Some(&keyless), Expect::keyed("test-key")).await;
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
        let p = Brave(endpoint(&web, "brave", Some("test-key")));
        let q = question();
        let mut req = request(&q.query, 1);
        req.freshness = Freshness::Week;
        // simweb echoes the freshness it received in the `query` object.
        let raw: serde_json::Value = p
            .build(&http(), &req)
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
        assert_eq!(
            strip_tags("a <strong>b</strong> &amp; c&#x27;s"),
            "a b & c's"
        );
    }
}
