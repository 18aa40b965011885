//! The fetch stage's handler.

use std::time::Duration;

use async_trait::async_trait;
use tracing::info;
use trawl_config::Config;
use trawl_messages::{Envelope, FetchTask, FetchedDoc, Outcome, Queue};
use trawl_pipeline::fanin::{record_outcome, OutcomeRecord};
use trawl_pipeline::{Handled, Runtime, Stage, StageError};
use url::Url;

use crate::http::{Fetched, Fetcher};
use crate::robots::{decide, rules_for};

/// The highest level this worker reaches over plain HTTP; 2 and 3 need the browser pool.
const HTTP_MAX_LEVEL: u8 = 1;

pub struct FetchStage {
    fetcher: Fetcher,
}

impl FetchStage {
    pub fn new(config: &Config) -> Result<Self, reqwest::Error> {
        Ok(FetchStage {
            fetcher: Fetcher::new(&config.fetch)?,
        })
    }
}

async fn end(
    rt: &Runtime,
    msg: &Envelope<FetchTask>,
    outcome: Outcome,
) -> Result<Handled, StageError> {
    let task = &msg.body;
    info!(url = %task.source.url, outcome = outcome.name(), level = task.level, "fetch ended");
    let record = OutcomeRecord {
        idx: task.source.idx,
        url: task.source.url.clone(),
        outcome,
        level: task.level,
        doc: None,
    };
    record_outcome(rt, msg, &task.query, record).await?;
    Ok(Handled::Done)
}

#[async_trait]
impl Stage for FetchStage {
    type Input = FetchTask;

    async fn handle(&self, rt: &Runtime, msg: Envelope<FetchTask>) -> Result<Handled, StageError> {
        let task = &msg.body;
        let url = match Url::parse(&task.source.url) {
            Ok(u) => u,
            Err(e) => {
                return end(
                    rt,
                    &msg,
                    Outcome::Failed {
                        reason: format!("invalid URL: {e}"),
                    },
                )
                .await
            }
        };
        if let Err(reason) = self.fetcher.guard().check_url(&url) {
            return end(rt, &msg, Outcome::Failed { reason }).await;
        }
        let cfg = &rt.config.fetch;
        let rules = rules_for(rt, &self.fetcher, &url).await?;
        let decision = decide(&rules, &cfg.user_agent, &url);
        if !decision.allowed {
            return end(rt, &msg, Outcome::RobotsDisallowed).await;
        }

        // Politeness across the fleet: never sleep holding a delivery, come back later instead.
        let host = url.host_str().unwrap_or_default().to_ascii_lowercase();
        let interval = Duration::from_millis(cfg.min_interval_ms)
            .max(decision.crawl_delay.unwrap_or_default());
        let wait = rt.store.rate_acquire(&host, interval).await?;
        if !wait.is_zero() {
            return Ok(Handled::Later(wait));
        }

        match self.fetcher.get(&url, task.level).await {
            Fetched::Page(page) => {
                let doc = FetchedDoc {
                    query: task.query.clone(),
                    source: task.source.clone(),
                    final_url: page.final_url,
                    status: page.status,
                    content_type: page.content_type,
                    level: task.level,
                    bytes: page.bytes,
                    body: page.body,
                };
                rt.publish(Queue::Clean, &msg.follow(doc)).await?;
                Ok(Handled::Done)
            }
            Fetched::Blocked { status, .. } if task.level < task.max_level.min(HTTP_MAX_LEVEL) => {
                info!(url = %task.source.url, status, from = task.level, "blocked; escalating");
                let next = FetchTask {
                    level: task.level + 1,
                    ..task.clone()
                };
                rt.publish(Queue::Fetch, &msg.follow(next)).await?;
                Ok(Handled::Done)
            }
            Fetched::Blocked { .. } => end(rt, &msg, Outcome::Blocked { level: task.level }).await,
            Fetched::Transient(reason) if msg.attempt + 1 < rt.config.broker.max_attempts => {
                Err(StageError::retryable(reason))
            }
            Fetched::Transient(reason) | Fetched::Failed(reason) => {
                end(rt, &msg, Outcome::Failed { reason }).await
            }
            Fetched::TooLarge => end(rt, &msg, Outcome::TooLarge).await,
            Fetched::Unsupported(content_type) => {
                end(rt, &msg, Outcome::Unsupported { content_type }).await
            }
        }
    }
}
