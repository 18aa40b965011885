//! A fleet whose processes share no disk: two workers per stage, each in an empty working
//! directory with its own `HOME` and `TMPDIR`, sharing only RabbitMQ, Redis and a real
//! S3-protocol server (s3rver). A batch finishes, and a third process reads every report with
//! `trawl results` and through the API. Given `file://` directories of their own instead, the
//! workers find out at start-up that they do not share a store, say so, and stop before any
//! job is spent.

use crate::common;

use std::time::Duration;

use common::{Fleet, STAGES};
use trawl_broker::{Broker, Queue};
use trawl_store::prelude::*;

const BATCH: usize = 200;

fn questions(fleet: &Fleet, n: usize) -> Vec<String> {
    let all: Vec<String> = (fleet.corpus.questions().into_iter())
        .map(|q| q.query)
        .collect();
    all.iter().cycle().take(n).cloned().collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_sharing_only_the_services_finish_a_batch() {
    let mut fleet = Fleet::start().await;
    fleet.use_s3();
    for stage in STAGES {
        for _ in 0..2 {
            fleet.spawn_isolated(stage, &[], &[]);
        }
    }
    // The API, a process of its own too; the batch goes in through it, so its token owns it.
    let token = fleet.create_token("shared-nothing").await;
    let addr = format!("127.0.0.1:{}", common::free_port());
    fleet.spawn_isolated("trawl", &["serve", "--addr", &addr], &[]);
    let base = format!("http://{addr}");
    fleet
        .wait_answering(
            &format!("{base}/readyz"),
            Duration::from_secs(20),
            "trawl serve",
        )
        .await;
    let file = fleet.batch_file(&questions(&fleet, BATCH));
    let remote = |args: &[&str]| {
        let mut command = fleet.trawl_alone();
        command
            .args(args)
            .args(["--server", &base])
            .env("TRAWL_TOKEN", &token)
            .stdin(std::process::Stdio::null());
        command
    };
    let submitted = remote(&["submit", file.to_str().unwrap()])
        .output()
        .await
        .unwrap();
    assert!(
        submitted.status.success(),
        "{}",
        String::from_utf8_lossy(&submitted.stderr)
    );
    let batch = String::from_utf8(submitted.stdout)
        .unwrap()
        .trim()
        .to_owned();

    let progress = fleet.wait_done(&batch, Duration::from_secs(900)).await;
    assert_eq!(progress.finished, BATCH as u64);
    assert_eq!(fleet.broker.depth(Queue::Dead).await.unwrap(), 0);
    // No process wrote work products to its own disk.
    let machines = fleet.dir.path().join("machines");
    for entry in std::fs::read_dir(&machines).unwrap().flatten() {
        let left = common::files_under(&entry.path());
        assert!(left.is_empty(), "{} wrote {left:?}", entry.path().display());
    }

    // A third process, on a disk of its own, reads every report from the store, and again
    // through the API.
    let jobs = fleet.manifest(&batch);
    assert_eq!(jobs.len(), BATCH);
    let direct = fleet.dir.path().join("reader/direct");
    let output = fleet
        .trawl(&["results", &batch, "--out", direct.to_str().unwrap()])
        .await;
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let served = fleet.dir.path().join("reader/served");
    let output = remote(&["results", &batch, "--out", served.to_str().unwrap()])
        .output()
        .await
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for (job, question) in &jobs {
        for dir in [&direct, &served] {
            let report = std::fs::read_to_string(dir.join(job).join("report.md"))
                .unwrap_or_else(|e| panic!("{}: job {job}: {e}", dir.display()));
            assert!(report.starts_with(&format!("# {question}")), "{report}");
        }
    }
    fleet.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_on_disks_of_their_own_stop_and_say_why() {
    let mut fleet = Fleet::start().await;
    fleet
        .env
        .push(("TRAWL__OUTPUT__SHARED_CHECK_SECS".into(), "1".into()));
    let batch = fleet.submit(&questions(&fleet, 10)).await;
    let queued = fleet.broker.depth(Queue::Search).await.unwrap();
    assert_eq!(queued, 10);
    for stage in STAGES {
        // Each worker's output is a directory on its own machine.
        let own = fleet.dir.path().join("disks").join(format!("{stage}-out"));
        let url = format!("file://{}", own.display());
        fleet.spawn_isolated(stage, &[], &[("TRAWL__OUTPUT__URL", url)]);
    }
    for stage in STAGES {
        for status in fleet.exits(stage, Duration::from_secs(60)).await {
            let status = status.unwrap_or_else(|| {
                fleet.dump_logs();
                panic!("{stage} kept running on a store it does not share")
            });
            assert!(!status.success(), "{stage} exited 0");
        }
    }
    let logs = fleet.logs();
    for (name, text) in &logs {
        assert!(
            text.contains("the object store is not shared") && text.contains("set output.url"),
            "{name}: {text}"
        );
    }
    // Nothing was dead-lettered or lost: every job is still queued or in flight on a queue.
    assert_eq!(fleet.broker.depth(Queue::Dead).await.unwrap(), 0);
    let progress = fleet.store.batch_progress(&batch).await.unwrap().unwrap();
    assert_eq!(progress.finished, 0);
    let mut waiting = 0;
    for queue in [Queue::Search, Queue::Fetch, Queue::Clean, Queue::Synthesize] {
        waiting += fleet.broker.depth(queue).await.unwrap();
    }
    assert!(waiting >= 10, "{waiting} messages left of 10 jobs");
    fleet.cleanup().await;
}
