//! Whether every worker of a fleet sees the same object store.
//!
//! Workers share nothing but the broker, Redis and the object store. A store that is not
//! shared (`file://` on each pod's own disk) lets clean write documents that synthesize never
//! reads, and the jobs would end dead-lettered long after. So each worker writes a probe object
//! (`probes/<id>`), holds a lease on its id in Redis (renewed at every check), and reads the
//! probe of every other worker holding one: a probe it cannot read means the two do not share a
//! store, and the worker stops with an error that says so before it touches a job.
//!
//! A worker that leaves releases its lease before deleting its probe, and a probe found missing
//! counts only if its writer still holds its lease afterwards, so a worker that stops while
//! another checks is not mistaken for a store that is not shared. A peer's probe, once read, is
//! not read again.

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::Duration;

use crate::{ObjectError, Objects, Store, StoreError};

/// The slot whose holders are the fleet's probes.
const PROBES: &str = "probes";

#[derive(Debug, thiserror::Error)]
pub enum SharedError {
    #[error(
        "the object store is not shared: {peer} wrote {key} to {location}, and this worker \
         cannot read it there. Every worker of a fleet must see the same store: set output.url \
         to s3://BUCKET/PREFIX (or gs://, az://, or a file:// directory that every worker mounts)"
    )]
    NotShared {
        peer: String,
        key: String,
        location: String,
    },
    #[error(transparent)]
    Objects(#[from] ObjectError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// This worker's probe.
pub struct Probe {
    id: String,
    /// What the worker is, for the message of a peer that cannot read the probe.
    who: String,
    verified: Mutex<HashSet<String>>,
}

impl Probe {
    /// A probe for a worker described by `who` (`clean on host-1`).
    pub fn new(who: &str) -> Probe {
        // The holder token carries the description, so a peer that cannot read the probe
        // can still say whose it was. Tokens are split at the first space.
        Probe {
            id: uuid::Uuid::now_v7().simple().to_string(),
            who: who.replace(['\n', '\r'], " "),
            verified: Mutex::new(HashSet::new()),
        }
    }

    fn token(&self) -> String {
        format!("{} {}", self.id, self.who)
    }

    fn key(id: &str) -> String {
        format!("{PROBES}/{id}")
    }

    /// Writes the probe object (once is enough, again is harmless) and takes or renews the
    /// lease for `lease`.
    pub(crate) async fn announce(
        &self,
        objects: &Objects,
        store: &dyn Store,
        lease: Duration,
    ) -> Result<(), SharedError> {
        objects
            .put(&Probe::key(&self.id), self.who.as_bytes())
            .await?;
        store
            .slot_acquire(PROBES, &self.token(), u32::MAX, lease)
            .await?;
        Ok(())
    }

    /// Reads the probe of every peer not read before.
    pub async fn check(&self, objects: &Objects, store: &dyn Store) -> Result<(), SharedError> {
        for token in store.slot_holders(PROBES).await? {
            let (id, who) = token
                .split_once(' ')
                .unwrap_or((token.as_str(), "a worker"));
            if id == self.id || self.verified.lock().expect("probe lock").contains(id) {
                continue;
            }
            if objects.get(&Probe::key(id)).await?.is_some() {
                self.verified
                    .lock()
                    .expect("probe lock")
                    .insert(id.to_owned());
            } else if store.slot_holders(PROBES).await?.contains(&token) {
                return Err(SharedError::NotShared {
                    peer: who.to_owned(),
                    key: Probe::key(id),
                    location: objects.location().to_owned(),
                });
            }
        }
        Ok(())
    }

    /// One round of the check: renew this worker's probe, then read the peers'.
    pub async fn round(
        &self,
        objects: &Objects,
        store: &dyn Store,
        lease: Duration,
    ) -> Result<(), SharedError> {
        self.announce(objects, store, lease).await?;
        self.check(objects, store).await
    }

    /// Gives up the lease, then deletes the probe (in that order: see the module's docs).
    pub async fn withdraw(&self, objects: &Objects, store: &dyn Store) {
        let _ = store.slot_release(PROBES, &self.token()).await;
        let _ = objects.delete(&Probe::key(&self.id)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemoryStore;

    #[tokio::test]
    async fn workers_on_one_store_pass_and_on_two_stores_fail() {
        let store = MemoryStore::new();
        let lease = Duration::from_secs(60);
        let shared = Objects::memory();
        let (a, b) = (Probe::new("search on a"), Probe::new("clean on b"));
        a.announce(&shared, &store, lease).await.unwrap();
        b.announce(&shared, &store, lease).await.unwrap();
        a.check(&shared, &store).await.unwrap();
        b.check(&shared, &store).await.unwrap();

        let own = Objects::memory();
        let c = Probe::new("synthesize on c");
        c.announce(&own, &store, lease).await.unwrap();
        match c.check(&own, &store).await {
            Err(SharedError::NotShared { peer, .. }) => {
                assert!(peer == "search on a" || peer == "clean on b", "{peer}")
            }
            other => panic!("{other:?}"),
        }
        // a has read b's probe before; c's it cannot read.
        assert!(matches!(
            a.check(&shared, &store).await,
            Err(SharedError::NotShared { peer, .. }) if peer == "synthesize on c"
        ));
    }

    #[tokio::test]
    async fn a_peer_that_left_is_not_a_store_that_is_not_shared() {
        let store = MemoryStore::new();
        let lease = Duration::from_secs(60);
        let (one, other) = (Objects::memory(), Objects::memory());
        let (a, b) = (Probe::new("a"), Probe::new("b"));
        a.announce(&one, &store, lease).await.unwrap();
        b.announce(&other, &store, lease).await.unwrap();
        b.withdraw(&other, &store).await;
        a.check(&one, &store).await.unwrap();
    }
}
