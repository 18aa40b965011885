//! Pages: the page cache's index round-trips entries, counts their bytes, and drops the least
//! recently used past its bound and those unused for `keep`.

use std::sync::Arc;
use std::time::Duration;

use trawl_store::{PageClaim, PageEntry, PageStats, Store, Wanted};

const KEEP: Duration = Duration::from_secs(60);

fn entry(object: &str, bytes: u64) -> PageEntry {
    PageEntry {
        object: object.into(),
        fetched_at: 1_700_000_000,
        etag: None,
        last_modified: None,
        content_hash: format!("hash-{object}"),
        level: 1,
        bytes,
    }
}

fn stats(entries: u64, bytes: u64) -> PageStats {
    PageStats { entries, bytes }
}

async fn page_round_trip(store: Arc<dyn Store>) {
    assert_eq!(store.page_get("a").await.unwrap(), None);
    assert_eq!(store.page_stats().await.unwrap(), stats(0, 0));
    let with = PageEntry {
        etag: Some("\"v1\"".into()),
        last_modified: Some("Tue, 14 Nov 2023 22:13:20 GMT".into()),
        ..entry("pages/a", 10)
    };
    let without = entry("pages/b", 20);
    assert!(store
        .page_put("a", &with, 100, KEEP)
        .await
        .unwrap()
        .is_empty());
    assert!(store
        .page_put("b", &without, 100, KEEP)
        .await
        .unwrap()
        .is_empty());
    assert_eq!(store.page_get("a").await.unwrap(), Some(with));
    assert_eq!(store.page_get("b").await.unwrap(), Some(without));
    assert_eq!(store.page_stats().await.unwrap(), stats(2, 30));
    store.delete_all().await.unwrap();
}

async fn page_put_replaces(store: Arc<dyn Store>) {
    store
        .page_put("a", &entry("pages/a1", 40), 100, KEEP)
        .await
        .unwrap();
    let newer = entry("pages/a2", 70);
    // The replaced entry is not "dropped": its bytes just stop counting.
    assert!(store
        .page_put("a", &newer, 100, KEEP)
        .await
        .unwrap()
        .is_empty());
    assert_eq!(store.page_get("a").await.unwrap(), Some(newer));
    assert_eq!(store.page_stats().await.unwrap(), stats(1, 70));
    store.delete_all().await.unwrap();
}

async fn page_bound_evicts_least_recently_used(store: Arc<dyn Store>) {
    let (a, b, c) = (
        entry("pages/a", 40),
        entry("pages/b", 40),
        entry("pages/c", 40),
    );
    store.page_put("a", &a, 100, KEEP).await.unwrap();
    store.page_put("b", &b, 100, KEEP).await.unwrap();
    assert_eq!(store.page_put("c", &c, 100, KEEP).await.unwrap(), [a]);
    assert_eq!(store.page_get("a").await.unwrap(), None);
    assert_eq!(store.page_stats().await.unwrap(), stats(2, 80));
    store.delete_all().await.unwrap();
}

async fn page_read_is_a_use(store: Arc<dyn Store>) {
    let (a, b, c) = (
        entry("pages/a", 40),
        entry("pages/b", 40),
        entry("pages/c", 40),
    );
    store.page_put("a", &a, 100, KEEP).await.unwrap();
    store.page_put("b", &b, 100, KEEP).await.unwrap();
    assert_eq!(store.page_get("a").await.unwrap(), Some(a.clone()));
    assert_eq!(store.page_put("c", &c, 100, KEEP).await.unwrap(), [b]);
    assert_eq!(store.page_get("a").await.unwrap(), Some(a));
    assert_eq!(store.page_stats().await.unwrap(), stats(2, 80));
    store.delete_all().await.unwrap();
}

async fn page_just_put_is_never_evicted(store: Arc<dyn Store>) {
    let (a, big) = (entry("pages/a", 40), entry("pages/big", 500));
    store.page_put("a", &a, 100, KEEP).await.unwrap();
    assert_eq!(store.page_put("big", &big, 100, KEEP).await.unwrap(), [a]);
    assert_eq!(store.page_get("big").await.unwrap(), Some(big));
    assert_eq!(store.page_stats().await.unwrap(), stats(1, 500));
    store.delete_all().await.unwrap();
}

/// `b` goes unused for `keep`; `a`, read halfway, stays (on Redis the read also keeps the
/// index's keys from expiring before the next put).
async fn page_unused_for_keep_are_dropped(store: Arc<dyn Store>) {
    let keep = Duration::from_secs(1);
    let (a, b, c) = (
        entry("pages/a", 1),
        entry("pages/b", 1),
        entry("pages/c", 1),
    );
    store.page_put("a", &a, 100, keep).await.unwrap();
    store.page_put("b", &b, 100, keep).await.unwrap();
    tokio::time::sleep(Duration::from_millis(600)).await;
    store.page_get("a").await.unwrap();
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(store.page_put("c", &c, 100, keep).await.unwrap(), [b]);
    assert_eq!(store.page_get("a").await.unwrap(), Some(a));
    assert_eq!(store.page_stats().await.unwrap(), stats(2, 2));
    store.delete_all().await.unwrap();
}

async fn page_refresh_sets_fetched_at(store: Arc<dyn Store>) {
    assert!(!store.page_refresh("a", 1_800_000_000).await.unwrap());
    // On Redis the entry is decoded and encoded again in Lua: absent options, escapes and
    // non-ASCII text must still read back the same.
    let a = PageEntry {
        last_modified: Some("Tue, 14 Nov 2023 22:13:20 GMT".into()),
        level: 3,
        ..entry("pages/ä/\"a\"\\", 123_456_789_012)
    };
    store.page_put("a", &a, u64::MAX, KEEP).await.unwrap();
    assert!(store.page_refresh("a", 1_800_000_000).await.unwrap());
    let refreshed = PageEntry {
        fetched_at: 1_800_000_000,
        ..a.clone()
    };
    assert_eq!(store.page_get("a").await.unwrap(), Some(refreshed));
    assert_eq!(store.page_stats().await.unwrap(), stats(1, a.bytes));
    store.delete_all().await.unwrap();
}

async fn page_remove_returns_the_entry(store: Arc<dyn Store>) {
    let (a, b) = (entry("pages/a", 10), entry("pages/b", 20));
    store.page_put("a", &a, 100, KEEP).await.unwrap();
    store.page_put("b", &b, 100, KEEP).await.unwrap();
    assert_eq!(store.page_remove("a").await.unwrap(), Some(a));
    assert_eq!(store.page_remove("a").await.unwrap(), None);
    assert_eq!(store.page_get("a").await.unwrap(), None);
    assert_eq!(store.page_stats().await.unwrap(), stats(1, 20));
    store.delete_all().await.unwrap();
}

async fn page_purge_returns_all(store: Arc<dyn Store>) {
    let all = [
        entry("pages/a", 10),
        entry("pages/b", 20),
        entry("pages/c", 30),
    ];
    for (i, e) in all.iter().enumerate() {
        store.page_put(&i.to_string(), e, 100, KEEP).await.unwrap();
    }
    let mut purged = store.page_purge().await.unwrap();
    purged.sort_by(|x, y| x.object.cmp(&y.object));
    assert_eq!(purged, all);
    assert_eq!(store.page_stats().await.unwrap(), stats(0, 0));
    assert_eq!(store.page_get("0").await.unwrap(), None);
    assert!(store.page_purge().await.unwrap().is_empty());
    store.delete_all().await.unwrap();
}

/// A claim hands over a copy the job takes, else the fill lock (once), with the copy it
/// found; a fill puts the entry and lets the lock go in one step, so the next claim takes it.
async fn page_claim_takes_a_copy_or_the_fill_lock(store: Arc<dyn Store>) {
    let ttl = Duration::from_secs(30);
    let fresh = |fresh_after: u64, max_level: u8| Wanted {
        fresh_after,
        max_level,
    };
    let lock = "page:a";
    let PageClaim::Fill { found, lease } =
        store.page_claim("a", fresh(0, 3), lock, ttl).await.unwrap()
    else {
        panic!("nothing there: this job fetches the page");
    };
    assert_eq!(found, None);
    assert_eq!(
        store.page_claim("a", fresh(0, 3), lock, ttl).await.unwrap(),
        PageClaim::Busy
    );
    // Entry level 1, fetched at 1_700_000_000.
    let a = entry("pages/a", 10);
    store.page_fill("a", &a, (100, KEEP), &lease).await.unwrap();
    assert_eq!(
        store
            .page_claim("a", fresh(1_700_000_000, 1), lock, ttl)
            .await
            .unwrap(),
        PageClaim::Fresh(a.clone())
    );
    // Too old, then from a level the job does not reach: the lock, with what was there.
    for wanted in [fresh(1_700_000_001, 3), fresh(0, 0)] {
        match store.page_claim("a", wanted, lock, ttl).await.unwrap() {
            PageClaim::Fill { found, lease } => {
                assert_eq!(found, Some(a.clone()), "{wanted:?}");
                store.unlock(&lease).await.unwrap();
            }
            other => panic!("{wanted:?}: {other:?}"),
        }
    }
    // A fill with a lease that lost the lock leaves the new holder's lock alone.
    let PageClaim::Fill { lease: held, .. } = store
        .page_claim("a", fresh(u64::MAX, 3), lock, ttl)
        .await
        .unwrap()
    else {
        panic!("the lock is free");
    };
    store.page_fill("a", &a, (100, KEEP), &lease).await.unwrap();
    assert!(store.try_lock(lock, ttl).await.unwrap().is_none());
    store.unlock(&held).await.unwrap();
    assert_eq!(store.page_stats().await.unwrap(), stats(1, 10));
    store.delete_all().await.unwrap();
}

/// Every key of the index has a TTL, `keep`.
#[tokio::test]
async fn redis_page_keys_expire_after_keep() {
    use trawl_store::prelude::*;

    let prefix = crate::unique_prefix();
    let store = crate::redis_at(&prefix).await;
    store
        .page_put("a", &entry("pages/a", 1), 100, KEEP)
        .await
        .unwrap();
    store.page_get("a").await.unwrap();
    let client = redis::Client::open(crate::redis_url()).unwrap();
    let mut con = client.get_multiplexed_async_connection().await.unwrap();
    for key in ["entries", "sizes", "used", "bytes"] {
        let ttl: i64 = redis::cmd("PTTL")
            .arg(format!("{prefix}:pages:{key}"))
            .query_async(&mut con)
            .await
            .unwrap();
        assert!(0 < ttl && ttl <= 60_000, "{key} has PTTL {ttl}");
    }
    store.delete_all().await.unwrap();
}

both! {
    page_round_trip,
    page_put_replaces,
    page_bound_evicts_least_recently_used,
    page_read_is_a_use,
    page_just_put_is_never_evicted,
    page_unused_for_keep_are_dropped,
    page_refresh_sets_fetched_at,
    page_remove_returns_the_entry,
    page_purge_returns_all,
    page_claim_takes_a_copy_or_the_fill_lock,
}
