//! The bytes a worker's messages in flight hold, bounded by `broker.max_in_flight_bytes`.
//!
//! The worker reserves each message's footprint (its stage's estimate, [`crate::Stage::footprint`])
//! before handing it over, and the reservation lives as long as the handler. A handler whose
//! holding changes says so with [`hold`]: clean, once its page is extracted and only the text
//! waits on the LLM, holds far less; fetch, once a page has arrived, holds the page.
//!
//! So a worker whose messages wait on slow outside calls keeps as many in flight as their bytes
//! allow, and one whose messages are large keeps few, instead of a fixed count either way.
//!
//! A new figure never waits: bytes that have arrived are held already, and a handler that
//! waited for room to account them could wait on handlers waiting likewise. Past the cap the
//! worker admits nothing until enough is given back, so it exceeds the cap by at most what its
//! handlers' inputs turned out to hold beyond their estimates.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;
use trawl_telemetry::prometheus_client::metrics::gauge::Gauge;

/// A worker's byte cap and what its messages hold of it.
#[derive(Clone)]
pub struct Budget {
    inner: Arc<Inner>,
}

struct Inner {
    cap: u64,
    used: Mutex<u64>,
    freed: Notify,
    /// `used`, for `/metrics`.
    gauge: Gauge,
}

impl Budget {
    /// A cap of `cap` bytes.
    pub fn new(cap: u64, gauge: Gauge) -> Budget {
        Budget {
            inner: Arc::new(Inner {
                cap,
                used: Mutex::new(0),
                freed: Notify::new(),
                gauge,
            }),
        }
    }

    /// Bytes reserved now.
    pub fn used(&self) -> u64 {
        *self.inner.used.lock().expect("budget lock")
    }

    /// Reserves `bytes` for one message, waiting until they fit beside the others. A message
    /// larger than the cap runs once the worker holds nothing else. Cancel-safe: dropped
    /// before it resolves, it took nothing.
    pub async fn admit(&self, bytes: u64) -> Held {
        let inner = &self.inner;
        inner.admit(bytes).await;
        Held {
            inner: Arc::new(HeldInner {
                budget: Arc::clone(inner),
                bytes: AtomicU64::new(bytes),
            }),
        }
    }
}

impl Inner {
    /// Waits until `bytes` fit (or nothing else is held), then adds them in the same step.
    async fn admit(&self, bytes: u64) {
        loop {
            // Registered before the check, so a release between the check and the wait is
            // not missed.
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            {
                let mut used = self.used.lock().expect("budget lock");
                if *used == 0 || *used + bytes <= self.cap {
                    *used += bytes;
                    self.gauge.set(*used as i64);
                    return;
                }
            }
            freed.await;
        }
    }

    /// Moves `used` from one message's `before` to its `after`.
    fn change(&self, before: u64, after: u64) {
        let mut used = self.used.lock().expect("budget lock");
        *used = (*used + after).saturating_sub(before);
        self.gauge.set(*used as i64);
        drop(used);
        if after < before {
            self.freed.notify_waiters();
        }
    }
}

/// One message's reservation; dropping it gives the bytes back.
#[derive(Clone)]
pub struct Held {
    inner: Arc<HeldInner>,
}

struct HeldInner {
    budget: Arc<Inner>,
    bytes: AtomicU64,
}

impl Drop for HeldInner {
    fn drop(&mut self) {
        self.budget.change(*self.bytes.get_mut(), 0);
    }
}

impl Held {
    /// Bytes this message holds.
    pub fn bytes(&self) -> u64 {
        self.inner.bytes.load(Ordering::Relaxed)
    }

    /// Sets the reservation to `bytes`, what the message holds now: lower gives the rest back
    /// at once, higher accounts bytes already held (it never waits).
    pub fn hold(&self, bytes: u64) {
        let before = self.inner.bytes.swap(bytes, Ordering::Relaxed);
        self.inner.budget.change(before, bytes);
    }
}

tokio::task_local! {
    /// The reservation of the message the current task handles.
    static HELD: Held;
}

/// Runs `handler` with `held` as its message's reservation, for [`hold`].
pub(crate) async fn holding<F: std::future::Future>(held: Held, handler: F) -> F::Output {
    HELD.scope(held, handler).await
}

/// Sets the reservation of the message being handled to `bytes` ([`Held::hold`]). Outside a
/// worker (a test calling a stage directly) it does nothing.
pub fn hold(bytes: u64) {
    let _ = HELD.try_with(|held| held.hold(bytes));
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn budget(cap: u64) -> Budget {
        Budget::new(cap, Gauge::default())
    }

    async fn pending<F: std::future::Future>(f: F) -> bool {
        tokio::time::timeout(Duration::from_millis(50), f)
            .await
            .is_err()
    }

    #[tokio::test]
    async fn messages_are_admitted_while_their_bytes_fit() {
        let b = budget(100);
        let first = b.admit(60).await;
        let second = b.admit(40).await;
        assert_eq!(b.used(), 100);
        assert!(pending(b.admit(1)).await, "a full cap admits nothing more");
        drop(first);
        assert_eq!(b.used(), 40);
        let third = b.admit(60).await;
        assert_eq!((second.bytes(), third.bytes(), b.used()), (40, 60, 100));
    }

    #[tokio::test]
    async fn a_message_larger_than_the_cap_runs_alone() {
        let b = budget(100);
        let small = b.admit(10).await;
        assert!(pending(b.admit(500)).await);
        drop(small);
        let big = b.admit(500).await;
        assert_eq!(b.used(), 500);
        assert!(pending(b.admit(1)).await);
        drop(big);
        assert_eq!(b.used(), 0);
    }

    #[tokio::test]
    async fn a_held_figure_moves_both_ways_and_admission_waits_for_it() {
        let b = budget(100);
        let h = b.admit(30).await;
        h.hold(120); // a page larger than its estimate arrived: accounted, never waited for
        assert_eq!(b.used(), 120);
        let waiting = tokio::spawn({
            let b = b.clone();
            async move { b.admit(50).await.bytes() }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiting.is_finished(), "over the cap: nothing admitted");
        h.hold(40);
        assert_eq!(waiting.await.unwrap(), 50, "the shrink made room");
        assert_eq!(b.used(), 40, "the admitted message has ended");
        drop(h);
        assert_eq!(b.used(), 0);
    }

    #[tokio::test]
    async fn a_cancelled_admission_takes_nothing() {
        let b = budget(100);
        let h = b.admit(80).await;
        assert!(pending(b.admit(50)).await);
        assert_eq!(b.used(), 80);
        drop(h);
        assert_eq!(b.used(), 0);
    }

    #[tokio::test]
    async fn the_task_local_reservation_follows_the_handler() {
        let b = budget(1_000);
        let held = b.admit(100).await;
        let inside = holding(held, async {
            hold(400);
            let high = b.used();
            hold(50);
            (high, b.used())
        })
        .await;
        assert_eq!(inside, (400, 50));
        assert_eq!(b.used(), 0, "released with the handler");
        hold(10); // outside a worker: nothing held
        assert_eq!(b.used(), 0);
    }
}
