//! The output directory: `results.json` (every figure and sample), `results.md` (the tables)
//! and `queue-depth-<run>.svg` (messages ready per queue over time).

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context as _;

use crate::report::{sparklines, targets, verdict, workers_text, Results};
use crate::run::{Run, WorkerStats};

fn markdown(results: &Results) -> String {
    let mut md = String::from("# bench-fleet results\n\n");
    let _ = writeln!(md, "{}\n", results.machine.line());
    let _ = writeln!(md, "Command: `{}`\n", results.command);
    let _ = writeln!(
        md,
        "{} questions, simweb LLM {}.\n",
        results.questions,
        results
            .llm_latency_ms
            .map_or("off (no-LLM paths)".to_owned(), |ms| format!(
                "at {ms} ms a request"
            ))
    );
    md.push_str("| run | workers | jobs/min | steady jobs/min | p50 latency s | p95 latency s | trawl CPU ms/job | fetch+clean CPU ms/page | bottleneck |\n");
    md.push_str("|---|---|--:|--:|--:|--:|--:|--:|---|\n");
    for r in &results.runs {
        let _ = writeln!(
            md,
            "| {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.2} | {} |",
            r.label,
            workers_text(r),
            r.jobs_per_min,
            r.steady_jobs_per_min,
            r.latency_p50_secs,
            r.latency_p95_secs,
            r.trawl_cpu_ms_per_job,
            r.cpu_ms_per_page,
            r.bottleneck.name()
        );
    }
    md.push_str("\n| run | stage | workers | CPU ms/job | CPU per worker | saturated | idle RSS MB (max) | peak RSS MB (max) |\n");
    md.push_str("|---|---|--:|--:|--:|--:|--:|--:|\n");
    for r in &results.runs {
        for (stage, s) in &r.stages {
            let of = |f: fn(&WorkerStats) -> f64| {
                r.worker_stats
                    .iter()
                    .filter(|w| w.stage == *stage)
                    .map(f)
                    .fold(0.0, f64::max)
            };
            let _ = writeln!(
                md,
                "| {} | {} | {} | {:.2} | {:.2} | {:.0} % | {:.1} | {:.1} |",
                r.label,
                stage.name(),
                s.workers,
                s.cpu_ms_per_job,
                s.cpu_per_worker,
                s.saturated * 100.0,
                of(|w| w.idle_rss_mb),
                of(|w| w.peak_rss_mb)
            );
        }
    }
    if let Some(s) = &results.scaling {
        let _ = writeln!(md, "\n{}", s.text());
    }
    if let Some(o) = &results.overlap {
        let run = |label: &str| results.runs.iter().find(|r| r.label == label);
        if let (Some(off), Some(on)) = (run(&o.cache_off), run(&o.cache_on)) {
            let _ = writeln!(md, "\n```{}\n```", o.text(off, on));
        }
    }
    md.push_str("\n| target | measured | goal | |\n|---|--:|---|---|\n");
    for x in targets(results) {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} |",
            x.what,
            x.measured,
            x.goal,
            verdict(x.met)
        );
    }
    md.push('\n');
    for r in &results.runs {
        let _ = writeln!(
            md,
            "![queue depth, run {0}](queue-depth-{0}.svg)\n\n```\n{1}```\n",
            r.label,
            sparklines(r, 60)
        );
    }
    md
}

const COLOURS: [&str; 4] = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"];

/// Messages ready per queue over time, and the share of jobs ended (dashed, right axis).
fn svg(run: &Run) -> String {
    let (w, h, left, right, top, bottom) = (860.0, 320.0, 60.0, 760.0, 30.0, 270.0);
    let end = run.samples.last().map_or(1.0, |s| s.t).max(1e-9);
    let max = run
        .samples
        .iter()
        .flat_map(|s| s.ready.values())
        .copied()
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let x = |t: f64| left + t / end * (right - left);
    let y = |v: f64| bottom - v / max * (bottom - top);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{left}\" y=\"18\">queue depth (messages ready) over time, run {} ({})</text>\n\
         <line x1=\"{left}\" y1=\"{bottom}\" x2=\"{right}\" y2=\"{bottom}\" stroke=\"black\"/>\n\
         <line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{bottom}\" stroke=\"black\"/>\n\
         <text x=\"{right}\" y=\"{}\" text-anchor=\"end\">{end:.0} s</text>\n\
         <text x=\"{left}\" y=\"{}\">0</text>\n\
         <text x=\"{}\" y=\"{}\" text-anchor=\"end\">{max:.0}</text>\n\
         <text x=\"{}\" y=\"{}\">100 % of jobs ended</text>\n",
        run.label,
        workers_text(run),
        bottom + 16.0,
        bottom + 16.0,
        left - 4.0,
        top + 4.0,
        right + 4.0,
        top + 4.0,
    );
    for (i, &stage) in run.workers.keys().enumerate() {
        let points: String = run
            .samples
            .iter()
            .map(|p| format!("{:.1},{:.1} ", x(p.t), y(p.ready[&stage] as f64)))
            .collect();
        let colour = COLOURS[i % COLOURS.len()];
        let _ = writeln!(
            s,
            "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.5\" points=\"{points}\"/>\n\
             <text x=\"{}\" y=\"{}\" fill=\"{colour}\">{}</text>",
            right + 4.0,
            top + 40.0 + 16.0 * i as f64,
            stage.name()
        );
    }
    let jobs = run.jobs.max(1) as f64;
    let done: String = run
        .samples
        .iter()
        .map(|p| {
            let v = p.finished as f64 / jobs;
            format!("{:.1},{:.1} ", x(p.t), bottom - v * (bottom - top))
        })
        .collect();
    let _ = writeln!(
        s,
        "<polyline fill=\"none\" stroke=\"grey\" stroke-dasharray=\"4 3\" points=\"{done}\"/>\n\
         <text x=\"{}\" y=\"{}\" fill=\"grey\">jobs ended</text>\n</svg>",
        right + 4.0,
        top + 40.0 + 16.0 * run.workers.len() as f64
    );
    s
}

pub fn write(dir: &Path, results: &Results) -> anyhow::Result<()> {
    let put = |name: String, text: String| {
        let path = dir.join(&name);
        std::fs::write(&path, text).with_context(|| format!("failed to write {}", path.display()))
    };
    put(
        "results.json".into(),
        serde_json::to_string_pretty(results)?,
    )?;
    put("results.md".into(), markdown(results))?;
    for r in &results.runs {
        put(format!("queue-depth-{}.svg", r.label), svg(r))?;
    }
    Ok(())
}
