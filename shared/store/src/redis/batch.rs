//! Batches: `p:batch:<b>:jobs` (hash: job → status), `p:batch:<b>` (hash: `finished`,
//! `cancelled`, `status:<s>`, `outcome:<o>`, and counters as `c:<name>`), the set
//! `p:batches:open`, and each owner's batches, `p:owner:<token>:batches`.

use std::collections::BTreeMap;
use std::sync::LazyLock;
use std::time::Duration;

use ::redis::{AsyncCommands, Script};
use async_trait::async_trait;

use super::{backend, ms, RedisStore};
use crate::{BatchProgress, Batches, StoreError, OWNER_BATCHES_KEPT, PENDING};

const BATCH_FINISH_LUA: &str = r"
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current ~= 'pending' then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HINCRBY', KEYS[2], 'status:' .. ARGV[2], 1)
for i = 5, #ARGV, 2 do
  redis.call('HINCRBY', KEYS[2], 'outcome:' .. ARGV[i], ARGV[i + 1])
end
local finished = redis.call('HINCRBY', KEYS[2], 'finished', 1)
if finished >= redis.call('HLEN', KEYS[1]) then
  redis.call('SREM', KEYS[3], ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
  redis.call('PEXPIRE', KEYS[2], ARGV[4])
end
return 1
";
static BATCH_FINISH: LazyLock<Script> = LazyLock::new(|| Script::new(BATCH_FINISH_LUA));

const BATCH_CANCEL_LUA: &str = r"
if redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
redis.call('HSET', KEYS[2], 'cancelled', 1)
local jobs = redis.call('HGETALL', KEYS[1])
for i = 1, #jobs, 2 do
  if jobs[i + 1] == 'pending' then
    redis.call('HSET', KEYS[1], jobs[i], 'cancelled')
    redis.call('HINCRBY', KEYS[2], 'status:cancelled', 1)
    redis.call('HINCRBY', KEYS[2], 'finished', 1)
  end
end
redis.call('SREM', KEYS[3], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1
";
static BATCH_CANCEL: LazyLock<Script> = LazyLock::new(|| Script::new(BATCH_CANCEL_LUA));

#[async_trait]
impl Batches for RedisStore {
    async fn batch_create(&self, batch: &str, jobs: &[String]) -> Result<(), StoreError> {
        let jobs_key = self.key(&["batch", batch, "jobs"]);
        let mut con = self.con();
        // HSETNX per job keeps a re-run of `submit` with the same batch from resetting progress.
        let mut pipe = ::redis::pipe();
        pipe.atomic();
        for chunk in jobs.chunks(1000) {
            for job in chunk {
                pipe.hset_nx(&jobs_key, job, PENDING).ignore();
            }
        }
        pipe.hset_nx(self.key(&["batch", batch]), "created", 1)
            .ignore();
        if !jobs.is_empty() {
            pipe.sadd(self.key(&["batches", "open"]), batch).ignore();
        }
        pipe.query_async::<()>(&mut con).await.map_err(backend)
    }

    async fn batch_finish(
        &self,
        batch: &str,
        job: &str,
        status: &str,
        outcomes: &BTreeMap<String, u32>,
        ttl: Duration,
    ) -> Result<bool, StoreError> {
        let mut script = BATCH_FINISH.prepare_invoke();
        script
            .key(self.key(&["batch", batch, "jobs"]))
            .key(self.key(&["batch", batch]))
            .key(self.key(&["batches", "open"]))
            .arg(job)
            .arg(status)
            .arg(batch)
            .arg(ms(ttl));
        for (outcome, n) in outcomes {
            script.arg(outcome).arg(n);
        }
        let won: u32 = script
            .invoke_async(&mut self.con())
            .await
            .map_err(backend)?;
        Ok(won == 1)
    }

    async fn batch_job_status(&self, batch: &str, job: &str) -> Result<Option<String>, StoreError> {
        self.con()
            .hget(self.key(&["batch", batch, "jobs"]), job)
            .await
            .map_err(backend)
    }

    async fn batch_jobs(&self, batch: &str) -> Result<BTreeMap<String, String>, StoreError> {
        self.con()
            .hgetall(self.key(&["batch", batch, "jobs"]))
            .await
            .map_err(backend)
    }

    async fn batch_progress(&self, batch: &str) -> Result<Option<BatchProgress>, StoreError> {
        let mut con = self.con();
        // Signed: the hash also holds the batch's counters ([`Batches::batch_add`]).
        let fields: BTreeMap<String, i64> = con
            .hgetall(self.key(&["batch", batch]))
            .await
            .map_err(backend)?;
        let fields: BTreeMap<String, u64> = (fields.into_iter())
            .map(|(k, v)| (k, v.max(0) as u64))
            .collect();
        if fields.is_empty() {
            return Ok(None);
        }
        let total: u64 = con
            .hlen(self.key(&["batch", batch, "jobs"]))
            .await
            .map_err(backend)?;
        Ok(Some(BatchProgress {
            total,
            finished: fields.get("finished").copied().unwrap_or(0),
            cancelled: fields.get("cancelled").copied().unwrap_or(0) == 1,
            by_status: fields
                .iter()
                .filter_map(|(k, &v)| k.strip_prefix("status:").map(|s| (s.to_owned(), v)))
                .collect(),
            outcomes: fields
                .iter()
                .filter_map(|(k, &v)| k.strip_prefix("outcome:").map(|s| (s.to_owned(), v)))
                .collect(),
        }))
    }

    async fn batch_add(&self, batch: &str, counter: &str, delta: i64) -> Result<i64, StoreError> {
        self.con()
            .hincr(self.key(&["batch", batch]), counter_field(counter), delta)
            .await
            .map_err(backend)
    }

    async fn batch_counter(&self, batch: &str, counter: &str) -> Result<i64, StoreError> {
        let v: Option<i64> = self
            .con()
            .hget(self.key(&["batch", batch]), counter_field(counter))
            .await
            .map_err(backend)?;
        Ok(v.unwrap_or(0))
    }

    async fn owner_batch_add(&self, owner: &str, batch: &str) -> Result<(), StoreError> {
        // One sorted set per owner, every score 0, so members sort by id, which for UUIDv7 is
        // by creation; trimmed to the newest in the same round trip.
        let key = self.key(&["owner", owner, "batches"]);
        let mut pipe = ::redis::pipe();
        pipe.atomic();
        pipe.zadd(&key, batch, 0).ignore();
        pipe.zremrangebyrank(&key, 0, -(OWNER_BATCHES_KEPT as isize) - 1)
            .ignore();
        pipe.query_async::<()>(&mut self.con())
            .await
            .map_err(backend)
    }

    async fn owner_batches(
        &self,
        owner: &str,
        before: Option<&str>,
        limit: usize,
    ) -> Result<Vec<String>, StoreError> {
        let max = before.map_or("+".to_owned(), |b| format!("({b}"));
        self.con()
            .zrevrangebylex_limit(
                self.key(&["owner", owner, "batches"]),
                max,
                "-",
                0,
                limit as isize,
            )
            .await
            .map_err(backend)
    }

    async fn batches_open(&self) -> Result<Vec<String>, StoreError> {
        self.con()
            .smembers(self.key(&["batches", "open"]))
            .await
            .map_err(backend)
    }

    async fn batch_cancel(&self, batch: &str, ttl: Duration) -> Result<bool, StoreError> {
        let found: u32 = BATCH_CANCEL
            .key(self.key(&["batch", batch, "jobs"]))
            .key(self.key(&["batch", batch]))
            .key(self.key(&["batches", "open"]))
            .arg(batch)
            .arg(ms(ttl))
            .invoke_async(&mut self.con())
            .await
            .map_err(backend)?;
        Ok(found == 1)
    }
}

/// A batch counter's field in the batch's record, `p:batch:<b>`: `c:<name>`.
pub(super) fn counter_field(name: &str) -> String {
    format!("c:{name}")
}
