//! The index of the fleet's page cache: per page (the hash of its canonical URL) when it was
//! fetched, its validators and the object that holds it, bounded in bytes with the least
//! recently used entries out first. The pages themselves live in the object store; this index
//! is what every worker reads before it fetches.

use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::{Lease, StoreError};

/// One cached page, as the index knows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageEntry {
    /// The object holding the page.
    pub object: String,
    /// When the page was last fetched or revalidated, in Unix seconds.
    pub fetched_at: u64,
    /// The response's `ETag`, for `If-None-Match`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
    /// The response's `Last-Modified`, for `If-Modified-Since`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
    /// A hash of the page's decoded body.
    pub content_hash: String,
    /// The fetch level that got it (0–1 plain HTTP, 2–3 a browser).
    pub level: u8,
    /// The object's size, counted against the cache's bound.
    pub bytes: u64,
}

/// What the index holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageStats {
    pub entries: u64,
    pub bytes: u64,
}

/// Which copy of a page a job takes ([`Pages::page_claim`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wanted {
    /// The oldest `fetched_at` it takes (seconds since the epoch): now less its max age.
    pub fresh_after: u64,
    /// The highest fetch level it takes: a job that keeps to plain HTTP takes no browser's
    /// render.
    pub max_level: u8,
}

impl Wanted {
    /// Whether `entry` is a copy this job takes.
    pub fn takes(&self, entry: &PageEntry) -> bool {
        entry.fetched_at >= self.fresh_after && entry.level <= self.max_level
    }
}

/// What [`Pages::page_claim`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PageClaim {
    /// A copy the job takes.
    Fresh(PageEntry),
    /// No such copy, and the page's fill lock, taken: this job fetches the page. `found` is
    /// the entry there was (too old, or from a level the job does not reach).
    Fill {
        found: Option<PageEntry>,
        lease: Lease,
    },
    /// No such copy, and another job holds the fill lock.
    Busy,
}

#[async_trait]
pub trait Pages: Send + Sync {
    /// The entry of `key`, marked used now (it is the last to be evicted).
    async fn page_get(&self, key: &str) -> Result<Option<PageEntry>, StoreError>;
    /// Puts `entry` under `key` (replacing any, whose bytes no longer count), then drops the
    /// entries unused for `keep` and, least recently used first, those past `max_bytes` (never
    /// the one just put). Returns the dropped entries: their objects are the caller's to
    /// delete.
    async fn page_put(
        &self,
        key: &str,
        entry: &PageEntry,
        max_bytes: u64,
        keep: Duration,
    ) -> Result<Vec<PageEntry>, StoreError>;
    /// In one step: the entry of `key` if `wanted` takes it (marked used, as
    /// [`Pages::page_get`]), else the page's fill lock (`lock`, for `ttl`, as
    /// [`crate::Locks::try_lock`]) if nobody holds it. A job that wants a page asks once, not
    /// once for the copy and again for the lock.
    async fn page_claim(
        &self,
        key: &str,
        wanted: Wanted,
        lock: &str,
        ttl: Duration,
    ) -> Result<PageClaim, StoreError>;
    /// [`Pages::page_put`], and the fill lock `lease` let go ([`crate::Locks::unlock`]) in the
    /// same step.
    async fn page_fill(
        &self,
        key: &str,
        entry: &PageEntry,
        (max_bytes, keep): (u64, Duration),
        lease: &Lease,
    ) -> Result<Vec<PageEntry>, StoreError>;
    /// Sets the `fetched_at` of `key`'s entry (the server said it has not changed); `false`
    /// when there is no entry.
    async fn page_refresh(&self, key: &str, fetched_at: u64) -> Result<bool, StoreError>;
    /// Removes `key`'s entry, returning it.
    async fn page_remove(&self, key: &str) -> Result<Option<PageEntry>, StoreError>;
    /// How many entries and bytes the index holds.
    async fn page_stats(&self) -> Result<PageStats, StoreError>;
    /// Removes every entry, returning them (their objects are the caller's to delete).
    async fn page_purge(&self) -> Result<Vec<PageEntry>, StoreError>;
}
