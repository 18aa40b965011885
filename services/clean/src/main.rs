//! `trawl-clean`: the clean stage worker.

fn main() -> std::process::ExitCode {
    trawl_pipeline::serve::main(
        "trawl-clean",
        "trawl clean worker: fetched pages in, analysed markdown out",
        trawl_messages::Queue::Clean,
        trawl_clean::CleanStage::new,
    )
}
