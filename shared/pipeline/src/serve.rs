//! Running one stage as a worker process: the shared body of every stage binary's `main` and of
//! `trawl worker STAGE`.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tracing::info;
use trawl_broker::Queue;
use trawl_config::{redact_url, Config};
use trawl_messages::StageKind;
use trawl_store::shared::{Probe, SharedError};
use trawl_telemetry::{Drain, Readiness};

use crate::runtime::ConnectError;
use crate::{run_worker, Runtime, Stage, StageError};

/// Command-line arguments every worker binary takes.
#[derive(Debug, clap::Parser)]
pub struct WorkerArgs {
    /// Config file (TOML). Environment variables TRAWL__SECTION__KEY override it.
    #[arg(long, value_name = "FILE")]
    pub config: Option<std::path::PathBuf>,
}

/// The whole `main` of `kind`'s binary: parse arguments, load config, build the stage with
/// `build`, run it until SIGTERM. Errors are printed and turn into a non-zero exit.
pub fn main<S, E>(
    kind: StageKind,
    build: impl FnOnce(&Config) -> Result<S, E>,
) -> std::process::ExitCode
where
    S: Stage,
    E: std::fmt::Display,
{
    use clap::{CommandFactory, FromArgMatches};
    let matches = WorkerArgs::command()
        .name(kind.binary())
        .about(kind.about())
        .version(env!("CARGO_PKG_VERSION"))
        .get_matches();
    let args = WorkerArgs::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let outcome = Config::from_process(args.config.as_deref())
        .map_err(|e| e.to_string())
        .and_then(|config| {
            let rt = worker_runtime(&config)
                .map_err(|e| format!("cannot start the async runtime: {e}"))?;
            rt.block_on(async {
                let stage =
                    build(&config).map_err(|e| format!("cannot build the {kind} stage: {e}"))?;
                run(config, kind.queue(), stage, signals())
                    .await
                    .map_err(|e| e.to_string())
            })
        });
    match outcome {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Blocking threads a worker may run beyond its share of the cores: room for parsers that
/// outlive their message, since a handler abandoned at the message timeout cannot cancel a
/// blocking task it started.
const SPARE_BLOCKING_THREADS: usize = 8;

/// Blocking threads per core: parsers keep a core busy, file I/O and DNS lookups wait.
const BLOCKING_THREADS_PER_CORE: usize = 4;

/// The most blocking threads a worker runs: what its messages in flight could use (one each,
/// `broker.prefetch`), but no more than a few per core, plus spares. Blocking work past that
/// queues; more threads than cores to run them would only hold more memory.
fn blocking_threads(config: &Config, cores: usize) -> usize {
    usize::from(config.broker.prefetch).min(BLOCKING_THREADS_PER_CORE * cores)
        + SPARE_BLOCKING_THREADS
}

/// The worker's async runtime. Its blocking pool (file I/O, DNS lookups, parsers) is capped
/// ([`blocking_threads`]): tokio's default of 512 lets the pool grow at every moment all its
/// threads happen to be busy (a CPU-starved machine makes that common) and never shrink while
/// steady work keeps each thread in use by turns, so a long-running worker's memory grew with
/// every thread it added, each with its stack and allocator arena. The chaos suite's soak
/// (`chaos_load.rs`) found it.
pub fn worker_runtime(config: &Config) -> std::io::Result<tokio::runtime::Runtime> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(blocking_threads(config, cores))
        .build()
}

#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error("a {0} worker needs broker.url and store.url (set TRAWL__BROKER__URL and TRAWL__STORE__URL); `trawl run` runs every stage embedded")]
    NotConfigured(&'static str),
    #[error(transparent)]
    Connect(#[from] ConnectError),
    #[error(transparent)]
    Metrics(#[from] trawl_telemetry::ServeError),
    #[error("worker failed: {0}")]
    Stage(#[from] StageError),
    #[error("{0}")]
    NotShared(SharedError),
}

/// A long-running process's operations side: readiness, the `/drain` request, the shutdown
/// that SIGTERM, SIGINT or a drain fires, and `/metrics`, `/healthz`, `/readyz` and `/drain`
/// on `metrics.addr` (not served when it is empty). Workers, the API and the monitor share it.
pub struct Ops {
    pub readiness: Readiness,
    pub drain: Drain,
    pub shutdown: Shutdown,
    server: Option<tokio::task::JoinHandle<()>>,
}

impl Ops {
    /// Starts the operations side of a process that stops when `stop` resolves (the process's
    /// [`signals`], or a test's trigger) or on a `/drain` request.
    pub async fn start(
        metrics_addr: &str,
        stop: impl Future<Output = ()> + Send + 'static,
    ) -> Result<Ops, trawl_telemetry::ServeError> {
        let readiness = Readiness::default();
        let drain = Drain::default();
        let shutdown = Shutdown::on(stop, &drain);
        let server = if metrics_addr.is_empty() {
            None
        } else {
            let (addr, task) = trawl_telemetry::serve(
                metrics_addr,
                readiness.clone(),
                drain.clone(),
                shutdown.clone().wait(),
            )
            .await?;
            info!(%addr, "metrics listening");
            Some(task)
        };
        Ok(Ops {
            readiness,
            drain,
            shutdown,
            server,
        })
    }

    /// Answers a waiting preStop `/drain`, then lets the metrics server finish (2 s at most)
    /// before the process exits.
    pub async fn finish(self) {
        self.drain.finish();
        if let Some(task) = self.server {
            let _ = tokio::time::timeout(Duration::from_secs(2), task).await;
        }
    }
}

/// A shutdown signal that any number of tasks can wait for.
#[derive(Clone)]
pub struct Shutdown(watch::Receiver<bool>);

/// Resolves on SIGTERM or SIGINT: what a process's entry point passes as its stop.
pub async fn signals() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("installing a SIGTERM handler");
        tokio::select! {
            _ = ctrl_c => {},
            _ = term.recv() => {},
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}

impl Shutdown {
    /// Fires when `stop` resolves or on a `/drain` request.
    pub fn on(stop: impl Future<Output = ()> + Send + 'static, drain: &Drain) -> Shutdown {
        let (tx, rx) = watch::channel(false);
        let drain = drain.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = stop => {},
                _ = drain.requested() => {},
            }
            info!("shutdown requested");
            let _ = tx.send(true);
        });
        Shutdown(rx)
    }

    /// A signal fired by the returned sender (tests, embedded mode).
    pub fn manual() -> (watch::Sender<bool>, Shutdown) {
        let (tx, rx) = watch::channel(false);
        (tx, Shutdown(rx))
    }

    pub async fn wait(mut self) {
        let _ = self.0.wait_for(|&fired| fired).await;
    }
}

/// Connects, serves metrics, and consumes `queue` with `stage` until `stop` resolves (the
/// process's [`signals`]) or a `/drain` request, then drains.
pub async fn run<S: Stage>(
    config: Config,
    queue: Queue,
    stage: S,
    stop: impl Future<Output = ()> + Send + 'static,
) -> Result<(), WorkerError> {
    trawl_telemetry::init_logs(config.secret_values(&std::env::vars().collect()));
    if config.broker.url.is_none() || config.store.url.is_none() {
        return Err(WorkerError::NotConfigured(queue.label()));
    }
    info!(
        stage = queue.label(),
        broker = %redact_url(config.broker.url.as_deref().unwrap_or_default()),
        store = %redact_url(config.store.url.as_deref().unwrap_or_default()),
        "starting worker"
    );
    let ops = Ops::start(&config.metrics.addr, stop).await?;
    let rt = Runtime::connect(config, Duration::from_secs(30)).await?;
    crate::metrics::init(queue, &rt.config.broker);
    let Some(watch) = SharedWatch::start(&rt, queue.label(), &ops).await? else {
        ops.finish().await;
        return Ok(());
    };
    let result = run_worker(
        Arc::new(stage),
        rt,
        queue,
        ops.shutdown.clone().wait(),
        ops.readiness.clone(),
    )
    .await;
    let not_shared = watch.finish().await;
    ops.finish().await;
    result?;
    match not_shared {
        Some(e) => Err(WorkerError::NotShared(e)),
        None => Ok(()),
    }
}

/// The check that this process sees the same object store as the rest of the fleet
/// ([`trawl_store::shared`]), from start-up to exit.
pub struct SharedWatch {
    task: tokio::task::JoinHandle<Option<SharedError>>,
    probe: Arc<Probe>,
    rt: Runtime,
}

impl SharedWatch {
    /// Writes this process's probe and reads the fleet's, retrying while the object store
    /// does not answer (not ready meanwhile, with the reason on `/readyz`), then checks again
    /// every `output.shared_check_secs`; a store found not shared drains the process.
    /// `Ok(None)` when shutdown came before the store answered.
    pub async fn start(
        rt: &Runtime,
        role: &str,
        ops: &Ops,
    ) -> Result<Option<SharedWatch>, WorkerError> {
        let who = format!("{role} on {} (pid {})", hostname(), std::process::id());
        let probe = Arc::new(Probe::new(&who));
        let every = Duration::from_secs(rt.config.output.shared_check_secs);
        // Long enough to survive a few missed renewals, short enough that a killed worker's
        // probe stops being checked soon.
        let lease = every * 4;
        let mut delay = Duration::from_millis(500);
        loop {
            match probe.round(&rt.objects, &*rt.store, lease).await {
                Ok(()) => break,
                // The probe stays registered until its lease runs out, so the peers this
                // worker could not read find out too, whichever of them started first.
                Err(e @ SharedError::NotShared { .. }) => return Err(WorkerError::NotShared(e)),
                Err(e) => {
                    tracing::warn!(error = %e, "object store not ready");
                    ops.readiness.unready(e.to_string());
                    tokio::select! {
                        _ = ops.shutdown.clone().wait() => return Ok(None),
                        _ = tokio::time::sleep(delay) => {}
                    }
                    delay = (delay * 2).min(Duration::from_secs(15));
                }
            }
        }
        let task = tokio::spawn({
            let (rt, probe, drain) = (rt.clone(), Arc::clone(&probe), ops.drain.clone());
            async move {
                loop {
                    tokio::time::sleep(every).await;
                    match probe.round(&rt.objects, &*rt.store, lease).await {
                        Ok(()) => {}
                        Err(e @ SharedError::NotShared { .. }) => {
                            tracing::error!(error = %e, "object store not shared; stopping");
                            drain.request();
                            return Some(e);
                        }
                        // An outage: the stages' own requests retry without spending attempts.
                        Err(e) => tracing::warn!(error = %e, "shared store check failed"),
                    }
                }
            }
        });
        Ok(Some(SharedWatch {
            task,
            probe,
            rt: rt.clone(),
        }))
    }

    /// Stops checking and withdraws the probe; the error if the store was found not shared
    /// (the probe then stays until its lease runs out, for the peers to find out as well).
    pub async fn finish(self) -> Option<SharedError> {
        let found = if self.task.is_finished() {
            self.task.await.ok().flatten()
        } else {
            self.task.abort();
            None
        };
        if found.is_none() {
            self.probe.withdraw(&self.rt.objects, &*self.rt.store).await;
        }
        found
    }
}

fn hostname() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "an unnamed host".into())
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn the_blocking_pool_follows_the_cores_and_the_prefetch() {
        let mut config = Config::default();
        assert_eq!(blocking_threads(&config, 2), 8 + SPARE_BLOCKING_THREADS);
        assert_eq!(blocking_threads(&config, 1_000), 8 + SPARE_BLOCKING_THREADS);
        config.broker.prefetch = 2;
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let cap = blocking_threads(&config, cores);
        assert_eq!(cap, 2 + SPARE_BLOCKING_THREADS);
        let rt = worker_runtime(&config).unwrap();
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        rt.block_on(async {
            let tasks: Vec<_> = (0..3 * cap)
                .map(|_| {
                    let (running, most) = (Arc::clone(&running), Arc::clone(&most));
                    tokio::task::spawn_blocking(move || {
                        let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(20));
                        running.fetch_sub(1, Ordering::SeqCst);
                    })
                })
                .collect();
            for task in tasks {
                task.await.unwrap();
            }
        });
        let most = most.load(Ordering::SeqCst);
        assert!(most <= cap, "{most} blocking tasks ran at once");
    }
}
