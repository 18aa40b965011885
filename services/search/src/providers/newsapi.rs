//! NewsAPI: `GET {base}/v2/everything?q=…&pageSize=N&page=N&sortBy=relevancy&language=L`
//! (the question's language where NewsAPI has it, `en` when it is unknown)
//! `[&from=YYYY-MM-DD][&domains=…][&excludeDomains=…]`, keyed by the `X-Api-Key` header. NewsAPI only has news, so general and
//! news requests are sent the same way.

use serde::Deserialize;

use super::{
    json, secret, Endpoint, Freshness, Hit, PageRequest, Provider, ProviderError, ResultPage,
};

const NAME: &str = "newsapi";
/// NewsAPI rejects `pageSize` above 100.
const MAX_PAGE_SIZE: u32 = 100;

pub(crate) struct NewsApi(pub Endpoint);

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Response {
    #[serde(default)]
    total_results: u64,
    #[serde(default)]
    articles: Vec<Article>,
}

#[derive(Deserialize)]
struct Article {
    /// Removed articles come back titled "[Removed]" with `https://removed.com` as URL.
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    content: Option<String>,
}

/// NewsAPI's error body: `{"status":"error","code":"…","message":"…"}`.
#[derive(Deserialize)]
struct ErrorBody {
    #[serde(default)]
    code: String,
}

/// Days back for a freshness window.
fn days_back(f: Freshness) -> Option<i64> {
    match f {
        Freshness::Any => None,
        Freshness::Day => Some(1),
        Freshness::Week => Some(7),
        Freshness::Month => Some(30),
        Freshness::Year => Some(365),
    }
}

/// The `from` date (UTC) for `days` back from now.
fn from_date(days: i64) -> String {
    (chrono::Utc::now() - chrono::Duration::days(days))
        .format("%Y-%m-%d")
        .to_string()
}

fn page_size(request: &PageRequest<'_>) -> u32 {
    request.per_page.clamp(1, MAX_PAGE_SIZE)
}

impl Provider for NewsApi {
    fn name(&self) -> &'static str {
        NAME
    }

    fn request(
        &self,
        http: &reqwest::Client,
        request: &PageRequest<'_>,
    ) -> Result<Option<reqwest::RequestBuilder>, ProviderError> {
        let mut query = vec![
            ("q", request.query.to_owned()),
            ("pageSize", page_size(request).to_string()),
            ("page", request.page.max(1).to_string()),
            ("sortBy", "relevancy".to_owned()),
        ];
        if let Some(language) = super::locale::newsapi_language(request.locale) {
            query.push(("language", language.to_owned()));
        }
        if let Some(days) = days_back(request.freshness) {
            query.push(("from", from_date(days)));
        }
        if !request.domains.include.is_empty() {
            query.push(("domains", request.domains.include.join(",")));
        }
        if !request.domains.exclude.is_empty() {
            query.push(("excludeDomains", request.domains.exclude.join(",")));
        }
        let mut builder = http
            .get(format!("{}/v2/everything", self.0.base_url))
            .query(&query);
        if let Some(key) = &self.0.api_key {
            builder = builder.header("X-Api-Key", secret(NAME, key)?);
        }
        Ok(Some(builder))
    }

    /// Free plans stop at 100 results with 426 `maximumResultsReached`: that is the end of the
    /// list, not a failure. Other 426 answers (paid-plan features) stay errors.
    fn ended(&self, status: u16, body: &[u8]) -> bool {
        status == 426
            && serde_json::from_slice::<ErrorBody>(body)
                .is_ok_and(|b| b.code == "maximumResultsReached")
    }

    fn read(&self, body: &[u8], request: &PageRequest<'_>) -> Result<ResultPage, ProviderError> {
        let body: Response = json(NAME, body)?;
        let asked = u64::from(page_size(request));
        let returned = body.articles.len() as u64;
        let more = returned >= asked && u64::from(request.page.max(1)) * asked < body.total_results;
        let hits = (body.articles.into_iter())
            .filter(|a| a.title.as_deref() != Some("[Removed]"))
            .filter_map(|a| {
                let url = a
                    .url
                    .filter(|u| u.trim_end_matches('/') != "https://removed.com");
                let snippet = a.description.or(a.content).unwrap_or_default();
                Hit::new(url, a.title.unwrap_or_default(), snippet)
            })
            .collect();
        Ok(ResultPage::of(hits, more))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{contract, endpoint, http, question, request, simweb, Expect};
    use super::*;

    #[tokio::test]
    async fn newsapi_pages_and_errors() {
        let web = simweb().await;
        let p: &dyn Provider = &NewsApi(endpoint(&web, "newsapi", Some("test-key")));
        let keyless = NewsApi(endpoint(&web, "newsapi", None));
        contract(p, Some(&keyless), Expect::keyed("test-key")).await;

        let capped = p
            .page(&http(), &request("simweb:maxresults", 1))
            .await
            .unwrap();
        assert!(capped.hits.is_empty() && !capped.more);
    }

    #[tokio::test]
    async fn newsapi_sends_from_for_freshness() {
        let web = simweb().await;
        let p: &dyn Provider = &NewsApi(endpoint(&web, "newsapi", Some("test-key")));
        let q = question();
        let mut req = request(&q.query, 1);
        req.freshness = Freshness::Week;
        let built = p.request(&http(), &req).unwrap().unwrap().build().unwrap();
        let from = built
            .url()
            .query_pairs()
            .find(|(k, _)| k == "from")
            .map(|(_, v)| v.into_owned());
        assert_eq!(from, Some(from_date(7)));
        assert_eq!(built.headers()["x-api-key"], "test-key");
        // simweb answers 400 parameterInvalid for a `from` that is not an ISO date.
        let page = p.page(&http(), &req).await.unwrap();
        assert!(!page.hits.is_empty());
    }
}
