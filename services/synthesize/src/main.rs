//! `trawl-synthesize`: the synthesize stage worker.

fn main() -> std::process::ExitCode {
    trawl_pipeline::serve::main(
        "trawl-synthesize",
        "trawl synthesize worker: analysed sources in, cited reports out",
        trawl_messages::Queue::Synthesize,
        trawl_synthesize::SynthesizeStage::new,
    )
}
