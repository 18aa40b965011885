//! `trawl-fetch`: the fetch stage worker.

use clap::Parser;

#[derive(Parser)]
#[command(
    version,
    about = "trawl fetch worker: robots.txt, politeness, HTTP fetch with escalation"
)]
struct Args {
    #[command(flatten)]
    worker: trawl_pipeline::serve::WorkerArgs,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let config = trawl_config::Config::from_process(args.worker.config.as_deref())?;
    let stage = trawl_fetch::FetchStage::new(&config)?;
    trawl_pipeline::serve::run(config, trawl_messages::Queue::Fetch, stage).await?;
    Ok(())
}
