//! Messages per second through one no-op trawl stage over RabbitMQ (publisher confirms, manual
//! acks, the worker loop's decode and job-status check against Redis), against a bare lapin
//! publish/consume loop with the same queue type, prefetch, confirms and publisher concurrency,
//! measured in the same run. Run it with `scripts/bench-broker`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use futures_util::StreamExt;
use lapin::options::*;
use lapin::types::{AMQPValue, FieldTable, LongString};
use lapin::{BasicProperties, Connection, ConnectionProperties};
use trawl_config::Config;
use trawl_messages::{Envelope, JobOptions, Queue, SearchTask};
use trawl_pipeline::serve::Shutdown;
use trawl_pipeline::{run_worker, Handled, Runtime, Stage, StageError};

const AMQP: &str = "amqp://guest:guest@127.0.0.1:5672/%2f";
const PUBLISHERS: usize = 16;
const PREFETCH: u16 = 64;

struct Noop(Arc<AtomicUsize>);

#[async_trait]
impl Stage for Noop {
    type Input = SearchTask;
    async fn handle(&self, _: &Runtime, _: Envelope<SearchTask>) -> Result<Handled, StageError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Ok(Handled::Done)
    }
}

fn payload() -> Vec<u8> {
    let task = SearchTask::new(
        "What is the melting point of zorbium and who first isolated it?".into(),
        JobOptions::default(),
    );
    Envelope::new(
        uuid::Uuid::now_v7(),
        uuid::Uuid::now_v7(),
        chrono::Utc::now(),
        task,
    )
    .encode()
}

async fn wait_for(count: &AtomicUsize, n: usize) {
    while count.load(Ordering::SeqCst) < n {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

async fn trawl_path(n: usize) -> f64 {
    let ns = format!("bench-{}", uuid::Uuid::now_v7().simple());
    let mut config = Config::default();
    config.broker.url = Some(AMQP.into());
    config.store.url = Some("redis://127.0.0.1:6379/".into());
    config.broker.namespace = ns.clone();
    config.store.prefix = ns;
    config.broker.prefetch = PREFETCH;
    let rt = Runtime::connect(config, Duration::from_secs(10))
        .await
        .expect("RabbitMQ and Redis must run");
    let count = Arc::new(AtomicUsize::new(0));
    let (stop, shutdown) = Shutdown::manual();
    let worker = tokio::spawn(run_worker(
        Arc::new(Noop(Arc::clone(&count))),
        rt.clone(),
        Queue::Search,
        shutdown.wait(),
        Default::default(),
    ));
    let body = payload();
    let started = Instant::now();
    let publishers: Vec<_> = (0..PUBLISHERS)
        .map(|_| {
            let (rt, body) = (rt.clone(), body.clone());
            tokio::spawn(async move {
                for _ in 0..n / PUBLISHERS {
                    rt.broker
                        .publish(Queue::Search, trawl_broker::Message::new(body.clone()))
                        .await
                        .unwrap();
                }
            })
        })
        .collect();
    for p in publishers {
        p.await.unwrap();
    }
    wait_for(&count, n / PUBLISHERS * PUBLISHERS).await;
    let rate = (n / PUBLISHERS * PUBLISHERS) as f64 / started.elapsed().as_secs_f64();
    let _ = stop.send(true);
    worker.await.unwrap().unwrap();
    rt.broker.delete_all().await.unwrap();
    rate
}

async fn bare_path(n: usize) -> f64 {
    let queue = format!("bench-bare-{}", uuid::Uuid::now_v7().simple());
    let conn = Connection::connect(AMQP, ConnectionProperties::default())
        .await
        .unwrap();
    let publisher = conn.create_channel().await.unwrap();
    publisher
        .confirm_select(ConfirmSelectOptions::default())
        .await
        .unwrap();
    let mut args = FieldTable::default();
    args.insert(
        "x-queue-type".into(),
        AMQPValue::LongString(LongString::from(b"quorum".to_vec())),
    );
    publisher
        .queue_declare(
            queue.as_str().into(),
            QueueDeclareOptions {
                durable: true,
                ..Default::default()
            },
            args,
        )
        .await
        .unwrap();
    let consumer_ch = conn.create_channel().await.unwrap();
    consumer_ch
        .basic_qos(PREFETCH, BasicQosOptions::default())
        .await
        .unwrap();
    let mut consumer = consumer_ch
        .basic_consume(
            queue.as_str().into(),
            "".into(),
            BasicConsumeOptions::default(),
            FieldTable::default(),
        )
        .await
        .unwrap();
    let count = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&count);
    let consuming = tokio::spawn(async move {
        while let Some(Ok(d)) = consumer.next().await {
            // Same per-message work the trawl path cannot skip: decode the envelope.
            let _ = Envelope::<SearchTask>::decode(&d.data);
            d.acker.ack(BasicAckOptions::default()).await.unwrap();
            counter.fetch_add(1, Ordering::SeqCst);
        }
    });
    let body = payload();
    let started = Instant::now();
    let publishers: Vec<_> = (0..PUBLISHERS)
        .map(|_| {
            let (ch, body, queue) = (publisher.clone(), body.clone(), queue.clone());
            tokio::spawn(async move {
                for _ in 0..n / PUBLISHERS {
                    ch.basic_publish(
                        "".into(),
                        queue.as_str().into(),
                        BasicPublishOptions::default(),
                        &body,
                        BasicProperties::default().with_delivery_mode(2),
                    )
                    .await
                    .unwrap()
                    .await
                    .unwrap();
                }
            })
        })
        .collect();
    for p in publishers {
        p.await.unwrap();
    }
    wait_for(&count, n / PUBLISHERS * PUBLISHERS).await;
    let rate = (n / PUBLISHERS * PUBLISHERS) as f64 / started.elapsed().as_secs_f64();
    consuming.abort();
    publisher
        .queue_delete(queue.as_str().into(), QueueDeleteOptions::default())
        .await
        .unwrap();
    rate
}

#[tokio::main]
async fn main() {
    let arg = |i: usize, default: usize| {
        std::env::args()
            .nth(i)
            .and_then(|a| a.parse().ok())
            .unwrap_or(default)
    };
    let (n, rounds) = (arg(1, 10_000), arg(2, 5).max(1));
    println!("messages: {n}, publishers: {PUBLISHERS}, prefetch: {PREFETCH}, quorum queues, confirms, manual acks");
    // Alternate the two paths so drift on a busy machine hits both alike; each round's ratio
    // compares runs made seconds apart.
    let (mut trawl, mut bare, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 1..=rounds {
        let b = bare_path(n).await;
        let t = trawl_path(n).await;
        println!("round {round}: bare lapin {b:>8.0} msg/s   trawl no-op stage {t:>8.0} msg/s   ratio {:.2}", t / b);
        bare.push(b);
        trawl.push(t);
        ratios.push(t / b);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (t, b, r) = (median(&mut trawl), median(&mut bare), median(&mut ratios));
    println!("median: bare lapin {b:.0} msg/s, trawl {t:.0} msg/s; median round ratio trawl/bare = {r:.2} (overhead {:.0} %)", (1.0 - r) * 100.0);
}
