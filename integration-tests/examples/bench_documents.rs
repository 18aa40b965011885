//! The driver of `scripts/bench-documents`: what indexing and searching a documents root costs.
//!
//! Writes `--files` generated PDFs of `--pages` pages each (a company's report per file, every
//! page about its segments, each with a fact no other page states) into a folder, then, in this
//! one process:
//! 1. the baseline: every file converted to text alone (`trawl_files`, as fetch reads a PDF);
//! 2. the index: the root listed, every file converted, chunked, indexed with tantivy and
//!    published to a `file://` object store (`Library::up_to_date`, as the first search worker
//!    does), then again after one file changed (only it is read again);
//! 3. `--queries` questions, each naming one page's fact, searched on the published index as a
//!    worker does, after one search that downloads it: latency p50 and p99, and how often the
//!    page that states the fact is the first hit.
//!
//! CPU is this process's (user + system, all threads, from /proc), memory its peak RSS
//! (VmHWM). Not measured: a remote object store (file:// on local disk), several workers.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context as _;
use clap::Parser;
use trawl_config::{DocumentsConfig, OutputConfig};
use trawl_documents::{Library, Root};
use trawl_integration_tests::procfs::{cpu_secs, status_kib};
use trawl_integration_tests::simweb::files::paged_pdf;
use trawl_store::{MemoryStore, Objects, Store};

#[derive(Parser)]
struct Args {
    /// PDFs in the root.
    #[arg(long, default_value_t = 2_000)]
    files: usize,
    /// Pages per PDF.
    #[arg(long, default_value_t = 5)]
    pages: usize,
    /// Questions searched.
    #[arg(long, default_value_t = 500)]
    queries: usize,
}

const SEGMENTS: [&str; 6] = ["aerospace", "marine", "rail", "energy", "defence", "mining"];

/// Page `p` (from 1) of company `f`'s report: the company's prose, and one fact of its own.
fn page(f: usize, p: usize) -> Vec<String> {
    let company = format!("Company{f:05}");
    let segment = SEGMENTS[(f + p) % SEGMENTS.len()];
    let mut out: Vec<String> = (0..12)
        .map(|i| {
            format!(
                "{company} reviewed the {segment} contracts of quarter {} and the risks its suppliers face in the markets it serves.",
                i % 4 + 1
            )
        })
        .collect();
    out.push(fact(f, p));
    out
}

fn fact(f: usize, p: usize) -> String {
    format!(
        "The {} plant of Company{f:05} opened {} new lines in 2023.",
        SEGMENTS[(f * 7 + p) % SEGMENTS.len()],
        (f * 31 + p * 17) % 900 + 100
    )
}

fn question(f: usize, p: usize) -> String {
    format!(
        "How many new lines did the {} plant of Company{f:05} open in 2023?",
        SEGMENTS[(f * 7 + p) % SEGMENTS.len()]
    )
}

fn cpu() -> f64 {
    cpu_secs("self").unwrap_or(0.0)
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    let at = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted.get(at).copied().unwrap_or(0.0)
}

fn write_root(dir: &Path, args: &Args) -> anyhow::Result<()> {
    for f in 0..args.files {
        let pages: Vec<Vec<String>> = (1..=args.pages).map(|p| page(f, p)).collect();
        let pdf = paged_pdf(&format!("Company{f:05} Annual Report"), &pages);
        let path = dir.join(format!("reports/{:02}/company-{f:05}.pdf", f % 50));
        std::fs::create_dir_all(path.parent().expect("a folder"))?;
        std::fs::write(path, pdf)?;
    }
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let work = tempfile::tempdir()?;
    let folder = work.path().join("root");
    eprintln!(
        "bench-documents: writing {} PDFs of {} pages",
        args.files, args.pages
    );
    write_root(&folder, &args)?;
    let pages = (args.files * args.pages) as f64;

    // 1. The baseline: conversion alone.
    let (cpu0, wall0) = (cpu(), Instant::now());
    for entry in walk(&folder)? {
        let bytes = std::fs::read(&entry)?;
        trawl_documents::read::convert(&entry.display().to_string(), &bytes)
            .map_err(|e| anyhow::anyhow!("{}: {e}", entry.display()))?;
    }
    let convert_cpu = cpu() - cpu0;
    let convert_wall = wall0.elapsed().as_secs_f64();

    // 2. The index, published to a file:// store.
    let output = OutputConfig {
        url: format!("file://{}", work.path().join("store").display()),
        ..OutputConfig::default()
    };
    let objects = Objects::open(&output)?;
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let config = DocumentsConfig {
        refresh_secs: 1,
        ..DocumentsConfig::default()
    };
    let cache = work.path().join("cache");
    let library = Library::new(
        objects.clone(),
        store.clone(),
        output.clone(),
        config,
        cache,
    );
    let root = Root::folder(&folder)?;
    eprintln!("bench-documents: indexing");
    let (cpu0, wall0) = (cpu(), Instant::now());
    let built = library.up_to_date(&root).await?;
    let index_cpu = cpu() - cpu0;
    let index_wall = wall0.elapsed().as_secs_f64();
    anyhow::ensure!(built.read.len() == args.files, "not every file was indexed");
    let bytes: u64 = walk(&work.path().join("store"))?
        .iter()
        .filter(|p| p.display().to_string().contains("/v1/"))
        .map(|p| std::fs::metadata(p).map_or(0, |m| m.len()))
        .sum();

    // Again after one file changed: only it is read.
    let changed = folder.join("reports/00/company-00000.pdf");
    let pdf = paged_pdf("Company00000 Annual Report", &[page(0, 1)]);
    std::fs::write(&changed, pdf)?;
    tokio::time::sleep(std::time::Duration::from_millis(1_100)).await;
    let (cpu0, wall0) = (cpu(), Instant::now());
    let rebuilt = library.up_to_date(&root).await?;
    let update_cpu = cpu() - cpu0;
    let update_wall = wall0.elapsed().as_secs_f64();
    anyhow::ensure!(rebuilt.read.len() == 1, "read again: {:?}", rebuilt.read);

    // 3. Queries on the published index, after the one search that downloads it.
    let searcher = Library::new(
        objects,
        store,
        output,
        DocumentsConfig::default(),
        work.path().join("searcher"),
    );
    searcher.search(&root, &question(1, 1), 5).await?;
    let (mut latencies, mut first) = (Vec::new(), 0);
    let cpu0 = cpu();
    for i in 0..args.queries {
        let (f, p) = (1 + (i * 7919) % (args.files - 1), 1 + i % args.pages);
        let started = Instant::now();
        let hits = searcher.search(&root, &question(f, p), 5).await?;
        latencies.push(started.elapsed().as_secs_f64() * 1e3);
        let name = format!("reports/{:02}/company-{f:05}.pdf", f % 50);
        first += usize::from(
            hits.first()
                .is_some_and(|h| h.name == name && h.page == Some(p as u32)),
        );
    }
    let query_cpu = cpu() - cpu0;
    latencies.sort_by(f64::total_cmp);
    let rss = status_kib(std::process::id(), "VmHWM").context("no VmHWM")? as f64 / 1024.0;

    println!(
        "| documents root: {} PDFs × {} pages ({} pages) | figure |",
        args.files, args.pages, pages
    );
    println!("|---|--:|");
    println!(
        "| conversion alone (baseline): pages per second | {:.0} |",
        pages / convert_wall
    );
    println!(
        "| conversion alone: CPU per page | {:.2} ms |",
        convert_cpu * 1e3 / pages
    );
    println!(
        "| index built and published: pages per second | {:.0} |",
        pages / index_wall
    );
    println!(
        "| index built and published: CPU per page | {:.2} ms |",
        index_cpu * 1e3 / pages
    );
    println!(
        "| indexing CPU / conversion CPU | ×{:.2} |",
        index_cpu / convert_cpu.max(1e-9)
    );
    println!(
        "| index size | {:.1} MB ({:.0} bytes a page) |",
        bytes as f64 / 1e6,
        bytes as f64 / pages
    );
    println!(
        "| one file changed: update | {update_wall:.2} s, {:.2} s CPU |",
        update_cpu
    );
    println!(
        "| query latency p50 / p99 ({} queries) | {:.2} / {:.2} ms |",
        args.queries,
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99)
    );
    println!(
        "| query CPU | {:.2} ms |",
        query_cpu * 1e3 / args.queries as f64
    );
    println!(
        "| page stating the fact first | {first} of {} |",
        args.queries
    );
    println!("| peak RSS | {rss:.0} MB |");
    Ok(())
}

/// Every file under `dir`.
fn walk(dir: &Path) -> anyhow::Result<Vec<std::path::PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let entry = entry?;
            if entry.file_type()?.is_dir() {
                stack.push(entry.path());
            } else {
                out.push(entry.path());
            }
        }
    }
    Ok(out)
}
