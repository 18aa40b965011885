//! A batch's LLM budget: counters of the batch's record, `p:batch:<b>`
//! (`counter_field` in `batch.rs`).

use std::sync::LazyLock;

use ::redis::Script;
use async_trait::async_trait;

use super::batch::counter_field;
use super::{backend, RedisStore};
use crate::budget::{BUDGET, REFUSED, RESERVED, SPENT};
use crate::{Budgets, StoreError};

const BUDGET_RESERVE_LUA: &str = r"
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
static BUDGET_RESERVE: LazyLock<Script> = LazyLock::new(|| Script::new(BUDGET_RESERVE_LUA));

#[async_trait]
impl Budgets for RedisStore {
    async fn budget_reserve(&self, batch: &str, amount: i64) -> Result<Option<i64>, StoreError> {
        let reserved: i64 = BUDGET_RESERVE
            .key(self.key(&["batch", batch]))
            .arg(counter_field(BUDGET))
            .arg(counter_field(SPENT))
            .arg(counter_field(RESERVED))
            .arg(amount.max(0))
            .arg(counter_field(REFUSED))
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
            pipe.hincr(&key, counter_field(RESERVED), -reserved)
                .ignore();
        }
        if spent > 0 {
            pipe.hincr(&key, counter_field(SPENT), spent).ignore();
        }
        pipe.query_async::<()>(&mut self.con())
            .await
            .map_err(backend)
    }
}
