//! Rate limits, all on Redis's own clock (`TIME`), so workers' clocks need not agree:
//! `p:rate:<slot>` a slot's next free turn (its theoretical arrival time, ms),
//! `p:rate:line:<slot>` where its line of waiters ends, `p:rate:sent:<host>` when a host may
//! next be sent a request, `p:slots:<name>` a sorted set of slot holders by lease expiry, and
//! `p:window:<name>` a fixed window's count.

use std::sync::LazyLock;
use std::time::Duration;

use ::redis::Script;
use async_trait::async_trait;

use super::{backend, ms, RedisStore};
use crate::{Entry, Rates, StoreError, Turn};

/// The next free slot (theoretical arrival time) is the key's value, in server milliseconds.
/// Returns {1, wait} when booked, {0, wait} when the wait is beyond ARGV[2].
const RATE_LUA: &str = r"
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
static RATE: LazyLock<Script> = LazyLock::new(|| Script::new(RATE_LUA));

/// The turn now when the slot (`KEYS[1]`) is free, or a place in its line (`KEYS[2]`, where
/// the line ends): the wait until either.
const RATE_QUEUE_LUA: &str = r"
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
static RATE_QUEUE: LazyLock<Script> = LazyLock::new(|| Script::new(RATE_QUEUE_LUA));

const RATE_HOLD_LUA: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local hold = now + tonumber(ARGV[1])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < hold then redis.call('SET', KEYS[1], hold, 'PX', tonumber(ARGV[1]) + 1000) end
return 0
";
static RATE_HOLD: LazyLock<Script> = LazyLock::new(|| Script::new(RATE_HOLD_LUA));

/// A counting semaphore: members are holders' tokens scored by lease expiry (server time).
const SLOT_LUA: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZSCORE', KEYS[1], ARGV[3]) == false
   and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return 1
";
static SLOT: LazyLock<Script> = LazyLock::new(|| Script::new(SLOT_LUA));

/// The holders whose lease runs past now (server time).
const SLOT_HOLDERS_LUA: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf')
";
static SLOT_HOLDERS: LazyLock<Script> = LazyLock::new(|| Script::new(SLOT_HOLDERS_LUA));

/// A host's slot for a request sent `interval` after the host's last contact (`KEYS[2]` holds
/// when it may next be sent one), if that comes within `within`: {1, wait} taken, {0, 0} every
/// slot taken, {2, wait} too far off (nothing taken).
const HOST_ENTER_LUA: &str = r"
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
static HOST_ENTER: LazyLock<Script> = LazyLock::new(|| Script::new(HOST_ENTER_LUA));

/// A host's request has ended: its slot frees, and neither the next send (`KEYS[2]`) nor the
/// next booked turn (`KEYS[3]`) may come sooner than `interval` from now.
const HOST_LEAVE_LUA: &str = r"
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
static HOST_LEAVE: LazyLock<Script> = LazyLock::new(|| Script::new(HOST_LEAVE_LUA));

const WINDOW_COUNT_LUA: &str = r"
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n
";
static WINDOW_COUNT: LazyLock<Script> = LazyLock::new(|| Script::new(WINDOW_COUNT_LUA));

const WINDOW_ADD_LUA: &str = r"
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
static WINDOW_ADD: LazyLock<Script> = LazyLock::new(|| Script::new(WINDOW_ADD_LUA));

#[async_trait]
impl Rates for RedisStore {
    async fn rate_reserve(
        &self,
        host: &str,
        interval: Duration,
        within: Duration,
    ) -> Result<Turn, StoreError> {
        let (booked, wait): (u8, u64) = RATE
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
        let wait: u64 = RATE_QUEUE
            .key(self.key(&["rate", host]))
            .key(self.key(&["rate", &format!("line:{host}")]))
            .arg(ms(interval))
            .invoke_async(&mut self.con())
            .await
            .map_err(backend)?;
        Ok(Duration::from_millis(wait))
    }

    async fn rate_hold(&self, host: &str, delay: Duration) -> Result<(), StoreError> {
        let _: u64 = RATE_HOLD
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
        let taken: u32 = SLOT
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

    async fn slot_holders(&self, name: &str) -> Result<Vec<String>, StoreError> {
        let mut holders: Vec<String> = SLOT_HOLDERS
            .key(self.key(&["slots", name]))
            .invoke_async(&mut self.con())
            .await
            .map_err(backend)?;
        holders.sort();
        Ok(holders)
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
        let (state, wait): (u8, u64) = HOST_ENTER
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
        let _: u8 = HOST_LEAVE
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

    async fn window_count(&self, name: &str, window: Duration) -> Result<u64, StoreError> {
        WINDOW_COUNT
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
        let count: i64 = WINDOW_ADD
            .key(self.key(&["window", name]))
            .arg(amount)
            .arg(limit)
            .arg(ms(window))
            .invoke_async(&mut self.con())
            .await
            .map_err(backend)?;
        Ok(u64::try_from(count).ok())
    }
}
