//! The fleet's page cache, as fetch reads and fills it.
//!
//! A page fetched for one job is stored once in the object store (`pages/<key>.json`, the key a
//! hash of its URL) with an entry in the store's [`Pages`] index: when it was fetched and its
//! validators. A job that wants the URL within its max age reads the copy instead of fetching;
//! past it, a copy with validators is revalidated (a 304 refreshes it) and one without is
//! fetched again. Jobs that want one URL at once wait for a single fetch: the first takes the
//! page's fill lock, the others come back shortly and read what it stored, and a lock whose
//! holder died frees itself after `cache.wait_secs`, after which they fetch it themselves.
//!
//! Robots.txt and the job's domain filter are checked before the cache is read, so a hit obeys
//! today's rules. What is not stored: blocks, errors and 429s (they never become a page), and
//! responses that say `Cache-Control: no-store` or `private`.

use std::borrow::Cow;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tracing::warn;
use trawl_config::CacheConfig;
use trawl_messages::{paths, CachedCopy};
use trawl_pipeline::{Runtime, StageError};
use trawl_store::{
    lock, page_lookup, LockGuard, Objects, PageClaim, PageEntry, PageLookup, Wanted,
};

use crate::http::{Page, Validators};

/// How soon a job that found its page being fetched by another looks again.
pub(crate) const LOOK_AGAIN: Duration = Duration::from_secs(1);

/// A page as the cache keeps it: what clean needs of a fetch. Borrowed when written, so the
/// page's body is not copied to be stored.
#[derive(Serialize, Deserialize)]
struct Stored<'a> {
    final_url: Cow<'a, str>,
    status: u16,
    content_type: Cow<'a, str>,
    bytes: u64,
    body: Cow<'a, str>,
}

/// What the cache gave a task for its URL.
pub(crate) enum Claim {
    /// A copy within the job's max age: read it.
    Fresh(Copy),
    /// No such copy: this task fetches the page, holding its fill lock. `stale` is a copy past
    /// its age, asked for again with its validators ([`validators`]) when it has any.
    Fill {
        stale: Option<PageEntry>,
        lock: LockGuard,
    },
    /// Another job is fetching the page: come back shortly.
    Busy,
}

/// A cached copy, read.
pub(crate) struct Copy {
    pub page: Page,
    pub level: u8,
    pub cached: CachedCopy,
}

/// The cache key of `url` (as search normalised it): the hex of its SHA-256. (Also the hash
/// of each page's body, so it is written digit by digit, not a `format!` a byte.)
pub fn key_of(url: &str) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let digest = Sha256::digest(url.as_bytes());
    let mut key = String::with_capacity(2 * digest.len());
    for b in digest {
        key.push(char::from(DIGITS[usize::from(b >> 4)]));
        key.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    key
}

fn now_secs() -> u64 {
    (SystemTime::now().duration_since(UNIX_EPOCH)).map_or(0, |d| d.as_secs())
}

fn time_of(secs: u64) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::from_timestamp(secs as i64, 0).unwrap_or_default()
}

/// What the cache holds for `key`, for a job that accepts copies up to `max_age_secs` old and
/// fetched at `max_level` at most (a job that keeps to plain HTTP is not handed a browser's
/// render), and the page's fill lock when the task is to fetch it: one round trip to the
/// store for both.
pub(crate) async fn claim(
    rt: &Runtime,
    key: &str,
    max_age_secs: u64,
    max_level: u8,
) -> Result<Claim, StageError> {
    let wanted = Wanted {
        fresh_after: now_secs().saturating_sub(max_age_secs),
        max_level,
    };
    let ttl = Duration::from_secs(rt.config.cache.wait_secs);
    let claimed = (rt.store)
        .page_claim(key, wanted, &lock_name(key), ttl)
        .await?;
    Ok(match claimed {
        PageClaim::Fresh(entry) => match read(rt, key, &entry).await {
            Some(copy) => Claim::Fresh(copy),
            // Its object is gone: fetched again, as if there had been no copy.
            None => match fill_lock(rt, key).await? {
                Some(lock) => Claim::Fill { stale: None, lock },
                None => Claim::Busy,
            },
        },
        PageClaim::Fill { found, lease } => Claim::Fill {
            // A copy from a level this task does not reach is not asked for again: the task
            // fetches its own.
            stale: found.filter(|e| e.level <= max_level),
            lock: LockGuard::of(&rt.store, lease),
        },
        PageClaim::Busy => Claim::Busy,
    })
}

/// What a conditional request for the copy `entry` sends.
pub(crate) fn validators(entry: &PageEntry) -> Validators {
    Validators {
        etag: entry.etag.clone(),
        last_modified: entry.last_modified.clone(),
    }
}

/// The copy `entry` describes; `None` (and the entry dropped) when its object is gone or
/// unreadable, so the page is fetched again.
async fn read(rt: &Runtime, key: &str, entry: &PageEntry) -> Option<Copy> {
    let bytes = match rt.objects.get(&entry.object).await {
        Ok(bytes) => bytes,
        Err(e) => {
            warn!(error = %e, "page cache object unavailable");
            return None;
        }
    };
    let stored = bytes.and_then(|b| serde_json::from_slice::<Stored>(&b).ok());
    let Some(stored) = stored else {
        // Deleted under the index (a lifecycle rule, an operator): forget it.
        let _ = rt.store.page_remove(key).await;
        return None;
    };
    Some(Copy {
        page: Page {
            final_url: stored.final_url.into_owned(),
            status: stored.status,
            content_type: stored.content_type.into_owned(),
            body: stored.body.into_owned(),
            bytes: stored.bytes,
            validators: validators(entry),
            storable: true,
        },
        level: entry.level,
        cached: CachedCopy {
            key: key.to_owned(),
            fetched_at: time_of(entry.fetched_at),
            content_hash: entry.content_hash.clone(),
            hit: true,
        },
    })
}

/// The copy `stale` of `key` after its server answered 304: it counts as fetched now.
pub(crate) async fn revalidated(rt: &Runtime, key: &str, stale: &PageEntry) -> Option<Copy> {
    let now = now_secs();
    match rt.store.page_refresh(key, now).await {
        Ok(true) => {}
        Ok(false) => return None,
        Err(e) => {
            warn!(error = %e, "page cache index unavailable");
            return None;
        }
    }
    let entry = PageEntry {
        fetched_at: now,
        ..stale.clone()
    };
    let copy = read(rt, key, &entry).await?;
    page_lookup("fetch", PageLookup::Revalidated);
    Some(copy)
}

/// The name of the fill lock of `key`.
fn lock_name(key: &str) -> String {
    format!("page:{key}")
}

/// Takes the fill lock of `key`: `None` while another job is fetching the page. The lock
/// lasts `cache.wait_secs`, the longest anyone waits for it.
async fn fill_lock(rt: &Runtime, key: &str) -> Result<Option<LockGuard>, StageError> {
    let ttl = Duration::from_secs(rt.config.cache.wait_secs);
    Ok(lock(&rt.store, &lock_name(key), ttl).await?)
}

/// Stores `page`, fetched at `level`, under `key`, dropping what the cache's bound pushes
/// out, and lets the page's fill `lock` go with the index's entry: the jobs waiting for the
/// page find it there. `None` (nothing stored) for a response that may not be kept. A store
/// that fails costs the cache its copy, never the job its page; the guard lets the lock go on
/// those paths.
pub(crate) async fn store(
    rt: &Runtime,
    key: &str,
    page: &Page,
    level: u8,
    lock: LockGuard,
) -> Option<CachedCopy> {
    if !page.storable {
        return None;
    }
    let cfg: &CacheConfig = &rt.config.cache;
    let stored = Stored {
        final_url: Cow::Borrowed(&page.final_url),
        status: page.status,
        content_type: Cow::Borrowed(&page.content_type),
        bytes: page.bytes,
        body: Cow::Borrowed(&page.body),
    };
    let bytes = serde_json::to_vec(&stored).ok()?;
    let entry = PageEntry {
        object: paths::page(key),
        fetched_at: now_secs(),
        etag: page.validators.etag.clone(),
        last_modified: page.validators.last_modified.clone(),
        content_hash: key_of(&page.body),
        level,
        bytes: bytes.len() as u64,
    };
    if let Err(e) = rt.objects.put(&entry.object, &bytes).await {
        warn!(error = %e, "page cache object not stored");
        return None;
    }
    let bound = (cfg.max_bytes, Duration::from_secs(cfg.keep_secs));
    let lease = lock.into_lease();
    let dropped = match rt.store.page_fill(key, &entry, bound, &lease).await {
        Ok(dropped) => dropped,
        Err(e) => {
            // The lock expires: its release went with the entry.
            warn!(error = %e, "page cache index unavailable");
            return None;
        }
    };
    for old in dropped {
        forget(&rt.objects, &old).await;
    }
    Some(CachedCopy {
        key: key.to_owned(),
        fetched_at: time_of(entry.fetched_at),
        content_hash: entry.content_hash,
        hit: false,
    })
}

/// Deletes a dropped entry's objects: the page and clean's text of it.
pub async fn forget(objects: &Objects, entry: &PageEntry) {
    let text = paths::page_key(&entry.object).map(paths::page_text);
    for object in std::iter::once(entry.object.clone()).chain(text) {
        if let Err(e) = objects.delete(&object).await {
            warn!(error = %e, %object, "page cache object not deleted");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_stable_hashes_of_the_url() {
        let key = key_of("https://example.org/a");
        assert_eq!(key.len(), 64);
        assert_eq!(key, key_of("https://example.org/a"));
        assert_ne!(key, key_of("https://example.org/b"));
        assert_eq!(paths::page_key(&paths::page(&key)), Some(key.as_str()));
        // SHA-256's own test vector: stored pages keep their object paths.
        assert_eq!(
            key_of("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
