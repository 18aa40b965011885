//! The synthesize stage's handler. See `shared/pipeline/src/fanin.md` for the exactly-once
//! argument; in short: a lease keeps two triggers from working at once, and `batch_finish`
//! decides which synthesis counts.

use std::collections::BTreeMap;
use std::time::Duration;

use async_trait::async_trait;
use futures_util::StreamExt;
use serde::Serialize;
use tracing::info;
use tracing::warn;
use trawl_config::Config;
use trawl_llm::{Fallback, Llm};
use trawl_messages::{
    paths, AnalysedDoc, Citation, Envelope, JobRecord, JobStatus, Outcome, Queue, ReportWriter,
    ResearchResult, RoundRecord, SearchRecord, Source, SynthesizeTask, Trigger,
};
use trawl_pipeline::batch::{job_input, options};
use trawl_pipeline::fanin::{job_state, until, JobMeta, OutcomeRecord};
use trawl_pipeline::metrics::{labels, METRICS};
use trawl_pipeline::results::add_counters;
use trawl_pipeline::{ErrorClass, Handled, Job, JobLlm, Runtime, Stage, StageError};

use crate::answer;
use crate::attribution::Verdict;
use crate::conflicts::detect_in;
use crate::products::{search_md, sources_md, write_summary};
use crate::report::{self, Gaps, Material, Report};
use crate::rounds;
use crate::webhook::{Event, Webhooks};

/// How long one synthesis may hold a job before another worker may take over. An extractive
/// synthesis takes well under a second; a killed holder delays its job by at most this much.
const LEASE: Duration = Duration::from_secs(20);

/// Why the synthesize stage could not be built from its config.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error(transparent)]
    Llm(#[from] trawl_llm::LlmError),
    #[error(transparent)]
    Webhooks(#[from] crate::webhook::WebhookSetupError),
}

pub struct SynthesizeStage {
    llm: Option<Llm>,
    webhooks: Webhooks,
}

impl SynthesizeStage {
    /// Builds the stage with secrets (LLM key, webhook secret) from the process environment.
    pub fn new(config: &Config) -> Result<Self, BuildError> {
        Self::with_env(config, &std::env::vars().collect())
    }

    pub fn with_env(config: &Config, env: &BTreeMap<String, String>) -> Result<Self, BuildError> {
        let llm = match &config.llm {
            Some(cfg) => Some(Llm::new(cfg, env)?),
            None => None,
        };
        let secret = env
            .get(&config.synthesize.webhook_secret_env)
            .filter(|s| !s.is_empty())
            .cloned();
        let webhooks = Webhooks::new(
            secret,
            &config.fetch,
            config.synthesize.webhook_attempts,
            Duration::from_secs(1),
        )?;
        Ok(SynthesizeStage { llm, webhooks })
    }
}

/// One entry of `sources.json`: every selected source and what became of it.
#[derive(Serialize)]
struct SourceEntry<'a> {
    idx: u32,
    url: &'a str,
    title: &'a str,
    outcome: Option<&'a Outcome>,
    cited_as: Option<u32>,
    /// The page of a document (a PDF) it is cited at.
    #[serde(skip_serializing_if = "Option::is_none")]
    cited_page: Option<u32>,
    relevance: Option<f64>,
    level: Option<u8>,
    bytes: Option<u64>,
    /// The source's own language as clean detected it (`und` when unknown).
    #[serde(skip_serializing_if = "Option::is_none")]
    language: Option<&'a str>,
    /// When the page was fetched, if the job read it from the fleet's page cache.
    #[serde(skip_serializing_if = "Option::is_none")]
    cached_at: Option<chrono::DateTime<chrono::Utc>>,
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
                Trigger::Deadline => search_never_finished(self, rt, &msg)
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
        // A guard: a handler cut at its message timeout (or a panic) lets the lease go too.
        let Some(lease) = trawl_store::lock(&rt.store, &lease, LEASE).await? else {
            return Ok(Handled::Later(Duration::from_secs(5)));
        };
        let result = synthesise(self, rt, &msg, &meta, &records, complete).await;
        lease.release().await?;
        result.map(|()| Handled::Done)
    }

    fn footprint(&self, _config: &Config, len: usize) -> u64 {
        SYNTHESIS_FOOTPRINT + len as u64
    }
}

/// Documents a job's synthesis reads from a remote object store at once.
const DOC_READS: usize = 8;

/// How many times its documents' stored bytes a synthesis holds: as read, parsed, and the
/// context and report made of them.
const DOC_MEMORY_FACTOR: u64 = 3;

/// What the worker reserves for a synthesis before it knows its documents: a job's usual dozen
/// sources, analysed, several times over.
const SYNTHESIS_FOOTPRINT: u64 = 4 << 20;

/// Synthesis of a job whose outcomes are in (or whose deadline passed, `complete` false):
/// read its documents, write the report, save the work products, end the job.
async fn synthesise(
    stage: &SynthesizeStage,
    rt: &Runtime,
    msg: &Envelope<SynthesizeTask>,
    meta: &JobMeta,
    records: &[OutcomeRecord],
    complete: bool,
) -> Result<(), StageError> {
    let (batch, job) = (msg.batch_id, msg.job_id);
    let mut docs = read_docs(rt, records).await?;
    docs.sort_by(|a, b| b.relevance.total_cmp(&a.relevance));
    let input = read_input(rt, batch, job).await?;
    let ctx = Job::new(rt, msg);
    let rounds = ctx.rounds().await?;
    if complete && follow_up(stage, &ctx, meta, &docs, input.as_ref(), rounds).await? {
        return Ok(());
    }
    let gaps = Gaps {
        rounds: round_records(rt, msg, rounds).await?,
        ..gaps_of(&meta.sources, records)
    };
    // Search recorded the job's language: its option, else the question's.
    let lang = trawl_text::Lang::from_tag(&meta.language).unwrap_or_default();
    // A job's fields have their own answer (and conflicts): the prose reads the question's.
    let points = asked_points(meta, input.as_ref());
    let conflicts = detect_in(&meta.query, lang, &points, &docs);
    let mut material = Material {
        question: &meta.query,
        sub_queries: &meta.sub_queries,
        data_points: &points,
        docs: &docs,
        conflicts: &conflicts,
        gaps: &gaps,
        unverified: rt.config.report.unverified,
        shape: (input.as_ref())
            .and_then(|i| i.options.report_type)
            .unwrap_or(rt.config.report.kind),
        lang,
        findings: None,
    };
    let findings = find_fields(stage, &ctx, &material, input.as_ref()).await?;
    material.findings = findings.as_ref();
    let mut job_record = JobRecord {
        conflicts: conflicts.len(),
        ..Default::default()
    };
    let language = report_language(&rt.config.synthesize.language, input.as_ref(), meta);
    let report = write_report(stage, &ctx, &material, &input, &language, &mut job_record).await?;
    let search = save_products(rt, msg, meta, records, &docs, &report).await?;

    let status = status_of(complete, report.citations.len(), docs.len());
    let mut outcomes: BTreeMap<String, u32> = gaps.outcomes.clone();
    outcomes.insert(
        "analysed".into(),
        docs.iter().filter(|d| d.is_relevant).count() as u32,
    );
    if !gaps.missing.is_empty() {
        outcomes.insert("missing".into(), gaps.missing.len() as u32);
    }
    add_errors(&mut job_record, search.as_ref(), records);
    job_record.analysis = search.map(|s| s.analysis);
    job_record.sources_selected = meta.sources.len();
    describe(&mut job_record, &report);
    job_record.rounds = gaps.rounds.clone();
    job_record.outcomes = outcomes.clone();
    let result = ResearchResult {
        query: meta.query.clone(),
        status,
        report: paths::report(batch, job),
        citations: report.citations,
        outcomes,
    };
    let ended = Ended {
        result,
        record: job_record,
        input,
        answer: report.answer,
    };
    finish(stage, rt, msg, ended).await
}

/// The job's data points other than its fields' (search adds those for clean to extract, and
/// a follow-up round to look for).
fn asked_points(meta: &JobMeta, input: Option<&trawl_messages::JobInput>) -> Vec<String> {
    let fields = input.and_then(|i| i.options.fields.as_ref());
    let points: Vec<String> =
        fields.map_or_else(Vec::new, |f| f.fields.iter().map(|f| f.point()).collect());
    (meta.data_points.iter())
        .filter(|p| !points.contains(p))
        .cloned()
        .collect()
}

/// What `job.json` says of the report: its citations, claims, writer and whether it answers.
fn describe(job_record: &mut JobRecord, report: &Report) {
    job_record.sources_cited = report.citations.len();
    job_record.removed_citations = report.removed_citations;
    job_record.claims = report.claims.len();
    job_record.unsupported_claims = (report.claims.iter())
        .filter(|c| matches!(c.verdict, Verdict::Unverified | Verdict::Removed))
        .count();
    job_record.writer = report.writer.clone();
    job_record.answerable = report.answerability.answerable;
    job_record.answer_reason = report.answerability.reason.clone();
}

/// Starts the job's next round of research when something is still lacking and the rounds,
/// the job's `max_urls`, the deadline (`research.min_secs_left`) and the batch's budget allow;
/// true when it did.
async fn follow_up(
    stage: &SynthesizeStage,
    job: &Job<'_, SynthesizeTask>,
    meta: &JobMeta,
    docs: &[AnalysedDoc],
    input: Option<&trawl_messages::JobInput>,
    done: u32,
) -> Result<bool, StageError> {
    let cfg = &job.rt().config.research;
    let Some(mut round) = rounds::next(meta, docs, done, cfg.max_rounds) else {
        return Ok(false);
    };
    let (query, options) = match input {
        Some(i) => (i.query.clone(), i.options.clone()),
        None => (meta.query.clone(), Default::default()),
    };
    let llm = job.llm(stage.llm.as_ref()).await?;
    // A job's own `max_urls` bounds all its rounds together; a job that does not search reads
    // only its own URLs.
    if options.max_urls.is_some_and(|m| meta.sources.len() >= m)
        || !options.searches()
        || until(job.envelope().deadline) < Duration::from_secs(cfg.min_secs_left)
        || matches!(llm, JobLlm::BudgetSpent)
    {
        return Ok(false);
    }
    if let Some(llm) = llm.ready() {
        if let Err(e) = rounds::plan(llm, &meta.query, &mut round).await {
            warn!(error = %e, "follow-up searches planned without the LLM");
        }
        job.charge("synthesize", llm).await?;
    }
    info!(round = round.n, why = ?round.why, queries = ?round.queries, "follow-up research round");
    job.follow_up(query, options, round).await?;
    Ok(true)
}

/// The follow-up rounds of a job that has had `done` rounds, from search's records of them.
async fn round_records(
    rt: &Runtime,
    msg: &Envelope<SynthesizeTask>,
    done: u32,
) -> Result<Vec<RoundRecord>, StageError> {
    let mut out = Vec::new();
    for n in 2..=done {
        let key = paths::search_round(msg.batch_id, msg.job_id, n);
        let Some(bytes) = rt.objects.get(&key).await? else {
            continue;
        };
        let record: SearchRecord = serde_json::from_slice(&bytes)
            .map_err(|e| StageError::permanent(format!("corrupt {key}: {e}")))?;
        out.push(RoundRecord {
            round: record.round.unwrap_or_default(),
            selected: (record.results.into_iter())
                .filter(|s| s.selected)
                .map(|s| s.url)
                .collect(),
        });
    }
    Ok(out)
}

/// How a job ends: partial at its deadline; done when its report cites something; otherwise
/// `no_sources` when nothing was read and `no_answer` when what was read does not answer.
fn status_of(complete: bool, cited: usize, read: usize) -> JobStatus {
    match (complete, cited, read) {
        (false, ..) => JobStatus::Partial,
        (true, 1.., _) => JobStatus::Done,
        (true, 0, 0) => JobStatus::NoSources,
        (true, 0, _) => JobStatus::NoAnswer,
    }
}

/// Provider failures and failed sources, from the search record and outcomes.
fn add_errors(record: &mut JobRecord, search: Option<&SearchRecord>, outcomes: &[OutcomeRecord]) {
    for a in search.iter().flat_map(|s| &s.attempts) {
        if a.outcome == "cached" {
            record.search_cache_hits += 1;
        } else if a.failed() {
            record.errors.push(format!("search: {}", a.detail));
        }
    }
    for r in outcomes {
        if let Outcome::Failed { reason } = &r.outcome {
            record.errors.push(format!("{}: {reason}", r.url));
        }
    }
}

/// Why selected sources are not in the report: the outcomes that were not `analysed`, and
/// the sources whose outcome has not arrived.
fn gaps_of(sources: &[Source], records: &[OutcomeRecord]) -> Gaps {
    let mut gaps = Gaps::default();
    for record in records {
        if record.outcome != Outcome::Analysed {
            *gaps
                .outcomes
                .entry(record.outcome.name().to_owned())
                .or_default() += 1;
        }
    }
    let arrived: std::collections::BTreeSet<u32> = records.iter().map(|r| r.idx).collect();
    gaps.missing = (sources.iter())
        .filter(|s| !arrived.contains(&s.idx))
        .map(|s| s.url.clone())
        .collect();
    gaps
}

/// The job's analysed documents (irrelevant ones too: their text belongs in sources.md).
async fn read_docs(
    rt: &Runtime,
    records: &[OutcomeRecord],
) -> Result<Vec<AnalysedDoc>, StageError> {
    // A few at a time from a remote store, where each read is a round trip; one at a time
    // from a local directory, where a read is a system call and overlapping them only holds
    // more buffers. Owned keys and store handles: borrowed ones trip the compiler's check that
    // the handler's future is Send for every lifetime.
    let keys: Vec<String> = records.iter().filter_map(|r| r.doc.clone()).collect();
    let read: Vec<_> = futures_util::stream::iter(keys)
        .map(|key| {
            let objects = rt.objects.clone();
            async move {
                let bytes = objects.get(&key).await;
                (key, bytes)
            }
        })
        .buffered(if rt.objects.local_dir().is_some() {
            1
        } else {
            DOC_READS
        })
        .collect()
        .await;
    let read_bytes: usize = (read.iter())
        .map(|(_, bytes)| bytes.as_ref().map_or(0, |b| b.as_ref().map_or(0, Vec::len)))
        .sum();
    // The documents as read and parsed, and the context and report made of them.
    trawl_pipeline::in_flight::hold(
        DOC_MEMORY_FACTOR * read_bytes as u64 + trawl_pipeline::worker::BASE_FOOTPRINT,
    );
    let mut docs: Vec<AnalysedDoc> = Vec::with_capacity(read.len());
    for (key, bytes) in read {
        let Some(bytes) = bytes? else {
            return Err(StageError::retryable(format!(
                "document {key} not yet readable"
            )));
        };
        docs.push(
            serde_json::from_slice(&bytes)
                .map_err(|e| StageError::permanent(format!("corrupt document {key}: {e}")))?,
        );
    }
    Ok(docs)
}

/// The language the LLM writes the report in: the job's `language` option, else the configured
/// `synthesize.language`, else the question's, detected by search; empty when none is known
/// (the prompt then asks for the question's language).
fn report_language(
    configured: &str,
    input: Option<&trawl_messages::JobInput>,
    meta: &JobMeta,
) -> String {
    let named = |tag: &str| trawl_text::Lang::from_tag(tag).and_then(|l| l.english_name());
    if let Some(name) = (input.and_then(|i| i.options.language.as_deref())).and_then(named) {
        return name.to_owned();
    }
    if !configured.trim().is_empty() {
        return configured.to_owned();
    }
    named(&meta.language).unwrap_or_default().to_owned()
}

/// The report: the model's when there is one, the batch's budget allows it and some source
/// answers ([`Material::answering`]); the extractive one otherwise, or when the model's fails (its writer says why).
async fn write_report(
    stage: &SynthesizeStage,
    job: &Job<'_, SynthesizeTask>,
    material: &Material<'_>,
    input: &Option<trawl_messages::JobInput>,
    language: &str,
    job_record: &mut JobRecord,
) -> Result<Report, StageError> {
    let rt = job.rt();
    let cfg = &rt.config.synthesize;
    let llm = job.llm(stage.llm.as_ref()).await?;
    let relevant = !material.answering().docs.is_empty();
    let Some(model) = llm.ready().filter(|_| relevant) else {
        let mut r = material.extractive(cfg.sentences);
        if let JobLlm::BudgetSpent = llm {
            r.writer = ReportWriter::BudgetSpent;
        }
        return Ok(r);
    };
    let style = report::llm::Style {
        context_tokens: cfg.max_tokens,
        // The job's own report allowance, if it asked for one.
        answer_tokens: (input.as_ref())
            .and_then(|i| i.options.report_max_tokens)
            .unwrap_or(rt.config.report.max_tokens),
        language,
        sentences: cfg.sentences,
    };
    let written = report::llm::write(model, material, &style).await;
    job.charge("synthesize", model).await?;
    Ok(match written {
        Ok(w) => {
            job_record.context_tokens = w.context_tokens;
            job_record.tokenizer = w.tokenizer.into();
            w.report
        }
        Err(e) => {
            // The writer names the reason: the report's note.
            let _ = (Fallback {
                step: "report",
                instead: "extractive report",
                error: &e,
            })
            .emit();
            let mut r = material.extractive(cfg.sentences);
            r.writer = match e {
                trawl_llm::LlmError::Budget(_) => ReportWriter::BudgetSpent,
                e => ReportWriter::LlmFailed(e.to_string()),
            };
            r
        }
    })
}

/// The job's fields from the sources its report may cite: the model's values where one is
/// ready and each is stated by the source it names, the extractors' otherwise.
async fn find_fields(
    stage: &SynthesizeStage,
    job: &Job<'_, SynthesizeTask>,
    material: &Material<'_>,
    input: Option<&trawl_messages::JobInput>,
) -> Result<Option<answer::Findings>, StageError> {
    let Some(fields) = input.and_then(|i| i.options.fields.as_ref()) else {
        return Ok(None);
    };
    let answering = material.answering();
    let about = answer::About {
        entities: &answering.entities,
        lang: material.lang,
        terms: trawl_text::terms_in(material.question, material.lang),
        wanted: trawl_text::wanted::Wanted::of(material.question, material.lang),
    };
    let extracted = answer::extracted(fields, &answering.docs, &about);
    let llm = job.llm(stage.llm.as_ref()).await?;
    let Some(model) = llm.ready().filter(|_| !answering.docs.is_empty()) else {
        return Ok(Some(extracted));
    };
    let asked = answer::ask::ask(model, material.question, fields, &answering.docs).await;
    job.charge("synthesize", model).await?;
    Ok(Some(match asked {
        Ok(given) => {
            let label = |n: u32| n.checked_sub(1);
            answer::ask::read(fields, &given, &answering.docs, label, extracted)
        }
        Err(e) => {
            let note = (Fallback {
                step: "fields",
                instead: "the extractors' values",
                error: &e,
            })
            .emit();
            answer::Findings {
                notes: vec![note],
                ..extracted
            }
        }
    }))
}

/// Saves `sources.json`, `sources.md`, `search.md` and `report.md`; returns the job's search
/// record (`search.json`; none if absent or unreadable) for its `job.json`.
async fn save_products(
    rt: &Runtime,
    msg: &Envelope<SynthesizeTask>,
    meta: &JobMeta,
    records: &[OutcomeRecord],
    docs: &[AnalysedDoc],
    report: &Report,
) -> Result<Option<SearchRecord>, StageError> {
    let (batch, job) = (msg.batch_id, msg.job_id);
    let by_idx: BTreeMap<u32, &OutcomeRecord> = records.iter().map(|r| (r.idx, r)).collect();
    let cited: BTreeMap<u32, &Citation> = report.citations.iter().map(|c| (c.idx, c)).collect();
    let entries: Vec<SourceEntry> = (meta.sources.iter())
        .map(|s| {
            let record = by_idx.get(&s.idx);
            let doc = docs.iter().find(|d| d.source.idx == s.idx);
            SourceEntry {
                idx: s.idx,
                url: &s.url,
                title: doc.map_or(&s.title, |d| &d.title),
                outcome: record.map(|r| &r.outcome),
                cited_as: cited.get(&s.idx).map(|c| c.n),
                cited_page: cited.get(&s.idx).and_then(|c| c.page),
                relevance: doc.map(|d| d.relevance),
                level: record.map(|r| r.level),
                bytes: doc.map(|d| d.bytes),
                language: doc.map(|d| d.language.as_str()).filter(|l| !l.is_empty()),
                cached_at: doc.and_then(|d| d.cached_at),
            }
        })
        .collect();
    let search = match rt.objects.get(&paths::search(batch, job)).await? {
        // An unreadable record costs the job its search.md, never its report.
        Some(bytes) => serde_json::from_slice::<SearchRecord>(&bytes)
            .inspect_err(|e| warn!(error = %e, "the job's search.json is unreadable"))
            .ok(),
        None => None,
    };
    let query = &meta.query;
    rt.put_json(&paths::sources(batch, job), &entries).await?;
    rt.objects
        .put(
            &paths::sources_md(batch, job),
            sources_md(query, docs, records).as_bytes(),
        )
        .await?;
    if let Some(search) = &search {
        rt.objects
            .put(
                &paths::search_md(batch, job),
                search_md(query, search).as_bytes(),
            )
            .await?;
    }
    rt.put_json(&paths::claims(batch, job), &report.claims)
        .await?;
    if let Some(answer) = &report.answer {
        rt.put_json(&paths::answer(batch, job), answer).await?;
    }
    rt.objects
        .put(&paths::report(batch, job), report.markdown.as_bytes())
        .await?;
    Ok(search)
}

/// The job's own small record of what was submitted (`input.json`: id, metadata, options),
/// not the batch manifest, which grows with the batch. A job submitted before the record
/// existed has none, and an unreadable one costs the job its id and options, never its report.
async fn read_input(
    rt: &Runtime,
    batch: uuid::Uuid,
    job: uuid::Uuid,
) -> Result<Option<trawl_messages::JobInput>, StageError> {
    match job_input(rt, batch, job).await {
        Ok(input) => Ok(input),
        Err(e) if e.class == ErrorClass::Permanent => {
            warn!(error = %e, "the job's input record is unreadable; ending it without its id and metadata");
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Ends a job whose search never opened its fan-in record before the deadline.
async fn search_never_finished(
    stage: &SynthesizeStage,
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
    let record = JobRecord {
        writer: ReportWriter::None,
        errors: vec!["search did not complete before the deadline".into()],
        ..Default::default()
    };
    let input = read_input(rt, msg.batch_id, msg.job_id).await?;
    let ended = Ended {
        result,
        record,
        input,
        answer: None,
    };
    finish(stage, rt, msg, ended).await
}

/// What a job ended with: its result, its record (`job.json`), what was submitted, and its
/// fields' answer when it asked for fields.
struct Ended {
    result: ResearchResult,
    record: JobRecord,
    input: Option<trawl_messages::JobInput>,
    answer: Option<trawl_messages::Answer>,
}

/// Writes `job.json`, announces the result, records the job as ended, and when that ends the
/// batch, writes the batch summary and sends `batch.completed`.
async fn finish(
    stage: &SynthesizeStage,
    rt: &Runtime,
    msg: &Envelope<SynthesizeTask>,
    ended: Ended,
) -> Result<(), StageError> {
    let Ended {
        result,
        mut record,
        input,
        answer,
    } = ended;
    let (batch, job) = (msg.batch_id, msg.job_id);
    let now = chrono::Utc::now();
    record.job_id = job;
    record.batch_id = batch;
    if let Some(input) = input {
        record.id = input.id;
        record.metadata = input.metadata;
    }
    record.question = result.query.clone();
    let status = result.status.as_str();
    record.status = result.status;
    // Submission time: the job's id is a UUIDv7, whose first 48 bits are its creation time.
    record.created_at = uuid_time(job).unwrap_or(msg.created_at);
    record.finished_at = now;
    record.duration_ms = (now - record.created_at).num_milliseconds();
    add_counters(&mut record, &rt.store.job_counters(&job.to_string()).await?);
    rt.put_json(&paths::job_record(batch, job), &record).await?;

    let cited = result.citations.len();
    // Notify first, then finish: a worker dying between the two repeats the notification
    // (consumers of trawl.results key on job_id), while `batch_finish` counts the job once.
    // The other order could lose the notification for good. Only when asked for
    // (`broker.results_queue`): nothing else reads the queue.
    if rt.config.broker.results_queue {
        rt.publish(Queue::Results, &msg.follow(result)).await?;
    }
    let (batch_s, job_s) = (batch.to_string(), job.to_string());
    let first = rt
        .store
        .batch_finish(&batch_s, &job_s, status, &record.outcomes, rt.batch_ttl())
        .await?;
    info!(%status, cited, "job finished");
    if !first {
        // Another synthesis of this job was counted; its worker sends the events.
        return Ok(());
    }
    METRICS
        .jobs
        .get_or_create(&labels(&[("status", status)]))
        .inc();
    // Events go out after the job is counted, so a slow or failing receiver (retried with
    // back-off) never holds a job open past its synthesis lease.
    let webhook = options(rt, batch).await?.webhook;
    if let Some(url) = &webhook {
        job_completed(stage, url, msg, &record, cited, answer.as_ref()).await;
    }
    if let Some(progress) = rt.store.batch_progress(&batch_s).await? {
        if progress.is_done() {
            trawl_pipeline::batch::save_ended(rt, batch).await?;
            write_summary(rt, batch).await?;
            if let Some(url) = &webhook {
                let event = Event::batch_completed(
                    batch,
                    serde_json::to_value(&progress).unwrap_or_default(),
                );
                if let Err(e) = stage.webhooks.send(url, &event).await {
                    warn!(error = %e, "batch.completed webhook not delivered");
                }
            }
        }
    }
    Ok(())
}

/// Sends the job's `job.completed` event to `url`; a receiver that never answers costs the
/// event, not the job.
async fn job_completed(
    stage: &SynthesizeStage,
    url: &str,
    msg: &Envelope<SynthesizeTask>,
    record: &JobRecord,
    cited: usize,
    answer: Option<&trawl_messages::Answer>,
) {
    let (batch, job) = (msg.batch_id, msg.job_id);
    let mut data = serde_json::json!({"id": record.id, "metadata": record.metadata, "status": record.status.as_str(), "cited": cited, "report": paths::report(batch, job)});
    if let Some(answer) = answer {
        data["answer"] = serde_json::to_value(answer).unwrap_or_default();
    }
    let event = Event::job_completed(batch, job, data);
    if let Err(e) = stage.webhooks.send(url, &event).await {
        warn!(error = %e, "job.completed webhook not delivered");
    }
}

fn uuid_time(id: uuid::Uuid) -> Option<chrono::DateTime<chrono::Utc>> {
    let (secs, nanos) = id.get_timestamp()?.to_unix();
    chrono::DateTime::from_timestamp(secs as i64, nanos)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::testing::source;

    #[test]
    fn the_prose_reads_the_questions_data_points_not_the_fields() {
        let meta = JobMeta {
            data_points: vec!["founded".into(), "length".into(), "designer".into()],
            ..Default::default()
        };
        let fields = trawl_messages::fields::from_text(
            r#"{"type": "object", "properties": {"founded": {"type": "integer"}}}"#,
        )
        .unwrap();
        let input = trawl_messages::JobInput {
            options: trawl_messages::JobOptions {
                fields: Some(fields),
                ..Default::default()
            },
            ..Default::default()
        };
        assert_eq!(asked_points(&meta, Some(&input)), ["length", "designer"]);
        assert_eq!(asked_points(&meta, None).len(), 3);
    }

    #[test]
    fn the_report_is_written_in_the_jobs_then_the_configured_then_the_questions_language() {
        let meta = |language: &str| JobMeta {
            language: language.into(),
            ..Default::default()
        };
        let asked = |tag: &str| trawl_messages::JobInput {
            options: trawl_messages::JobOptions {
                language: Some(tag.into()),
                ..Default::default()
            },
            ..Default::default()
        };
        assert_eq!(report_language("", None, &meta("de")), "German");
        assert_eq!(report_language("French", None, &meta("de")), "French");
        assert_eq!(
            report_language("French", Some(&asked("ja")), &meta("de")),
            "Japanese"
        );
        assert_eq!(report_language("", None, &meta("und")), "");
        assert_eq!(report_language("", None, &meta("")), "");
    }

    #[test]
    fn nothing_read_and_nothing_answering_end_differently() {
        assert_eq!(status_of(true, 2, 3), JobStatus::Done);
        assert_eq!(status_of(true, 0, 0), JobStatus::NoSources);
        assert_eq!(status_of(true, 0, 3), JobStatus::NoAnswer);
        assert_eq!(status_of(false, 0, 3), JobStatus::Partial);
    }

    fn record(idx: u32, outcome: Outcome) -> OutcomeRecord {
        OutcomeRecord {
            idx,
            url: format!("http://s{idx}.test/"),
            outcome,
            level: 0,
            doc: None,
        }
    }

    #[test]
    fn gaps_name_what_did_not_end_analysed_and_what_never_arrived() {
        let sources: Vec<Source> = (0..4).map(source).collect();
        let records = [
            record(0, Outcome::Analysed),
            record(1, Outcome::TooLarge),
            record(2, Outcome::TooLarge),
        ];
        let gaps = gaps_of(&sources, &records);
        assert_eq!(gaps.outcomes, [("too_large".to_owned(), 2)].into());
        assert_eq!(gaps.missing, ["http://s3.test/"]);
    }
}
