//! The search stage's handler.

use std::collections::HashMap;
use std::time::Duration;

use async_trait::async_trait;
use serde::Serialize;
use tracing::info;
use trawl_config::Config;
use trawl_messages::Queue;
use trawl_messages::{paths, Envelope, FetchTask, SearchTask, Source};
use trawl_pipeline::fanin::open_job;
use trawl_pipeline::{Handled, Runtime, Stage, StageError};

use crate::analysis::{analyse, QueryAnalysis};
use crate::normalize::normalize;
use crate::providers::{search_chain, Providers};
use crate::score::{score, select, Scored};

/// Results asked of a provider per sub-query.
const PER_SUB_QUERY: usize = 15;

pub struct SearchStage {
    providers: Providers,
}

/// The `search.json` work product: every result, its score breakdown, and why it was kept.
#[derive(Serialize)]
struct SearchRecord<'a> {
    query: &'a str,
    analysis: &'a QueryAnalysis,
    provider_errors: &'a [String],
    results: &'a [Scored],
}

impl SearchStage {
    pub fn new(config: &Config) -> Result<Self, reqwest::Error> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(config.search.timeout_secs))
            .user_agent(format!("{} (research; search)", config.fetch.user_agent))
            .no_proxy()
            .build()?;
        Ok(SearchStage {
            providers: Providers {
                http,
                searxng_url: config.search.searxng_url.clone(),
            },
        })
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

        // Merge every sub-query's results, keeping each URL's best position.
        let mut best: HashMap<String, Scored> = HashMap::new();
        let mut errors = Vec::new();
        let mut answered = false;
        for sub in &analysis.sub_queries {
            let chained = search_chain(&self.providers, &chain, sub, PER_SUB_QUERY).await;
            answered |= chained.answered;
            errors.extend(chained.errors);
            for r in chained.results {
                let Some(url) = normalize(&r.url) else {
                    continue;
                };
                let s = score(r, url.clone(), &analysis.terms);
                match best.get(&url) {
                    Some(old) if old.score >= s.score => {}
                    _ => {
                        best.insert(url, s);
                    }
                }
            }
        }
        // Every provider failed: retry, since an outage must not end the job with no sources.
        // On the last attempt, go on with none, so the job still ends (its report and
        // search.json say why) instead of waiting in the dead-letter queue.
        if !answered && msg.attempt + 1 < rt.config.broker.max_attempts {
            return Err(StageError::retryable(format!(
                "every provider failed: {}",
                errors.join("; ")
            )));
        }

        let min = task.options.min_relevance.unwrap_or(cfg.min_relevance);
        let max = task.options.max_urls.unwrap_or(cfg.max_urls);
        let scored = select(best.into_values().collect(), min, max);
        let record = SearchRecord {
            query: &task.query,
            analysis: &analysis,
            provider_errors: &errors,
            results: &scored,
        };
        rt.put_json(&paths::search(msg.batch_id, msg.job_id), &record)
            .await?;

        let sources: Vec<Source> = scored
            .iter()
            .filter(|s| s.selected)
            .enumerate()
            .map(|(i, s)| Source {
                idx: i as u32,
                url: s.url.clone(),
                title: s.result.title.clone(),
                snippet: s.result.snippet.clone(),
                provider: s.result.provider.clone(),
                position: s.result.position,
                score: s.score,
                kind: s.kind,
            })
            .collect();
        let sources = open_job(rt, &msg, &task.query, sources).await?;
        info!(
            selected = sources.len(),
            candidates = scored.len(),
            "search done"
        );
        let max_level = task.options.max_level.unwrap_or(rt.config.fetch.max_level);
        for source in sources {
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
