//! The page cache's index: each entry with when it was last used and the byte total.

use std::collections::HashMap;
use std::time::Duration;

use async_trait::async_trait;
use tokio::time::Instant;

use super::MemoryStore;
use crate::{Lease, Locks, PageClaim, PageEntry, PageStats, Pages, StoreError, Wanted};

#[derive(Default)]
pub(super) struct State {
    entries: HashMap<String, Page>,
    bytes: u64,
    /// Counts uses: the order of last use, which the clock alone cannot give when two uses
    /// share an instant (tokio's clock, paused in tests, stands still).
    uses: u64,
}

struct Page {
    entry: PageEntry,
    used: Instant,
    use_no: u64,
}

impl State {
    fn use_no(&mut self) -> u64 {
        self.uses += 1;
        self.uses
    }

    /// The entry of `key`, marked used now.
    fn get(&mut self, key: &str) -> Option<PageEntry> {
        let use_no = self.use_no();
        let page = self.entries.get_mut(key)?;
        (page.used, page.use_no) = (Instant::now(), use_no);
        Some(page.entry.clone())
    }

    fn remove(&mut self, key: &str) -> Option<PageEntry> {
        let page = self.entries.remove(key)?;
        self.bytes -= page.entry.bytes;
        Some(page.entry)
    }
}

#[async_trait]
impl Pages for MemoryStore {
    async fn page_get(&self, key: &str) -> Result<Option<PageEntry>, StoreError> {
        self.with(|s| s.pages.get(key))
    }

    async fn page_put(
        &self,
        key: &str,
        entry: &PageEntry,
        max_bytes: u64,
        keep: Duration,
    ) -> Result<Vec<PageEntry>, StoreError> {
        self.with(|s| {
            let s = &mut s.pages;
            let now = Instant::now();
            s.remove(key);
            let page = Page {
                entry: entry.clone(),
                used: now,
                use_no: s.use_no(),
            };
            s.entries.insert(key.to_owned(), page);
            s.bytes += entry.bytes;
            // Oldest first: those unused for `keep` come first, so drop while the oldest is
            // one of them or the total is past the bound.
            let mut others: Vec<(u64, Instant, String)> = (s.entries.iter())
                .filter(|(k, _)| *k != key)
                .map(|(k, p)| (p.use_no, p.used, k.clone()))
                .collect();
            others.sort_unstable();
            let mut dropped = Vec::new();
            for (_, used, k) in others {
                if now.duration_since(used) <= keep && s.bytes <= max_bytes {
                    break;
                }
                dropped.extend(s.remove(&k));
            }
            dropped
        })
    }

    async fn page_claim(
        &self,
        key: &str,
        wanted: Wanted,
        lock: &str,
        ttl: Duration,
    ) -> Result<PageClaim, StoreError> {
        self.with(|s| {
            let found = s.pages.get(key);
            if let Some(entry) = found.as_ref().filter(|e| wanted.takes(e)) {
                return PageClaim::Fresh(entry.clone());
            }
            match s.try_lock(lock, ttl) {
                Some(lease) => PageClaim::Fill { found, lease },
                None => PageClaim::Busy,
            }
        })
    }

    async fn page_fill(
        &self,
        key: &str,
        entry: &PageEntry,
        (max_bytes, keep): (u64, Duration),
        lease: &Lease,
    ) -> Result<Vec<PageEntry>, StoreError> {
        // The entry first: a job that finds the lock free finds the page.
        let dropped = self.page_put(key, entry, max_bytes, keep).await?;
        self.unlock(lease).await?;
        Ok(dropped)
    }

    async fn page_refresh(&self, key: &str, fetched_at: u64) -> Result<bool, StoreError> {
        self.with(|s| match s.pages.entries.get_mut(key) {
            Some(page) => {
                page.entry.fetched_at = fetched_at;
                true
            }
            None => false,
        })
    }

    async fn page_remove(&self, key: &str) -> Result<Option<PageEntry>, StoreError> {
        self.with(|s| s.pages.remove(key))
    }

    async fn page_stats(&self) -> Result<PageStats, StoreError> {
        self.with(|s| PageStats {
            entries: s.pages.entries.len() as u64,
            bytes: s.pages.bytes,
        })
    }

    async fn page_purge(&self) -> Result<Vec<PageEntry>, StoreError> {
        self.with(|s| {
            let all = std::mem::take(&mut s.pages);
            all.entries.into_values().map(|p| p.entry).collect()
        })
    }
}
