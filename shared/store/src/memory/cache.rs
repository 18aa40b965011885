//! Caches: an entry per (cache, key), gone once its TTL has run out.

use std::time::Duration;

use async_trait::async_trait;
use tokio::time::Instant;

use super::{live, Expiring, MemoryStore};
use crate::{Cache, Caches, StoreError};

#[async_trait]
impl Caches for MemoryStore {
    async fn cache_read(&self, cache: Cache, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.with(|s| live(s.cache.get(&(cache, key.to_owned()))).cloned())
    }

    async fn cache_put(
        &self,
        cache: Cache,
        key: &str,
        value: &[u8],
        ttl: Duration,
    ) -> Result<(), StoreError> {
        self.with(|s| {
            let until = Instant::now() + ttl;
            s.cache.insert(
                (cache, key.to_owned()),
                Expiring {
                    value: value.to_vec(),
                    until,
                },
            );
        })
    }
}
