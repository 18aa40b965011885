//! Whether a task is waiting on a rate limit: a model's or a search provider's fleet-wide
//! pacing, or the hold a 429 put on it. The worker loop watches its handlers with [`watch`], so
//! a handler abandoned at its message timeout while it waited for a provider is known to have
//! failed for the provider's limit, not its own fault, and spends none of its message's
//! attempts.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::{Store, StoreError};

tokio::task_local! {
    static WAITING: Arc<AtomicBool>;
}

/// Runs `task`, with `flag` true whenever it sleeps on a rate limit. A task dropped during
/// such a sleep leaves the flag true.
pub async fn watch<F: Future>(flag: Arc<AtomicBool>, task: F) -> F::Output {
    WAITING.scope(flag, task).await
}

/// Sleeps `wait` as a rate-limit wait of the watched task (a plain sleep when unwatched).
pub async fn sleep(wait: Duration) {
    let flag = WAITING.try_with(Arc::clone).ok();
    if let Some(flag) = &flag {
        flag.store(true, Ordering::Relaxed);
    }
    crate::outside::waiting(tokio::time::sleep(wait)).await;
    // Not reached when the task is dropped mid-sleep: the flag then says so.
    if let Some(flag) = &flag {
        flag.store(false, Ordering::Relaxed);
    }
}

/// Waits for a turn at `slot`, one per `interval` across every worker ([`Store::rate_acquire`]),
/// sleeping as a rate-limit wait; returns the time slept (not the store's round trips).
pub async fn take_turn(
    store: &dyn Store,
    slot: &str,
    interval: Duration,
) -> Result<Duration, StoreError> {
    let mut waited = Duration::ZERO;
    loop {
        let wait = store.rate_acquire(slot, interval).await?;
        if wait.is_zero() {
            return Ok(waited);
        }
        sleep(wait).await;
        waited += wait;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_flag_is_up_only_while_the_task_waits_and_stays_up_if_it_is_dropped() {
        let flag = Arc::new(AtomicBool::new(false));
        watch(Arc::clone(&flag), sleep(Duration::from_millis(5))).await;
        assert!(!flag.load(Ordering::Relaxed), "down once the wait is over");
        let cut = tokio::time::timeout(
            Duration::from_millis(20),
            watch(Arc::clone(&flag), sleep(Duration::from_secs(60))),
        )
        .await;
        assert!(cut.is_err());
        assert!(flag.load(Ordering::Relaxed), "dropped while waiting");
        sleep(Duration::from_millis(1)).await; // unwatched: a plain sleep
    }

    #[tokio::test]
    async fn a_turn_sleeps_until_the_slot_frees_and_says_how_long() {
        let store = crate::MemoryStore::new();
        let interval = Duration::from_millis(50);
        assert_eq!(
            take_turn(&store, "t", interval).await.unwrap(),
            Duration::ZERO
        );
        let flag = Arc::new(AtomicBool::new(false));
        let waited = watch(Arc::clone(&flag), take_turn(&store, "t", interval))
            .await
            .unwrap();
        assert!(waited > Duration::ZERO && waited <= interval, "{waited:?}");
        assert!(!flag.load(Ordering::Relaxed));
    }
}
