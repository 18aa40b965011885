//! Which of a worker's messages are waiting on the outside world (a model's answer, a search
//! provider, a web host, a rate limit) rather than using a core. The worker runs each handler
//! inside its [`Message`]'s scope; the clients mark their calls with [`waiting`], and waits for a
//! rate limit with [`rate_limited`]. A worker then admits as many CPU-busy messages as its
//! prefetch, and lets the ones that wait pile up within its byte cap, so a slow model no longer
//! leaves its core idle; and a handler abandoned at its message timeout while it waited for a
//! provider's limit is known to have failed for the provider, not its own fault.
//!
//! A message also carries the time its LLM calls may spend answering ([`Message::limit_llm`]): a
//! slow model (a laptop's, a few tokens a second) must not hold a handler past its message
//! timeout, where it would be abandoned and retried from the start, every paid answer asked for
//! again. Past it ([`llm_time_left`]) a step takes its non-LLM path. Waits for a rate limit do
//! not count: a handler cut off while it waits goes back without spending an attempt, and gets
//! the model's answer once the provider recovers.

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

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

/// One message's outside calls: it waits while any is pending.
#[derive(Debug)]
pub struct Message {
    depth: AtomicU32,
    /// Up while it sleeps on a rate limit; left up if it is dropped then.
    rate_limited: AtomicBool,
    waits: Arc<Waits>,
    /// How long its LLM calls may spend answering; unset: no limit but each call's own timeout.
    llm_budget: OnceLock<Duration>,
    /// Microseconds its LLM calls have spent answering so far.
    llm_spent: AtomicU64,
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

    /// A message whose outside calls are counted here.
    pub fn message(self: &Arc<Self>) -> Arc<Message> {
        Arc::new(Message {
            depth: AtomicU32::new(0),
            rate_limited: AtomicBool::new(false),
            waits: Arc::clone(self),
            llm_budget: OnceLock::new(),
            llm_spent: AtomicU64::new(0),
        })
    }
}

impl Message {
    /// Runs the message's handler, its outside calls marked on this message.
    pub async fn scope<F: Future>(self: &Arc<Self>, task: F) -> F::Output {
        MESSAGE.scope(Arc::clone(self), task).await
    }

    /// Its LLM calls may spend `budget` answering (the first limit set holds).
    pub fn limit_llm(&self, budget: Duration) {
        let _ = self.llm_budget.set(budget);
    }

    /// Whether it is sleeping on a rate limit, or was when it was dropped.
    pub fn rate_limited(&self) -> bool {
        self.rate_limited.load(Ordering::Relaxed)
    }
}

/// Runs `call` as an outside wait of the message whose handler runs it (just runs it outside
/// any [`Waits::scope`], or in a task spawned from one).
pub async fn waiting<F: Future>(call: F) -> F::Output {
    let _marked = MESSAGE.try_with(Arc::clone).ok().map(Marked::enter);
    call.await
}

/// The time left for LLM calls of the message whose handler asks to spend answering: `None`
/// outside a message or without a limit, zero once it is spent.
pub fn llm_time_left() -> Option<Duration> {
    MESSAGE
        .try_with(|m| {
            let budget = m.llm_budget.get()?;
            let spent = Duration::from_micros(m.llm_spent.load(Ordering::Relaxed));
            Some(budget.saturating_sub(spent))
        })
        .ok()?
}

/// Counts `took` as spent answering by an LLM call of the message whose handler made it.
pub fn spend_llm(took: Duration) {
    let _ = MESSAGE.try_with(|m| {
        let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        m.llm_spent.fetch_add(micros, Ordering::Relaxed);
    });
}

/// Runs `wait` as an outside wait that is a rate limit's (a model's or a search provider's
/// fleet-wide pacing, or the hold a 429 put on it). Dropped mid-wait, it leaves its message
/// marked rate-limited.
pub async fn rate_limited<F: Future>(wait: F) -> F::Output {
    let message = MESSAGE.try_with(Arc::clone).ok();
    let flag = |up| {
        if let Some(m) = &message {
            m.rate_limited.store(up, Ordering::Relaxed);
        }
    };
    flag(true);
    let out = waiting(wait).await;
    flag(false);
    out
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
    use super::*;

    #[tokio::test]
    async fn a_message_s_llm_time_is_its_budget_less_what_its_calls_spent() {
        assert_eq!(llm_time_left(), None, "outside any message");
        spend_llm(Duration::from_secs(1));
        let message = Waits::new().message();
        assert_eq!(message.scope(async { llm_time_left() }).await, None);
        message.limit_llm(Duration::from_secs(60));
        // The first limit holds: a handler cannot lengthen it.
        message.limit_llm(Duration::from_secs(600));
        let left = message
            .scope(async {
                spend_llm(Duration::from_secs(45));
                llm_time_left()
            })
            .await;
        assert_eq!(left, Some(Duration::from_secs(15)));
        let left = message
            .scope(async {
                spend_llm(Duration::from_secs(20));
                llm_time_left()
            })
            .await;
        assert_eq!(left, Some(Duration::ZERO));
    }

    #[tokio::test]
    async fn a_message_waits_while_any_of_its_calls_is_pending_and_counts_once() {
        let waits = Waits::new();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let w = Arc::clone(&waits);
        let handler = tokio::spawn(async move {
            w.message()
                .scope(async {
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
    async fn the_rate_limit_flag_is_up_only_while_the_message_waits_and_stays_up_if_it_is_dropped()
    {
        let waits = Waits::new();
        let message = waits.message();
        let sleep = |ms| rate_limited(tokio::time::sleep(Duration::from_millis(ms)));
        message.scope(sleep(5)).await;
        assert!(!message.rate_limited(), "down once the wait is over");
        let cut =
            tokio::time::timeout(Duration::from_millis(20), message.scope(sleep(60_000))).await;
        assert!(cut.is_err());
        assert!(message.rate_limited(), "dropped while waiting");
        sleep(1).await; // outside any message: a plain sleep
    }

    #[tokio::test]
    async fn a_call_cut_off_mid_wait_stops_counting_and_unscoped_calls_count_nowhere() {
        let waits = Waits::new();
        let cut = tokio::time::timeout(
            Duration::from_millis(20),
            waits.message().scope(waiting(std::future::pending::<()>())),
        )
        .await;
        assert!(cut.is_err());
        assert_eq!(waits.waiting(), 0);
        waiting(tokio::time::sleep(Duration::from_millis(1))).await;
        assert_eq!(waits.waiting(), 0);
    }
}
