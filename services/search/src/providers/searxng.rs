//! SearXNG's JSON API: `GET {base}/search?q=…&format=json&pageno=N[&time_range=day]`.
//! The instance must have the `json` output format enabled (SearXNG answers 403 otherwise).

use async_trait::async_trait;
use serde::Deserialize;

use super::{
    json_body, Endpoint, Freshness, Hit, PageRequest, Provider, ProviderError, ResultPage,
};

const NAME: &str = "searxng";

pub struct Searxng(pub Endpoint);

#[derive(Deserialize)]
struct Response {
    #[serde(default)]
    results: Vec<Result>,
}

#[derive(Deserialize)]
struct Result {
    url: String,
    #[serde(default)]
    title: String,
    #[serde(default)]
    content: String,
}

#[async_trait]
impl Provider for Searxng {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn page(
        &self,
        http: &reqwest::Client,
        request: &PageRequest<'_>,
    ) -> std::result::Result<ResultPage, ProviderError> {
        let mut query = vec![
            ("q", request.query.to_owned()),
            ("format", "json".to_owned()),
            ("pageno", request.page.to_string()),
        ];
        if request.news {
            query.push(("categories", "news".to_owned()));
        }
        let range = match request.freshness {
            Freshness::Any => None,
            Freshness::Day => Some("day"),
            Freshness::Week => Some("week"),
            Freshness::Month => Some("month"),
            Freshness::Year => Some("year"),
        };
        if let Some(range) = range {
            query.push(("time_range", range.to_owned()));
        }
        let response = http
            .get(format!("{}/search", self.0.base_url))
            .query(&query)
            .send()
            .await
            .map_err(|e| ProviderError::from_reqwest(NAME, &e))?;
        ProviderError::check_status(NAME, &response)?;
        let body: Response = json_body(NAME, response).await?;
        let more = !body.results.is_empty();
        Ok(ResultPage {
            hits: body
                .results
                .into_iter()
                .map(|r| Hit {
                    url: r.url,
                    title: r.title,
                    snippet: r.content,
                })
                .collect(),
            answer: None,
            more,
        })
    }
}
