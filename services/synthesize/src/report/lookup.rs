//! A source's lookup (the count, table or passage the question's form asks for, found by clean)
//! as report text: a line of the LLM writer's context, and the lead of the extractive answer.
//! Both quote the source; the count of a list is the one number trawl computes itself, so the
//! extractive answer puts it in a heading above the items it counted, where a reader can check
//! it and attribution does not look for it in the source.

use trawl_messages::{AnalysedDoc, Lookup, Table};
use trawl_text::collapse_whitespace;

/// The lookup of `doc` for its context block.
pub fn context_line(doc: &AnalysedDoc) -> Option<String> {
    Some(match doc.lookup.as_ref()? {
        Lookup::Count {
            subject,
            count,
            method,
            evidence,
        } => format!(
            "{count} {subject} ({}): {}",
            method.replace('_', " "),
            evidence.join("; ")
        ),
        Lookup::Table { index } => format!("the table that fits\n{}", gfm(doc.tables.get(*index)?)),
        Lookup::Passage { text } => {
            format!("the passage that answers it: {}", collapse_whitespace(text))
        }
    })
}

/// The start of the extractive answer from `doc`'s lookup, cited `[n]` where the text is a
/// quote; table rows and counted items are attributed as claims of their own.
pub fn answer_lead(doc: &AnalysedDoc, n: u32) -> Option<String> {
    Some(match doc.lookup.as_ref()? {
        Lookup::Count {
            method, evidence, ..
        } if method == "stated" => format!("{} [{n}]", evidence.first()?.trim()),
        Lookup::Count {
            subject,
            count,
            evidence,
            ..
        } => {
            let items: Vec<String> = evidence.iter().map(|e| format!("- {}", e.trim())).collect();
            let shown = match items.len() as u64 {
                k if k < *count => format!(" (the first {k})"),
                _ => String::new(),
            };
            format!(
                "### {count} {subject}, counted{shown}\n\n{}",
                items.join("\n")
            )
        }
        Lookup::Table { index } => gfm(doc.tables.get(*index)?),
        Lookup::Passage { text } => format!("{} [{n}]", collapse_whitespace(text)),
    })
}

/// A table as GitHub-flavoured markdown, pipes in cells escaped.
fn gfm(table: &Table) -> String {
    let row = |cells: &[String]| {
        let cells: Vec<String> = (cells.iter())
            .map(|c| collapse_whitespace(c).replace('|', "\\|"))
            .collect();
        format!("| {} |", cells.join(" | "))
    };
    let width = (table.rows.iter().map(Vec::len))
        .chain([table.headers.len()])
        .max()
        .unwrap_or(0);
    let mut lines = vec![row(&table.headers), format!("|{}", " --- |".repeat(width))];
    lines.extend(table.rows.iter().map(|r| row(r)));
    lines.join("\n")
}
