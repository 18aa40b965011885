//! RabbitMQ over lapin.
//!
//! Topology, declared on every (re)connection so a worker can start against an empty broker:
//!
//! - work queues `<ns>.{search,fetch,fetch.browser,clean,synthesize}`: durable quorum queues
//!   with an explicit `x-delivery-limit` (RabbitMQ 3.x has no default; a message that keeps
//!   killing its consumer would loop forever) dead-lettering to `<ns>.dead`;
//! - `<ns>.results` and `<ns>.dead`: durable quorum queues;
//! - one delay tier per configured delay: fanout exchange `<ns>.delay.<n>s` (or `<n>ms`) bound to a quorum
//!   queue of that name with `x-message-ttl`. Expired messages are dead-lettered to the default
//!   exchange under their original routing key, i.e. back to the work queue they were published
//!   for, at-least-once (`x-dead-letter-strategy`, which needs `x-overflow: reject-publish`).
//!
//! Reconnection is ours, not lapin's: its automatic recovery does not re-apply prefetch. Every
//! operation goes through [`Inner::live`], which reconnects and re-declares when the connection
//! is gone; a subscription whose consumer stream ends opens a new channel, re-applies
//! `basic.qos` and consumes again. Deliveries taken on a dead channel cannot be acknowledged;
//! RabbitMQ redelivers them and the stages' idempotence absorbs the repeat.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures_util::StreamExt;
use lapin::options::{
    BasicAckOptions, BasicCancelOptions, BasicConsumeOptions, BasicNackOptions,
    BasicPublishOptions, BasicQosOptions, ConfirmSelectOptions, ExchangeDeclareOptions,
    ExchangeDeleteOptions, QueueBindOptions, QueueDeclareOptions, QueueDeleteOptions,
};
use lapin::types::{AMQPValue, FieldTable, LongString, ShortString};
use lapin::{
    BasicProperties, Channel, Confirmation, Connection, ConnectionProperties, ExchangeKind,
};
use tokio::sync::Mutex;
use tracing::{info, warn};

use crate::{Broker, BrokerError, BrokerSettings, Delivery, Message, Queue, QueueStats, Settle};

/// How long one operation keeps retrying through reconnections before it gives up.
const OPERATION_TIMEOUT: Duration = Duration::from_secs(30);
/// Heartbeat asked for when the URL does not set one: a dead peer is noticed in ~2 intervals.
const DEFAULT_HEARTBEAT_SECS: u32 = 10;

#[derive(Clone)]
pub struct RabbitBroker {
    inner: Arc<Inner>,
}

struct Inner {
    url: String,
    /// Shown in RabbitMQ's management UI and `rabbitmqctl list_connections user_provided_name`.
    connection_name: String,
    redacted_url: String,
    settings: BrokerSettings,
    live: Mutex<Option<Live>>,
    reconnects: AtomicU64,
    connections: AtomicU64,
}

struct Live {
    connection: Arc<Connection>,
    publisher: Channel,
}

impl RabbitBroker {
    /// Connects and declares the topology, retrying for up to `wait` with a log line per try.
    pub async fn connect(
        url: &str,
        settings: BrokerSettings,
        wait: Duration,
    ) -> Result<Self, BrokerError> {
        let url = with_default_heartbeat(url);
        let redacted_url = trawl_config::redact_url(&url);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let inner = Arc::new(Inner {
            connection_name: format!("trawl-{}-{nanos:08x}", std::process::id()),
            url,
            redacted_url,
            settings,
            live: Mutex::new(None),
            reconnects: AtomicU64::new(0),
            connections: AtomicU64::new(0),
        });
        let started = tokio::time::Instant::now();
        let mut backoff = Duration::from_millis(200);
        loop {
            match inner.live().await {
                Ok(_) => return Ok(RabbitBroker { inner }),
                Err(e) if started.elapsed() + backoff < wait => {
                    warn!(url = %inner.redacted_url, error = %e, "waiting for RabbitMQ");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(5));
                }
                Err(e) => return Err(e),
            }
        }
    }
}

impl RabbitBroker {
    /// This broker's connection name as RabbitMQ shows it.
    pub fn connection_name(&self) -> &str {
        &self.inner.connection_name
    }
}

impl Inner {
    /// The current connection and publishing channel, (re)connecting when they are gone.
    async fn live(&self) -> Result<(Arc<Connection>, Channel), BrokerError> {
        let mut guard = self.live.lock().await;
        if let Some(live) = guard.as_ref() {
            if live.connection.status().connected() && live.publisher.status().connected() {
                return Ok((live.connection.clone(), live.publisher.clone()));
            }
            warn!(url = %self.redacted_url, "RabbitMQ connection lost; reconnecting");
            *guard = None;
        }
        let unreachable = |e: lapin::Error| BrokerError::Unreachable {
            url: self.redacted_url.clone(),
            reason: e.to_string(),
        };
        let props = ConnectionProperties::default()
            .with_connection_name(self.connection_name.clone().into());
        let connection = tokio::time::timeout(
            Duration::from_secs(10),
            Connection::connect(&self.url, props),
        )
        .await
        .map_err(|_| BrokerError::Unreachable {
            url: self.redacted_url.clone(),
            reason: "connection timed out".into(),
        })?
        .map_err(unreachable)?;
        let connection = Arc::new(connection);
        let publisher = connection.create_channel().await.map_err(unreachable)?;
        publisher
            .confirm_select(ConfirmSelectOptions::default())
            .await
            .map_err(protocol)?;
        declare_topology(&connection, &self.settings).await?;
        if self.connections.fetch_add(1, Ordering::SeqCst) > 0 {
            self.reconnects.fetch_add(1, Ordering::SeqCst);
            crate::metrics::reconnected();
            info!(url = %self.redacted_url, "reconnected to RabbitMQ");
        }
        *guard = Some(Live {
            connection: connection.clone(),
            publisher: publisher.clone(),
        });
        Ok((connection, publisher))
    }

    async fn publish_once(
        &self,
        exchange: &str,
        routing_key: &str,
        message: &Message,
    ) -> Result<(), BrokerError> {
        let (_, channel) = self.live().await?;
        let properties = BasicProperties::default()
            .with_delivery_mode(2)
            .with_content_type("application/json".into())
            .with_headers(to_field_table(message));
        let _unconfirmed = crate::metrics::Unconfirmed::start();
        let confirm = channel
            .basic_publish(
                exchange.into(),
                routing_key.into(),
                // Mandatory: an unroutable message comes back instead of vanishing.
                BasicPublishOptions {
                    mandatory: true,
                    ..Default::default()
                },
                &message.body,
                properties,
            )
            .await
            .map_err(protocol)?
            .await
            .map_err(protocol)?;
        match confirm {
            Confirmation::Ack(None) => Ok(()),
            Confirmation::Ack(Some(returned)) => Err(BrokerError::NotConfirmed {
                queue: routing_key.to_owned(),
                reason: format!("unroutable: {}", returned.reply_text),
            }),
            Confirmation::Nack(_) => Err(BrokerError::NotConfirmed {
                queue: routing_key.to_owned(),
                reason: "nacked by the broker".into(),
            }),
            Confirmation::NotRequested => Err(BrokerError::NotConfirmed {
                queue: routing_key.to_owned(),
                reason: "confirms are off on the publishing channel".into(),
            }),
        }
    }

    /// Publishes, retrying through reconnections until [`OPERATION_TIMEOUT`].
    async fn publish(
        &self,
        exchange: &str,
        routing_key: &str,
        message: &Message,
    ) -> Result<(), BrokerError> {
        let started = tokio::time::Instant::now();
        let mut backoff = Duration::from_millis(100);
        loop {
            let published = self.publish_once(exchange, routing_key, message).await;
            crate::metrics::published(published.is_ok());
            match published {
                Ok(()) => return Ok(()),
                Err(e) if started.elapsed() < OPERATION_TIMEOUT => {
                    warn!(queue = routing_key, error = %e, "publish failed; retrying");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(3));
                }
                Err(e) => return Err(e),
            }
        }
    }
}

fn protocol(e: lapin::Error) -> BrokerError {
    BrokerError::Protocol(e.to_string())
}

fn long(s: &str) -> AMQPValue {
    AMQPValue::LongString(LongString::from(s.as_bytes().to_vec()))
}

fn args(pairs: &[(&str, AMQPValue)]) -> FieldTable {
    let mut table = FieldTable::default();
    for (k, v) in pairs {
        table.insert(ShortString::from(*k), v.clone());
    }
    table
}

/// Declares a durable queue with `arguments`. A queue that already exists with other
/// arguments (an older trawl's delivery limit, a length limit changed since) is kept as it is:
/// RabbitMQ refuses to change a queue's arguments, and deleting it would lose its messages. The
/// refusal closes the channel, so the check goes on a new one, which is returned.
async fn declare_queue(
    connection: &Connection,
    channel: Channel,
    name: &str,
    arguments: FieldTable,
) -> Result<Channel, BrokerError> {
    let durable = QueueDeclareOptions {
        durable: true,
        ..Default::default()
    };
    let failed = |e: lapin::Error| BrokerError::Protocol(format!("declaring {name}: {e}"));
    match (channel.queue_declare(name.into(), durable, arguments)).await {
        Ok(_) => Ok(channel),
        Err(e) if other_arguments(&e) => {
            let channel = connection.create_channel().await.map_err(protocol)?;
            let exists = QueueDeclareOptions {
                passive: true,
                ..durable
            };
            (channel.queue_declare(name.into(), exists, FieldTable::default()))
                .await
                .map_err(failed)?;
            warn!(
                queue = name,
                refusal = %e,
                "the queue exists with other arguments than this configuration's; it keeps \
                 them. To take the configured ones, delete the queue once it is empty and \
                 restart a worker"
            );
            Ok(channel)
        }
        Err(e) => Err(failed(e)),
    }
}

/// RabbitMQ's refusal to redeclare a queue with arguments other than its own.
fn other_arguments(e: &lapin::Error) -> bool {
    use lapin::protocol::{AMQPErrorKind, AMQPSoftError};
    matches!(e.kind(), lapin::ErrorKind::ProtocolError(amqp)
        if matches!(amqp.kind(), AMQPErrorKind::Soft(AMQPSoftError::PRECONDITIONFAILED)))
}

/// A stage's queue is a quorum queue that dead-letters to `dead` after its delivery limit;
/// the dead-letter queue keeps what it gets.
fn queue_arguments(settings: &BrokerSettings, queue: Queue, dead: &str) -> FieldTable {
    let quorum = ("x-queue-type", long("quorum"));
    match queue {
        Queue::Dead => args(std::slice::from_ref(&quorum)),
        // Notifications, not the record of results: bounded, the oldest dropped first, so
        // a queue nobody reads cannot fill the broker's memory.
        Queue::Results => args(&[
            quorum.clone(),
            (
                "x-max-length",
                AMQPValue::LongLongInt(i64::from(settings.results_max_length)),
            ),
            ("x-overflow", long("drop-head")),
            (
                "x-message-ttl",
                AMQPValue::LongLongInt(settings.results_ttl.as_millis() as i64),
            ),
        ]),
        _ => args(&[
            quorum.clone(),
            (
                "x-delivery-limit",
                AMQPValue::LongInt(settings.delivery_limit as i32),
            ),
            ("x-dead-letter-exchange", long("")),
            ("x-dead-letter-routing-key", long(dead)),
        ]),
    }
}

/// Declares every queue, delay tier and binding, on a channel of its own (a queue declared
/// with other arguments closes the channel it was declared on: [`declare_queue`]).
async fn declare_topology(
    connection: &Connection,
    settings: &BrokerSettings,
) -> Result<(), BrokerError> {
    let mut channel = connection.create_channel().await.map_err(protocol)?;
    let quorum = ("x-queue-type", long("quorum"));
    let dead = settings.queue_name(Queue::Dead);
    for &queue in Queue::ALL {
        let name = settings.queue_name(queue);
        let arguments = queue_arguments(settings, queue, &dead);
        channel = declare_queue(connection, channel, &name, arguments).await?;
    }
    for &tier in &settings.delay_tiers {
        let name = settings.tier_name(tier);
        channel = declare_queue(
            connection,
            channel,
            &name,
            args(&[
                quorum.clone(),
                (
                    "x-message-ttl",
                    AMQPValue::LongLongInt(tier.as_millis() as i64),
                ),
                ("x-dead-letter-exchange", long("")),
                ("x-dead-letter-strategy", long("at-least-once")),
                ("x-overflow", long("reject-publish")),
            ]),
        )
        .await?;
        channel
            .exchange_declare(
                name.as_str().into(),
                ExchangeKind::Fanout,
                ExchangeDeclareOptions {
                    durable: true,
                    ..Default::default()
                },
                FieldTable::default(),
            )
            .await
            .map_err(protocol)?;
        channel
            .queue_bind(
                name.as_str().into(),
                name.as_str().into(),
                "".into(),
                QueueBindOptions::default(),
                FieldTable::default(),
            )
            .await
            .map_err(protocol)?;
    }
    let _ = channel.close(200, "declared".into()).await;
    Ok(())
}

fn to_field_table(message: &Message) -> FieldTable {
    let mut table = FieldTable::default();
    for (k, v) in &message.headers {
        table.insert(k.as_str().into(), long(v));
    }
    table
}

fn from_properties(properties: &BasicProperties) -> std::collections::BTreeMap<String, String> {
    let mut headers = std::collections::BTreeMap::new();
    if let Some(table) = properties.headers() {
        for (k, v) in table.inner() {
            let value = match v {
                AMQPValue::LongString(s) => String::from_utf8_lossy(s.as_bytes()).into_owned(),
                AMQPValue::ShortString(s) => s.as_str().to_owned(),
                AMQPValue::LongInt(n) => n.to_string(),
                AMQPValue::LongUInt(n) => n.to_string(),
                AMQPValue::LongLongInt(n) => n.to_string(),
                AMQPValue::ShortInt(n) => n.to_string(),
                AMQPValue::Boolean(b) => b.to_string(),
                // x-death and other structured headers: not needed by stage code.
                _ => continue,
            };
            headers.insert(k.as_str().to_owned(), value);
        }
    }
    headers
}

fn with_default_heartbeat(url: &str) -> String {
    if url.contains("heartbeat=") {
        url.to_owned()
    } else if url.contains('?') {
        format!("{url}&heartbeat={DEFAULT_HEARTBEAT_SECS}")
    } else {
        format!("{url}?heartbeat={DEFAULT_HEARTBEAT_SECS}")
    }
}

#[async_trait]
impl Broker for RabbitBroker {
    async fn publish(&self, queue: Queue, message: Message) -> Result<(), BrokerError> {
        let name = self.inner.settings.queue_name(queue);
        self.inner.publish("", &name, &message).await
    }

    async fn publish_delayed(
        &self,
        queue: Queue,
        message: Message,
        delay: Duration,
    ) -> Result<(), BrokerError> {
        let tier = self
            .inner
            .settings
            .tier_name(self.inner.settings.tier_for(delay));
        let name = self.inner.settings.queue_name(queue);
        self.inner.publish(&tier, &name, &message).await
    }

    async fn consume(
        &self,
        queue: Queue,
        prefetch: u16,
    ) -> Result<Box<dyn crate::Subscription>, BrokerError> {
        let mut subscription = RabbitSubscription {
            inner: Arc::clone(&self.inner),
            queue: self.inner.settings.queue_name(queue),
            prefetch,
            current: None,
            window: None,
            cancelled: false,
        };
        subscription.open().await?;
        Ok(Box::new(subscription))
    }

    async fn stats(&self, queue: Queue) -> Result<QueueStats, BrokerError> {
        let (connection, _) = self.inner.live().await?;
        let channel = connection.create_channel().await.map_err(protocol)?;
        let name = self.inner.settings.queue_name(queue);
        let declared = channel
            .queue_declare(
                name.as_str().into(),
                QueueDeclareOptions {
                    passive: true,
                    durable: true,
                    ..Default::default()
                },
                FieldTable::default(),
            )
            .await
            .map_err(protocol)?;
        let _ = channel.close(200, "done".into()).await;
        Ok(QueueStats {
            ready: u64::from(declared.message_count()),
            consumers: u64::from(declared.consumer_count()),
        })
    }

    async fn delete_all(&self) -> Result<(), BrokerError> {
        let (connection, _) = self.inner.live().await?;
        let channel = connection.create_channel().await.map_err(protocol)?;
        let settings = &self.inner.settings;
        let mut names: Vec<String> = Queue::ALL.iter().map(|&q| settings.queue_name(q)).collect();
        for &tier in &settings.delay_tiers {
            let tier = settings.tier_name(tier);
            channel
                .exchange_delete(tier.as_str().into(), ExchangeDeleteOptions::default())
                .await
                .map_err(protocol)?;
            names.push(tier);
        }
        for name in names {
            channel
                .queue_delete(name.as_str().into(), QueueDeleteOptions::default())
                .await
                .map_err(protocol)?;
        }
        let _ = channel.close(200, "done".into()).await;
        Ok(())
    }

    fn reconnects(&self) -> u64 {
        self.inner.reconnects.load(Ordering::SeqCst)
    }
}

/// One channel with `basic.qos(prefetch)` and as many consumers on it as the window followed
/// asks for, each with its own `prefetch` of credit: a window changes by adding consumers or
/// cancelling them, never by re-applying qos (which only reaches consumers started after it).
/// A cancelled consumer's stream stays in `consumers` until RabbitMQ's cancel-ok ends it, so
/// what it was sent before is still read; its unsettled deliveries stay valid on the channel.
struct RabbitSubscription {
    inner: Arc<Inner>,
    queue: String,
    prefetch: u16,
    current: Option<Current>,
    window: Option<tokio::sync::watch::Receiver<u32>>,
    cancelled: bool,
}

struct Current {
    channel: Channel,
    consumers: futures_util::stream::SelectAll<lapin::Consumer>,
    /// Tags of the consumers not cancelled.
    live: Vec<ShortString>,
}

impl RabbitSubscription {
    /// Consumers the window asks for.
    fn wanted(&self) -> usize {
        let step = u32::from(self.prefetch.max(1));
        let window = self.window.as_ref().map_or(step, |w| *w.borrow());
        (crate::window_steps(window, step) / step) as usize
    }

    /// A fresh channel with prefetch applied and the consumers the window asks for on it.
    async fn open(&mut self) -> Result<(), BrokerError> {
        let (connection, _) = self.inner.live().await?;
        let channel = connection.create_channel().await.map_err(protocol)?;
        channel
            .basic_qos(self.prefetch, BasicQosOptions::default())
            .await
            .map_err(protocol)?;
        self.current = Some(Current {
            channel,
            consumers: futures_util::stream::SelectAll::new(),
            live: Vec::new(),
        });
        self.resize().await
    }

    /// Adds or cancels consumers until as many are live as the window asks for.
    async fn resize(&mut self) -> Result<(), BrokerError> {
        if let Some(w) = &mut self.window {
            w.mark_unchanged();
        }
        let wanted = self.wanted();
        let current = self.current.as_mut().expect("opened");
        while current.live.len() < wanted {
            let consumer = current
                .channel
                .basic_consume(
                    self.queue.as_str().into(),
                    "".into(),
                    BasicConsumeOptions::default(),
                    FieldTable::default(),
                )
                .await
                .map_err(protocol)?;
            current.live.push(consumer.tag());
            current.consumers.push(consumer);
        }
        while current.live.len() > wanted {
            let tag = current.live.pop().expect("more than wanted");
            current
                .channel
                .basic_cancel(tag.as_str().into(), BasicCancelOptions::default())
                .await
                .map_err(protocol)?;
        }
        Ok(())
    }
}

#[async_trait]
impl crate::Subscription for RabbitSubscription {
    async fn next(&mut self) -> Option<Delivery> {
        let mut backoff = Duration::from_millis(200);
        loop {
            if self.cancelled {
                return None;
            }
            let opened = match &self.current {
                None => self.open().await,
                Some(c) if c.live.len() != self.wanted() => self.resize().await,
                Some(_) => Ok(()),
            };
            if let Err(e) = opened {
                warn!(queue = %self.queue, error = %e, "cannot consume; retrying");
                self.current = None;
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(5));
                continue;
            }
            backoff = Duration::from_millis(200);
            let current = self.current.as_mut().expect("opened above");
            let next = tokio::select! {
                next = current.consumers.next() => next,
                () = crate::window_changed(&mut self.window) => continue,
            };
            match next {
                Some(Ok(delivery)) => {
                    let headers = from_properties(&delivery.properties);
                    return Some(Delivery {
                        message: Message {
                            body: delivery.data,
                            headers,
                        },
                        redelivered: delivery.redelivered,
                        settle: Box::new(RabbitSettle {
                            acker: Some(delivery.acker),
                        }),
                    });
                }
                Some(Err(e)) => {
                    warn!(queue = %self.queue, error = %e, "consumer failed; resubscribing");
                    self.current = None;
                }
                None => {
                    if !self.cancelled {
                        warn!(queue = %self.queue, "consumer stream ended; resubscribing");
                    }
                    self.current = None;
                }
            }
        }
    }

    async fn cancel(&mut self) {
        self.cancelled = true;
        if let Some(current) = &self.current {
            for tag in &current.live {
                let _ = current
                    .channel
                    .basic_cancel(tag.as_str().into(), BasicCancelOptions::default())
                    .await;
            }
        }
    }

    fn follow(&mut self, window: tokio::sync::watch::Receiver<u32>) {
        self.window = Some(window);
    }
}

struct RabbitSettle {
    /// Taken when settled; one still here on drop is requeued, so a panicking handler cannot
    /// pin a prefetch slot for the life of the channel.
    acker: Option<lapin::Acker>,
}

#[async_trait]
impl Settle for RabbitSettle {
    async fn ack(mut self: Box<Self>) -> Result<(), BrokerError> {
        let acker = self.acker.take().expect("settled once");
        acker
            .ack(BasicAckOptions::default())
            .await
            .map(|_| ())
            .map_err(protocol)
    }

    async fn requeue(mut self: Box<Self>) -> Result<(), BrokerError> {
        let acker = self.acker.take().expect("settled once");
        acker
            .nack(BasicNackOptions {
                requeue: true,
                ..Default::default()
            })
            .await
            .map(|_| ())
            .map_err(protocol)
    }
}

impl Drop for RabbitSettle {
    fn drop(&mut self) {
        if let (Some(acker), Ok(runtime)) =
            (self.acker.take(), tokio::runtime::Handle::try_current())
        {
            runtime.spawn(async move {
                let _ = acker
                    .nack(BasicNackOptions {
                        requeue: true,
                        ..Default::default()
                    })
                    .await;
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heartbeat_and_redaction() {
        assert_eq!(
            with_default_heartbeat("amqp://h/%2f"),
            "amqp://h/%2f?heartbeat=10"
        );
        assert_eq!(
            with_default_heartbeat("amqp://h/?heartbeat=5"),
            "amqp://h/?heartbeat=5"
        );
        assert_eq!(
            trawl_config::redact_url("amqp://guest:secret@h:5672/%2f"),
            "amqp://guest:***@h:5672/%2f"
        );
    }
}
