//! Locks: the holder's lease and when it runs out, per name.

use std::time::Duration;

use async_trait::async_trait;
use tokio::time::Instant;

use super::MemoryStore;
use crate::{Lease, Locks, StoreError};

#[async_trait]
impl Locks for MemoryStore {
    async fn try_lock(&self, name: &str, ttl: Duration) -> Result<Option<Lease>, StoreError> {
        self.with(|s| s.try_lock(name, ttl))
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

impl super::State {
    /// The lock `name` for `ttl`, unless someone holds it.
    pub(super) fn try_lock(&mut self, name: &str, ttl: Duration) -> Option<Lease> {
        let now = Instant::now();
        match self.locks.get(name) {
            Some((until, _)) if *until > now => None,
            _ => {
                let lease = Lease::new(name);
                self.locks
                    .insert(name.to_owned(), (now + ttl, lease.clone()));
                Some(lease)
            }
        }
    }
}
