//! Bocha Web Search API: `POST {base}/v1/web-search` with a JSON body
//! `{"query","freshness","summary","count","page"}` and `Authorization: Bearer <key>`. Bocha wraps
//! every answer in `{"code","log_id","msg","data"}` and may report a failure in `code` even
//! when the HTTP status is 200.

use serde::Deserialize;
use serde_json::json;

use super::{json, Endpoint, Freshness, Hit, PageRequest, Provider, ProviderError, ResultPage};

const NAME: &str = "bocha";
/// Bocha accepts `count` from 1 to 50.
const MAX_COUNT: u32 = 50;

pub struct Bocha(pub Endpoint);

#[derive(Deserialize)]
struct Envelope {
    /// A number in the documentation, but seen as a string in some error bodies.
    #[serde(default)]
    code: Option<serde_json::Value>,
    #[serde(default)]
    data: Option<Data>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Data {
    #[serde(default)]
    web_pages: Option<WebPages>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WebPages {
    #[serde(default)]
    total_estimated_matches: u64,
    #[serde(default)]
    value: Vec<WebPage>,
}

#[derive(Deserialize)]
struct WebPage {
    url: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    snippet: String,
    /// Only present when the request asked for `summary: true`; longer than `snippet`.
    #[serde(default)]
    summary: Option<String>,
}

fn freshness(f: Freshness) -> &'static str {
    match f {
        Freshness::Any => "noLimit",
        Freshness::Day => "oneDay",
        Freshness::Week => "oneWeek",
        Freshness::Month => "oneMonth",
        Freshness::Year => "oneYear",
    }
}

fn count(request: &PageRequest<'_>) -> u32 {
    request.per_page.clamp(1, MAX_COUNT)
}

/// The error a body `code` other than 200 stands for, if any.
fn body_error(code: Option<&serde_json::Value>) -> Option<ProviderError> {
    let code = match code? {
        serde_json::Value::Number(n) => n.as_u64()?,
        serde_json::Value::String(s) => s.trim().parse().ok()?,
        _ => return None,
    };
    match code {
        200 => None,
        429 => Some(ProviderError::RateLimited {
            provider: NAME,
            retry_after: None,
        }),
        other => Some(ProviderError::Status {
            provider: NAME,
            status: u16::try_from(other).unwrap_or(500),
        }),
    }
}

impl Provider for Bocha {
    fn name(&self) -> &'static str {
        NAME
    }

    fn request(
        &self,
        http: &reqwest::Client,
        request: &PageRequest<'_>,
    ) -> Result<Option<reqwest::RequestBuilder>, ProviderError> {
        let body = json!({
            "query": request.query,
            "freshness": freshness(request.freshness),
            "summary": true,
            "count": count(request),
            "page": request.page.max(1),
        });
        let mut builder = http
            .post(format!("{}/v1/web-search", self.0.base_url))
            .json(&body);
        if let Some(key) = &self.0.api_key {
            builder = builder.bearer_auth(key);
        }
        Ok(Some(builder))
    }

    fn read(&self, body: &[u8], request: &PageRequest<'_>) -> Result<ResultPage, ProviderError> {
        let body: Envelope = json(NAME, body)?;
        if let Some(e) = body_error(body.code.as_ref()) {
            return Err(e);
        }
        let Some(pages) = body.data.and_then(|d| d.web_pages) else {
            // No `webPages` section is how Bocha answers a query with no results.
            return Ok(ResultPage::default());
        };
        let asked = count(request);
        let more = pages.value.len() >= asked as usize
            && u64::from(request.page.max(1)) * u64::from(asked) < pages.total_estimated_matches;
        let hits = (pages.value.into_iter())
            .map(|p| Hit {
                url: p.url,
                title: p.name,
                snippet: p.summary.filter(|s| !s.is_empty()).unwrap_or(p.snippet),
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
    async fn bocha_pages_and_errors() {
        let web = simweb().await;
        let p: &dyn Provider = &Bocha(endpoint(&web, "bocha", Some("test-key")));
        let keyless = Bocha(endpoint(&web, "bocha", None));
        contract(p, Some(&keyless), Expect::keyed("test-key")).await;
    }

    #[tokio::test]
    async fn bocha_sends_freshness() {
        let web = simweb().await;
        let p: &dyn Provider = &Bocha(endpoint(&web, "bocha", Some("test-key")));
        let q = question();
        let mut req = request(&q.query, 1);
        req.freshness = Freshness::Week;
        // simweb echoes the freshness it received in `queryContext`.
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
        assert_eq!(raw["data"]["queryContext"]["freshness"], "oneWeek");
    }

    #[test]
    fn body_codes() {
        assert!(body_error(Some(&json!(200))).is_none());
        assert!(body_error(None).is_none());
        assert_eq!(
            body_error(Some(&json!(429))).map(|e| e.label()),
            Some("rate_limited")
        );
        assert!(matches!(
            body_error(Some(&json!("403"))),
            Some(ProviderError::Status { status: 403, .. })
        ));
    }
}
