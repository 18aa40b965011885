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
use trawl_pipeline::fanin::{open_job, record_outcome, OutcomeRecord};
use trawl_pipeline::{Handled, Runtime, Stage, StageError};

use crate::analysis::{analyse, QueryAnalysis};
use crate::chain::{Attempt, Search};
use crate::metrics::METRICS;
use crate::normalize::normalize;
use crate::providers::{build_all, Freshness, Provider};
use crate::score::{score, select, Scored};

pub struct SearchStage {
    providers: BTreeMap<String, Box<dyn Provider>>,
    http: reqwest::Client,
}

/// The `search.json` work product: every provider attempt, every result with its score
/// breakdown, and why it was selected or rejected.
#[derive(Serialize)]
struct SearchRecord<'a> {
    query: &'a str,
    analysis: &'a QueryAnalysis,
    attempts: &'a [Attempt],
    answers: &'a [(String, String)],
    results: &'a [Scored],
}

impl SearchStage {
    /// Builds the stage with API keys from the process environment.
    pub fn new(config: &Config) -> Result<Self, reqwest::Error> {
        Self::with_env(config, &std::env::vars().collect())
    }

    /// Builds the stage with API keys looked up in `env` (tests pass their own).
    pub fn with_env(
        config: &Config,
        env: &BTreeMap<String, String>,
    ) -> Result<Self, reqwest::Error> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(config.search.timeout_secs))
            .user_agent(format!("{} (research; search)", config.fetch.user_agent))
            .no_proxy()
            .build()?;
        Ok(SearchStage {
            providers: build_all(&config.search, env),
            http,
        })
    }
}

/// Merges results, keeping each normalised URL's best-scoring occurrence.
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
            Some(old) if old.score >= s.score => {}
            _ => {
                into.insert(url, s);
            }
        }
    }
}

#[async_trait]
impl Stage for SearchStage {
    type Input = SearchTask;

    async fn handle(&self, rt: &Runtime, msg: Envelope<SearchTask>) -> Result<Handled, StageError> {
        let task = &msg.body;
        let cfg = &rt.config.search;
        let analysis = analyse(&task.query);
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
        // Every provider failed: retry, since an outage must not end the job with no sources.
        // On the last attempt, go on with none, so the job still ends (its report and
        // search.json say why) instead of waiting in the dead-letter queue.
        if !answered && msg.attempt + 1 < rt.config.broker.max_attempts {
            let errors: Vec<String> = attempts
                .iter()
                .map(|a| format!("{}: {}", a.provider, a.detail))
                .collect();
            return Err(StageError::retryable(format!(
                "every provider failed: {}",
                errors.join("; ")
            )));
        }

        let min = task.options.min_relevance.unwrap_or(cfg.min_relevance);
        let max = task.options.max_urls.unwrap_or(cfg.max_urls);
        let scored = select(best.into_values().collect(), min, max);
        METRICS.results_per_question.observe(scored.len() as f64);
        let record = SearchRecord {
            query: &task.query,
            analysis: &analysis,
            attempts: &attempts,
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
            })
            .collect();
        for (provider, answer) in &answers {
            sources.push(answer_source(provider, answer));
        }
        for (i, s) in sources.iter_mut().enumerate() {
            s.idx = i as u32;
        }
        let sources = open_job(rt, &msg, &task.query, sources).await?;
        METRICS.selected_per_question.observe(sources.len() as f64);
        info!(
            selected = sources.len(),
            candidates = scored.len(),
            "search done"
        );
        let max_level = task.options.max_level.unwrap_or(rt.config.fetch.max_level);
        for source in sources {
            if source.kind == SourceKind::Answer {
                record_answer(rt, &msg, source).await?;
                continue;
            }
            let fetch = msg.follow(FetchTask {
                query: task.query.clone(),
                source,
                level: 0,
                max_level,
            });
            rt.publish(Queue::Fetch, &fetch).await?;
        }
        Ok(Handled::Done)
    }
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
    }
}

/// An answer needs no fetch: it becomes an analysed document at once.
async fn record_answer(
    rt: &Runtime,
    msg: &Envelope<SearchTask>,
    source: Source,
) -> Result<(), StageError> {
    let key = paths::doc(msg.batch_id, msg.job_id, source.idx);
    let text = source.snippet.clone();
    let doc = AnalysedDoc {
        final_url: source.url.clone(),
        title: source.title.clone(),
        markdown: text.clone(),
        summary: text.clone(),
        key_points: trawl_pipeline::text::sentences(&text),
        relevance: 0.5,
        is_relevant: true,
        level: 0,
        bytes: text.len() as u64,
        source: source.clone(),
    };
    rt.put_json(&key, &doc).await?;
    let record = OutcomeRecord {
        idx: source.idx,
        url: source.url,
        outcome: Outcome::Analysed,
        level: 0,
        doc: Some(key),
    };
    record_outcome(rt, msg, &msg.body.query, record).await
}
