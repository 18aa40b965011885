//! The caches: one key space each, every entry with its TTL.

use std::time::Duration;

use async_trait::async_trait;

use crate::{metrics, StoreError};

/// The caches, each its own key space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "kebab-case")]
pub enum Cache {
    Robots,
    /// Search provider answers per (provider, query, page).
    Search,
    Relevance,
    Content,
    Llm,
    /// Per host: the escalation level that last got a page, so later tasks start there.
    HostLevel,
    /// Per host: the Retry-After of its last 429/503, which widens its rate-limit interval.
    HostBackoff,
    /// Per (content hash, question): a source's cleaning and analysis, so a repeated batch
    /// does the work once.
    Analysis,
    /// Per (API token, Idempotency-Key): the request's fingerprint and the batch it created.
    Idempotency,
}

impl Cache {
    pub const ALL: &[Cache] = <Self as strum::VariantArray>::VARIANTS;

    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

#[async_trait]
pub trait Caches: Send + Sync {
    /// A cache entry, counted in `trawl_cache_lookups_total`.
    async fn cache_get(&self, cache: Cache, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let found = self.cache_read(cache, key).await;
        metrics::lookup(cache, &found);
        found
    }
    /// A cache entry, uncounted: what each store implements.
    async fn cache_read(&self, cache: Cache, key: &str) -> Result<Option<Vec<u8>>, StoreError>;
    /// Several cache entries in one round trip, in order, each counted as
    /// [`Caches::cache_get`] counts it.
    async fn cache_get_many(
        &self,
        entries: &[(Cache, &str)],
    ) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        let found = self.cache_read_many(entries).await;
        let caches: Vec<Cache> = entries.iter().map(|(cache, _)| *cache).collect();
        metrics::lookups(&caches, found.as_ref().map(Vec::as_slice));
        found
    }
    /// Several cache entries, uncounted; a store that can, reads them in one round trip.
    async fn cache_read_many(
        &self,
        entries: &[(Cache, &str)],
    ) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        let mut values = Vec::with_capacity(entries.len());
        for (cache, key) in entries {
            values.push(self.cache_read(*cache, key).await?);
        }
        Ok(values)
    }
    async fn cache_put(
        &self,
        cache: Cache,
        key: &str,
        value: &[u8],
        ttl: Duration,
    ) -> Result<(), StoreError>;
}
