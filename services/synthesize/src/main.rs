//! `trawl-synthesize`: the synthesize stage worker.

fn main() -> std::process::ExitCode {
    trawl_pipeline::serve::main(
        trawl_messages::StageKind::Synthesize,
        trawl_synthesize::SynthesizeStage::new,
    )
}
