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

    pub(crate) fn job_ttl(&self) -> Duration {
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
