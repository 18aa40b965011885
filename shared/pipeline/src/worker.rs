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

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tokio::task::JoinSet;
use tracing::{info, warn, Instrument};
use trawl_broker::{Delivery, Message, Queue, HEADER_ATTEMPTS, HEADER_QUEUE, HEADER_REASON};
use trawl_messages::envelope::{with_attempt, Body};
use trawl_messages::Envelope;
use trawl_telemetry::Readiness;

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
}

/// Consumes `queue` until `shutdown` resolves, then drains.
pub async fn run_worker<S: Stage>(
    stage: Arc<S>,
    rt: Runtime,
    queue: Queue,
    shutdown: impl Future<Output = ()>,
    readiness: Readiness,
) -> Result<(), StageError> {
    let prefetch = rt.config.broker.prefetch;
    let mut subscription = rt.broker.consume(queue, prefetch).await?;
    readiness.set(true);
    info!(queue = %queue, prefetch, "worker consuming");
    let mut tasks = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        while tasks.try_join_next().is_some() {}
        tokio::select! {
            _ = &mut shutdown => break,
            delivery = subscription.next() => match delivery {
                Some(d) => {
                    tasks.spawn(handle_one(Arc::clone(&stage), rt.clone(), queue, d));
                }
                None => break,
            },
        }
    }
    readiness.set(false);
    subscription.cancel().await;
    let grace = Duration::from_secs(rt.config.broker.shutdown_grace_secs);
    info!(queue = %queue, in_flight = tasks.len(), "draining");
    let drained =
        tokio::time::timeout(grace, async { while tasks.join_next().await.is_some() {} }).await;
    if drained.is_err() {
        warn!(queue = %queue, abandoned = tasks.len(), "grace period over; requeueing the rest");
        tasks.shutdown().await;
    }
    info!(queue = %queue, "worker stopped");
    Ok(())
}

async fn handle_one<S: Stage>(stage: Arc<S>, rt: Runtime, queue: Queue, delivery: Delivery) {
    let stage_label = queue.label();
    let in_flight = METRICS
        .in_flight
        .get_or_create(&labels(&[("stage", stage_label)]))
        .clone();
    in_flight.inc();
    let started = std::time::Instant::now();
    let result = process(&*stage, &rt, queue, delivery).await;
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
    let age = (chrono::Utc::now() - env.created_at)
        .num_milliseconds()
        .max(0) as f64
        / 1000.0;
    METRICS
        .queue_wait
        .get_or_create(&labels(&[("stage", queue.label())]))
        .observe(age);

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

    let span = tracing::info_span!("handle", stage = queue.label(), %job_id, %batch_id, attempt);
    let started = std::time::Instant::now();
    let limit = Duration::from_secs(rt.config.broker.message_timeout_secs);
    let handled = match tokio::time::timeout(limit, stage.handle(rt, env).instrument(span)).await {
        Ok(handled) => handled,
        // Dropping the handler's future cancels its work; the message is retried like any
        // other failure instead of holding its delivery until the broker's consumer timeout.
        Err(_) => Err(StageError::retryable(format!(
            "timeout: not handled within broker.message_timeout_secs ({}s)",
            limit.as_secs()
        ))
        .with_origin("timeout")),
    };
    if matches!(handled, Ok(Handled::Done)) {
        // Per-job stage timings for job.json; losing one to a store hiccup costs only a figure.
        let fields = [
            (
                Counter::Ms.key(queue.label()),
                started.elapsed().as_millis() as i64,
            ),
            (Counter::Messages.key(queue.label()), 1),
        ];
        if let Err(e) = rt
            .store
            .job_add(&job_id.to_string(), &fields, rt.job_ttl())
            .await
        {
            warn!(error = %e, "could not record stage timing");
        }
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
