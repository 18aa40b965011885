//! The stage registry: each [`StageKind`] to its stage's constructor. `trawl worker STAGE`
//! and the embedded fleet (`trawl run`) build their stages here; the stage binaries name their
//! own, and everything else goes by [`StageKind`] alone (queue, name, binary).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use tokio::task::JoinSet;
use trawl_config::Config;
use trawl_messages::StageKind;
use trawl_pipeline::serve::WorkerError;
use trawl_pipeline::{run_worker, Runtime, StageError};

/// A stage built from config, ready to run on its kind's queue.
pub enum Built {
    Search(trawl_search::SearchStage),
    Fetch(trawl_fetch::FetchStage),
    Clean(trawl_clean::CleanStage),
    Synthesize(trawl_synthesize::SynthesizeStage),
}

/// Why a stage could not be built, by its kind.
#[derive(Debug, thiserror::Error)]
#[error("cannot build the {kind} stage: {source}")]
pub struct BuildError {
    pub kind: StageKind,
    pub source: StageBuildError,
}

/// What each stage's constructor refused.
#[derive(Debug, thiserror::Error)]
pub enum StageBuildError {
    #[error(transparent)]
    Search(#[from] trawl_search::stage::BuildError),
    #[error(transparent)]
    Fetch(#[from] trawl_fetch::stage::BuildError),
    #[error(transparent)]
    Clean(#[from] trawl_llm::LlmError),
    #[error(transparent)]
    Synthesize(#[from] trawl_synthesize::stage::BuildError),
}

/// Builds `kind`'s stage; secrets (API keys) are looked up in `env`.
pub fn build(
    kind: StageKind,
    config: &Config,
    env: &BTreeMap<String, String>,
) -> Result<Built, BuildError> {
    let built = match kind {
        StageKind::Search => (trawl_search::SearchStage::with_env(config, env))
            .map(Built::Search)
            .map_err(StageBuildError::from),
        StageKind::Fetch => (trawl_fetch::FetchStage::new(config))
            .map(Built::Fetch)
            .map_err(StageBuildError::from),
        StageKind::FetchBrowser => (trawl_fetch::FetchStage::with_browser(config))
            .map(Built::Fetch)
            .map_err(StageBuildError::from),
        StageKind::Clean => (trawl_clean::CleanStage::with_env(config, env))
            .map(Built::Clean)
            .map_err(StageBuildError::from),
        StageKind::Synthesize => (trawl_synthesize::SynthesizeStage::with_env(config, env))
            .map(Built::Synthesize)
            .map_err(StageBuildError::from),
    };
    built.map_err(|source| BuildError { kind, source })
}

/// `$body` with `$stage` bound to the stage `$built` holds, whichever kind it is: each kind's
/// stage is its own type, so the generic worker functions need one arm per kind.
macro_rules! with_stage {
    ($built:expr, $stage:ident => $body:expr) => {
        match $built {
            Built::Search($stage) => $body,
            Built::Fetch($stage) => $body,
            Built::Clean($stage) => $body,
            Built::Synthesize($stage) => $body,
        }
    };
}

impl Built {
    /// Runs as a worker process of `kind` until `stop` resolves or a drain: what `trawl
    /// worker` does with the process's signals.
    pub async fn serve(
        self,
        config: Config,
        kind: StageKind,
        stop: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), WorkerError> {
        with_stage!(self, s => trawl_pipeline::serve::run(config, kind.queue(), s, stop).await)
    }

    /// Runs on `rt` (the in-memory twins of one process) in `workers` until `shutdown`.
    pub fn spawn(
        self,
        kind: StageKind,
        rt: &Runtime,
        shutdown: impl Future<Output = ()> + Send + 'static,
        workers: &mut JoinSet<Result<(), StageError>>,
    ) {
        let (rt, queue) = (rt.clone(), kind.queue());
        let ready = trawl_telemetry::Readiness::default();
        with_stage!(self, s => workers.spawn(run_worker(Arc::new(s), rt, queue, shutdown, ready)));
    }
}
