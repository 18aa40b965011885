//! Element rendering: the walker that turns each element of the tree into
//! [`Writer`] output (headings, lists, tables, code, links, inline emphasis).

use scraper::{ElementRef, Node};
use url::Url;

use super::helpers::{code_lang, collapse, indent, longest_run};
use super::{finish, Writer};

/// Deeper than this we stop interpreting markup and only keep text, so that
/// pathological nesting cannot overflow the stack of a worker thread.
const MAX_DEPTH: usize = 200;

pub(super) struct Cx<'s> {
    pub(super) base: Option<&'s Url>,
    pub(super) skip: &'s dyn Fn(ElementRef<'_>) -> bool,
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

    pub(super) fn element(&self, e: ElementRef<'_>, w: &mut Writer, depth: usize) {
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
            // A heading's permalink (`¶`, `#`, `§` …) is navigation, not content.
            "a" if e.attr("href").is_some_and(|h| h.starts_with('#'))
                && is_permalink_mark(&e.text().collect::<String>()) => {}
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
        // Generators put the language on the <pre>, its <code>, or a wrapper or two above
        // (Sphinx: `<div class="highlight-bash"><div class="highlight"><pre>`).
        let lang = code_lang(e)
            .or_else(|| code_child.and_then(code_lang))
            .or_else(|| e.ancestors().take(2).filter_map(ElementRef::wrap).find_map(code_lang))
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

fn is_permalink_mark(text: &str) -> bool {
    matches!(text.trim(), "¶" | "#" | "§" | "🔗" | "⚓" | "¤")
}
