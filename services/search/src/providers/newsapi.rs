//! NewsApi: placeholder until its module lands.

use async_trait::async_trait;

use super::{Endpoint, PageRequest, Provider, ProviderError, ResultPage};

pub struct NewsApi(pub Endpoint);

#[async_trait]
impl Provider for NewsApi {
    fn name(&self) -> &'static str {
        "newsapi"
    }

    async fn page(
        &self,
        _: &reqwest::Client,
        _: &PageRequest<'_>,
    ) -> Result<ResultPage, ProviderError> {
        Err(ProviderError::Status {
            provider: "newsapi",
            status: 501,
        })
    }
}
