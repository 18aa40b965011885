//! The services a stage works with, chosen by config: RabbitMQ and Redis when their URLs are
//! set, the in-memory twins otherwise (`trawl run`, laptops, tests).

use std::sync::Arc;
use std::time::Duration;

use trawl_broker::{Broker, BrokerSettings, MemoryBroker, Message, Queue, RabbitBroker};
use trawl_config::Config;
use trawl_messages::envelope::Body;
use trawl_messages::Envelope;
use trawl_store::{MemoryStore, ObjectError, Objects, RedisStore, Store};

use crate::StageError;

/// Batch counters of LLM spend and budget, in micro-dollars.
pub use trawl_store::budget::{BUDGET, REFUSED, SPENT};
/// Batch counter of jobs whose search has opened their fan-in (for running-job progress).
pub const STARTED: &str = "started";

#[derive(Clone)]
pub struct Runtime {
    pub config: Arc<Config>,
    pub broker: Arc<dyn Broker>,
    pub store: Arc<dyn Store>,
    pub objects: Objects,
}

#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error(
        "{0}\n  hint: start RabbitMQ (scripts/services-up) or unset broker.url to run embedded"
    )]
    Broker(#[from] trawl_broker::BrokerError),
    #[error("{0}\n  hint: start Redis (scripts/services-up) or unset store.url to run embedded")]
    Store(#[from] trawl_store::StoreError),
    #[error("{0}")]
    Objects(#[from] ObjectError),
}

pub fn broker_settings(config: &Config) -> BrokerSettings {
    let delays: Vec<Duration> = (config.broker.retry_delays_secs.iter())
        .map(|&s| Duration::from_secs(s))
        .chain(
            config
                .broker
                .defer_delays_ms
                .iter()
                .map(|&ms| Duration::from_millis(ms)),
        )
        .collect();
    BrokerSettings::new(
        &config.broker.namespace,
        &delays,
        config.broker.delivery_limit,
    )
    .with_results_bounds(
        config.broker.results_max_length,
        Duration::from_secs(config.broker.results_ttl_secs),
    )
}

impl Runtime {
    /// Connects to what `config` names, waiting up to `wait` for each service with a visible
    /// message per try, then failing with a clear error.
    pub async fn connect(config: Config, wait: Duration) -> Result<Runtime, ConnectError> {
        let broker: Arc<dyn Broker> = match &config.broker.url {
            Some(url) => {
                Arc::new(RabbitBroker::connect(url, broker_settings(&config), wait).await?)
            }
            None => Arc::new(MemoryBroker::new(broker_settings(&config))),
        };
        let store: Arc<dyn Store> = match &config.store.url {
            Some(url) => Arc::new(RedisStore::connect(url, &config.store.prefix, wait).await?),
            None => Arc::new(MemoryStore::new()),
        };
        let objects = Objects::open(&config.output)?;
        Ok(Runtime {
            config: Arc::new(config),
            broker,
            store,
            objects,
        })
    }

    /// Every stage in one process over the in-memory twins of the broker and store, whatever
    /// `config` names; work products go to `output.url`.
    pub fn embedded(config: Config) -> Result<Runtime, ObjectError> {
        let objects = Objects::open(&config.output)?;
        Ok(Runtime {
            broker: Arc::new(MemoryBroker::new(broker_settings(&config))),
            store: Arc::new(MemoryStore::new()),
            objects,
            config: Arc::new(config),
        })
    }

    /// How long an ended batch's record stays in the store (`store.batch_ttl_secs`).
    pub fn batch_ttl(&self) -> Duration {
        Duration::from_secs(self.config.store.batch_ttl_secs)
    }

    pub fn job_ttl(&self) -> Duration {
        Duration::from_secs(self.config.store.job_ttl_secs)
    }

    /// Publishes an envelope and waits for the broker's confirm.
    pub async fn publish<B: Body>(
        &self,
        queue: Queue,
        envelope: &Envelope<B>,
    ) -> Result<(), StageError> {
        self.broker
            .publish(queue, Message::new(envelope.encode()))
            .await?;
        Ok(())
    }

    pub async fn publish_delayed<B: Body>(
        &self,
        queue: Queue,
        envelope: &Envelope<B>,
        delay: Duration,
    ) -> Result<(), StageError> {
        self.broker
            .publish_delayed(queue, Message::new(envelope.encode()), delay)
            .await?;
        Ok(())
    }

    /// Charges a job with what a stage spent on an LLM (for `job.json` and summaries); the
    /// batch was charged call by call, as each settled its budget reservation
    /// ([`trawl_llm::Llm::for_batch`]).
    pub async fn charge(
        &self,
        job: &str,
        stage: &str,
        spend: &trawl_llm::Spent,
    ) -> Result<(), StageError> {
        // Steps that fell back: `fallback.STEP: REASON`, read back into job.json.
        let mut fields: Vec<(String, i64)> = (spend.fallbacks.iter())
            .map(|(step, &n)| (format!("fallback.{step}"), n as i64))
            .collect();
        if spend.input_tokens + spend.output_tokens == 0 {
            if !fields.is_empty() {
                self.store.job_add(job, &fields, self.job_ttl()).await?;
            }
            return Ok(());
        }
        fields.extend([
            (format!("tokens_in.{stage}"), spend.input_tokens as i64),
            (format!("tokens_out.{stage}"), spend.output_tokens as i64),
            (
                format!("cost_micro.{stage}"),
                spend.cost_microdollars as i64,
            ),
            // Requests whose usage the endpoint did not report: their counts are estimates.
            (
                format!("estimated.{stage}"),
                spend.estimated_requests as i64,
            ),
        ]);
        self.store
            .job_add(job, &fields, self.job_ttl())
            .await
            .map_err(StageError::from)
    }

    /// False once the batch's LLM budget is reached: spent, or unable to give a call the room
    /// the call might cost (a batch without a budget never runs out). From then on its jobs
    /// take the non-LLM paths, without asking the store call by call.
    pub async fn budget_left(&self, batch: &str) -> Result<bool, StageError> {
        let budget = self.store.batch_counter(batch, BUDGET).await?;
        if budget <= 0 {
            return Ok(true);
        }
        Ok(self.store.batch_counter(batch, REFUSED).await? == 0
            && self.store.batch_counter(batch, SPENT).await? < budget)
    }

    /// Writes a JSON work product.
    pub async fn put_json<T: serde::Serialize>(
        &self,
        key: &str,
        value: &T,
    ) -> Result<(), StageError> {
        let bytes =
            serde_json::to_vec_pretty(value).map_err(|e| StageError::permanent(e.to_string()))?;
        self.objects.put(key, &bytes).await?;
        Ok(())
    }
}
