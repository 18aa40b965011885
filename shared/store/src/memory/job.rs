//! Jobs: each job's fan-in record (expected count, meta, extensions, outcomes) and its
//! counters, both with the job's TTL.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use async_trait::async_trait;
use tokio::time::Instant;

use super::{live, Expiring, MemoryStore};
use crate::{Extension, FanIn, Jobs, StoreError};

#[derive(Default)]
pub(super) struct State {
    fanin: HashMap<String, Expiring<Job>>,
    counters: HashMap<String, Expiring<BTreeMap<String, i64>>>,
}

struct Job {
    expected: u32,
    meta: Vec<u8>,
    outcomes: BTreeMap<u32, Vec<u8>>,
    extensions: BTreeMap<u32, Extension>,
}

impl MemoryStore {
    fn jobs<T>(&self, f: impl FnOnce(&mut State) -> T) -> Result<T, StoreError> {
        self.with(|s| f(&mut s.jobs))
    }
}

#[async_trait]
impl Jobs for MemoryStore {
    async fn fanin_open(
        &self,
        job: &str,
        expected: u32,
        meta: &[u8],
        ttl: Duration,
    ) -> Result<bool, StoreError> {
        self.jobs(|s| {
            if live(s.fanin.get(job)).is_some() {
                return false;
            }
            let value = Job {
                expected,
                meta: meta.to_vec(),
                outcomes: BTreeMap::new(),
                extensions: BTreeMap::new(),
            };
            s.fanin.insert(
                job.to_owned(),
                Expiring {
                    value,
                    until: Instant::now() + ttl,
                },
            );
            true
        })
    }

    async fn fanin_meta(&self, job: &str) -> Result<Option<(u32, Vec<u8>)>, StoreError> {
        self.jobs(|s| live(s.fanin.get(job)).map(|j| (j.expected, j.meta.clone())))
    }

    async fn fanin_extend(
        &self,
        job: &str,
        parent: u32,
        sources: &[u8],
        want: u32,
        cap: u32,
    ) -> Result<Option<Extension>, StoreError> {
        self.jobs(|s| {
            let entry = s.fanin.get_mut(job).filter(|e| e.until > Instant::now())?;
            let j = &mut entry.value;
            if let Some(prev) = j.extensions.get(&parent) {
                return Some(prev.clone());
            }
            let crawled: u32 = j.extensions.values().map(|e| e.granted).sum();
            let granted = want.min(cap.saturating_sub(crawled));
            let ext = Extension {
                first: j.expected,
                granted,
                sources: sources.to_vec(),
            };
            j.expected += granted;
            j.extensions.insert(parent, ext.clone());
            Some(ext)
        })
    }

    async fn fanin_extensions(&self, job: &str) -> Result<BTreeMap<u32, Extension>, StoreError> {
        self.jobs(|s| {
            live(s.fanin.get(job))
                .map(|j| j.extensions.clone())
                .unwrap_or_default()
        })
    }

    async fn fanin_record(
        &self,
        job: &str,
        idx: u32,
        outcome: &[u8],
        ttl: Duration,
    ) -> Result<FanIn, StoreError> {
        self.jobs(|s| {
            let now = Instant::now();
            let entry = s.fanin.entry(job.to_owned()).or_insert_with(|| Expiring {
                // An outcome for a job without a record (expired, or never opened): record it
                // anyway so nothing is lost; it can never complete without an expected count.
                value: Job {
                    expected: u32::MAX,
                    meta: Vec::new(),
                    outcomes: BTreeMap::new(),
                    extensions: BTreeMap::new(),
                },
                until: now + ttl,
            });
            let newly_recorded = !entry.value.outcomes.contains_key(&idx);
            if newly_recorded {
                entry.value.outcomes.insert(idx, outcome.to_vec());
            }
            entry.until = entry.until.max(now + ttl);
            FanIn {
                newly_recorded,
                received: entry.value.outcomes.len() as u32,
                expected: entry.value.expected,
            }
        })
    }

    async fn fanin_outcomes(&self, job: &str) -> Result<BTreeMap<u32, Vec<u8>>, StoreError> {
        self.jobs(|s| {
            live(s.fanin.get(job))
                .map(|j| j.outcomes.clone())
                .unwrap_or_default()
        })
    }

    async fn job_add(
        &self,
        job: &str,
        fields: &[(String, i64)],
        ttl: Duration,
    ) -> Result<(), StoreError> {
        self.jobs(|s| {
            let now = Instant::now();
            let entry = s
                .counters
                .entry(job.to_owned())
                .or_insert_with(|| Expiring {
                    value: BTreeMap::new(),
                    until: now + ttl,
                });
            if entry.until <= now {
                entry.value.clear();
            }
            entry.until = now + ttl;
            for (k, v) in fields {
                *entry.value.entry(k.clone()).or_default() += v;
            }
        })
    }

    async fn job_counters(&self, job: &str) -> Result<BTreeMap<String, i64>, StoreError> {
        self.jobs(|s| live(s.counters.get(job)).cloned().unwrap_or_default())
    }
}
