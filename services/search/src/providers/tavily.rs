//! Tavily: `POST {base}/search` with `Authorization: Bearer <key>` and a JSON body
//! `{"query", "max_results", "search_depth", "include_answer", "topic", "time_range",
//! "include_domains", "exclude_domains"}`.
//! Tavily has no pagination: page 1 is the whole answer (at most 20 results) and carries the
//! `answer` Tavily writes itself; later pages are empty without asking.

use reqwest::header::AUTHORIZATION;
use serde::Deserialize;
use serde_json::json;

use super::{
    json, secret, window, Endpoint, Hit, PageRequest, Provider, ProviderError, ResultPage,
};

const NAME: &str = "tavily";
/// Tavily's documented ceiling for `max_results`.
const MAX_RESULTS: u32 = 20;

pub struct Tavily(pub Endpoint);

#[derive(Deserialize)]
struct Response {
    answer: Option<String>,
    // Required: a body without it is not a Tavily search answer.
    results: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    url: Option<String>,
    #[serde(default)]
    title: String,
    #[serde(default)]
    content: String,
}

impl Provider for Tavily {
    fn name(&self) -> &'static str {
        NAME
    }

    fn request(
        &self,
        http: &reqwest::Client,
        request: &PageRequest<'_>,
    ) -> Result<Option<reqwest::RequestBuilder>, ProviderError> {
        if request.page > 1 {
            return Ok(None);
        }
        let mut body = json!({
            "query": request.query,
            "max_results": request.per_page.clamp(1, MAX_RESULTS),
            "search_depth": "basic",
            "include_answer": true,
            "topic": if request.news { "news" } else { "general" },
        });
        if let Some(range) = window(request.freshness) {
            body["time_range"] = range.into();
        }
        if !request.domains.include.is_empty() {
            body["include_domains"] = json!(request.domains.include);
        }
        if !request.domains.exclude.is_empty() {
            body["exclude_domains"] = json!(request.domains.exclude);
        }
        let mut builder = http.post(format!("{}/search", self.0.base_url)).json(&body);
        if let Some(key) = &self.0.api_key {
            builder = builder.header(AUTHORIZATION, secret(NAME, &format!("Bearer {key}"))?);
        }
        Ok(Some(builder))
    }

    fn read(&self, body: &[u8], _: &PageRequest<'_>) -> Result<ResultPage, ProviderError> {
        let body: Response = json(NAME, body)?;
        let hits = (body.results.into_iter())
            .filter_map(|i| Hit::new(i.url, i.title, i.content))
            .collect();
        Ok(ResultPage {
            answer: body.answer.filter(|a| !a.trim().is_empty()),
            ..ResultPage::of(hits, false)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{
        contract, endpoint, http, question, request, simweb, Expect, Pages,
    };
    use super::*;

    #[tokio::test]
    async fn tavily_one_page_with_answer_and_errors() {
        let web = simweb().await;
        let p: &dyn Provider = &Tavily(endpoint(&web, "tavily", Some("tvly-test-key")));
        let keyless = Tavily(endpoint(&web, "tavily", None));
        let expect = Expect {
            paged: false,
            ..Expect::keyed("tvly-test-key")
        };
        let Pages { first, .. } = contract(p, Some(&keyless), expect).await;
        let answer = first.answer.expect("answer on page 1");
        assert!(answer.contains(&first.hits[0].snippet), "{answer}");

        // Page 2 is empty without asking Tavily.
        let q = question();
        let before = web.path_hits("127.0.0.1", "/tavily/search");
        let second = p.page(&http(), &request(&q.query, 2)).await.unwrap();
        assert_eq!(second, ResultPage::default());
        assert_eq!(web.path_hits("127.0.0.1", "/tavily/search"), before);
    }
}
