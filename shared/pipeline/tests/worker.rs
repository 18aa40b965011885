//! The worker loop over the in-memory twins (RabbitMQ behaviour is covered by the broker's
//! contract suite and the end-to-end tests): retries, dead-lettering with reasons, deferral,
//! panics, skipping ended jobs, and draining on shutdown. Real time, with one-second delay
//! tiers: paused time would need tokio's test-util feature, which makes every crate that
//! depends on tokio build twice in a workspace test run.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use trawl_broker::{Delivery, Message, Queue, HEADER_ATTEMPTS, HEADER_QUEUE, HEADER_REASON};
use trawl_config::Config;
use trawl_messages::{Envelope, JobOptions, SearchTask};
use trawl_pipeline::serve::Shutdown;
use trawl_pipeline::{run_worker, Handled, Runtime, Stage, StageError};

#[derive(Clone, Copy)]
enum Behaviour {
    Ok,
    AlwaysRetryable,
    Permanent,
    LaterOnce,
    Panic,
    Slow,
    Hang,
    /// The store unreachable for the first `n` calls, more than `max_attempts`.
    StoreDownFor(u32),
    /// Waits this many milliseconds on an outside call, as clean does on an LLM.
    Waits(u64),
    /// Keeps the worker's core this many milliseconds (a sleep that is no outside call).
    Busy(u64),
    /// Waits on the LLM provider's rate limit past the message timeout for the first `n`
    /// calls, more than `max_attempts`.
    RateLimitedFor(u32),
}

struct TestStage {
    behaviour: Behaviour,
    calls: Arc<AtomicU32>,
    /// Bytes each message is reserved (`None`: the default footprint).
    footprint: Option<u64>,
    /// Handlers running now, and the most at once.
    running: Arc<AtomicU32>,
    most: Arc<AtomicU32>,
}

#[async_trait]
impl Stage for TestStage {
    type Input = SearchTask;
    async fn handle(&self, _: &Runtime, msg: Envelope<SearchTask>) -> Result<Handled, StageError> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        let result = self.behave(n, msg).await;
        self.running.fetch_sub(1, Ordering::SeqCst);
        result
    }

    fn footprint(&self, _: &Config, len: usize) -> u64 {
        (self.footprint).unwrap_or(2 * len as u64 + trawl_pipeline::worker::BASE_FOOTPRINT)
    }
}

impl TestStage {
    async fn behave(&self, n: u32, msg: Envelope<SearchTask>) -> Result<Handled, StageError> {
        match self.behaviour {
            Behaviour::Ok => Ok(Handled::Done),
            Behaviour::AlwaysRetryable => Err(StageError::retryable(format!(
                "flaky at attempt {}",
                msg.attempt
            ))),
            Behaviour::Permanent => Err(StageError::permanent("bad input")),
            Behaviour::LaterOnce if n == 0 => Ok(Handled::Later(Duration::from_secs(1))),
            Behaviour::LaterOnce => {
                assert_eq!(msg.attempt, 0, "a deferral must not count as an attempt");
                Ok(Handled::Done)
            }
            Behaviour::Panic => panic!("handler bug"),
            Behaviour::Slow => {
                tokio::time::sleep(Duration::from_secs(2)).await;
                Ok(Handled::Done)
            }
            Behaviour::Hang => std::future::pending().await,
            Behaviour::StoreDownFor(down) => {
                assert_eq!(msg.attempt, 0, "an outage must not spend attempts");
                if n < down {
                    Err(trawl_store::StoreError::Unreachable {
                        url: "Redis".into(),
                        reason: "Connection refused".into(),
                    }
                    .into())
                } else {
                    Ok(Handled::Done)
                }
            }
            Behaviour::Waits(ms) => {
                trawl_store::outside::waiting(tokio::time::sleep(Duration::from_millis(ms))).await;
                Ok(Handled::Done)
            }
            Behaviour::Busy(ms) => {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                Ok(Handled::Done)
            }
            Behaviour::RateLimitedFor(limited) => {
                assert_eq!(msg.attempt, 0, "a rate limit must not spend attempts");
                if n < limited {
                    trawl_store::rate_wait::sleep(Duration::from_secs(3_600)).await;
                }
                Ok(Handled::Done)
            }
        }
    }
}

fn runtime() -> Runtime {
    runtime_with(|_| {})
}

fn runtime_with(adjust: impl FnOnce(&mut Config)) -> Runtime {
    let mut config = Config::default();
    config.broker.max_attempts = 3;
    config.broker.retry_delays_secs = vec![1, 2];
    config.broker.delivery_limit = 2;
    config.broker.shutdown_grace_secs = 10;
    config.output.url = format!(
        "file://{}",
        std::env::temp_dir().join("trawl-worker-test").display()
    );
    adjust(&mut config);
    Runtime::embedded(config).unwrap()
}

fn task() -> Vec<u8> {
    let body = SearchTask::new("q".into(), JobOptions::default());
    Envelope::new(
        uuid::Uuid::now_v7(),
        uuid::Uuid::now_v7(),
        chrono::Utc::now(),
        body,
    )
    .encode()
}

fn test_stage(behaviour: Behaviour, footprint: Option<u64>) -> TestStage {
    TestStage {
        behaviour,
        calls: Arc::default(),
        footprint,
        running: Arc::default(),
        most: Arc::default(),
    }
}

/// Starts a worker with `behaviour`; returns its call counter and the shutdown trigger.
fn start(
    rt: &Runtime,
    behaviour: Behaviour,
) -> (
    Arc<AtomicU32>,
    tokio::sync::watch::Sender<bool>,
    tokio::task::JoinHandle<()>,
) {
    let stage = test_stage(behaviour, None);
    let calls = Arc::clone(&stage.calls);
    let (stop, handle) = run(rt, stage);
    (calls, stop, handle)
}

/// Runs a worker of `stage` until the returned trigger fires.
fn run(
    rt: &Runtime,
    stage: TestStage,
) -> (
    tokio::sync::watch::Sender<bool>,
    tokio::task::JoinHandle<()>,
) {
    let (stop, shutdown) = Shutdown::manual();
    let rt = rt.clone();
    let handle = tokio::spawn(async move {
        run_worker(
            Arc::new(stage),
            rt,
            Queue::Search,
            shutdown.wait(),
            Default::default(),
        )
        .await
        .unwrap();
    });
    (stop, handle)
}

async fn publish(rt: &Runtime, body: Vec<u8>) {
    rt.broker
        .publish(Queue::Search, Message::new(body))
        .await
        .unwrap();
}

async fn next_dead(rt: &Runtime) -> Delivery {
    let mut dead = rt.broker.consume(Queue::Dead, 1).await.unwrap();
    tokio::time::timeout(Duration::from_secs(120), dead.next())
        .await
        .expect("nothing dead-lettered")
        .unwrap()
}

#[tokio::test]
async fn a_hung_handler_is_abandoned_at_the_message_timeout_and_retried() {
    let rt = runtime_with(|c| c.broker.message_timeout_secs = 1);
    let (calls, _stop, _h) = start(&rt, Behaviour::Hang);
    publish(&rt, task()).await;
    let d = next_dead(&rt).await;
    assert_eq!(
        calls.load(Ordering::SeqCst),
        3,
        "each attempt was given up and retried"
    );
    assert!(
        d.message.headers[HEADER_REASON]
            .starts_with("exhausted: timeout: not handled within broker.message_timeout_secs (1s)"),
        "{:?}",
        d.message.headers
    );
    let metrics = trawl_telemetry::render();
    assert!(
        metrics.contains("trawl_retries_total{stage=\"search\",reason=\"timeout\"} 2"),
        "{metrics}"
    );
}

#[tokio::test]
async fn a_handler_cut_off_while_it_waits_for_a_rate_limit_spends_no_attempt() {
    let rt = runtime_with(|c| {
        c.broker.message_timeout_secs = 1;
        c.broker.retry_delays_secs = vec![1];
    });
    let (calls, _stop, _h) = start(&rt, Behaviour::RateLimitedFor(4));
    publish(&rt, task()).await;
    handled(&calls, 5, Duration::from_secs(30)).await;
    assert_eq!(rt.broker.depth(Queue::Dead).await.unwrap(), 0);
    assert_eq!(
        metric("trawl_retries_total{stage=\"search\",reason=\"rate_limit\"}"),
        4.0
    );
}

#[tokio::test]
async fn retryable_errors_retry_then_dead_letter_with_attempts() {
    let rt = runtime();
    let (calls, _stop, _h) = start(&rt, Behaviour::AlwaysRetryable);
    publish(&rt, task()).await;
    let d = next_dead(&rt).await;
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    assert_eq!(d.message.headers[HEADER_ATTEMPTS], "3");
    assert_eq!(d.message.headers[HEADER_QUEUE], "search");
    assert!(
        d.message.headers[HEADER_REASON].starts_with("exhausted: flaky at attempt 2"),
        "{:?}",
        d.message.headers
    );
}

#[tokio::test]
async fn permanent_errors_dead_letter_at_once() {
    let rt = runtime();
    let (calls, _stop, _h) = start(&rt, Behaviour::Permanent);
    publish(&rt, task()).await;
    let d = next_dead(&rt).await;
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(d.message.headers[HEADER_REASON], "permanent: bad input");
}

#[tokio::test]
async fn undecodable_and_unknown_versions_dead_letter_and_the_worker_goes_on() {
    let rt = runtime();
    let (calls, _stop, _h) = start(&rt, Behaviour::Ok);
    publish(&rt, b"\x00garbage".to_vec()).await;
    let mut future: serde_json::Value = serde_json::from_slice(&task()).unwrap();
    future["v"] = 99.into();
    publish(&rt, future.to_string().into_bytes()).await;
    publish(&rt, task()).await;

    let mut dead = rt.broker.consume(Queue::Dead, 2).await.unwrap();
    let mut reasons = Vec::new();
    for _ in 0..2 {
        let d = tokio::time::timeout(Duration::from_secs(10), dead.next())
            .await
            .unwrap()
            .unwrap();
        reasons.push(d.message.headers[HEADER_REASON].clone());
        d.ack().await.unwrap();
    }
    reasons.sort();
    assert!(reasons[0].contains("not a JSON envelope"), "{reasons:?}");
    assert!(
        reasons[1].contains("unknown schema version 99"),
        "{reasons:?}"
    );
    while calls.load(Ordering::SeqCst) < 1 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn deferral_comes_back_without_using_an_attempt() {
    let rt = runtime();
    let (calls, _stop, _h) = start(&rt, Behaviour::LaterOnce);
    publish(&rt, task()).await;
    tokio::time::timeout(Duration::from_secs(30), async {
        while calls.load(Ordering::SeqCst) < 2 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .unwrap();
    assert_eq!(rt.broker.depth(Queue::Dead).await.unwrap(), 0);
}

#[tokio::test]
async fn a_store_outage_longer_than_the_retries_dead_letters_nothing() {
    let rt = runtime_with(|c| c.broker.retry_delays_secs = vec![1]);
    let (calls, _stop, _h) = start(&rt, Behaviour::StoreDownFor(4));
    publish(&rt, task()).await;
    tokio::time::timeout(Duration::from_secs(30), async {
        while calls.load(Ordering::SeqCst) < 5 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the task did not come back after the outage");
    assert_eq!(rt.broker.depth(Queue::Dead).await.unwrap(), 0);
}

#[tokio::test]
async fn a_panicking_handler_ends_in_the_dead_letter_queue_by_delivery_limit() {
    let rt = runtime();
    let (calls, _stop, _h) = start(&rt, Behaviour::Panic);
    publish(&rt, task()).await;
    let d = next_dead(&rt).await;
    assert_eq!(
        d.message.headers[trawl_broker::HEADER_DEATH_REASON],
        "delivery_limit"
    );
    assert_eq!(
        calls.load(Ordering::SeqCst),
        3,
        "first delivery plus two redeliveries"
    );
}

#[tokio::test]
async fn messages_of_ended_jobs_are_skipped() {
    let rt = runtime();
    let (calls, _stop, _h) = start(&rt, Behaviour::Ok);
    let env: Envelope<SearchTask> = Envelope::decode(&task()).unwrap();
    let (batch, job) = (env.batch_id.to_string(), env.job_id.to_string());
    rt.store
        .batch_create(&batch, std::slice::from_ref(&job))
        .await
        .unwrap();
    rt.store
        .batch_cancel(&batch, Duration::from_secs(60))
        .await
        .unwrap();
    publish(&rt, env.encode()).await;
    tokio::time::timeout(Duration::from_secs(10), async {
        while rt.broker.depth(Queue::Search).await.unwrap() > 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        calls.load(Ordering::SeqCst),
        0,
        "a cancelled job's message was handled"
    );
}

#[tokio::test]
async fn shutdown_drains_in_flight_work() {
    let rt = runtime();
    let (calls, stop, handle) = start(&rt, Behaviour::Slow);
    for _ in 0..3 {
        publish(&rt, task()).await;
    }
    tokio::time::sleep(Duration::from_millis(100)).await; // all three taken (prefetch 8)
    stop.send(true).unwrap();
    handle.await.unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    assert_eq!(
        rt.broker.depth(Queue::Search).await.unwrap(),
        0,
        "in-flight work was not finished"
    );
}

/// The value of `series` (name and labels, as rendered) in this process's metrics.
fn metric(series: &str) -> f64 {
    let metrics = trawl_telemetry::render();
    (metrics.lines())
        .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {series} in\n{metrics}"))
}

/// Waits until `calls` reaches `n`.
async fn handled(calls: &AtomicU32, n: u32, within: Duration) {
    tokio::time::timeout(within, async {
        while calls.load(Ordering::SeqCst) < n {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{} of {n} handled", calls.load(Ordering::SeqCst)));
}

#[tokio::test]
async fn messages_waiting_on_outside_calls_run_side_by_side_up_to_max_waiting() {
    // Small messages, a byte cap with room for all: the prefetch's eight busy slots never
    // fill, and the window grows by the messages waiting until max_waiting bounds it.
    let rt = runtime_with(|c| c.broker.max_waiting = 96);
    let stage = test_stage(Behaviour::Waits(1_000), None);
    let (calls, most) = (Arc::clone(&stage.calls), Arc::clone(&stage.most));
    let (_stop, _h) = run(&rt, stage);
    for _ in 0..300 {
        publish(&rt, task()).await;
    }
    handled(&calls, 300, Duration::from_secs(60)).await;
    assert_eq!(most.load(Ordering::SeqCst), 104);
    let capacity = metric("trawl_worker_capacity{stage=\"search\"}");
    assert_eq!(capacity, 104.0);
}

#[tokio::test]
async fn messages_that_use_the_core_run_up_to_the_prefetch() {
    let rt = runtime_with(|c| c.broker.prefetch = 20);
    let stage = test_stage(Behaviour::Busy(300), None);
    let (calls, most) = (Arc::clone(&stage.calls), Arc::clone(&stage.most));
    let (_stop, _h) = run(&rt, stage);
    for _ in 0..60 {
        publish(&rt, task()).await;
    }
    handled(&calls, 60, Duration::from_secs(60)).await;
    assert_eq!(most.load(Ordering::SeqCst), 20);
}

#[tokio::test]
async fn the_byte_cap_bounds_the_messages_in_flight() {
    let rt = runtime_with(|c| {
        c.broker.max_in_flight_bytes = 1 << 20;
        c.broker.prefetch = 64;
    });
    let stage = test_stage(Behaviour::Waits(200), Some(100 << 10));
    let (calls, most) = (Arc::clone(&stage.calls), Arc::clone(&stage.most));
    let (_stop, _h) = run(&rt, stage);
    for _ in 0..40 {
        publish(&rt, task()).await;
    }
    handled(&calls, 40, Duration::from_secs(60)).await;
    assert_eq!(
        most.load(Ordering::SeqCst),
        10,
        "1 MiB holds ten of 100 KiB"
    );
    let waited = metric("trawl_admission_wait_seconds_total{stage=\"search\"}");
    assert!(waited > 0.0, "thirty messages waited for room: {waited}");
}

#[tokio::test]
async fn a_message_that_waits_past_its_limit_goes_back_without_an_attempt() {
    // Room for one message at a time; a wait of more than (3 - 1) / 2 = 1 s sends it back.
    let rt = runtime_with(|c| {
        c.broker.max_in_flight_bytes = 1 << 20;
        c.broker.message_timeout_secs = 1;
        c.broker.consumer_timeout_secs = 3;
    });
    let stage = test_stage(Behaviour::Waits(700), Some(1 << 20));
    let (calls, most) = (Arc::clone(&stage.calls), Arc::clone(&stage.most));
    let (_stop, _h) = run(&rt, stage);
    for _ in 0..4 {
        publish(&rt, task()).await;
    }
    handled(&calls, 4, Duration::from_secs(60)).await;
    assert_eq!(most.load(Ordering::SeqCst), 1);
    assert_eq!(rt.broker.depth(Queue::Dead).await.unwrap(), 0);
    let later = metric("trawl_messages_total{stage=\"search\",result=\"later\"}");
    assert!(
        later >= 1.0,
        "the fourth waited 2.1 s and was sent back: {later}"
    );
}
