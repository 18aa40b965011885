//! The in-memory twin of the Redis store. Same semantics, one process: expiry is checked on
//! read, the rate limiter uses this process's monotonic clock. One lock over the whole state,
//! which has a part per concern; each concern's methods are in a file of their own.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use async_trait::async_trait;
use tokio::time::Instant;

use crate::{Cache, Lease, Store, StoreError};

mod batch;
mod budget;
mod cache;
mod job;
mod lock;
mod page;
mod rate;
mod token;

#[derive(Default)]
pub struct MemoryStore {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    cache: HashMap<(Cache, String), Expiring<Vec<u8>>>,
    locks: HashMap<String, (Instant, Lease)>,
    rates: rate::State,
    jobs: job::State,
    batches: batch::State,
    pages: page::State,
    tokens: BTreeMap<String, Vec<u8>>,
}

struct Expiring<T> {
    value: T,
    until: Instant,
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }

    fn with<T>(&self, f: impl FnOnce(&mut State) -> T) -> Result<T, StoreError> {
        Ok(f(&mut self.state.lock().expect("store lock")))
    }
}

fn live<T>(entry: Option<&Expiring<T>>) -> Option<&T> {
    entry.filter(|e| e.until > Instant::now()).map(|e| &e.value)
}

#[async_trait]
impl Store for MemoryStore {
    async fn delete_all(&self) -> Result<(), StoreError> {
        self.with(|s| *s = State::default())
    }
}
