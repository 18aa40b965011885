//! Serper (google.serper.dev): `POST {base}/search` (or `/news`) with the key in `X-API-KEY` and
//! a JSON body `{"q", "num", "page", "tbs"}`. Google's results come back under `organic` (news
//! under `news`). Serper has no "next page" field, so a clearly short page ends the paging.

use serde::Deserialize;
use serde_json::json;

use super::{
    json, secret, window, Endpoint, Freshness, Hit, PageRequest, Provider, ProviderError,
    ResultPage,
};

const NAME: &str = "serper";

pub struct Serper(pub Endpoint);

#[derive(Deserialize)]
struct Response {
    #[serde(default)]
    organic: Vec<Item>,
    #[serde(default)]
    news: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    // Optional so one odd entry (a knowledge card without a link) does not fail the page.
    link: Option<String>,
    #[serde(default)]
    title: String,
    #[serde(default)]
    snippet: String,
}

/// Google's `tbs` time filter, shared with SerpApi, which passes the same parameter through.
pub(super) fn tbs(freshness: Freshness) -> Option<String> {
    window(freshness).map(|w| format!("qdr:{}", &w[..1]))
}

impl Provider for Serper {
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
        let path = if request.news { "news" } else { "search" };
        let mut body = json!({
            "q": request.query,
            // Serper accepts up to 100 per page.
            "num": request.per_page.clamp(1, 100),
            "page": request.page.max(1),
        });
        if let Some(tbs) = tbs(request.freshness) {
            body["tbs"] = tbs.into();
        }
        if let Some(hl) = super::locale::google_hl(request.locale) {
            body["hl"] = hl.into();
        }
        if let Some(gl) = super::locale::country(request.locale) {
            body["gl"] = gl.into();
        }
        let mut builder = http.post(format!("{}/{path}", self.0.base_url)).json(&body);
        if let Some(key) = &self.0.api_key {
            builder = builder.header("X-API-KEY", secret(NAME, key)?);
        }
        Ok(Some(builder))
    }

    fn read(&self, body: &[u8], request: &PageRequest<'_>) -> Result<ResultPage, ProviderError> {
        let body: Response = json(NAME, body)?;
        let items = if request.news {
            body.news
        } else {
            body.organic
        };
        let hits: Vec<Hit> = items
            .into_iter()
            .filter_map(|i| Hit::new(i.link, i.title, i.snippet))
            .collect();
        // Google routinely drops a result or two from a full page, so only a page with less than
        // half of what was asked counts as the last one; an empty next page ends paging anyway.
        let more = !hits.is_empty() && hits.len() as u32 * 2 >= request.per_page;
        Ok(ResultPage::of(hits, more))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{contract, endpoint, http, question, request, simweb, Expect};
    use super::*;

    #[tokio::test]
    async fn serper_pages_and_errors() {
        let web = simweb().await;
        let p: &dyn Provider = &Serper(endpoint(&web, "serper", Some("test-key")));
        let keyless = Serper(endpoint(&web, "serper", None));
        contract(p, Some(&keyless), Expect::keyed("test-key")).await;

        let q = question();
        let mut news = request(&q.query, 1);
        news.news = true;
        let news = p.page(&http(), &news).await.unwrap();
        assert!(news.hits.iter().any(|h| q.answer_urls.contains(&h.url)));
    }

    #[tokio::test]
    async fn serper_sends_freshness_as_tbs() {
        let web = simweb().await;
        let p: &dyn Provider = &Serper(endpoint(&web, "serper", Some("test-key")));
        let q = question();
        let mut req = request(&q.query, 2);
        req.freshness = Freshness::Week;
        // simweb echoes the parameters it parsed under `searchParameters`, as Serper does.
        let echoed: serde_json::Value = p
            .request(&http(), &req)
            .unwrap()
            .unwrap()
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let params = &echoed["searchParameters"];
        assert_eq!(params["tbs"], "qdr:w");
        assert_eq!(params["page"], 2);
        assert_eq!(params["num"], 10);
        assert_eq!(params["q"], q.query.as_str());
    }
}
