//! The ledger of a chaos run: what was submitted and where every job ended.
//!
//! - completed: jobs with a result notification on `trawl.results` (deduplicated by job id:
//!   notifications are at-least-once, and their consumers key them by job id);
//! - dead-lettered: jobs with a message in `trawl.dead`, each with its reason;
//! - lost: submitted jobs in neither;
//! - duplicated: jobs whose end was recorded more than once (the batch record counts each
//!   job's terminal status once; a second count is a duplicated side effect), plus report
//!   files written for jobs that were not submitted.
//!
//! The pass condition: submitted = completed + dead-lettered, none lost, none duplicated.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde::Serialize;
use trawl_broker::{Broker, Queue, HEADER_ATTEMPTS, HEADER_QUEUE, HEADER_REASON};
use trawl_messages::{Envelope, ResearchResult};
use trawl_store::Store;

#[derive(Debug, Default, Serialize)]
pub struct Ledger {
    pub case: String,
    pub submitted: u64,
    pub completed: u64,
    pub dead_lettered: u64,
    pub lost: u64,
    pub duplicated: u64,
    /// Result notifications delivered more than once for a job (allowed: at-least-once).
    pub redelivered_notifications: u64,
    /// Jobs that ended while the fault lasted (few: the fault took hold), where measurable.
    pub ended_during_fault: Option<u64>,
    /// Seconds from the end of the fault until jobs finished again.
    pub recovery_secs: Option<f64>,
    /// Dead-letter reasons, counted.
    pub reasons: BTreeMap<String, u64>,
    pub wall_secs: f64,
    /// What else the case measured or checked (refusals counted, RSS slope, …), one line each;
    /// `scripts/chaos` prints them under the table.
    pub notes: Vec<String>,
    /// Every dead letter, for the cases that check them one by one.
    #[serde(skip)]
    pub dead: Vec<DeadLetter>,
}

#[derive(Debug)]
pub struct DeadLetter {
    pub queue: String,
    pub reason: String,
    pub attempts: u32,
    pub job: Option<String>,
}

impl Ledger {
    /// Reads the outcome of `batch` (its `jobs`) from the results and dead-letter queues and
    /// the batch record.
    pub async fn read(
        case: &str,
        broker: &dyn Broker,
        store: &dyn Store,
        batch: &str,
        jobs: &BTreeSet<String>,
    ) -> Ledger {
        Ledger::read_batches(case, broker, store, &[(batch, jobs.clone())]).await
    }

    /// [`Ledger::read`] over several batches at once, each (batch, its jobs): one row for them
    /// all, each batch record weighed against its own jobs.
    pub async fn read_batches(
        case: &str,
        broker: &dyn Broker,
        store: &dyn Store,
        batches: &[(&str, BTreeSet<String>)],
    ) -> Ledger {
        let jobs: BTreeSet<String> = batches
            .iter()
            .flat_map(|(_, j)| j.iter().cloned())
            .collect();
        let jobs = &jobs;
        let mut notified: BTreeMap<String, u64> = BTreeMap::new();
        let mut sub = broker.consume(Queue::Results, 200).await.unwrap();
        while let Ok(Some(d)) = tokio::time::timeout(Duration::from_secs(3), sub.next()).await {
            if let Ok(env) = Envelope::<ResearchResult>::decode(&d.message.body) {
                *notified.entry(env.job_id.to_string()).or_default() += 1;
            }
            d.ack().await.unwrap();
        }
        sub.cancel().await;
        let mut dead: BTreeSet<String> = BTreeSet::new();
        let mut reasons = BTreeMap::new();
        let mut letters = Vec::new();
        let mut sub = broker.consume(Queue::Dead, 200).await.unwrap();
        while let Ok(Some(d)) = tokio::time::timeout(Duration::from_secs(2), sub.next()).await {
            let reason = d
                .message
                .headers
                .get(HEADER_REASON)
                .cloned()
                .unwrap_or_else(|| "no reason given".into());
            // The reason's kind, without the per-message detail after the first colon.
            let kind = reason
                .split(':')
                .next()
                .unwrap_or_default()
                .trim()
                .to_owned();
            *reasons.entry(kind).or_default() += 1;
            let header = |name: &str| d.message.headers.get(name).cloned().unwrap_or_default();
            let job = job_of(&d.message.body);
            if let Some(job) = &job {
                dead.insert(job.clone());
            }
            letters.push(DeadLetter {
                queue: header(HEADER_QUEUE),
                attempts: header(HEADER_ATTEMPTS).parse().unwrap_or(0),
                reason,
                job,
            });
            d.ack().await.unwrap();
        }
        sub.cancel().await;
        let completed: BTreeSet<String> = notified
            .keys()
            .filter(|j| jobs.contains(*j))
            .cloned()
            .collect();
        let dead_jobs: BTreeSet<String> = dead
            .intersection(jobs)
            .filter(|j| !completed.contains(*j))
            .cloned()
            .collect();
        let lost = jobs
            .iter()
            .filter(|j| !completed.contains(*j) && !dead_jobs.contains(*j))
            .count() as u64;
        let mut duplicated = notified.keys().filter(|j| !jobs.contains(*j)).count() as u64;
        for (batch, batch_jobs) in batches {
            let progress = store.batch_progress(batch).await.unwrap();
            let recorded: u64 = progress.map_or(0, |p| p.by_status.values().sum());
            duplicated += recorded.saturating_sub(batch_jobs.len() as u64);
        }
        Ledger {
            case: case.to_owned(),
            submitted: jobs.len() as u64,
            completed: completed.len() as u64,
            dead_lettered: dead_jobs.len() as u64,
            lost,
            duplicated,
            redelivered_notifications: notified.values().map(|n| n - 1).sum(),
            ended_during_fault: None,
            recovery_secs: None,
            reasons,
            wall_secs: 0.0,
            notes: Vec::new(),
            dead: letters,
        }
    }

    /// The dead letter of `job`; panics, listing them all, if it has none.
    pub fn letter_of(&self, job: &str) -> &DeadLetter {
        self.dead
            .iter()
            .find(|d| d.job.as_deref() == Some(job))
            .unwrap_or_else(|| panic!("job {job} was not dead-lettered: {:?}", self.dead))
    }

    /// Prints the ledger, writes it where `scripts/chaos` collects it, and asserts the pass
    /// condition.
    pub fn settle(&self) {
        eprintln!(
            "ledger {}: submitted {} completed {} dead-lettered {} lost {} duplicated {} ended during the fault {} recovery {} wall {:.1}s reasons {:?}",
            self.case,
            self.submitted,
            self.completed,
            self.dead_lettered,
            self.lost,
            self.duplicated,
            self.ended_during_fault
                .map_or("-".into(), |n| n.to_string()),
            self.recovery_secs
                .map_or("-".into(), |s| format!("{s:.1}s")),
            self.wall_secs,
            self.reasons
        );
        for note in &self.notes {
            eprintln!("ledger {}: {note}", self.case);
        }
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("chaos");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(format!("{}.json", self.case)),
            serde_json::to_vec_pretty(self).unwrap(),
        )
        .unwrap();
        assert_eq!(self.lost, 0, "jobs lost: {self:?}");
        assert_eq!(self.duplicated, 0, "duplicated results: {self:?}");
        assert_eq!(
            self.submitted,
            self.completed + self.dead_lettered,
            "{self:?}"
        );
    }
}

/// The job a dead-lettered message belonged to, when its envelope still decodes that far.
fn job_of(body: &[u8]) -> Option<String> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    value["job_id"].as_str().map(str::to_owned)
}
