//! Taking a turn at a fleet-wide rate limit: a model's or a search provider's pacing, each a
//! slot in the store. Its sleeps are rate-limit waits of the message that takes them
//! ([`crate::outside::rate_limited`]).

use std::time::Duration;

use crate::{Store, StoreError};

/// Sleeps `wait` as a rate-limit wait of the message whose handler runs it.
pub async fn sleep(wait: Duration) {
    crate::outside::rate_limited(tokio::time::sleep(wait)).await;
}

/// Waits for a turn at `slot`, one per `interval` across every worker, sleeping as a
/// rate-limit wait; returns the time slept (not the store's round trips). A caller that cannot
/// go at once takes a place in the slot's line ([`crate::Rates::rate_queue`]) and, when its
/// place comes, the turn ([`crate::Rates::rate_acquire`]); if another took it first, it waits
/// what it is told when that is within an interval, or takes a new place (after a 429's hold,
/// which would otherwise wake every waiter at once when it ends).
pub async fn take_turn(
    store: &dyn Store,
    slot: &str,
    interval: Duration,
) -> Result<Duration, StoreError> {
    let mut wait = store.rate_queue(slot, interval).await?;
    let mut waited = Duration::ZERO;
    while !wait.is_zero() {
        sleep(wait).await;
        waited += wait;
        wait = store.rate_acquire(slot, interval).await?;
        if wait > interval {
            wait = store.rate_queue(slot, interval).await?;
        }
    }
    Ok(waited)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_turn_sleeps_until_the_slot_frees_and_says_how_long() {
        let store = crate::MemoryStore::new();
        let interval = Duration::from_millis(50);
        assert_eq!(
            take_turn(&store, "t", interval).await.unwrap(),
            Duration::ZERO
        );
        let message = crate::outside::Waits::new().message();
        let waited = message
            .scope(take_turn(&store, "t", interval))
            .await
            .unwrap();
        assert!(waited > Duration::ZERO && waited <= interval, "{waited:?}");
        assert!(!message.rate_limited());
    }
}
