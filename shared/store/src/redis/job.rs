//! A job's fan-in record, `p:job:<job>` (hash: `expected`, `meta`, and each crawl's
//! extension) and `p:job:<job>:outcomes` (hash: index → outcome), and its counters,
//! `p:job:<job>:counters`; all with the job's TTL.

use std::collections::BTreeMap;
use std::sync::LazyLock;
use std::time::Duration;

use ::redis::{AsyncCommands, Script};
use async_trait::async_trait;

use super::{backend, ms, RedisStore};
use crate::{Extension, FanIn, Jobs, StoreError};

/// Crawled sources join the job before their parent's outcome is recorded, so the job cannot
/// complete without them. Fields: `ext:<parent>` first index, `extn:<parent>` granted,
/// `src:<parent>` the proposed sources, `crawled` the job's total.
const FANIN_EXTEND_LUA: &str = r"
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
static FANIN_EXTEND: LazyLock<Script> = LazyLock::new(|| Script::new(FANIN_EXTEND_LUA));

const FANIN_OPEN_LUA: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'expected', ARGV[1], 'meta', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
";
static FANIN_OPEN: LazyLock<Script> = LazyLock::new(|| Script::new(FANIN_OPEN_LUA));

const FANIN_RECORD_LUA: &str = r"
local new = redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
local expected = redis.call('HGET', KEYS[1], 'expected')
if not expected then expected = 4294967295 end
return {new, redis.call('HLEN', KEYS[2]), tonumber(expected)}
";
static FANIN_RECORD: LazyLock<Script> = LazyLock::new(|| Script::new(FANIN_RECORD_LUA));

#[async_trait]
impl Jobs for RedisStore {
    async fn fanin_open(
        &self,
        job: &str,
        expected: u32,
        meta: &[u8],
        ttl: Duration,
    ) -> Result<bool, StoreError> {
        let created: u32 = FANIN_OPEN
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
        let reply: Option<(u32, u32, Vec<u8>)> = FANIN_EXTEND
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
        let (new, received, expected): (u32, u32, u64) = FANIN_RECORD
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
}
