//! DuckDuckGo: placeholder until its module lands.

use async_trait::async_trait;

use super::{Endpoint, PageRequest, Provider, ProviderError, ResultPage};

pub struct DuckDuckGo(pub Endpoint);

#[async_trait]
impl Provider for DuckDuckGo {
    fn name(&self) -> &'static str {
        "duckduckgo"
    }

    async fn page(
        &self,
        _: &reqwest::Client,
        _: &PageRequest<'_>,
    ) -> Result<ResultPage, ProviderError> {
        Err(ProviderError::Status {
            provider: "duckduckgo",
            status: 501,
        })
    }
}
