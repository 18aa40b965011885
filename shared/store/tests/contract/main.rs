//! One contract suite, a module per concern, run against the in-memory twin and against real
//! Redis (`TRAWL_TEST_REDIS_URL`, default `redis://127.0.0.1:6379/`). Each Redis case uses its
//! own key prefix and deletes its keys at the end.

use std::sync::Arc;
use std::time::Duration;

use trawl_store::prelude::*;
use trawl_store::{Cache, MemoryStore, RedisStore};

/// Runs each named case of the module it is called in against both stores.
macro_rules! both {
    ($($name:ident),* $(,)?) => {
        mod memory_twin {
            $(#[tokio::test] async fn $name() { super::$name(crate::memory()).await })*
        }
        mod redis_store {
            $(#[tokio::test] async fn $name() { super::$name(crate::redis().await).await })*
        }
    };
}

mod batch;
mod budget;
mod cache;
mod job;
mod lock;
mod page;
mod rate;
mod token;

fn redis_url() -> String {
    std::env::var("TRAWL_TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/".into())
}

fn unique_prefix() -> String {
    format!(
        "test-{}-{}",
        std::process::id(),
        uuid::Uuid::now_v7().simple()
    )
}

async fn redis_at(prefix: &str) -> RedisStore {
    RedisStore::connect(&redis_url(), prefix, Duration::from_secs(5))
        .await
        .expect("Redis must run for the contract tests (scripts/services-up)")
}

async fn redis() -> Arc<dyn Store> {
    Arc::new(redis_at(&unique_prefix()).await)
}

fn memory() -> Arc<dyn Store> {
    Arc::new(MemoryStore::new())
}

/// Every key but a batch record (and the index of open batches) carries a TTL.
#[tokio::test]
async fn redis_keys_have_ttls_except_batch_records() {
    let prefix = unique_prefix();
    let store = redis_at(&prefix).await;
    let ttl = Duration::from_secs(60);
    store
        .cache_put(Cache::Content, "k", b"v", ttl)
        .await
        .unwrap();
    store.try_lock("l", ttl).await.unwrap();
    store.rate_acquire("h.test", ttl).await.unwrap();
    store.rate_hold("g.test", ttl).await.unwrap();
    store.slot_acquire("h.test", "t", 1, ttl).await.unwrap();
    store.fanin_open("j", 1, b"m", ttl).await.unwrap();
    store.fanin_record("j", 0, b"o", ttl).await.unwrap();
    store.batch_create("b", &["j".into()]).await.unwrap();
    store
        .job_add("j", &[("n.search".into(), 1)], ttl)
        .await
        .unwrap();

    let client = redis::Client::open(redis_url()).unwrap();
    let mut con = client.get_multiplexed_async_connection().await.unwrap();
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{prefix}:*"))
        .query_async(&mut con)
        .await
        .unwrap();
    assert_eq!(keys.len(), 11, "{keys:?}");
    for key in keys {
        let ttl: i64 = redis::cmd("PTTL")
            .arg(&key)
            .query_async(&mut con)
            .await
            .unwrap();
        let is_batch = key.starts_with(&format!("{prefix}:batch:"))
            || *key == format!("{prefix}:batches:open");
        assert_eq!(ttl == -1, is_batch, "{key} has PTTL {ttl}");
    }
    store.delete_all().await.unwrap();
}
