//! A batch's LLM budget, in micro-dollars: a reservation before each call and its settling
//! after, atomic across the fleet. The budget's counters are batch counters
//! ([`crate::Batches::batch_counter`]) under these names.

use async_trait::async_trait;

use crate::StoreError;

/// The cap; 0 or absent: no budget.
pub const BUDGET: &str = "budget_micro";
/// What finished calls cost.
pub const SPENT: &str = "spent_micro";
/// What calls under way have reserved ([`Budgets::budget_reserve`]).
pub const RESERVED: &str = "reserved_micro";
/// Reservations refused: once there is one, the budget is reached.
pub const REFUSED: &str = "budget_refusals";

#[async_trait]
pub trait Budgets: Send + Sync {
    /// Reserves `amount` micro-dollars of a batch's LLM budget before a call, atomically across
    /// the fleet. Returns what was reserved: `amount` when `spent + reserved + amount` stays
    /// within the budget (added to [`RESERVED`]), 0 for a batch without a budget, and `None`
    /// when refused (counted in [`REFUSED`], nothing else changed).
    async fn budget_reserve(&self, batch: &str, amount: i64) -> Result<Option<i64>, StoreError>;
    /// Ends a reservation after the call: its `reserved` leaves [`RESERVED`] and what the call
    /// cost is added to [`SPENT`].
    async fn budget_settle(&self, batch: &str, reserved: i64, spent: i64)
        -> Result<(), StoreError>;
}
