//! CSV and TSV as a GFM table: the first record is the header. Quoting per RFC 4180 (fields in
//! double quotes may hold the delimiter, newlines and `""`); TSV has no quoting in practice but
//! the same rules do no harm. Bounded in rows, columns and cell length, so the table stays
//! readable and the output small whatever the file.

use super::{Converted, FileError};

pub(crate) const MAX_ROWS: usize = 5000;
pub(crate) const MAX_COLUMNS: usize = 50;
/// Longer cells are cut (chars).
const MAX_CELL: usize = 500;
/// A record this long is not a table row (bytes).
const MAX_RECORD: usize = 1 << 20;

pub fn convert(text: &str, delimiter: u8, mime: &str) -> Result<Converted, FileError> {
    let mut records = Records {
        text: text.as_bytes(),
        at: 0,
        delimiter,
    };
    let (header, mut width) = records.next().transpose()?.ok_or_else(|| empty(mime))?;
    let mut rows = Vec::new();
    let mut left_out = 0usize;
    for record in records.by_ref() {
        let (cells, fields) = record?;
        width = width.max(fields);
        if rows.len() < MAX_ROWS {
            rows.push(cells);
        } else {
            left_out += 1;
        }
    }
    let shown = width.min(MAX_COLUMNS);

    let mut out = String::new();
    line(&mut out, &header, shown);
    out.push('|');
    out.push_str(&" --- |".repeat(shown));
    out.push('\n');
    for row in &rows {
        line(&mut out, row, shown);
    }
    if left_out > 0 {
        out.push_str(&format!("\n*{left_out} more rows not shown.*\n"));
    }
    if width > shown {
        out.push_str(&format!("\n*{} more columns not shown.*\n", width - shown));
    }
    super::cap(&mut out);
    Ok(Converted {
        mime: mime.into(),
        title: None,
        text: out,
        pages: None,
    })
}

fn empty(mime: &str) -> FileError {
    FileError::Corrupt(format!("{mime} without a single record"))
}

fn line(out: &mut String, cells: &[String], shown: usize) {
    out.push('|');
    for i in 0..shown {
        out.push(' ');
        out.push_str(&cell(cells.get(i).map_or("", String::as_str)));
        out.push_str(" |");
    }
    out.push('\n');
}

/// A cell's text made safe inside a table row: pipes escaped, line breaks as `<br>`.
fn cell(raw: &str) -> String {
    let raw = raw.trim();
    let mut out = String::with_capacity(raw.len().min(MAX_CELL));
    for (n, c) in raw.chars().enumerate() {
        if n == MAX_CELL {
            out.push('…');
            break;
        }
        match c {
            '|' => out.push_str("\\|"),
            '\n' => out.push_str("<br>"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

struct Records<'a> {
    text: &'a [u8],
    at: usize,
    delimiter: u8,
}

impl Iterator for Records<'_> {
    /// The first [`MAX_COLUMNS`] cells of a record, and how many it has: a row of a hundred
    /// thousand empty cells would otherwise hold a hundred thousand strings to show fifty.
    type Item = Result<(Vec<String>, usize), FileError>;

    /// The next non-blank record. Works on bytes: the delimiter, quote and newline are ASCII,
    /// so UTF-8 sequences are never split.
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.at >= self.text.len() {
                return None;
            }
            let start = self.at;
            let mut fields = Vec::new();
            let mut count = 0;
            let mut keep = |fields: &mut Vec<String>, field: &[u8]| {
                if fields.len() < MAX_COLUMNS {
                    fields.push(String::from_utf8_lossy(field).into_owned());
                }
                count += 1;
            };
            let mut field = Vec::new();
            let mut quoted = false;
            while self.at < self.text.len() {
                let b = self.text[self.at];
                self.at += 1;
                if self.at - start > MAX_RECORD {
                    return Some(Err(FileError::Corrupt(format!(
                        "a record longer than {} KiB: not a table",
                        MAX_RECORD >> 10
                    ))));
                }
                if quoted {
                    match b {
                        b'"' if self.text.get(self.at) == Some(&b'"') => {
                            field.push(b'"');
                            self.at += 1;
                        }
                        b'"' => quoted = false,
                        _ => field.push(b),
                    }
                } else if b == b'"' && field.iter().all(u8::is_ascii_whitespace) {
                    field.clear();
                    quoted = true;
                } else if b == self.delimiter {
                    keep(&mut fields, &field);
                    field.clear();
                } else if b == b'\n' {
                    break;
                } else {
                    field.push(b);
                }
            }
            keep(&mut fields, &field);
            if count == 1 && fields[0].trim().is_empty() {
                continue;
            }
            return Some(Ok((fields, count)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> String {
        convert(text, b',', "text/csv").unwrap().text
    }

    #[test]
    fn csv_becomes_a_gfm_table() {
        let out =
            table("site,pairs,note\nNorth,210,\"upland, dry\"\nEast,202,\"said \"\"ok\"\"\"\n");
        assert_eq!(
            out,
            "| site | pairs | note |\n| --- | --- | --- |\n\
             | North | 210 | upland, dry |\n| East | 202 | said \"ok\" |\n"
        );
    }

    #[test]
    fn pipes_newlines_ragged_rows_and_blank_lines() {
        let out = table("a,b\n\n\"x|y\",\"two\nlines\"\n1\n1,2,3\n");
        assert_eq!(
            out,
            "| a | b |  |\n| --- | --- | --- |\n| x\\|y | two<br>lines |  |\n| 1 |  |  |\n| 1 | 2 | 3 |\n"
        );
    }

    #[test]
    fn tsv_uses_tabs() {
        let out = convert("k\tv\nalpha\t1, 2\n", b'\t', "text/tab-separated-values").unwrap();
        assert_eq!(out.text, "| k | v |\n| --- | --- |\n| alpha | 1, 2 |\n");
        assert_eq!(out.mime, "text/tab-separated-values");
    }

    #[test]
    fn rows_columns_and_cells_are_bounded() {
        let mut text = String::from("h\n");
        for i in 0..MAX_ROWS + 7 {
            text.push_str(&format!("{i}\n"));
        }
        let out = table(&text);
        assert!(out.ends_with("\n*7 more rows not shown.*\n"));
        assert_eq!(
            out.lines().filter(|l| l.starts_with('|')).count(),
            MAX_ROWS + 2
        );

        let wide = (0..80).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
        assert!(table(&wide).ends_with("*30 more columns not shown.*\n"));
        // Cells past the shown columns are counted, not kept.
        let row = "k,".repeat(400_000);
        let mut records = Records {
            text: row.as_bytes(),
            at: 0,
            delimiter: b',',
        };
        let (cells, fields) = records.next().unwrap().unwrap();
        assert_eq!((cells.len(), fields), (MAX_COLUMNS, 400_001));

        let long = format!("h\n{}\n", "y".repeat(10_000));
        assert!(table(&long).contains(&format!("| {}… |", "y".repeat(MAX_CELL))));
    }

    #[test]
    fn hostile_and_empty_input_fail_clearly() {
        let line = "z,".repeat(5 << 20);
        let err = convert(&line, b',', "text/csv").unwrap_err();
        assert!(err.to_string().contains("not a table"), "{err}");
        // An unterminated quote swallows the rest: still one bounded record, or the error.
        let open = format!("a\n\"{}", "q\n".repeat(1 << 20));
        assert!(convert(&open, b',', "text/csv").is_err());
        assert!(matches!(
            convert("\n\n", b',', "text/csv"),
            Err(FileError::Corrupt(_))
        ));
    }
}
