//! SearXNG's JSON API: `GET {base}/search?q=…&format=json&pageno=N[&time_range=day]`.
//! The instance must have the `json` output format enabled (SearXNG answers 403 otherwise).

use serde::Deserialize;

use super::{json, window, Endpoint, Hit, PageRequest, Provider, ProviderError, ResultPage};

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

impl Provider for Searxng {
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
        let page = request.page.to_string();
        let mut query = vec![("q", request.query), ("format", "json"), ("pageno", &page)];
        if request.news {
            query.push(("categories", "news"));
        }
        if let Some(range) = window(request.freshness) {
            query.push(("time_range", range));
        }
        let language = super::locale::searxng_language(request.locale);
        if let Some(language) = &language {
            query.push(("language", language));
        }
        Ok(Some(
            (http.get(format!("{}/search", self.0.base_url))).query(&query),
        ))
    }

    fn read(
        &self,
        body: &[u8],
        _: &PageRequest<'_>,
    ) -> std::result::Result<ResultPage, ProviderError> {
        let body: Response = json(NAME, body)?;
        let more = !body.results.is_empty();
        let hits = (body.results.into_iter())
            .map(|r| Hit {
                url: r.url,
                title: r.title,
                snippet: r.content,
            })
            .collect();
        Ok(ResultPage::of(hits, more))
    }
}
