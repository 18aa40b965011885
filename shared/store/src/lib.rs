//! Shared state between trawl's workers, as one trait with two implementations:
//!
//! - [`redis`]: Redis, every multi-step change in one Lua script so it is atomic across the fleet;
//! - [`memory`]: the in-memory twin for `trawl run` and tests.
//!
//! What lives here: caches (robots.txt, relevance, content, LLM responses), single-flight locks
//! and leases, the per-host rate limiter, each job's fan-in record, and batch progress. Every key
//! starts with the configured prefix (`trawl:`). Every key has a TTL but API tokens and the
//! records of batches not yet ended (a batch's record expires `store.batch_ttl_secs` after its
//! last job ends or it is cancelled). Both twins pass the contract suite in `tests/contract.rs`.
//! Callers take a lock with [`lock()`]: its guard lets the lock go on every path.
//!
//! [`objects`] is the object store for results and work products (a local directory, S3, GCS,
//! Azure Blob or memory), and [`shared`] the check that every worker of a fleet sees the same one.
//! [`budget`] names the batch counters of the LLM budget; `metrics` declares the store's
//! metrics, once.

use std::collections::BTreeMap;
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

pub mod memory;

/// A lock held ([`Store::try_lock`]): its name and the holder's token, unique per taking.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    pub name: String,
    token: String,
}

impl Lease {
    fn new(name: &str) -> Lease {
        Lease {
            name: name.to_owned(),
            token: uuid::Uuid::now_v7().simple().to_string(),
        }
    }
}

/// A batch's LLM budget counters ([`Store::batch_counter`]), in micro-dollars.
pub mod budget {
    /// The cap; 0 or absent: no budget.
    pub const BUDGET: &str = "budget_micro";
    /// What finished calls cost.
    pub const SPENT: &str = "spent_micro";
    /// What calls under way have reserved ([`crate::Store::budget_reserve`]).
    pub const RESERVED: &str = "reserved_micro";
    /// Reservations refused: once there is one, the budget is reached.
    pub const REFUSED: &str = "budget_refusals";
}
mod lock;
mod metrics;
pub mod objects;
pub mod outside;
pub mod rate_wait;
pub mod redis;
pub mod shared;

pub use lock::{lock, LockGuard};
pub use memory::MemoryStore;
pub use metrics::init as init_metrics;
pub use objects::{ObjectError, Objects};
pub use redis::RedisStore;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot reach the store at {url}: {reason}")]
    Unreachable { url: String, reason: String },
    #[error("store operation failed: {0}")]
    Backend(String),
}

/// The caches, each its own key space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "kebab-case")]
pub enum Cache {
    Robots,
    /// Search provider answers per (provider, query, page).
    Search,
    Relevance,
    Content,
    Llm,
    /// Per host: the escalation level that last got a page, so later tasks start there.
    HostLevel,
    /// Per host: the Retry-After of its last 429/503, which widens its rate-limit interval.
    HostBackoff,
    /// Per (content hash, question): a source's cleaning and analysis, so a repeated batch
    /// does the work once.
    Analysis,
    /// Per (API token, Idempotency-Key): the request's fingerprint and the batch it created.
    Idempotency,
}

impl Cache {
    pub const ALL: &[Cache] = <Self as strum::VariantArray>::VARIANTS;

    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

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

/// A caller's turn at a rate-limited slot ([`Store::rate_reserve`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Turn {
    /// Booked: go after this long (zero: now).
    Reserved(Duration),
    /// Not booked: the next free slot is this far off, beyond what the caller would wait.
    Busy(Duration),
}

/// Where a request to a host stands when it is about to be sent ([`Store::host_enter`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    /// One of the host's slots is the caller's: send after this long (zero: now), without
    /// asking again.
    Go(Duration),
    /// Every slot is taken.
    Full,
    /// A slot is free, but the host's interval ends this far off, beyond what the caller
    /// would wait: nothing taken.
    Later(Duration),
}

#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// A cache entry, counted in `trawl_cache_lookups_total`.
    async fn cache_get(&self, cache: Cache, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let found = self.cache_read(cache, key).await;
        metrics::lookup(cache, &found);
        found
    }
    /// A cache entry, uncounted: what each store implements.
    async fn cache_read(&self, cache: Cache, key: &str) -> Result<Option<Vec<u8>>, StoreError>;
    /// Several cache entries in one round trip, in order, each counted as
    /// [`Store::cache_get`] counts it.
    async fn cache_get_many(
        &self,
        entries: &[(Cache, &str)],
    ) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        let found = self.cache_read_many(entries).await;
        let caches: Vec<Cache> = entries.iter().map(|(cache, _)| *cache).collect();
        metrics::lookups(&caches, found.as_ref().map(Vec::as_slice));
        found
    }
    /// Several cache entries, uncounted; a store that can, reads them in one round trip.
    async fn cache_read_many(
        &self,
        entries: &[(Cache, &str)],
    ) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        let mut values = Vec::with_capacity(entries.len());
        for (cache, key) in entries {
            values.push(self.cache_read(*cache, key).await?);
        }
        Ok(values)
    }
    async fn cache_put(
        &self,
        cache: Cache,
        key: &str,
        value: &[u8],
        ttl: Duration,
    ) -> Result<(), StoreError>;

    /// Takes the lock `name` for `ttl` if nobody holds it. Used for single-flight fetches and
    /// for synthesis leases; an expired holder loses it, so a crashed worker never wedges a job.
    /// Callers take it through [`lock()`], whose guard releases it on every path.
    async fn try_lock(&self, name: &str, ttl: Duration) -> Result<Option<Lease>, StoreError>;
    /// Releases `lease` if it is still the holder's: a holder that outlived its `ttl` never
    /// releases the lock someone else has taken since.
    async fn unlock(&self, lease: &Lease) -> Result<(), StoreError>;

    /// Generic cell rate algorithm with a burst of one, shared by every process: returns
    /// `Duration::ZERO` and takes the slot when a request to `host` may go now, or how long to
    /// wait (taking nothing). Time is the store's clock, so workers' clocks need not agree.
    async fn rate_acquire(&self, host: &str, interval: Duration) -> Result<Duration, StoreError> {
        Ok(
            match self.rate_reserve(host, interval, Duration::ZERO).await? {
                Turn::Reserved(_) => Duration::ZERO,
                Turn::Busy(wait) => wait,
            },
        )
    }

    /// The same limiter, booking ahead: when `host`'s next free slot comes within `within`,
    /// takes that slot and says how long until it ([`Turn::Reserved`]; the caller waits that
    /// long, then goes, without asking again); otherwise takes nothing ([`Turn::Busy`]). Each
    /// booking moves the next free slot one `interval` on, so callers are spaced however many
    /// book at once, and none polls.
    async fn rate_reserve(
        &self,
        host: &str,
        interval: Duration,
        within: Duration,
    ) -> Result<Turn, StoreError>;

    /// The same limiter for callers that wait however long it takes: takes the turn when
    /// `host`'s slot is free now (zero); otherwise a place in its line, `interval` behind the
    /// last place taken, and says how long until it. The caller sleeps that long, then takes
    /// the turn with [`Store::rate_acquire`]. Waiters so wake one by one instead of all at the
    /// slot's next free time, where all but one would find it taken and ask again; and since
    /// the turn itself is taken at the send, one that wakes late never goes closer to the next
    /// than `interval`.
    async fn rate_queue(&self, host: &str, interval: Duration) -> Result<Duration, StoreError>;

    /// Counts one event in `name`'s current window of `window` (which starts with its first
    /// event) and returns the count so far: a fixed-window limit that allows bursts, shared by
    /// every process (the API's per-token rate limit).
    async fn window_count(&self, name: &str, window: Duration) -> Result<u64, StoreError>;

    /// Adds `amount` to `name`'s count in its current window of `window` (which starts with
    /// its first addition) if the count stays within `limit`: returns the new count, or `None`
    /// and adds nothing. A negative `amount` (giving back what a failed request took) always
    /// applies. The API's per-token quotas, shared by every replica.
    async fn window_add(
        &self,
        name: &str,
        amount: i64,
        limit: u64,
        window: Duration,
    ) -> Result<Option<u64>, StoreError>;

    /// Pushes `host`'s next free slot at least `delay` into the future (a Retry-After).
    async fn rate_hold(&self, host: &str, delay: Duration) -> Result<(), StoreError>;

    /// Takes one of `limit` concurrent slots named `name` under `token` for at most `lease`
    /// (a crashed holder's slot frees itself). False when all are taken.
    async fn slot_acquire(
        &self,
        name: &str,
        token: &str,
        limit: u32,
        lease: Duration,
    ) -> Result<bool, StoreError>;
    async fn slot_release(&self, name: &str, token: &str) -> Result<(), StoreError>;
    /// The tokens holding a slot of `name` whose lease has not run out, sorted.
    async fn slot_holders(&self, name: &str) -> Result<Vec<String>, StoreError>;

    /// Takes one of `host`'s `limit` slots for the request `token` (for at most `lease`) when
    /// the request may be sent within `within`: `interval` after the host's last contact, the
    /// later of the last request's send and the last one's end ([`Store::host_leave`]). With
    /// one slot a host sees its requests at least `interval` apart whatever delays them on the
    /// way: the next is sent only after the previous one's answer came back. The slots are
    /// those of [`Store::slot_acquire`] named `host:<host>`.
    async fn host_enter(
        &self,
        host: &str,
        token: &str,
        limit: u32,
        lease: Duration,
        interval: Duration,
        within: Duration,
    ) -> Result<Entry, StoreError>;
    /// Ends `token`'s request to `host`: frees its slot, makes now the host's last contact,
    /// and moves the host's next free turn ([`Store::rate_reserve`]) to at least `interval`
    /// from now, so turns booked from here on need not wait again at the send.
    async fn host_leave(
        &self,
        host: &str,
        token: &str,
        interval: Duration,
    ) -> Result<(), StoreError>;

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
    /// Reserves `amount` micro-dollars of a batch's LLM budget before a call, atomically across
    /// the fleet. Returns what was reserved: `amount` when `spent + reserved + amount` stays
    /// within the budget (added to [`budget::RESERVED`]), 0 for a batch without a budget, and
    /// `None` when refused (counted in [`budget::REFUSED`], nothing else changed).
    async fn budget_reserve(&self, batch: &str, amount: i64) -> Result<Option<i64>, StoreError>;
    /// Ends a reservation after the call: its `reserved` leaves [`budget::RESERVED`] and what
    /// the call cost is added to [`budget::SPENT`].
    async fn budget_settle(&self, batch: &str, reserved: i64, spent: i64)
        -> Result<(), StoreError>;

    /// API tokens, by the SHA-256 (hex) of the token: the caller's record (JSON). Tokens are
    /// never stored in the clear, and stay until revoked (no TTL).
    async fn token_put(&self, hash: &str, record: &[u8]) -> Result<(), StoreError>;
    async fn token_get(&self, hash: &str) -> Result<Option<Vec<u8>>, StoreError>;
    /// True if the token existed.
    async fn token_delete(&self, hash: &str) -> Result<bool, StoreError>;
    async fn tokens(&self) -> Result<BTreeMap<String, Vec<u8>>, StoreError>;

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

    /// Deletes every key under this store's prefix (tests).
    async fn delete_all(&self) -> Result<(), StoreError>;
}
