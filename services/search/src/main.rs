//! `trawl-search`: the search stage worker.

fn main() -> std::process::ExitCode {
    trawl_pipeline::serve::main(
        trawl_messages::StageKind::Search,
        trawl_search::SearchStage::new,
    )
}
