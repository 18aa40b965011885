//! Small helpers shared by the writer and the element renderer: whitespace, indentation,
//! backtick runs and code-block languages.

use scraper::ElementRef;

/// Language from `language-xxx` / `lang-xxx` / `highlight-xxx` classes.
pub(super) fn code_lang(e: ElementRef<'_>) -> Option<String> {
    e.value().classes().find_map(|c| {
        ["language-", "lang-", "highlight-"]
            .iter()
            .find_map(|p| c.strip_prefix(p))
            .filter(|l| {
                !l.is_empty()
                    && l.chars()
                        .all(|ch| ch.is_ascii_alphanumeric() || "+#-_.".contains(ch))
            })
            .map(str::to_string)
    })
}

pub(super) fn longest_run(s: &str, ch: char) -> usize {
    s.split(|c| c != ch).map(str::len).max().unwrap_or(0)
}

pub(super) fn indent(s: &str, n: usize) -> String {
    let pad = " ".repeat(n);
    s.lines()
        .map(|l| {
            if l.is_empty() {
                String::new()
            } else {
                format!("{pad}{l}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}
