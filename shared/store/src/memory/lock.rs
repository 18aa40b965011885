//! Locks: the holder's lease and when it runs out, per name.

use std::time::Duration;

use async_trait::async_trait;
use tokio::time::Instant;

use super::MemoryStore;
use crate::{Lease, Locks, StoreError};

#[async_trait]
impl Locks for MemoryStore {
    async fn try_lock(&self, name: &str, ttl: Duration) -> Result<Option<Lease>, StoreError> {
        self.with(|s| {
            let now = Instant::now();
            match s.locks.get(name) {
                Some((until, _)) if *until > now => None,
                _ => {
                    let lease = Lease::new(name);
                    s.locks.insert(name.to_owned(), (now + ttl, lease.clone()));
                    Some(lease)
                }
            }
        })
    }

    async fn unlock(&self, lease: &Lease) -> Result<(), StoreError> {
        self.with(|s| {
            if s.locks
                .get(&lease.name)
                .is_some_and(|(_, held)| held == lease)
            {
                s.locks.remove(&lease.name);
            }
        })
    }
}
