//! Serper: placeholder until its module lands.

use async_trait::async_trait;

use super::{Endpoint, PageRequest, Provider, ProviderError, ResultPage};

pub struct Serper(pub Endpoint);

#[async_trait]
impl Provider for Serper {
    fn name(&self) -> &'static str {
        "serper"
    }

    async fn page(
        &self,
        _: &reqwest::Client,
        _: &PageRequest<'_>,
    ) -> Result<ResultPage, ProviderError> {
        Err(ProviderError::Status {
            provider: "serper",
            status: 501,
        })
    }
}
