//! Reconnection against real RabbitMQ: the broker closes our connection (as on a restart or a
//! network cut), and publishing and consuming carry on, with prefetch applied again.
//! Closing is done with `rabbitmqctl close_connection` on this test's connection only (found by
//! the connection name in its client properties).

use std::time::Duration;

use trawl_broker::{Broker, BrokerSettings, Message, Queue, RabbitBroker};

fn close_connection(name: &str) {
    let out = std::process::Command::new("rabbitmqctl")
        .args(["-q", "list_connections", "pid", "client_properties"])
        .output()
        .expect("rabbitmqctl must be installed with RabbitMQ");
    let listing = String::from_utf8_lossy(&out.stdout);
    let pid = listing
        .lines()
        .find(|l| l.contains(name))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("connection {name} not listed:\n{listing}"))
        .to_owned();
    let status = std::process::Command::new("rabbitmqctl")
        .args(["-q", "close_connection", &pid, "trawl recovery test"])
        .status()
        .unwrap();
    assert!(status.success());
}

async fn within<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(30), f)
        .await
        .expect("timed out")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consumers_and_publishers_survive_a_closed_connection() {
    let ns = format!("test-recovery-{}", std::process::id());
    let broker = RabbitBroker::connect(
        "amqp://guest:guest@127.0.0.1:5672/%2f",
        BrokerSettings::new(&ns, &[Duration::from_secs(1)], 5),
        Duration::from_secs(10),
    )
    .await
    .expect("RabbitMQ must run (scripts/services-up)");
    for i in 0..6u8 {
        broker
            .publish(Queue::Clean, Message::new(vec![i]))
            .await
            .unwrap();
    }
    let mut sub = broker.consume(Queue::Clean, 2).await.unwrap();
    let held = within(sub.next()).await.unwrap();
    let _held2 = within(sub.next()).await.unwrap();

    close_connection(broker.connection_name());

    // The two unacked deliveries went back to the queue with the connection; settling them on
    // the dead channel may fail or not, and must be harmless either way.
    let _ = held.ack().await;
    drop(_held2);
    // Publishing reconnects.
    broker
        .publish(Queue::Clean, Message::new(vec![6]))
        .await
        .unwrap();
    assert!(broker.reconnects() >= 1);

    // Consuming resumes on a new channel with prefetch re-applied: two at a time, never three.
    let mut seen = Vec::new();
    while seen.len() < 7 {
        let a = within(sub.next()).await.unwrap();
        let b = within(sub.next()).await.unwrap();
        assert!(
            tokio::time::timeout(Duration::from_millis(300), sub.next())
                .await
                .is_err(),
            "a third unacked delivery: prefetch was not re-applied"
        );
        for d in [a, b] {
            seen.push(d.message.body[0]);
            d.ack().await.unwrap();
        }
        if seen.len() == 6 {
            let last = within(sub.next()).await.unwrap();
            seen.push(last.message.body[0]);
            last.ack().await.unwrap();
        }
    }
    seen.sort_unstable();
    assert_eq!(
        seen,
        vec![0, 1, 2, 3, 4, 5, 6],
        "every message delivered once after recovery"
    );
    sub.cancel().await;
    broker.delete_all().await.unwrap();
}
