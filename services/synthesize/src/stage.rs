//! The synthesize stage's handler. See `shared/pipeline/src/fanin.md` for the exactly-once
//! argument; in short: a lease keeps two triggers from working at once, and `batch_finish`
//! decides which synthesis counts.

use std::collections::BTreeMap;
use std::time::Duration;

use async_trait::async_trait;
use serde::Serialize;
use tracing::info;
use trawl_messages::{
    paths, AnalysedDoc, Envelope, JobStatus, Outcome, Queue, ResearchResult, SynthesizeTask,
    Trigger,
};
use trawl_pipeline::fanin::{job_state, until, OutcomeRecord};
use trawl_pipeline::metrics::{labels, METRICS};
use trawl_pipeline::{Handled, Runtime, Stage, StageError};

use crate::report::{self, Gaps};

/// How long one synthesis may hold a job before another worker may take over. An extractive
/// synthesis takes well under a second; a killed holder delays its job by at most this much.
const LEASE: Duration = Duration::from_secs(20);

pub struct SynthesizeStage;

/// One entry of `sources.json`: every selected source and what became of it.
#[derive(Serialize)]
struct SourceEntry<'a> {
    idx: u32,
    url: &'a str,
    title: &'a str,
    outcome: Option<&'a Outcome>,
    cited_as: Option<u32>,
    relevance: Option<f64>,
    level: Option<u8>,
    bytes: Option<u64>,
}

#[async_trait]
impl Stage for SynthesizeStage {
    type Input = SynthesizeTask;

    async fn handle(
        &self,
        rt: &Runtime,
        msg: Envelope<SynthesizeTask>,
    ) -> Result<Handled, StageError> {
        let job = msg.job_id.to_string();
        let Some((meta, records)) = job_state(rt, &job).await? else {
            // No fan-in record: the search has not finished. Only the deadline ends that wait.
            let left = until(msg.deadline);
            return match msg.body.trigger {
                Trigger::Deadline if !left.is_zero() => Ok(Handled::Later(left)),
                Trigger::Complete => Ok(Handled::Done),
                Trigger::Deadline => search_never_finished(rt, &msg)
                    .await
                    .map(|()| Handled::Done),
            };
        };
        let complete = records.len() >= meta.sources.len();
        if !complete {
            let left = until(msg.deadline);
            match msg.body.trigger {
                Trigger::Deadline if !left.is_zero() => return Ok(Handled::Later(left)),
                Trigger::Complete => return Ok(Handled::Done),
                Trigger::Deadline => info!(
                    received = records.len(),
                    expected = meta.sources.len(),
                    "deadline passed; synthesising what arrived"
                ),
            }
        }
        let lease = format!("synth:{job}");
        if !rt.store.try_lock(&lease, LEASE).await? {
            return Ok(Handled::Later(Duration::from_secs(5)));
        }
        let result = synthesise(rt, &msg, &meta.query, &meta.sources, &records, complete).await;
        rt.store.unlock(&lease).await?;
        result.map(|()| Handled::Done)
    }
}

async fn synthesise(
    rt: &Runtime,
    msg: &Envelope<SynthesizeTask>,
    query: &str,
    sources: &[trawl_messages::Source],
    records: &[OutcomeRecord],
    complete: bool,
) -> Result<(), StageError> {
    let by_idx: BTreeMap<u32, &OutcomeRecord> = records.iter().map(|r| (r.idx, r)).collect();
    let mut docs: Vec<AnalysedDoc> = Vec::new();
    let mut gaps = Gaps::default();
    for record in records {
        match (&record.outcome, &record.doc) {
            (Outcome::Analysed, Some(key)) => {
                match rt.objects.get(key).await? {
                    Some(bytes) => docs.push(serde_json::from_slice(&bytes).map_err(|e| {
                        StageError::permanent(format!("corrupt document {key}: {e}"))
                    })?),
                    None => {
                        return Err(StageError::retryable(format!(
                            "document {key} not yet readable"
                        )))
                    }
                }
            }
            (outcome, _) => *gaps.outcomes.entry(outcome.name().to_owned()).or_default() += 1,
        }
    }
    gaps.missing = sources
        .iter()
        .filter(|s| !by_idx.contains_key(&s.idx))
        .map(|s| s.url.clone())
        .collect();
    docs.sort_by(|a, b| b.relevance.total_cmp(&a.relevance));

    let report = report::write(query, &docs, &gaps, rt.config.synthesize.sentences);
    let cited: BTreeMap<u32, u32> = report.citations.iter().map(|c| (c.idx, c.n)).collect();
    let entries: Vec<SourceEntry> = sources
        .iter()
        .map(|s| {
            let record = by_idx.get(&s.idx);
            let doc = docs.iter().find(|d| d.source.idx == s.idx);
            SourceEntry {
                idx: s.idx,
                url: &s.url,
                title: doc.map_or(&s.title, |d| &d.title),
                outcome: record.map(|r| &r.outcome),
                cited_as: cited.get(&s.idx).copied(),
                relevance: doc.map(|d| d.relevance),
                level: record.map(|r| r.level),
                bytes: doc.map(|d| d.bytes),
            }
        })
        .collect();
    let (batch, job) = (msg.batch_id, msg.job_id);
    rt.put_json(&paths::sources(batch, job), &entries).await?;
    rt.objects
        .put(&paths::report(batch, job), report.markdown.as_bytes())
        .await?;

    let status = if !complete {
        JobStatus::Partial
    } else if report.citations.is_empty() {
        JobStatus::NoSources
    } else {
        JobStatus::Done
    };
    let mut outcomes: BTreeMap<String, u32> = gaps.outcomes.clone();
    outcomes.insert("analysed".into(), docs.len() as u32);
    if !gaps.missing.is_empty() {
        outcomes.insert("missing".into(), gaps.missing.len() as u32);
    }
    let result = ResearchResult {
        query: query.to_owned(),
        status,
        report: paths::report(batch, job),
        citations: report.citations,
        outcomes,
    };
    finish(rt, msg, result).await
}

/// Ends a job whose search never opened its fan-in record before the deadline.
async fn search_never_finished(
    rt: &Runtime,
    msg: &Envelope<SynthesizeTask>,
) -> Result<(), StageError> {
    let query = &msg.body.query;
    let markdown = format!(
        "# {query}\n\nThe search for this question did not complete before the job's deadline, \
         so no source was read and there is nothing to cite. Its message is in the dead-letter \
         queue with the reason.\n"
    );
    rt.objects
        .put(
            &paths::report(msg.batch_id, msg.job_id),
            markdown.as_bytes(),
        )
        .await?;
    let result = ResearchResult {
        query: query.clone(),
        status: JobStatus::Failed,
        report: paths::report(msg.batch_id, msg.job_id),
        citations: Vec::new(),
        outcomes: BTreeMap::new(),
    };
    finish(rt, msg, result).await
}

/// Announces the result, then records the job as ended.
async fn finish(
    rt: &Runtime,
    msg: &Envelope<SynthesizeTask>,
    result: ResearchResult,
) -> Result<(), StageError> {
    let status = serde_json::to_value(result.status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let cited = result.citations.len();
    // Notify first, then finish: a worker dying between the two repeats the notification
    // (consumers of trawl.results key on job_id), while `batch_finish` counts the job once.
    // The other order could lose the notification for good.
    rt.publish(Queue::Results, &msg.follow(result)).await?;
    if rt
        .store
        .batch_finish(&msg.batch_id.to_string(), &msg.job_id.to_string(), &status)
        .await?
    {
        METRICS
            .jobs
            .get_or_create(&labels(&[("status", &status)]))
            .inc();
    }
    info!(%status, cited, "job finished");
    Ok(())
}
