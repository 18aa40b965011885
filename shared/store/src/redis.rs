//! The Redis store.
//!
//! Key layout under the prefix `p` (every key but `p:batches:open`, `p:tokens` and the
//! `p:batch:*` of batches not yet ended has a TTL):
//!
//! | key | type | written by |
//! |---|---|---|
//! | `p:cache:<cache>:<key>` | string, TTL per entry | fetch (robots), search (relevance) … |
//! | `p:lock:<name>` | string, TTL | single-flight fetches, synthesis leases |
//! | `p:rate:<host>` | string (theoretical arrival time, ms), TTL ≥ interval | fetch |
//! | `p:window:<name>` | integer, TTL = the window | API rate limit per token |
//! | `p:job:<job>` | hash `expected`, `meta`, TTL | search (fan-in open) |
//! | `p:job:<job>:outcomes` | hash idx → outcome, TTL | fetch, clean |
//! | `p:job:<job>:counters` | hash counter → integer, TTL | every worker (timings, tokens, cost) |
//! | `p:batch:<b>:jobs` | hash job → status; TTL `store.batch_ttl_secs` from the batch's end | submit, synthesize, cancel |
//! | `p:batch:<b>` | hash `finished`, `cancelled`, `status:<s>` per status, `outcome:<o>` per source outcome, `c:<name>` counters; TTL as the jobs hash | same, and LLM spend |
//! | `p:batches:open` | set of batches with jobs not yet ended | submit adds; the last finish or cancel removes |
//! | `p:tokens` | hash SHA-256 of an API token → its record; no TTL | `trawl token` |
//!
//! Every change that reads before it writes is a Lua script, so two workers can never both
//! "win" (record the same outcome, finish the same job, take the same rate-limit slot). The
//! rate limiter reads Redis's own clock (`TIME`), so workers' clocks need not agree.

use std::collections::BTreeMap;
use std::time::Duration;

use ::redis::aio::{ConnectionManager, ConnectionManagerConfig};
use ::redis::{AsyncCommands, Script};
use async_trait::async_trait;

use crate::{
    BatchProgress, Cache, Entry, Extension, FanIn, Lease, Store, StoreError, Turn, PENDING,
};

#[derive(Clone)]
pub struct RedisStore {
    con: ConnectionManager,
    prefix: String,
    scripts: std::sync::Arc<Scripts>,
}

struct Scripts {
    rate: Script,
    rate_hold: Script,
    rate_queue: Script,
    slot: Script,
    slot_holders: Script,
    host_enter: Script,
    host_leave: Script,
    fanin_extend: Script,
    fanin_open: Script,
    fanin_record: Script,
    batch_finish: Script,
    window_count: Script,
    window_add: Script,
    batch_cancel: Script,
    budget_reserve: Script,
    unlock: Script,
}

/// The next free slot (theoretical arrival time) is the key's value, in server milliseconds.
/// Returns {1, wait} when booked, {0, wait} when the wait is beyond ARGV[2].
const RATE: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local interval = tonumber(ARGV[1])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local wait = tat - now
if wait > tonumber(ARGV[2]) then return {0, wait} end
redis.call('SET', KEYS[1], tat + interval, 'PX', wait + interval + 1000)
return {1, wait}
";

/// The turn now when the slot (`KEYS[1]`) is free, or a place in its line (`KEYS[2]`, where
/// the line ends): the wait until either.
const RATE_QUEUE: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local interval = tonumber(ARGV[1])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat <= now then
  redis.call('SET', KEYS[1], now + interval, 'PX', interval + 1000)
  return 0
end
local place = tonumber(redis.call('GET', KEYS[2]) or '0')
if place < tat then place = tat end
redis.call('SET', KEYS[2], place + interval, 'PX', place + interval - now + 1000)
return place - now
";

const RATE_HOLD: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local hold = now + tonumber(ARGV[1])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < hold then redis.call('SET', KEYS[1], hold, 'PX', tonumber(ARGV[1]) + 1000) end
return 0
";

/// A counting semaphore: members are holders' tokens scored by lease expiry (server time).
const SLOT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZSCORE', KEYS[1], ARGV[3]) == false
   and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return 1
";

/// A host's slot for a request sent `interval` after the host's last contact (`KEYS[2]` holds
/// when it may next be sent one), if that comes within `within`: {1, wait} taken, {0, 0} every
/// slot taken, {2, wait} too far off (nothing taken).
const HOST_ENTER: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZSCORE', KEYS[1], ARGV[3]) == false
   and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return {0, 0} end
local go = tonumber(redis.call('GET', KEYS[2]) or '0')
if go < now then go = now end
local wait = go - now
if wait > tonumber(ARGV[5]) then return {2, wait} end
local lease = wait + tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now + lease, ARGV[3])
redis.call('PEXPIRE', KEYS[1], lease)
local interval = tonumber(ARGV[4])
redis.call('SET', KEYS[2], go + interval, 'PX', wait + interval + 1000)
return {1, wait}
";

/// A host's request has ended: its slot frees, and neither the next send (`KEYS[2]`) nor the
/// next booked turn (`KEYS[3]`) may come sooner than `interval` from now.
const HOST_LEAVE: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREM', KEYS[1], ARGV[1])
local interval = tonumber(ARGV[2])
for i = 2, 3 do
  if tonumber(redis.call('GET', KEYS[i]) or '0') < now + interval then
    redis.call('SET', KEYS[i], now + interval, 'PX', interval + 1000)
  end
end
return 0
";

/// The holders whose lease runs past now (server time).
const SLOT_HOLDERS: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf')
";

/// Crawled sources join the job before their parent's outcome is recorded, so the job cannot
/// complete without them. Fields: `ext:<parent>` first index, `extn:<parent>` granted,
/// `src:<parent>` the proposed sources, `crawled` the job's total.
const FANIN_EXTEND: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local p = ARGV[1]
local prev = redis.call('HGET', KEYS[1], 'ext:' .. p)
if prev then
  return {tonumber(prev), tonumber(redis.call('HGET', KEYS[1], 'extn:' .. p)),
          redis.call('HGET', KEYS[1], 'src:' .. p)}
end
local crawled = tonumber(redis.call('HGET', KEYS[1], 'crawled') or '0')
local granted = math.max(0, math.min(tonumber(ARGV[2]), tonumber(ARGV[3]) - crawled))
local first = tonumber(redis.call('HGET', KEYS[1], 'expected'))
redis.call('HSET', KEYS[1], 'ext:' .. p, first, 'extn:' .. p, granted, 'src:' .. p, ARGV[4],
           'crawled', crawled + granted)
redis.call('HINCRBY', KEYS[1], 'expected', granted)
return {first, granted, ARGV[4]}
";

const FANIN_OPEN: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'expected', ARGV[1], 'meta', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
";

const FANIN_RECORD: &str = r"
local new = redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
local expected = redis.call('HGET', KEYS[1], 'expected')
if not expected then expected = 4294967295 end
return {new, redis.call('HLEN', KEYS[2]), tonumber(expected)}
";

const WINDOW_COUNT: &str = r"
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n
";

const WINDOW_ADD: &str = r"
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
local d = tonumber(ARGV[1])
if d > 0 and n + d > tonumber(ARGV[2]) then return -1 end
local v = redis.call('INCRBY', KEYS[1], d)
if v < 0 then
  redis.call('SET', KEYS[1], 0, 'KEEPTTL')
  v = 0
end
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return v
";

const BATCH_FINISH: &str = r"
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

const UNLOCK: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
";

const BUDGET_RESERVE: &str = r"
local budget = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if budget <= 0 then return 0 end
local spent = tonumber(redis.call('HGET', KEYS[1], ARGV[2]) or '0')
local reserved = tonumber(redis.call('HGET', KEYS[1], ARGV[3]) or '0')
if spent + reserved + tonumber(ARGV[4]) > budget then
  redis.call('HINCRBY', KEYS[1], ARGV[5], 1)
  return -1
end
redis.call('HINCRBY', KEYS[1], ARGV[3], ARGV[4])
return tonumber(ARGV[4])
";

const BATCH_CANCEL: &str = r"
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
            scripts: std::sync::Arc::new(Scripts {
                rate: Script::new(RATE),
                rate_hold: Script::new(RATE_HOLD),
                rate_queue: Script::new(RATE_QUEUE),
                slot: Script::new(SLOT),
                slot_holders: Script::new(SLOT_HOLDERS),
                host_enter: Script::new(HOST_ENTER),
                host_leave: Script::new(HOST_LEAVE),
                fanin_extend: Script::new(FANIN_EXTEND),
                fanin_open: Script::new(FANIN_OPEN),
                fanin_record: Script::new(FANIN_RECORD),
                batch_finish: Script::new(BATCH_FINISH),
                window_count: Script::new(WINDOW_COUNT),
                window_add: Script::new(WINDOW_ADD),
                batch_cancel: Script::new(BATCH_CANCEL),
                budget_reserve: Script::new(BUDGET_RESERVE),
                unlock: Script::new(UNLOCK),
            }),
        })
    }

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
    async fn cache_read(&self, cache: Cache, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.con()
            .get(self.key(&["cache", cache.as_str(), key]))
            .await
            .map_err(backend)
    }

    async fn cache_read_many(
        &self,
        entries: &[(Cache, &str)],
    ) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        let keys: Vec<String> = entries
            .iter()
            .map(|(cache, key)| self.key(&["cache", cache.as_str(), key]))
            .collect();
        // MGET of one key answers a bare value, not a list: the redis crate reads both.
        self.con().mget(keys).await.map_err(backend)
    }

    async fn cache_put(
        &self,
        cache: Cache,
        key: &str,
        value: &[u8],
        ttl: Duration,
    ) -> Result<(), StoreError> {
        let key = self.key(&["cache", cache.as_str(), key]);
        self.con()
            .pset_ex::<_, _, ()>(key, value, ms(ttl))
            .await
            .map_err(backend)
    }

    async fn try_lock(&self, name: &str, ttl: Duration) -> Result<Option<Lease>, StoreError> {
        let lease = Lease::new(name);
        let reply: Option<String> = ::redis::cmd("SET")
            .arg(self.key(&["lock", name]))
            .arg(&lease.token)
            .arg("NX")
            .arg("PX")
            .arg(ms(ttl))
            .query_async(&mut self.con())
            .await
            .map_err(backend)?;
        Ok(reply.map(|_| lease))
    }

    async fn unlock(&self, lease: &Lease) -> Result<(), StoreError> {
        (self.scripts.unlock)
            .key(self.key(&["lock", &lease.name]))
            .arg(&lease.token)
            .invoke_async::<()>(&mut self.con())
            .await
            .map_err(backend)
    }

    async fn rate_reserve(
        &self,
        host: &str,
        interval: Duration,
        within: Duration,
    ) -> Result<Turn, StoreError> {
        let (booked, wait): (u8, u64) = self
            .scripts
            .rate
            .key(self.key(&["rate", host]))
            .arg(ms(interval))
            .arg(ms(within))
            .invoke_async(&mut self.con())
            .await
            .map_err(backend)?;
        let wait = Duration::from_millis(wait);
        Ok(if booked == 1 {
            Turn::Reserved(wait)
        } else {
            Turn::Busy(wait)
        })
    }

    async fn rate_queue(&self, host: &str, interval: Duration) -> Result<Duration, StoreError> {
        let wait: u64 = self
            .scripts
            .rate_queue
            .key(self.key(&["rate", host]))
            .key(self.key(&["rate", &format!("line:{host}")]))
            .arg(ms(interval))
            .invoke_async(&mut self.con())
            .await
            .map_err(backend)?;
        Ok(Duration::from_millis(wait))
    }

    async fn window_count(&self, name: &str, window: Duration) -> Result<u64, StoreError> {
        self.scripts
            .window_count
            .key(self.key(&["window", name]))
            .arg(ms(window))
            .invoke_async(&mut self.con())
            .await
            .map_err(backend)
    }

    async fn window_add(
        &self,
        name: &str,
        amount: i64,
        limit: u64,
        window: Duration,
    ) -> Result<Option<u64>, StoreError> {
        let count: i64 = self
            .scripts
            .window_add
            .key(self.key(&["window", name]))
            .arg(amount)
            .arg(limit)
            .arg(ms(window))
            .invoke_async(&mut self.con())
            .await
            .map_err(backend)?;
        Ok(u64::try_from(count).ok())
    }

    async fn rate_hold(&self, host: &str, delay: Duration) -> Result<(), StoreError> {
        let _: u64 = self
            .scripts
            .rate_hold
            .key(self.key(&["rate", host]))
            .arg(ms(delay))
            .invoke_async(&mut self.con())
            .await
            .map_err(backend)?;
        Ok(())
    }

    async fn slot_acquire(
        &self,
        name: &str,
        token: &str,
        limit: u32,
        lease: Duration,
    ) -> Result<bool, StoreError> {
        let taken: u32 = self
            .scripts
            .slot
            .key(self.key(&["slots", name]))
            .arg(limit)
            .arg(ms(lease))
            .arg(token)
            .invoke_async(&mut self.con())
            .await
            .map_err(backend)?;
        Ok(taken == 1)
    }

    async fn slot_release(&self, name: &str, token: &str) -> Result<(), StoreError> {
        let _: u32 = ::redis::cmd("ZREM")
            .arg(self.key(&["slots", name]))
            .arg(token)
            .query_async(&mut self.con())
            .await
            .map_err(backend)?;
        Ok(())
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
        let (state, wait): (u8, u64) = self
            .scripts
            .host_enter
            .key(self.key(&["slots", &format!("host:{host}")]))
            .key(self.key(&["rate", &format!("sent:{host}")]))
            .arg(limit)
            .arg(ms(lease))
            .arg(token)
            .arg(ms(interval))
            .arg(ms(within))
            .invoke_async(&mut self.con())
            .await
            .map_err(backend)?;
        let wait = Duration::from_millis(wait);
        Ok(match state {
            1 => Entry::Go(wait),
            0 => Entry::Full,
            _ => Entry::Later(wait),
        })
    }

    async fn host_leave(
        &self,
        host: &str,
        token: &str,
        interval: Duration,
    ) -> Result<(), StoreError> {
        let _: u8 = self
            .scripts
            .host_leave
            .key(self.key(&["slots", &format!("host:{host}")]))
            .key(self.key(&["rate", &format!("sent:{host}")]))
            .key(self.key(&["rate", host]))
            .arg(token)
            .arg(ms(interval))
            .invoke_async(&mut self.con())
            .await
            .map_err(backend)?;
        Ok(())
    }

    async fn slot_holders(&self, name: &str) -> Result<Vec<String>, StoreError> {
        let mut holders: Vec<String> = self
            .scripts
            .slot_holders
            .key(self.key(&["slots", name]))
            .invoke_async(&mut self.con())
            .await
            .map_err(backend)?;
        holders.sort();
        Ok(holders)
    }

    async fn fanin_open(
        &self,
        job: &str,
        expected: u32,
        meta: &[u8],
        ttl: Duration,
    ) -> Result<bool, StoreError> {
        let created: u32 = self
            .scripts
            .fanin_open
            .key(self.key(&["job", job]))
            .arg(expected)
            .arg(meta)
            .arg(ms(ttl))
            .invoke_async(&mut self.con())
            .await
            .map_err(backend)?;
        Ok(created == 1)
    }

    async fn fanin_extend(
        &self,
        job: &str,
        parent: u32,
        sources: &[u8],
        want: u32,
        cap: u32,
    ) -> Result<Option<Extension>, StoreError> {
        let reply: Option<(u32, u32, Vec<u8>)> = self
            .scripts
            .fanin_extend
            .key(self.key(&["job", job]))
            .arg(parent)
            .arg(want)
            .arg(cap)
            .arg(sources)
            .invoke_async(&mut self.con())
            .await
            .map_err(backend)?;
        Ok(reply.map(|(first, granted, sources)| Extension {
            first,
            granted,
            sources,
        }))
    }

    async fn fanin_extensions(&self, job: &str) -> Result<BTreeMap<u32, Extension>, StoreError> {
        let fields: BTreeMap<String, Vec<u8>> = ::redis::cmd("HGETALL")
            .arg(self.key(&["job", job]))
            .query_async(&mut self.con())
            .await
            .map_err(backend)?;
        let number = |name: &str| -> Option<u32> {
            std::str::from_utf8(fields.get(name)?).ok()?.parse().ok()
        };
        let mut out = BTreeMap::new();
        for parent in fields.keys().filter_map(|k| k.strip_prefix("ext:")) {
            let (Ok(p), Some(first), Some(granted)) = (
                parent.parse::<u32>(),
                number(&format!("ext:{parent}")),
                number(&format!("extn:{parent}")),
            ) else {
                continue;
            };
            let sources = fields
                .get(&format!("src:{parent}"))
                .cloned()
                .unwrap_or_default();
            out.insert(
                p,
                Extension {
                    first,
                    granted,
                    sources,
                },
            );
        }
        Ok(out)
    }

    async fn fanin_meta(&self, job: &str) -> Result<Option<(u32, Vec<u8>)>, StoreError> {
        let (expected, meta): (Option<u32>, Option<Vec<u8>>) = ::redis::cmd("HMGET")
            .arg(self.key(&["job", job]))
            .arg("expected")
            .arg("meta")
            .query_async(&mut self.con())
            .await
            .map_err(backend)?;
        Ok(expected.zip(meta))
    }

    async fn fanin_record(
        &self,
        job: &str,
        idx: u32,
        outcome: &[u8],
        ttl: Duration,
    ) -> Result<FanIn, StoreError> {
        let (new, received, expected): (u32, u32, u64) = self
            .scripts
            .fanin_record
            .key(self.key(&["job", job]))
            .key(self.key(&["job", job, "outcomes"]))
            .arg(idx)
            .arg(outcome)
            .arg(ms(ttl))
            .invoke_async(&mut self.con())
            .await
            .map_err(backend)?;
        Ok(FanIn {
            newly_recorded: new == 1,
            received,
            expected: expected.min(u64::from(u32::MAX)) as u32,
        })
    }

    async fn fanin_outcomes(&self, job: &str) -> Result<BTreeMap<u32, Vec<u8>>, StoreError> {
        self.con()
            .hgetall(self.key(&["job", job, "outcomes"]))
            .await
            .map_err(backend)
    }

    async fn job_add(
        &self,
        job: &str,
        fields: &[(String, i64)],
        ttl: Duration,
    ) -> Result<(), StoreError> {
        let key = self.key(&["job", job, "counters"]);
        let mut pipe = ::redis::pipe();
        for (k, v) in fields {
            pipe.hincr(&key, k, *v).ignore();
        }
        pipe.pexpire(&key, ms(ttl) as i64).ignore();
        pipe.query_async::<()>(&mut self.con())
            .await
            .map_err(backend)
    }

    async fn job_counters(&self, job: &str) -> Result<BTreeMap<String, i64>, StoreError> {
        self.con()
            .hgetall(self.key(&["job", job, "counters"]))
            .await
            .map_err(backend)
    }

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
        let mut script = self.scripts.batch_finish.prepare_invoke();
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
        // Signed: the hash also holds the batch's counters ([`Store::batch_add`]).
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
            .hincr(self.key(&["batch", batch]), format!("c:{counter}"), delta)
            .await
            .map_err(backend)
    }

    async fn batch_counter(&self, batch: &str, counter: &str) -> Result<i64, StoreError> {
        let v: Option<i64> = self
            .con()
            .hget(self.key(&["batch", batch]), format!("c:{counter}"))
            .await
            .map_err(backend)?;
        Ok(v.unwrap_or(0))
    }

    async fn budget_reserve(&self, batch: &str, amount: i64) -> Result<Option<i64>, StoreError> {
        let reserved: i64 = (self.scripts.budget_reserve)
            .key(self.key(&["batch", batch]))
            .arg(format!("c:{}", crate::budget::BUDGET))
            .arg(format!("c:{}", crate::budget::SPENT))
            .arg(format!("c:{}", crate::budget::RESERVED))
            .arg(amount.max(0))
            .arg(format!("c:{}", crate::budget::REFUSED))
            .invoke_async(&mut self.con())
            .await
            .map_err(backend)?;
        Ok((reserved >= 0).then_some(reserved))
    }

    async fn budget_settle(
        &self,
        batch: &str,
        reserved: i64,
        spent: i64,
    ) -> Result<(), StoreError> {
        let key = self.key(&["batch", batch]);
        let mut pipe = ::redis::pipe();
        pipe.atomic();
        if reserved > 0 {
            pipe.hincr(&key, format!("c:{}", crate::budget::RESERVED), -reserved)
                .ignore();
        }
        if spent > 0 {
            pipe.hincr(&key, format!("c:{}", crate::budget::SPENT), spent)
                .ignore();
        }
        pipe.query_async::<()>(&mut self.con())
            .await
            .map_err(backend)
    }

    async fn token_put(&self, hash: &str, record: &[u8]) -> Result<(), StoreError> {
        self.con()
            .hset(self.key(&["tokens"]), hash, record)
            .await
            .map_err(backend)
    }

    async fn token_get(&self, hash: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.con()
            .hget(self.key(&["tokens"]), hash)
            .await
            .map_err(backend)
    }

    async fn token_delete(&self, hash: &str) -> Result<bool, StoreError> {
        let removed: u32 = self
            .con()
            .hdel(self.key(&["tokens"]), hash)
            .await
            .map_err(backend)?;
        Ok(removed == 1)
    }

    async fn tokens(&self) -> Result<BTreeMap<String, Vec<u8>>, StoreError> {
        self.con()
            .hgetall(self.key(&["tokens"]))
            .await
            .map_err(backend)
    }

    async fn owner_batch_add(&self, owner: &str, batch: &str) -> Result<(), StoreError> {
        // One sorted set per owner, every score 0, so members sort by id, which for UUIDv7 is
        // by creation; trimmed to the newest in the same round trip.
        let key = self.key(&["owner", owner, "batches"]);
        let mut pipe = ::redis::pipe();
        pipe.atomic();
        pipe.zadd(&key, batch, 0).ignore();
        pipe.zremrangebyrank(&key, 0, -(crate::OWNER_BATCHES_KEPT as isize) - 1)
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
        let found: u32 = self
            .scripts
            .batch_cancel
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
