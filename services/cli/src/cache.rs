//! `trawl cache stats|purge`: the fleet's page cache, for operators.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context};
use trawl_config::Config;
use trawl_store::{Objects, Pages, RedisStore};

#[derive(clap::Args)]
pub struct CacheArgs {
    #[command(subcommand)]
    command: CacheCommand,
}

#[derive(clap::Subcommand)]
enum CacheCommand {
    /// How many pages the cache holds and their bytes, against cache.max_bytes.
    Stats,
    /// Forget every cached page and delete its objects: the next job that wants a page
    /// fetches it.
    Purge,
}

pub async fn run(config: Config, args: CacheArgs) -> anyhow::Result<ExitCode> {
    let Some(url) = config.store.url.as_deref() else {
        bail!("the page cache is the fleet's: set store.url (TRAWL__STORE__URL) to its Redis");
    };
    let wait = Duration::from_secs(10);
    let store = (RedisStore::connect(url, &config.store.prefix, wait).await)
        .context("cannot reach the fleet's store")?;
    match args.command {
        CacheCommand::Stats => {
            let stats = store.page_stats().await?;
            let max = config.cache.max_bytes;
            println!(
                "{} pages, {} of {} ({:.1} %); fresh for {} s, kept {} s unused",
                stats.entries,
                megabytes(stats.bytes),
                megabytes(max),
                100.0 * stats.bytes as f64 / max.max(1) as f64,
                config.cache.max_age_secs,
                config.cache.keep_secs,
            );
        }
        CacheCommand::Purge => {
            let objects = Objects::open(&config.output).context("cannot open the object store")?;
            let entries = store.page_purge().await?;
            for entry in &entries {
                trawl_fetch::pages::forget(&objects, entry).await;
            }
            println!("purged {} pages", entries.len());
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}
