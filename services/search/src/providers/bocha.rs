//! Bocha: placeholder until its module lands.

use async_trait::async_trait;

use super::{Endpoint, PageRequest, Provider, ProviderError, ResultPage};

pub struct Bocha(pub Endpoint);

#[async_trait]
impl Provider for Bocha {
    fn name(&self) -> &'static str {
        "bocha"
    }

    async fn page(
        &self,
        _: &reqwest::Client,
        _: &PageRequest<'_>,
    ) -> Result<ResultPage, ProviderError> {
        Err(ProviderError::Status {
            provider: "bocha",
            status: 501,
        })
    }
}
