//! The in-memory twin of the Redis store. Same semantics, one process: expiry is checked on
//! read, the rate limiter uses this process's monotonic clock.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use tokio::time::Instant;

use crate::{
    BatchProgress, Cache, Entry, Extension, FanIn, Lease, Store, StoreError, Turn, PENDING,
};

#[derive(Default)]
pub struct MemoryStore {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    cache: HashMap<(Cache, String), Expiring<Vec<u8>>>,
    locks: HashMap<String, (Instant, Lease)>,
    rate: HashMap<String, Instant>,
    /// Slot holders per name: token and lease expiry.
    slots: HashMap<String, HashMap<String, Instant>>,
    /// Per rate-limited slot: where the line of its waiters ends ([`Store::rate_queue`]).
    lines: HashMap<String, Instant>,
    /// Per host: when it may next be sent a request ([`Store::host_enter`]).
    sent: HashMap<String, Instant>,
    fanin: HashMap<String, Expiring<Job>>,
    counters: HashMap<String, Expiring<BTreeMap<String, i64>>>,
    batches: HashMap<String, Batch>,
    tokens: BTreeMap<String, Vec<u8>>,
    /// Each owner's batch ids, which sort by creation (UUIDv7).
    owners: HashMap<String, std::collections::BTreeSet<String>>,
    /// Fixed windows: end of the current window and its count.
    windows: HashMap<String, (Instant, u64)>,
}

struct Expiring<T> {
    value: T,
    until: Instant,
}

struct Job {
    expected: u32,
    meta: Vec<u8>,
    outcomes: BTreeMap<u32, Vec<u8>>,
    extensions: BTreeMap<u32, Extension>,
}

#[derive(Default)]
struct Batch {
    jobs: BTreeMap<String, String>,
    cancelled: bool,
    counters: BTreeMap<String, i64>,
    outcomes: BTreeMap<String, u64>,
    /// Set when the batch ends.
    expires: Option<Instant>,
}

impl State {
    /// The count of `name`'s current window of `window`, which starts with its first use.
    fn window(&mut self, name: &str, window: Duration) -> &mut u64 {
        let now = Instant::now();
        let entry = (self.windows)
            .entry(name.to_owned())
            .or_insert((now + window, 0));
        if entry.0 <= now {
            *entry = (now + window, 0);
        }
        &mut entry.1
    }

    /// Forgets `batch` if its record has expired.
    fn prune_batch(&mut self, batch: &str) {
        if (self.batches.get(batch)).is_some_and(|b| b.expires.is_some_and(|t| t <= Instant::now()))
        {
            self.batches.remove(batch);
        }
    }
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
    async fn cache_read(&self, cache: Cache, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.with(|s| live(s.cache.get(&(cache, key.to_owned()))).cloned())
    }

    async fn cache_put(
        &self,
        cache: Cache,
        key: &str,
        value: &[u8],
        ttl: Duration,
    ) -> Result<(), StoreError> {
        self.with(|s| {
            let until = Instant::now() + ttl;
            s.cache.insert(
                (cache, key.to_owned()),
                Expiring {
                    value: value.to_vec(),
                    until,
                },
            );
        })
    }

    async fn try_lock(&self, name: &str, ttl: Duration) -> Result<Option<Lease>, StoreError> {
        self.with(|s| {
            let now = Instant::now();
            match s.locks.get(name) {
                Some((until, _)) if *until > now => None,
                _ => {
                    let lease = Lease::new(name);
                    s.locks.insert(name.to_owned(), (now + ttl, lease.clone()));
                    Some(lease)
                }
            }
        })
    }

    async fn unlock(&self, lease: &Lease) -> Result<(), StoreError> {
        self.with(|s| {
            if s.locks
                .get(&lease.name)
                .is_some_and(|(_, held)| held == lease)
            {
                s.locks.remove(&lease.name);
            }
        })
    }

    async fn rate_reserve(
        &self,
        host: &str,
        interval: Duration,
        within: Duration,
    ) -> Result<Turn, StoreError> {
        self.with(|s| {
            let now = Instant::now();
            let tat = s.rate.get(host).copied().unwrap_or(now).max(now);
            let wait = tat - now;
            if wait > within {
                Turn::Busy(wait)
            } else {
                s.rate.insert(host.to_owned(), tat + interval);
                Turn::Reserved(wait)
            }
        })
    }

    async fn rate_queue(&self, host: &str, interval: Duration) -> Result<Duration, StoreError> {
        self.with(|s| {
            let now = Instant::now();
            let tat = s.rate.get(host).copied().unwrap_or(now).max(now);
            if tat == now {
                s.rate.insert(host.to_owned(), now + interval);
                return Duration::ZERO;
            }
            let place = s.lines.get(host).copied().unwrap_or(tat).max(tat);
            s.lines.insert(host.to_owned(), place + interval);
            place - now
        })
    }

    async fn window_count(&self, name: &str, window: Duration) -> Result<u64, StoreError> {
        self.with(|s| {
            let count = s.window(name, window);
            *count += 1;
            *count
        })
    }

    async fn window_add(
        &self,
        name: &str,
        amount: i64,
        limit: u64,
        window: Duration,
    ) -> Result<Option<u64>, StoreError> {
        self.with(|s| {
            let count = s.window(name, window);
            if amount > 0 && *count + amount.unsigned_abs() > limit {
                return None;
            }
            *count = count.saturating_add_signed(amount);
            Some(*count)
        })
    }

    async fn rate_hold(&self, host: &str, delay: Duration) -> Result<(), StoreError> {
        self.with(|s| {
            let until = Instant::now() + delay;
            let tat = s.rate.entry(host.to_owned()).or_insert(until);
            *tat = (*tat).max(until);
        })
    }

    async fn slot_acquire(
        &self,
        name: &str,
        token: &str,
        limit: u32,
        lease: Duration,
    ) -> Result<bool, StoreError> {
        self.with(|s| {
            let now = Instant::now();
            let holders = s.slots.entry(name.to_owned()).or_default();
            holders.retain(|_, until| *until > now);
            if !holders.contains_key(token) && holders.len() >= limit as usize {
                return false;
            }
            holders.insert(token.to_owned(), now + lease);
            true
        })
    }

    async fn slot_release(&self, name: &str, token: &str) -> Result<(), StoreError> {
        self.with(|s| {
            if let Some(holders) = s.slots.get_mut(name) {
                holders.remove(token);
            }
        })
    }

    async fn host_enter(
        &self,
        host: &str,
        token: &str,
        limit: u32,
        lease: Duration,
        interval: Duration,
        within: Duration,
    ) -> Result<Entry, StoreError> {
        self.with(|s| {
            let now = Instant::now();
            let holders = s.slots.entry(format!("host:{host}")).or_default();
            holders.retain(|_, until| *until > now);
            if !holders.contains_key(token) && holders.len() >= limit as usize {
                return Entry::Full;
            }
            let go = s.sent.get(host).copied().unwrap_or(now).max(now);
            let wait = go - now;
            if wait > within {
                return Entry::Later(wait);
            }
            holders.insert(token.to_owned(), go + lease);
            s.sent.insert(host.to_owned(), go + interval);
            Entry::Go(wait)
        })
    }

    async fn host_leave(
        &self,
        host: &str,
        token: &str,
        interval: Duration,
    ) -> Result<(), StoreError> {
        self.with(|s| {
            if let Some(holders) = s.slots.get_mut(&format!("host:{host}")) {
                holders.remove(token);
            }
            let next = Instant::now() + interval;
            for times in [&mut s.sent, &mut s.rate] {
                let at = times.entry(host.to_owned()).or_insert(next);
                *at = (*at).max(next);
            }
        })
    }

    async fn slot_holders(&self, name: &str) -> Result<Vec<String>, StoreError> {
        self.with(|s| {
            let now = Instant::now();
            let mut holders: Vec<String> = (s.slots.get(name).into_iter())
                .flat_map(|h| h.iter())
                .filter(|(_, until)| **until > now)
                .map(|(token, _)| token.clone())
                .collect();
            holders.sort();
            holders
        })
    }

    async fn fanin_open(
        &self,
        job: &str,
        expected: u32,
        meta: &[u8],
        ttl: Duration,
    ) -> Result<bool, StoreError> {
        self.with(|s| {
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
        self.with(|s| live(s.fanin.get(job)).map(|j| (j.expected, j.meta.clone())))
    }

    async fn fanin_extend(
        &self,
        job: &str,
        parent: u32,
        sources: &[u8],
        want: u32,
        cap: u32,
    ) -> Result<Option<Extension>, StoreError> {
        self.with(|s| {
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
        self.with(|s| {
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
        self.with(|s| {
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
        self.with(|s| {
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
        self.with(|s| {
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
        self.with(|s| live(s.counters.get(job)).cloned().unwrap_or_default())
    }

    async fn batch_create(&self, batch: &str, jobs: &[String]) -> Result<(), StoreError> {
        self.with(|s| {
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
        self.with(|s| {
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
        self.with(|s| {
            s.prune_batch(batch);
            s.batches.get(batch).and_then(|b| b.jobs.get(job)).cloned()
        })
    }

    async fn batch_jobs(&self, batch: &str) -> Result<BTreeMap<String, String>, StoreError> {
        self.with(|s| {
            s.prune_batch(batch);
            s.batches
                .get(batch)
                .map(|b| b.jobs.clone())
                .unwrap_or_default()
        })
    }

    async fn batch_progress(&self, batch: &str) -> Result<Option<BatchProgress>, StoreError> {
        self.with(|s| {
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
        self.with(|s| {
            s.prune_batch(batch);
            let b = s.batches.entry(batch.to_owned()).or_default();
            let v = b.counters.entry(counter.to_owned()).or_default();
            *v += delta;
            *v
        })
    }

    async fn batch_counter(&self, batch: &str, counter: &str) -> Result<i64, StoreError> {
        self.with(|s| {
            s.prune_batch(batch);
            s.batches
                .get(batch)
                .and_then(|b| b.counters.get(counter).copied())
                .unwrap_or(0)
        })
    }

    async fn budget_reserve(&self, batch: &str, amount: i64) -> Result<Option<i64>, StoreError> {
        use crate::budget::{BUDGET, REFUSED, RESERVED, SPENT};
        self.with(|s| {
            s.prune_batch(batch);
            let b = s.batches.entry(batch.to_owned()).or_default();
            let get = |c: &str| b.counters.get(c).copied().unwrap_or(0);
            let budget = get(BUDGET);
            if budget <= 0 {
                return Some(0);
            }
            let amount = amount.max(0);
            if get(SPENT) + get(RESERVED) + amount > budget {
                *b.counters.entry(REFUSED.to_owned()).or_default() += 1;
                return None;
            }
            *b.counters.entry(RESERVED.to_owned()).or_default() += amount;
            Some(amount)
        })
    }

    async fn budget_settle(
        &self,
        batch: &str,
        reserved: i64,
        spent: i64,
    ) -> Result<(), StoreError> {
        use crate::budget::{RESERVED, SPENT};
        self.with(|s| {
            s.prune_batch(batch);
            let b = s.batches.entry(batch.to_owned()).or_default();
            for (counter, delta) in [(RESERVED, -reserved.max(0)), (SPENT, spent.max(0))] {
                if delta != 0 {
                    *b.counters.entry(counter.to_owned()).or_default() += delta;
                }
            }
        })
    }

    async fn token_put(&self, hash: &str, record: &[u8]) -> Result<(), StoreError> {
        self.with(|s| {
            s.tokens.insert(hash.to_owned(), record.to_vec());
        })
    }

    async fn token_get(&self, hash: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.with(|s| s.tokens.get(hash).cloned())
    }

    async fn token_delete(&self, hash: &str) -> Result<bool, StoreError> {
        self.with(|s| s.tokens.remove(hash).is_some())
    }

    async fn tokens(&self) -> Result<BTreeMap<String, Vec<u8>>, StoreError> {
        self.with(|s| s.tokens.clone())
    }

    async fn owner_batch_add(&self, owner: &str, batch: &str) -> Result<(), StoreError> {
        self.with(|s| {
            let batches = s.owners.entry(owner.to_owned()).or_default();
            batches.insert(batch.to_owned());
            while batches.len() > crate::OWNER_BATCHES_KEPT {
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
        self.with(|s| {
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
        self.with(|s| {
            s.batches
                .iter()
                .filter(|(_, b)| b.jobs.values().any(|st| st == PENDING))
                .map(|(id, _)| id.clone())
                .collect()
        })
    }

    async fn batch_cancel(&self, batch: &str, ttl: Duration) -> Result<bool, StoreError> {
        self.with(|s| {
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

    async fn delete_all(&self) -> Result<(), StoreError> {
        self.with(|s| *s = State::default())
    }
}
