//! `trawl worker STAGE`: the same workers as the four stage binaries.

use std::process::ExitCode;

use anyhow::Context;
use trawl_config::Config;
use trawl_messages::Queue;
use trawl_pipeline::serve::run as serve;

#[derive(clap::Args)]
pub struct WorkerArgs {
    /// search, fetch, fetch-browser (levels 2–3 over WebDriver), clean or synthesize.
    #[arg(value_parser = ["search", "fetch", "fetch-browser", "clean", "synthesize"])]
    stage: String,
}

pub async fn run(config: Config, args: WorkerArgs) -> anyhow::Result<ExitCode> {
    match args.stage.as_str() {
        "search" => {
            let stage = trawl_search::SearchStage::new(&config)
                .map_err(|e| anyhow::anyhow!("failed to build the search stage: {e}"))?;
            serve(config, Queue::Search, stage).await?
        }
        "fetch" => {
            let stage =
                trawl_fetch::FetchStage::new(&config).context("failed to build the fetch stage")?;
            serve(config, Queue::Fetch, stage).await?
        }
        "fetch-browser" => {
            let stage = trawl_fetch::FetchStage::with_browser(&config)
                .context("failed to build the browser fetch stage")?;
            serve(config, Queue::FetchBrowser, stage).await?
        }
        "clean" => {
            let stage = trawl_clean::CleanStage::new(&config)
                .map_err(|e| anyhow::anyhow!("failed to build the clean stage: {e}"))?;
            serve(config, Queue::Clean, stage).await?
        }
        _ => {
            let stage = trawl_synthesize::SynthesizeStage::new(&config)
                .map_err(|e| anyhow::anyhow!("failed to build the synthesize stage: {e}"))?;
            serve(config, Queue::Synthesize, stage).await?
        }
    }
    Ok(ExitCode::SUCCESS)
}
