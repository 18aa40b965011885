//! A job's fan-in record (how many outcomes it expects, its meta, the sources crawls added,
//! each outcome once) and its counters.

use std::collections::BTreeMap;
use std::time::Duration;

use async_trait::async_trait;

use crate::StoreError;

/// The state of a job's fan-in after recording one outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FanIn {
    /// False when this URL already had its outcome (a redelivered message): nothing changed.
    pub newly_recorded: bool,
    pub received: u32,
    pub expected: u32,
}

impl FanIn {
    pub fn complete(&self) -> bool {
        self.received >= self.expected
    }
}

/// Sources a crawl added to a job from one parent source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Extension {
    /// Index of the first added source; the others follow.
    pub first: u32,
    /// How many of `sources` were added (the job's crawl cap may cut the list).
    pub granted: u32,
    /// What the crawl proposed, as the caller encoded it (a JSON list of sources).
    pub sources: Vec<u8>,
}

#[async_trait]
pub trait Jobs: Send + Sync {
    /// Creates a job's fan-in record expecting `expected` outcomes, with `meta` (the job's
    /// question and sources). Idempotent: a second call leaves the first record and returns false.
    async fn fanin_open(
        &self,
        job: &str,
        expected: u32,
        meta: &[u8],
        ttl: Duration,
    ) -> Result<bool, StoreError>;
    /// The record's expected count and meta, if it exists.
    async fn fanin_meta(&self, job: &str) -> Result<Option<(u32, Vec<u8>)>, StoreError>;

    /// Adds up to `want` sources (`sources`, encoded by the caller) found by crawling from
    /// source `parent`: the job expects that many more outcomes, numbered from the returned
    /// `first`. At most `cap` sources are ever added to one job. Idempotent per parent: a
    /// redelivered message gets the first call's numbers and sources back. `None` when the
    /// job has no fan-in record (expired or never opened).
    async fn fanin_extend(
        &self,
        job: &str,
        parent: u32,
        sources: &[u8],
        want: u32,
        cap: u32,
    ) -> Result<Option<Extension>, StoreError>;

    /// Every extension of the job, by parent.
    async fn fanin_extensions(&self, job: &str) -> Result<BTreeMap<u32, Extension>, StoreError>;
    /// Records URL `idx`'s terminal outcome once; a repeat changes nothing.
    async fn fanin_record(
        &self,
        job: &str,
        idx: u32,
        outcome: &[u8],
        ttl: Duration,
    ) -> Result<FanIn, StoreError>;
    async fn fanin_outcomes(&self, job: &str) -> Result<BTreeMap<u32, Vec<u8>>, StoreError>;

    /// Adds to a job's counters (stage timings, tokens, cost …), kept for `ttl`.
    async fn job_add(
        &self,
        job: &str,
        fields: &[(String, i64)],
        ttl: Duration,
    ) -> Result<(), StoreError>;
    async fn job_counters(&self, job: &str) -> Result<BTreeMap<String, i64>, StoreError>;
}
