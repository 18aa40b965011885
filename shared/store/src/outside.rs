//! Which of a worker's messages are waiting on the outside world (a model's answer, a search
//! provider, a web host, a browser, a rate limit) rather than using a core. The worker runs each
//! handler inside [`Waits::scope`]; the clients mark their calls with [`waiting`]. A worker
//! then admits as many CPU-busy messages as its prefetch, and lets the ones that wait pile up
//! within its byte cap, so a slow model no longer leaves its core idle.

use std::future::Future;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::sync::Notify;

tokio::task_local! {
    static MESSAGE: Arc<Message>;
}

/// One worker's count of messages waiting on outside calls.
#[derive(Debug, Default)]
pub struct Waits {
    waiting: AtomicUsize,
    /// Signalled whenever a message starts waiting (and so leaves a CPU slot free).
    started: Notify,
}

/// One message's nesting of outside calls: it waits while any is pending.
#[derive(Debug)]
struct Message {
    depth: AtomicU32,
    waits: Arc<Waits>,
}

impl Waits {
    pub fn new() -> Arc<Waits> {
        Arc::default()
    }

    /// Messages waiting on an outside call now.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Relaxed)
    }

    /// Resolves the next time a message starts waiting (at once if one did since the last
    /// call).
    pub async fn started(&self) {
        self.started.notified().await;
    }

    /// Runs one message's handler, its outside calls counted here.
    pub async fn scope<F: Future>(self: &Arc<Self>, task: F) -> F::Output {
        let message = Arc::new(Message {
            depth: AtomicU32::new(0),
            waits: Arc::clone(self),
        });
        MESSAGE.scope(message, task).await
    }
}

/// Runs `call` as an outside wait of the message whose handler runs it (just runs it outside
/// any [`Waits::scope`], or in a task spawned from one).
pub async fn waiting<F: Future>(call: F) -> F::Output {
    let _marked = MESSAGE.try_with(Arc::clone).ok().map(Marked::enter);
    call.await
}

/// Marks its message waiting from creation to drop, so a call cancelled mid-wait unmarks too.
struct Marked(Arc<Message>);

impl Marked {
    fn enter(message: Arc<Message>) -> Marked {
        if message.depth.fetch_add(1, Ordering::Relaxed) == 0 {
            message.waits.waiting.fetch_add(1, Ordering::Relaxed);
            message.waits.started.notify_one();
        }
        Marked(message)
    }
}

impl Drop for Marked {
    fn drop(&mut self) {
        if self.0.depth.fetch_sub(1, Ordering::Relaxed) == 1 {
            self.0.waits.waiting.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn a_message_waits_while_any_of_its_calls_is_pending_and_counts_once() {
        let waits = Waits::new();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let w = Arc::clone(&waits);
        let handler = tokio::spawn(async move {
            w.scope(async {
                // Two calls at once count one waiting message.
                tokio::join!(
                    waiting(async {
                        let _ = rx.await;
                    }),
                    waiting(tokio::time::sleep(Duration::from_millis(10)))
                );
            })
            .await
        });
        waits.started().await;
        assert_eq!(waits.waiting(), 1);
        tx.send(()).expect("handler alive");
        handler.await.expect("handler");
        assert_eq!(waits.waiting(), 0);
    }

    #[tokio::test]
    async fn a_call_cut_off_mid_wait_stops_counting_and_unscoped_calls_count_nowhere() {
        let waits = Waits::new();
        let cut = tokio::time::timeout(
            Duration::from_millis(20),
            waits.scope(waiting(std::future::pending::<()>())),
        )
        .await;
        assert!(cut.is_err());
        assert_eq!(waits.waiting(), 0);
        waiting(tokio::time::sleep(Duration::from_millis(1))).await;
        assert_eq!(waits.waiting(), 0);
    }
}
