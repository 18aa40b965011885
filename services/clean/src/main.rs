//! `trawl-clean`: the clean stage worker.

fn main() -> std::process::ExitCode {
    trawl_pipeline::serve::main(
        trawl_messages::StageKind::Clean,
        trawl_clean::CleanStage::new,
    )
}
