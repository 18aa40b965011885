//! Tavily: placeholder until its module lands.

use async_trait::async_trait;

use super::{Endpoint, PageRequest, Provider, ProviderError, ResultPage};

pub struct Tavily(pub Endpoint);

#[async_trait]
impl Provider for Tavily {
    fn name(&self) -> &'static str {
        "tavily"
    }

    async fn page(
        &self,
        _: &reqwest::Client,
        _: &PageRequest<'_>,
    ) -> Result<ResultPage, ProviderError> {
        Err(ProviderError::Status {
            provider: "tavily",
            status: 501,
        })
    }
}
