//! API tokens: one hash, `p:tokens` (SHA-256 of a token → its record), without TTL.

use std::collections::BTreeMap;

use ::redis::AsyncCommands;
use async_trait::async_trait;

use super::{backend, RedisStore};
use crate::{StoreError, Tokens};

#[async_trait]
impl Tokens for RedisStore {
    async fn token_put(&self, hash: &str, record: &[u8]) -> Result<(), StoreError> {
        self.con()
            .hset(self.key(&["tokens"]), hash, record)
            .await
            .map_err(backend)
    }

    async fn token_get(&self, hash: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.con()
            .hget(self.key(&["tokens"]), hash)
            .await
            .map_err(backend)
    }

    async fn token_delete(&self, hash: &str) -> Result<bool, StoreError> {
        let removed: u32 = self
            .con()
            .hdel(self.key(&["tokens"]), hash)
            .await
            .map_err(backend)?;
        Ok(removed == 1)
    }

    async fn tokens(&self) -> Result<BTreeMap<String, Vec<u8>>, StoreError> {
        self.con()
            .hgetall(self.key(&["tokens"]))
            .await
            .map_err(backend)
    }
}
