//! `trawl-search`: the search stage worker.

fn main() -> std::process::ExitCode {
    trawl_pipeline::serve::main(
        "trawl-search",
        "trawl search worker: questions in, URLs worth fetching out",
        trawl_messages::Queue::Search,
        trawl_search::SearchStage::new,
    )
}
