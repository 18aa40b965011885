//! The chaos suite's load cases: handlers that hang, against the broker's consumer timeout
//! (case 8), and a soak of many jobs that do the least work every stage can do, with every
//! worker's memory sampled throughout (case 9). Each settles a ledger like the cases in
//! `chaos.rs` (submitted = completed + dead-lettered, none lost, none duplicated) and runs in
//! the `chaos` test group with them.
//!
//! The soak runs 10 000 jobs by default, so the test command stays short (about two minutes;
//! the first 5 000 are the workers' warm-up). The full soak is 20 000 jobs (about four
//! minutes), chosen with `TRAWL_SOAK_JOBS`:
//!
//! ```sh
//! TRAWL_SOAK_JOBS=20000 cargo nextest run -p trawl-integration-tests --test end_to_end chaos_load::soak
//! TRAWL_SOAK_JOBS=20000 scripts/chaos soak
//! ```
//!
//! Both cases run on a RabbitMQ node of their own (`chaos_kit::services::OwnRabbit`).

use crate::chaos_kit;
use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chaos_kit::ledger::Ledger;
use chaos_kit::run::*;
use chaos_kit::services::OwnRabbit;
use common::{Fleet, REDIS, STAGES};
use tokio::time::Instant;
use trawl_broker::{Broker, Queue};
use trawl_integration_tests::procfs;
use trawl_integration_tests::simweb::{llm::script::hangs, soak};
use trawl_store::prelude::*;

/// Starts one worker per stage, each serving its metrics on a port of its own; returns the
/// ports by stage.
fn spawn_observed(fleet: &mut Fleet) -> BTreeMap<&'static str, u16> {
    let mut ports = BTreeMap::new();
    for stage in STAGES {
        let port = common::free_port();
        let metrics = ("TRAWL__METRICS__ADDR", format!("127.0.0.1:{port}"));
        fleet.spawn_with(stage, &[], &[metrics]);
        ports.insert(stage, port);
    }
    ports
}

/// The sum of the series of metric `name` (exact, with its `_total` suffix) that carry every
/// one of `labels`, as the worker on `port` reports them; 0 when none does.
async fn metric(port: u16, name: &str, labels: &[(&str, &str)]) -> f64 {
    let text = common::get_text(&format!("http://127.0.0.1:{port}/metrics")).await;
    text.lines()
        .filter(|l| {
            l.strip_prefix(name)
                .is_some_and(|rest| rest.starts_with('{') || rest.starts_with(' '))
        })
        .filter(|l| {
            labels
                .iter()
                .all(|(k, v)| l.contains(&format!("{k}=\"{v}\"")))
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// Every worker log line of the fleet that contains `what`.
fn log_lines(fleet: &Fleet, what: &str) -> Vec<String> {
    common::files_under(&fleet.dir.path().join("logs"))
        .iter()
        .flat_map(|path| {
            std::fs::read_to_string(path)
                .unwrap_or_default()
                .lines()
                .filter(|l| l.contains(what))
                .map(|l| format!("{}: {l}", path.display()))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The own node's consumer timeout, and how often it checks it (RabbitMQ 3.10: on every
/// channel tick, `channel_tick_interval`, a minute by default).
const CONSUMER_TIMEOUT: Duration = Duration::from_secs(15);
const CONSUMER_CHECK: Duration = Duration::from_secs(1);
/// The workers' message timeout: a fifth of the consumer timeout.
const MESSAGE_TIMEOUT_SECS: u64 = 3;
/// The default `broker.max_attempts`.
const MAX_ATTEMPTS: u32 = 4;
/// Jobs whose query analysis never answers.
const HANG_ALWAYS: usize = 2;
/// Jobs whose every LLM call hangs on its first try and answers on the next.
const HANG_ONCE: usize = 3;
const HEALTHY: usize = 40;
const ABANDONED: &str = "timeout: not handled within broker.message_timeout_secs (3s)";
/// What RabbitMQ logs when it closes a channel for a consumer timeout.
const BROKER_TIMED_OUT: &str = "timed out waiting for delivery acknowledgement";

/// Case 8: handlers that hang inside a stage (an LLM call accepted and never answered, with
/// the model timeout far beyond the test) on a broker whose consumer timeout is five times
/// the workers' message timeout and checked every second. Each hung handler is abandoned at
/// the message timeout and its message retried with its attempt count: always-hanging jobs end
/// in the dead-letter queue after every attempt, hang-once jobs complete on their retry. Other
/// jobs keep ending while calls hang, and the broker never closes a worker's channel for a
/// consumer timeout (its log, the workers' logs and their reconnect counters agree), though it
/// does close the channel of a probe that holds a delivery past it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hung_job() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let rabbit =
        OwnRabbit::with_consumer_timeout(dir.path(), CONSUMER_TIMEOUT, CONSUMER_CHECK).await;
    let url = rabbit.url();
    let mut fleet = Fleet::start_using("127.0.0.1", [&url, REDIS], [&url, REDIS]).await;
    let web = fleet.simweb.base_url();
    let settings = [
        (
            "TRAWL__BROKER__MESSAGE_TIMEOUT_SECS",
            MESSAGE_TIMEOUT_SECS.to_string(),
        ),
        (
            "TRAWL__BROKER__CONSUMER_TIMEOUT_SECS",
            CONSUMER_TIMEOUT.as_secs().to_string(),
        ),
        ("TRAWL__LLM__BASE_URL", format!("{web}/v1")),
        ("TRAWL__LLM__MODEL", "gpt-4o-mini".into()),
        // Only the message timeout may end a hang, not the model client's own, nor the share
        // of the message's time its LLM calls may answer in (a whole share counts from the
        // call's start, so the message timeout comes first): this case is a hung handler's.
        ("TRAWL__LLM__TIMEOUT_SECS", "3600".into()),
        ("TRAWL__LLM__MESSAGE_TIME_SHARE", "1".into()),
        ("OPENAI_API_KEY", "sk-chaos".into()),
        // The LLM in search (query analysis) and synthesize (the report) only, and one round
        // of research, so a hung question hangs in those two handlers once each.
        ("TRAWL__RESEARCH__MAX_ROUNDS", "1".into()),
        ("TRAWL__CLEAN__LLM_JUDGE", "false".into()),
        ("TRAWL__CLEAN__LLM_CLEANING", "false".into()),
        ("TRAWL__CLEAN__LLM_ANALYSIS", "false".into()),
    ];
    fleet
        .env
        .extend(settings.iter().map(|(k, v)| (k.to_string(), v.clone())));
    let ports = spawn_observed(&mut fleet);
    let probe = tokio::spawn(hold_past_consumer_timeout(url.clone()));

    let base = questions(&fleet, HANG_ALWAYS + HANG_ONCE + HEALTHY);
    let batch_questions: Vec<String> = base
        .iter()
        .enumerate()
        .map(|(i, q)| match i {
            i if i < HANG_ALWAYS => format!("{q} simweb:llm-hang"),
            i if i < HANG_ALWAYS + HANG_ONCE => format!("{q} simweb:llm-hang-once"),
            _ => q.clone(),
        })
        .collect();
    let (hangs_before, _) = hangs();
    let started = Instant::now();
    let batch = fleet.submit(&batch_questions).await;
    let jobs = jobs_of(&fleet, &batch);
    let queries = fleet.manifest(&batch);
    let marked = |marker: &str| -> BTreeSet<String> {
        queries
            .iter()
            .filter(|(_, q)| q.ends_with(marker))
            .map(|(j, _)| j.clone())
            .collect()
    };
    let (always, once) = (marked("simweb:llm-hang"), marked("simweb:llm-hang-once"));
    assert_eq!((always.len(), once.len()), (HANG_ALWAYS, HANG_ONCE));

    // Jobs that ended between two looks that both found a call hanging.
    let (mut last_finished, mut was_hanging, mut ended_while_hung) = (0, false, 0);
    loop {
        let hanging = hangs().1 > 0;
        let now = finished(&fleet, &batch).await;
        if hanging && was_hanging {
            ended_while_hung += now - last_finished;
        }
        (last_finished, was_hanging) = (now, hanging);
        let dead = fleet.broker.depth(Queue::Dead).await.unwrap();
        if now >= (HANG_ONCE + HEALTHY) as u64 && dead >= HANG_ALWAYS as u64 {
            break;
        }
        if started.elapsed() > Duration::from_secs(180) {
            fleet.dump_logs();
            panic!("after 180 s: {now} jobs ended, {dead} dead letters");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // An abandoned call's connection is closed with its handler; the server notices at once.
    let waiting = Instant::now();
    while hangs().1 > 0 && waiting.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (hangs_after, still_hanging) = hangs();
    let probe_closed = probe.await.unwrap();

    let mut ledger = Ledger::read("hung-job", &fleet.broker, &fleet.store, &batch, &jobs).await;
    ledger.wall_secs = started.elapsed().as_secs_f64();
    for job in &always {
        let letter = ledger.letter_of(job);
        assert_eq!(letter.attempts, MAX_ATTEMPTS, "{letter:?}");
        assert_eq!(letter.queue, "search", "{letter:?}");
        assert!(
            letter.reason == format!("exhausted: {ABANDONED}"),
            "{letter:?}"
        );
    }
    assert_eq!(
        ledger.dead_lettered, HANG_ALWAYS as u64,
        "{:?}",
        ledger.dead
    );
    for job in &once {
        let report = fleet.job_dir(&batch, job).join("report.md");
        assert!(report.exists(), "hang-once job {job} has no report");
    }
    // Each always-hanging job hung once per attempt; each hang-once job once in search and
    // once in synthesize; and nothing the workers abandoned is still held open.
    let hung = hangs_after - hangs_before;
    assert_eq!(
        hung,
        (HANG_ALWAYS as u64) * u64::from(MAX_ATTEMPTS) + 2 * HANG_ONCE as u64,
        "hung LLM calls"
    );
    assert_eq!(still_hanging, 0, "abandoned LLM calls still open");
    let search_stage = Queue::Search.label();
    let synthesize_stage = Queue::Synthesize.label();
    let (search_retries, synthesize_retries) = (
        retried_on(&ports, "trawl-search", search_stage).await,
        retried_on(&ports, "trawl-synthesize", synthesize_stage).await,
    );
    assert!(
        search_retries >= (HANG_ALWAYS * (MAX_ATTEMPTS as usize - 1) + HANG_ONCE) as f64,
        "search retried {search_retries} timeouts"
    );
    assert!(
        synthesize_retries >= HANG_ONCE as f64,
        "synthesize retried {synthesize_retries} timeouts"
    );
    assert!(
        ended_while_hung > 0,
        "no job ended while calls hung: the hung handlers held up the others"
    );

    // The broker's view: the probe's channel closed for its consumer timeout, no worker's did.
    let broker_log = rabbit.log();
    let closed = broker_log.matches(BROKER_TIMED_OUT).count();
    assert!(
        probe_closed.is_some(),
        "the node never closed the probe's channel: its consumer timeout is not in force\n{broker_log}"
    );
    assert_eq!(
        closed, 1,
        "the broker closed channels for consumer timeouts:\n{broker_log}"
    );
    for what in [
        "resubscribing",
        "connection lost",
        "could not settle",
        "reconnected",
    ] {
        let lines = log_lines(&fleet, what);
        assert!(lines.is_empty(), "{lines:#?}");
    }
    let mut reconnects = 0.0;
    for (stage, port) in &ports {
        let n = metric(*port, "trawl_broker_reconnects_total", &[]).await;
        assert_eq!(n, 0.0, "{stage} reconnected to the broker");
        reconnects += n;
    }
    ledger.notes.push(format!(
        "{hung} hung LLM calls, each abandoned at the {MESSAGE_TIMEOUT_SECS} s message timeout \
         (consumer timeout {} s, checked every {} s); timeouts retried: search {search_retries}, \
         synthesize {synthesize_retries}; {ended_while_hung} jobs ended while a call hung",
        CONSUMER_TIMEOUT.as_secs(),
        CONSUMER_CHECK.as_secs()
    ));
    ledger.notes.push(format!(
        "consumer-timeout channel closes in the broker's log: {closed} (the probe's, after {:.1} s \
         unacknowledged), worker reconnects {reconnects}",
        probe_closed.unwrap_or_default().as_secs_f64()
    ));
    ledger.settle();
    fleet.cleanup().await;
}

/// Timeouts the `worker` retried for `stage`, from its metrics.
async fn retried_on(ports: &BTreeMap<&'static str, u16>, worker: &str, stage: &str) -> f64 {
    metric(
        ports[worker],
        "trawl_retries_total",
        &[("stage", stage), ("reason", "timeout")],
    )
    .await
}

/// Takes one message on a channel of its own and never acknowledges it; returns how long it
/// held it before the broker closed that channel, or `None` if the broker had not within a
/// minute. Shows that the node enforces its consumer timeout, so the workers' clean record
/// means something.
async fn hold_past_consumer_timeout(url: String) -> Option<Duration> {
    use futures_util::StreamExt;
    use lapin::options::{BasicConsumeOptions, BasicPublishOptions, QueueDeclareOptions};
    use lapin::types::FieldTable;
    use lapin::{BasicProperties, Connection, ConnectionProperties};
    let connection = Connection::connect(&url, ConnectionProperties::default())
        .await
        .unwrap();
    let publisher = connection.create_channel().await.unwrap();
    let holder = connection.create_channel().await.unwrap();
    let queue = "chaos-consumer-timeout-probe";
    publisher
        .queue_declare(
            queue.into(),
            QueueDeclareOptions::default(),
            FieldTable::default(),
        )
        .await
        .unwrap();
    publisher
        .basic_publish(
            "".into(),
            queue.into(),
            BasicPublishOptions::default(),
            b"held, never acknowledged",
            BasicProperties::default(),
        )
        .await
        .unwrap();
    let mut consumer = holder
        .basic_consume(
            queue.into(),
            "probe".into(),
            BasicConsumeOptions::default(),
            FieldTable::default(),
        )
        .await
        .unwrap();
    let _held = consumer.next().await.unwrap().unwrap();
    let since = Instant::now();
    while since.elapsed() < Duration::from_secs(60) {
        if !holder.status().connected() {
            return Some(since.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    None
}

/// A directory for the work products of thousands of jobs, on tmpfs where there is one:
/// removing some 150 000 files from a disk that discards every freed block takes minutes.
fn tmpfs_dir() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        tempfile::tempdir_in(shm).unwrap()
    } else {
        tempfile::tempdir().unwrap()
    }
}

/// Jobs of the batch that nobody's results are read for.
const UNREAD_JOBS: usize = 2_000;
/// The results queue's bound in that case, and the jobs run with it enabled.
const UNREAD_BOUND: usize = 300;
const UNREAD_ENABLED_JOBS: usize = 600;

/// Case 10: a fleet whose `trawl.results` nobody reads. By default nothing is published to it:
/// over a 2 000-job batch its depth stays 0, and the broker's memory after the batch is where
/// it was after the first fifth (the broker's RSS and its message memory are in the ledger's
/// notes). Asked for (`broker.results_queue`), notifications are bounded: 600 jobs with a
/// bound of 300 leave the newest 300 and no more. Either way every job ends, none
/// dead-lettered: the batch record, not the queue, is the record of results.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unread_results_stay_bounded() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let rabbit = OwnRabbit::start(dir.path()).await;
    let url = rabbit.url();
    let vm = rabbit.pid().expect("the node runs");
    let mut fleet = Fleet::start_using("127.0.0.1", [&url, REDIS], [&url, REDIS]).await;
    let out = tmpfs_dir();
    for (k, v) in [
        (
            "TRAWL__OUTPUT__URL",
            format!("file://{}", out.path().display()),
        ),
        // The default, which the test fleet overrides for the cases that count notifications.
        ("TRAWL__BROKER__RESULTS_QUEUE", "false".into()),
        (
            "TRAWL__BROKER__RESULTS_MAX_LENGTH",
            UNREAD_BOUND.to_string(),
        ),
    ] {
        fleet.env.push((k.into(), v));
    }
    // The test's own connection declared the queues with the test fleet's bound: the fleet
    // declares them again with this case's (a queue's arguments cannot change in place).
    fleet.broker.delete_all().await.unwrap();
    fleet.spawn_all();
    let started = Instant::now();
    let batch = fleet
        .submit(&(0..UNREAD_JOBS).map(soak::question).collect::<Vec<_>>())
        .await;
    let (mut deepest, mut rss_at_fifth, mut rss_peak) = (0, None, 0);
    loop {
        let progress = fleet.store.batch_progress(&batch).await.unwrap().unwrap();
        deepest = deepest.max(fleet.broker.depth(Queue::Results).await.unwrap());
        let rss = procfs::status_kib(vm, "VmRSS").unwrap_or(0);
        rss_peak = rss_peak.max(rss);
        if rss_at_fifth.is_none() && progress.finished >= (UNREAD_JOBS / 5) as u64 {
            rss_at_fifth = Some(rss);
        }
        if progress.is_done() {
            break;
        }
        if started.elapsed() > Duration::from_secs(600) {
            fleet.dump_logs();
            panic!("{} of {UNREAD_JOBS} jobs ended in 600 s", progress.finished);
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let rss_end = procfs::status_kib(vm, "VmRSS").unwrap_or(0);
    assert_eq!(
        deepest, 0,
        "notifications were published with results_queue off"
    );
    let progress = fleet.store.batch_progress(&batch).await.unwrap().unwrap();
    assert_eq!(progress.finished, UNREAD_JOBS as u64);
    assert_eq!(fleet.broker.depth(Queue::Dead).await.unwrap(), 0);

    // The same fleet asked for notifications, and still nobody reading them.
    fleet.terminate_all(Duration::from_secs(30)).await;
    fleet
        .env
        .push(("TRAWL__BROKER__RESULTS_QUEUE".into(), "true".into()));
    fleet.spawn_all();
    let enabled = fleet
        .submit(
            &(UNREAD_JOBS..UNREAD_JOBS + UNREAD_ENABLED_JOBS)
                .map(soak::question)
                .collect::<Vec<_>>(),
        )
        .await;
    let progress = fleet.wait_done(&enabled, Duration::from_secs(300)).await;
    assert_eq!(progress.finished, UNREAD_ENABLED_JOBS as u64);
    let kept = fleet.broker.depth(Queue::Results).await.unwrap();
    assert_eq!(kept, UNREAD_BOUND as u64, "the bound did not hold");

    let mib = |kib: u64| kib as f64 / 1024.0;
    let ledger = Ledger {
        case: "unread-results".into(),
        submitted: (UNREAD_JOBS + UNREAD_ENABLED_JOBS) as u64,
        completed: (UNREAD_JOBS + UNREAD_ENABLED_JOBS) as u64,
        wall_secs: started.elapsed().as_secs_f64(),
        notes: vec![
            format!(
                "results queue off: depth 0 over {UNREAD_JOBS} jobs; broker RSS {:.1} MiB after \
                 {} jobs, {:.1} MiB after all (peak {:.1} MiB)",
                mib(rss_at_fifth.unwrap_or(0)),
                UNREAD_JOBS / 5,
                mib(rss_end),
                mib(rss_peak)
            ),
            format!(
                "results queue on, bound {UNREAD_BOUND}: {kept} notifications kept of \
                 {UNREAD_ENABLED_JOBS} jobs, the oldest dropped"
            ),
        ],
        ..Ledger::default()
    };
    ledger.settle();
    fleet.cleanup().await;
}

/// Soak jobs in the default run; `TRAWL_SOAK_JOBS` sets another number (20 000 for the full
/// soak).
const SOAK_JOBS: usize = 10_000;
/// Jobs before the slope is measured, at least: a worker's RSS rises steeply over its first
/// thousand jobs (allocator arenas, connection pools, the blocking pool filling up to its cap)
/// and settles over the next few thousand (synthesize's by some 130 KiB per 1 000 jobs between
/// jobs 2 000 and 5 000, then under 40); from here on it is flat. Measured from job 4 000, a
/// run of 8 000 jobs once gave synthesize 154 KiB per 1 000 jobs, all of it settling (the same
/// build measured 36 over jobs 4 000–16 000). The full soak leaves out its first fifth.
const WARM_UP: usize = 5_000;
/// Jobs submitted at a time: a new batch goes in whenever no more than this many are still
/// open, so the fleet works in a steady state (as under a stream of submissions) and every
/// stage keeps within one wave of the jobs finished.
const WAVE: usize = 250;
/// The most a worker's resident memory may grow per 1 000 jobs after warm-up, in KiB: about
/// 150 bytes a job. A leak of a few hundred bytes per job (a job id kept in a map, a span or
/// a metric series per job, a thread added now and then) grows by 300–500 KiB per 1 000 jobs,
/// two to three times this; flat workers measure 0–60 KiB per 1 000 jobs, the allocator's
/// settling after warm-up.
const SLOPE_LIMIT_KIB: f64 = 150.0;

/// One look at the fleet: jobs finished so far, and each worker's resident memory in KiB.
struct Sample {
    finished: u64,
    rss_kib: BTreeMap<&'static str, u64>,
}

/// Case 9: a soak of jobs that do the least work at every stage: each question's search
/// yields one page of under 1 KB, no LLM is configured, and still every job passes through
/// search, fetch, clean and synthesize (checked job by job, each stage by what only it leaves
/// behind) and ends with a report. Jobs go in in waves, as under a stream of submissions.
/// Every worker's RSS is sampled four times a second; after warm-up ([`WARM_UP`] jobs, or a
/// fifth of them) the least-squares slope of RSS against jobs finished must stay under
/// [`SLOPE_LIMIT_KIB`] per 1 000 jobs for every stage. Peak RSS and slope per stage go into
/// the ledger's notes, and every sample into `soak-rss.csv` beside the ledgers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn soak() {
    let _serial = SERIAL.lock().await;
    let total: usize = std::env::var("TRAWL_SOAK_JOBS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(SOAK_JOBS);
    let warm_up = (total / 5).max(WARM_UP) as u64;
    // A RabbitMQ node of the soak's own: tens of thousands of jobs' messages neither load the
    // shared broker nor wait on whatever else it is doing.
    let dir = tempfile::tempdir().unwrap();
    let rabbit = OwnRabbit::start(dir.path()).await;
    let url = rabbit.url();
    let mut fleet = Fleet::start_using("127.0.0.1", [&url, REDIS], [&url, REDIS]).await;
    let out = tmpfs_dir();
    fleet.env.push((
        "TRAWL__OUTPUT__URL".into(),
        format!("file://{}", out.path().display()),
    ));
    // A steady, small number of messages in flight (the default prefetch, and no window
    // growing with waits), so the allocator's high-water mark is reached during warm-up. With
    // 64 in flight the workers' RSS rose in steps each time a burst set a new peak of messages
    // held at once (synthesize 37.9 → 40.2 MiB over 20 000 jobs, flat in between); the byte cap
    // bounds such peaks, and a per-job leak shows as a slope at any concurrency.
    fleet.env.extend([
        ("TRAWL__BROKER__PREFETCH".into(), "8".into()),
        ("TRAWL__BROKER__MAX_WAITING".into(), "0".into()),
    ]);
    fleet.spawn_all();
    let pids: BTreeMap<&'static str, u32> = STAGES.iter().map(|&s| (s, fleet.pid(s))).collect();

    let started = Instant::now();
    // At least 5 jobs a second, whatever else the machine does.
    let limit = Duration::from_secs(300 + total as u64 / 5);
    let batches: Arc<Mutex<Vec<String>>> = Arc::default();
    let done = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    // Sampling goes on beside the submissions, which take a while each.
    let sampler = tokio::spawn(sample(
        fleet.store.clone(),
        pids.clone(),
        Arc::clone(&batches),
        Arc::clone(&done),
        Arc::clone(&stop),
    ));
    let mut submitted = 0;
    loop {
        let finished = done.load(Ordering::SeqCst);
        if submitted < total && submitted as u64 - finished <= WAVE as u64 {
            let wave: Vec<String> = (submitted..(submitted + WAVE).min(total))
                .map(soak::question)
                .collect();
            submitted += wave.len();
            let batch = fleet.submit(&wave).await;
            batches.lock().unwrap().push(batch);
            continue;
        }
        if finished >= total as u64 {
            break;
        }
        if started.elapsed() > limit {
            fleet.dump_logs();
            panic!("{finished} of {total} soak jobs ended in {limit:?}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    stop.store(true, Ordering::SeqCst);
    let samples = sampler.await.unwrap();
    let batches = batches.lock().unwrap().clone();
    let wall = started.elapsed().as_secs_f64();

    // Every stage ran for every job, each shown by what only that stage leaves behind (the
    // workers' per-stage counters in job.json can trail the job's end): search selected the
    // one result, simweb served its page, clean analysed it, synthesize wrote the report.
    let served: BTreeSet<(String, String)> = (fleet.simweb.stats().snapshot().into_iter())
        .map(|(host, path, _)| (host, path))
        .collect();
    let mut jobs_by_batch = Vec::new();
    for batch in &batches {
        let mut jobs = BTreeSet::new();
        for (job, query) in fleet.manifest(batch) {
            let dir = fleet.job_dir(batch, &job);
            let read = |name: &str| -> serde_json::Value {
                serde_json::from_slice(&std::fs::read(dir.join(name)).unwrap()).unwrap()
            };
            let search = read("search.json");
            let selected: Vec<&serde_json::Value> = (search["results"].as_array().unwrap())
                .iter()
                .filter(|r| r["selected"] == true)
                .collect();
            let k = soak::parse(&query).unwrap();
            assert!(
                selected.len() == 1 && selected[0]["url"] == soak::source_url(k),
                "job {job}: {search}"
            );
            let page = (format!("soak-{}.test", soak::host_of(k)), format!("/n/{k}"));
            assert!(served.contains(&page), "job {job}: {page:?} never fetched");
            let record = read("job.json");
            assert_eq!(
                record["outcomes"],
                serde_json::json!({"analysed": 1}),
                "job {job}"
            );
            assert!(dir.join("report.md").exists(), "job {job} has no report");
            jobs.insert(job);
        }
        jobs_by_batch.push((batch.as_str(), jobs));
    }
    let all_jobs: BTreeSet<&String> = jobs_by_batch.iter().flat_map(|(_, jobs)| jobs).collect();
    assert_eq!(all_jobs.len(), total);

    // One ledger over every wave.
    let mut ledger =
        Ledger::read_batches("soak", &fleet.broker, &fleet.store, &jobs_by_batch).await;
    ledger.wall_secs = wall;

    // Every sample, for a look at the curves behind the slopes.
    let mut csv = format!("finished,{}\n", STAGES.join(","));
    for s in &samples {
        let rss: Vec<String> = STAGES.iter().map(|st| s.rss_kib[st].to_string()).collect();
        csv.push_str(&format!("{},{}\n", s.finished, rss.join(",")));
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("chaos");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("soak-rss.csv"), csv).unwrap();

    let mut flat = Vec::new();
    for (&stage, &pid) in &pids {
        let points: Vec<(f64, f64)> = samples
            .iter()
            .filter(|s| s.finished >= warm_up)
            .map(|s| (s.finished as f64, s.rss_kib[stage] as f64))
            .collect();
        let slope = slope(&points) * 1000.0;
        let peak = procfs::status_kib(pid, "VmHWM").unwrap_or(0);
        let after_warm_up = points.first().map_or(0.0, |p| p.1);
        let last = points.last().map_or(0.0, |p| p.1);
        ledger.notes.push(format!(
            "{stage}: peak RSS {:.1} MiB, RSS {:.1} → {:.1} MiB over jobs {warm_up}–{total}, \
             slope {slope:+.1} KiB per 1000 jobs ({} samples)",
            peak as f64 / 1024.0,
            after_warm_up / 1024.0,
            last / 1024.0,
            points.len()
        ));
        flat.push((stage, slope, points.len()));
    }
    ledger.notes.push(format!(
        "{total} jobs in {} waves of {WAVE}, {:.1} jobs/s",
        batches.len(),
        total as f64 / wall
    ));
    ledger.settle();
    for (stage, slope, n) in flat {
        assert!(n >= 20, "{stage}: only {n} samples after warm-up");
        assert!(
            slope < SLOPE_LIMIT_KIB,
            "{stage}'s memory grew {slope:.1} KiB per 1000 jobs after warm-up (limit {SLOPE_LIMIT_KIB})"
        );
    }
    fleet.cleanup().await;
}

/// Looks at the fleet every quarter second until `stop`: jobs finished over `batches` (also
/// published in `done`), and each worker's resident memory.
async fn sample(
    store: trawl_store::RedisStore,
    pids: BTreeMap<&'static str, u32>,
    batches: Arc<Mutex<Vec<String>>>,
    done: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
) -> Vec<Sample> {
    let mut samples = Vec::new();
    // Each batch's jobs finished at the last look, and whether it had ended.
    let mut seen: BTreeMap<String, (u64, bool)> = BTreeMap::new();
    while !stop.load(Ordering::SeqCst) {
        let open: Vec<String> = (batches.lock().unwrap().iter())
            .filter(|b| !seen.get(*b).is_some_and(|s| s.1))
            .cloned()
            .collect();
        for batch in open {
            if let Ok(Some(p)) = store.batch_progress(&batch).await {
                seen.insert(batch, (p.finished, p.is_done()));
            }
        }
        let finished = seen.values().map(|s| s.0).sum();
        done.store(finished, Ordering::SeqCst);
        let rss_kib = pids
            .iter()
            .map(|(&stage, &pid)| {
                let rss = procfs::status_kib(pid, "VmRSS");
                (stage, rss.unwrap_or_else(|| panic!("{stage} exited")))
            })
            .collect();
        samples.push(Sample { finished, rss_kib });
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    samples
}

/// The least-squares slope of y against x; 0 for fewer than two distinct x.
fn slope(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    if sxx == 0.0 {
        0.0
    } else {
        sxy / sxx
    }
}
