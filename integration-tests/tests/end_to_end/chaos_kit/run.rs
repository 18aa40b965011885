//! What every chaos case does around its fault: a batch of corpus questions, its job ids,
//! progress reads, recovery time, and the ledger settled at the end.

use std::collections::BTreeSet;
use std::time::Duration;

use tokio::time::Instant;
use trawl_store::prelude::*;

use super::ledger::Ledger;
use crate::common::Fleet;

/// One case at a time under `cargo test` (nextest runs each in its own process, serialised by
/// the `chaos` test group in .config/nextest.toml).
pub static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// `n` jobs: the corpus questions over and over (each submission is its own job).
pub fn questions(fleet: &Fleet, n: usize) -> Vec<String> {
    let all: Vec<String> = fleet
        .corpus
        .questions()
        .into_iter()
        .map(|q| q.query)
        .collect();
    all.iter().cycle().take(n).cloned().collect()
}

/// The job ids `trawl submit` recorded for `batch`.
pub fn jobs_of(fleet: &Fleet, batch: &str) -> BTreeSet<String> {
    fleet
        .manifest(batch)
        .into_iter()
        .map(|(job, _)| job)
        .collect()
}

/// Requests simweb served for pages (its `*.test` hosts), robots.txt included.
pub fn page_requests(fleet: &Fleet) -> u64 {
    fleet
        .simweb
        .stats()
        .count(|host, _| host.ends_with(".test"))
}

pub async fn finished(fleet: &Fleet, batch: &str) -> u64 {
    match fleet.store.batch_progress(batch).await {
        Ok(Some(p)) => p.finished,
        _ => 0,
    }
}

/// Waits until at least `n` jobs of `batch` have ended (the fault then strikes mid-batch).
pub async fn until_finished(fleet: &Fleet, batch: &str, n: u64) {
    let started = Instant::now();
    while finished(fleet, batch).await < n {
        if started.elapsed() > Duration::from_secs(180) {
            fleet.dump_logs();
            panic!("fewer than {n} jobs ended in 180 s");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Seconds until a job ends that had not ended when this is called (right after the fault
/// ends); the store is read again until it answers, since a fault may have been its own.
pub async fn recovery(fleet: &Fleet, batch: &str) -> f64 {
    let since = Instant::now();
    let progress = || async {
        loop {
            if let Ok(Some(p)) = fleet.store.batch_progress(batch).await {
                return p;
            }
            if since.elapsed() > Duration::from_secs(60) {
                panic!("the store did not answer for 60 s after the fault");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    let before = progress().await.finished;
    loop {
        let now = progress().await;
        if now.finished > before || now.is_done() {
            return since.elapsed().as_secs_f64();
        }
        if since.elapsed() > Duration::from_secs(180) {
            fleet.dump_logs();
            panic!("no job ended in the 180 s after the fault");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// What a fault did: jobs ended while it lasted, and seconds to recover after it.
#[derive(Default)]
pub struct Effect {
    pub ended_during: Option<u64>,
    pub recovery_secs: Option<f64>,
}

/// Waits for the batch, then reads and settles the ledger.
pub async fn settle(
    fleet: &Fleet,
    case: &str,
    batch: &str,
    started: Instant,
    effect: Effect,
) -> Ledger {
    fleet.wait_done(batch, Duration::from_secs(300)).await;
    let jobs = jobs_of(fleet, batch);
    let mut ledger = Ledger::read(case, &fleet.broker, &fleet.store, batch, &jobs).await;
    ledger.ended_during_fault = effect.ended_during;
    ledger.recovery_secs = effect.recovery_secs;
    ledger.wall_secs = started.elapsed().as_secs_f64();
    ledger.settle();
    ledger
}
