//! HTML → markdown conversion over scraper's (immutable) tree.
//!
//! The page is first flattened into a `dom::Dom` (document order, subtree =
//! index range) that the extractor measures and the renderer walks. Boilerplate
//! removal is a *skip* flag per node: the tree cannot be edited, so the walker
//! simply does not descend into elements marked skipped. Output is built block
//! by block (`Writer::blocks`) with a pending inline buffer, which keeps
//! blank-line handling in one place.

use scraper::ElementRef;
use url::Url;

use dom::Dom;
use render::Cx;
use trawl_text::collapse_whitespace;

pub(crate) mod dom;
mod helpers;
mod render;

/// Converts `element` (and everything below it) to markdown; elements for which `skip`
/// returns true are left out together with their subtree (the root itself is never tested).
pub fn to_markdown_with(
    element: ElementRef<'_>,
    base: Option<&Url>,
    skip: &dyn Fn(ElementRef<'_>) -> bool,
) -> String {
    let dom = Dom::new(element);
    let skipped: Vec<bool> = (0..dom.len())
        .map(|i| i > 0 && dom.element(i).is_some_and(skip))
        .collect();
    render(&dom, 0, base, &skipped)
}

/// Render node `root` of `dom`, leaving out every element marked in `skip` (one flag per
/// node of `dom`; the root itself is never tested).
pub(crate) fn render(dom: &Dom<'_>, root: usize, base: Option<&Url>, skip: &[bool]) -> String {
    let cx = Cx {
        dom,
        base,
        skip,
        last_link: Default::default(),
    };
    let mut w = Writer::default();
    cx.element(root, &mut w, 0);
    w.flush();
    finish(&w.blocks)
}

struct Block {
    text: String,
    /// Lists nest directly under an item's first line (no blank line).
    list: bool,
}

#[derive(Default)]
struct Writer {
    blocks: Vec<Block>,
    inline: String,
    /// Whitespace was seen before any inline text; lets `*em*` keep its outer spacing.
    lead_space: bool,
}

impl Writer {
    /// Append normal text, collapsing whitespace runs (incl. NBSP) to one space.
    fn text(&mut self, s: &str) {
        let mut words = s.split(char::is_whitespace);
        if let Some(first) = words.next() {
            self.word(first);
        }
        for word in words {
            if self.inline.is_empty() {
                self.lead_space = true;
            } else if !self.inline.ends_with([' ', '\n']) {
                self.inline.push(' ');
            }
            self.word(word);
        }
    }

    fn word(&mut self, word: &str) {
        // Zero-width spaces/BOMs are invisible padding that would leave "empty" lines.
        const INVISIBLE: [char; 2] = ['\u{200b}', '\u{feff}'];
        if word.contains(INVISIBLE) {
            self.inline
                .extend(word.chars().filter(|c| !INVISIBLE.contains(c)));
        } else {
            self.inline.push_str(word);
        }
    }

    fn line_break(&mut self) {
        let kept = self.inline.trim_end_matches(' ').len();
        self.inline.truncate(kept);
        if !self.inline.is_empty() && !self.inline.ends_with('\n') {
            self.inline.push('\n');
        }
    }

    fn flush(&mut self) {
        let text = self
            .inline
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("\n");
        self.inline.clear();
        if !text.is_empty() {
            self.blocks.push(Block { text, list: false });
        }
    }

    fn block(&mut self, text: String, list: bool) {
        self.flush();
        if !text.trim().is_empty() {
            self.blocks.push(Block { text, list });
        }
    }

    /// Everything this writer produced, flattened onto one line (headings, cells).
    fn one_line(self) -> String {
        let blocks = self.finished_blocks();
        collapse_whitespace(
            &blocks
                .iter()
                .map(|b| b.text.as_str())
                .collect::<Vec<_>>()
                .join(" "),
        )
    }

    fn finished_blocks(mut self) -> Vec<Block> {
        self.flush();
        self.blocks
    }
}

/// Join blocks with blank lines; trim trailing spaces and squeeze blank-line runs
/// everywhere except inside fenced code, which is kept byte for byte.
fn finish(blocks: &[Block]) -> String {
    let joined = blocks
        .iter()
        .map(|b| b.text.as_str())
        .collect::<Vec<_>>()
        .join("\n\n");
    let mut out = String::with_capacity(joined.len());
    let mut fence: Option<String> = None;
    let mut blank = false;
    for line in joined.lines() {
        let t = line.trim_start().trim_start_matches("> ").trim_start();
        let run: String = t.chars().take_while(|&c| c == '`').collect();
        if let Some(f) = &fence {
            if t.trim_end() == f.as_str() {
                fence = None;
            }
            out.push_str(line);
            out.push('\n');
            continue;
        }
        if run.len() >= 3 {
            fence = Some(run);
        }
        let line = line.trim_end();
        if line.is_empty() {
            if !blank && !out.is_empty() {
                out.push('\n');
            }
            blank = true;
            continue;
        }
        blank = false;
        out.push_str(line);
        out.push('\n');
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests;
