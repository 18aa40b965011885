//! Work products beside each report, under `batches/<batch>/<job>/`:
//!
//! - `search.md`: every search result with provider, position, score breakdown, and why it was
//!   selected or rejected (rendered from search's `search.json`);
//! - `sources.md`: the full cleaned content of every analysed source, with URL, level and sizes;
//! - `job.json`: question, analysis, timings per stage, outcomes, tokens and cost per stage,
//!   cache hits, errors;
//!
//! and per batch, once its last job ends: `summary.jsonl` (one line per job) and `summary.md`.

use std::collections::BTreeMap;

use trawl_messages::{paths, AnalysedDoc, JobRecord, Outcome, ReportWriter, SearchRecord};
use trawl_pipeline::batch::manifest;
use trawl_pipeline::fanin::OutcomeRecord;
use trawl_pipeline::{Runtime, StageError};
use uuid::Uuid;

pub fn search_md(question: &str, search: &SearchRecord) -> String {
    let mut md = format!("# Search: {question}\n\n");
    let analysis = &search.analysis;
    md.push_str(&format!(
        "Analysis path: {}{}. Sub-queries: {}.\n\n",
        analysis.path,
        (analysis.llm_error.as_ref())
            .map(|e| format!(" (LLM failed: {e})"))
            .unwrap_or_default(),
        analysis.sub_queries.join("; ")
    ));
    if !search.attempts.is_empty() {
        md.push_str(
            "## Provider requests\n\n| provider | page | outcome | detail |\n|---|---|---|---|\n",
        );
        for a in &search.attempts {
            md.push_str(&format!(
                "| {} | {} | {} | {} |\n",
                a.provider,
                a.page,
                a.outcome,
                cell(&a.detail)
            ));
        }
        md.push('\n');
    }
    for note in &search.notes {
        md.push_str(&format!("- {note}\n"));
    }
    md.push_str("## Results\n\n| selected | score | position | title | snippet | URL | provider | pos. | why |\n|---|---|---|---|---|---|---|---|---|\n");
    for r in &search.results {
        md.push_str(&format!(
            "| {} | {:.3} | {:.3} | {:.3} | {:.3} | {} | {} | {} | {} |\n",
            if r.selected { "yes" } else { "no" },
            r.score,
            r.position_score,
            r.title_score,
            r.snippet_score,
            cell(&r.url),
            cell(&r.result.provider),
            r.result.position,
            cell(&r.reason),
        ));
    }
    md
}

pub fn sources_md(question: &str, docs: &[AnalysedDoc], records: &[OutcomeRecord]) -> String {
    let mut md = format!("# Sources: {question}\n\n");
    for r in records
        .iter()
        .filter(|r| !matches!(r.outcome, Outcome::Analysed | Outcome::Irrelevant))
    {
        md.push_str(&format!(
            "- {} — {} (level {})\n",
            r.url,
            serde_json::to_value(&r.outcome)
                .map(|v| v.to_string())
                .unwrap_or_default(),
            r.level
        ));
    }
    for d in docs {
        let fetched = match d.cached_at {
            Some(at) => format!(
                "From the cache, fetched at {} (level {})",
                at.format("%Y-%m-%d %H:%M:%S UTC"),
                d.level
            ),
            None => format!("Fetched at level {}", d.level),
        };
        md.push_str(&format!(
            "\n---\n\n## [S{}] {}\n\nURL: {}  \n{fetched}, {} bytes, {} characters of markdown, relevance {:.2} ({}).\n\n{}\n",
            d.source.idx,
            d.title,
            d.final_url,
            d.bytes,
            d.markdown.chars().count(),
            d.relevance,
            if d.is_relevant { "relevant" } else { "irrelevant" },
            d.markdown
        ));
    }
    md
}

/// A markdown table cell: pipes escaped, line breaks as spaces.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// Writes `summary.jsonl` and `summary.md` for a finished batch from its jobs' `job.json`. Each
/// line carries the job's `id` and `metadata` from the manifest, so a line can be matched to
/// the question that asked it whether or not the job wrote a report.
pub(crate) async fn write_summary(rt: &Runtime, batch: Uuid) -> Result<(), StageError> {
    let Some(manifest) = manifest(rt, batch).await? else {
        return Ok(());
    };
    let (mut lines, mut rows) = (String::new(), String::new());
    let (mut total_cost, mut by_status) = (0i64, BTreeMap::<String, usize>::new());
    let mut budget_spent = 0;
    for job in &manifest.jobs {
        let record: Option<JobRecord> = rt
            .objects
            .get(&paths::job_record(batch, job.job_id))
            .await?
            .and_then(|b| serde_json::from_slice(&b).ok());
        let line = match &record {
            Some(r) => {
                total_cost += r.total_cost_microdollars;
                *by_status.entry(r.status.to_string()).or_default() += 1;
                if r.writer == ReportWriter::BudgetSpent {
                    budget_spent += 1;
                }
                rows.push_str(&format!(
                    "| {} | {} | {} | {} | {:.1} | {} | ${:.4} |\n",
                    cell(&job.id),
                    cell(&r.question),
                    r.status,
                    r.sources_cited,
                    r.duration_ms as f64 / 1000.0,
                    r.writer,
                    r.total_cost_microdollars as f64 / 1e6
                ));
                serde_json::json!({"id": job.id, "metadata": job.metadata, "job_id": job.job_id, "query": job.query, "status": r.status, "duration_ms": r.duration_ms, "sources_selected": r.sources_selected, "sources_used": r.sources_cited, "cost_usd": r.total_cost_microdollars as f64 / 1e6, "writer": r.writer})
            }
            None => {
                *by_status.entry("no report".into()).or_default() += 1;
                serde_json::json!({"id": job.id, "metadata": job.metadata, "job_id": job.job_id, "query": job.query, "status": "no report"})
            }
        };
        lines.push_str(&line.to_string());
        lines.push('\n');
    }
    let counts: Vec<String> = by_status.iter().map(|(k, v)| format!("{k} {v}")).collect();
    let budget_note = match manifest.budget_usd {
        Some(usd) if budget_spent > 0 => format!(
            " The LLM budget of ${usd:.4} was reached: {budget_spent} job(s) were written without the LLM."
        ),
        Some(usd) => format!(" LLM budget ${usd:.4}, not reached."),
        None => String::new(),
    };
    let md = format!(
        "# Batch {batch}\n\n{} jobs: {}. Cost ${:.4}.{budget_note}\n\n| id | question | status | sources cited | seconds | writer | cost |\n|---|---|---|---|---|---|---|\n{rows}",
        manifest.jobs.len(),
        counts.join(", "),
        total_cost as f64 / 1e6
    );
    rt.objects
        .put(&paths::summary_jsonl(batch), lines.as_bytes())
        .await?;
    rt.objects
        .put(&paths::summary_md(batch), md.as_bytes())
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_cells_keep_to_one_cell() {
        assert_eq!(cell("a|b\nc"), "a\\|b c");
    }

    #[test]
    fn search_md_lists_every_result_with_its_reason() {
        let search: SearchRecord = serde_json::from_value(serde_json::json!({
            "query": "q",
            "analysis": {"path": "heuristic", "sub_queries": ["q"]},
            "attempts": [{"provider": "searxng", "query": "q", "page": 1, "outcome": "ok"}],
            "notes": [],
            "answers": [],
            "results": [
                {"selected": true, "score": 0.9, "position_score": 1.0, "title_score": 1.0, "snippet_score": 0.67, "url": "http://a.test/", "kind": "page", "result": {"url": "http://a.test/", "title": "A", "snippet": "", "provider": "searxng", "position": 1}, "reason": "score 0.900, rank 1"},
                {"selected": false, "score": 0.1, "position_score": 0.1, "title_score": 0.0, "snippet_score": 0.0, "url": "http://b.test/", "kind": "page", "result": {"url": "http://b.test/", "title": "B", "snippet": "", "provider": "searxng", "position": 10}, "reason": "score 0.100 below threshold 0.300"}
            ]
        }))
        .unwrap();
        let md = search_md("q", &search);
        assert!(
            md.contains("| yes | 0.900 |") && md.contains("below threshold"),
            "{md}"
        );
        assert!(md.contains("| searxng | 1 | ok |"));
    }
}
