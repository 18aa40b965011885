//! Search providers. Each speaks its provider's wire format and returns [`RawResult`]s in rank
//! order; [`search_chain`] tries the configured chain in order and falls back on error, timeout
//! or an empty first page.

use serde::{Deserialize, Serialize};
use tracing::warn;

pub mod searxng;

/// One search hit as the provider ranked it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RawResult {
    pub url: String,
    pub title: String,
    pub snippet: String,
    pub provider: String,
    /// 1-based rank at the provider, across pages.
    pub position: u32,
}

#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    #[error("{provider}: request failed: {reason}")]
    Request { provider: String, reason: String },
    #[error("{provider}: unexpected response: {reason}")]
    Response { provider: String, reason: String },
    #[error("unknown provider {0:?}")]
    Unknown(String),
}

pub struct Providers {
    pub http: reqwest::Client,
    pub searxng_url: String,
}

impl Providers {
    /// Up to `target` results for `query` from provider `name`, following pagination.
    pub async fn search(
        &self,
        name: &str,
        query: &str,
        target: usize,
    ) -> Result<Vec<RawResult>, ProviderError> {
        match name {
            "searxng" => searxng::search(&self.http, &self.searxng_url, query, target).await,
            other => Err(ProviderError::Unknown(other.to_owned())),
        }
    }
}

/// What a provider chain gave for one query.
#[derive(Debug, Default)]
pub struct ChainResult {
    pub results: Vec<RawResult>,
    /// One line per provider that failed or came back empty, in order.
    pub errors: Vec<String>,
    /// True if at least one provider answered (even with nothing): an empty answer is an
    /// answer, a failure of every provider is an outage.
    pub answered: bool,
}

/// The first provider of `chain` that answers with results; the others are fallbacks.
pub async fn search_chain(
    providers: &Providers,
    chain: &[String],
    query: &str,
    target: usize,
) -> ChainResult {
    let mut out = ChainResult::default();
    for name in chain {
        match providers.search(name, query, target).await {
            Ok(results) => {
                out.answered = true;
                if !results.is_empty() {
                    out.results = results;
                    return out;
                }
                out.errors.push(format!("{name}: no results"));
            }
            Err(e) => {
                warn!(provider = %name, error = %e, "provider failed; trying the next");
                out.errors.push(e.to_string());
            }
        }
    }
    out
}
