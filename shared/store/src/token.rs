//! API tokens, by the SHA-256 (hex) of the token.

use std::collections::BTreeMap;

use async_trait::async_trait;

use crate::StoreError;

#[async_trait]
pub trait Tokens: Send + Sync {
    /// The caller's record (JSON) under `hash`. Tokens are never stored in the clear, and stay
    /// until revoked (no TTL).
    async fn token_put(&self, hash: &str, record: &[u8]) -> Result<(), StoreError>;
    async fn token_get(&self, hash: &str) -> Result<Option<Vec<u8>>, StoreError>;
    /// True if the token existed.
    async fn token_delete(&self, hash: &str) -> Result<bool, StoreError>;
    async fn tokens(&self) -> Result<BTreeMap<String, Vec<u8>>, StoreError>;
}
