//! Caches: entries come back until their TTL runs out, several at once in order.

use std::sync::Arc;
use std::time::Duration;

use trawl_store::{Cache, Store};

async fn cache_round_trip_and_expiry(store: Arc<dyn Store>) {
    assert_eq!(
        store
            .cache_get(Cache::Robots, "https://a.test")
            .await
            .unwrap(),
        None
    );
    store
        .cache_put(
            Cache::Robots,
            "https://a.test",
            b"rules",
            Duration::from_secs(60),
        )
        .await
        .unwrap();
    store
        .cache_put(
            Cache::Relevance,
            "https://a.test",
            b"other",
            Duration::from_millis(200),
        )
        .await
        .unwrap();
    assert_eq!(
        store
            .cache_get(Cache::Robots, "https://a.test")
            .await
            .unwrap()
            .unwrap(),
        b"rules"
    );
    assert_eq!(
        store
            .cache_get(Cache::Relevance, "https://a.test")
            .await
            .unwrap()
            .unwrap(),
        b"other"
    );
    let mut expired = false;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if store
            .cache_get(Cache::Relevance, "https://a.test")
            .await
            .unwrap()
            .is_none()
        {
            expired = true;
            break;
        }
    }
    assert!(expired, "a cache entry outlived its TTL");
    store.delete_all().await.unwrap();
}

async fn several_cache_entries_come_back_in_order(store: Arc<dyn Store>) {
    let ttl = Duration::from_secs(60);
    (store.cache_put(Cache::HostLevel, "m.test", b"2", ttl))
        .await
        .unwrap();
    (store.cache_put(Cache::HostBackoff, "n.test", b"5000", ttl))
        .await
        .unwrap();
    let entries = [
        (Cache::HostBackoff, "m.test"),
        (Cache::HostLevel, "m.test"),
        (Cache::HostBackoff, "n.test"),
    ];
    let found = store.cache_get_many(&entries).await.unwrap();
    assert_eq!(found, [None, Some(b"2".to_vec()), Some(b"5000".to_vec())]);
    let one = store.cache_get_many(&entries[1..2]).await.unwrap();
    assert_eq!(one, [Some(b"2".to_vec())]);
    store.delete_all().await.unwrap();
}

both! {
    cache_round_trip_and_expiry,
    several_cache_entries_come_back_in_order,
}
