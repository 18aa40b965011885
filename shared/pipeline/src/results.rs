//! A job's results as they are read back: its `job.json` ([`JobRecord`], written by synthesize
//! when the job ends) and the one record per job that `trawl results --format json|jsonl`
//! writes and `GET /v1/batches/{id}/results` streams ([`JobResult`], built by [`job_result`]).
//! One builder, so the local export, the API's and the CLI reading the API's cannot disagree.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use trawl_messages::{paths, JobRecord, JobState, Metadata, ReportWriter};
use uuid::Uuid;

use crate::batch::ManifestJob;
use crate::{Runtime, StageError};

/// A per-job counter in the store, kept by stage (or by `step: reason` for fallbacks) while the
/// job runs and read into `job.json` when it ends. Its key in the store is `<kind>.<of>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, strum::IntoStaticStr, strum::EnumString)]
#[cfg_attr(test, derive(strum::VariantArray))]
#[strum(serialize_all = "snake_case")]
pub enum Counter {
    /// Handling time, in milliseconds.
    Ms,
    /// Messages handled.
    #[strum(serialize = "n")]
    Messages,
    TokensIn,
    TokensOut,
    CostMicro,
    /// LLM requests whose usage the endpoint did not report (counts estimated).
    Estimated,
    /// LLM steps that fell back to their non-LLM path, by `step: reason`.
    Fallback,
}

impl Counter {
    /// The store key of this counter for `of` (a stage, or a fallback's `step: reason`).
    pub fn key(self, of: &str) -> String {
        format!("{}.{of}", <&str>::from(self))
    }

    /// A store key read back: the counter and what it counts for.
    pub fn parse(key: &str) -> Option<(Counter, &str)> {
        let (kind, of) = key.split_once('.')?;
        Some((kind.parse().ok()?, of))
    }
}

/// Fills a job record's per-stage maps from the job's counters ([`Counter`]).
pub fn add_counters(record: &mut JobRecord, counters: &BTreeMap<String, i64>) {
    for (key, &value) in counters {
        let Some((counter, of)) = Counter::parse(key) else {
            continue;
        };
        let map = match counter {
            Counter::Ms => &mut record.stage_ms,
            Counter::Messages => &mut record.stage_messages,
            Counter::TokensIn => &mut record.tokens_in,
            Counter::TokensOut => &mut record.tokens_out,
            Counter::CostMicro => &mut record.cost_microdollars,
            Counter::Estimated => &mut record.estimated_usage,
            Counter::Fallback => &mut record.llm_fallbacks,
        };
        *map.entry(of.to_owned()).or_default() += value;
    }
    record.total_cost_microdollars = record.cost_microdollars.values().sum();
}

/// One job of a batch with its results: a line of `trawl results --format jsonl` and of the
/// API's export.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct JobResult {
    /// The user's id for the job, as submitted; without one, the question's line number in the
    /// batch file, or its position (from 1) in the API request.
    pub id: String,
    /// The user's metadata, as submitted (`{}` when none was).
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub metadata: Metadata,
    pub job_id: Uuid,
    pub query: String,
    /// pending, cancelled, or how the job ended: done, partial, no_sources, no_answer, failed.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub status: JobState,
    /// How the report was written (`llm`, `extractive` …), once the job has ended.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    pub writer: Option<ReportWriter>,
    /// From submission to the end of the job, once it has ended.
    pub duration_ms: Option<i64>,
    /// The job's LLM spend in dollars, once it has ended.
    pub cost_usd: Option<f64>,
    /// The report in markdown with numbered citations, once the job has ended.
    pub report: Option<String>,
    /// The job's `sources.json` (every selected source and what became of it); null until the
    /// job has ended.
    pub sources: Value,
    /// The job's fields, each with its value, status, sources and quote (`answer.json`), when
    /// it asked for fields and has ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub answer: Option<trawl_messages::Answer>,
    /// Every work product of an ended job by name (`report.md`, `job.json`, `docs/1.json` …)
    /// as text; only when asked for (`work_products=true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_products: Option<BTreeMap<String, String>>,
    /// The fields the job asked for, in order: its answer's, or what was submitted while it
    /// has none. A table's columns are these, so every page of a CSV export has the same
    /// header however many of its jobs have ended. Read from the store, not part of a line.
    #[serde(skip)]
    pub asked: Vec<String>,
}

/// Reads one job's results: its `job.json`, report and sources and, when `work_products`, every
/// work product. A job that has not ended yet has its status in `statuses` (the batch's, from
/// [`crate::batch::job_statuses`]: `pending`, `cancelled`) and no report. Reads only this job's
/// objects, so a caller streaming a batch holds one job at a time.
pub async fn job_result(
    rt: &Runtime,
    batch: Uuid,
    job: &ManifestJob,
    statuses: &BTreeMap<String, JobState>,
    work_products: bool,
) -> Result<JobResult, StageError> {
    let id = job.job_id;
    let record: Option<JobRecord> = match rt.objects.get(&paths::job_record(batch, id)).await? {
        Some(bytes) => Some(
            serde_json::from_slice(&bytes)
                .map_err(|e| StageError::permanent(format!("corrupt job.json of job {id}: {e}")))?,
        ),
        None => None,
    };
    let status = match &record {
        Some(r) => JobState::Ended(r.status),
        None => (statuses.get(&id.to_string()).copied()).unwrap_or_default(),
    };
    let report = rt
        .objects
        .get(&paths::report(batch, id))
        .await?
        .map(|b| String::from_utf8_lossy(&b).into_owned());
    let sources = match rt.objects.get(&paths::sources(batch, id)).await? {
        Some(bytes) => serde_json::from_slice(&bytes)
            .map_err(|e| StageError::permanent(format!("corrupt sources.json of job {id}: {e}")))?,
        None => Value::Null,
    };
    let answer: Option<trawl_messages::Answer> =
        match rt.objects.get(&paths::answer(batch, id)).await? {
            Some(bytes) => Some(serde_json::from_slice(&bytes).map_err(|e| {
                StageError::permanent(format!("corrupt answer.json of job {id}: {e}"))
            })?),
            None => None,
        };
    // An ended job that asked for fields has its answer; only one not ended yet (pending,
    // cancelled) is read for what it asked, so an export of ended jobs reads nothing more.
    let asked = match (&answer, &record) {
        (Some(a), _) => a.fields.iter().map(|(name, _)| name.clone()).collect(),
        (None, Some(_)) => Vec::new(),
        (None, None) => (crate::batch::job_input(rt, batch, id).await?)
            .and_then(|input| input.options.fields)
            .map(|f| f.fields.into_iter().map(|f| f.name).collect())
            .unwrap_or_default(),
    };
    let products = match (&report, work_products) {
        (_, false) => None,
        (None, true) => Some(BTreeMap::new()),
        (Some(report), true) => Some(read_products(rt, batch, id, report).await?),
    };
    Ok(JobResult {
        id: job.id.clone(),
        metadata: job.metadata.clone(),
        job_id: id,
        query: job.query.clone(),
        status,
        writer: record.as_ref().map(|r| r.writer.clone()),
        duration_ms: record.as_ref().map(|r| r.duration_ms),
        cost_usd: record
            .as_ref()
            .map(|r| r.total_cost_microdollars as f64 / 1e6),
        report,
        sources,
        answer,
        work_products: products,
        asked,
    })
}

/// Every work product of an ended job, by its name under the job's folder. Work products are
/// text (markdown and JSON) that trawl wrote as UTF-8.
async fn read_products(
    rt: &Runtime,
    batch: Uuid,
    job: Uuid,
    report: &str,
) -> Result<BTreeMap<String, String>, StageError> {
    let dir = paths::job_dir(batch, job);
    let mut products = BTreeMap::new();
    for name in rt.objects.list_files(&dir).await? {
        let text = if name == "report.md" {
            report.to_owned()
        } else {
            match rt.objects.get(&paths::job_file(batch, job, &name)).await? {
                Some(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                // Listed, then gone: nothing to copy.
                None => continue,
            }
        };
        products.insert(name, text);
    }
    Ok(products)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_fill_per_stage_maps() {
        let mut r = JobRecord::default();
        let counters: BTreeMap<String, i64> = [
            ("ms.fetch", 120),
            ("n.fetch", 3),
            ("cost_micro.search", 40),
            ("cost_micro.synthesize", 60),
            ("tokens_in.search", 900),
            ("odd", 1),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), *v))
        .collect();
        add_counters(&mut r, &counters);
        assert_eq!(r.stage_ms["fetch"], 120);
        assert_eq!(r.stage_messages["fetch"], 3);
        assert_eq!(r.total_cost_microdollars, 100);
        assert_eq!(r.tokens_in["search"], 900);
    }

    #[test]
    fn every_counter_reads_back_as_written() {
        for &counter in <Counter as strum::VariantArray>::VARIANTS {
            let key = counter.key("relevance: timeout");
            assert_eq!(Counter::parse(&key), Some((counter, "relevance: timeout")));
        }
        assert_eq!(Counter::parse("odd"), None);
        assert_eq!(Counter::parse("unknown.fetch"), None);
    }

    #[test]
    fn work_products_are_left_out_unless_asked_for() {
        let mut result = JobResult {
            id: "7".into(),
            metadata: Metadata::new(),
            job_id: Uuid::nil(),
            query: "q".into(),
            status: JobState::Pending,
            writer: None,
            duration_ms: None,
            cost_usd: None,
            report: None,
            sources: Value::Null,
            answer: None,
            work_products: None,
            asked: vec!["hq".into()],
        };
        let json = serde_json::to_value(&result).unwrap();
        assert!(json.get("asked").is_none(), "{json}");
        assert!(json.get("work_products").is_none(), "{json}");
        assert_eq!(json["metadata"], serde_json::json!({}));
        // The fields asked are read from the store, not from a line: they do not come back.
        result.work_products = Some(BTreeMap::from([("report.md".into(), "# q".into())]));
        let back: JobResult =
            serde_json::from_str(&serde_json::to_string(&result).unwrap()).unwrap();
        assert_eq!(
            back,
            JobResult {
                asked: Vec::new(),
                ..result
            }
        );
    }
}
