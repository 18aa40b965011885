//! SerpApi: placeholder until its module lands.

use async_trait::async_trait;

use super::{Endpoint, PageRequest, Provider, ProviderError, ResultPage};

pub struct SerpApi(pub Endpoint);

#[async_trait]
impl Provider for SerpApi {
    fn name(&self) -> &'static str {
        "serpapi"
    }

    async fn page(
        &self,
        _: &reqwest::Client,
        _: &PageRequest<'_>,
    ) -> Result<ResultPage, ProviderError> {
        Err(ProviderError::Status {
            provider: "serpapi",
            status: 501,
        })
    }
}
