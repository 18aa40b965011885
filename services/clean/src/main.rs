//! `trawl-clean`: the clean stage worker.

use clap::Parser;

#[derive(Parser)]
#[command(
    version,
    about = "trawl clean worker: fetched pages in, analysed markdown out"
)]
struct Args {
    #[command(flatten)]
    worker: trawl_pipeline::serve::WorkerArgs,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let config = trawl_config::Config::from_process(args.worker.config.as_deref())?;
    trawl_pipeline::serve::run(
        config,
        trawl_messages::Queue::Clean,
        trawl_clean::CleanStage,
    )
    .await?;
    Ok(())
}
