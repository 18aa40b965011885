//! `trawl-search`: the search stage worker.

use clap::Parser;

#[derive(Parser)]
#[command(
    version,
    about = "trawl search worker: questions in, URLs worth fetching out"
)]
struct Args {
    #[command(flatten)]
    worker: trawl_pipeline::serve::WorkerArgs,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let config = trawl_config::Config::from_process(args.worker.config.as_deref())?;
    let stage = trawl_search::SearchStage::new(&config)?;
    trawl_pipeline::serve::run(config, trawl_messages::Queue::Search, stage).await?;
    Ok(())
}
