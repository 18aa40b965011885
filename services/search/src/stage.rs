//! The search stage's handler.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use async_trait::async_trait;
use serde::Serialize;
use tracing::info;
use trawl_config::Config;
use trawl_messages::{
    paths, AnalysedDoc, Envelope, FetchTask, Outcome, Queue, SearchTask, Source, SourceKind,
};
use trawl_pipeline::fanin::{JobMeta, OutcomeRecord};
use trawl_pipeline::{Handled, Runtime, Stage, StageError};
use trawl_pipeline::{Job, JobLlm};

use crate::analysis::{analyse_with, QueryAnalysis};
use crate::chain::{Attempt, Search};
use crate::metrics::METRICS;
use crate::normalize::normalize;
use crate::providers::{build_all, Freshness, Provider};
use crate::score::{by_score, score, select, Scored};
use trawl_llm::Llm;

/// Candidates the LLM steps (rerank, relevance, selection) look at, at most.
const LLM_CANDIDATES: usize = 30;

pub struct SearchStage {
    providers: BTreeMap<String, Box<dyn Provider>>,
    http: reqwest::Client,
    llm: Option<Llm>,
}

/// The `search.json` work product: every provider attempt, every result with its score
/// breakdown, and why it was selected or rejected.
#[derive(Serialize)]
struct SearchRecord<'a> {
    query: &'a str,
    analysis: &'a QueryAnalysis,
    attempts: &'a [Attempt],
    /// What the optional LLM steps did or why they fell back.
    notes: &'a [String],
    answers: &'a [(String, String)],
    results: &'a [Scored],
}

impl SearchStage {
    /// Builds the stage with API keys from the process environment.
    pub fn new(config: &Config) -> Result<Self, String> {
        Self::with_env(config, &std::env::vars().collect())
    }

    /// Builds the stage with API keys looked up in `env` (tests pass their own).
    pub fn with_env(config: &Config, env: &BTreeMap<String, String>) -> Result<Self, String> {
        let builder = reqwest::Client::builder()
            .timeout(Duration::from_secs(config.search.timeout_secs))
            .user_agent(format!("{} (research; search)", config.fetch.user_agent));
        let http = trawl_llm::proxy::apply(builder, &config.search.proxy, env)
            .map_err(|e| format!("search.proxy: {e}"))?
            .build()
            .map_err(|e| e.to_string())?;
        let llm = match &config.llm {
            Some(cfg) => Some(Llm::new(cfg, env).map_err(|e| e.to_string())?),
            None => None,
        };
        Ok(SearchStage {
            providers: build_all(&config.search, env),
            http,
            llm,
        })
    }
}

/// Merges results, keeping each normalised URL's best-ranked occurrence (the best score on a
/// tie): one page found by two sub-queries or providers is one candidate.
fn merge(
    into: &mut HashMap<String, Scored>,
    results: Vec<crate::providers::RawResult>,
    terms: &[String],
) {
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

/// What one search found: the analysis, every provider attempt and every scored result, with
/// those worth fetching marked `selected`.
pub struct Found {
    pub analysis: QueryAnalysis,
    pub attempts: Vec<Attempt>,
    /// What the optional LLM steps did or why they fell back.
    pub notes: Vec<String>,
    /// Direct answers some providers write, by provider.
    pub answers: Vec<(String, String)>,
    /// Scored results, selected ones first.
    pub results: Vec<Scored>,
    /// Whether any provider answered (an empty answer counts).
    pub answered: bool,
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
        let cfg = &rt.config.search;
        let analysis = analyse_with(llm.ready(), &task.query).await;
        let chain = match &task.options.providers {
            Some(p) => p.clone(),
            None if analysis.is_news => cfg.news_providers.clone(),
            None => cfg.providers.clone(),
        };
        let freshness = task
            .options
            .freshness
            .as_deref()
            .and_then(Freshness::parse)
            .or_else(|| Freshness::parse(&cfg.freshness))
            .unwrap_or_default();
        let search = Search {
            providers: &self.providers,
            http: &self.http,
            store: rt.store.as_ref(),
            cache_ttl: Duration::from_secs(cfg.cache_ttl_secs),
        };

        let mut best: HashMap<String, Scored> = HashMap::new();
        let (mut attempts, mut answers, mut answered) = (Vec::new(), Vec::new(), false);
        for sub in &analysis.sub_queries {
            let found = search
                .chain(
                    &chain,
                    sub,
                    cfg.results_per_query,
                    freshness,
                    analysis.is_news,
                )
                .await;
            answered |= found.answered;
            attempts.extend(found.attempts);
            answers.extend(found.answers);
            merge(&mut best, found.results, &analysis.terms);
        }

        let min = task.options.min_relevance.unwrap_or(cfg.min_relevance);
        let max = task.options.max_urls.unwrap_or(cfg.max_urls);
        let mut candidates: Vec<Scored> = best.into_values().collect();
        by_score(&mut candidates);
        let mut notes = Vec::new();
        if let JobLlm::BudgetSpent = llm {
            notes.push(
                "the batch's LLM budget is spent: heuristic analysis and score selection".into(),
            );
        }
        let results = match llm.ready() {
            Some(llm) if !candidates.is_empty() => {
                choose_with_llm(
                    llm,
                    rt,
                    &analysis,
                    &task.query,
                    candidates,
                    min,
                    max,
                    &mut notes,
                )
                .await
            }
            _ => select(candidates, min, max),
        };
        Found {
            analysis,
            attempts,
            notes,
            answers,
            results,
            answered,
        }
    }
}

#[async_trait]
impl Stage for SearchStage {
    type Input = SearchTask;

    async fn handle(&self, rt: &Runtime, msg: Envelope<SearchTask>) -> Result<Handled, StageError> {
        let task = &msg.body;
        let job = Job::new(rt, &msg);
        let llm = job.llm(self.llm.as_ref()).await?;
        let Found {
            analysis,
            attempts,
            notes,
            answers,
            results: scored,
            answered,
        } = self.find(rt, task, &llm).await;
        // Every provider failed: retry, since an outage must not end the job with no sources.
        // On the last attempt, go on with none, so the job still ends (its report and
        // search.json say why) instead of waiting in the dead-letter queue.
        let searched = !analysis.sub_queries.is_empty();
        if searched && !answered && !job.last_attempt() {
            let errors: Vec<String> = attempts
                .iter()
                .map(|a| format!("{}: {}", a.provider, a.detail))
                .collect();
            return Err(StageError::retryable(format!(
                "every provider failed: {}",
                errors.join("; ")
            )));
        }
        METRICS.results_per_question.observe(scored.len() as f64);
        let record = SearchRecord {
            query: &task.query,
            analysis: &analysis,
            attempts: &attempts,
            notes: &notes,
            answers: &answers,
            results: &scored,
        };
        rt.put_json(&paths::search(msg.batch_id, msg.job_id), &record)
            .await?;

        let mut sources: Vec<Source> = scored
            .iter()
            .filter(|s| s.selected)
            .map(|s| Source {
                idx: 0,
                url: s.url.clone(),
                title: s.result.title.clone(),
                snippet: s.result.snippet.clone(),
                provider: s.result.provider.clone(),
                position: s.result.position,
                score: s.score,
                kind: s.kind,
                file_type: s.file_type,
            })
            .collect();
        for (provider, answer) in &answers {
            sources.push(answer_source(provider, answer));
        }
        for (i, s) in sources.iter_mut().enumerate() {
            s.idx = i as u32;
        }
        let meta = JobMeta {
            query: task.query.clone(),
            sources,
            sub_queries: analysis.sub_queries.clone(),
            data_points: analysis.target_data_points.clone(),
            is_news: analysis.is_news,
        };
        if let Some(llm) = llm.ready() {
            job.charge("search", llm).await?;
        }
        let sources = job.open(meta).await?;
        METRICS.selected_per_question.observe(sources.len() as f64);
        info!(
            selected = sources.len(),
            candidates = scored.len(),
            "search done"
        );
        let max_level = task.options.max_level.unwrap_or(rt.config.fetch.max_level);
        for source in sources {
            if source.kind == SourceKind::Answer {
                record_answer(&job, &task.query, source).await?;
                continue;
            }
            let fetch = FetchTask {
                query: task.query.clone(),
                source,
                level: 0,
                max_level,
                depth: 0,
            };
            job.send(Queue::Fetch, fetch).await?;
        }
        Ok(Handled::Done)
    }
}

/// Selection with the optional LLM steps of `search.*`: rerank, relevance check, LLM pick. Each
/// falls back to the formula when the LLM cannot answer, with a note saying so.
#[allow(clippy::too_many_arguments)]
async fn choose_with_llm(
    llm: &Llm,
    rt: &Runtime,
    analysis: &QueryAnalysis,
    question: &str,
    mut candidates: Vec<Scored>,
    min: f64,
    max: usize,
    notes: &mut Vec<String>,
) -> Vec<Scored> {
    let cfg = &rt.config.search;
    let top = candidates.len().min(LLM_CANDIDATES);
    if cfg.rerank {
        match crate::judge::rerank(llm, question, &candidates[..top]).await {
            Ok(similarities) => {
                for (s, sim) in candidates.iter_mut().zip(similarities) {
                    s.similarity = Some(sim);
                }
                // The formula still gates; similarity only reorders what passes it.
                let key = |s: &Scored| 0.7 * s.score + 0.3 * s.similarity.unwrap_or(0.0);
                candidates[..top].sort_by(|a, b| key(b).total_cmp(&key(a)));
                notes.push("reranked by embedding similarity".into());
            }
            Err(e) => notes.push(format!("rerank failed, formula order kept: {e}")),
        }
    }
    if cfg.llm_relevance {
        for s in candidates
            .iter_mut()
            .filter(|s| s.score >= min)
            .take(2 * max)
        {
            match crate::judge::relevance(llm, rt.store.as_ref(), analysis, question, s).await {
                Ok(r) => s.llm_relevance = Some(r),
                Err(e) => notes.push(format!(
                    "relevance check of {} failed, kept by score: {e}",
                    s.url
                )),
            }
        }
    }
    if cfg.selection == "llm" {
        match crate::judge::llm_select(llm, question, &candidates[..top], max).await {
            Ok(picked) => {
                for (i, s) in candidates.iter_mut().enumerate() {
                    s.selected = picked.contains(&i);
                    s.reason = if s.selected {
                        "picked by the LLM".into()
                    } else {
                        "not picked by the LLM".into()
                    };
                }
                let mut order: Vec<Scored> =
                    picked.iter().map(|&i| candidates[i].clone()).collect();
                order.extend(candidates.into_iter().filter(|s| !s.selected));
                return order;
            }
            Err(e) => notes.push(format!("LLM selection failed, selected by score: {e}")),
        }
    }
    select(candidates, min, max)
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
    use crate::providers::RawResult;

    fn raw(url: &str, position: u32, title: &str) -> RawResult {
        RawResult {
            url: url.into(),
            title: title.into(),
            snippet: String::new(),
            provider: "p".into(),
            position,
        }
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
