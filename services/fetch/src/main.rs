//! `trawl-fetch`: the fetch stage worker.

fn main() -> std::process::ExitCode {
    trawl_pipeline::serve::main(
        trawl_messages::StageKind::Fetch,
        trawl_fetch::FetchStage::new,
    )
}
