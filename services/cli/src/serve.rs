//! `trawl serve` (the HTTP API in front of the fleet) and `trawl token` (its API tokens).

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use trawl_config::Config;
use trawl_pipeline::Runtime;

#[derive(clap::Args)]
pub struct ServeArgs {
    /// Listen here instead of api.addr.
    #[arg(long, value_name = "HOST:PORT")]
    addr: Option<String>,
}

pub async fn serve(mut config: Config, args: ServeArgs) -> anyhow::Result<ExitCode> {
    trawl_telemetry::init_logs(config.secret_values(&std::env::vars().collect()));
    if let Some(addr) = args.addr {
        config.api.addr = addr;
    }
    let bound = |addr| {
        tracing::info!(%addr, "API listening");
        // Scripts (and the tests) read the bound address from here when they ask for port 0.
        eprintln!("listening on http://{addr}");
    };
    trawl_api::serve(config, bound, trawl_pipeline::serve::signals()).await?;
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
pub struct TokenArgs {
    #[command(subcommand)]
    command: TokenCommand,
}

#[derive(clap::Subcommand)]
enum TokenCommand {
    /// Create a token; it is printed once, on stdout, and stored only as a hash.
    Create {
        /// Who or what the token is for (shown in listings).
        #[arg(long)]
        name: String,
    },
    /// List tokens: id, name, creation time (never the tokens themselves).
    List,
    /// Revoke a token by its id.
    Revoke { id: String },
}

pub async fn token(config: Config, args: TokenArgs) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        config.store.url.is_some(),
        "API tokens live in the fleet's store: set store.url (TRAWL__STORE__URL) to the Redis `trawl serve` uses"
    );
    let rt = Runtime::connect(config, Duration::from_secs(10))
        .await
        .context("cannot reach the store")?;
    let store = &*rt.store;
    match args.command {
        TokenCommand::Create { name } => {
            let (token, record) = trawl_api::tokens::create(store, &name).await?;
            eprintln!(
                "created token {} ({}); it is shown once, keep it secret",
                record.id,
                record.display_name()
            );
            println!("{token}");
        }
        TokenCommand::List => {
            for r in trawl_api::tokens::list(store).await? {
                println!(
                    "{}\t{}\t{}",
                    r.id,
                    r.created_at.to_rfc3339(),
                    r.display_name()
                );
            }
        }
        TokenCommand::Revoke { id } => {
            trawl_api::tokens::revoke(store, &id).await?;
            eprintln!("revoked token {id}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
