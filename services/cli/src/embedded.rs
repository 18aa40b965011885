//! Every stage in one process over the in-memory broker and store: `trawl run`, benchmarks and
//! tests. The same stage code as the fleet, behind the twins.

use std::collections::BTreeMap;

use tokio::sync::watch;
use tokio::task::JoinSet;
use trawl_config::Config;
use trawl_fetch::browser::{webdriver_ready, LocalWebDriver};
use trawl_messages::{SearchTask, StageKind};
use trawl_pipeline::batch::{submit, BatchOptions, Question};
use trawl_pipeline::serve::Shutdown;
use trawl_pipeline::{Runtime, StageError};
use uuid::Uuid;

use crate::stages;

/// Why the in-process stages could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Build(#[from] stages::BuildError),
    /// The object store of `output` could not be opened.
    #[error(transparent)]
    Objects(#[from] trawl_store::ObjectError),
}

pub struct Embedded {
    pub rt: Runtime,
    stop: watch::Sender<bool>,
    workers: JoinSet<Result<(), StageError>>,
    /// A chromedriver started for this run, stopped after the stages.
    webdriver: Option<LocalWebDriver>,
}

/// Gets levels 2–3 a WebDriver: the configured one if it answers, else a chromedriver started
/// here on its port; failing both, lowers `fetch.max_level` to 1 and says so on stderr (pages
/// that need a browser then end as `blocked`).
pub async fn prepare_browser(config: &mut Config) -> Option<LocalWebDriver> {
    let url = &config.fetch.webdriver_url;
    if config.fetch.max_level < 2 || webdriver_ready(url).await {
        return None;
    }
    let local = url::Url::parse(url)
        .ok()
        .filter(|u| matches!(u.host_str(), Some("127.0.0.1" | "localhost")))
        .and_then(|u| u.port());
    let started = match local {
        Some(port) => LocalWebDriver::start(port).await.map_err(|e| e.to_string()),
        None => Err(format!("no WebDriver answers at {url}")),
    };
    match started {
        Ok(driver) => Some(driver),
        Err(e) => {
            eprintln!("note: pages that need a real browser will end as blocked: {e}");
            config.fetch.max_level = 1;
            None
        }
    }
}

/// Enqueues `task` as a batch of its own (`trawl run`, the MCP `research` tool): the batch's id
/// and its one job's.
pub async fn submit_one(rt: &Runtime, task: SearchTask) -> Result<(Uuid, Uuid), StageError> {
    let questions = Question::numbered(vec![task]);
    let manifest = submit(rt, questions, BatchOptions::default(), |_| {}).await?;
    Ok((manifest.batch_id, manifest.jobs[0].job_id))
}

impl Embedded {
    /// Starts every stage (the browser's only when `fetch.max_level` reaches it); secrets
    /// (API keys) are looked up in `env`.
    pub fn start(config: Config, env: &BTreeMap<String, String>) -> Result<Embedded, StartError> {
        let built = (StageKind::ALL.iter().copied())
            .filter(|k| *k != StageKind::FetchBrowser || config.fetch.max_level >= 2)
            .map(|kind| Ok((kind, stages::build(kind, &config, env)?)))
            .collect::<Result<Vec<_>, stages::BuildError>>()?;
        let rt = Runtime::embedded(config)?;
        let (stop, shutdown) = Shutdown::manual();
        let mut workers = JoinSet::new();
        for (kind, stage) in built {
            stage.spawn(kind, &rt, shutdown.clone().wait(), &mut workers);
        }
        Ok(Embedded {
            rt,
            stop,
            workers,
            webdriver: None,
        })
    }

    /// Keeps `driver` running until the stages stop.
    pub fn keep(mut self, driver: Option<LocalWebDriver>) -> Self {
        self.webdriver = driver;
        self
    }

    /// Stops the stages, letting in-flight work finish.
    pub async fn stop(mut self) {
        let _ = self.stop.send(true);
        while self.workers.join_next().await.is_some() {}
        // After the workers: their browser sessions close first.
        drop(self.webdriver.take());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn without_a_webdriver_the_run_stops_at_level_1() {
        // Not local, so nothing is started; not answering, so the browser levels go.
        let mut config = Config::default();
        config.fetch.webdriver_url = "http://webdriver.invalid:9515".into();
        assert!(prepare_browser(&mut config).await.is_none());
        assert_eq!(config.fetch.max_level, 1);
        // A batch that asked for no browser is left as it is, and nothing is probed.
        let mut config = Config::default();
        config.fetch.max_level = 0;
        assert!(prepare_browser(&mut config).await.is_none());
        assert_eq!(config.fetch.max_level, 0);
    }
}
