//! NewsAPI: `GET {base}/v2/everything?q=…&pageSize=N&page=N&sortBy=relevancy&language=en`
//! `[&from=YYYY-MM-DD]`, keyed by the `X-Api-Key` header. NewsAPI only has news, so general and
//! news requests are sent the same way.

use std::time::{SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use serde::Deserialize;

use super::{
    json_body, Endpoint, Freshness, Hit, PageRequest, Provider, ProviderError, ResultPage,
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
fn days_back(f: Freshness) -> Option<u64> {
    match f {
        Freshness::Any => None,
        Freshness::Day => Some(1),
        Freshness::Week => Some(7),
        Freshness::Month => Some(30),
        Freshness::Year => Some(365),
    }
}

/// `YYYY-MM-DD` (UTC) of `days` since the Unix epoch: Howard Hinnant's `civil_from_days`,
/// because this crate has no date library and needs only this one conversion.
fn civil_date(days: i64) -> String {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The `from` date for `days` back from now.
fn from_date(days: u64) -> String {
    // A clock before 1970 is not worth an error: it only widens the window.
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let today = i64::try_from(now / 86_400).unwrap_or(0);
    civil_date(today - i64::try_from(days).unwrap_or(0))
}

fn page_size(request: &PageRequest<'_>) -> u32 {
    request.per_page.clamp(1, MAX_PAGE_SIZE)
}

impl NewsApi {
    /// The request for one page; separate so tests can inspect what is sent.
    fn build(&self, http: &reqwest::Client, request: &PageRequest<'_>) -> reqwest::RequestBuilder {
        let mut query = vec![
            ("q", request.query.to_owned()),
            ("pageSize", page_size(request).to_string()),
            ("page", request.page.max(1).to_string()),
            ("sortBy", "relevancy".to_owned()),
            ("language", "en".to_owned()),
        ];
        if let Some(days) = days_back(request.freshness) {
            query.push(("from", from_date(days)));
        }
        let mut builder = http
            .get(format!("{}/v2/everything", self.0.base_url))
            .query(&query);
        if let Some(key) = &self.0.api_key {
            builder = builder.header("X-Api-Key", key);
        }
        builder
    }
}

#[async_trait]
impl Provider for NewsApi {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn page(
        &self,
        http: &reqwest::Client,
        request: &PageRequest<'_>,
    ) -> Result<ResultPage, ProviderError> {
        let response = self
            .build(http, request)
            .send()
            .await
            .map_err(|e| ProviderError::from_reqwest(NAME, &e))?;
        if response.status().as_u16() == 426 {
            // Free plans stop at 100 results with 426 `maximumResultsReached`: that is the end
            // of the list, not a failure. Other 426 answers (paid-plan features) stay errors.
            let body = response.bytes().await.unwrap_or_default();
            let code = serde_json::from_slice::<ErrorBody>(&body)
                .map(|b| b.code)
                .unwrap_or_default();
            if code == "maximumResultsReached" {
                return Ok(ResultPage::default());
            }
            return Err(ProviderError::Status {
                provider: NAME,
                status: 426,
            });
        }
        ProviderError::check_status(NAME, &response)?;
        let body: Response = json_body(NAME, response).await?;
        let asked = u64::from(page_size(request));
        let returned = body.articles.len() as u64;
        let more = returned >= asked && u64::from(request.page.max(1)) * asked < body.total_results;
        Ok(ResultPage {
            hits: body
                .articles
                .into_iter()
                .filter_map(|a| {
                    let url = a.url.filter(|u| {
                        !u.is_empty() && u.trim_end_matches('/') != "https://removed.com"
                    })?;
                    if a.title.as_deref() == Some("[Removed]") {
                        return None;
                    }
                    let snippet = a.description.or(a.content).unwrap_or_default();
                    Some(Hit {
                        url,
                        title: a.title.unwrap_or_default(),
                        snippet,
                    })
                })
                .collect(),
            answer: None,
            more,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{contract, endpoint, http, question, request, simweb, Expect};
    use super::*;

    #[tokio::test]
    async fn newsapi_pages_and_errors() {
        let web = simweb().await;
        let p = NewsApi(endpoint(&web, "newsapi", Some("test-key")));
        let keyless = NewsApi(endpoint(&web, "newsapi", None));
        contract(&p, Some(&keyless), Expect::keyed("test-key")).await;

        let capped = p
            .page(&http(), &request("simweb:maxresults", 1))
            .await
            .unwrap();
        assert!(capped.hits.is_empty() && !capped.more);
    }

    #[tokio::test]
    async fn newsapi_sends_from_for_freshness() {
        let web = simweb().await;
        let p = NewsApi(endpoint(&web, "newsapi", Some("test-key")));
        let q = question();
        let mut req = request(&q.query, 1);
        req.freshness = Freshness::Week;
        let built = p.build(&http(), &req).build().unwrap();
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

    #[test]
    fn civil_dates() {
        assert_eq!(civil_date(0), "1970-01-01");
        assert_eq!(civil_date(19_782), "2024-02-29");
        assert_eq!(civil_date(20_000), "2024-10-04");
    }
}
