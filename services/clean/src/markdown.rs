//! HTML → markdown conversion over scraper's (immutable) tree.
//!
//! Boilerplate removal is expressed as a *skip predicate*: the tree cannot be
//! edited, so the walker simply does not descend into elements the predicate
//! rejects. Output is built block by block (`Writer::blocks`) with a pending
//! inline buffer, which keeps blank-line handling in one place.

use scraper::{ElementRef, Node};
use url::Url;

/// Deeper than this we stop interpreting markup and only keep text, so that
/// pathological nesting cannot overflow the stack of a worker thread.
const MAX_DEPTH: usize = 200;

/// Convert `element` (and everything below it) to markdown.
pub fn to_markdown(element: ElementRef<'_>, base: Option<&Url>) -> String {
    to_markdown_with(element, base, &|_| false)
}

/// Like [`to_markdown`], but elements for which `skip` returns true are left
/// out together with their subtree (the root itself is never tested).
pub fn to_markdown_with(
    element: ElementRef<'_>,
    base: Option<&Url>,
    skip: &dyn Fn(ElementRef<'_>) -> bool,
) -> String {
    let cx = Cx { base, skip };
    let mut w = Writer::default();
    cx.element(element, &mut w, 0);
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
        // Zero-width spaces/BOMs are invisible padding that would leave "empty" lines.
        for c in s.chars().filter(|c| !matches!(c, '\u{200b}' | '\u{feff}')) {
            if c.is_whitespace() {
                if self.inline.is_empty() {
                    self.lead_space = true;
                } else if !self.inline.ends_with([' ', '\n']) {
                    self.inline.push(' ');
                }
            } else {
                self.inline.push(c);
            }
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
        collapse(
            &blocks
                .iter()
                .map(|b| b.text.as_str())
                .collect::<Vec<_>>()
                .join(" "),
        )
    }
}

struct Cx<'s> {
    base: Option<&'s Url>,
    skip: &'s dyn Fn(ElementRef<'_>) -> bool,
}

impl Cx<'_> {
    fn children(&self, el: ElementRef<'_>, w: &mut Writer, depth: usize) {
        for child in el.children() {
            match child.value() {
                Node::Text(t) => w.text(t),
                Node::Element(_) => {
                    let e = ElementRef::wrap(child).expect("element node");
                    if !(self.skip)(e) {
                        self.element(e, w, depth + 1);
                    }
                }
                _ => {}
            }
        }
    }

    /// Render children into a fresh writer (for constructs that post-process their content).
    fn sub(&self, el: ElementRef<'_>, depth: usize) -> Writer {
        let mut w = Writer::default();
        self.children(el, &mut w, depth);
        w
    }

    fn element(&self, e: ElementRef<'_>, w: &mut Writer, depth: usize) {
        if depth > MAX_DEPTH {
            e.text().for_each(|t| w.text(t));
            return;
        }
        let name = e.value().name();
        match name {
            "script" | "style" | "noscript" | "template" | "svg" | "math" | "canvas" | "head"
            | "iframe" | "object" | "embed" | "video" | "audio" | "img" | "picture" | "input"
            | "select" | "textarea" | "button" | "map" => {}
            "br" => w.line_break(),
            "hr" => w.block("---".into(), false),
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                let text = self.sub(e, depth).one_line();
                if !text.is_empty() {
                    let level = usize::from(name.as_bytes()[1] - b'0');
                    w.block(format!("{} {text}", "#".repeat(level)), false);
                }
            }
            "pre" => w.block(self.pre(e), false),
            "ul" | "ol" => w.block(self.list(e, depth), true),
            "blockquote" => {
                let inner = finish(&self.sub(e, depth).finished_blocks());
                let quoted = inner.lines().map(|l| {
                    if l.is_empty() {
                        ">".to_string()
                    } else {
                        format!("> {l}")
                    }
                });
                w.block(quoted.collect::<Vec<_>>().join("\n"), false);
            }
            "table" => self.table(e, w, depth),
            "code" | "kbd" | "samp" | "tt" => {
                let text = collapse(&e.text().collect::<String>());
                let ticks = "`".repeat(longest_run(&text, '`') + 1);
                let pad = if text.starts_with('`') || text.ends_with('`') {
                    " "
                } else {
                    ""
                };
                self.wrap_inline(
                    w,
                    Writer {
                        inline: format!("{ticks}{pad}{text}{pad}{ticks}"),
                        ..Default::default()
                    },
                    |s| s,
                );
            }
            "em" | "i" | "cite" | "dfn" => {
                self.wrap_inline(w, self.sub(e, depth), |s| format!("*{s}*"))
            }
            "strong" | "b" => self.wrap_inline(w, self.sub(e, depth), |s| format!("**{s}**")),
            "a" => {
                let href = e.attr("href").and_then(|h| self.link_target(h));
                let sub = self.sub(e, depth);
                match href {
                    Some(url) => self.wrap_inline(w, sub, |s| {
                        format!("[{}]({url})", s.replace('[', "\\[").replace(']', "\\]"))
                    }),
                    None => self.wrap_inline(w, sub, |s| s),
                }
            }
            _ if BLOCK_TAGS.contains(&name) => {
                w.flush();
                self.children(e, w, depth);
                w.flush();
            }
            _ => self.children(e, w, depth),
        }
    }

    /// Splice an inline element's rendering into `w`, decorating its text with `f`
    /// unless it is empty (empty emphasis/links are dropped, spacing kept).
    fn wrap_inline(&self, w: &mut Writer, mut sub: Writer, f: impl FnOnce(String) -> String) {
        if sub.lead_space {
            w.text(" ");
        }
        if !sub.blocks.is_empty() {
            // Block content inside an inline element (e.g. a card link): no decoration.
            w.flush();
            w.blocks.append(&mut sub.blocks);
            w.text(&sub.inline);
            return;
        }
        let core = sub.inline.trim();
        if !core.is_empty() {
            w.inline.push_str(&f(core.to_string()));
        }
        if sub.inline.ends_with([' ', '\n']) {
            w.text(" ");
        }
    }

    /// Absolute link target, or None for links that should keep only their text.
    fn link_target(&self, href: &str) -> Option<String> {
        let href = href.trim();
        if href.is_empty()
            || href.starts_with('#')
            || href.to_ascii_lowercase().starts_with("javascript:")
        {
            return None;
        }
        let url = match self.base {
            Some(b) => b.join(href).ok()?.to_string(),
            None => Url::parse(href)
                .map(|u| u.to_string())
                .unwrap_or_else(|_| href.to_string()),
        };
        Some(
            url.replace(' ', "%20")
                .replace('(', "%28")
                .replace(')', "%29"),
        )
    }

    fn pre(&self, e: ElementRef<'_>) -> String {
        let mut code = String::new();
        self.raw_text(e, &mut code);
        let code = code.trim_start_matches(['\n', '\r']).trim_end();
        if code.is_empty() {
            return String::new();
        }
        let code_child = e.child_elements().find(|c| c.value().name() == "code");
        let lang = code_lang(e)
            .or_else(|| code_child.and_then(code_lang))
            .unwrap_or_default();
        let fence = "`".repeat(longest_run(code, '`').max(2) + 1);
        format!("{fence}{lang}\n{code}\n{fence}")
    }

    /// Text below a <pre>, whitespace untouched; <br> becomes a newline.
    fn raw_text(&self, e: ElementRef<'_>, out: &mut String) {
        for child in e.children() {
            match child.value() {
                Node::Text(t) => out.push_str(t),
                Node::Element(el) if el.name() == "br" => out.push('\n'),
                Node::Element(_) => {
                    let c = ElementRef::wrap(child).expect("element node");
                    if !(self.skip)(c) {
                        self.raw_text(c, out);
                    }
                }
                _ => {}
            }
        }
    }

    fn list(&self, e: ElementRef<'_>, depth: usize) -> String {
        let ordered = e.value().name() == "ol";
        let mut n: usize = e
            .attr("start")
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(1);
        let mut items: Vec<String> = Vec::new();
        for child in e.child_elements().filter(|c| !(self.skip)(*c)) {
            let cname = child.value().name();
            if matches!(cname, "ul" | "ol") {
                // Invalid but common: a nested list directly inside the list; hang it under the last item.
                let nested = self.list(child, depth + 1);
                match items.last_mut() {
                    Some(last) if !nested.is_empty() => {
                        last.push_str(&format!("\n{}", indent(&nested, 2)))
                    }
                    _ => items.push(nested),
                }
                continue;
            }
            let sub = if cname == "li" {
                self.sub(child, depth + 1)
            } else {
                single(self, child, depth + 1)
            };
            let blocks = sub.finished_blocks();
            let mut body = String::new();
            for (i, b) in blocks.iter().enumerate() {
                if i > 0 {
                    body.push_str(if b.list { "\n" } else { "\n\n" });
                }
                body.push_str(&b.text);
            }
            if body.trim().is_empty() {
                continue;
            }
            let marker = if ordered {
                format!("{n}. ")
            } else {
                "- ".to_string()
            };
            n += 1;
            items.push(format!(
                "{marker}{}",
                indent(&body, marker.len()).trim_start()
            ));
        }
        items.join("\n")
    }

    fn table(&self, e: ElementRef<'_>, w: &mut Writer, depth: usize) {
        let sections = e
            .child_elements()
            .filter(|c| matches!(c.value().name(), "thead" | "tbody" | "tfoot"));
        let rows: Vec<ElementRef<'_>> = std::iter::once(e)
            .chain(sections)
            .flat_map(|s| s.child_elements().filter(|r| r.value().name() == "tr"))
            .filter(|r| !(self.skip)(*r))
            .collect();
        let cells = |r: &ElementRef<'_>| {
            r.child_elements()
                .filter(|c| matches!(c.value().name(), "td" | "th"))
                .count()
        };
        let cols = rows.iter().map(cells).max().unwrap_or(0);
        let nested = e
            .descendent_elements()
            .skip(1)
            .any(|d| d.value().name() == "table");
        if cols < 2 || nested {
            // Layout table: its cells are just page regions.
            w.flush();
            self.children(e, w, depth);
            w.flush();
            return;
        }
        let mut out = Vec::new();
        if let Some(cap) = e.child_elements().find(|c| c.value().name() == "caption") {
            out.push(self.sub(cap, depth).one_line());
            out.push(String::new());
        }
        for (i, row) in rows.iter().enumerate() {
            let mut line: Vec<String> = row
                .child_elements()
                .filter(|c| matches!(c.value().name(), "td" | "th"))
                .map(|c| {
                    if (self.skip)(c) {
                        String::new()
                    } else {
                        self.sub(c, depth + 1).one_line().replace('|', "\\|")
                    }
                })
                .collect();
            line.resize(cols, String::new());
            out.push(format!("| {} |", line.join(" | ")));
            if i == 0 {
                out.push(format!("|{}", " --- |".repeat(cols)));
            }
        }
        w.block(out.join("\n"), false);
    }
}

/// Render one non-<li> child of a list as if it were an item.
fn single(cx: &Cx<'_>, e: ElementRef<'_>, depth: usize) -> Writer {
    let mut w = Writer::default();
    cx.element(e, &mut w, depth);
    w
}

impl Writer {
    fn finished_blocks(mut self) -> Vec<Block> {
        self.flush();
        self.blocks
    }
}

/// Elements that start and end a paragraph (those with special rendering are matched earlier).
const BLOCK_TAGS: &[&str] = &[
    "p",
    "div",
    "section",
    "article",
    "main",
    "header",
    "footer",
    "aside",
    "nav",
    "figure",
    "figcaption",
    "address",
    "details",
    "summary",
    "dl",
    "dt",
    "dd",
    "center",
    "hgroup",
    "form",
    "fieldset",
    "body",
    "html",
    "li",
    "tr",
    "td",
    "th",
    "caption",
    "legend",
    "option",
];

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Language from `language-xxx` / `lang-xxx` / `highlight-xxx` classes.
fn code_lang(e: ElementRef<'_>) -> Option<String> {
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

fn longest_run(s: &str, ch: char) -> usize {
    s.split(|c| c != ch).map(str::len).max().unwrap_or(0)
}

fn indent(s: &str, n: usize) -> String {
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
mod tests {
    use super::*;
    use scraper::Html;

    fn md(html: &str) -> String {
        let base = Url::parse("https://example.com/docs/guide/page.html").unwrap();
        to_markdown(Html::parse_fragment(html).root_element(), Some(&base))
    }

    #[test]
    fn code_block_keeps_language_and_whitespace() {
        let code = "fn main() {\n    let x = 1;\n\n\tprintln!(\"{x}  \");\n}";
        let out = md(&format!(
            r#"<pre class="language-rust"><code>{code}</code></pre>"#
        ));
        assert_eq!(out, format!("```rust\n{code}\n```"));
        let out = md(r#"<pre><code class="lang-py"><span>if</span> x:
    <b>pass</b></code></pre>"#);
        assert_eq!(out, "```py\nif x:\n    pass\n```");
    }

    #[test]
    fn table_becomes_gfm() {
        let out = md(
            "<table><thead><tr><th>Name</th><th>Value</th></tr></thead><tbody>\
            <tr><td>a|b</td><td>1<br>\n 2</td></tr><tr><td>c</td></tr></tbody></table>",
        );
        assert_eq!(
            out,
            "| Name | Value |\n| --- | --- |\n| a\\|b | 1 2 |\n| c |  |"
        );
    }

    #[test]
    fn nested_lists_are_indented() {
        let out = md("<ul><li>one<ul><li>two</li></ul></li><li>three</li></ul>\
            <ol><li>a</li><li>b<ol><li>c</li></ol></li></ol>");
        assert_eq!(out, "- one\n  - two\n- three\n\n1. a\n2. b\n   1. c");
    }

    #[test]
    fn links_are_absolute_and_empty_ones_dropped() {
        let out = md(
            r#"<p>See <a href="../api/x.html?q=1#top">the API</a>, <a href="/y"> </a>
            <a href="javascript:void(0)">click</a> and <a href="https://o.org/a b">o</a>.</p>"#,
        );
        assert_eq!(
            out,
            "See [the API](https://example.com/docs/api/x.html?q=1#top), click and [o](https://o.org/a%20b)."
        );
    }

    #[test]
    fn entities_decoded_and_whitespace_collapsed() {
        let out = md("<p>  Fish &amp; chips\n\n &lt;3 &eacute;t&eacute;&nbsp;&nbsp;x \t</p><p> </p><div><p>d</p></div>");
        assert_eq!(out, "Fish & chips <3 été x\n\nd");
    }

    #[test]
    fn inline_and_block_formatting() {
        let out = md(
            "<h2>Sub <em>title</em></h2><p>Some<strong> bold </strong>and <i>it</i> \
            with <code>x()</code>.<br>next line</p><blockquote><p>q1</p><p>q2</p></blockquote><hr>",
        );
        assert_eq!(out, "## Sub *title*\n\nSome **bold** and *it* with `x()`.\nnext line\n\n> q1\n>\n> q2\n\n---");
    }

    #[test]
    fn skip_predicate_removes_subtrees() {
        let frag = Html::parse_fragment("<p>keep</p><div class=ad><p>drop</p></div>");
        let skip = |e: ElementRef<'_>| {
            e.value()
                .has_class("ad", scraper::CaseSensitivity::CaseSensitive)
        };
        assert_eq!(to_markdown_with(frag.root_element(), None, &skip), "keep");
    }
}
