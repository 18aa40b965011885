//! GFM tables of a source's markdown as structured rows, so data points and "table" questions
//! can read cells instead of prose.
//!
//! A table is a header line of `|`-separated cells, a delimiter line (`---`, `:--`, `--:`,
//! `:-:` per cell) and the body lines that follow until a line without a `|`. Leading and
//! trailing pipes are optional, `\|` is a literal pipe, and lines inside fenced code are never
//! tables. Cells keep their text with inline markup (`**`, backticks, links) reduced to text.

use trawl_messages::Table;
use trawl_text::strip_links;

/// Every GFM table in `markdown`, in document order.
pub fn parse(markdown: &str) -> Vec<Table> {
    let lines: Vec<&str> = markdown.lines().collect();
    let mut out = Vec::new();
    let mut in_code = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim();
        if line.starts_with("```") || line.starts_with("~~~") {
            in_code = !in_code;
            i += 1;
            continue;
        }
        if in_code || !line.contains('|') || i + 1 >= lines.len() {
            i += 1;
            continue;
        }
        let headers = cells(line);
        if !is_delimiter(lines[i + 1].trim(), headers.len()) {
            i += 1;
            continue;
        }
        let mut rows = Vec::new();
        i += 2;
        while i < lines.len() {
            let row = lines[i].trim();
            if row.is_empty() || !row.contains('|') || row.starts_with("```") {
                break;
            }
            rows.push(cells(row));
            i += 1;
        }
        out.push(Table { headers, rows });
    }
    out
}

/// Cells of one table line.
fn cells(line: &str) -> Vec<String> {
    let line = line.strip_prefix('|').unwrap_or(line);
    let line = match line.strip_suffix('|') {
        Some(rest) if !rest.ends_with('\\') => rest,
        _ => line,
    };
    let mut out = Vec::new();
    let mut cell = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cell.push('|');
                chars.next();
            }
            '|' => out.push(plain(&std::mem::take(&mut cell))),
            _ => cell.push(c),
        }
    }
    out.push(plain(&cell));
    out
}

/// Cell text without inline markup: links to their text, `**`/`__`/backticks dropped.
fn plain(cell: &str) -> String {
    strip_links(cell.trim()).replace("__", "")
}

/// Whether `line` is a delimiter row for a header of `columns` cells.
fn is_delimiter(line: &str, columns: usize) -> bool {
    if !line.contains('-') {
        return false;
    }
    let parts = cells(line);
    // GFM requires the delimiter row to match the header's cell count.
    parts.len() == columns
        && parts.iter().all(|p| {
            let p = p.trim();
            let core = p.trim_start_matches(':').trim_end_matches(':');
            !core.is_empty() && core.chars().all(|c| c == '-')
        })
}

/// Body rows of all `tables`; the cleaning guard compares it before and after.
pub(crate) fn row_count(tables: &[Table]) -> usize {
    tables.iter().map(|t| t.rows.len()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_headers_rows_and_inline_markup() {
        let md = "Intro text.\n\n| Metal | Melting point |\n|:------|------:|\n| **Zorbium** | 1,284 °C |\n| [Kelvar](http://k.test) | 990 °C |\n\nAfter.";
        let t = parse(md);
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].headers, vec!["Metal", "Melting point"]);
        assert_eq!(
            t[0].rows,
            vec![vec!["Zorbium", "1,284 °C"], vec!["Kelvar", "990 °C"]]
        );
    }

    #[test]
    fn optional_outer_pipes_and_escaped_pipes() {
        let md = "a | b\n--- | ---\nx \\| y | z\n";
        let t = parse(md);
        assert_eq!(t[0].headers, vec!["a", "b"]);
        assert_eq!(t[0].rows, vec![vec!["x | y", "z"]]);
    }

    #[test]
    fn code_and_mismatched_delimiters_are_not_tables() {
        let md = "```\n| a | b |\n|---|---|\n| 1 | 2 |\n```\n\n| a | b |\n|---|\n| 1 | 2 |\n";
        assert!(parse(md).is_empty());
        let two = "| a |\n|---|\n| 1 |\n\ntext\n\n| b |\n| --- |\n| 2 |\n| 3 |\n";
        let t = parse(two);
        assert_eq!(t.len(), 2);
        assert_eq!(row_count(&t), 3);
    }
}
