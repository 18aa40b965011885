//! API tokens: records by hash, kept until deleted.

use std::collections::BTreeMap;

use async_trait::async_trait;

use super::MemoryStore;
use crate::{StoreError, Tokens};

#[async_trait]
impl Tokens for MemoryStore {
    async fn token_put(&self, hash: &str, record: &[u8]) -> Result<(), StoreError> {
        self.with(|s| {
            s.tokens.insert(hash.to_owned(), record.to_vec());
        })
    }

    async fn token_get(&self, hash: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.with(|s| s.tokens.get(hash).cloned())
    }

    async fn token_delete(&self, hash: &str) -> Result<bool, StoreError> {
        self.with(|s| s.tokens.remove(hash).is_some())
    }

    async fn tokens(&self) -> Result<BTreeMap<String, Vec<u8>>, StoreError> {
        self.with(|s| s.tokens.clone())
    }
}
