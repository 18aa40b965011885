//! Batches: each batch's jobs, counters and outcomes (forgotten once its record expires,
//! which it does only after it ends), and each owner's batch ids.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

use async_trait::async_trait;
use tokio::time::Instant;

use super::MemoryStore;
use crate::{BatchProgress, Batches, StoreError, OWNER_BATCHES_KEPT, PENDING};

#[derive(Default)]
pub(super) struct State {
    batches: HashMap<String, Batch>,
    /// Each owner's batch ids, which sort by creation (UUIDv7).
    owners: HashMap<String, BTreeSet<String>>,
}

#[derive(Default)]
pub(super) struct Batch {
    jobs: BTreeMap<String, String>,
    cancelled: bool,
    /// The batch's counters, the budget's among them ([`crate::budget`]).
    pub(super) counters: BTreeMap<String, i64>,
    outcomes: BTreeMap<String, u64>,
    /// Set when the batch ends.
    expires: Option<Instant>,
}

impl State {
    /// Forgets `batch` if its record has expired.
    fn prune_batch(&mut self, batch: &str) {
        if (self.batches.get(batch)).is_some_and(|b| b.expires.is_some_and(|t| t <= Instant::now()))
        {
            self.batches.remove(batch);
        }
    }

    /// `batch`'s record, a new one if it has none (or it has expired).
    pub(super) fn record(&mut self, batch: &str) -> &mut Batch {
        self.prune_batch(batch);
        self.batches.entry(batch.to_owned()).or_default()
    }
}

impl MemoryStore {
    fn batches<T>(&self, f: impl FnOnce(&mut State) -> T) -> Result<T, StoreError> {
        self.with(|s| f(&mut s.batches))
    }
}

#[async_trait]
impl Batches for MemoryStore {
    async fn batch_create(&self, batch: &str, jobs: &[String]) -> Result<(), StoreError> {
        self.batches(|s| {
            let b = s.batches.entry(batch.to_owned()).or_default();
            for job in jobs {
                b.jobs
                    .entry(job.clone())
                    .or_insert_with(|| PENDING.to_owned());
            }
        })
    }

    async fn batch_finish(
        &self,
        batch: &str,
        job: &str,
        status: &str,
        outcomes: &BTreeMap<String, u32>,
        ttl: Duration,
    ) -> Result<bool, StoreError> {
        self.batches(|s| {
            s.prune_batch(batch);
            let Some(b) = s.batches.get_mut(batch) else {
                return false;
            };
            match b.jobs.get_mut(job) {
                Some(current) if current == PENDING => {
                    *current = status.to_owned();
                    for (outcome, &n) in outcomes {
                        *b.outcomes.entry(outcome.clone()).or_default() += u64::from(n);
                    }
                    if !b.jobs.values().any(|st| st == PENDING) {
                        b.expires = Some(Instant::now() + ttl);
                    }
                    true
                }
                _ => false,
            }
        })
    }

    async fn batch_job_status(&self, batch: &str, job: &str) -> Result<Option<String>, StoreError> {
        self.batches(|s| {
            s.prune_batch(batch);
            s.batches.get(batch).and_then(|b| b.jobs.get(job)).cloned()
        })
    }

    async fn batch_jobs(&self, batch: &str) -> Result<BTreeMap<String, String>, StoreError> {
        self.batches(|s| {
            s.prune_batch(batch);
            s.batches
                .get(batch)
                .map(|b| b.jobs.clone())
                .unwrap_or_default()
        })
    }

    async fn batch_progress(&self, batch: &str) -> Result<Option<BatchProgress>, StoreError> {
        self.batches(|s| {
            s.prune_batch(batch);
            s.batches.get(batch).map(|b| {
                let mut p = BatchProgress {
                    total: b.jobs.len() as u64,
                    cancelled: b.cancelled,
                    outcomes: b.outcomes.clone(),
                    ..Default::default()
                };
                for status in b.jobs.values().filter(|st| *st != PENDING) {
                    *p.by_status.entry(status.clone()).or_default() += 1;
                    p.finished += 1;
                }
                p
            })
        })
    }

    async fn batch_add(&self, batch: &str, counter: &str, delta: i64) -> Result<i64, StoreError> {
        self.batches(|s| {
            let b = s.record(batch);
            let v = b.counters.entry(counter.to_owned()).or_default();
            *v += delta;
            *v
        })
    }

    async fn batch_counter(&self, batch: &str, counter: &str) -> Result<i64, StoreError> {
        self.batches(|s| {
            s.prune_batch(batch);
            s.batches
                .get(batch)
                .and_then(|b| b.counters.get(counter).copied())
                .unwrap_or(0)
        })
    }

    async fn owner_batch_add(&self, owner: &str, batch: &str) -> Result<(), StoreError> {
        self.batches(|s| {
            let batches = s.owners.entry(owner.to_owned()).or_default();
            batches.insert(batch.to_owned());
            while batches.len() > OWNER_BATCHES_KEPT {
                batches.pop_first();
            }
        })
    }

    async fn owner_batches(
        &self,
        owner: &str,
        before: Option<&str>,
        limit: usize,
    ) -> Result<Vec<String>, StoreError> {
        self.batches(|s| {
            let Some(batches) = s.owners.get(owner) else {
                return Vec::new();
            };
            (batches.iter().rev())
                .filter(|b| before.is_none_or(|before| b.as_str() < before))
                .take(limit)
                .cloned()
                .collect()
        })
    }

    async fn batches_open(&self) -> Result<Vec<String>, StoreError> {
        self.batches(|s| {
            s.batches
                .iter()
                .filter(|(_, b)| b.jobs.values().any(|st| st == PENDING))
                .map(|(id, _)| id.clone())
                .collect()
        })
    }

    async fn batch_cancel(&self, batch: &str, ttl: Duration) -> Result<bool, StoreError> {
        self.batches(|s| {
            s.prune_batch(batch);
            let Some(b) = s.batches.get_mut(batch) else {
                return false;
            };
            b.cancelled = true;
            for status in b.jobs.values_mut().filter(|st| *st == PENDING) {
                *status = "cancelled".to_owned();
            }
            b.expires = Some(Instant::now() + ttl);
            true
        })
    }
}
