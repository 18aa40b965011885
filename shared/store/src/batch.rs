//! Batches: each job's status until it ends, the batch's progress and counters, the batches not
//! yet ended, and each API token's batches.

use std::collections::BTreeMap;
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::StoreError;

/// A batch's progress: how many jobs ended, by status.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchProgress {
    pub total: u64,
    pub finished: u64,
    pub by_status: BTreeMap<String, u64>,
    /// The ended jobs' sources by terminal outcome (`analysed`, `failed`, `blocked` …).
    #[serde(default)]
    pub outcomes: BTreeMap<String, u64>,
    pub cancelled: bool,
}

impl BatchProgress {
    pub fn is_done(&self) -> bool {
        self.finished >= self.total
    }
}

/// Status of a job in its batch before it has ended.
pub const PENDING: &str = "pending";

/// How many of its batches an owner's index keeps: the listing's reach, and a bound on the
/// index however many batches a token submits.
pub const OWNER_BATCHES_KEPT: usize = 10_000;

#[async_trait]
pub trait Batches: Send + Sync {
    /// Creates a batch record with every job pending. It has no TTL while a job is pending.
    async fn batch_create(&self, batch: &str, jobs: &[String]) -> Result<(), StoreError>;
    /// Ends `job` with `status`, adding its sources' `outcomes` (outcome → count) to the
    /// batch's; true only the first time, so a job is never counted twice. Ending the last job
    /// gives the record `ttl`.
    async fn batch_finish(
        &self,
        batch: &str,
        job: &str,
        status: &str,
        outcomes: &BTreeMap<String, u32>,
        ttl: Duration,
    ) -> Result<bool, StoreError>;
    async fn batch_job_status(&self, batch: &str, job: &str) -> Result<Option<String>, StoreError>;
    async fn batch_jobs(&self, batch: &str) -> Result<BTreeMap<String, String>, StoreError>;
    async fn batch_progress(&self, batch: &str) -> Result<Option<BatchProgress>, StoreError>;
    /// Adds `delta` to a batch counter (LLM spend, the budget …) and returns its new value.
    async fn batch_add(&self, batch: &str, counter: &str, delta: i64) -> Result<i64, StoreError>;
    async fn batch_counter(&self, batch: &str, counter: &str) -> Result<i64, StoreError>;

    /// Indexes `batch` (a UUIDv7, so ids sort by creation) under its owner, the API token
    /// that submitted it: what `GET /v1/batches` lists. Each owner keeps its newest
    /// [`OWNER_BATCHES_KEPT`].
    async fn owner_batch_add(&self, owner: &str, batch: &str) -> Result<(), StoreError>;
    /// Up to `limit` of the owner's batches, newest first, all older than `before` when given.
    async fn owner_batches(
        &self,
        owner: &str,
        before: Option<&str>,
        limit: usize,
    ) -> Result<Vec<String>, StoreError>;

    /// Batches with jobs not yet ended.
    async fn batches_open(&self) -> Result<Vec<String>, StoreError>;
    /// Marks the batch cancelled (its pending jobs end as `cancelled`) and gives its record
    /// `ttl`; true if it exists.
    async fn batch_cancel(&self, batch: &str, ttl: Duration) -> Result<bool, StoreError>;
}
