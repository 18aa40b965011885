//! A batch file for `trawl submit`, read whole and checked line by line before anything is
//! enqueued: one bad line refuses the batch, named by its number.
//!
//! Each line goes through the pipeline's own `parse_batch`, so a line means the same here as
//! anywhere; around it, what only a file can get wrong:
//!
//! - bytes that are not UTF-8 are refused with their line and column, not a bare "stream did
//!   not contain valid UTF-8";
//! - a UTF-8 byte order mark (Windows editors write one) is dropped, and CRLF line ends are
//!   line ends, so such a file reads like any other;
//! - a line holding a JSON value other than an object (`["q"]`, `"q"`, `42`, `null`), or a
//!   JSONL line whose `options` is an array, is refused: taken as a question it would be one
//!   nobody meant, and serde would read an array as options by position;
//! - provider names must be ones the search stage knows;
//! - an empty file, or one of blank lines and comments only, says so.

use serde_json::Value;
use trawl_messages::SearchTask;
use trawl_pipeline::batch::parse_batch;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BatchFileError {
    #[error("line {line}: {reason}")]
    Line { line: usize, reason: String },
    #[error("the file is empty: write one question per line, or JSONL lines {{\"query\": \"…\"}}")]
    Empty,
    #[error("the file holds no questions, only blank lines and # comments")]
    NoQuestions,
}

/// The tasks of a batch file's `bytes`, every line checked.
pub fn parse(bytes: &[u8]) -> Result<Vec<SearchTask>, BatchFileError> {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    if bytes.is_empty() {
        return Err(BatchFileError::Empty);
    }
    let text = std::str::from_utf8(bytes).map_err(|e| not_utf8(bytes, e.valid_up_to()))?;
    let mut tasks = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let at = |reason: String| BatchFileError::Line { line, reason };
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if let Some(reason) = not_a_question(trimmed) {
            return Err(at(reason));
        }
        let task = parse_batch(trimmed)
            .map_err(|e| at(e.reason))?
            .pop()
            .expect("a line that is not blank is one task");
        task.options.check_providers().map_err(at)?;
        tasks.push(task);
    }
    if tasks.is_empty() {
        return Err(BatchFileError::NoQuestions);
    }
    Ok(tasks)
}

/// Why `line` (trimmed, not blank) is neither a question nor a JSONL object, if it is not.
fn not_a_question(line: &str) -> Option<String> {
    let value: Value = serde_json::from_str(line).ok()?;
    let what = match &value {
        Value::Object(fields) => {
            return matches!(fields.get("options"), Some(Value::Array(_))).then(|| {
                "options: must be an object such as {\"max_urls\": 5}, not an array".into()
            })
        }
        Value::Array(_) => "a JSON array",
        Value::String(_) => "a JSON string",
        Value::Number(_) => "a number",
        Value::Bool(_) => "a JSON boolean",
        Value::Null => "JSON null",
    };
    Some(format!(
        "{what} where a question or a JSON object {{\"query\": \"…\"}} belongs"
    ))
}

/// The error for bytes that are UTF-8 up to `valid`: its line, and its column in characters.
fn not_utf8(bytes: &[u8], valid: usize) -> BatchFileError {
    let before = &bytes[..valid];
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |at| at + 1);
    let column = String::from_utf8_lossy(&before[line_start..])
        .chars()
        .count()
        + 1;
    BatchFileError::Line {
        line: before.iter().filter(|&&b| b == b'\n').count() + 1,
        reason: format!(
            "not UTF-8 (byte 0x{:02X} at column {column}): save the file as UTF-8",
            bytes[valid]
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line_error(bytes: &[u8]) -> (usize, String) {
        match parse(bytes) {
            Err(BatchFileError::Line { line, reason }) => (line, reason),
            other => panic!("{:?}: {other:?}", String::from_utf8_lossy(bytes)),
        }
    }

    #[test]
    fn a_bom_and_crlf_read_like_any_file() {
        let tasks =
            parse(b"\xef\xbb\xbf{\"query\": \"What is zorbium?\"}\r\n\r\nWho found it?\r\n")
                .unwrap();
        let queries: Vec<&str> = tasks.iter().map(|t| t.query.as_str()).collect();
        assert_eq!(queries, ["What is zorbium?", "Who found it?"]);
    }

    #[test]
    fn bytes_that_are_not_utf8_are_named_by_line_and_column() {
        let (line, reason) = line_error(b"ok\nthe caf\xe9 question\n");
        assert_eq!(line, 2);
        assert!(reason.contains("0xE9 at column 8"), "{reason}");
        let (line, reason) = line_error(&["é\nü".as_bytes(), b"\xff"].concat());
        assert_eq!((line, reason.contains("column 2")), (2, true), "{reason}");
    }

    #[test]
    fn json_that_is_not_an_object_is_refused() {
        for (text, needle) in [
            ("ok\n[\"q\"]\n", "a JSON array"),
            ("\"q\"", "a JSON string"),
            ("ok\nok\n42", "a number"),
            ("null", "JSON null"),
            (
                "{\"query\": \"q\", \"options\": [5]}",
                "options: must be an object",
            ),
        ] {
            let (line, reason) = line_error(text.as_bytes());
            assert_eq!(line, text.lines().count(), "{text}");
            assert!(reason.contains(needle), "{text}: {reason}");
        }
        // Text that merely starts like JSON is a question.
        assert_eq!(parse(b"[draft] what is zorbium?").unwrap().len(), 1);
    }

    #[test]
    fn the_pipelines_line_rules_apply_with_this_files_line_numbers() {
        for (text, line, needle) in [
            ("ok\n\n{\"query\": \"x\"\n", 3, "invalid JSON line"),
            (
                "ok\n{\"query\": \"x\", \"options\": {\"max_urls\": -1}}",
                2,
                "max_urls",
            ),
            ("# c\nok\n{\"query\": \"\"}", 3, "empty query"),
            (
                "{\"query\": \"x\", \"options\": {\"providers\": [\"nope\"]}}",
                1,
                "unknown provider",
            ),
        ] {
            let (at, reason) = line_error(text.as_bytes());
            assert_eq!(at, line, "{text}");
            assert!(reason.contains(needle), "{text}: {reason}");
        }
        let huge = "q".repeat(3_000_000);
        assert!(line_error(huge.as_bytes()).1.contains("longer than"));
    }

    #[test]
    fn empty_and_question_less_files_say_so() {
        assert_eq!(parse(b""), Err(BatchFileError::Empty));
        assert_eq!(parse(b"\xef\xbb\xbf"), Err(BatchFileError::Empty));
        assert_eq!(parse(b"\n \r\n# c\n"), Err(BatchFileError::NoQuestions));
    }
}
