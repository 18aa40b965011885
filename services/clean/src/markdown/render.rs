//! Element rendering: the walker that turns each element of the tree into
//! [`Writer`] output (headings, lists, tables, code, links, inline emphasis).

use std::cell::RefCell;

use scraper::ElementRef;
use url::Url;

use super::dom::{Dom, Tag};
use super::helpers::{code_lang, indent, longest_run};
use super::{finish, Writer};
use trawl_text::collapse_whitespace;

/// Deeper than this we stop interpreting markup and only keep text, so that
/// pathological nesting cannot overflow the stack of a worker thread.
const MAX_DEPTH: usize = 200;

/// Lists and block quotes nested deeper than this keep their text but add no marker, indent
/// or `> ` of their own. Each level prefixes every line below it, so a few hundred levels
/// around a few thousand lines made hundreds of times more markdown than the page had HTML.
const MAX_NESTED_BLOCKS: usize = 6;

/// An ordered list's `start` is used below this: CommonMark reads at most nine digits as a
/// list marker, and a longer number in a marker is padded onto every line of the item.
const MAX_LIST_START: u64 = 1_000_000_000;

/// Link targets longer than this are left out (the link's text stays). Each relative link
/// repeats the whole `<base href>`, so a long base made every short link on the page long.
const MAX_LINK_TARGET: usize = 512;

pub(super) struct Cx<'s, 'a> {
    pub(super) dom: &'s Dom<'a>,
    pub(super) base: Option<&'s Url>,
    /// Per node of `dom`: leave this element and its subtree out.
    pub(super) skip: &'s [bool],
    /// The last link target written. The parser re-opens an unclosed `<a>` in every
    /// paragraph that follows it (HTML's "reconstruct the active formatting elements"), so one
    /// long href became one link per paragraph; a repeat of the last target keeps its text only.
    pub(super) last_link: RefCell<String>,
}

impl Cx<'_, '_> {
    fn children(&self, el: usize, w: &mut Writer, depth: usize) {
        for child in self.dom.children(el) {
            match self.dom.text(child) {
                Some(t) => w.text(t),
                None if !self.skip[child] => self.element(child, w, depth + 1),
                None => {}
            }
        }
    }

    /// Children as a block of their own: a paragraph break before and after.
    fn block_children(&self, el: usize, w: &mut Writer, depth: usize) {
        w.flush();
        self.children(el, w, depth);
        w.flush();
    }

    /// Render children into a fresh writer (for constructs that post-process their content).
    fn sub(&self, el: usize, depth: usize) -> Writer {
        let mut w = Writer::default();
        self.children(el, &mut w, depth);
        w
    }

    /// The text below `e` that is not skipped, in one loop instead of a descent.
    fn flat_text(&self, e: usize, w: &mut Writer) {
        let mut j = e + 1;
        while j < self.dom.end(e) {
            match self.dom.text(j) {
                Some(t) => {
                    w.text(t);
                    j += 1;
                }
                None if self.skip[j] || is_invisible(self.dom.tag(j)) => j = self.dom.end(j),
                None => j += 1,
            }
        }
    }

    pub(super) fn element(&self, e: usize, w: &mut Writer, depth: usize) {
        let tag = self.dom.tag(e);
        if is_invisible(tag) {
            return;
        }
        if depth > MAX_DEPTH {
            self.flat_text(e, w);
            return;
        }
        match tag {
            Tag::Ul | Tag::Ol | Tag::Blockquote if self.nested_blocks(e) >= MAX_NESTED_BLOCKS => {
                self.block_children(e, w, depth)
            }
            Tag::Br => w.line_break(),
            Tag::Hr => w.block("---".into(), false),
            Tag::H1 | Tag::H2 | Tag::H3 | Tag::H4 | Tag::H5 | Tag::H6 => {
                let text = self.sub(e, depth).one_line();
                if !text.is_empty() {
                    let level = tag.heading_level();
                    w.block(format!("{} {text}", "#".repeat(level)), false);
                }
            }
            Tag::Pre => w.block(self.pre(e), false),
            Tag::Ul | Tag::Ol => w.block(self.list(e, depth), true),
            Tag::Blockquote => self.blockquote(e, w, depth),
            Tag::Table => self.table(e, w, depth),
            Tag::Code | Tag::Kbd | Tag::Samp | Tag::Tt => self.code(e, w),
            Tag::Em | Tag::I | Tag::Cite | Tag::Dfn => {
                self.wrap_inline(w, self.sub(e, depth), |s| format!("*{s}*"))
            }
            Tag::Strong | Tag::B => self.wrap_inline(w, self.sub(e, depth), |s| format!("**{s}**")),
            Tag::A => self.link(e, w, depth),
            _ if is_block(tag) => self.block_children(e, w, depth),
            _ => self.children(e, w, depth),
        }
    }

    /// `e`'s blocks, each line behind `> `.
    fn blockquote(&self, e: usize, w: &mut Writer, depth: usize) {
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

    /// Inline code in enough backticks that none inside it ends it.
    fn code(&self, e: usize, w: &mut Writer) {
        let text = collapse_whitespace(&self.dom.text_of(e));
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

    /// A link: its text in brackets and its absolute target, or its text alone where the target
    /// is left out; a heading's permalink is left out entirely.
    fn link(&self, e: usize, w: &mut Writer, depth: usize) {
        let raw = self.dom.attr(e, "href");
        // A heading's permalink (`¶`, `#`, `§` …) is navigation, not content.
        if raw.is_some_and(|h| h.starts_with('#')) && is_permalink_mark(&self.dom.text_of(e)) {
            return;
        }
        let href = raw
            .and_then(|h| self.link_target(h))
            .filter(|t| t.len() <= MAX_LINK_TARGET && *t != *self.last_link.borrow());
        if let Some(t) = &href {
            self.last_link.replace(t.clone());
        }
        let sub = self.sub(e, depth);
        match href {
            Some(url) => self.wrap_inline(w, sub, |s| {
                format!("[{}]({url})", s.replace('[', "\\[").replace(']', "\\]"))
            }),
            None => self.wrap_inline(w, sub, |s| s),
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

    /// Lists and block quotes around `e`.
    fn nested_blocks(&self, e: usize) -> usize {
        self.dom
            .ancestors(e)
            .filter(|&a| matches!(self.dom.tag(a), Tag::Ul | Tag::Ol | Tag::Blockquote))
            .count()
    }

    /// Absolute link target, or None for links that should keep only their text.
    fn link_target(&self, href: &str) -> Option<String> {
        let href = href.trim();
        if href.is_empty()
            || href.starts_with('#')
            || href
                .get(..11)
                .is_some_and(|s| s.eq_ignore_ascii_case("javascript:"))
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

    fn pre(&self, e: usize) -> String {
        let mut code = String::new();
        self.raw_text(e, &mut code);
        let code = code.trim_start_matches(['\n', '\r']).trim_end();
        if code.is_empty() {
            return String::new();
        }
        let element = |i: usize| self.dom.element(i).expect("an element");
        let code_child = self
            .dom
            .child_elements(e)
            .find(|&c| self.dom.tag(c) == Tag::Code);
        // Generators put the language on the <pre>, its <code>, or a wrapper or two above
        // (Sphinx: `<div class="highlight-bash"><div class="highlight"><pre>`).
        let lang = code_lang(element(e))
            .or_else(|| code_child.and_then(|c| code_lang(element(c))))
            .or_else(|| {
                element(e)
                    .ancestors()
                    .take(2)
                    .filter_map(ElementRef::wrap)
                    .find_map(code_lang)
            })
            .unwrap_or_default();
        let fence = "`".repeat(longest_run(code, '`').max(2) + 1);
        format!("{fence}{lang}\n{code}\n{fence}")
    }

    /// Text below a <pre>, whitespace untouched; <br> becomes a newline. A loop over the
    /// subtree's range, so deep markup inside code costs no stack.
    fn raw_text(&self, e: usize, out: &mut String) {
        let mut j = e + 1;
        while j < self.dom.end(e) {
            match self.dom.text(j) {
                Some(t) => out.push_str(t),
                None if self.dom.tag(j) == Tag::Br => out.push('\n'),
                None if self.skip[j] => {
                    j = self.dom.end(j);
                    continue;
                }
                None => {}
            }
            j += 1;
        }
    }

    fn list(&self, e: usize, depth: usize) -> String {
        let ordered = self.dom.tag(e) == Tag::Ol;
        let mut n: u64 = self
            .dom
            .attr(e, "start")
            .and_then(|s| s.trim().parse().ok())
            .filter(|&n| n < MAX_LIST_START)
            .unwrap_or(1);
        let mut items: Vec<String> = Vec::new();
        for child in self.dom.child_elements(e).filter(|&c| !self.skip[c]) {
            let ctag = self.dom.tag(child);
            if matches!(ctag, Tag::Ul | Tag::Ol) && self.nested_blocks(child) < MAX_NESTED_BLOCKS {
                // Invalid but common: a nested list directly inside the list; hang it under the last item.
                let nested = self.list(child, depth + 1);
                match items.last_mut() {
                    Some(last) if !nested.is_empty() => {
                        last.push('\n');
                        last.push_str(&indent(&nested, 2));
                    }
                    _ => items.push(nested),
                }
                continue;
            }
            let sub = if ctag == Tag::Li {
                self.sub(child, depth + 1)
            } else {
                let mut w = Writer::default();
                self.element(child, &mut w, depth + 1);
                w
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

    fn table(&self, e: usize, w: &mut Writer, depth: usize) {
        let dom = self.dom;
        let sections = dom
            .child_elements(e)
            .filter(|&c| matches!(dom.tag(c), Tag::Thead | Tag::Tbody | Tag::Tfoot));
        let rows: Vec<usize> = std::iter::once(e)
            .chain(sections)
            .flat_map(|s| dom.child_elements(s).filter(|&r| dom.tag(r) == Tag::Tr))
            .filter(|&r| !self.skip[r])
            .collect();
        let cells = |r: usize| {
            dom.child_elements(r)
                .filter(|&c| matches!(dom.tag(c), Tag::Td | Tag::Th))
        };
        let cols = rows.iter().map(|&r| cells(r).count()).max().unwrap_or(0);
        let nested = (e + 1..dom.end(e)).any(|d| dom.tag(d) == Tag::Table);
        if cols < 2 || nested {
            // Layout table: its cells are just page regions.
            return self.block_children(e, w, depth);
        }
        let mut out = Vec::new();
        if let Some(cap) = dom.child_elements(e).find(|&c| dom.tag(c) == Tag::Caption) {
            out.push(self.sub(cap, depth).one_line());
            out.push(String::new());
        }
        for (i, &row) in rows.iter().enumerate() {
            let mut line: Vec<String> = cells(row)
                .map(|c| {
                    if self.skip[c] {
                        String::new()
                    } else {
                        self.sub(c, depth + 1).one_line().replace('|', "\\|")
                    }
                })
                .collect();
            if i == 0 {
                // GFM fills a short body row with empty cells itself; padding every row to
                // the widest made rows × columns cells out of rows + columns tags.
                line.resize(cols, String::new());
            }
            out.push(format!("| {} |", line.join(" | ")));
            if i == 0 {
                out.push(format!("|{}", " --- |".repeat(cols)));
            }
        }
        w.block(out.join("\n"), false);
    }
}

/// Elements whose content is never text of the page (media, widgets, foreign markup).
fn is_invisible(tag: Tag) -> bool {
    matches!(
        tag,
        Tag::Svg
            | Tag::Math
            | Tag::Canvas
            | Tag::Head
            | Tag::Iframe
            | Tag::Object
            | Tag::Embed
            | Tag::Video
            | Tag::Audio
            | Tag::Img
            | Tag::Picture
            | Tag::Input
            | Tag::Select
            | Tag::Textarea
            | Tag::Button
            | Tag::Map
    )
}

/// Elements that start and end a paragraph (those with special rendering are matched earlier).
fn is_block(tag: Tag) -> bool {
    matches!(
        tag,
        Tag::P
            | Tag::Div
            | Tag::Section
            | Tag::Article
            | Tag::Main
            | Tag::Header
            | Tag::Footer
            | Tag::Aside
            | Tag::Nav
            | Tag::Figure
            | Tag::Figcaption
            | Tag::Address
            | Tag::Details
            | Tag::Summary
            | Tag::Dl
            | Tag::Dt
            | Tag::Dd
            | Tag::Center
            | Tag::Hgroup
            | Tag::Form
            | Tag::Fieldset
            | Tag::Body
            | Tag::Html
            | Tag::Li
            | Tag::Tr
            | Tag::Td
            | Tag::Th
            | Tag::Caption
            | Tag::Legend
            | Tag::Option
    )
}

fn is_permalink_mark(text: &str) -> bool {
    matches!(text.trim(), "¶" | "#" | "§" | "🔗" | "⚓" | "¤")
}
