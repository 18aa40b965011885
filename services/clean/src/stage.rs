//! The clean stage's handler: extract the main content, then judge, clean and analyse it
//! ([`crate::steps`]) against the job's question, store the analysed document and record the
//! URL's outcome.
//!
//! The job's context (sub-queries, data points, news flag) comes from search's `search.json`
//! work product, else from the fan-in record, else the question alone. The LLM steps run only
//! while the batch has budget left, and what they spend is charged to the job as stage `clean`.
//! A source's steps are cached by (content hash, question and context, settings) for
//! `clean.cache_ttl_secs` when an LLM step may run, so a repeated batch does none of that work
//! twice; a result in which an LLM step failed is not cached. Without one nothing is cached:
//! the steps cost little more than a look-up and a store of their result (the page's markdown
//! with it), and a batch rarely asks one question of one page twice.

use std::collections::BTreeMap;
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use tracing::{info, warn};
use trawl_config::{CleanConfig, Config};
use trawl_llm::{fnv1a, Llm, LlmError};
use trawl_messages::{paths, AnalysedDoc, CachedCopy, Envelope, FetchedDoc, Outcome};
use trawl_pipeline::fanin::OutcomeRecord;
use trawl_pipeline::{Handled, Runtime, Stage, StageError};
use trawl_pipeline::{Job, JobLlm};
use trawl_store::{page_lookup, Cache, PageLookup};

use crate::analysis::Context;
use crate::extract::extract_owned;
use crate::metrics::step;
use crate::passages;
use crate::steps::{process, LlmUse, Processed};
use trawl_text::floor_char_boundary;

/// Less main content than this many Latin letters' worth ([`trawl_text::weighted_len`]: 27
/// Chinese characters) is not a source worth analysing.
const MIN_CONTENT_CHARS: usize = 80;

/// The longest text clean takes of a source (bytes; fetch's files give at most as much). A job
/// reads `clean.max_chars` of it: all of it, or its passages that answer ([`passages`]).
const DOCUMENT_CHARS: usize = 5 << 20;

/// Megabytes of HTML being extracted at once. Extraction holds several times its page (the
/// prepared copy, the parsed tree, the markdown), so two 10 MB pages side by side took a worker
/// past 160 MB; a page over the budget runs alone, small pages run beside each other.
const EXTRACTION_BUDGET_MB: u32 = 12;

/// How many times its page extraction holds: the page, its prepared copy, the parsed tree and
/// the markdown (two 10 MB pages side by side took a worker past 160 MB).
const EXTRACTION_MEMORY_FACTOR: u64 = 6;

/// How many times its text a source holds once extracted, while its LLM steps run: the
/// markdown, the cleaned copy, the prompts and the analysed document.
const ANALYSIS_MEMORY_FACTOR: u64 = 4;

/// The clean stage. Build it with [`CleanStage::new`] (or [`CleanStage::with_env`] in tests);
/// the value `trawl_clean::CleanStage` builds its LLM client from the runtime's config on first
/// use instead.
pub struct CleanStage {
    /// The `[llm]` client; `None` runs the non-LLM steps only.
    llm: Option<Llm>,
    /// [`EXTRACTION_BUDGET_MB`] permits, a page taking one per megabyte.
    extracting: tokio::sync::Semaphore,
    /// The contexts of the jobs whose pages this worker read last.
    contexts: RecentContexts,
}

/// How many jobs' contexts a worker keeps: a job's pages (ten or so) come close together.
const RECENT_CONTEXTS: usize = 64;

/// The analysis contexts of the jobs read last, newest at the back. What search decided for a
/// job is written once, when it opens the job, so a context read for one of its pages holds
/// for the others: each page would otherwise cost a round trip to the store and the parse of
/// the job's record, sources and all.
#[derive(Default)]
struct RecentContexts(std::sync::Mutex<std::collections::VecDeque<(uuid::Uuid, Context)>>);

impl RecentContexts {
    fn get(&self, job: uuid::Uuid) -> Option<Context> {
        let recent = self.0.lock().expect("recent contexts lock");
        (recent.iter().rev()).find_map(|(id, ctx)| (*id == job).then(|| ctx.clone()))
    }

    fn put(&self, job: uuid::Uuid, ctx: &Context) {
        let mut recent = self.0.lock().expect("recent contexts lock");
        if recent.len() == RECENT_CONTEXTS {
            recent.pop_front();
        }
        recent.push_back((job, ctx.clone()));
    }
}

impl CleanStage {
    /// Builds the stage with the LLM key from the process environment.
    pub fn new(config: &Config) -> Result<Self, LlmError> {
        Self::with_env(config, &std::env::vars().collect())
    }

    /// Builds the stage with the LLM key looked up in `env` (tests pass their own).
    pub fn with_env(config: &Config, env: &BTreeMap<String, String>) -> Result<Self, LlmError> {
        let llm = (config.llm.as_ref())
            .map(|cfg| Llm::new(cfg, env))
            .transpose()?;
        Ok(CleanStage {
            llm,
            extracting: tokio::sync::Semaphore::new(EXTRACTION_BUDGET_MB as usize),
            contexts: RecentContexts::default(),
        })
    }

    /// Judge, clean and analyse one source (or take the result from the analysis cache), and
    /// charge the job what the LLM steps spent.
    async fn steps(
        &self,
        job: &Job<'_, FetchedDoc>,
        ctx: &Context,
        title: &str,
        markdown: String,
    ) -> Result<Processed, StageError> {
        let rt = job.rt();
        let llm = job.llm(self.llm.as_ref()).await?;
        let (use_llm, path) = match &llm {
            JobLlm::Ready(llm) => (LlmUse::Yes(llm), format!("llm:{}", llm.model_of("clean"))),
            JobLlm::BudgetSpent => (
                LlmUse::Unavailable("the batch's LLM budget is spent"),
                "budget-spent".into(),
            ),
            JobLlm::NotConfigured => (LlmUse::NotConfigured, "none".into()),
        };
        let c = &rt.config.clean;
        let key = worth_caching(&use_llm, c).then(|| cache_key(&rt.config, &path, ctx, &markdown));
        if let Some(key) = &key {
            if let Some(hit) = cached(rt, key).await {
                return Ok(hit);
            }
        }
        let processed = process(use_llm, c, ctx, title, markdown).await;
        if let Some(key) = &key {
            store_cached(rt, key, &processed).await;
        }
        if let Some(llm) = llm.ready() {
            job.charge("clean", llm).await?;
        }
        Ok(processed)
    }

    /// The page's title and its main content as markdown, cut to [`DOCUMENT_CHARS`]: extracted
    /// from HTML, within the extraction budget and off the I/O threads; any other type as it is.
    async fn text_of(
        &self,
        doc: &FetchedDoc,
        body: String,
    ) -> Result<(String, String), StageError> {
        let max_chars = DOCUMENT_CHARS;
        if !is_html(&doc.content_type) {
            // A file's own title is its first heading (fetch puts a PDF's there).
            let title = (body.lines().find(|l| !l.trim().is_empty()))
                .and_then(|l| l.strip_prefix("# "))
                .map_or_else(|| doc.source.title.clone(), |t| t.trim().to_owned());
            return Ok((title, cap(body, max_chars)));
        }
        let _turn = self
            .extracting
            .acquire_many(extraction_permits(body.len()))
            .await
            .expect("the semaphore is never closed");
        // Parsing is CPU work: keep it off the threads that drive I/O.
        let url = doc.final_url.clone();
        tokio::task::spawn_blocking(move || {
            let extracted = extract_owned(body, &url);
            (extracted.title, cap(extracted.markdown, max_chars))
        })
        .await
        .map_err(|e| StageError::permanent(format!("extraction panicked: {e}")))
    }
}

/// Clean's text of a page in the fleet's page cache, kept beside it ([`paths::page_text`]):
/// a job that reads the cached copy does not extract it again.
#[derive(Serialize, Deserialize)]
struct CachedText {
    /// The body it was extracted from ([`CachedCopy::content_hash`]).
    content_hash: String,
    /// The length it was cut at ([`DOCUMENT_CHARS`]).
    max_chars: usize,
    title: String,
    markdown: String,
}

impl CleanStage {
    /// [`CleanStage::text_of`], read from the page cache when the page is cached and its text
    /// was extracted before (from the same body, cut to the same length), and kept there
    /// when it was not. A cache that cannot answer only costs the extraction. The text is the
    /// whole page's, whatever the question: the passages a job reads are its own.
    ///
    /// The text is kept from a page's second reading on, not its first: most pages of a batch
    /// are read by one job only, and keeping their text would cost each a written object (a
    /// file created, or a PUT) for nothing. A page read again is extracted once more and
    /// kept then.
    async fn text(
        &self,
        rt: &Runtime,
        doc: &FetchedDoc,
        body: String,
    ) -> Result<(String, String), StageError> {
        let max_chars = DOCUMENT_CHARS;
        let Some(cached) = &doc.cached else {
            return self.text_of(doc, body).await;
        };
        // A page just fetched is read for the first time: its text is neither there nor kept.
        if !cached.hit {
            page_lookup("clean", PageLookup::Miss);
            return self.text_of(doc, body).await;
        }
        let object = paths::page_text(&cached.key);
        if let Some(text) = cached_text(rt, &object, cached, max_chars).await {
            page_lookup("clean", PageLookup::Hit);
            return Ok((text.title, text.markdown));
        }
        page_lookup("clean", PageLookup::Miss);
        let (title, markdown) = self.text_of(doc, body).await?;
        let text = CachedText {
            content_hash: cached.content_hash.clone(),
            max_chars,
            title,
            markdown,
        };
        let bytes = serde_json::to_vec(&text).unwrap_or_default();
        if let Err(e) = rt.objects.put(&object, &bytes).await {
            warn!(error = %e, "page cache text not stored");
        }
        Ok((text.title, text.markdown))
    }
}

/// The text at `object` if it was extracted from `cached`'s body and cut at `max_chars`.
async fn cached_text(
    rt: &Runtime,
    object: &str,
    cached: &CachedCopy,
    max_chars: usize,
) -> Option<CachedText> {
    let bytes = (rt.objects.get(object).await)
        .inspect_err(|e| warn!(error = %e, "page cache text unavailable"))
        .ok()??;
    let text: CachedText = serde_json::from_slice(&bytes).ok()?;
    (text.content_hash == cached.content_hash && text.max_chars == max_chars).then_some(text)
}

/// Whether a page of `content_type` goes through extraction (no type at all counts as HTML).
fn is_html(content_type: &str) -> bool {
    matches!(content_type, "text/html" | "application/xhtml+xml") || content_type.is_empty()
}

/// The [`EXTRACTION_BUDGET_MB`] permits a page of `bytes` takes: one per whole megabyte, at
/// least one, and never more than the budget, so a page over it waits for the others and then
/// runs alone instead of waiting forever.
fn extraction_permits(bytes: usize) -> u32 {
    u32::try_from(bytes >> 20)
        .unwrap_or(u32::MAX)
        .clamp(1, EXTRACTION_BUDGET_MB)
}

/// Cuts `text` to at most `max` bytes at a line break, never inside a character, and lets go of
/// the rest of its memory: the page it came from may have been megabytes. A break that
/// would throw away more than half of what fits gives way to the last whitespace, then to any
/// character boundary: a page that is one huge line (or a title and one) keeps its text
/// instead of being cut down to its title.
fn cap(mut text: String, max: usize) -> String {
    if text.len() > max {
        let cut = floor_char_boundary(&text, max);
        let near = |at: &usize| *at >= cut / 2;
        let cut = (text[..cut].rfind('\n').filter(near))
            .or_else(|| text[..cut].rfind(char::is_whitespace).filter(near))
            .unwrap_or(cut);
        text.truncate(cut);
        text.shrink_to_fit();
    }
    text
}

/// `markdown` as the job reads it: whole when it fits `clean.max_chars`, else its passages that
/// answer the question, wherever they stand ([`passages::fit`]), ranked off the I/O threads;
/// and a note saying how much was read.
async fn read_passages(
    rt: &Runtime,
    ctx: &Context,
    markdown: String,
) -> Result<(String, Option<String>), StageError> {
    let max = rt.config.clean.max_chars;
    if markdown.len() <= max {
        return Ok((markdown, None));
    }
    let query = ctx.query(ctx.lang());
    tokio::task::spawn_blocking(move || {
        let fitted = passages::fit(&query, &markdown, max);
        let note = fitted.note("read", markdown.len());
        (fitted.text, note)
    })
    .await
    .map_err(|e| StageError::permanent(format!("reading passages panicked: {e}")))
}

impl CleanStage {
    /// The job's context for analysis; a record already gone narrows it to the question (and
    /// is not kept: the record may come back, as on a redelivery).
    async fn context(&self, job: &Job<'_, FetchedDoc>) -> Result<Context, StageError> {
        let (id, question) = (job.envelope().job_id, &job.envelope().body.query);
        if let Some(ctx) = (self.contexts.get(id)).filter(|c| c.question == *question) {
            return Ok(ctx);
        }
        let mut ctx = Context::question(question);
        if let Some(meta) = job.meta().await? {
            ctx.sub_queries = meta.sub_queries;
            ctx.data_points = meta.data_points;
            ctx.is_news = meta.is_news;
            ctx.language = meta.language;
            self.contexts.put(id, &ctx);
        }
        Ok(ctx)
    }
}

/// Whether a source's steps go through the analysis cache: only when an LLM step may run.
/// Without one they cost little more than a look-up and a store of their result.
fn worth_caching(llm: &LlmUse<'_>, c: &CleanConfig) -> bool {
    matches!(llm, LlmUse::Yes(_)) && (c.llm_judge || c.llm_cleaning || c.llm_analysis)
}

/// The analysis cache key: the content, the question with its context, and every setting
/// that changes the result, including which LLM path runs (`llm:<model>`, `budget-spent` or
/// `none`).
fn cache_key(config: &Config, path: &str, ctx: &Context, markdown: &str) -> String {
    let c = &config.clean;
    let settings = format!(
        "{path}|{}|{}|{}{}{}|{}|{}|{}|{}",
        c.min_relevance,
        c.judge_threshold,
        u8::from(c.llm_judge),
        u8::from(c.llm_cleaning),
        u8::from(c.llm_analysis),
        c.judge_sample_chars,
        c.llm_clean_max_chars,
        c.llm_analysis_max_chars,
        env!("CARGO_PKG_VERSION"),
    );
    format!(
        "{:016x}:{:016x}:{:016x}",
        fnv1a(markdown.as_bytes()),
        fnv1a(&serde_json::to_vec(ctx).unwrap_or_default()),
        fnv1a(settings.as_bytes())
    )
}

async fn cached(rt: &Runtime, key: &str) -> Option<Processed> {
    if rt.config.clean.cache_ttl_secs == 0 {
        return None;
    }
    let bytes = rt
        .store
        .cache_get(Cache::Analysis, key)
        .await
        .inspect_err(|e| warn!(error = %e, "analysis cache unavailable"))
        .ok()?;
    // An entry that no longer reads as `Processed` is a miss.
    let hit = bytes.and_then(|b| serde_json::from_slice::<Processed>(&b).ok());
    step("cache", if hit.is_some() { "hit" } else { "miss" });
    hit
}

async fn store_cached(rt: &Runtime, key: &str, processed: &Processed) {
    let ttl = rt.config.clean.cache_ttl_secs;
    if ttl == 0 || !processed.complete {
        return;
    }
    if let Ok(bytes) = serde_json::to_vec(processed) {
        let put = rt
            .store
            .cache_put(Cache::Analysis, key, &bytes, Duration::from_secs(ttl))
            .await;
        if let Err(e) = put {
            warn!(error = %e, "analysis cache unavailable");
        }
    }
}

/// The document clean stores for `doc`: its source, title and what the steps made of it.
fn analysed_doc(doc: &FetchedDoc, title: String, processed: Processed) -> AnalysedDoc {
    let a = processed.analysis;
    let language = trawl_text::Lang::detect(&processed.markdown).code().into();
    let key_point_pages = trawl_text::pages::pages_of(&processed.markdown, &a.key_points);
    AnalysedDoc {
        source: doc.source.clone(),
        final_url: doc.final_url.clone(),
        title,
        markdown: processed.markdown,
        summary: a.summary,
        key_point_pages,
        key_points: a.key_points,
        relevance: a.relevance,
        is_relevant: a.is_relevant,
        level: doc.level,
        bytes: doc.bytes,
        extracted_data: a.extracted_data,
        tables: a.tables,
        lookup: a.lookup,
        cleanliness: Some(processed.cleanliness),
        cleaning: Some(processed.cleaning),
        analysed_by: processed.analysed_by,
        notes: processed.notes,
        language,
        cached_at: (doc.cached.as_ref())
            .filter(|c| c.hit)
            .map(|c| c.fetched_at),
    }
}

#[async_trait]
impl Stage for CleanStage {
    type Input = FetchedDoc;

    async fn handle(
        &self,
        rt: &Runtime,
        mut msg: Envelope<FetchedDoc>,
    ) -> Result<Handled, StageError> {
        // Taken, not copied: nothing after extraction reads the page itself.
        let body = std::mem::take(&mut msg.body.body);
        let doc = &msg.body;
        let (title, markdown) = self.text(rt, doc, body).await?;
        let mut record = OutcomeRecord {
            idx: doc.source.idx,
            url: doc.source.url.clone(),
            outcome: Outcome::Analysed,
            level: doc.level,
            doc: None,
        };
        if trawl_text::weighted_len(markdown.trim()) < MIN_CONTENT_CHARS {
            record.outcome = Outcome::Failed {
                reason: "no main content found".into(),
            };
        } else {
            let title = if title.is_empty() {
                doc.source.title.clone()
            } else {
                title
            };
            // The job's context is read only for a page worth analysing.
            let ctx = self.context(&Job::new(rt, &msg)).await?;
            let (markdown, read) = read_passages(rt, &ctx, markdown).await?;
            // The page is gone; what waits on the LLM steps is its text.
            trawl_pipeline::in_flight::hold(
                ANALYSIS_MEMORY_FACTOR * markdown.len() as u64
                    + trawl_pipeline::worker::BASE_FOOTPRINT,
            );
            let mut processed = (self.steps(&Job::new(rt, &msg), &ctx, &title, markdown)).await?;
            processed.notes.splice(0..0, read);
            let key = paths::doc(msg.batch_id, msg.job_id, doc.source.idx);
            let analysed = analysed_doc(doc, title, processed);
            // The document is on disk before its outcome counts, so synthesis can always read it.
            rt.put_json(&key, &analysed).await?;
            record.doc = Some(key);
            if !analysed.is_relevant {
                record.outcome = Outcome::Irrelevant;
            }
        }
        info!(url = %doc.source.url, outcome = record.outcome.name(), "cleaned");
        Job::new(rt, &msg).record(&doc.query, record).await?;
        Ok(Handled::Done)
    }

    /// The message is the page: extraction holds several times it.
    fn footprint(&self, _config: &Config, len: usize) -> u64 {
        EXTRACTION_MEMORY_FACTOR * len as u64 + trawl_pipeline::worker::BASE_FOOTPRINT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_s_context_is_kept_for_its_next_pages_and_the_oldest_job_goes_first() {
        let recent = RecentContexts::default();
        let jobs: Vec<uuid::Uuid> = (0..=RECENT_CONTEXTS)
            .map(|_| uuid::Uuid::now_v7())
            .collect();
        let ctx = |i: usize| Context {
            data_points: vec![format!("point {i}")],
            ..Context::question(&format!("question {i}"))
        };
        assert_eq!(recent.get(jobs[0]), None);
        for (i, &job) in jobs.iter().enumerate() {
            recent.put(job, &ctx(i));
        }
        assert_eq!(recent.get(jobs[0]), None);
        assert_eq!(recent.get(jobs[1]), Some(ctx(1)));
        assert_eq!(
            recent.get(jobs[RECENT_CONTEXTS]),
            Some(ctx(RECENT_CONTEXTS))
        );
    }

    #[test]
    fn cap_cuts_at_a_line_and_a_char_boundary() {
        assert_eq!(cap("ab\ncdé".into(), 6), "ab");
        assert_eq!(cap("short".into(), 100), "short");
        assert_eq!(cap("ééé".into(), 3), "é");
    }

    #[test]
    fn a_page_takes_a_permit_per_megabyte_within_the_budget() {
        assert_eq!(extraction_permits(0), 1);
        assert_eq!(extraction_permits(300 << 10), 1);
        assert_eq!(extraction_permits(5 << 20), 5);
        assert_eq!(extraction_permits(10 << 20), 10);
        assert_eq!(extraction_permits(64 << 20), EXTRACTION_BUDGET_MB);
        assert_eq!(extraction_permits(usize::MAX), EXTRACTION_BUDGET_MB);
    }

    #[test]
    fn one_huge_line_is_cut_at_a_space_not_dropped() {
        let words = "word ".repeat(100);
        assert_eq!(cap(words.clone(), 52), words[..49]);
        let page = format!("# Title\n\n{}", "w ".repeat(1000));
        let capped = cap(page, 100);
        assert!(
            capped.starts_with("# Title\n\nw w") && capped.len() >= 98,
            "{capped}"
        );
        assert_eq!(cap("x".repeat(10), 4), "xxxx");
    }

    #[test]
    fn only_steps_an_llm_may_take_are_cached() {
        let llm = trawl_llm::Llm::new(
            &trawl_config::LlmConfig::default(),
            &[("OPENAI_API_KEY".to_owned(), "k".to_owned())].into(),
        )
        .unwrap();
        let mut c = CleanConfig::default();
        assert!(worth_caching(&LlmUse::Yes(&llm), &c));
        assert!(!worth_caching(&LlmUse::NotConfigured, &c));
        assert!(!worth_caching(&LlmUse::Unavailable("budget spent"), &c));
        (c.llm_judge, c.llm_cleaning, c.llm_analysis) = (false, false, false);
        assert!(!worth_caching(&LlmUse::Yes(&llm), &c));
    }

    #[test]
    fn the_cache_key_changes_with_content_question_and_llm() {
        let config = Config::default();
        let ctx = Context::question("q?");
        let base = cache_key(&config, "none", &ctx, "text");
        assert_eq!(base, cache_key(&config, "none", &ctx, "text"));
        assert_ne!(base, cache_key(&config, "none", &ctx, "other text"));
        assert_ne!(
            base,
            cache_key(&config, "none", &Context::question("r?"), "text")
        );
        assert_ne!(base, cache_key(&config, "llm:gpt-4o-mini", &ctx, "text"));
        assert_ne!(base, cache_key(&config, "budget-spent", &ctx, "text"));
    }
}
