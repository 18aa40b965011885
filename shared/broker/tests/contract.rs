//! One contract suite, run against the in-memory twin and against real RabbitMQ
//! (`TRAWL_TEST_AMQP_URL`, default `amqp://guest:guest@127.0.0.1:5672/%2f`). Each RabbitMQ case
//! uses its own namespace and deletes its queues at the end.

use std::sync::Arc;
use std::time::Duration;

use trawl_broker::{
    Broker, BrokerSettings, MemoryBroker, Message, Queue, RabbitBroker, HEADER_DEATH_REASON,
};

const WAIT: Duration = Duration::from_secs(20);

/// A namespace no other test (or test process) uses.
fn settings(limit: u32) -> BrokerSettings {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    BrokerSettings::new(
        &format!("test-{}-{nanos:x}-{n}", std::process::id()),
        &[
            Duration::from_millis(200),
            Duration::from_secs(1),
            Duration::from_secs(2),
        ],
        limit,
    )
}

async fn rabbit(limit: u32) -> Arc<dyn Broker> {
    let url = std::env::var("TRAWL_TEST_AMQP_URL")
        .unwrap_or_else(|_| "amqp://guest:guest@127.0.0.1:5672/%2f".into());
    Arc::new(
        RabbitBroker::connect(&url, settings(limit), Duration::from_secs(10))
            .await
            .expect("RabbitMQ must run for the contract tests (scripts/services-up)"),
    )
}

fn memory(limit: u32) -> Arc<dyn Broker> {
    Arc::new(MemoryBroker::new(settings(limit)))
}

async fn within<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(WAIT, f)
        .await
        .unwrap_or_else(|_| panic!("timed out waiting for {what}"))
}

/// Waits until `queue` holds `n` ready messages, by polling.
async fn wait_depth(broker: &dyn Broker, queue: Queue, n: u64) {
    within("queue depth", async {
        loop {
            if broker.depth(queue).await.unwrap() == n {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
}

async fn publish_consume_ack(broker: Arc<dyn Broker>) {
    let msg = Message::new(b"hello".to_vec()).with_header("x-k", "v");
    broker.publish(Queue::Fetch, msg.clone()).await.unwrap();
    wait_depth(&*broker, Queue::Fetch, 1).await;
    let mut sub = broker.consume(Queue::Fetch, 4).await.unwrap();
    let d = within("delivery", sub.next()).await.unwrap();
    assert_eq!(d.message.body, b"hello");
    assert_eq!(d.message.headers.get("x-k").map(String::as_str), Some("v"));
    assert!(!d.redelivered);
    d.ack().await.unwrap();
    assert_eq!(broker.stats(Queue::Fetch).await.unwrap().consumers, 1);
    sub.cancel().await;
    wait_depth(&*broker, Queue::Fetch, 0).await;
    within("consumer gone", async {
        while broker.stats(Queue::Fetch).await.unwrap().consumers != 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    // Queues are separate.
    assert_eq!(broker.depth(Queue::Clean).await.unwrap(), 0);
    broker.delete_all().await.unwrap();
}

async fn requeue_and_drop_redeliver(broker: Arc<dyn Broker>) {
    broker
        .publish(Queue::Clean, Message::new(b"a".to_vec()))
        .await
        .unwrap();
    let mut sub = broker.consume(Queue::Clean, 1).await.unwrap();
    let d = within("first delivery", sub.next()).await.unwrap();
    d.requeue().await.unwrap();
    let d = within("redelivery after requeue", sub.next())
        .await
        .unwrap();
    assert!(d.redelivered);
    drop(d); // dropped unsettled: must come back, not pin the prefetch slot
    let d = within("redelivery after drop", sub.next()).await.unwrap();
    assert_eq!(d.message.body, b"a");
    d.ack().await.unwrap();
    sub.cancel().await;
    broker.delete_all().await.unwrap();
}

async fn prefetch_bounds_unsettled(broker: Arc<dyn Broker>) {
    for i in 0..3u8 {
        broker
            .publish(Queue::Search, Message::new(vec![i]))
            .await
            .unwrap();
    }
    let mut sub = broker.consume(Queue::Search, 2).await.unwrap();
    let a = within("first", sub.next()).await.unwrap();
    let b = within("second", sub.next()).await.unwrap();
    // A third delivery must wait until one of the two is settled.
    assert!(tokio::time::timeout(Duration::from_millis(500), sub.next())
        .await
        .is_err());
    a.ack().await.unwrap();
    let c = within("third after ack", sub.next()).await.unwrap();
    b.ack().await.unwrap();
    c.ack().await.unwrap();
    sub.cancel().await;
    broker.delete_all().await.unwrap();
}

/// A followed window grows and shrinks in whole steps of the prefetch, and no message is lost
/// or repeated on the way (a shrunk window's consumers are cancelled, their deliveries kept).
async fn window_follows_in_prefetch_steps(broker: Arc<dyn Broker>) {
    for i in 0..20u8 {
        broker
            .publish(Queue::Clean, Message::new(vec![i]))
            .await
            .unwrap();
    }
    let mut sub = broker.consume(Queue::Clean, 2).await.unwrap();
    let (window, followed) = tokio::sync::watch::channel(2u32);
    sub.follow(followed);
    let quiet = Duration::from_millis(500);
    let mut held = Vec::new();
    let mut seen = Vec::new();
    let mut take = async |sub: &mut Box<dyn trawl_broker::Subscription>, held: &mut Vec<_>, n| {
        for _ in 0..n {
            let d = within("a delivery in the window", sub.next())
                .await
                .unwrap();
            seen.push(d.message.body[0]);
            held.push(d);
        }
        assert!(
            tokio::time::timeout(quiet, sub.next()).await.is_err(),
            "more than the window delivered"
        );
    };
    take(&mut sub, &mut held, 2).await;
    window.send_replace(5); // three steps of two
    take(&mut sub, &mut held, 4).await;
    window.send_replace(1); // one step
    take(&mut sub, &mut held, 0).await;
    for d in held.drain(..) {
        d.ack().await.unwrap();
    }
    take(&mut sub, &mut held, 2).await;
    window.send_replace(20);
    for d in held.drain(..) {
        d.ack().await.unwrap();
    }
    take(&mut sub, &mut held, 12).await;
    for d in held.drain(..) {
        d.ack().await.unwrap();
    }
    seen.sort_unstable();
    assert_eq!(seen, (0..20).collect::<Vec<u8>>(), "each message once");
    sub.cancel().await;
    broker.delete_all().await.unwrap();
}

async fn delayed_publish_arrives_later(broker: Arc<dyn Broker>) {
    let started = std::time::Instant::now();
    broker
        .publish_delayed(
            Queue::Synthesize,
            Message::new(b"later".to_vec()),
            Duration::from_millis(1500),
        )
        .await
        .unwrap();
    assert_eq!(broker.depth(Queue::Synthesize).await.unwrap(), 0);
    let mut sub = broker.consume(Queue::Synthesize, 1).await.unwrap();
    let d = within("delayed delivery", sub.next()).await.unwrap();
    // The longest tier within 1.5 s is 1 s: it comes back then, and whoever must wait longer
    // checks again.
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "arrived before its tier"
    );
    assert_eq!(d.message.body, b"later");
    d.ack().await.unwrap();
    sub.cancel().await;
    broker.delete_all().await.unwrap();
}

async fn delivery_limit_dead_letters(broker: Arc<dyn Broker>) {
    broker
        .publish(Queue::Fetch, Message::new(b"poison".to_vec()))
        .await
        .unwrap();
    let mut sub = broker.consume(Queue::Fetch, 1).await.unwrap();
    let mut dead = broker.consume(Queue::Dead, 1).await.unwrap();
    // Requeue until the broker gives up on it; the limit is 2 redeliveries.
    for _ in 0..3 {
        let d = within("poison delivery", sub.next()).await.unwrap();
        d.requeue().await.unwrap();
    }
    let d = within("dead-lettered poison", dead.next()).await.unwrap();
    assert_eq!(d.message.body, b"poison");
    assert_eq!(
        d.message
            .headers
            .get(HEADER_DEATH_REASON)
            .map(String::as_str),
        Some("delivery_limit")
    );
    d.ack().await.unwrap();
    sub.cancel().await;
    dead.cancel().await;
    wait_depth(&*broker, Queue::Fetch, 0).await;
    broker.delete_all().await.unwrap();
}

macro_rules! both {
    ($($name:ident($limit:expr)),* $(,)?) => {
        mod memory_twin {
            $(#[tokio::test] async fn $name() { super::$name(super::memory($limit)).await })*
        }
        mod rabbitmq {
            $(#[tokio::test] async fn $name() { super::$name(super::rabbit($limit).await).await })*
        }
    };
}

both! {
    publish_consume_ack(5),
    requeue_and_drop_redeliver(5),
    prefetch_bounds_unsettled(5),
    window_follows_in_prefetch_steps(5),
    delayed_publish_arrives_later(5),
    delivery_limit_dead_letters(2),
}

/// RabbitMQ publishes are counted by how the broker answered, and none stays unconfirmed.
#[tokio::test]
async fn rabbit_publishes_are_counted_as_confirmed() {
    let broker = rabbit(5).await;
    broker
        .publish(Queue::Search, Message::new(b"m".to_vec()))
        .await
        .unwrap();
    let metrics = trawl_telemetry::render();
    let confirmed = metrics
        .lines()
        .find_map(|l| l.strip_prefix("trawl_broker_publishes_total{result=\"confirmed\"} "))
        .and_then(|n| n.parse::<u64>().ok());
    assert!(confirmed.is_some_and(|n| n >= 1), "{metrics}");
    assert!(
        metrics.contains("trawl_broker_unconfirmed_publishes 0"),
        "{metrics}"
    );
    broker.delete_all().await.unwrap();
}

/// Queues an older configuration declared (delivery limit 5) are kept when a worker with
/// another limit connects: RabbitMQ refuses to change a queue's arguments, and the worker must
/// start and work on them rather than fail until someone deletes the queues and their messages.
#[tokio::test]
async fn rabbit_keeps_queues_declared_with_other_arguments() {
    let url = std::env::var("TRAWL_TEST_AMQP_URL")
        .unwrap_or_else(|_| "amqp://guest:guest@127.0.0.1:5672/%2f".into());
    let older = settings(5);
    let connect = |settings: BrokerSettings| {
        let url = url.clone();
        async move {
            RabbitBroker::connect(&url, settings, Duration::from_secs(10))
                .await
                .expect("a broker whose queues exist with other arguments still connects")
        }
    };
    let first = connect(older.clone()).await;
    first
        .publish(Queue::Fetch, Message::new(b"held".to_vec()))
        .await
        .unwrap();
    let newer = BrokerSettings {
        delivery_limit: 20,
        ..older
    };
    let second = connect(newer).await;
    let mut sub = second.consume(Queue::Fetch, 1).await.unwrap();
    let got = within("the message published before", sub.next())
        .await
        .unwrap();
    assert_eq!(got.message.body, b"held");
    got.ack().await.unwrap();
    second
        .publish(Queue::Search, Message::new(b"new".to_vec()))
        .await
        .unwrap();
    assert_eq!(second.depth(Queue::Search).await.unwrap(), 1);
    second.delete_all().await.unwrap();
}
