//! Shared state between trawl's workers: one trait per concern, each with two implementations
//! (a file per concern in each):
//!
//! - [`redis`]: Redis, every multi-step change in one Lua script so it is atomic across the fleet;
//! - [`memory`]: the in-memory twin for `trawl run` and tests.
//!
//! The concerns, each a trait with its types: [`Caches`] (robots.txt, relevance, content, LLM
//! responses …), [`Locks`] (single-flight locks and leases; callers take one with [`lock()`],
//! whose guard lets it go on every path), [`Rates`] (per-host and fleet-wide rate limits,
//! concurrent slots, fixed windows), [`Jobs`] (each job's fan-in record and counters),
//! [`Batches`] (batch progress, counters and each API token's batches), [`Budgets`] (a batch's
//! LLM budget; [`budget`] names its counters), [`Tokens`] (API tokens) and [`Pages`] (the index
//! of the fleet's page cache). [`Store`] is all of
//! them: what workers hold, as `Arc<dyn Store>`, calling any concern's methods on it; on a
//! concrete store the traits come in with [`prelude`].
//!
//! Every key starts with the configured prefix (`trawl:`). Every key has a TTL but API tokens
//! and the records of batches not yet ended (a batch's record expires `store.batch_ttl_secs`
//! after its last job ends or it is cancelled). Both twins pass the contract suite in
//! `tests/contract/`, a file per concern.
//!
//! [`objects`] is the object store for results and work products (a local directory, S3, GCS,
//! Azure Blob or memory), and [`shared`] the check that every worker of a fleet sees the same one.
//! `metrics` declares the store's metrics, once, the page cache's among them ([`page_lookup`]).

use async_trait::async_trait;

mod batch;
pub mod budget;
mod cache;
mod job;
mod lock;
pub mod memory;
mod metrics;
pub mod objects;
pub mod outside;
mod page;
mod rate;
pub mod rate_wait;
pub mod redis;
pub mod shared;
mod token;

pub use batch::{BatchProgress, Batches, OWNER_BATCHES_KEPT, PENDING};
pub use budget::Budgets;
pub use cache::{Cache, Caches};
pub use job::{Extension, FanIn, Jobs};
pub use lock::{lock, Lease, LockGuard, Locks};
pub use memory::MemoryStore;
pub use metrics::{init as init_metrics, page_lookup, PageLookup};
pub use objects::{Listed, ObjectError, Objects};
pub use page::{PageClaim, PageEntry, PageStats, Pages, Wanted};
pub use rate::{Entry, Rates, Turn};
pub use redis::RedisStore;
pub use token::Tokens;

/// Every concern's trait, to call their methods on a concrete store (`RedisStore`,
/// `MemoryStore`); on `dyn Store` they need no import.
pub mod prelude {
    pub use crate::{Batches, Budgets, Caches, Jobs, Locks, Pages, Rates, Store, Tokens};
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot reach the store at {url}: {reason}")]
    Unreachable { url: String, reason: String },
    #[error("store operation failed: {0}")]
    Backend(String),
}

/// The whole store: every concern, behind one handle. A new concern is a trait of its own,
/// added here with its two implementations and its part of the contract suite.
#[async_trait]
pub trait Store:
    Caches + Locks + Rates + Jobs + Batches + Budgets + Tokens + Pages + Send + Sync + 'static
{
    /// Deletes every key under this store's prefix (tests).
    async fn delete_all(&self) -> Result<(), StoreError>;
}
