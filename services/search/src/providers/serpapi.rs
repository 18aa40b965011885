//! SerpApi's Google engine: `GET {base}/search.json?engine=google&q=…&api_key=…&num=N&start=…`
//! (`tbm=nws` for news, `tbs=qdr:…` for freshness). Results are under `organic_results` or
//! `news_results`; `serpapi_pagination.next` says whether another page exists. A 200 whose
//! `error` is "Google hasn't returned any results" is an empty answer, not a failure.
//!
//! The key travels in the URL; [`Provider::page`] keeps URLs out of its errors.

use serde::Deserialize;

use super::{json, serper::tbs, Endpoint, Hit, PageRequest, Provider, ProviderError, ResultPage};

const NAME: &str = "serpapi";

pub struct SerpApi(pub Endpoint);

#[derive(Deserialize)]
struct Response {
    #[serde(default)]
    organic_results: Vec<Item>,
    #[serde(default)]
    news_results: Vec<Item>,
    serpapi_pagination: Option<Pagination>,
    error: Option<String>,
}

#[derive(Deserialize)]
struct Item {
    // News entries can be story clusters without a link of their own; those are skipped.
    link: Option<String>,
    #[serde(default)]
    title: String,
    #[serde(default)]
    snippet: String,
}

#[derive(Deserialize)]
struct Pagination {
    next: Option<String>,
}

impl Provider for SerpApi {
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
    ) -> Result<Option<reqwest::RequestBuilder>, ProviderError> {
        let num = request.per_page.clamp(1, 100);
        let mut query = vec![
            ("engine", "google".to_owned()),
            ("q", request.query.to_owned()),
            ("num", num.to_string()),
            ("start", ((request.page.max(1) - 1) * num).to_string()),
        ];
        if request.news {
            query.push(("tbm", "nws".to_owned()));
        }
        if let Some(tbs) = tbs(request.freshness) {
            query.push(("tbs", tbs));
        }
        if let Some(hl) = super::locale::google_hl(request.locale) {
            query.push(("hl", hl));
        }
        if let Some(gl) = super::locale::country(request.locale) {
            query.push(("gl", gl.to_owned()));
        }
        if let Some(key) = &self.0.api_key {
            query.push(("api_key", key.clone()));
        }
        Ok(Some(
            (http.get(format!("{}/search.json", self.0.base_url))).query(&query),
        ))
    }

    fn read(&self, body: &[u8], request: &PageRequest<'_>) -> Result<ResultPage, ProviderError> {
        let body: Response = json(NAME, body)?;
        let items = if request.news {
            body.news_results
        } else {
            body.organic_results
        };
        if let Some(error) = body.error {
            // SerpApi reports "no results" as a 200 with an error; any other error in a 200 is
            // a failure we cannot page through.
            if items.is_empty() && !error.contains("hasn't returned any results") {
                return Err(ProviderError::Malformed {
                    provider: NAME,
                    reason: format!("error in a 200 answer: {error}"),
                });
            }
        }
        let hits: Vec<Hit> = items
            .into_iter()
            .filter_map(|i| Hit::new(i.link, i.title, i.snippet))
            .collect();
        let more = !hits.is_empty() && body.serpapi_pagination.and_then(|p| p.next).is_some();
        Ok(ResultPage::of(hits, more))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{contract, endpoint, http, question, request, simweb, Expect};
    use super::*;

    #[tokio::test]
    async fn serpapi_pages_and_errors() {
        let web = simweb().await;
        let p: &dyn Provider = &SerpApi(endpoint(&web, "serpapi", Some("test-key")));
        let keyless = SerpApi(endpoint(&web, "serpapi", None));
        contract(p, Some(&keyless), Expect::keyed("test-key")).await;

        let q = question();
        let mut news = request(&q.query, 1);
        news.news = true;
        let news = p.page(&http(), &news).await.unwrap();
        assert!(news.hits.iter().any(|h| q.answer_urls.contains(&h.url)));
    }

    #[tokio::test]
    async fn serpapi_errors_never_show_the_key() {
        // Nothing listens on port 9 of loopback in the test environment: a connect error, whose
        // reqwest message would name the URL (and so the key) if it were not stripped.
        let p: &dyn Provider = &SerpApi(super::super::Endpoint {
            base_url: "http://127.0.0.1:9".into(),
            api_key: Some("secret-key-123".into()),
        });
        let err = p.page(&http(), &request("anything", 1)).await.unwrap_err();
        assert!(!err.to_string().contains("secret-key-123"), "{err}");
    }
}
