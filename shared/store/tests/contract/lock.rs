//! Locks, and the guards of `trawl_store::lock`.

use std::sync::Arc;
use std::time::Duration;

use trawl_store::{LockGuard, Store};

/// A lock is exclusive until released or expired, and only its holder releases it: a holder
/// that outlived its lease cannot release the lock someone else has taken since.
async fn locks_are_exclusive_until_released(store: Arc<dyn Store>) {
    let name = "robots:a.test";
    let first = store.try_lock(name, Duration::from_secs(30)).await.unwrap();
    let first = first.expect("a free lock is taken");
    assert!(store
        .try_lock(name, Duration::from_secs(30))
        .await
        .unwrap()
        .is_none());
    store.unlock(&first).await.unwrap();
    let late = (store
        .try_lock(name, Duration::from_millis(100))
        .await
        .unwrap())
    .expect("a released lock is free");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let next = store.try_lock(name, Duration::from_secs(5)).await.unwrap();
    let next = next.expect("an expired lock is free");
    // The late holder finishes and releases: the next holder keeps the lock.
    store.unlock(&late).await.unwrap();
    assert!(store
        .try_lock(name, Duration::from_secs(5))
        .await
        .unwrap()
        .is_none());
    store.unlock(&next).await.unwrap();
    assert!(store
        .try_lock(name, Duration::from_secs(5))
        .await
        .unwrap()
        .is_some());
    store.delete_all().await.unwrap();
}

/// A lock guard lets its lock go however its holder stops: by releasing it, by dropping it
/// (an early return), or by a panic unwinding.
async fn lock_guards_release_on_every_path(store: Arc<dyn Store>) {
    let name = "robots:b.test";
    let ttl = Duration::from_secs(30);
    let held = trawl_store::lock(&store, name, ttl).await.unwrap();
    let held = held.expect("a free lock is taken");
    assert!(trawl_store::lock(&store, name, ttl)
        .await
        .unwrap()
        .is_none());
    held.release().await.unwrap();
    let held = trawl_store::lock(&store, name, ttl).await.unwrap();
    drop(held.expect("a released lock is free"));
    let held = retaken(&store, name).await;
    let holder = tokio::spawn(async move {
        let _held = held;
        panic!("the holder fails");
    });
    assert!(holder.await.unwrap_err().is_panic());
    retaken(&store, name).await.release().await.unwrap();
    store.delete_all().await.unwrap();
}

/// The lock `name`, once a dropped guard's release (in the background) has freed it.
async fn retaken(store: &Arc<dyn Store>, name: &str) -> LockGuard {
    for _ in 0..200 {
        let guard = trawl_store::lock(store, name, Duration::from_secs(30)).await;
        if let Some(guard) = guard.unwrap() {
            return guard;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("a dropped guard left {name} locked");
}

both! {
    locks_are_exclusive_until_released,
    lock_guards_release_on_every_path,
}
