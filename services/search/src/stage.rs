//! The search stage's handler.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;

use async_trait::async_trait;
use tracing::info;
use trawl_config::{Config, SearchConfig, Selection};
use trawl_messages::record::{Attempt, QueryAnalysis, RawResult, Scored, SearchRecord};
use trawl_messages::{
    paths, AnalysedDoc, Envelope, FetchTask, Outcome, Queue, Round, SearchTask, Source, SourceKind,
};
use trawl_pipeline::fanin::{JobMeta, OutcomeRecord};
use trawl_pipeline::{Handled, Runtime, Stage, StageError};
use trawl_pipeline::{Job, JobLlm};

use crate::analysis::{analyse, analyse_with, locale_of};
use crate::chain::Search;
use crate::documents::{self, Documents};
use crate::metrics::METRICS;
use crate::normalize::normalize;
use crate::providers::{build_all, Freshness, Provider};
use crate::score::{by_score, score, select};
use trawl_llm::Llm;

/// Candidates the LLM steps (rerank, relevance, selection) look at, at most.
const LLM_CANDIDATES: usize = 30;

/// Why the search stage could not be built from its config.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("search.proxy: {0}")]
    Proxy(#[from] trawl_llm::proxy::ProxyError),
    #[error("{0}")]
    Http(#[from] reqwest::Error),
    #[error("{0}")]
    Llm(#[from] trawl_llm::LlmError),
}

pub struct SearchStage {
    providers: BTreeMap<String, Box<dyn Provider>>,
    documents: Documents,
    http: reqwest::Client,
    llm: Option<Llm>,
}

impl SearchStage {
    /// Builds the stage with API keys from the process environment.
    pub fn new(config: &Config) -> Result<Self, BuildError> {
        Self::with_env(config, &std::env::vars().collect())
    }

    /// Builds the stage with API keys looked up in `env` (tests pass their own).
    pub fn with_env(config: &Config, env: &BTreeMap<String, String>) -> Result<Self, BuildError> {
        let builder = trawl_http::builder()
            .timeout(Duration::from_secs(config.search.timeout_secs))
            .user_agent(format!("{} (research; search)", config.fetch.user_agent));
        let http = trawl_llm::proxy::apply(builder, &config.search.proxy, env)?.build()?;
        let llm = match &config.llm {
            Some(cfg) => Some(Llm::new(cfg, env)?),
            None => None,
        };
        let providers = build_all(&config.search, env);
        for name in providers.keys() {
            trawl_telemetry::init_series(&crate::metrics::METRICS.rate_wait, &[("provider", name)]);
        }
        Ok(SearchStage {
            providers,
            documents: Documents::default(),
            http,
            llm,
        })
    }
}

/// Merges results, keeping each normalised URL's best-ranked occurrence (the best score on a
/// tie): one page found by two sub-queries or providers is one candidate.
fn merge(into: &mut HashMap<String, Scored>, results: Vec<RawResult>, terms: &[String]) {
    for r in results {
        let Some(url) = normalize(&r.url) else {
            continue;
        };
        let s = score(r, url.clone(), terms);
        match into.get(&url) {
            Some(old) if (old.result.position, -old.score) <= (s.result.position, -s.score) => {}
            _ => {
                into.insert(url, s);
            }
        }
    }
}

/// The providers to ask, in order: the task's own, else the news chain for a news question,
/// else the configured one.
fn chain_of(cfg: &SearchConfig, task: &SearchTask, is_news: bool) -> Vec<String> {
    match &task.options.providers {
        Some(p) => p.clone(),
        None if is_news => cfg.news_providers.clone(),
        None => cfg.providers.clone(),
    }
}

/// How recent results must be: the task's window, else the configured one.
fn freshness_of(cfg: &SearchConfig, task: &SearchTask) -> Freshness {
    task.options
        .freshness
        .as_deref()
        .and_then(Freshness::parse)
        .or_else(|| Freshness::parse(&cfg.freshness))
        .unwrap_or_default()
}

/// What the searches of one job's sub-queries gathered, before scoring and selection.
struct Gathered {
    /// Each normalised URL's best result.
    best: HashMap<String, Scored>,
    attempts: Vec<Attempt>,
    answers: Vec<(String, String)>,
    refused: Vec<(RawResult, String)>,
    answered: bool,
}

/// What one search found: its work product (the analysis, every provider attempt and every
/// scored result, those worth fetching marked `selected` and first), and whether any provider
/// answered (an empty answer counts).
pub struct Found {
    pub record: SearchRecord,
    pub answered: bool,
}

impl Found {
    /// Every provider failed, although there was something to search for: an outage.
    pub fn unanswered(&self) -> bool {
        !self.answered && !self.record.analysis.sub_queries.is_empty()
    }

    /// What each failed provider said.
    pub fn errors(&self) -> String {
        let errors: Vec<String> = (self.record.attempts.iter())
            .filter(|a| a.failed())
            .map(|a| format!("{}: {}", a.provider, a.detail))
            .collect();
        errors.join("; ")
    }
}

impl SearchStage {
    /// The LLM configured for the stage's optional steps.
    pub fn llm(&self) -> Option<&Llm> {
        self.llm.as_ref()
    }

    /// Analyses the question, runs the provider chain for each sub-query, then scores and
    /// selects, with `llm` where it is ready (a job's, under its batch's budget; once the
    /// budget is spent the heuristic analysis and the formula decide). The stage's handler and
    /// `trawl mcp`'s search tool share it.
    pub async fn find(&self, rt: &Runtime, task: &SearchTask, llm: &JobLlm) -> Found {
        let analysis = analyse_with(llm.ready(), &task.query, &locale_of(task)).await;
        let analysis = with_fields(analysis, task);
        // A job's own URLs all count, so without a `max_urls` of its own the bound grows to
        // hold them.
        let listed = task.options.urls().len();
        let max = (task.options.max_urls).unwrap_or(rt.config.search.max_urls.max(listed));
        self.find_for(rt, task, llm, analysis, &HashSet::new(), max)
            .await
    }

    /// Runs each sub-query of `analysis`: in the job's documents when it has a root, and
    /// through its web chain (the documents are searched beside the web providers, not as one
    /// of their fallbacks).
    async fn gather(&self, rt: &Runtime, task: &SearchTask, analysis: &QueryAnalysis) -> Gathered {
        let cfg = &rt.config.search;
        let mut chain = chain_of(cfg, task, analysis.is_news);
        let root = documents::root_of(rt, task, &chain);
        chain.retain(|n| n != documents::NAME);
        let (freshness, locale) = (freshness_of(cfg, task), locale_of(task));
        let domains = task.options.domains();
        let search = Search {
            providers: &self.providers,
            http: &self.http,
            store: rt.store.as_ref(),
            cache_ttl: Duration::from_secs(cfg.cache_ttl_secs),
            requests_per_second: &cfg.requests_per_second,
            domains: &domains,
        };
        // A job that does not search asked no provider, which is no outage.
        let mut out = Gathered {
            best: HashMap::new(),
            attempts: Vec::new(),
            answers: Vec::new(),
            refused: Vec::new(),
            answered: !task.options.searches(),
        };
        let queries = if out.answered {
            &[][..]
        } else {
            &analysis.sub_queries[..]
        };
        let target = cfg.results_per_query;
        for sub in queries {
            if let Some(root) = &root {
                let found = self.documents.search(rt, root, sub, target).await;
                out.answered |= found.answered;
                out.attempts.push(found.attempt);
                merge(&mut out.best, found.results, &analysis.terms);
            }
            if chain.is_empty() {
                continue;
            }
            let news = analysis.is_news;
            let found = (search.chain(&chain, sub, target, freshness, news, &locale)).await;
            out.answered |= found.answered;
            out.attempts.extend(found.attempts);
            out.answers.extend(found.answers);
            out.refused.extend(found.refused);
            merge(&mut out.best, found.results, &analysis.terms);
        }
        out
    }

    /// Runs the searches of `analysis`, then scores and selects at most `max` results whose
    /// URLs are not in `tried` (normalised).
    async fn find_for(
        &self,
        rt: &Runtime,
        task: &SearchTask,
        llm: &JobLlm,
        analysis: QueryAnalysis,
        tried: &HashSet<String>,
        max: usize,
    ) -> Found {
        let cfg = &rt.config.search;
        let Gathered {
            best,
            attempts,
            answers,
            refused,
            answered,
        } = self.gather(rt, task, &analysis).await;
        let listed = listed(task, tried, &analysis.terms, max);
        let candidates: Vec<Scored> = (best.into_values())
            .filter(|s| !tried.contains(&s.url) && !listed.iter().any(|l| l.url == s.url))
            .collect();
        let choice = Choice {
            rt,
            analysis: &analysis,
            question: &task.query,
            min: task.options.min_relevance.unwrap_or(cfg.min_relevance),
            max: max.saturating_sub(listed.iter().filter(|l| l.selected).count()),
        };
        let (chosen, notes) = choice.choose(llm, candidates).await;
        let refused = (refused.into_iter()).filter_map(|(r, why)| {
            let url = normalize(&r.url)?;
            let mut s = score(r, url, &analysis.terms);
            s.reason = why;
            Some(s)
        });
        let results = listed.into_iter().chain(chosen).chain(refused).collect();
        let record = SearchRecord {
            query: task.query.clone(),
            analysis,
            attempts,
            notes,
            answers,
            results,
            round: None,
        };
        Found { record, answered }
    }
}

#[async_trait]
impl Stage for SearchStage {
    type Input = SearchTask;

    async fn handle(&self, rt: &Runtime, msg: Envelope<SearchTask>) -> Result<Handled, StageError> {
        let task = &msg.body;
        let job = Job::new(rt, &msg);
        if let Some(round) = &task.round {
            return self.follow_up(&job, round).await;
        }
        let llm = job.llm(self.llm.as_ref()).await?;
        let found = self.find(rt, task, &llm).await;
        let record = found.or_retry(&job)?;
        METRICS
            .results_per_question
            .observe(record.results.len() as f64);
        rt.put_json(&paths::search(msg.batch_id, msg.job_id), &record)
            .await?;
        if let Some(llm) = llm.ready() {
            job.charge("search", llm).await?;
        }
        let sources = job.open(job_meta(record)).await?;
        METRICS.selected_per_question.observe(sources.len() as f64);
        info!(selected = sources.len(), "search done");
        hand_on(&job, sources).await
    }
}

impl SearchStage {
    /// Follow-up round `round` of a job: its searches, then the results the job has not tried
    /// yet, at most `research.urls_per_round`, grow the job once per round.
    async fn follow_up(
        &self,
        job: &Job<'_, SearchTask>,
        round: &Round,
    ) -> Result<Handled, StageError> {
        let (rt, task) = (job.rt(), &job.envelope().body);
        let tried: HashSet<String> = (job.sources().await?.iter())
            .filter_map(|s| normalize(&s.url))
            .collect();
        let llm = job.llm(self.llm.as_ref()).await?;
        // The round's searches score their results by their own words too: they name what the
        // question's words did not find.
        let locale = locale_of(task);
        let mut analysis = with_fields(analyse(&task.query, &locale), task);
        for q in &round.queries {
            for t in trawl_text::terms_in(q, locale.lang) {
                if !analysis.terms.contains(&t) {
                    analysis.terms.push(t);
                }
            }
        }
        analysis.sub_queries = round.queries.clone();
        // A job's own `max_urls` bounds all its rounds together.
        let left = (task.options.max_urls).map_or(usize::MAX, |m| m.saturating_sub(tried.len()));
        let max = rt.config.research.urls_per_round.min(left);
        let mut record = if max == 0 {
            SearchRecord {
                query: task.query.clone(),
                analysis,
                notes: vec!["the job's max_urls is reached: nothing searched".into()],
                ..Default::default()
            }
        } else {
            (self.find_for(rt, task, &llm, analysis, &tried, max).await).or_retry(job)?
        };
        record.round = Some(round.clone());
        let (batch, id) = (job.envelope().batch_id, job.envelope().job_id);
        rt.put_json(&paths::search_round(batch, id, round.n), &record)
            .await?;
        if let Some(llm) = llm.ready() {
            job.charge("search", llm).await?;
        }
        let found: Vec<Source> = (record.results.into_iter())
            .filter(|s| s.selected)
            .map(source_of)
            .collect();
        let sources = job.extend_round(&task.query, round.n, &found).await?;
        info!(
            round = round.n,
            selected = sources.len(),
            "follow-up search done"
        );
        hand_on(job, sources).await
    }
}

impl Found {
    /// The record, unless every provider failed: then a retry, since an outage must not end
    /// the job with no sources. On the last attempt the job goes on with none, so it still
    /// ends (its report and search record say why) instead of waiting in the dead letters.
    fn or_retry(self, job: &Job<'_, SearchTask>) -> Result<SearchRecord, StageError> {
        if self.unanswered() && !job.last_attempt() {
            return Err(StageError::retryable(format!(
                "every provider failed: {}",
                self.errors()
            )));
        }
        Ok(self.record)
    }
}

/// Sends each of the job's new sources on: a fetch task, or for a provider's own answer, its
/// analysed document at once.
async fn hand_on(job: &Job<'_, SearchTask>, sources: Vec<Source>) -> Result<Handled, StageError> {
    let task = &job.envelope().body;
    let max_level = (task.options.max_level).unwrap_or(job.rt().config.fetch.max_level);
    let domains = task.options.domains();
    for source in sources {
        if source.kind == SourceKind::Answer {
            record_answer(job, &task.query, source).await?;
            continue;
        }
        let fetch = FetchTask {
            query: task.query.clone(),
            source,
            level: 0,
            max_level,
            depth: 0,
            domains: domains.clone(),
            cache_max_age_secs: task.options.cache_max_age_secs,
            documents: task.options.documents.clone(),
        };
        job.send(Queue::Fetch, fetch).await?;
    }
    Ok(Handled::Done)
}

/// The job's own `urls` not `tried` yet, selected ahead of anything search finds (the user
/// chose them), up to `max`; those outside the job's domains or past `max` are recorded, not
/// selected, with why.
fn listed(task: &SearchTask, tried: &HashSet<String>, terms: &[String], max: usize) -> Vec<Scored> {
    let domains = task.options.domains();
    let (mut out, mut seen, mut taken) = (Vec::<Scored>::new(), HashSet::new(), 0);
    for (i, url) in task.options.urls().iter().enumerate() {
        let Some(normal) = normalize(url).filter(|n| !tried.contains(n)) else {
            continue;
        };
        if !seen.insert(normal.clone()) {
            continue;
        }
        let result = RawResult {
            url: url.clone(),
            title: String::new(),
            snippet: String::new(),
            provider: "urls".into(),
            position: i as u32 + 1,
        };
        let mut s = score(result, normal, terms);
        (s.selected, s.reason) = match domains.refusal_of_url(url) {
            Some(why) => (false, format!("listed by the job, but {why}")),
            None if taken >= max => (false, format!("listed by the job, past its {max} URLs")),
            None => (true, "listed by the job".into()),
        };
        taken += usize::from(s.selected);
        out.push(s);
    }
    out
}

/// `analysis` with the job's fields first among its data points: they are what its answer must
/// contain, so clean extracts each from every source, and a follow-up round looks for one no
/// source gave.
fn with_fields(mut analysis: QueryAnalysis, task: &SearchTask) -> QueryAnalysis {
    if let Some(fields) = &task.options.fields {
        let points = &mut analysis.target_data_points;
        for point in fields.fields.iter().map(|f| f.point()).rev() {
            if !points.contains(&point) {
                points.insert(0, point);
            }
        }
    }
    analysis
}

/// A selected result as a source of the job (numbered when the job takes it).
fn source_of(s: Scored) -> Source {
    Source {
        idx: 0,
        url: s.url,
        title: s.result.title,
        snippet: s.result.snippet,
        provider: s.result.provider,
        position: s.result.position,
        score: s.score,
        kind: s.kind,
        file_type: s.file_type,
    }
}

/// The job's fan-in meta from its search record: the selected results, then the providers'
/// direct answers, numbered in that order.
fn job_meta(record: SearchRecord) -> JobMeta {
    let selected = (record.results.into_iter())
        .filter(|s| s.selected)
        .map(source_of);
    let answers = (record.answers.iter()).map(|(provider, answer)| answer_source(provider, answer));
    let mut sources: Vec<Source> = selected.chain(answers).collect();
    for (i, s) in sources.iter_mut().enumerate() {
        s.idx = i as u32;
    }
    JobMeta {
        query: record.query,
        sources,
        sub_queries: record.analysis.sub_queries,
        data_points: record.analysis.target_data_points,
        is_news: record.analysis.is_news,
        language: record.analysis.language,
    }
}

/// What selection works from: the question, its analysis and the bounds on relevance and count.
struct Choice<'a> {
    rt: &'a Runtime,
    analysis: &'a QueryAnalysis,
    question: &'a str,
    min: f64,
    max: usize,
}

impl Choice<'_> {
    /// The results selected from `candidates`, best first: by `llm` where it is ready, else
    /// by score; with notes on how they were chosen.
    async fn choose(
        &self,
        llm: &JobLlm,
        mut candidates: Vec<Scored>,
    ) -> (Vec<Scored>, Vec<String>) {
        by_score(&mut candidates);
        let mut notes = Vec::new();
        if let JobLlm::BudgetSpent = llm {
            notes.push(
                "the batch's LLM budget is spent: heuristic analysis and score selection".into(),
            );
        }
        let results = match llm.ready() {
            Some(llm) if !candidates.is_empty() => self.with_llm(llm, candidates, &mut notes).await,
            _ => select(candidates, self.min, self.max),
        };
        (results, notes)
    }

    /// Selection with the optional LLM steps of `search.*`: rerank, relevance check, LLM pick.
    /// Each falls back to the formula when the LLM cannot answer, with a note saying so.
    async fn with_llm(
        &self,
        llm: &Llm,
        mut candidates: Vec<Scored>,
        notes: &mut Vec<String>,
    ) -> Vec<Scored> {
        let cfg = &self.rt.config.search;
        let top = candidates.len().min(LLM_CANDIDATES);
        if cfg.rerank {
            self.rerank(llm, &mut candidates[..top], notes).await;
        }
        if cfg.llm_relevance {
            self.check_relevance(llm, &mut candidates, notes).await;
        }
        if cfg.selection == Selection::Llm {
            match crate::judge::llm_select(llm, self.question, &candidates[..top], self.max).await {
                Ok(picked) => return picked_first(candidates, &picked),
                Err(e) => notes.push(format!("LLM selection failed, selected by score: {e}")),
            }
        }
        select(candidates, self.min, self.max)
    }

    /// Reorders the top candidates by the formula blended with embedding similarity.
    async fn rerank(&self, llm: &Llm, top: &mut [Scored], notes: &mut Vec<String>) {
        match crate::judge::rerank(llm, self.question, top).await {
            Ok(similarities) => {
                for (s, sim) in top.iter_mut().zip(similarities) {
                    s.similarity = Some(sim);
                }
                // The formula still gates; similarity only reorders what passes it.
                let key = |s: &Scored| 0.7 * s.score + 0.3 * s.similarity.unwrap_or(0.0);
                top.sort_by(|a, b| key(b).total_cmp(&key(a)));
                notes.push("reranked by embedding similarity".into());
            }
            Err(e) => notes.push(format!("rerank failed, formula order kept: {e}")),
        }
    }

    /// Asks the LLM about each candidate the formula would consider (twice the count wanted).
    async fn check_relevance(&self, llm: &Llm, candidates: &mut [Scored], notes: &mut Vec<String>) {
        let store = self.rt.store.as_ref();
        let considered = (candidates.iter_mut())
            .filter(|s| s.score >= self.min)
            .take(2 * self.max);
        for s in considered {
            match crate::judge::relevance(llm, store, self.analysis, self.question, s).await {
                Ok(r) => s.llm_relevance = Some(r),
                Err(e) => notes.push(format!(
                    "relevance check of {} failed, kept by score: {e}",
                    s.url
                )),
            }
        }
    }
}

/// The LLM's picks, in its order, then every other candidate, unselected.
fn picked_first(mut candidates: Vec<Scored>, picked: &[usize]) -> Vec<Scored> {
    for (i, s) in candidates.iter_mut().enumerate() {
        s.selected = picked.contains(&i);
        s.reason = if s.selected {
            "picked by the LLM".into()
        } else {
            "not picked by the LLM".into()
        };
    }
    let mut order: Vec<Scored> = picked.iter().map(|&i| candidates[i].clone()).collect();
    order.extend(candidates.into_iter().filter(|s| !s.selected));
    order
}

/// A provider's direct answer as a source: its "URL" names the provider, since there is no page.
fn answer_source(provider: &str, answer: &str) -> Source {
    Source {
        idx: 0,
        url: format!("{provider}:answer"),
        title: format!("Answer written by {provider}"),
        snippet: answer.chars().take(300).collect(),
        provider: provider.to_owned(),
        position: 0,
        score: 1.0,
        kind: SourceKind::Answer,
        file_type: None,
    }
}

/// An answer needs no fetch: it becomes an analysed document at once.
async fn record_answer(
    job: &Job<'_, SearchTask>,
    query: &str,
    source: Source,
) -> Result<(), StageError> {
    let key = paths::doc(job.envelope().batch_id, job.envelope().job_id, source.idx);
    let text = source.snippet.clone();
    let doc = AnalysedDoc {
        summary: text.clone(),
        key_points: trawl_text::sentences(&text),
        relevance: 0.5,
        is_relevant: true,
        ..AnalysedDoc::new(source.clone(), text)
    };
    job.rt().put_json(&key, &doc).await?;
    let record = OutcomeRecord {
        idx: source.idx,
        url: source.url,
        outcome: Outcome::Analysed,
        level: 0,
        doc: Some(key),
    };
    job.record(query, record).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(url: &str, position: u32, title: &str) -> RawResult {
        RawResult {
            url: url.into(),
            title: title.into(),
            snippet: String::new(),
            provider: "p".into(),
            position,
        }
    }

    /// A job's own URLs come first, once each, up to its bound; one outside its domains or
    /// past the bound is recorded with why, not selected.
    #[test]
    fn listed_urls_are_selected_within_the_jobs_domains_and_bound() {
        let options = trawl_messages::JobOptions {
            urls: Some(
                [
                    "https://a.example.org/1",
                    "https://a.example.org/1#again",
                    "https://other.net/x",
                    "https://b.example.org/2",
                    "https://c.example.org/3",
                ]
                .map(String::from)
                .to_vec(),
            ),
            include_domains: Some(vec!["example.org".into()]),
            ..Default::default()
        };
        let task = SearchTask::new("q".into(), options);
        let tried = HashSet::from([normalize("https://c.example.org/3").unwrap()]);
        let got = listed(&task, &tried, &[], 1);
        let seen: Vec<(&str, bool, &str)> = (got.iter())
            .map(|s| (s.result.url.as_str(), s.selected, s.reason.as_str()))
            .collect();
        assert_eq!(
            seen,
            [
                ("https://a.example.org/1", true, "listed by the job"),
                (
                    "https://other.net/x",
                    false,
                    "listed by the job, but other.net is outside the job's domains (example.org)"
                ),
                (
                    "https://b.example.org/2",
                    false,
                    "listed by the job, past its 1 URLs"
                ),
            ]
        );
    }

    #[test]
    fn merge_keeps_the_best_ranked_occurrence_of_one_page() {
        let terms = vec!["zorbium".to_string()];
        let mut best = HashMap::new();
        merge(
            &mut best,
            vec![
                raw("http://a.test/x?utm_source=1", 7, "Zorbium"),
                raw("ftp://bad/", 1, ""),
            ],
            &terms,
        );
        merge(
            &mut best,
            vec![raw("HTTP://A.test/x#top", 2, "other")],
            &terms,
        );
        assert_eq!(
            best.len(),
            1,
            "the ftp URL is not a candidate and the two a.test URLs are one"
        );
        let kept = &best["http://a.test/x"];
        assert_eq!(kept.result.position, 2);
    }
}
