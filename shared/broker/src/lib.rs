//! The message broker behind trawl's stages, as one trait with two implementations:
//!
//! - [`rabbit`]: RabbitMQ over lapin — durable quorum queues, persistent messages, publisher
//!   confirms, manual acks, delay tiers for retries, a dead-letter queue, and reconnection that
//!   re-declares the topology and re-applies prefetch.
//! - [`memory`]: the in-memory twin for `trawl run` and tests, with the same semantics
//!   (prefetch, requeue on drop, delivery limit, delays).
//!
//! Both pass the same contract suite (`tests/contract.rs`). Stage code only sees [`Broker`],
//! [`Subscription`] and [`Delivery`]; a delivery is settled by consuming it, so it cannot be
//! acknowledged twice, and one dropped unsettled goes back to its queue.
//!
//! `metrics` declares the broker's metrics, once.

use std::collections::BTreeMap;
use std::time::Duration;

use async_trait::async_trait;
pub use trawl_messages::Queue;

pub mod memory;
mod metrics;
pub mod rabbit;

pub use memory::MemoryBroker;
pub use metrics::init as init_metrics;
pub use rabbit::RabbitBroker;

/// Header naming why a message was dead-lettered.
pub const HEADER_REASON: &str = "x-trawl-reason";
/// Header naming the queue a dead-lettered message came from.
pub const HEADER_QUEUE: &str = "x-trawl-queue";
/// Header counting the attempts made before a message was dead-lettered.
pub const HEADER_ATTEMPTS: &str = "x-trawl-attempts";
/// Set by the broker when it dead-letters a message itself (`delivery_limit`, `expired` …).
pub const HEADER_DEATH_REASON: &str = "x-first-death-reason";

#[derive(Debug, thiserror::Error)]
pub enum BrokerError {
    #[error("cannot reach the broker at {url}: {reason}")]
    Unreachable { url: String, reason: String },
    #[error("the broker did not confirm a publish to {queue}: {reason}")]
    NotConfirmed { queue: String, reason: String },
    #[error("broker operation failed: {0}")]
    Protocol(String),
}

/// A message as the broker carries it: opaque bytes plus string headers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Message {
    pub body: Vec<u8>,
    pub headers: BTreeMap<String, String>,
}

impl Message {
    pub fn new(body: Vec<u8>) -> Self {
        Message {
            body,
            headers: BTreeMap::new(),
        }
    }

    pub fn with_header(mut self, key: &str, value: impl Into<String>) -> Self {
        self.headers.insert(key.to_owned(), value.into());
        self
    }
}

/// A queue as the broker sees it now.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueStats {
    pub ready: u64,
    pub consumers: u64,
}

#[async_trait]
pub trait Broker: Send + Sync + 'static {
    /// Publishes persistently and returns once the broker has confirmed it.
    async fn publish(&self, queue: Queue, message: Message) -> Result<(), BrokerError>;

    /// Publishes so that the message arrives on `queue` after the longest delay tier within
    /// `delay` (the shortest tier when `delay` is shorter than all). It may come back before
    /// `delay`, never much after: a message that must wait longer checks again on arrival and
    /// defers the rest, so a wait takes a few hops through the tiers rather than overshooting to
    /// the next tier up (a 5.2 s wait rounded up to a 30 s tier).
    async fn publish_delayed(
        &self,
        queue: Queue,
        message: Message,
        delay: Duration,
    ) -> Result<(), BrokerError>;

    /// Starts consuming `queue` with at most `prefetch` unsettled deliveries.
    async fn consume(
        &self,
        queue: Queue,
        prefetch: u16,
    ) -> Result<Box<dyn Subscription>, BrokerError>;

    /// Messages ready for delivery in `queue` (unacknowledged ones not counted) and the
    /// consumers taking from it.
    async fn stats(&self, queue: Queue) -> Result<QueueStats, BrokerError>;

    /// Messages ready for delivery in `queue` (unacknowledged ones not counted).
    async fn depth(&self, queue: Queue) -> Result<u64, BrokerError> {
        Ok(self.stats(queue).await?.ready)
    }

    /// Deletes every queue and exchange of this broker's namespace.
    async fn delete_all(&self) -> Result<(), BrokerError>;

    /// Times the connection was re-established after a failure (for metrics and tests).
    fn reconnects(&self) -> u64;
}

#[async_trait]
pub trait Subscription: Send {
    /// The next delivery. Waits across reconnections; `None` only after [`Subscription::cancel`].
    async fn next(&mut self) -> Option<Delivery>;

    /// Stops new deliveries. Deliveries already handed out can still be settled.
    async fn cancel(&mut self);

    /// From now on keeps at most `window`'s value unsettled, following it as it changes, in
    /// whole steps of the prefetch the subscription was opened with (at least one step). A
    /// smaller window takes effect as deliveries are settled; none is taken back.
    fn follow(&mut self, window: tokio::sync::watch::Receiver<u32>);
}

/// Unsettled deliveries a subscription opened with `step` keeps under `window`: whole steps,
/// at least one.
fn window_steps(window: u32, step: u32) -> u32 {
    window.div_ceil(step).max(1) * step
}

/// Resolves when the followed window changes; never without one (or once its sender is gone).
async fn window_changed(window: &mut Option<tokio::sync::watch::Receiver<u32>>) {
    let changed = match window {
        Some(w) => w.changed().await.is_ok(),
        None => false,
    };
    if !changed {
        std::future::pending::<()>().await;
    }
}

/// Settles one delivery; implemented by each broker.
#[async_trait]
pub(crate) trait Settle: Send {
    async fn ack(self: Box<Self>) -> Result<(), BrokerError>;
    async fn requeue(self: Box<Self>) -> Result<(), BrokerError>;
}

pub struct Delivery {
    pub message: Message,
    /// True when the broker delivered this message before (a consumer died or requeued it).
    pub redelivered: bool,
    settle: Box<dyn Settle>,
}

impl Delivery {
    /// Acknowledges: the message is done and leaves the queue.
    pub async fn ack(self) -> Result<(), BrokerError> {
        self.settle.ack().await
    }

    /// Hands the message back to its queue for another consumer (counts as a delivery toward
    /// the queue's delivery limit).
    pub async fn requeue(self) -> Result<(), BrokerError> {
        self.settle.requeue().await
    }
}

impl std::fmt::Debug for Delivery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Delivery")
            .field("bytes", &self.message.body.len())
            .field("headers", &self.message.headers)
            .field("redelivered", &self.redelivered)
            .finish()
    }
}

/// Delay tiers and limits shared by both brokers.
#[derive(Clone, Debug)]
pub struct BrokerSettings {
    pub namespace: String,
    /// Delay tiers, ascending: retry back-offs and the short deferrals of a busy host.
    pub delay_tiers: Vec<Duration>,
    /// Redeliveries allowed before the broker dead-letters a message itself.
    pub delivery_limit: u32,
    /// Bounds of the results queue: its length (the oldest dropped past it) and its
    /// messages' time to live.
    pub results_max_length: u32,
    pub results_ttl: Duration,
}

impl BrokerSettings {
    /// Tiers are kept to whole milliseconds (queue TTLs are in milliseconds).
    pub fn new(namespace: &str, delays: &[Duration], delivery_limit: u32) -> Self {
        let mut tiers: Vec<Duration> = delays
            .iter()
            .map(|d| Duration::from_millis(d.as_millis() as u64))
            .filter(|d| !d.is_zero())
            .collect();
        tiers.sort_unstable();
        tiers.dedup();
        if tiers.is_empty() {
            tiers.push(Duration::from_secs(1));
        }
        BrokerSettings {
            namespace: namespace.to_owned(),
            delay_tiers: tiers,
            delivery_limit,
            results_max_length: 10_000,
            results_ttl: Duration::from_secs(24 * 3600),
        }
    }

    pub fn with_results_bounds(mut self, max_length: u32, ttl: Duration) -> Self {
        self.results_max_length = max_length;
        self.results_ttl = ttl;
        self
    }

    /// The longest tier at most `delay` long, or the shortest tier.
    pub(crate) fn tier_for(&self, delay: Duration) -> Duration {
        self.delay_tiers
            .iter()
            .copied()
            .rev()
            .find(|&t| t <= delay)
            .unwrap_or(self.delay_tiers[0])
    }

    pub(crate) fn queue_name(&self, queue: Queue) -> String {
        queue.name(&self.namespace)
    }

    /// `<ns>.delay.5s`, or `<ns>.delay.250ms` for a tier that is not whole seconds.
    pub(crate) fn tier_name(&self, tier: Duration) -> String {
        let ms = tier.as_millis();
        if ms.is_multiple_of(1000) {
            format!("{}.delay.{}s", self.namespace, ms / 1000)
        } else {
            format!("{}.delay.{ms}ms", self.namespace)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delay_takes_the_longest_tier_within_it() {
        let secs = Duration::from_secs;
        let ms = Duration::from_millis;
        let s = BrokerSettings::new("t", &[secs(30), secs(1), ms(250), secs(5), secs(5)], 3);
        assert_eq!(s.delay_tiers, vec![ms(250), secs(1), secs(5), secs(30)]);
        assert_eq!(
            s.tier_for(ms(10)),
            ms(250),
            "shorter than all: the shortest"
        );
        assert_eq!(s.tier_for(ms(251)), ms(250));
        assert_eq!(s.tier_for(ms(1500)), secs(1));
        assert_eq!(s.tier_for(secs(5)), secs(5));
        // A host's turn 5.2 s away comes back after 5 s and checks again, not after 30 s.
        assert_eq!(s.tier_for(ms(5200)), secs(5));
        assert_eq!(s.tier_for(secs(3600)), secs(30));
        assert_eq!(s.tier_name(secs(5)), "t.delay.5s");
        assert_eq!(s.tier_name(ms(250)), "t.delay.250ms");
    }
}
