//! Caches: a string per entry, `p:cache:<cache>:<key>`, with the entry's TTL.

use std::time::Duration;

use ::redis::AsyncCommands;
use async_trait::async_trait;

use super::{backend, ms, RedisStore};
use crate::{Cache, Caches, StoreError};

#[async_trait]
impl Caches for RedisStore {
    async fn cache_read(&self, cache: Cache, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.con()
            .get(self.key(&["cache", cache.as_str(), key]))
            .await
            .map_err(backend)
    }

    async fn cache_read_many(
        &self,
        entries: &[(Cache, &str)],
    ) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        let keys: Vec<String> = entries
            .iter()
            .map(|(cache, key)| self.key(&["cache", cache.as_str(), key]))
            .collect();
        // MGET of one key answers a bare value, not a list: the redis crate reads both.
        self.con().mget(keys).await.map_err(backend)
    }

    async fn cache_put(
        &self,
        cache: Cache,
        key: &str,
        value: &[u8],
        ttl: Duration,
    ) -> Result<(), StoreError> {
        let key = self.key(&["cache", cache.as_str(), key]);
        self.con()
            .pset_ex::<_, _, ()>(key, value, ms(ttl))
            .await
            .map_err(backend)
    }
}
