//! Brave: placeholder until its module lands.

use async_trait::async_trait;

use super::{Endpoint, PageRequest, Provider, ProviderError, ResultPage};

pub struct Brave(pub Endpoint);

#[async_trait]
impl Provider for Brave {
    fn name(&self) -> &'static str {
        "brave"
    }

    async fn page(
        &self,
        _: &reqwest::Client,
        _: &PageRequest<'_>,
    ) -> Result<ResultPage, ProviderError> {
        Err(ProviderError::Status {
            provider: "brave",
            status: 501,
        })
    }
}
