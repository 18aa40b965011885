//! `trawl worker STAGE`: the same workers as the four stage binaries.

use std::process::ExitCode;

use anyhow::Context;
use trawl_config::Config;
use trawl_messages::StageKind;

#[derive(clap::Args)]
pub struct WorkerArgs {
    /// search, fetch, fetch-browser (levels 2–3 over WebDriver), clean or synthesize.
    #[arg(value_parser = stage_kind)]
    stage: StageKind,
}

fn stage_kind(name: &str) -> anyhow::Result<StageKind> {
    StageKind::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = StageKind::ALL.iter().map(|k| k.name()).collect();
        anyhow::anyhow!("no stage {name:?}: one of {}", names.join(", "))
    })
}

pub async fn run(config: Config, args: WorkerArgs) -> anyhow::Result<ExitCode> {
    let env = std::env::vars().collect();
    let stage = trawl_cli::stages::build(args.stage, &config, &env)?;
    (stage.serve(config, args.stage, trawl_pipeline::serve::signals())).await?;
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
pub struct DrainArgs {
    /// The process's metrics address [default: metrics.addr, on this machine's loopback].
    #[arg(long, value_name = "HOST:PORT")]
    addr: Option<String>,
}

/// `trawl drain`: asks the worker (or `trawl serve`) on this machine to stop taking work and
/// waits until it has settled what it holds: what a Kubernetes preStop hook runs. `/drain`
/// answers only to loopback, so this runs inside the pod.
pub async fn drain(config: Config, args: DrainArgs) -> anyhow::Result<ExitCode> {
    let addr = args
        .addr
        .map_or_else(|| loopback_of(&config.metrics.addr), Ok)?;
    let url = format!("http://{addr}/drain");
    let client = trawl_http::builder()
        .no_proxy()
        .build()
        .context("cannot build an HTTP client")?;
    let response = client.post(&url).send().await.with_context(|| {
        format!("cannot reach {url}: is the process running here, with metrics.addr set?")
    })?;
    let status = response.status();
    let text = response.text().await.unwrap_or_default();
    anyhow::ensure!(
        status.is_success(),
        "{url} answered {status}: {}",
        text.trim()
    );
    eprintln!("drained");
    Ok(ExitCode::SUCCESS)
}

/// `metrics.addr` as this machine reaches it: a wildcard host becomes loopback.
fn loopback_of(metrics_addr: &str) -> anyhow::Result<String> {
    anyhow::ensure!(
        !metrics_addr.is_empty(),
        "metrics.addr is empty, so this process serves no /drain; pass --addr"
    );
    let mut addr: std::net::SocketAddr = metrics_addr.parse().with_context(|| {
        format!("metrics.addr {metrics_addr:?} is not HOST:PORT with an IP address; pass --addr")
    })?;
    if addr.ip().is_unspecified() {
        addr.set_ip(match addr {
            std::net::SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
            std::net::SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
        });
    }
    Ok(addr.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drain_goes_to_loopback_when_metrics_listen_everywhere() {
        assert_eq!(loopback_of("0.0.0.0:9464").unwrap(), "127.0.0.1:9464");
        assert_eq!(loopback_of("[::]:9464").unwrap(), "[::1]:9464");
        assert_eq!(loopback_of("127.0.0.1:9000").unwrap(), "127.0.0.1:9000");
        assert!(loopback_of("").is_err());
    }
}
