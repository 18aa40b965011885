//! The Redis store: connection, key prefix and errors here, each concern's commands and Lua
//! scripts in a file of its own.
//!
//! Key layout under the prefix `p` (every key but `p:batches:open`, `p:tokens`, the owners'
//! indexes and the `p:batch:*` of batches not yet ended has a TTL):
//!
//! | key | type | written by |
//! |---|---|---|
//! | `p:cache:<cache>:<key>` | string, TTL per entry | fetch (robots), search (relevance) … |
//! | `p:lock:<name>` | string, TTL | single-flight fetches, synthesis leases |
//! | `p:rate:<host>` | string (theoretical arrival time, ms), TTL ≥ interval | fetch |
//! | `p:rate:line:<slot>`, `p:rate:sent:<host>` | string (ms): where a slot's line of waiters ends; when a host may next be sent a request | fetch, search, LLM calls |
//! | `p:slots:<name>` | sorted set of holders by lease expiry, TTL = the longest lease | fetch (per host), API quotas, shared-store probes |
//! | `p:window:<name>` | integer, TTL = the window | API rate limit per token |
//! | `p:job:<job>` | hash `expected`, `meta`, TTL | search (fan-in open) |
//! | `p:job:<job>:outcomes` | hash idx → outcome, TTL | fetch, clean |
//! | `p:job:<job>:counters` | hash counter → integer, TTL | every worker (timings, tokens, cost) |
//! | `p:batch:<b>:jobs` | hash job → status; TTL `store.batch_ttl_secs` from the batch's end | submit, synthesize, cancel |
//! | `p:batch:<b>` | hash `finished`, `cancelled`, `status:<s>` per status, `outcome:<o>` per source outcome, `c:<name>` counters; TTL as the jobs hash | same, and LLM spend |
//! | `p:batches:open` | set of batches with jobs not yet ended | submit adds; the last finish or cancel removes |
//! | `p:owner:<token>:batches` | sorted set of an API token's newest batches (score 0, by id); no TTL | submit |
//! | `p:tokens` | hash SHA-256 of an API token → its record; no TTL | `trawl token` |
//! | `p:pages:entries`, `p:pages:sizes`, `p:pages:used`, `p:pages:bytes` | the page cache's index: hash key → entry JSON, hash key → bytes, sorted set by last use (µs), the bytes' sum; TTL `cache.keep_secs` | fetch |
//!
//! Every change that reads before it writes is a Lua script, so two workers can never both
//! "win" (record the same outcome, finish the same job, take the same rate-limit slot). The
//! rate limiter reads Redis's own clock (`TIME`), so workers' clocks need not agree.

use std::time::Duration;

use ::redis::aio::{ConnectionManager, ConnectionManagerConfig};
use ::redis::AsyncCommands;
use async_trait::async_trait;

use crate::{Store, StoreError};

mod batch;
mod budget;
mod cache;
mod job;
mod lock;
mod page;
mod rate;
mod token;

#[derive(Clone)]
pub struct RedisStore {
    con: ConnectionManager,
    prefix: String,
}

/// A connection failure is an outage (retried until Redis is back); anything else, a script or
/// type error, is the operation's own failure.
fn backend(e: ::redis::RedisError) -> StoreError {
    if e.is_io_error() || e.is_connection_dropped() || e.is_connection_refusal() || e.is_timeout() {
        StoreError::Unreachable {
            url: "Redis".into(),
            reason: e.to_string(),
        }
    } else {
        StoreError::Backend(e.to_string())
    }
}

fn ms(d: Duration) -> u64 {
    d.as_millis().max(1) as u64
}

impl RedisStore {
    /// Connects, failing with a clear error within `wait` when Redis is unreachable.
    pub async fn connect(url: &str, prefix: &str, wait: Duration) -> Result<Self, StoreError> {
        let redacted = trawl_config::redact_url(url);
        let unreachable = |reason: String| StoreError::Unreachable {
            url: redacted.clone(),
            reason,
        };
        let client = ::redis::Client::open(url).map_err(|e| unreachable(e.to_string()))?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(5)))
            .set_response_timeout(Some(Duration::from_secs(10)))
            .set_number_of_retries(3)
            .set_max_delay(Duration::from_secs(2));
        let con = tokio::time::timeout(wait, client.get_connection_manager_with_config(config))
            .await
            .map_err(|_| unreachable("connection timed out".into()))?
            .map_err(|e| unreachable(e.to_string()))?;
        Ok(RedisStore {
            con,
            prefix: prefix.to_owned(),
        })
    }

    /// Every key the store uses: the prefix and `parts`, `:`-separated.
    fn key(&self, parts: &[&str]) -> String {
        let mut key = self.prefix.clone();
        for p in parts {
            key.push(':');
            key.push_str(p);
        }
        key
    }

    fn con(&self) -> ConnectionManager {
        self.con.clone()
    }
}

#[async_trait]
impl Store for RedisStore {
    async fn delete_all(&self) -> Result<(), StoreError> {
        let mut con = self.con();
        let pattern = format!("{}:*", self.prefix);
        let mut cursor: u64 = 0;
        loop {
            let (next, keys): (u64, Vec<String>) = ::redis::cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg(&pattern)
                .arg("COUNT")
                .arg(500)
                .query_async(&mut con)
                .await
                .map_err(backend)?;
            if !keys.is_empty() {
                con.del::<_, ()>(keys).await.map_err(backend)?;
            }
            if next == 0 {
                return Ok(());
            }
            cursor = next;
        }
    }
}
