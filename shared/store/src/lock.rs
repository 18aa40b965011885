//! Locks with a TTL ([`Locks`]), and a lock held by a guard, so that every way out of the work
//! it guards lets the lock go: a lock left behind by an early return blocks everyone else until
//! its TTL runs out.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use crate::{Store, StoreError};

/// A lock held ([`Locks::try_lock`]): its name and the holder's token, unique per taking.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    pub name: String,
    pub(crate) token: String,
}

impl Lease {
    pub(crate) fn new(name: &str) -> Lease {
        Lease {
            name: name.to_owned(),
            token: uuid::Uuid::now_v7().simple().to_string(),
        }
    }
}

#[async_trait]
pub trait Locks: Send + Sync {
    /// Takes the lock `name` for `ttl` if nobody holds it. Used for single-flight fetches and
    /// for synthesis leases; an expired holder loses it, so a crashed worker never wedges a job.
    /// Callers take it through [`lock()`], whose guard releases it on every path.
    async fn try_lock(&self, name: &str, ttl: Duration) -> Result<Option<Lease>, StoreError>;
    /// Releases `lease` if it is still the holder's: a holder that outlived its `ttl` never
    /// releases the lock someone else has taken since.
    async fn unlock(&self, lease: &Lease) -> Result<(), StoreError>;
}

/// Takes the lock `name` for `ttl` ([`Locks::try_lock`]); `None` when someone else holds it.
pub async fn lock(
    store: &Arc<dyn Store>,
    name: &str,
    ttl: Duration,
) -> Result<Option<LockGuard>, StoreError> {
    let lease = store.try_lock(name, ttl).await?;
    Ok(lease.map(|lease| LockGuard::of(store, lease)))
}

/// A lock taken with [`lock`]. [`LockGuard::release`] lets it go; a guard dropped without it
/// (a `?` return, a panic unwinding, a cancelled future) lets it go in the background.
#[must_use = "the lock is released when the guard is dropped"]
pub struct LockGuard {
    store: Arc<dyn Store>,
    /// `None` once released.
    lease: Option<Lease>,
}

impl LockGuard {
    /// The guard of `lease`, a lock a store call took along with other work
    /// ([`crate::Pages::page_claim`]).
    pub fn of(store: &Arc<dyn Store>, lease: Lease) -> LockGuard {
        LockGuard {
            store: Arc::clone(store),
            lease: Some(lease),
        }
    }

    /// The lease, no longer guarded: for a store call that lets the lock go along with other
    /// work ([`crate::Pages::page_fill`]), which then owns its release.
    pub fn into_lease(mut self) -> Lease {
        self.lease
            .take()
            .expect("a guard holds its lease until it lets go")
    }

    /// Releases the lock if it is still this holder's ([`Locks::unlock`]).
    pub async fn release(mut self) -> Result<(), StoreError> {
        // The lease stays in the guard until the store answers: a release cancelled midway
        // still falls to `drop`.
        let released = match &self.lease {
            Some(lease) => self.store.unlock(lease).await,
            None => Ok(()),
        };
        self.lease = None;
        released
    }
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        let Some(lease) = self.lease.take() else {
            return;
        };
        // Outside a runtime nothing can run the unlock: the lock's TTL frees it.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let store = Arc::clone(&self.store);
        runtime.spawn(async move {
            if let Err(e) = store.unlock(&lease).await {
                tracing::warn!(lock = %lease.name, error = %e, "lock release failed");
            }
        });
    }
}
