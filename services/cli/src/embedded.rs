//! Every stage in one process over the in-memory broker and store: `trawl run`, benchmarks and
//! tests. The same stage code as the fleet, behind the twins.

use std::collections::BTreeMap;
use std::sync::Arc;

use tokio::sync::watch;
use tokio::task::JoinSet;
use trawl_config::Config;
use trawl_messages::Queue;
use trawl_pipeline::serve::Shutdown;
use trawl_pipeline::{run_worker, Runtime, StageError};

pub struct Embedded {
    pub rt: Runtime,
    stop: watch::Sender<bool>,
    workers: JoinSet<Result<(), StageError>>,
}

impl Embedded {
    /// Starts the four stages; secrets (API keys) are looked up in `env`.
    pub fn start(config: Config, env: &BTreeMap<String, String>) -> Result<Embedded, String> {
        let search = trawl_search::SearchStage::with_env(&config, env)
            .map_err(|e| format!("search stage: {e}"))?;
        let fetch =
            trawl_fetch::FetchStage::new(&config).map_err(|e| format!("fetch stage: {e}"))?;
        let synthesize = trawl_synthesize::SynthesizeStage::with_env(&config, env)
            .map_err(|e| format!("synthesize stage: {e}"))?;
        let rt = Runtime::embedded(config);
        let (stop, shutdown) = Shutdown::manual();
        let mut workers = JoinSet::new();
        let ready = trawl_telemetry::Readiness::default;
        workers.spawn(run_worker(
            Arc::new(search),
            rt.clone(),
            Queue::Search,
            shutdown.clone().wait(),
            ready(),
        ));
        workers.spawn(run_worker(
            Arc::new(fetch),
            rt.clone(),
            Queue::Fetch,
            shutdown.clone().wait(),
            ready(),
        ));
        workers.spawn(run_worker(
            Arc::new(trawl_clean::CleanStage),
            rt.clone(),
            Queue::Clean,
            shutdown.clone().wait(),
            ready(),
        ));
        workers.spawn(run_worker(
            Arc::new(synthesize),
            rt.clone(),
            Queue::Synthesize,
            shutdown.wait(),
            ready(),
        ));
        Ok(Embedded { rt, stop, workers })
    }

    /// Stops the stages, letting in-flight work finish.
    pub async fn stop(mut self) {
        let _ = self.stop.send(true);
        while self.workers.join_next().await.is_some() {}
    }
}
