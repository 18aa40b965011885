//! The fan-in protocol behind [`crate::job::Job`]: open the job's record, record each URL's
//! terminal outcome exactly once, and ask for synthesis when the last one is in. See
//! `fanin.md` for why each step is ordered as it is. Stages go through `Job`; only reading a
//! job's whole state ([`job_state`]) is public.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use trawl_broker::Queue;
use trawl_messages::envelope::Body;
use trawl_messages::{Envelope, Outcome, Source, SynthesizeTask, Trigger};

use crate::metrics::{labels, LEVELS, METRICS};
use crate::{Runtime, StageError};

/// What the search stage decided for a job, kept with the fan-in record.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JobMeta {
    pub query: String,
    pub sources: Vec<Source>,
    /// The searches that were run, for the report's headings.
    #[serde(default)]
    pub sub_queries: Vec<String>,
    /// What the answer must contain, for conflict detection and the report writer.
    #[serde(default)]
    pub data_points: Vec<String>,
    /// Search judged the question to be about news (clean's analysis prompt follows).
    #[serde(default)]
    pub is_news: bool,
    /// The question's language (ISO 639-1, `und` unknown, empty in older records): the stop
    /// words its terms lose, and the report's language.
    #[serde(default)]
    pub language: String,
}

/// One URL's terminal outcome as stored in the fan-in record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutcomeRecord {
    pub idx: u32,
    pub url: String,
    #[serde(flatten)]
    pub outcome: Outcome,
    /// Highest escalation level reached. Named apart in JSON: the outcome is flattened beside it
    /// and `blocked` has a `level` of its own.
    #[serde(rename = "fetch_level")]
    pub level: u8,
    /// Object-store key of the analysed document, for `analysed` and `irrelevant`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
}

fn bad_json(e: serde_json::Error) -> StageError {
    StageError::permanent(format!("corrupt job record: {e}"))
}

/// Opens the job's fan-in record with `sources`. Returns the
/// sources the job is bound to: on a redelivered search message these are the ones the first
/// attempt chose, so a second, different selection can never be counted against the first.
pub(crate) async fn open_job<B: Body>(
    rt: &Runtime,
    env: &Envelope<B>,
    meta: JobMeta,
) -> Result<Vec<Source>, StageError> {
    let job = env.job_id.to_string();
    let query = meta.query.clone();
    let bytes = serde_json::to_vec(&meta).map_err(bad_json)?;
    let created = rt
        .store
        .fanin_open(&job, meta.sources.len() as u32, &bytes, rt.job_ttl())
        .await?;
    let meta = if created {
        // Counts the job as running in its batch's progress; a lost count only skews that
        // figure, so a store hiccup here must not fail the job.
        if let Err(e) = rt
            .store
            .batch_add(&env.batch_id.to_string(), crate::runtime::STARTED, 1)
            .await
        {
            tracing::warn!(error = %e, "could not count the job as started");
        }
        meta
    } else {
        let (_, stored) = rt
            .store
            .fanin_meta(&job)
            .await?
            .ok_or_else(|| StageError::retryable("fan-in record vanished after open"))?;
        serde_json::from_slice(&stored).map_err(bad_json)?
    };
    if meta.sources.is_empty() {
        let now = env.follow(SynthesizeTask {
            query: query.clone(),
            trigger: Trigger::Complete,
        });
        rt.publish(Queue::Synthesize, &now).await?;
    }
    Ok(meta.sources)
}

/// Arms the job's deadline timer: a synthesis request that waits in the broker's delay tiers
/// (re-armed by synthesize) until the deadline passes. Armed at submission, so a job whose
/// search never completes still ends.
pub(crate) async fn arm_deadline<B: Body>(
    rt: &Runtime,
    env: &Envelope<B>,
    query: &str,
) -> Result<(), StageError> {
    let timer = env.follow(SynthesizeTask {
        query: query.to_owned(),
        trigger: Trigger::Deadline,
    });
    rt.publish_delayed(Queue::Synthesize, &timer, until(env.deadline))
        .await
}

/// Time left until `deadline` (zero if passed).
pub fn until(deadline: chrono::DateTime<chrono::Utc>) -> Duration {
    (deadline - chrono::Utc::now())
        .to_std()
        .unwrap_or(Duration::ZERO)
}

/// Records one URL's terminal outcome; asks for synthesis when it completes the job.
///
/// The trigger is sent whenever the record is complete after this call, not only when this
/// call completed it: if a worker died between recording the last outcome and publishing the
/// trigger, the redelivered message must still send it. Synthesis itself is exactly-once.
pub(crate) async fn record_outcome<B: Body>(
    rt: &Runtime,
    env: &Envelope<B>,
    query: &str,
    record: OutcomeRecord,
) -> Result<(), StageError> {
    let bytes = serde_json::to_vec(&record).map_err(bad_json)?;
    let fanin = rt
        .store
        .fanin_record(&env.job_id.to_string(), record.idx, &bytes, rt.job_ttl())
        .await?;
    if fanin.newly_recorded {
        METRICS
            .outcomes
            .get_or_create(&labels(&[
                ("outcome", record.outcome.name()),
                ("level", LEVELS[usize::from(record.level.min(3))]),
            ]))
            .inc();
    }
    if fanin.complete() {
        let trigger = env.follow(SynthesizeTask {
            query: query.to_owned(),
            trigger: Trigger::Complete,
        });
        rt.publish(Queue::Synthesize, &trigger).await?;
    }
    Ok(())
}

/// Adds sources found by crawling from source `parent` to the job (at most `cap` crawled
/// sources per job) and returns those granted, numbered. Call it before the parent's own
/// outcome can be recorded, so the job cannot complete without them. A redelivered message
/// gets the first call's sources back, so every number names one URL.
pub(crate) async fn extend_job<B: Body>(
    rt: &Runtime,
    env: &Envelope<B>,
    parent: u32,
    found: &[Source],
    cap: u32,
) -> Result<Vec<Source>, StageError> {
    let bytes = serde_json::to_vec(found).map_err(bad_json)?;
    let job = env.job_id.to_string();
    let Some(ext) = (rt.store)
        .fanin_extend(&job, parent, &bytes, found.len() as u32, cap)
        .await?
    else {
        return Ok(Vec::new());
    };
    numbered(&ext)
}

/// Follow-up rounds grow a job as crawled links do, under parent numbers counted down from the
/// top of the range, far from any source's.
fn round_parent(n: u32) -> u32 {
    u32::MAX - n
}

fn is_round(parent: u32) -> bool {
    parent >= round_parent(trawl_config::MAX_ROUNDS)
}

/// Adds follow-up round `n`'s sources to the job, once per round, and returns those granted,
/// numbered. A round that adds nothing sends the job to synthesis: no outcome will.
pub(crate) async fn extend_round<B: Body>(
    rt: &Runtime,
    env: &Envelope<B>,
    query: &str,
    n: u32,
    found: &[Source],
) -> Result<Vec<Source>, StageError> {
    let granted = extend_job(rt, env, round_parent(n), found, u32::MAX).await?;
    if granted.is_empty() {
        let now = env.follow(SynthesizeTask {
            query: query.to_owned(),
            trigger: Trigger::Complete,
        });
        rt.publish(Queue::Synthesize, &now).await?;
    }
    Ok(granted)
}

/// The rounds of research a job has had: its first search, and each follow-up round since.
pub(crate) async fn rounds(rt: &Runtime, job: &str) -> Result<u32, StageError> {
    let extensions = rt.store.fanin_extensions(job).await?;
    Ok(1 + extensions.keys().filter(|p| is_round(**p)).count() as u32)
}

/// An extension's granted sources with their job-wide numbers.
fn numbered(ext: &trawl_store::Extension) -> Result<Vec<Source>, StageError> {
    let proposed: Vec<Source> = serde_json::from_slice(&ext.sources).map_err(bad_json)?;
    Ok(proposed
        .into_iter()
        .take(ext.granted as usize)
        .zip(ext.first..)
        .map(|(source, idx)| Source { idx, ..source })
        .collect())
}

/// What search decided for the job, without its crawled sources.
pub(crate) async fn meta(rt: &Runtime, job: &str) -> Result<Option<JobMeta>, StageError> {
    match rt.store.fanin_meta(job).await? {
        Some((_, meta)) => Ok(Some(serde_json::from_slice(&meta).map_err(bad_json)?)),
        None => Ok(None),
    }
}

/// The job's meta with every source it grew by (crawled links, follow-up rounds).
pub(crate) async fn grown_meta(rt: &Runtime, job: &str) -> Result<Option<JobMeta>, StageError> {
    let Some(mut meta) = meta(rt, job).await? else {
        return Ok(None);
    };
    for ext in rt.store.fanin_extensions(job).await?.values() {
        meta.sources.extend(numbered(ext)?);
    }
    Ok(Some(meta))
}

/// The job's meta (crawled sources included) and every outcome recorded so far.
pub async fn job_state(
    rt: &Runtime,
    job: &str,
) -> Result<Option<(JobMeta, Vec<OutcomeRecord>)>, StageError> {
    let Some(meta) = grown_meta(rt, job).await? else {
        return Ok(None);
    };
    let mut records = Vec::new();
    for bytes in rt.store.fanin_outcomes(job).await?.values() {
        records.push(serde_json::from_slice(bytes).map_err(bad_json)?);
    }
    Ok(Some((meta, records)))
}

/// How far a job's sources have come, for the displays that follow one job (`trawl run`'s
/// progress, MCP's research status and progress notifications).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Sources search chose, follow-up rounds and crawled links included.
    pub chosen: usize,
    /// Fetch attempts that ended, at either level. A page escalated to the browser counts
    /// twice, so this is capped at `chosen`.
    pub fetched: usize,
    /// Sources whose outcome is recorded, whatever it is.
    pub settled: usize,
    /// Sources read and analysed (relevant or not).
    pub read: usize,
}

impl Progress {
    /// Every source has an outcome: what remains is the report.
    pub fn all_settled(&self) -> bool {
        self.chosen > 0 && self.settled >= self.chosen
    }
}

/// The job's [`Progress`]; `None` until search has chosen its sources.
pub async fn progress(rt: &Runtime, job: &str) -> Result<Option<Progress>, StageError> {
    let Some((meta, records)) = job_state(rt, job).await? else {
        return Ok(None);
    };
    let counters = rt.store.job_counters(job).await?;
    let fetched: i64 = [Queue::Fetch, Queue::FetchBrowser]
        .iter()
        .filter_map(|q| counters.get(&crate::results::Counter::Messages.key(q.label())))
        .sum();
    let chosen = meta.sources.len();
    Ok(Some(Progress {
        chosen,
        fetched: (fetched.max(0) as usize).min(chosen),
        settled: records.len(),
        read: records.iter().filter(|r| r.doc.is_some()).count(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_records_flatten_the_outcome() {
        let r = OutcomeRecord {
            idx: 2,
            url: "http://a.test/".into(),
            outcome: Outcome::Failed {
                reason: "http 500".into(),
            },
            level: 0,
            doc: None,
        };
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["outcome"], "failed");
        assert_eq!(v["reason"], "http 500");
        assert_eq!(serde_json::from_value::<OutcomeRecord>(v).unwrap(), r);
        // `blocked` carries its own level: both must survive the round trip.
        let blocked = OutcomeRecord {
            outcome: Outcome::Blocked { level: 3 },
            level: 3,
            ..r
        };
        let bytes = serde_json::to_vec(&blocked).unwrap();
        assert_eq!(
            serde_json::from_slice::<OutcomeRecord>(&bytes).unwrap(),
            blocked
        );
    }
}
