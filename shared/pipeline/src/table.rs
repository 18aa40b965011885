//! A batch's results as a CSV table (`trawl results --format csv`, the API's export with
//! `format=csv`): one row per question, for a spreadsheet.
//!
//! Columns: `id`, `query`, `status`, each metadata key (in the order first seen), then each
//! field the batch asked for with `<field>_source`, the URL of the source that states it.
//! A field not found, or on which the sources disagree, is an empty cell; `answer.json` (in
//! `--format jsonl`) says which and why.
//!
//! The header needs every job's metadata keys and fields, so the rows are gathered first
//! (a row is a few short cells, not a report) and written when the last job is in.

use std::io::Write;

use serde_json::Value;
use trawl_messages::FieldStatus;

use crate::results::JobResult;

/// The rows of a results table, gathered job by job.
#[derive(Default)]
pub struct Table {
    metadata: Vec<String>,
    fields: Vec<String>,
    rows: Vec<Row>,
}

struct Row {
    id: String,
    query: String,
    status: String,
    metadata: Vec<(String, String)>,
    /// Field → (value, source URL).
    fields: Vec<(String, (String, String))>,
}

/// A JSON value as one cell: strings as they are, lists joined by "; ", the rest as JSON.
fn cell(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Array(items) => items.iter().map(cell).collect::<Vec<_>>().join("; "),
        other => other.to_string(),
    }
}

fn add(names: &mut Vec<String>, name: &str) {
    if !names.iter().any(|n| n == name) {
        names.push(name.to_owned());
    }
}

impl Table {
    pub fn push(&mut self, job: &JobResult) {
        for key in job.metadata.keys() {
            add(&mut self.metadata, key);
        }
        // The fields asked: a job still pending has its columns, empty, like one that ended.
        for name in &job.asked {
            add(&mut self.fields, name);
        }
        let mut fields = Vec::new();
        for (name, answer) in job.answer.iter().flat_map(|a| a.fields.iter()) {
            add(&mut self.fields, name);
            let cells = match (answer.status, &answer.value) {
                (FieldStatus::Found, Some(value)) => {
                    (cell(value), answer.url.clone().unwrap_or_default())
                }
                _ => Default::default(),
            };
            fields.push((name.clone(), cells));
        }
        self.rows.push(Row {
            id: job.id.clone(),
            query: job.query.clone(),
            status: job.status.to_string(),
            metadata: (job.metadata.iter())
                .map(|(k, v)| (k.clone(), cell(v)))
                .collect(),
            fields,
        });
    }

    /// Writes the table: its header, then a row per job in the order they were pushed.
    pub fn write(self, out: impl Write) -> Result<(), csv::Error> {
        let mut csv = csv::Writer::from_writer(out);
        let mut header: Vec<String> = ["id", "query", "status"].map(String::from).to_vec();
        // A metadata key named like a column of ours keeps its own column, prefixed.
        let metadata: Vec<String> = (self.metadata.iter())
            .map(|k| match ["id", "query", "status"].contains(&k.as_str()) {
                true => format!("metadata.{k}"),
                false => k.clone(),
            })
            .collect();
        header.extend(metadata);
        for f in &self.fields {
            header.push(f.clone());
            header.push(format!("{f}_source"));
        }
        csv.write_record(&header)?;
        for row in &self.rows {
            let mut record = vec![row.id.clone(), row.query.clone(), row.status.clone()];
            for key in &self.metadata {
                let value = row.metadata.iter().find(|(k, _)| k == key);
                record.push(value.map(|(_, v)| v.clone()).unwrap_or_default());
            }
            for f in &self.fields {
                let (value, source) = (row.fields.iter())
                    .find(|(name, _)| name == f)
                    .map(|(_, cells)| cells.clone())
                    .unwrap_or_default();
                record.extend([value, source]);
            }
            csv.write_record(&record)?;
        }
        csv.flush()?;
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_row_per_question_with_metadata_fields_and_their_sources() {
        // The answer as text: its fields keep their order, as an export's lines do.
        let job = |id: &str, metadata: Value, answer: &str| -> JobResult {
            let mut job: JobResult = serde_json::from_value(json!({
                "id": id, "metadata": metadata, "job_id": uuid::Uuid::nil(), "query": format!("q {id}"),
                "status": "done", "writer": "extractive", "duration_ms": 1, "cost_usd": 0.0,
                "report": "r", "sources": [],
            }))
            .unwrap();
            job.answer = Some(serde_json::from_str(answer).unwrap());
            job
        };
        let mut table = Table::default();
        table.push(&job("a", json!({"company": "Acme, Inc."}), r#"{"by": "extractive", "fields": {
            "hq": {"status": "found", "value": "Oslo", "sources": [1], "quote": "Acme is run from Oslo.", "url": "https://a.example/"},
            "founded": {"status": "conflict", "values": []}
        }}"#));
        table.push(&job("b", json!({"company": "Bolt", "status": "x"}), r#"{"by": "extractive", "fields": {
            "hq": {"status": "not_found"},
            "founded": {"status": "found", "value": 1931, "sources": [2], "quote": "…", "url": "https://b.example/"}
        }}"#));
        let mut out = Vec::new();
        table.write(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "id,query,status,company,metadata.status,hq,hq_source,founded,founded_source"
        );
        assert_eq!(
            lines[1],
            "a,q a,done,\"Acme, Inc.\",,Oslo,https://a.example/,,"
        );
        assert_eq!(lines[2], "b,q b,done,Bolt,x,,,1931,https://b.example/");
    }

    /// A page of jobs none of which has ended has the columns of the fields they asked for.
    #[test]
    fn pending_jobs_have_their_fields_columns() {
        let mut job: JobResult = serde_json::from_value(json!({
            "id": "1", "metadata": {}, "job_id": uuid::Uuid::nil(), "query": "q",
            "status": "pending", "sources": null,
        }))
        .unwrap();
        job.asked = vec!["hq".into(), "founded".into()];
        let mut table = Table::default();
        table.push(&job);
        let mut out = Vec::new();
        table.write(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "id,query,status,hq,hq_source,founded,founded_source\n1,q,pending,,,,\n"
        );
    }
}
