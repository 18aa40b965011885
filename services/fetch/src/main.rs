//! `trawl-fetch`: the fetch stage worker.

fn main() -> std::process::ExitCode {
    trawl_pipeline::serve::main(
        "trawl-fetch",
        "trawl fetch worker: robots.txt, politeness, HTTP fetch with escalation",
        trawl_messages::Queue::Fetch,
        trawl_fetch::FetchStage::new,
    )
}
