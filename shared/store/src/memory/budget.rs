//! A batch's LLM budget: counters of the batch's record.

use async_trait::async_trait;

use super::MemoryStore;
use crate::budget::{BUDGET, REFUSED, RESERVED, SPENT};
use crate::{Budgets, StoreError};

#[async_trait]
impl Budgets for MemoryStore {
    async fn budget_reserve(&self, batch: &str, amount: i64) -> Result<Option<i64>, StoreError> {
        self.with(|s| {
            let b = s.batches.record(batch);
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
        self.with(|s| {
            let b = s.batches.record(batch);
            for (counter, delta) in [(RESERVED, -reserved.max(0)), (SPENT, spent.max(0))] {
                if delta != 0 {
                    *b.counters.entry(counter.to_owned()).or_default() += delta;
                }
            }
        })
    }
}
