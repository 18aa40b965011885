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
        /// Only read: the token sees the batches of the token `--of` names (results, reports,
        /// the web app) and can submit or cancel none. For people who should only read.
        #[arg(long, requires = "of")]
        read_only: bool,
        /// The id of the token whose batches a read-only token reads (`trawl token list`).
        #[arg(long, value_name = "TOKEN_ID", requires = "read_only")]
        of: Option<String>,
    },
    /// List tokens: id, creation time, scope (`full`, or `read-only of` a token id), name (never
    /// the tokens themselves).
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
        TokenCommand::Create { name, of, .. } => {
            let scope = match of {
                Some(id) => trawl_api::tokens::Scope::ReadOnlyOf(id),
                None => trawl_api::tokens::Scope::Full,
            };
            let (token, record) = trawl_api::tokens::create(store, &name, scope).await?;
            eprintln!(
                "created token {} ({}); it is shown once, keep it secret",
                record.id,
                record.display_name()
            );
            println!("{token}");
        }
        TokenCommand::List => {
            for r in trawl_api::tokens::list(store).await? {
                let scope = match &r.reads_for {
                    Some(of) => format!("read-only of {of}"),
                    None => "full".to_owned(),
                };
                println!(
                    "{}\t{}\t{scope}\t{}",
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
