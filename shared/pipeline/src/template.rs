//! Questions from a template over a table: `What is the headquarters city of {company}?` and a
//! CSV with a `company` column make one question per row. The row's columns come back as the
//! question's metadata, and an `id` column is its id.
//!
//! Everything is checked before anything is enqueued: a placeholder no column names, a row of
//! the wrong width, an empty row and a repeated id are each named by their line.

use std::collections::HashMap;

use serde_json::Value;
use trawl_messages::{JobOptions, Metadata};

use crate::batch::{check_task, check_user, Question};

/// Why a template or its rows were refused; nothing is enqueued.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TemplateError {
    #[error("the template: {0}")]
    Template(String),
    #[error(
        "the template names {{{name}}}, which is not a column of the rows (columns: {columns})"
    )]
    MissingColumn { name: String, columns: String },
    #[error("the rows hold no header line: the first line names the columns")]
    NoHeader,
    #[error("the rows hold no questions, only their header")]
    NoRows,
    /// A row (`line 3` of a CSV, `rows[2]` of the API's rows) and what is wrong with it.
    #[error("{at}: {reason}")]
    Row { at: String, reason: String },
}

/// A template cut into its text and its `{column}` placeholders; `{{` and `}}` are braces.
#[derive(Debug, PartialEq)]
pub struct Template {
    parts: Vec<Part>,
}

#[derive(Debug, PartialEq)]
enum Part {
    Text(String),
    Column(String),
}

impl Template {
    pub fn parse(text: &str) -> Result<Template, TemplateError> {
        let mut parts = Vec::new();
        let mut text_part = String::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match (c, chars.peek()) {
                ('{', Some('{')) | ('}', Some('}')) => {
                    chars.next();
                    text_part.push(c);
                }
                ('{', _) => {
                    let name: String = chars.by_ref().take_while(|&c| c != '}').collect();
                    let name = name.trim().to_owned();
                    if name.is_empty() || name.contains('{') {
                        return Err(TemplateError::Template(
                            "a placeholder is a column's name in braces, such as {company}; write {{ and }} for braces".into(),
                        ));
                    }
                    parts.push(Part::Text(std::mem::take(&mut text_part)));
                    parts.push(Part::Column(name));
                }
                ('}', _) => {
                    return Err(TemplateError::Template(
                        "a } closes no placeholder; write }} for a brace".into(),
                    ))
                }
                _ => text_part.push(c),
            }
        }
        parts.push(Part::Text(text_part));
        if !parts.iter().any(|p| matches!(p, Part::Column(_))) {
            return Err(TemplateError::Template(
                "it names no column: write one in braces, such as {company}".into(),
            ));
        }
        Ok(Template { parts })
    }

    /// The columns the template names, each once, in order.
    pub fn columns(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for p in &self.parts {
            if let Part::Column(c) = p {
                if !out.contains(&c.as_str()) {
                    out.push(c);
                }
            }
        }
        out
    }

    /// The question for one row (`value` gives a column's cell).
    pub fn fill<'a>(&self, value: impl Fn(&str) -> &'a str) -> String {
        let mut out = String::new();
        for p in &self.parts {
            match p {
                Part::Text(t) => out.push_str(t),
                Part::Column(c) => out.push_str(value(c).trim()),
            }
        }
        out
    }
}

/// The questions of `template` over the CSV `rows` (a header line, then one row per question),
/// each with `options`. A row's cells are its metadata; its `id` cell, when the header has an
/// `id` column, is its id, else its line number.
pub fn questions_from_csv(
    template: &str,
    rows: &[u8],
    options: &JobOptions,
) -> Result<Vec<Question>, TemplateError> {
    let template = Template::parse(template)?;
    let rows = rows.strip_prefix(b"\xef\xbb\xbf").unwrap_or(rows);
    let mut reader = csv::ReaderBuilder::new().flexible(false).from_reader(rows);
    let header: Vec<String> = match reader.headers() {
        Ok(h) if h.iter().any(|c| !c.trim().is_empty()) => {
            h.iter().map(|c| c.trim().to_owned()).collect()
        }
        Ok(_) => return Err(TemplateError::NoHeader),
        Err(e) => return Err(row_error(&e, "the header")),
    };
    check_columns(&template, &header)?;
    let mut questions = Vec::new();
    let mut ids: HashMap<String, u64> = HashMap::new();
    for record in reader.records() {
        let record = record.map_err(|e| row_error(&e, "the row"))?;
        let line = record.position().map_or(0, |p| p.line());
        let cells: Vec<(&str, &str)> = header
            .iter()
            .map(String::as_str)
            .zip(record.iter())
            .collect();
        let metadata: Metadata = (cells.iter())
            .filter(|(k, _)| *k != "id")
            .map(|(k, v)| ((*k).to_owned(), Value::String((*v).to_owned())))
            .collect();
        // An empty id cell is a row without an id: its line number is its id.
        let id = (cells.iter())
            .find(|(k, v)| *k == "id" && !v.trim().is_empty())
            .map(|(_, v)| Value::String(v.trim().to_owned()));
        let row = Row {
            at: format!("line {line}"),
            cells: &cells,
            metadata,
            id,
            number: line,
        };
        let question = row.question(&template, options)?;
        if let Some(first) = ids.insert(question.id.clone(), line) {
            return Err(TemplateError::Row {
                at: format!("line {line}"),
                reason: format!(
                    "id {:?} is already the id of line {first}; ids must be unique in the batch",
                    question.id
                ),
            });
        }
        questions.push(question);
    }
    if questions.is_empty() {
        return Err(TemplateError::NoRows);
    }
    Ok(questions)
}

/// The questions of `template` over `rows` given as JSON objects (the API's `rows`); a row is
/// named by its position from 1.
pub fn questions_from_rows(
    template: &str,
    rows: &[serde_json::Map<String, Value>],
    options: &JobOptions,
) -> Result<Vec<Question>, TemplateError> {
    let template = Template::parse(template)?;
    let mut questions = Vec::new();
    let mut ids: HashMap<String, u64> = HashMap::new();
    for (i, row) in rows.iter().enumerate() {
        let at = format!("rows[{i}]");
        let texts: Vec<(String, String)> = (row.iter())
            .map(|(k, v)| {
                (
                    k.clone(),
                    v.as_str().map_or_else(|| cell_text(v), str::to_owned),
                )
            })
            .collect();
        let columns: Vec<String> = texts.iter().map(|(k, _)| k.clone()).collect();
        check_columns(&template, &columns).map_err(|e| TemplateError::Row {
            at: at.clone(),
            reason: e.to_string(),
        })?;
        let cells: Vec<(&str, &str)> = texts
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        // A JSON row's values come back as they were given (a number stays a number).
        let mut metadata = row.clone();
        let id = metadata.remove("id");
        let row = Row {
            at: at.clone(),
            cells: &cells,
            metadata,
            id,
            number: i as u64 + 1,
        };
        let question = row.question(&template, options)?;
        if let Some(first) = ids.insert(question.id.clone(), i as u64) {
            return Err(TemplateError::Row {
                at,
                reason: format!("id {:?} is already the id of rows[{first}]", question.id),
            });
        }
        questions.push(question);
    }
    if questions.is_empty() {
        return Err(TemplateError::NoRows);
    }
    Ok(questions)
}

fn cell_text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn check_columns(template: &Template, columns: &[String]) -> Result<(), TemplateError> {
    match template
        .columns()
        .into_iter()
        .find(|c| !columns.iter().any(|h| h == c))
    {
        Some(name) => Err(TemplateError::MissingColumn {
            name: name.to_owned(),
            columns: columns.join(", "),
        }),
        None => Ok(()),
    }
}

/// One row of the table: where it is, its cells, and what becomes its metadata and id.
struct Row<'a> {
    at: String,
    cells: &'a [(&'a str, &'a str)],
    metadata: Metadata,
    id: Option<Value>,
    /// Its id when it has none: its line, or its position from 1.
    number: u64,
}

impl Row<'_> {
    fn question(
        self,
        template: &Template,
        options: &JobOptions,
    ) -> Result<Question, TemplateError> {
        let at = self.at;
        let refuse = |reason: String| TemplateError::Row {
            at: at.clone(),
            reason,
        };
        let cells = self.cells;
        let cell = |name: &str| -> &str {
            cells
                .iter()
                .find(|(k, _)| *k == name)
                .map_or("", |(_, v)| *v)
        };
        if cells.iter().all(|(_, v)| v.trim().is_empty()) {
            return Err(refuse("the row is empty".into()));
        }
        if let Some(empty) = template
            .columns()
            .into_iter()
            .find(|c| cell(c).trim().is_empty())
        {
            return Err(refuse(format!(
                "{empty} is empty, and the template needs it"
            )));
        }
        let query = template.fill(cell);
        let task = check_task(&query, options.clone()).map_err(|e| refuse(e.to_string()))?;
        let number = self.number;
        let (id, metadata) = check_user(self.id, Some(Value::Object(self.metadata)), || {
            number.to_string()
        })
        .map_err(|e| refuse(e.to_string()))?;
        Ok(Question { task, id, metadata })
    }
}

/// A CSV reader's error as the line it is on and what is wrong.
fn row_error(e: &csv::Error, what: &str) -> TemplateError {
    let at = format!("line {}", e.position().map_or(0, |p| p.line()));
    let reason = match e.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!("{len} cells where the header has {expected_len}"),
        csv::ErrorKind::Utf8 { .. } => "not UTF-8 text".to_owned(),
        _ => format!("{what} is not valid CSV: {e}"),
    };
    TemplateError::Row { at, reason }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csv(template: &str, rows: &str) -> Result<Vec<Question>, TemplateError> {
        questions_from_csv(template, rows.as_bytes(), &JobOptions::default())
    }

    #[test]
    fn a_question_per_row_with_its_cells_as_metadata_and_its_id() {
        let q = csv(
            "What is the headquarters city of {company} ({ticker})? {{sic}}",
            "id,company,ticker\nacme,\"Acme, Inc.\",ACM\n,Bolt,BLT\n",
        )
        .unwrap();
        assert_eq!(q.len(), 2);
        assert_eq!(
            q[0].task.query,
            "What is the headquarters city of Acme, Inc. (ACM)? {sic}"
        );
        assert_eq!(q[0].id, "acme");
        assert_eq!(q[0].metadata["company"], "Acme, Inc.");
        assert!(!q[0].metadata.contains_key("id"));
        assert_eq!(q[1].id, "3", "an empty id cell is its line number");
        let numbered = csv("Where is {company}?", "company\nAcme\nBolt\n").unwrap();
        assert_eq!(
            (numbered[0].id.as_str(), numbered[1].id.as_str()),
            ("2", "3")
        );
    }

    #[test]
    fn what_is_wrong_is_named_by_its_line() {
        let missing = csv("Where is {firm}?", "company\nAcme\n").unwrap_err();
        assert_eq!(
            missing.to_string(),
            "the template names {firm}, which is not a column of the rows (columns: company)"
        );
        let broken = csv("Where is {company}?", "company,city\nAcme,Oslo\nBolt\n").unwrap_err();
        assert_eq!(broken.to_string(), "line 3: 1 cells where the header has 2");
        let empty = csv("Where is {company}?", "company,city\nAcme,Oslo\n,\n").unwrap_err();
        assert_eq!(empty.to_string(), "line 3: the row is empty");
        let hole = csv("Where is {company}?", "company,city\n,Oslo\n").unwrap_err();
        assert!(
            hole.to_string().starts_with("line 2: company is empty"),
            "{hole}"
        );
        let twice = csv("Where is {company}?", "id,company\na,Acme\na,Bolt\n").unwrap_err();
        assert!(
            twice.to_string().starts_with("line 3: id \"a\" is already"),
            "{twice}"
        );
        assert_eq!(
            csv("Where is {company}?", "company\n").unwrap_err(),
            TemplateError::NoRows
        );
        assert!(matches!(
            csv("Where is it?", "company\nAcme\n"),
            Err(TemplateError::Template(_))
        ));
        assert!(matches!(
            csv("Where is {company?", "company\nAcme\n"),
            Err(TemplateError::Template(_)) | Err(TemplateError::MissingColumn { .. })
        ));
        assert!(matches!(
            csv("Where } is {company}", "company\nAcme\n"),
            Err(TemplateError::Template(_))
        ));
    }

    #[test]
    fn rows_given_as_json_objects() {
        let rows: Vec<serde_json::Map<String, Value>> = serde_json::from_str(
            r#"[{"company": "Acme", "founded": 1931}, {"company": "Bolt", "id": "b"}]"#,
        )
        .unwrap();
        let q = questions_from_rows("When was {company} founded?", &rows, &JobOptions::default())
            .unwrap();
        assert_eq!(q[0].task.query, "When was Acme founded?");
        assert_eq!(q[0].metadata["founded"], 1931);
        assert_eq!((q[0].id.as_str(), q[1].id.as_str()), ("1", "b"));
        let bad: Vec<serde_json::Map<String, Value>> =
            serde_json::from_str(r#"[{"firm": "Acme"}]"#).unwrap();
        let e = questions_from_rows("When was {company} founded?", &bad, &JobOptions::default())
            .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("rows[0]: the template names {company}"),
            "{e}"
        );
    }
}
