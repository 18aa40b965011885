//! `simweb`: serve the fake web for manual runs and scripts.
//!
//! Prints `listening on ADDR` once the socket is bound, so scripts can wait for it.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use clap::Parser;
use trawl_integration_tests::simweb::{fleet, Corpus, Options, Simweb};

#[derive(Parser, Debug)]
#[command(
    name = "simweb",
    about = "Deterministic fake web for trawl integration tests"
)]
struct Args {
    /// Address to bind; port 0 picks a free port.
    #[arg(long, default_value = "127.0.0.1:9000")]
    addr: SocketAddr,
    /// Write the corpus questions to FILE (one per line) and FILE.json (full records).
    #[arg(long, value_name = "FILE")]
    questions: Option<PathBuf>,
    /// With --questions: write fleet-benchmark questions 0..N instead (one per line; each
    /// finds ten 10–40 KB pages on the bench-<n>.test hosts).
    #[arg(long, value_name = "N", requires = "questions")]
    fleet_questions: Option<usize>,
    /// Delay every LLM answer by this many milliseconds, as a hosted model's latency.
    #[arg(long, default_value_t = 0, value_name = "MS")]
    llm_latency_ms: u64,
    /// Answer LLM requests past N in any minute with a 429 and Retry-After, as an
    /// organisation's rate limit does.
    #[arg(long, value_name = "N")]
    llm_requests_per_minute: Option<u32>,
    /// Answer LLM requests that would take the tokens answered in the last minute past N
    /// (prompt characters / 4 + the answer allowance) with a 429 and Retry-After, as an
    /// organisation's TPM limit does.
    #[arg(long, value_name = "N")]
    llm_tokens_per_minute: Option<u64>,
    /// Answer every LLM request with a 429 for this many seconds after starting, as a
    /// provider over its limit for minutes does.
    #[arg(long, default_value_t = 0, value_name = "SECS")]
    llm_rate_limited_secs: u64,
    /// Write each LLM answer at N tokens a second, as a small local model on a laptop's CPU
    /// does (2–10).
    #[arg(long, value_name = "N")]
    llm_tokens_per_second: Option<f64>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    let corpus = Arc::new(Corpus::generate());
    match (&args.questions, args.fleet_questions) {
        (Some(path), Some(n)) => {
            anyhow::ensure!(
                n <= fleet::MAX_QUESTIONS,
                "--fleet-questions is at most {}",
                fleet::MAX_QUESTIONS
            );
            let text: String = fleet::questions(n).into_iter().map(|q| q + "\n").collect();
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
        }
        (Some(path), None) => write_questions(&corpus, path)?,
        (None, _) => {}
    }
    let options = Options {
        llm_latency: Duration::from_millis(args.llm_latency_ms),
        llm_requests_per_minute: args.llm_requests_per_minute,
        llm_tokens_per_minute: args.llm_tokens_per_minute,
        llm_rate_limited_for: Duration::from_secs(args.llm_rate_limited_secs),
        llm_tokens_per_second: args.llm_tokens_per_second,
    };
    let web = Simweb::start_with(corpus, args.addr, options)
        .await
        .with_context(|| format!("binding {}", args.addr))?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "listening on {}", web.addr())?;
    out.flush()?;
    drop(out);
    shutdown_signal().await;
    tracing::info!("shutting down");
    Ok(())
}

fn write_questions(corpus: &Corpus, path: &PathBuf) -> anyhow::Result<()> {
    let questions = corpus.questions();
    let text: String = questions.iter().map(|q| format!("{}\n", q.query)).collect();
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
    let mut json_path = path.clone().into_os_string();
    json_path.push(".json");
    let json = serde_json::to_string_pretty(&questions)?;
    std::fs::write(&json_path, json)
        .with_context(|| format!("writing {}", json_path.to_string_lossy()))?;
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}
