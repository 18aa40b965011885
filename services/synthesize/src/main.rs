//! `trawl-synthesize`: the synthesize stage worker.

use clap::Parser;

#[derive(Parser)]
#[command(
    version,
    about = "trawl synthesize worker: analysed sources in, cited reports out"
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
        trawl_messages::Queue::Synthesize,
        trawl_synthesize::SynthesizeStage,
    )
    .await?;
    Ok(())
}
