//! What clean's work on one page costs, step by step, on the pages `scripts/bench-fleet`'s jobs
//! read (simweb's fleet pages, each with its job's question), without the broker, the store or
//! an LLM: extraction to markdown, the cleanliness judge, the analysis against the question,
//! and the page's language. Each step's figure is the best of `--rounds` passes over the same
//! pages, so a busy machine shows less in it than in the fleet's own figures.
//! With `--pages DIR`, the pages are real ones instead (`DIR/html/*.html.gz`, as the extraction
//! benchmarks under `../shared/bench/` keep them), each read against one question.
//! `cargo run --release -p trawl-integration-tests --example bench_clean [-- --questions N]`

use std::hint::black_box;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Parser;
use trawl_clean::analysis::Context;
use trawl_clean::steps::{self, LlmUse};
use trawl_config::CleanConfig;
use trawl_integration_tests::simweb::fleet;

#[derive(Parser)]
#[command(about = "clean's CPU per page, step by step, on bench-fleet's pages")]
struct Args {
    /// Questions whose ten sources are read.
    #[arg(long, default_value_t = 50)]
    questions: usize,
    /// Passes over the pages; each step's best pass counts.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Real pages instead: every `html/*.html.gz` under this directory.
    #[arg(long)]
    pages: Option<PathBuf>,
    /// Also write what the steps made of each page (judge, analysis, language) to this file as
    /// JSON lines, to compare two builds' outputs.
    #[arg(long)]
    dump: Option<PathBuf>,
}

/// Clean's steps on one page's markdown, as the stage runs them without an LLM.
fn run_steps(
    runtime: &tokio::runtime::Runtime,
    cfg: &CleanConfig,
    (q, title, md): &(String, String, String),
) -> steps::Processed {
    let mut ctx = Context::question(q);
    ctx.language = "en".into();
    runtime.block_on(steps::process(
        LlmUse::NotConfigured,
        cfg,
        &ctx,
        title,
        md.clone(),
    ))
}

/// What the steps made of one page, as `--dump` writes it.
fn outcome(
    processed: steps::Processed,
    (_, title, md): &(String, String, String),
) -> serde_json::Value {
    let judged = trawl_clean::judge::heuristic(md);
    let a = processed.analysis;
    serde_json::json!({
        "title": title,
        "judge": [judged.score, judged.problems],
        "language": trawl_text::Lang::detect(md).code(),
        "relevance": a.relevance,
        "summary": a.summary,
        "key_points": a.key_points,
        "sentences": trawl_text::sentences(md),
    })
}

/// The pages under `dir/html`, each with a question of the fleet's kind and a URL of its own.
fn real_pages(dir: &Path) -> std::io::Result<Vec<(String, String, String)>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("html"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".html.gz"))
        .collect();
    files.sort();
    let mut pages = Vec::new();
    for (k, file) in files.iter().enumerate() {
        let mut bytes = Vec::new();
        flate2::read::GzDecoder::new(std::fs::File::open(file)?).read_to_end(&mut bytes)?;
        let html = String::from_utf8_lossy(&bytes).into_owned();
        pages.push((fleet::question(k), format!("http://page-{k}.test/"), html));
    }
    Ok(pages)
}

/// The best of `rounds` passes of `step` over `items`, per item.
fn best<T>(rounds: usize, items: &[T], mut step: impl FnMut(&T)) -> Duration {
    let pass = |step: &mut dyn FnMut(&T)| {
        let started = Instant::now();
        items.iter().for_each(&mut *step);
        started.elapsed()
    };
    let fastest = (0..rounds)
        .map(|_| pass(&mut step))
        .min()
        .unwrap_or_default();
    fastest / items.len().max(1) as u32
}

fn main() {
    let args = Args::parse();
    let pages: Vec<(String, String, String)> = match &args.pages {
        Some(dir) => real_pages(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())),
        None => (0..args.questions)
            .flat_map(|k| (0..fleet::SOURCES).map(move |i| (k, i)))
            .filter_map(|(k, i)| {
                let html = fleet::page(fleet::host_of(k, i), k, i)?;
                Some((fleet::question(k), fleet::source_url(k, i), html))
            })
            .collect(),
    };
    let bytes: usize = pages.iter().map(|p| p.2.len()).sum();
    let extracted: Vec<(String, String, String)> = (pages.iter())
        .map(|(q, url, html)| {
            let x = trawl_clean::extract::extract(html, url);
            (q.clone(), x.title, x.markdown)
        })
        .collect();
    let cfg = CleanConfig::default();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    if let Some(path) = &args.dump {
        let lines: Vec<String> = (extracted.iter())
            .map(|page| outcome(run_steps(&runtime, &cfg, page), page).to_string())
            .collect();
        std::fs::write(path, lines.join("\n") + "\n")
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
    let rounds = args.rounds;
    let extract = best(rounds, &pages, |(_, url, html)| {
        black_box(trawl_clean::extract::extract(html, url));
    });
    let judge = best(rounds, &extracted, |(_, _, md)| {
        black_box(trawl_clean::judge::heuristic(md));
    });
    let analyse = best(rounds, &extracted, |(q, title, md)| {
        let ctx = Context::question(q);
        black_box(trawl_clean::analysis::analyse_in(&ctx, title, md, 0.1));
    });
    let steps = best(rounds, &extracted, |page| {
        black_box(run_steps(&runtime, &cfg, page));
    });
    let language = best(rounds, &extracted, |(_, _, md)| {
        black_box(trawl_text::Lang::detect(md));
    });
    let of = match &args.pages {
        Some(dir) => dir.display().to_string(),
        None => format!("bench-fleet's {} questions", args.questions),
    };
    println!(
        "bench-clean: {} pages of {of}, {} KB of HTML a page on average; best of {rounds} passes",
        pages.len(),
        bytes / pages.len().max(1) / 1024
    );
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!("{:<34}{:>12}", "step", "µs / page");
    for (name, d) in [
        ("extract (HTML to markdown)", extract),
        ("  judge (heuristic)", judge),
        ("  analysis (against the question)", analyse),
        ("steps (judge, cleaning, analysis)", steps),
        ("language of the markdown", language),
    ] {
        println!("{name:<34}{:>12.1}", us(d));
    }
    println!(
        "{:<34}{:>12.1}",
        "extract + steps + language",
        us(extract + steps + language)
    );
}
