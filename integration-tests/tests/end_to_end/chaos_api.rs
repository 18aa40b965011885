//! Chaos case 13: hostile clients of the API (`trawl serve`) and of a worker's metrics port.
//!
//! - 1,000 half-open connections (a request line and one header, never the blank line), spread
//!   over 40 loopback addresses so no per-client cap cuts them: `/healthz` keeps answering from
//!   another address while they are held, and the server closes every one after
//!   `api.header_timeout_secs`.
//! - One client opening twice `api.max_connections_per_client`: the connections past the cap
//!   are closed on arrival and counted.
//! - A request whose body stalls: closed after `api.idle_timeout_secs`.
//! - `/drain` on a worker: a GET, and a POST with a browser's `Origin`, change nothing; a POST
//!   from loopback (what `trawl drain`, the preStop hook, sends) drains it.
//!
//! Then a batch submitted through the same API completes, and the ledger settles as in every
//! chaos case. Every connection goes to loopback: 127.0.0.0/8 gives each simulated client
//! its own address.

use crate::chaos_kit;
use crate::common;

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use chaos_kit::ledger::Ledger;
use chaos_kit::run::*;
use common::Fleet;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::time::Instant;

const HALF_OPEN: usize = 1000;
const CLIENT_ADDRS: usize = 40;
const PER_CLIENT: usize = 64;
const HEADER_TIMEOUT_SECS: u64 = 4;
const IDLE_TIMEOUT_SECS: u64 = 3;

async fn connect_from(source: Ipv4Addr, to: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind((source, 0).into()).unwrap();
    socket.connect(to).await.unwrap()
}

/// Whether the server closes `stream` within `limit` (end of stream, or a reset), reading
/// whatever it sends first.
async fn closed_within(stream: &mut TcpStream, limit: Duration) -> bool {
    let mut sink = Vec::new();
    tokio::time::timeout(limit, stream.read_to_end(&mut sink))
        .await
        .is_ok()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_clients() {
    let _serial = SERIAL.lock().await;
    let mut fleet = Fleet::start().await;
    let base = fleet
        .serve(&[
            ("TRAWL__API__RATE_PER_SEC", "1000".into()),
            (
                "TRAWL__API__HEADER_TIMEOUT_SECS",
                HEADER_TIMEOUT_SECS.to_string(),
            ),
            (
                "TRAWL__API__IDLE_TIMEOUT_SECS",
                IDLE_TIMEOUT_SECS.to_string(),
            ),
            (
                "TRAWL__API__MAX_CONNECTIONS_PER_CLIENT",
                PER_CLIENT.to_string(),
            ),
        ])
        .await;
    let token = fleet.create_token("hostile-clients").await;
    let api: SocketAddr = base.trim_start_matches("http://").parse().unwrap();
    let started = Instant::now();
    let mut notes = Vec::new();

    // Half-open connections, 25 from each of 40 addresses.
    let mut half_open = Vec::with_capacity(HALF_OPEN);
    for i in 0..HALF_OPEN {
        let source = Ipv4Addr::new(127, 0, 1, 1 + (i % CLIENT_ADDRS) as u8);
        let mut s = connect_from(source, api).await;
        s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            .await
            .unwrap();
        half_open.push(s);
    }
    // A request whose head is complete and whose body never comes.
    let mut stalled = connect_from(Ipv4Addr::new(127, 0, 2, 1), api).await;
    stalled
        .write_all(b"POST /v1/batches HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"questions\"")
        .await
        .unwrap();
    let stall_started = Instant::now();
    // One greedy client: twice its share.
    let greedy_source = Ipv4Addr::new(127, 0, 3, 1);
    let mut greedy = Vec::new();
    for _ in 0..2 * PER_CLIENT {
        greedy.push(connect_from(greedy_source, api).await);
    }
    let holding = started.elapsed();

    // Probes from 127.0.0.1 while all of that is held (the first header timeout is seconds
    // away): every one answered.
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let mut latencies = Vec::new();
    while started.elapsed() < holding + Duration::from_secs(HEADER_TIMEOUT_SECS - 1)
        || latencies.len() < 50
    {
        let t = Instant::now();
        let answer = http.get(format!("{base}/healthz")).send().await;
        let answer = answer.expect("/healthz unreachable under half-open connections");
        assert_eq!(answer.status(), 200);
        latencies.push(t.elapsed());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    latencies.sort();
    let (p50, p99) = (percentile(&latencies, 0.5), percentile(&latencies, 0.99));
    notes.push(format!(
        "{HALF_OPEN} half-open connections from {CLIENT_ADDRS} addresses: /healthz answered {} of {} probes, p50 {:.1} ms, p99 {:.1} ms",
        latencies.len(),
        latencies.len(),
        p50.as_secs_f64() * 1e3,
        p99.as_secs_f64() * 1e3
    ));

    // The server closes the half-open ones, the stalled body and the greedy client's held
    // connections; the bound is generous, the timeouts are seconds.
    let limit = Duration::from_secs(HEADER_TIMEOUT_SECS + 30);
    let mut closed = 0;
    for s in &mut half_open {
        if closed_within(s, limit).await {
            closed += 1;
        }
    }
    assert_eq!(closed, HALF_OPEN, "half-open connections left open");
    assert!(
        closed_within(&mut stalled, limit).await,
        "a stalled body kept its connection"
    );
    notes.push(format!(
        "all {HALF_OPEN} closed by the {HEADER_TIMEOUT_SECS} s header timeout; a stalled body's connection closed after {:.1} s (idle timeout {IDLE_TIMEOUT_SECS} s)",
        stall_started.elapsed().as_secs_f64()
    ));
    let mut greedy_closed = 0;
    for s in &mut greedy {
        if closed_within(s, limit).await {
            greedy_closed += 1;
        }
    }
    assert_eq!(greedy_closed, 2 * PER_CLIENT);
    let metrics = common::get_text(&format!("{base}/metrics")).await;
    let refused = format!(
        "trawl_http_connections_refused_total{{server=\"api\",reason=\"per_client\"}} {PER_CLIENT}"
    );
    assert!(metrics.contains(&refused), "{refused} not in {metrics}");
    notes.push(format!(
        "a client opening {} connections: {PER_CLIENT} refused on arrival (api.max_connections_per_client {PER_CLIENT})",
        2 * PER_CLIENT
    ));

    // /drain on a worker's metrics port: only a POST from loopback without a browser's Origin.
    let port = common::free_port();
    fleet.spawn_with(
        "trawl-search",
        &[],
        &[("TRAWL__METRICS__ADDR", format!("127.0.0.1:{port}"))],
    );
    let worker = format!("http://127.0.0.1:{port}");
    fleet
        .wait_answering(
            &format!("{worker}/healthz"),
            Duration::from_secs(20),
            "trawl-search",
        )
        .await;
    let get = http.get(format!("{worker}/drain")).send().await.unwrap();
    assert_eq!(get.status(), 405, "GET /drain");
    let page = http
        .post(format!("{worker}/drain"))
        .header("Origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 403, "a browser's POST /drain");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        fleet.running("trawl-search"),
        "a refused /drain stopped the worker"
    );
    let drained = fleet
        .trawl(&["drain", "--addr", &format!("127.0.0.1:{port}")])
        .await;
    assert!(
        drained.status.success(),
        "trawl drain: {}",
        String::from_utf8_lossy(&drained.stderr)
    );
    let exits = fleet.exits("trawl-search", Duration::from_secs(20)).await;
    assert!(
        matches!(exits.as_slice(), [Some(status)] if status.success()),
        "the drained worker did not exit cleanly: {exits:?}"
    );
    notes.push("/drain: GET 405 and a browser's POST 403 left the worker running; `trawl drain` stopped it".into());

    // The API still takes work: a batch through it completes.
    fleet.spawn_all();
    let questions: Vec<Value> = questions(&fleet, 5)
        .into_iter()
        .map(|q| json!({"query": q}))
        .collect();
    let answer = http
        .post(format!("{base}/v1/batches"))
        .bearer_auth(&token)
        .json(&json!({"questions": questions}))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 201);
    let created: Value = answer.json().await.unwrap();
    let batch = created["batch_id"].as_str().unwrap().to_owned();
    fleet.wait_done(&batch, Duration::from_secs(300)).await;
    let jobs = jobs_of(&fleet, &batch);
    let mut ledger = Ledger::read(
        "hostile-clients",
        &fleet.broker,
        &fleet.store,
        &batch,
        &jobs,
    )
    .await;
    ledger.wall_secs = started.elapsed().as_secs_f64();
    ledger.notes = notes;
    ledger.settle();
    fleet.cleanup().await;
}
