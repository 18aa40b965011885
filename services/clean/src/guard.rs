//! The technical-content guard of LLM cleaning. Models asked to remove boilerplate also remove
//! what looks like noise to them and is the point of a technical page: code, install commands,
//! tables. A cleaned page is kept only if it still has
//!
//! - every fenced code block of the original (compared by content, whitespace-insensitive;
//!   the language tag may change),
//! - every shell or install command (`$ …`, `pip install`, `npm i`, `cargo add` … on a line
//!   of its own or in an inline code span),
//! - as many tables and table rows,
//! - and at least [`MIN_CLEANED_CHARS`] characters.
//!
//! Otherwise the original stays and the reasons are recorded ("dropped 2 code blocks").

use crate::tables;
use trawl_text::collapse_whitespace;

/// A cleaned page shorter than this lost the article, not just its boilerplate.
pub(crate) const MIN_CLEANED_CHARS: usize = 200;

/// Starts of lines (or inline code spans) that are commands a reader would copy.
const COMMAND_PREFIXES: &[&str] = &[
    "$ ",
    "pip install ",
    "pip3 install ",
    "python -m pip ",
    "python3 -m pip ",
    "npm i ",
    "npm install",
    "npx ",
    "yarn add ",
    "pnpm add ",
    "cargo add ",
    "cargo install ",
    "go get ",
    "go install ",
    "gem install ",
    "apt install ",
    "apt-get install ",
    "sudo ",
    "brew install ",
    "conda install ",
    "docker run ",
    "docker pull ",
    "git clone ",
    "curl ",
    "wget ",
    "composer require ",
    "dotnet add ",
];

/// The technical content of a page that cleaning must keep.
#[derive(Debug, Default, PartialEq)]
pub struct Technical {
    /// Contents of fenced code blocks, whitespace collapsed.
    pub code: Vec<String>,
    /// Commands, whitespace collapsed, without a leading `$ `.
    pub commands: Vec<String>,
    pub tables: usize,
    pub rows: usize,
}

/// The command in `text`, if it is one.
fn command(text: &str) -> Option<String> {
    let t = text.trim();
    let t = t.trim_start_matches(['-', '*', '+', '>']).trim_start();
    let lower = t.to_lowercase();
    let hit = COMMAND_PREFIXES
        .iter()
        .any(|p| lower.starts_with(p) || lower == p.trim_end());
    let t = t.strip_prefix("$ ").unwrap_or(t);
    (hit && !t.trim().is_empty()).then(|| collapse_whitespace(t))
}

/// Contents of the inline code spans of a prose line.
fn spans(line: &str) -> impl Iterator<Item = &str> {
    line.split('`').skip(1).step_by(2)
}

pub fn technical(markdown: &str) -> Technical {
    let mut out = Technical::default();
    let mut block: Option<Vec<&str>> = None;
    for line in markdown.lines() {
        let t = line.trim();
        if t.starts_with("```") || t.starts_with("~~~") {
            match block.take() {
                Some(lines) => out.code.push(collapse_whitespace(&lines.join("\n"))),
                None => block = Some(Vec::new()),
            }
            continue;
        }
        out.commands.extend(command(line));
        match &mut block {
            Some(lines) => lines.push(line),
            None => out.commands.extend(spans(line).filter_map(command)),
        }
    }
    // An unclosed fence runs to the end, as markdown renders it.
    if let Some(lines) = block {
        out.code.push(collapse_whitespace(&lines.join("\n")));
    }
    let tables = tables::parse(markdown);
    out.tables = tables.len();
    out.rows = tables::row_count(&tables);
    out
}

/// One way a cleaned page lost content of the original.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Loss {
    /// How many of a kind (`code block`, `shell command`, `table`, `table row`) went missing.
    #[error("dropped {0} {1}{s}", s = if *.0 == 1 { "" } else { "s" })]
    Dropped(usize, &'static str),
    /// The cleaned text's length, in characters, under [`MIN_CLEANED_CHARS`].
    #[error("cleaned text too short ({0} characters)")]
    TooShort(usize),
}

/// Why a cleaned page was refused: every [`Loss`], in the order checked.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{}", .0.iter().map(Loss::to_string).collect::<Vec<_>>().join("; "))]
pub struct LostContent(pub Vec<Loss>);

/// `Ok` when `cleaned` keeps the technical content of `original`; else every reason.
pub fn check(original: &str, cleaned: &str) -> Result<(), LostContent> {
    let before = technical(original);
    let after = technical(cleaned);
    let mut problems = Vec::new();
    let mut dropped = |n: usize, what: &'static str| {
        if n > 0 {
            problems.push(Loss::Dropped(n, what));
        }
    };

    let mut kept = after.code;
    let mut lost_code = 0;
    for block in &before.code {
        match kept.iter().position(|k| k == block) {
            Some(i) => {
                kept.swap_remove(i);
            }
            None => lost_code += 1,
        }
    }
    dropped(lost_code, "code block");

    let text = collapse_whitespace(cleaned);
    let lost = before
        .commands
        .iter()
        .filter(|c| !text.contains(c.as_str()))
        .count();
    dropped(lost, "shell command");
    if after.tables < before.tables {
        dropped(before.tables - after.tables, "table");
    } else {
        dropped(before.rows.saturating_sub(after.rows), "table row");
    }
    let chars = cleaned.trim().chars().count();
    if chars < MIN_CLEANED_CHARS {
        problems.push(Loss::TooShort(chars));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(LostContent(problems))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = "# Installing Frell\n\nCookie settings | Accept all\n\nInstall it with `pip install frell` or from source:\n\n```bash\ngit clone http://frell.test/frell.git\ncd frell && make\n```\n\n$ frell --version\n\n| Option | Default |\n|---|---|\n| port | 4410 |\n| timeout | 30 s |\n\nThe Frell client talks to the server over port 4410 and retries three times before it gives up on a request.\n";

    fn without(page: &str, drop: &[&str]) -> String {
        page.lines()
            .filter(|l| !drop.iter().any(|d| l.contains(d)))
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn finds_code_commands_and_tables() {
        let t = technical(PAGE);
        assert_eq!(
            t.code,
            vec!["git clone http://frell.test/frell.git cd frell && make"]
        );
        assert_eq!(
            t.commands,
            vec![
                "pip install frell",
                "git clone http://frell.test/frell.git",
                "frell --version"
            ]
        );
        assert_eq!((t.tables, t.rows), (1, 2));
    }

    #[test]
    fn removing_boilerplate_passes() {
        assert_eq!(check(PAGE, &without(PAGE, &["Cookie"])), Ok(()));
        // Re-indented code and a new language tag are the same code.
        let retagged = PAGE
            .replace("```bash", "```sh")
            .replace("cd frell", "  cd   frell");
        assert_eq!(check(PAGE, &retagged), Ok(()));
    }

    #[test]
    fn losing_code_commands_or_rows_fails_with_reasons() {
        let no_code = without(PAGE, &["```", "git clone", "make"]);
        let why = check(PAGE, &no_code).unwrap_err().to_string();
        assert!(why.contains("dropped 1 code block"), "{why}");
        assert!(why.contains("dropped 1 shell command"), "{why}");

        let no_pip = PAGE.replace("Install it with `pip install frell` or", "Install it");
        let why = check(PAGE, &no_pip).unwrap_err();
        assert_eq!(why.to_string(), "dropped 1 shell command");
        let no_row = without(PAGE, &["timeout"]);
        let why = check(PAGE, &no_row).unwrap_err();
        assert_eq!(why.to_string(), "dropped 1 table row");
        let no_table = without(PAGE, &["|"]);
        assert!(check(PAGE, &no_table)
            .unwrap_err()
            .to_string()
            .contains("dropped 1 table"));
    }

    #[test]
    fn a_short_result_fails() {
        let prose = "Frell is a protocol. ".repeat(20);
        let why = check(&prose, "# Installing Frell\n\nIt installs.").unwrap_err();
        assert_eq!(why, LostContent(vec![Loss::TooShort(32)]));
        assert_eq!(why.to_string(), "cleaned text too short (32 characters)");
    }
}
