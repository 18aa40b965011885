//! The fetch stage's handler, for both queues.
//!
//! A task goes: SSRF check → robots.txt → the level this host last needed → the per-host rate
//! limit → a per-host slot (concurrency cap) → the fetch at its level → block detection. A
//! block moves the task one level up, onto `trawl.fetch.browser` from level 2, where workers
//! with a browser pool take it; a 429/503 with Retry-After holds the whole host for that long
//! and retries at the same level first. A host's turn that comes soon is booked and waited for
//! in the worker; whatever cannot go soon comes back later through a delay tier. A browser task
//! whose WebDriver stopped answering goes back like a task of a store outage, spending none of
//! its attempts: a browser service that dies and restarts fails no page. A `doc://` source is
//! none of that: it is read from the job's documents root ([`trawl_documents`]).

use std::time::Duration;

use async_trait::async_trait;
use tracing::info;
use trawl_config::Config;
use trawl_documents::DocumentsError;
use trawl_messages::documents::{doc_name, doc_url, Root};
use trawl_messages::{CachedCopy, Domains, Envelope, FetchTask, FetchedDoc, Outcome, Queue};
use trawl_pipeline::fanin::OutcomeRecord;
use trawl_pipeline::Job;
use trawl_pipeline::{ErrorClass, Handled, Runtime, Stage, StageError};
use trawl_store::{page_lookup, Cache, PageLookup};
use url::Url;

use crate::block::{self, Block};
use crate::browser::{BrowserError, BrowserPool};
use crate::crawl;
use crate::http::{Fetched, Fetcher, Page, Validators};
use crate::metrics::{labels, METRICS};
use crate::pages::{self, Claim};
use crate::politeness::{self, host_of, Contact, Known, Robots};

/// Levels from here on need a browser.
const BROWSER_LEVEL: u8 = 2;

#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("HTTP client: {0}")]
    Http(#[from] reqwest::Error),
    #[error("browser pool: {0}")]
    Browser(#[from] crate::browser::PoolError),
}

pub struct FetchStage {
    fetcher: Fetcher,
    /// Levels 2–3. A worker of `trawl.fetch` has none and hands such tasks on.
    browser: Option<BrowserPool>,
}

impl FetchStage {
    /// A worker of `trawl.fetch`: levels 0–1.
    pub fn new(config: &Config) -> Result<Self, BuildError> {
        crate::metrics::init();
        Ok(FetchStage {
            fetcher: Fetcher::new(&config.fetch)?,
            browser: None,
        })
    }

    /// A worker of `trawl.fetch.browser`: levels 2–3 through WebDriver, and 0–1 as well.
    pub fn with_browser(config: &Config) -> Result<Self, BuildError> {
        crate::metrics::init();
        Ok(FetchStage {
            fetcher: Fetcher::new(&config.fetch)?,
            browser: Some(BrowserPool::new(&config.fetch)?),
        })
    }
}

/// The queue that carries tasks of `level`.
pub(crate) fn queue_for(level: u8) -> Queue {
    if level >= BROWSER_LEVEL {
        Queue::FetchBrowser
    } else {
        Queue::Fetch
    }
}

async fn end(
    rt: &Runtime,
    msg: &Envelope<FetchTask>,
    level: u8,
    outcome: Outcome,
) -> Result<Handled, StageError> {
    let task = &msg.body;
    info!(url = %task.source.url, outcome = outcome.name(), level, "fetch ended");
    let record = OutcomeRecord {
        idx: task.source.idx,
        url: task.source.url.clone(),
        outcome,
        level,
        doc: None,
    };
    Job::new(rt, msg).record(&task.query, record).await?;
    Ok(Handled::Done)
}

/// A `doc://` source: read from the job's documents root (one the operator allows) and
/// converted as a file on the web would be, then passed to clean. Robots.txt, politeness, the
/// SSRF guard and the browser are the web's: none applies to the job's own documents.
async fn document(
    rt: &Runtime,
    msg: &Envelope<FetchTask>,
    name: &str,
) -> Result<Handled, StageError> {
    let task = &msg.body;
    let config = &rt.config;
    let failed = |reason: String| Outcome::Failed { reason };
    let url = (task.documents.clone()).unwrap_or_else(|| config.documents.url.clone());
    if url.trim().is_empty() {
        let why = "no documents root: the job names none and documents.url is empty";
        return end(rt, msg, 0, failed(why.into())).await;
    }
    let root = match Root::allowed(&url, &config.documents.allow) {
        Ok(root) => root,
        Err(e) => return end(rt, msg, 0, failed(e.to_string())).await,
    };
    let read = trawl_documents::read::document(&root, &config.output, name, config.fetch.max_bytes);
    let (content_type, body) = match read.await {
        Ok(read) => read,
        // The store did not answer: the message is retried, as for any outage.
        Err(DocumentsError::Objects(e)) => return Err(e.into()),
        Err(e) => return end(rt, msg, 0, failed(e.to_string())).await,
    };
    info!(url = %task.source.url, bytes = body.len(), "document read");
    let doc = FetchedDoc {
        query: task.query.clone(),
        source: task.source.clone(),
        final_url: doc_url(name, None),
        status: 200,
        content_type,
        level: 0,
        bytes: body.len() as u64,
        body,
        cached: None,
    };
    Job::new(rt, msg).send(Queue::Clean, doc).await?;
    Ok(Handled::Done)
}

/// Sends the task on at `level`, on the queue of that level.
async fn hand_on(
    rt: &Runtime,
    msg: &Envelope<FetchTask>,
    level: u8,
) -> Result<Handled, StageError> {
    let next = FetchTask {
        level,
        ..msg.body.clone()
    };
    Job::new(rt, msg).send(queue_for(level), next).await?;
    Ok(Handled::Done)
}

/// Follows `page`'s links: the job grows by the sources it grants (before this page's own
/// outcome can be recorded) and each becomes a fetch task one hop deeper. Runs on redelivery
/// too, where the job hands back the first run's sources, so none is lost or doubled.
async fn crawl(rt: &Runtime, msg: &Envelope<FetchTask>, page: &Page) -> Result<(), StageError> {
    let cfg = &rt.config.fetch;
    let task = &msg.body;
    let job = Job::new(rt, msg);
    let known: Vec<String> = (job.meta().await?)
        .map(|m| m.sources.into_iter().map(|s| s.url).collect())
        .unwrap_or_default();
    let (html, url, parent) = (
        page.body.clone(),
        page.final_url.clone(),
        task.source.clone(),
    );
    let (same_site, limit) = (cfg.crawl_same_domain, cfg.crawl_max_pages as usize);
    let domains = task.domains.clone();
    let found = tokio::task::spawn_blocking(move || {
        let mut found = crawl::links(
            &html,
            &url,
            &parent,
            same_site,
            &domains,
            limit + known.len(),
        );
        found.retain(|s| !known.contains(&s.url));
        found.truncate(limit);
        found
    })
    .await
    .map_err(|e| StageError::permanent(format!("link extraction panicked: {e}")))?;
    let granted = (job.extend(task.source.idx, &found, cfg.crawl_max_pages)).await?;
    if !granted.is_empty() {
        info!(url = %task.source.url, links = granted.len(), depth = task.depth + 1, "crawling");
    }
    for source in granted {
        let child = FetchTask {
            query: task.query.clone(),
            source,
            level: 0,
            max_level: task.max_level,
            depth: task.depth + 1,
            domains: task.domains.clone(),
            cache_max_age_secs: task.cache_max_age_secs,
            documents: task.documents.clone(),
        };
        job.send(Queue::Fetch, child).await?;
    }
    Ok(())
}

/// What one attempt at one level came to.
enum Attempt {
    Page(Page),
    /// The cached copy a conditional request named is still the page.
    NotModified,
    Blocked {
        block: Block,
        retry_after: Option<Duration>,
    },
    Transient(String),
    /// The browser service is down: no fault of the page, no attempt spent.
    Outage(String),
    Ended(Outcome),
}

impl FetchStage {
    async fn attempt(
        &self,
        url: &Url,
        level: u8,
        domains: &Domains,
        validators: &Validators,
    ) -> Attempt {
        if level < BROWSER_LEVEL {
            let get = self.fetcher.get_within(url, level, domains, validators);
            return match trawl_store::outside::waiting(get).await {
                Fetched::Page(page) => Attempt::Page(page),
                Fetched::NotModified => Attempt::NotModified,
                Fetched::Blocked { block, retry_after } => Attempt::Blocked { block, retry_after },
                Fetched::Transient(reason) => Attempt::Transient(reason),
                Fetched::Failed(reason) => Attempt::Ended(Outcome::Failed { reason }),
                Fetched::Refused(refusal) => {
                    // A redirect hop or a resolved address the guard refused. The browser
                    // levels count their refusals where they happen (the pool, its proxy).
                    METRICS.ssrf_refusals.inc();
                    let reason = refusal.to_string();
                    Attempt::Ended(Outcome::Failed { reason })
                }
                Fetched::TooLarge => Attempt::Ended(Outcome::TooLarge),
                Fetched::Unsupported(content_type) => {
                    Attempt::Ended(Outcome::Unsupported { content_type })
                }
            };
        }
        let pool = self
            .browser
            .as_ref()
            .expect("browser tasks reach browser workers only");
        // Not an outside wait: the browser renders on the pod's own CPU (its sidecar).
        let rendered = pool.render(url, level).await;
        crate::metrics::response(
            level,
            rendered.as_ref().ok().map(|p| p.status.unwrap_or(200)),
        );
        // The browser follows redirects itself: a page it ended on outside the job's domains
        // is not read.
        let off_domain =
            (rendered.as_ref().ok()).and_then(|p| ended_outside(domains, &p.final_url));
        if let Some(outcome) = off_domain {
            return Attempt::Ended(outcome);
        }
        match rendered {
            Ok(page) => {
                let status = page.status.unwrap_or(200);
                match block::detect(status, |_| None, &page.html, true) {
                    Some(block) => Attempt::Blocked {
                        block,
                        retry_after: None,
                    },
                    None if status >= 400 => Attempt::Ended(Outcome::Failed {
                        reason: format!("http {status}"),
                    }),
                    None => Attempt::Page(Page {
                        final_url: page.final_url,
                        status,
                        content_type: "text/html".into(),
                        bytes: page.html.len() as u64,
                        body: page.html,
                        // WebDriver shows no response headers: nothing to revalidate with.
                        validators: Validators::default(),
                        storable: true,
                    }),
                }
            }
            Err(e @ BrowserError::Unreachable(_)) => Attempt::Outage(e.to_string()),
            Err(e) if e.is_transient() => Attempt::Transient(e.to_string()),
            Err(BrowserError::TooLarge(_)) => Attempt::Ended(Outcome::TooLarge),
            Err(e) => Attempt::Ended(Outcome::Failed {
                reason: e.to_string(),
            }),
        }
    }

    /// The fetch and what follows, holding one of the host's slots.
    async fn fetch_at(
        &self,
        rt: &Runtime,
        msg: &Envelope<FetchTask>,
        url: &Url,
        (level, max_level): (u8, u8),
        mut cache: Option<&mut Fill>,
    ) -> Result<Handled, StageError> {
        let task = &msg.body;
        let job = Job::new(rt, msg);
        let host = host_of(url);
        let validators = (cache.as_ref().and_then(|c| c.stale.as_ref()))
            .map(pages::validators)
            .unwrap_or_default();
        let attempt = self.attempt(url, level, &task.domains, &validators).await;
        if let Attempt::Page(page) = &attempt {
            // What the worker holds now: the page, its copy in the message to clean and that
            // message encoded.
            trawl_pipeline::in_flight::hold(
                3 * page.body.len() as u64 + trawl_pipeline::worker::BASE_FOOTPRINT,
            );
        }
        count(&attempt, level);
        match (
            next_after(&attempt, level, max_level, job.last_attempt()),
            attempt,
        ) {
            (Next::Clean, Attempt::Page(page)) => {
                let cached = match cache.as_mut().and_then(|c| Some((&c.key, c.lock.take()?))) {
                    Some((key, lock)) => pages::store(rt, key, &page, level, lock).await,
                    None => None,
                };
                to_clean(&job, Some(&host), page, level, cached).await
            }
            (Next::Clean, Attempt::NotModified) => confirmed(rt, msg, cache.as_deref()).await,
            (Next::HoldAndRetry(hold), Attempt::Blocked { block, .. }) => {
                // The site said when: hold the host for every worker, try this level again.
                politeness::hold(rt, &host, hold).await?;
                Err(StageError::retryable(format!(
                    "{} with Retry-After {} s",
                    block.describe(),
                    hold.as_secs()
                )))
            }
            (Next::Escalate(to), Attempt::Blocked { block, .. }) => {
                info!(url = %task.source.url, why = %block.describe(), from = level, "blocked; escalating");
                let (from, to_label) = (level.to_string(), to.to_string());
                METRICS
                    .escalations
                    .get_or_create(&labels(&[("from", &from), ("to", &to_label)]))
                    .inc();
                hand_on(rt, msg, to).await
            }
            (Next::Retry, Attempt::Transient(reason)) => Err(StageError::retryable(reason)),
            (Next::Outage, Attempt::Outage(message)) => Err(StageError {
                class: ErrorClass::Unavailable,
                message,
                origin: "stage",
            }),
            (Next::End(outcome), attempt) => {
                if let Attempt::Blocked { block, .. } = &attempt {
                    info!(url = %task.source.url, why = %block.describe(), level, "blocked at the highest level");
                }
                end(rt, msg, level, outcome).await
            }
            (next, _) => Err(StageError::permanent(format!(
                "fetch decided {next:?} for an attempt it does not fit"
            ))),
        }
    }
}

/// The page cache's part before a fetch: a fresh copy (got at a level this task may reach)
/// goes to clean at once; otherwise this task takes the page's fill lock (or comes back when
/// another job holds it) and fetches, revalidating a stale copy that has validators.
async fn consult_cache(
    rt: &Runtime,
    msg: &Envelope<FetchTask>,
    max_age: u64,
    max_level: u8,
) -> Result<Cached, StageError> {
    let key = pages::key_of(&msg.body.source.url);
    match pages::claim(rt, &key, max_age, max_level).await? {
        Claim::Fresh(copy) => {
            page_lookup("fetch", PageLookup::Hit);
            Ok(Cached::Done(from_copy(rt, msg, copy).await?))
        }
        Claim::Fill { stale, lock } => {
            page_lookup("fetch", PageLookup::Miss);
            let lock = Some(lock);
            Ok(Cached::Fetch(Fill { key, stale, lock }))
        }
        Claim::Busy => {
            crate::metrics::deferred("page", pages::LOOK_AGAIN);
            Ok(Cached::Done(Handled::Later(pages::LOOK_AGAIN)))
        }
    }
}

/// The stale copy of `cache` after its server answered 304: it goes to clean as fetched now.
async fn confirmed(
    rt: &Runtime,
    msg: &Envelope<FetchTask>,
    cache: Option<&Fill>,
) -> Result<Handled, StageError> {
    // Only a conditional request (a fill with a stale copy) is answered 304.
    let revalidated = match cache.and_then(|c| Some((&c.key, c.stale.as_ref()?))) {
        Some((key, stale)) => pages::revalidated(rt, key, stale).await,
        None => None,
    };
    match revalidated {
        Some(copy) => from_copy(rt, msg, copy).await,
        // Gone between the look and the answer: the next attempt fetches it.
        None => Err(StageError::retryable(
            "the cached copy went while its server confirmed it",
        )),
    }
}

/// Why a page that ended up at `final_url` (through redirects) is not read: outside the job's
/// domains.
fn ended_outside(domains: &Domains, final_url: &str) -> Option<Outcome> {
    let why = domains.refusal_of_url(final_url)?;
    let reason = format!("redirected outside the job's domains: {why}");
    Some(Outcome::Failed { reason })
}

/// A cached copy goes to clean, unless it ended up (through a redirect another job followed)
/// outside this job's domains.
async fn from_copy(
    rt: &Runtime,
    msg: &Envelope<FetchTask>,
    copy: pages::Copy,
) -> Result<Handled, StageError> {
    if let Some(outcome) = ended_outside(&msg.body.domains, &copy.page.final_url) {
        return end(rt, msg, copy.level, outcome).await;
    }
    let job = Job::new(rt, msg);
    to_clean(&job, None, copy.page, copy.level, Some(copy.cached)).await
}

/// What the page cache left a task to do.
enum Cached {
    /// Nothing: the copy went to clean, or the task comes back later.
    Done(Handled),
    /// Fetch the page and store it.
    Fetch(Fill),
}

/// A page to fetch for the cache: its key, the copy past its age if there is one (its
/// validators make the request conditional) and the fill lock this task holds while it fetches
/// (`None` once the page's store let it go).
struct Fill {
    key: String,
    stale: Option<trawl_store::PageEntry>,
    lock: Option<trawl_store::LockGuard>,
}

/// Counts an attempt at `level` by result, and a block by its kind.
fn count(attempt: &Attempt, level: u8) {
    let level = level.to_string();
    let result = match attempt {
        Attempt::Page(_) => "page",
        Attempt::NotModified => "not_modified",
        Attempt::Blocked { block, .. } => {
            METRICS
                .blocks
                .get_or_create(&labels(&[("level", &level), ("kind", &block.kind())]))
                .inc();
            "blocked"
        }
        Attempt::Transient(_) | Attempt::Outage(_) => "retry",
        Attempt::Ended(_) => "ended",
    };
    METRICS
        .attempts
        .get_or_create(&labels(&[("level", &level), ("result", result)]))
        .inc();
}

/// The page goes to clean: its links first when the job crawls, and, when it was fetched
/// (`host`), the level it took is remembered for its host, so the next task there starts at it.
async fn to_clean(
    job: &Job<'_, FetchTask>,
    host: Option<&str>,
    page: Page,
    level: u8,
    cached: Option<CachedCopy>,
) -> Result<Handled, StageError> {
    let (rt, msg) = (job.rt(), job.envelope());
    let (cfg, task) = (&rt.config.fetch, &msg.body);
    if task.depth < cfg.crawl_depth && page.content_type == "text/html" {
        crawl(rt, msg, &page).await?;
    }
    if let Some(host) = host.filter(|_| level > 0) {
        let ttl = Duration::from_secs(cfg.level_memory_secs);
        let value = level.to_string();
        rt.store
            .cache_put(Cache::HostLevel, host, value.as_bytes(), ttl)
            .await?;
    }
    let doc = FetchedDoc {
        query: task.query.clone(),
        source: task.source.clone(),
        final_url: page.final_url,
        status: page.status,
        content_type: page.content_type,
        level,
        bytes: page.bytes,
        body: page.body,
        cached,
    };
    job.send(Queue::Clean, doc).await?;
    Ok(Handled::Done)
}

/// What follows an attempt at `level`: the escalate / retry / end decision, apart from its
/// effects (which [`FetchStage::fetch_at`] carries out).
#[derive(Clone, Debug, PartialEq)]
enum Next {
    /// The page goes to clean.
    Clean,
    /// The site said when to come back: hold its host for the fleet, retry at this level.
    HoldAndRetry(Duration),
    /// Blocked here: try at this higher level.
    Escalate(u8),
    /// A transient failure: retry at this level later.
    Retry,
    /// The source ends with this outcome.
    End(Outcome),
    /// The browser service is down: wait for it, spending no attempt.
    Outage,
}

/// The decision for `attempt` at `level` (of `max_level`); on a message's `last_attempt` a
/// retry becomes an end, so the job still completes.
fn next_after(attempt: &Attempt, level: u8, max_level: u8, last_attempt: bool) -> Next {
    match attempt {
        Attempt::Page(_) | Attempt::NotModified => Next::Clean,
        Attempt::Blocked {
            retry_after: Some(hold),
            ..
        } if !last_attempt => Next::HoldAndRetry(*hold),
        Attempt::Blocked { .. } if level < max_level => Next::Escalate(level + 1),
        Attempt::Blocked { .. } => Next::End(Outcome::Blocked { level }),
        Attempt::Transient(_) if !last_attempt => Next::Retry,
        Attempt::Transient(reason) => Next::End(Outcome::Failed {
            reason: reason.clone(),
        }),
        Attempt::Outage(_) => Next::Outage,
        Attempt::Ended(outcome) => Next::End(outcome.clone()),
    }
}

#[async_trait]
impl Stage for FetchStage {
    type Input = FetchTask;

    async fn handle(&self, rt: &Runtime, msg: Envelope<FetchTask>) -> Result<Handled, StageError> {
        let task = &msg.body;
        if let Some(name) = doc_name(&task.source.url) {
            return document(rt, &msg, &name).await;
        }
        let url = match Url::parse(&task.source.url) {
            Ok(u) => u,
            Err(e) => {
                let reason = format!("invalid URL: {e}");
                return end(rt, &msg, task.level, Outcome::Failed { reason }).await;
            }
        };
        if let Err(refusal) = self.fetcher.guard().check_url(&url) {
            METRICS.ssrf_refusals.inc();
            let reason = refusal.to_string();
            return end(rt, &msg, task.level, Outcome::Failed { reason }).await;
        }
        // Search checked already; a task from before the filter, or crafted, is checked here.
        if let Some(reason) = task.domains.refusal_of_url(url.as_str()) {
            return end(rt, &msg, task.level, Outcome::Failed { reason }).await;
        }
        let crawl_delay = match politeness::robots(rt, &self.fetcher, &url).await? {
            Robots::Allowed { crawl_delay } => crawl_delay,
            Robots::Later(wait) => return Ok(Handled::Later(wait)),
            Robots::End(outcome) => return end(rt, &msg, task.level, outcome).await,
        };
        // Files are downloads: a browser would only show them in a viewer.
        let ceiling = if task.source.file_type.is_some() {
            BROWSER_LEVEL - 1
        } else {
            3
        };
        let max_level = task.max_level.min(rt.config.fetch.max_level).min(ceiling);
        // After robots.txt and the domain filter: a cached copy obeys today's rules.
        let max_age = (task.cache_max_age_secs).unwrap_or(rt.config.cache.max_age_secs);
        let mut cache = match max_age {
            0 => None,
            _ => match consult_cache(rt, &msg, max_age, max_level).await? {
                Cached::Done(handled) => return Ok(handled),
                Cached::Fetch(fill) => Some(fill),
            },
        };
        let host = host_of(&url);
        // Start where this host last needed to be met; never above what this task may reach.
        let known = Known::read(rt, &host).await?;
        let remembered = known.level.unwrap_or(0);
        let level = task.level.max(remembered.min(255) as u8).min(max_level);
        if level >= BROWSER_LEVEL && self.browser.is_none() {
            return hand_on(rt, &msg, level).await;
        }
        // The host's turn before its slot: tasks for one host wake one by one, each as the
        // previous one's request should have ended.
        let interval = match politeness::take_turn(rt, &host, &known, crawl_delay).await? {
            Ok(interval) => interval,
            Err(wait) => return Ok(Handled::Later(wait)),
        };
        let token = format!("{}:{}", msg.job_id, task.source.idx);
        let contact = match Contact::enter(rt, &host, token, interval).await? {
            Ok(contact) => contact,
            Err(wait) => return Ok(Handled::Later(wait)),
        };
        // Counted once per request made, not per deferral.
        politeness::robots_decision("allowed");
        let result = (self.fetch_at(rt, &msg, &url, (level, max_level), cache.as_mut())).await;
        contact.leave(rt).await;
        if let Some(lock) = cache.and_then(|fill| fill.lock) {
            // Not stored, and not to be: the jobs waiting for the page fetch it.
            lock.release().await?;
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocked(retry_after: Option<Duration>) -> Attempt {
        Attempt::Blocked {
            block: Block::Status(403),
            retry_after,
        }
    }

    #[test]
    fn a_block_escalates_until_the_highest_level_then_ends() {
        assert_eq!(next_after(&blocked(None), 0, 3, false), Next::Escalate(1));
        assert_eq!(next_after(&blocked(None), 2, 3, true), Next::Escalate(3));
        assert_eq!(
            next_after(&blocked(None), 3, 3, false),
            Next::End(Outcome::Blocked { level: 3 })
        );
        // A job that allows only plain HTTP ends where its own ceiling is.
        assert_eq!(
            next_after(&blocked(None), 1, 1, false),
            Next::End(Outcome::Blocked { level: 1 })
        );
    }

    #[test]
    fn retry_after_holds_the_host_unless_this_was_the_last_attempt() {
        let hold = Duration::from_secs(7);
        assert_eq!(
            next_after(&blocked(Some(hold)), 0, 3, false),
            Next::HoldAndRetry(hold)
        );
        // On the last attempt the block is treated as any other: the next level, or the end.
        assert_eq!(
            next_after(&blocked(Some(hold)), 0, 3, true),
            Next::Escalate(1)
        );
        assert_eq!(
            next_after(&blocked(Some(hold)), 3, 3, true),
            Next::End(Outcome::Blocked { level: 3 })
        );
    }

    #[test]
    fn a_transient_failure_retries_then_ends_as_failed() {
        let failed = Attempt::Transient("http 503".into());
        assert_eq!(next_after(&failed, 1, 3, false), Next::Retry);
        assert_eq!(
            next_after(&failed, 1, 3, true),
            Next::End(Outcome::Failed {
                reason: "http 503".into()
            })
        );
    }

    #[test]
    fn a_page_that_ended_outside_the_jobs_domains_is_not_read() {
        let domains = Domains::new(&["example.org".into()], &[]);
        assert_eq!(ended_outside(&domains, "https://www.example.org/a"), None);
        assert_eq!(
            ended_outside(&Domains::default(), "https://other.net/"),
            None
        );
        let Some(Outcome::Failed { reason }) = ended_outside(&domains, "https://other.net/a")
        else {
            panic!("a page on other.net was read");
        };
        assert!(
            reason.starts_with("redirected outside the job's domains: "),
            "{reason}"
        );
    }

    #[test]
    fn a_copy_its_server_confirmed_goes_to_clean_even_on_the_last_attempt() {
        assert_eq!(next_after(&Attempt::NotModified, 1, 3, false), Next::Clean);
        assert_eq!(next_after(&Attempt::NotModified, 0, 0, true), Next::Clean);
    }

    #[test]
    fn outages_wait_and_final_outcomes_end_whatever_the_attempt() {
        let outage = Attempt::Outage("no WebDriver".into());
        assert_eq!(next_after(&outage, 2, 3, true), Next::Outage);
        let too_large = Attempt::Ended(Outcome::TooLarge);
        assert_eq!(
            next_after(&too_large, 0, 3, false),
            Next::End(Outcome::TooLarge)
        );
    }
}
