//! Whether a task is waiting on a rate limit: a model's or a search provider's fleet-wide
//! pacing, or the hold a 429 put on it. The worker loop watches its handlers with [`watch`], so
//! a handler abandoned at its message timeout while it waited for a provider is known to have
//! failed for the provider's limit, not its own fault, and spends none of its message's
//! attempts.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

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
    tokio::time::sleep(wait).await;
    // Not reached when the task is dropped mid-sleep: the flag then says so.
    if let Some(flag) = &flag {
        flag.store(false, Ordering::Relaxed);
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
}
