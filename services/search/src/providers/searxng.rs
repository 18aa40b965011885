//! SearXNG's JSON API: `GET /search?q=…&format=json&pageno=N`.

use serde::Deserialize;

use super::{ProviderError, RawResult};

#[derive(Deserialize)]
struct Response {
    #[serde(default)]
    results: Vec<Hit>,
}

#[derive(Deserialize)]
struct Hit {
    url: String,
    #[serde(default)]
    title: String,
    #[serde(default)]
    content: String,
}

/// Pages through results until `target` or a page comes back empty (at most 5 pages).
pub async fn search(
    http: &reqwest::Client,
    base: &str,
    query: &str,
    target: usize,
) -> Result<Vec<RawResult>, ProviderError> {
    let err = |reason: String| ProviderError::Request {
        provider: "searxng".into(),
        reason,
    };
    let endpoint = format!("{}/search", base.trim_end_matches('/'));
    let mut out = Vec::new();
    for page in 1..=5u32 {
        let response = http
            .get(&endpoint)
            .query(&[
                ("q", query),
                ("format", "json"),
                ("pageno", &page.to_string()),
            ])
            .send()
            .await
            .map_err(|e| err(trawl_pipeline::error::describe(&e)))?;
        if !response.status().is_success() {
            return Err(err(format!("HTTP {}", response.status())));
        }
        let body: Response = response.json().await.map_err(|e| ProviderError::Response {
            provider: "searxng".into(),
            reason: trawl_pipeline::error::describe(&e),
        })?;
        if body.results.is_empty() {
            break;
        }
        for hit in body.results {
            let position = out.len() as u32 + 1;
            out.push(RawResult {
                url: hit.url,
                title: hit.title,
                snippet: hit.content,
                provider: "searxng".into(),
                position,
            });
        }
        if out.len() >= target {
            out.truncate(target);
            break;
        }
    }
    Ok(out)
}
