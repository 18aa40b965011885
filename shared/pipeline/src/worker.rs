//! The consume loop every stage runs in.
//!
//! For each delivery: decode the envelope (undecodable or unknown version: dead-letter with the
//! reason), skip it if its job has already ended (cancelled, or synthesised at its deadline),
//! hand it to the stage, and settle it only after the stage's outputs are confirmed:
//!
//! | stage returns | the worker |
//! |---|---|
//! | `Ok(Done)` | acks |
//! | `Ok(Later(d))` | republishes the same message through a delay tier (not an attempt), acks |
//! | retryable error, attempts left | republishes with `attempt + 1` through the next delay tier, acks |
//! | permanent error, or no attempts left | publishes to `<ns>.dead` with reason and attempts, acks |
//!
//! If that republish fails the delivery is requeued instead, so nothing is lost. A handler that
//! panics drops its delivery, which goes back to the queue; the queue's delivery limit ends a
//! message that keeps killing its handler. A handler that runs past `broker.message_timeout_secs`
//! is cancelled and its message retried. On shutdown the loop stops taking messages, lets
//! in-flight ones finish within the grace period, and abandons (requeues) the rest.
//!
//! How many messages run at once follows the work, not a fixed count. A message is admitted
//! while fewer than `broker.prefetch` of the running ones use the core, the others waiting on
//! outside calls ([`trawl_store::outside`]: a model, a search provider, a web host, a rate
//! limit), and once its stage's footprint fits the worker's `broker.max_in_flight_bytes`
//! ([`crate::in_flight`]). The broker's window follows: `prefetch` plus one per waiting
//! message, up to `broker.max_waiting` more ([`Window`]). With a slow model a worker keeps
//! hundreds of messages waiting while its core stays busy; with a fast one it holds about
//! `prefetch`, and a killed worker gives back no more than it was working on. Messages waiting
//! for admission stay unacknowledged, in order; one that waits so long that the broker's
//! consumer timeout would come before its handler's could end is put back at the queue's tail
//! (not an attempt) for a worker with room.

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::{mpsc, oneshot, watch, Notify};
use tokio::task::JoinSet;
use tokio::time::Instant;
use tracing::{info, warn, Instrument};
use trawl_broker::{Delivery, Message, Queue, HEADER_ATTEMPTS, HEADER_QUEUE, HEADER_REASON};
use trawl_messages::envelope::{with_attempt, Body};
use trawl_messages::Envelope;
use trawl_store::outside::Waits;
use trawl_telemetry::Readiness;

use crate::in_flight::{Budget, Held};
use crate::metrics::{labels, METRICS};
use crate::results::Counter;
use crate::{ErrorClass, Runtime, StageError};

/// What a stage did with a message.
#[derive(Debug, PartialEq, Eq)]
pub enum Handled {
    Done,
    /// Not now (a host's rate limit, a deadline timer): see it again after this long.
    Later(Duration),
}

#[async_trait]
pub trait Stage: Send + Sync + 'static {
    type Input: Body + Send + Sync;

    /// Handles one message. Outputs must be published (and confirmed) before returning `Ok`.
    /// Must be idempotent: a message is redelivered when a worker dies before acking.
    async fn handle(&self, rt: &Runtime, msg: Envelope<Self::Input>)
        -> Result<Handled, StageError>;

    /// The memory handling a message of `len` encoded bytes will hold, as the worker reserves
    /// it from `broker.max_in_flight_bytes` before the handler starts (a handler whose holding
    /// changes says so with [`crate::in_flight::hold`]). By default the message twice (its
    /// delivery and its decoded copy) and a quarter megabyte of working memory.
    fn footprint(&self, _config: &trawl_config::Config, len: usize) -> u64 {
        2 * len as u64 + BASE_FOOTPRINT
    }
}

/// Working memory a handler holds beyond its message, in bytes.
pub const BASE_FOOTPRINT: u64 = 256 << 10;

/// How long a delivery may wait for admission: half of what the broker's consumer timeout
/// leaves after the handler's own limit, so it can still be handled within the former.
fn admission_limit(broker: &trawl_config::BrokerConfig) -> Duration {
    let spare = (broker.consumer_timeout_secs).saturating_sub(broker.message_timeout_secs);
    Duration::from_secs((spare / 2).max(1))
}

/// Consumes `queue` until `shutdown` resolves, then drains.
pub async fn run_worker<S: Stage>(
    stage: Arc<S>,
    rt: Runtime,
    queue: Queue,
    shutdown: impl Future<Output = ()>,
    readiness: Readiness,
) -> Result<(), StageError> {
    let broker = &rt.config.broker;
    let (prefetch, cap) = (broker.prefetch, broker.max_in_flight_bytes);
    let stage_labels = labels(&[("stage", queue.label())]);
    let budget = Budget::new(
        cap,
        METRICS.in_flight_bytes.get_or_create(&stage_labels).clone(),
    );
    let waited = METRICS.admission_wait.get_or_create(&stage_labels).clone();
    let waiting_gauge = METRICS.waiting.get_or_create(&stage_labels).clone();
    let limit = admission_limit(broker);
    let mut window = Window::new(prefetch, broker.max_waiting);
    let (mut deliveries, stop_taking) = subscribe(&rt, queue, &window, &readiness).await?;
    let waits = Waits::new();
    let running = Arc::new(Running::default());
    let mut tasks = JoinSet::new();
    let mut head: Option<(Instant, Delivery)> = None;
    tokio::pin!(shutdown);
    loop {
        while tasks.try_join_next().is_some() {}
        waiting_gauge.set(waits.waiting() as i64);
        window.follow(waits.waiting());
        let Some((since, delivery)) = head.take() else {
            tokio::select! {
                _ = &mut shutdown => break,
                next = deliveries.recv() => match next {
                    Some(next) => head = Some(next),
                    None => break,
                },
                // A message began to wait: the window may grow.
                () = waits.started() => {}
            }
            continue;
        };
        let footprint = stage.footprint(&rt.config, delivery.message.body.len());
        let admission = async {
            let held = budget.admit(footprint).await;
            running.slot(&waits, usize::from(prefetch)).await;
            held
        };
        let admitted = tokio::select! {
            biased;
            _ = &mut shutdown => {
                drop(delivery); // back to the queue
                break;
            }
            held = admission => Some(held),
            _ = tokio::time::sleep_until(since + limit) => None,
        };
        waited.inc_by(since.elapsed().as_secs_f64());
        match admitted {
            Some(held) => {
                tasks.spawn(handle_one(
                    Arc::clone(&stage),
                    rt.clone(),
                    queue,
                    delivery,
                    held,
                    (Arc::clone(&waits), Running::start(&running)),
                ));
            }
            None => {
                tasks.spawn(send_back(rt.clone(), queue, delivery));
            }
        }
    }
    readiness.set(false);
    drain(&rt, queue, (deliveries, stop_taking), tasks).await;
    info!(queue = %queue, "worker stopped");
    Ok(())
}

/// Starts consuming `queue` with the broker's window following `window`; the worker is ready
/// from then on.
async fn subscribe(
    rt: &Runtime,
    queue: Queue,
    window: &Window,
    readiness: &Readiness,
) -> Result<(Deliveries, oneshot::Sender<()>), StageError> {
    let broker = &rt.config.broker;
    let mut subscription = rt.broker.consume(queue, broker.prefetch).await?;
    METRICS
        .capacity
        .get_or_create(&labels(&[("stage", queue.label())]))
        .set(i64::from(window.most()));
    subscription.follow(window.receiver());
    readiness.set(true);
    info!(queue = %queue, prefetch = broker.prefetch, max_waiting = broker.max_waiting, max_in_flight_bytes = broker.max_in_flight_bytes, "worker consuming");
    // The subscription runs in a task of its own that is stopped only at shutdown: a
    // subscription future dropped half-way through re-opening its channel could leave a
    // consumer behind that nothing reads. Deliveries are stamped as they arrive.
    Ok(take(subscription))
}

/// Shutdown: stop taking deliveries, give back those not admitted, and let the running handlers
/// finish within `broker.shutdown_grace_secs`; the rest are abandoned, their deliveries requeued.
async fn drain(
    rt: &Runtime,
    queue: Queue,
    (mut deliveries, stop_taking): (Deliveries, oneshot::Sender<()>),
    mut tasks: JoinSet<()>,
) {
    let _ = stop_taking.send(());
    // Deliveries not yet admitted go back to the queue as they are dropped.
    deliveries.close();
    while deliveries.recv().await.is_some() {}
    let grace = Duration::from_secs(rt.config.broker.shutdown_grace_secs);
    info!(queue = %queue, in_flight = tasks.len(), "draining");
    let drained =
        tokio::time::timeout(grace, async { while tasks.join_next().await.is_some() {} }).await;
    if drained.is_err() {
        warn!(queue = %queue, abandoned = tasks.len(), "grace period over; requeueing the rest");
        tasks.shutdown().await;
    }
}

/// The handlers running, busy or waiting; a slot for another busy one is free while fewer than
/// `prefetch` of them are not waiting on an outside call.
#[derive(Default)]
struct Running {
    count: AtomicUsize,
    ended: Notify,
}

/// One running handler, counted until dropped.
struct Runs(Arc<Running>);

impl Running {
    fn start(running: &Arc<Running>) -> Runs {
        running.count.fetch_add(1, Ordering::Relaxed);
        Runs(Arc::clone(running))
    }

    /// Resolves once a busy slot is free.
    async fn slot(&self, waits: &Waits, prefetch: usize) {
        loop {
            let busy = (self.count.load(Ordering::Relaxed)).saturating_sub(waits.waiting());
            if busy < prefetch {
                return;
            }
            tokio::select! {
                () = self.ended.notified() => {}
                () = waits.started() => {}
            }
        }
    }
}

impl Drop for Runs {
    fn drop(&mut self) {
        self.0.count.fetch_sub(1, Ordering::Relaxed);
        self.0.ended.notify_one();
    }
}

/// The broker's window over a worker's queue: `prefetch` for the messages using its core, plus
/// one for each message waiting on an outside call, up to `max_waiting`. It grows at once, so
/// the next message is there when a busy one starts to wait, and shrinks only after it has
/// been larger than needed for [`Window::SETTLE`], so a burst of short waits does not make the
/// worker cancel and re-add consumers.
struct Window {
    prefetch: u32,
    max_waiting: u32,
    tx: watch::Sender<u32>,
    /// Since when the window has been larger than needed.
    slack_since: Option<Instant>,
}

impl Window {
    const SETTLE: Duration = Duration::from_secs(2);

    fn new(prefetch: u16, max_waiting: u32) -> Window {
        let prefetch = u32::from(prefetch);
        Window {
            prefetch,
            max_waiting,
            tx: watch::channel(prefetch).0,
            slack_since: None,
        }
    }

    /// The largest window.
    fn most(&self) -> u32 {
        self.prefetch + self.max_waiting
    }

    fn receiver(&self) -> watch::Receiver<u32> {
        self.tx.subscribe()
    }

    /// Sets the window for `waiting` messages waiting on outside calls.
    fn follow(&mut self, waiting: usize) {
        let waiting = u32::try_from(waiting)
            .unwrap_or(u32::MAX)
            .min(self.max_waiting);
        let wanted = self.prefetch + waiting;
        let now = *self.tx.borrow();
        if wanted > now {
            self.tx.send_replace(wanted);
            self.slack_since = None;
        } else if wanted + self.prefetch <= now {
            let since = *self.slack_since.get_or_insert_with(Instant::now);
            if since.elapsed() >= Self::SETTLE {
                self.tx.send_replace(wanted);
                self.slack_since = None;
            }
        } else {
            self.slack_since = None;
        }
    }
}

/// Deliveries as they arrived, each stamped with when.
type Deliveries = mpsc::UnboundedReceiver<(Instant, Delivery)>;

/// Runs `subscription` in its own task until the returned sender fires (or is dropped), each
/// delivery stamped with when it arrived.
fn take(
    mut subscription: Box<dyn trawl_broker::Subscription>,
) -> (Deliveries, oneshot::Sender<()>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let (stop, mut stopped) = oneshot::channel::<()>();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = &mut stopped => break,
                next = subscription.next() => match next {
                    Some(d) => {
                        if tx.send((Instant::now(), d)).is_err() {
                            break;
                        }
                    }
                    None => break,
                },
            }
        }
        subscription.cancel().await;
    });
    (rx, stop)
}

/// A delivery that waited too long for room goes to the back of its queue, for whichever
/// worker has room first; it spends no attempt.
async fn send_back(rt: Runtime, queue: Queue, delivery: Delivery) {
    let message = Message::new(delivery.message.body.clone());
    match rt.broker.publish(queue, message).await {
        Ok(()) => {
            info!(queue = %queue, "no room for a message within its wait limit; sent back");
            settle(delivery.ack().await, queue);
        }
        Err(e) => {
            warn!(queue = %queue, error = %e, "cannot send a waiting message back; requeueing");
            settle(delivery.requeue().await, queue);
        }
    }
    METRICS
        .messages
        .get_or_create(&labels(&[("stage", queue.label()), ("result", "later")]))
        .inc();
}

async fn handle_one<S: Stage>(
    stage: Arc<S>,
    rt: Runtime,
    queue: Queue,
    delivery: Delivery,
    held: Held,
    (waits, _runs): (Arc<Waits>, Runs),
) {
    let stage_label = queue.label();
    let in_flight = METRICS
        .in_flight
        .get_or_create(&labels(&[("stage", stage_label)]))
        .clone();
    in_flight.inc();
    let started = std::time::Instant::now();
    let result =
        crate::in_flight::holding(held, process(&*stage, &rt, queue, delivery, &waits)).await;
    in_flight.dec();
    METRICS
        .duration
        .get_or_create(&labels(&[("stage", stage_label)]))
        .observe(started.elapsed().as_secs_f64());
    METRICS
        .messages
        .get_or_create(&labels(&[("stage", stage_label), ("result", result)]))
        .inc();
}

/// Handles and settles one delivery; returns the result label.
async fn process<S: Stage>(
    stage: &S,
    rt: &Runtime,
    queue: Queue,
    delivery: Delivery,
    waits: &Arc<Waits>,
) -> &'static str {
    let body = delivery.message.body.clone();
    let env = match Envelope::<S::Input>::decode(&body) {
        Ok(env) => env,
        Err(e) => {
            let attempt = Envelope::<()>::peek(&body).map(|h| h.attempt).unwrap_or(0);
            warn!(queue = %queue, error = %e, "undecodable message; dead-lettering");
            return dead_letter(
                rt,
                queue,
                delivery,
                "undecodable",
                &e.to_string(),
                attempt + 1,
            )
            .await;
        }
    };
    let (job_id, batch_id, attempt) = (env.job_id, env.batch_id, env.attempt);
    observe_queue_wait(queue, env.created_at);

    match rt
        .store
        .batch_job_status(&batch_id.to_string(), &job_id.to_string())
        .await
    {
        Ok(Some(state)) if state != trawl_store::PENDING => {
            settle(delivery.ack().await, queue);
            return "skipped";
        }
        Ok(_) => {}
        // Without the store no stage can record its work: try again later.
        Err(e) => {
            return retry_or_dead(rt, queue, delivery, &body, attempt, StageError::from(e)).await
        }
    }

    let started = std::time::Instant::now();
    let handled = run_handler(stage, rt, queue, env, waits).await;
    if matches!(handled, Ok(Handled::Done)) {
        record_timing(rt, queue, &job_id.to_string(), started).await;
    }
    match handled {
        Ok(Handled::Done) => {
            settle(delivery.ack().await, queue);
            "ok"
        }
        Ok(Handled::Later(delay)) => {
            match rt
                .broker
                .publish_delayed(queue, Message::new(body), delay)
                .await
            {
                Ok(()) => settle(delivery.ack().await, queue),
                Err(e) => {
                    warn!(queue = %queue, %job_id, error = %e, "cannot defer; requeueing");
                    settle(delivery.requeue().await, queue);
                }
            }
            "later"
        }
        Err(e) => retry_or_dead(rt, queue, delivery, &body, attempt, e).await,
    }
}

/// How long the message waited since it was first published, retries and delays included.
fn observe_queue_wait(queue: Queue, created_at: chrono::DateTime<chrono::Utc>) {
    let age = (chrono::Utc::now() - created_at).num_milliseconds().max(0) as f64 / 1000.0;
    METRICS
        .queue_wait
        .get_or_create(&labels(&[("stage", queue.label())]))
        .observe(age);
}

/// Runs the stage's handler on `env` in its span, within `broker.message_timeout_secs`; a
/// handler cut off by the timeout is an error saying why.
async fn run_handler<S: Stage>(
    stage: &S,
    rt: &Runtime,
    queue: Queue,
    env: Envelope<S::Input>,
    waits: &Arc<Waits>,
) -> Result<Handled, StageError> {
    let (job_id, batch_id, attempt) = (env.job_id, env.batch_id, env.attempt);
    let span = tracing::info_span!("handle", stage = queue.label(), %job_id, %batch_id, attempt);
    let limit = Duration::from_secs(rt.config.broker.message_timeout_secs);
    let message = waits.message();
    // A stage's LLM calls answer within a share of the message's time, so the handler ends on
    // its non-LLM paths before its timeout.
    if let Some(llm) = &rt.config.llm {
        message.limit_llm(limit.mul_f64(llm.message_time_share));
    }
    let handler = message.scope(stage.handle(rt, env).instrument(span));
    match tokio::time::timeout(limit, handler).await {
        Ok(handled) => handled,
        // Cut off while it waited for a provider's rate limit (an LLM's or a search provider's:
        // a 429 storm, or a fleet limit far below the load): not the message's fault. It comes
        // back after the longest retry delay, spending no attempt, for as long as that lasts;
        // the job's deadline still ends the job with what it has.
        Err(_) if message.rate_limited() => Err(StageError {
            class: ErrorClass::Unavailable,
            message: format!(
                "rate limit: still waiting for a provider's rate limit after broker.message_timeout_secs ({}s)",
                limit.as_secs()
            ),
            origin: "rate_limit",
        }),
        // Dropping the handler's future cancels its work; the message is retried like any
        // other failure instead of holding its delivery until the broker's consumer timeout.
        Err(_) => Err(StageError::retryable(format!(
            "timeout: not handled within broker.message_timeout_secs ({}s)",
            limit.as_secs()
        ))
        .with_origin("timeout")),
    }
}

/// Per-job stage timings for job.json; losing one to a store hiccup costs only a figure.
async fn record_timing(rt: &Runtime, queue: Queue, job_id: &str, started: std::time::Instant) {
    let fields = [
        (
            Counter::Ms.key(queue.label()),
            started.elapsed().as_millis() as i64,
        ),
        (Counter::Messages.key(queue.label()), 1),
    ];
    if let Err(e) = rt.store.job_add(job_id, &fields, rt.job_ttl()).await {
        warn!(error = %e, "could not record stage timing");
    }
}

async fn retry_or_dead(
    rt: &Runtime,
    queue: Queue,
    delivery: Delivery,
    body: &[u8],
    attempt: u32,
    error: StageError,
) -> &'static str {
    let max_attempts = rt.config.broker.max_attempts;
    let attempts_made = attempt + 1;
    if error.class == ErrorClass::Permanent {
        warn!(queue = %queue, error = %error, "permanent failure; dead-lettering");
        return dead_letter(
            rt,
            queue,
            delivery,
            "permanent",
            &error.message,
            attempts_made,
        )
        .await;
    }
    let delays = &rt.config.broker.retry_delays_secs;
    let (retried, delay) = if error.class == ErrorClass::Unavailable {
        // An outage spends no attempt: the message goes back unchanged, at the longest delay,
        // for as long as the outage lasts.
        (body.to_vec(), delays[delays.len() - 1])
    } else if attempts_made >= max_attempts {
        warn!(queue = %queue, attempts_made, error = %error, "attempts exhausted; dead-lettering");
        return dead_letter(
            rt,
            queue,
            delivery,
            "exhausted",
            &error.message,
            attempts_made,
        )
        .await;
    } else {
        // `with_attempt` takes whatever decoded (fuzzed); should it ever refuse, the message
        // could not count its retries and would retry for ever: dead-letter it instead.
        let Some(retried) = with_attempt(body, attempts_made) else {
            warn!(queue = %queue, error = %error, "cannot raise the attempt; dead-lettering");
            return dead_letter(
                rt,
                queue,
                delivery,
                "undecodable",
                &format!("cannot raise its attempt after: {}", error.message),
                attempts_made,
            )
            .await;
        };
        (retried, delays[(attempt as usize).min(delays.len() - 1)])
    };
    count_retry(queue, &error);
    warn!(queue = %queue, attempts_made, delay_secs = delay, error = %error, "retrying later");
    match rt
        .broker
        .publish_delayed(queue, Message::new(retried), Duration::from_secs(delay))
        .await
    {
        Ok(()) => settle(delivery.ack().await, queue),
        Err(e) => {
            warn!(queue = %queue, error = %e, "cannot schedule retry; requeueing");
            settle(delivery.requeue().await, queue);
        }
    }
    "retry"
}

fn count_retry(queue: Queue, error: &StageError) {
    METRICS
        .retries
        .get_or_create(&labels(&[
            ("stage", queue.label()),
            ("reason", error.origin),
        ]))
        .inc();
}

async fn dead_letter(
    rt: &Runtime,
    queue: Queue,
    delivery: Delivery,
    kind: &'static str,
    reason: &str,
    attempts: u32,
) -> &'static str {
    let message = Message::new(delivery.message.body.clone())
        .with_header(HEADER_REASON, format!("{kind}: {reason}"))
        .with_header(HEADER_QUEUE, queue.suffix())
        .with_header(HEADER_ATTEMPTS, attempts.to_string());
    match rt.broker.publish(Queue::Dead, message).await {
        Ok(()) => {
            METRICS
                .dead_letters
                .get_or_create(&labels(&[("stage", queue.label()), ("reason", kind)]))
                .inc();
            settle(delivery.ack().await, queue);
            "dead"
        }
        Err(e) => {
            warn!(queue = %queue, error = %e, "cannot dead-letter; requeueing");
            settle(delivery.requeue().await, queue);
            "retry"
        }
    }
}

/// An ack or requeue that fails means the channel is gone: the broker redelivers the message
/// and the stages' idempotence absorbs it. Worth a log line, nothing more.
fn settle(result: Result<(), trawl_broker::BrokerError>, queue: Queue) {
    if let Err(e) = result {
        warn!(queue = %queue, error = %e, "could not settle delivery; it will be redelivered");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_window_grows_at_once_up_to_max_waiting_and_shrinks_only_after_settling() {
        let mut window = Window::new(8, 100);
        let rx = window.receiver();
        window.follow(30);
        assert_eq!(*rx.borrow(), 38, "grows at once");
        window.follow(500);
        assert_eq!(*rx.borrow(), 108, "at most prefetch + max_waiting");
        window.follow(0);
        assert_eq!(*rx.borrow(), 108, "a moment's slack keeps it");
        tokio::time::sleep(Window::SETTLE).await;
        window.follow(3);
        assert_eq!(
            *rx.borrow(),
            11,
            "slack for {:?} shrinks it",
            Window::SETTLE
        );
        window.follow(0);
        assert_eq!(*rx.borrow(), 11, "less than a step of slack keeps it");
    }
}
