//! The page cache's index: `p:pages:entries` (hash: key → entry JSON), `p:pages:sizes` (hash:
//! key → the entry's bytes, so scripts need not parse JSON to count), `p:pages:used` (sorted
//! set: key by last use, in microseconds of Redis's clock) and `p:pages:bytes` (the sizes'
//! sum). All four expire together `keep` after the last put or read: by then every entry is
//! unused for `keep` and would be dropped at the next put anyway.
//!
//! Last use is in microseconds, not the milliseconds of the rate limiter: a read and a put a
//! few hundred microseconds apart must not tie, or least recently used would fall to the keys'
//! order.

use std::sync::LazyLock;
use std::time::Duration;

use ::redis::Script;
use async_trait::async_trait;

use super::{backend, ms, RedisStore};
use crate::{Lease, PageClaim, PageEntry, PageStats, Pages, StoreError, Wanted};

/// KEYS: entries, sizes, used, bytes. `touch()` marks `ARGV[1]` used (call it only when its
/// entry is there: a read must not bring back a removed entry), and pushes the keys' expiry out
/// by the time since the last use: every put or read sets the TTL to `keep` as it sets the
/// newest use, so `keep` is the TTL left plus the time since that newest use (reads are not
/// told `keep`).
const TOUCH_LUA: &str = r"
local function touch()
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local newest = redis.call('ZRANGE', KEYS[3], -1, -1, 'WITHSCORES')[2]
  local ttl = redis.call('PTTL', KEYS[1])
  redis.call('ZADD', KEYS[3], now, ARGV[1])
  if newest and ttl > 0 then
    local keep = ttl + math.max(0, math.floor((now - tonumber(newest)) / 1000))
    for i = 1, 4 do redis.call('PEXPIRE', KEYS[i], keep) end
  end
end
";

/// KEYS: entries, sizes, used, bytes; ARGV: key. The entry, marked used.
static GET: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
        "{TOUCH_LUA}
local e = redis.call('HGET', KEYS[1], ARGV[1])
if not e then return false end
touch()
return e"
    ))
});

/// KEYS: entries, sizes, used, bytes, the fill lock; ARGV: key, the oldest `fetched_at` taken,
/// the highest level taken, the lock's token, its TTL (ms). Returns the entry found (or
/// false) and 2 when it is taken, else 1 when the lock was taken, 0 when someone holds it.
static CLAIM: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
        "{TOUCH_LUA}
local e = redis.call('HGET', KEYS[1], ARGV[1])
if e then
  touch()
  local entry = cjson.decode(e)
  if entry.fetched_at >= tonumber(ARGV[2]) and entry.level <= tonumber(ARGV[3]) then
    return {{e, 2}}
  end
end
if redis.call('SET', KEYS[5], ARGV[4], 'NX', 'PX', ARGV[5]) then return {{e, 1}} end
return {{e, 0}}"
    ))
});

/// KEYS: entries, sizes, used, bytes; ARGV: key, entry JSON, its bytes, max bytes, keep (ms).
/// Oldest first, drops while the oldest is unused for `keep` or the total is past the bound;
/// the key just put is the newest and is skipped. Returns the dropped entries' JSON.
const PUT_LUA: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local key, max, keep = ARGV[1], tonumber(ARGV[4]), tonumber(ARGV[5])
local old = redis.call('HGET', KEYS[2], key)
if old then redis.call('DECRBY', KEYS[4], old) end
redis.call('HSET', KEYS[1], key, ARGV[2])
redis.call('HSET', KEYS[2], key, ARGV[3])
redis.call('ZADD', KEYS[3], now, key)
local total = redis.call('INCRBY', KEYS[4], ARGV[3])
local dropped = {}
while true do
  local oldest = redis.call('ZRANGE', KEYS[3], 0, 1, 'WITHSCORES')
  local k, used = oldest[1], oldest[2]
  if k == key then k, used = oldest[3], oldest[4] end
  if not k then break end
  if tonumber(used) >= now - keep * 1000 and total <= max then break end
  dropped[#dropped + 1] = redis.call('HGET', KEYS[1], k)
  total = redis.call('DECRBY', KEYS[4], redis.call('HGET', KEYS[2], k))
  redis.call('HDEL', KEYS[1], k)
  redis.call('HDEL', KEYS[2], k)
  redis.call('ZREM', KEYS[3], k)
end
for i = 1, 4 do redis.call('PEXPIRE', KEYS[i], keep) end
return dropped
";
static PUT: LazyLock<Script> = LazyLock::new(|| Script::new(PUT_LUA));

/// [`PUT_LUA`] with the fill lock: KEYS[5] is let go if ARGV[6] still holds it.
static FILL: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
        "if redis.call('GET', KEYS[5]) == ARGV[6] then redis.call('DEL', KEYS[5]) end
{PUT_LUA}"
    ))
});

/// KEYS: entries; ARGV: key, fetched_at. cjson may reorder fields and leaves absent options
/// absent, which serde reads the same; it writes numbers with 14 significant digits, past any
/// Unix time in seconds or object size this index will hold.
const REFRESH_LUA: &str = r"
local e = redis.call('HGET', KEYS[1], ARGV[1])
if not e then return 0 end
local entry = cjson.decode(e)
entry.fetched_at = tonumber(ARGV[2])
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(entry))
return 1
";
static REFRESH: LazyLock<Script> = LazyLock::new(|| Script::new(REFRESH_LUA));

/// KEYS: entries, sizes, used, bytes; ARGV: key.
const REMOVE_LUA: &str = r"
local e = redis.call('HGET', KEYS[1], ARGV[1])
if not e then return false end
redis.call('DECRBY', KEYS[4], redis.call('HGET', KEYS[2], ARGV[1]))
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
return e
";
static REMOVE: LazyLock<Script> = LazyLock::new(|| Script::new(REMOVE_LUA));

/// KEYS: entries, sizes, used, bytes.
const PURGE_LUA: &str = r"
local all = redis.call('HVALS', KEYS[1])
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
return all
";
static PURGE: LazyLock<Script> = LazyLock::new(|| Script::new(PURGE_LUA));

fn parse(json: &str) -> Result<PageEntry, StoreError> {
    serde_json::from_str(json).map_err(|e| StoreError::Backend(format!("page entry: {e}")))
}

impl RedisStore {
    /// The index's keys, in the order the scripts take them (spelled out: the architecture
    /// doc's test reads key families from these calls).
    fn page_keys(&self) -> [String; 4] {
        [
            self.key(&["pages", "entries"]),
            self.key(&["pages", "sizes"]),
            self.key(&["pages", "used"]),
            self.key(&["pages", "bytes"]),
        ]
    }

    fn page_script(&self, script: &'static Script) -> ::redis::ScriptInvocation<'static> {
        let mut invocation = script.prepare_invoke();
        for key in self.page_keys() {
            invocation.key(key);
        }
        invocation
    }
}

#[async_trait]
impl Pages for RedisStore {
    async fn page_get(&self, key: &str) -> Result<Option<PageEntry>, StoreError> {
        let json: Option<String> = self
            .page_script(&GET)
            .arg(key)
            .invoke_async(&mut self.con())
            .await
            .map_err(backend)?;
        json.as_deref().map(parse).transpose()
    }

    async fn page_put(
        &self,
        key: &str,
        entry: &PageEntry,
        max_bytes: u64,
        keep: Duration,
    ) -> Result<Vec<PageEntry>, StoreError> {
        let json = serde_json::to_string(entry).expect("a page entry serialises");
        let dropped: Vec<String> = self
            .page_script(&PUT)
            .arg(key)
            .arg(json)
            .arg(entry.bytes)
            .arg(max_bytes)
            .arg(ms(keep))
            .invoke_async(&mut self.con())
            .await
            .map_err(backend)?;
        dropped.iter().map(|j| parse(j)).collect()
    }

    async fn page_claim(
        &self,
        key: &str,
        wanted: Wanted,
        lock: &str,
        ttl: Duration,
    ) -> Result<PageClaim, StoreError> {
        let lease = Lease::new(lock);
        let (found, answer): (Option<String>, u8) = self
            .page_script(&CLAIM)
            .key(self.key(&["lock", lock]))
            .arg(key)
            .arg(wanted.fresh_after)
            .arg(wanted.max_level)
            .arg(&lease.token)
            .arg(ms(ttl))
            .invoke_async(&mut self.con())
            .await
            .map_err(backend)?;
        let found = found.as_deref().map(parse).transpose()?;
        Ok(match (answer, found) {
            (2, Some(entry)) => PageClaim::Fresh(entry),
            (1, found) => PageClaim::Fill { found, lease },
            _ => PageClaim::Busy,
        })
    }

    async fn page_fill(
        &self,
        key: &str,
        entry: &PageEntry,
        (max_bytes, keep): (u64, Duration),
        lease: &Lease,
    ) -> Result<Vec<PageEntry>, StoreError> {
        let json = serde_json::to_string(entry).expect("a page entry serialises");
        let dropped: Vec<String> = self
            .page_script(&FILL)
            .key(self.key(&["lock", &lease.name]))
            .arg(key)
            .arg(json)
            .arg(entry.bytes)
            .arg(max_bytes)
            .arg(ms(keep))
            .arg(&lease.token)
            .invoke_async(&mut self.con())
            .await
            .map_err(backend)?;
        dropped.iter().map(|j| parse(j)).collect()
    }

    async fn page_refresh(&self, key: &str, fetched_at: u64) -> Result<bool, StoreError> {
        let [entries, ..] = self.page_keys();
        let done: u32 = REFRESH
            .key(entries)
            .arg(key)
            .arg(fetched_at)
            .invoke_async(&mut self.con())
            .await
            .map_err(backend)?;
        Ok(done == 1)
    }

    async fn page_remove(&self, key: &str) -> Result<Option<PageEntry>, StoreError> {
        let json: Option<String> = self
            .page_script(&REMOVE)
            .arg(key)
            .invoke_async(&mut self.con())
            .await
            .map_err(backend)?;
        json.as_deref().map(parse).transpose()
    }

    async fn page_stats(&self) -> Result<PageStats, StoreError> {
        let [entries, _, _, bytes] = self.page_keys();
        let (entries, bytes): (u64, Option<u64>) = ::redis::pipe()
            .atomic()
            .hlen(entries)
            .get(bytes)
            .query_async(&mut self.con())
            .await
            .map_err(backend)?;
        Ok(PageStats {
            entries,
            bytes: bytes.unwrap_or(0),
        })
    }

    async fn page_purge(&self) -> Result<Vec<PageEntry>, StoreError> {
        let all: Vec<String> = self
            .page_script(&PURGE)
            .invoke_async(&mut self.con())
            .await
            .map_err(backend)?;
        all.iter().map(|j| parse(j)).collect()
    }
}
