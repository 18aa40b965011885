//! `trawl robots check`: why would trawl skip this URL?

use std::process::ExitCode;

use anyhow::{ensure, Context};
use trawl_config::Config;
use trawl_fetch::robots::{decide, rules_for, Rules};
use url::Url;

#[derive(clap::Args)]
pub struct RobotsArgs {
    #[command(subcommand)]
    command: RobotsCommand,
}

#[derive(clap::Subcommand)]
enum RobotsCommand {
    /// Print `allowed` or `disallowed` for each URL.
    Check {
        /// Read rules from this file instead of fetching each origin's robots.txt.
        #[arg(long, value_name = "FILE")]
        robots: Option<std::path::PathBuf>,
        /// The user-agent product token to match groups against.
        #[arg(long, value_name = "UA")]
        agent: String,
        #[arg(required = true, value_name = "URL")]
        urls: Vec<String>,
    },
}

pub async fn run(mut config: Config, args: RobotsArgs) -> anyhow::Result<ExitCode> {
    let RobotsCommand::Check {
        robots,
        agent,
        urls,
    } = args.command;
    let urls: Vec<Url> = urls
        .iter()
        .map(|u| Url::parse(u).with_context(|| format!("invalid URL {u:?}")))
        .collect::<anyhow::Result<_>>()?;
    ensure!(!agent.trim().is_empty(), "--agent must not be empty");
    let file_rules = match &robots {
        Some(path) => {
            // What fetch reads of a robots.txt at most (RFC 9309 asks for 500 KiB at least).
            let limit = trawl_fetch::robots::MAX_ROBOTS_BYTES as u64;
            let what = format!("{} (a robots.txt)", path.display());
            let bytes = trawl_cli::input::read_file(path, limit, &what)?;
            Some(Rules::Parsed(String::from_utf8_lossy(&bytes).into_owned()))
        }
        None => None,
    };
    let network = if file_rules.is_none() {
        config.broker.url = None;
        config.store.url = None;
        let fetcher = trawl_fetch::http::Fetcher::new(&config.fetch)
            .context("failed to build the HTTP client")?;
        Some((trawl_pipeline::Runtime::embedded(config)?, fetcher))
    } else {
        None
    };
    for url in &urls {
        let rules = match &network {
            // This process's own store: nobody else holds its robots.txt lock.
            Some((rt, fetcher)) => rules_for(rt, fetcher, url)
                .await
                .map_err(|e| anyhow::anyhow!(e.message))?
                .unwrap_or(Rules::DisallowAll),
            None => file_rules.clone().expect("read above when not fetched"),
        };
        let verdict = match &rules {
            Rules::Refused(reason) => format!("refused ({reason})"),
            Rules::Unreachable(reason) => format!("disallowed (robots.txt unreadable: {reason})"),
            rules if decide(rules, &agent, url).allowed => "allowed".into(),
            _ => "disallowed".into(),
        };
        println!("{verdict} {url}");
    }
    Ok(ExitCode::SUCCESS)
}
