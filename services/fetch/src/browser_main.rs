//! `trawl-fetch-browser`: the fetch stage's browser worker, levels 2–3 of `trawl.fetch.browser`
//! through WebDriver (`fetch.webdriver_url`). Scaled apart from `trawl-fetch`: a browser costs
//! far more than an HTTP request.

fn main() -> std::process::ExitCode {
    trawl_pipeline::serve::main(
        trawl_messages::StageKind::FetchBrowser,
        trawl_fetch::FetchStage::with_browser,
    )
}
