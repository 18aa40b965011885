//! Tavily: `POST {base}/search` with `Authorization: Bearer <key>` and a JSON body
//! `{"query", "max_results", "search_depth", "include_answer", "topic", "time_range"}`.
//! Tavily has no pagination: page 1 is the whole answer (at most 20 results) and carries the
//! `answer` Tavily writes itself; later pages are empty without asking.

use async_trait::async_trait;
use reqwest::header::{HeaderValue, AUTHORIZATION};
use serde::Deserialize;
use serde_json::json;

use super::{
    json_body, Endpoint, Freshness, Hit, PageRequest, Provider, ProviderError, ResultPage,
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

#[async_trait]
impl Provider for Tavily {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn page(
        &self,
        http: &reqwest::Client,
        request: &PageRequest<'_>,
    ) -> Result<ResultPage, ProviderError> {
        if request.page > 1 {
            return Ok(ResultPage::default());
        }
        let mut body = json!({
            "query": request.query,
            "max_results": request.per_page.clamp(1, MAX_RESULTS),
            "search_depth": "basic",
            "include_answer": true,
            "topic": if request.news { "news" } else { "general" },
        });
        let range = match request.freshness {
            Freshness::Any => None,
            Freshness::Day => Some("day"),
            Freshness::Week => Some("week"),
            Freshness::Month => Some("month"),
            Freshness::Year => Some("year"),
        };
        if let Some(range) = range {
            body["time_range"] = range.into();
        }
        let mut builder = http.post(format!("{}/search", self.0.base_url)).json(&body);
        if let Some(key) = &self.0.api_key {
            // The message deliberately leaves the key out: errors end up in logs and search.json.
            let mut value = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| {
                ProviderError::Request {
                    provider: NAME,
                    reason: "the API key is not a valid header value".into(),
                }
            })?;
            value.set_sensitive(true);
            builder = builder.header(AUTHORIZATION, value);
        }
        let response = builder
            .send()
            .await
            .map_err(|e| ProviderError::from_reqwest(NAME, &e))?;
        ProviderError::check_status(NAME, &response)?;
        let body: Response = json_body(NAME, response).await?;
        let hits: Vec<Hit> = body
            .results
            .into_iter()
            .filter_map(|i| {
                Some(Hit {
                    url: i.url.filter(|u| !u.is_empty())?,
                    title: i.title,
                    snippet: i.content,
                })
            })
            .collect();
        let answer = body.answer.filter(|a| !a.trim().is_empty());
        Ok(ResultPage {
            hits,
            answer,
            more: false,
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
        let p = Tavily(endpoint(&web, "tavily", Some("tvly-test-key")));
        let keyless = Tavily(endpoint(&web, "tavily", None));
        let expect = Expect {
            paged: false,
            ..Expect::keyed("tvly-test-key")
        };
        let Pages { first, .. } = contract(&p, Some(&keyless), expect).await;
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
