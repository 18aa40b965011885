//! What the HTML parser gets: the page minus what extraction never reads, with nesting bounded.
//!
//! One linear scan over the bytes, tracking just enough of the tokenizer's states to find tags:
//!
//! - **Bodies of `<script>`, `<style>`, `<iframe>` and comments are removed.** They are about
//!   half the bytes of a news page, never content, and the tokenizer walks them one character at
//!   a time; parsing gets about a quarter faster. The tags themselves stay. `<noscript>` keeps
//!   its body: extraction parses it as markup, as a browser without scripts shows it.
//! - **The parser's work per tag is bounded.** html5ever checks "is there a `<p>` in button
//!   scope?" and similar by scanning its stack of open elements on most tags, so N nested
//!   elements cost O(N²): 100 000 nested `<div>`s took 20 s. Browsers cap tree depth for the
//!   same reason (Blink at 512). [`Open`] follows the stack the parser will build — elements
//!   that need an end tag, with the implied ends of `<li>`, `<dd>`/`<dt>` and `<option>` — and
//!   start tags beyond [`MAX_NESTING`] are dropped (their text stays), as are end tags that close
//!   nothing while the stack is deep. Formatting elements and attributes per tag get caps of
//!   their own (see [`MAX_FORMATTING`], [`MAX_ATTRIBUTES`]). Where the simulation is unsure it
//!   counts an element as still open, so the caps bite early on broken pages, never late.
//! - **The tree's size is bounded.** Each parsed node costs a few hundred bytes, so a 10 MB page
//!   of a million `<b>w</b>` took 520 MB and 8 s to extract. After [`MAX_ELEMENTS`] start tags,
//!   later tags become spaces (their text stays, words stay apart), except end tags that close
//!   an element still open, so the tree keeps its shape.

/// Far deeper than real pages (the 181 benchmark news pages nest at most 48 counted elements,
/// half of them 14 or fewer), shallow enough that the parser's stack scans stay cheap.
pub(crate) const MAX_NESTING: usize = 512;

/// Attributes kept per tag. The tokenizer compares each new attribute with all earlier ones
/// of its tag (duplicates are dropped), so 100 000 of them on one element took 2.3 s.
const MAX_ATTRIBUTES: usize = 128;

/// Open formatting elements (`<b>`, `<font>` …) allowed at once. The parser re-opens every
/// unclosed one in each following paragraph, so 500 of them before 20 000 `<p>`s (86 KB)
/// made ten million elements, 4 s and 2.4 GB. Real pages keep at most 2 open; beyond this
/// only emphasis is lost, never text.
const MAX_FORMATTING: usize = 8;

/// Start tags kept per page: more than a long encyclopedia article has (about 40 000), and
/// past the markdown the clean stage keeps (`clean.max_chars`) long before the cap; a 10 MB page
/// of tiny elements costs about 60 MB to extract at this cap instead of half a gigabyte.
const MAX_ELEMENTS: usize = 50_000;

/// An end tag looks this far down the stack for its element; a stray end tag costs the parser
/// a scan of its stack, so on a deep stack one that matches nothing here is dropped.
const END_TAG_REACH: usize = 64;

/// `html` ready for the parser (see the module documentation).
pub(crate) fn prepare(html: &str, max_nesting: usize) -> String {
    prepare_capped(html, max_nesting, MAX_ELEMENTS)
}

/// [`prepare`] keeping at most `max_elements` start tags.
fn prepare_capped(html: &str, max_nesting: usize, max_elements: usize) -> String {
    let bytes = html.as_bytes();
    let mut elements = 0;
    let mut out = String::with_capacity(html.len() / 2);
    // `html[copied..]` has not been copied to `out` yet.
    let mut copied = 0;
    let mut open = Open::default();
    let mut i = 0;
    while let Some(off) = memchr(b'<', &bytes[i..]) {
        let lt = i + off;
        let rest = &bytes[lt + 1..];
        if rest.starts_with(b"!--") {
            out.push_str(&html[copied..lt]);
            i = comment_end(bytes, lt + 4);
            copied = i;
            continue;
        }
        let end_tag = rest.first() == Some(&b'/');
        let name_at = lt + 1 + usize::from(end_tag);
        let name_len = bytes[name_at..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric())
            .count();
        if name_len == 0 || !bytes[name_at].is_ascii_alphabetic() {
            // `<!doctype …>`, `<?xml …>`, `a < b`: not an element tag.
            i = lt + 1;
            continue;
        }
        let name = &bytes[name_at..name_at + name_len];
        let (close, cut) = tag_end(bytes, name_at + name_len);
        let kind = Kind::of(name);
        let full = elements >= max_elements;
        let keep = match kind {
            Kind::Nests { .. } | Kind::Formatting if end_tag => open.end(name),
            // A stray `</p>` or `</br>` makes an element of its own.
            _ if end_tag => !full,
            Kind::PlainText => true,
            _ if full => false,
            Kind::Nests { family } => open.start(name, family, false, max_nesting),
            Kind::Formatting => open.start(name, 0, true, max_nesting),
            _ => true,
        };
        elements += usize::from(keep && !end_tag);
        if !keep {
            out.push_str(&html[copied..lt]);
            if full {
                out.push(' ');
            }
            copied = close;
        } else if let Some(cut) = cut {
            out.push_str(&html[copied..cut]);
            out.push('>');
            copied = close;
        }
        i = close;
        if end_tag {
            continue;
        }
        match kind {
            Kind::Dropped => {
                let end = raw_text_end(bytes, name, close, name.eq_ignore_ascii_case(b"script"));
                if keep {
                    out.push_str(&html[copied..close]);
                }
                copied = end;
                i = end;
            }
            Kind::RawText => i = raw_text_end(bytes, name, close, false),
            Kind::PlainText => break,
            Kind::Nests { .. } | Kind::Formatting | Kind::Flat => {}
        }
    }
    out.push_str(&html[copied..]);
    out
}

/// The parser's stack of open elements as far as it matters here: elements that can nest.
#[derive(Default)]
struct Open {
    /// Per open element, innermost last: name hash, implied-end family, formatting or not.
    stack: Vec<(u64, u8, bool)>,
    formatting: usize,
}

impl Open {
    /// A start tag: whether it is kept.
    fn start(&mut self, name: &[u8], family: u8, formatting: bool, max_nesting: usize) -> bool {
        // `<li>` ends an open `<li>` (`<dd>` a `<dt>` …) when nothing else is open inside it.
        if family != 0 && self.stack.last().is_some_and(|&(_, f, _)| f == family) {
            self.pop(1);
        }
        if self.stack.len() >= max_nesting || (formatting && self.formatting >= MAX_FORMATTING) {
            return false;
        }
        self.stack.push((hash(name), family, formatting));
        self.formatting += usize::from(formatting);
        true
    }

    /// An end tag: closes its element and everything opened inside it. Whether it is kept.
    fn end(&mut self, name: &[u8]) -> bool {
        let h = hash(name);
        let found = self
            .stack
            .iter()
            .rev()
            .take(END_TAG_REACH)
            .position(|&(e, _, _)| e == h);
        match found {
            Some(k) => {
                self.pop(k + 1);
                true
            }
            None => self.stack.len() <= END_TAG_REACH,
        }
    }

    fn pop(&mut self, n: usize) {
        for _ in 0..n {
            if let Some((_, _, formatting)) = self.stack.pop() {
                self.formatting -= usize::from(formatting);
            }
        }
    }
}

/// FNV-1a over the lowercased name.
fn hash(name: &[u8]) -> u64 {
    name.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b.to_ascii_lowercase())).wrapping_mul(0x0100_0000_01b3)
    })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Needs an end tag and can nest: on the stack until closed. A non-zero `family` is ended
    /// by a new start tag of its family (`<li>` after `<li>`).
    Nests { family: u8 },
    /// A formatting element (`<b>`, `<i>`, `<font>` …): nests, and is capped on its own.
    Formatting,
    /// Void; or closed by the next one of its kind wherever it is (`<p>`, `<a>`); or only
    /// meaningful inside a table, whose nesting is counted (`<tr>`, `<td>` …).
    Flat,
    /// Raw text never read by extraction: the body goes.
    Dropped,
    /// Raw text that is kept (`<title>`, `<textarea>` …): skipped, not scanned for tags.
    RawText,
    /// `<plaintext>`: the rest of the document is text.
    PlainText,
}

impl Kind {
    fn of(name: &[u8]) -> Kind {
        // Every name listed is short; a longer one is an ordinary element.
        let mut buf = [0u8; 10];
        let Some(lower) = buf.get_mut(..name.len()) else {
            return Kind::Nests { family: 0 };
        };
        lower.copy_from_slice(name);
        lower.make_ascii_lowercase();
        match &*lower {
            b"script" | b"style" | b"iframe" => Kind::Dropped,
            b"title" | b"textarea" | b"xmp" | b"noembed" | b"noframes" => Kind::RawText,
            b"plaintext" => Kind::PlainText,
            b"b" | b"big" | b"code" | b"em" | b"font" | b"i" | b"nobr" | b"s" | b"small"
            | b"strike" | b"strong" | b"tt" | b"u" => Kind::Formatting,
            b"li" => Kind::Nests { family: 1 },
            b"dd" | b"dt" => Kind::Nests { family: 2 },
            b"option" | b"optgroup" => Kind::Nests { family: 3 },
            b"area" | b"base" | b"br" | b"col" | b"embed" | b"hr" | b"img" | b"input" | b"link"
            | b"meta" | b"param" | b"source" | b"track" | b"wbr" | b"keygen" | b"image" | b"p"
            | b"a" | b"tr" | b"td" | b"th" | b"thead" | b"tbody" | b"tfoot" | b"colgroup"
            | b"caption" | b"html" | b"head" | b"body" => Kind::Flat,
            _ => Kind::Nests { family: 0 },
        }
    }
}

/// Index just past a comment whose body starts at `from` (`-->`, `--!>`, or the abrupt
/// `<!-->` / `<!--->`); the end of input if it never closes, as in the tokenizer.
fn comment_end(bytes: &[u8], from: usize) -> usize {
    let rest = &bytes[from..];
    if rest.starts_with(b">") {
        return from + 1;
    }
    if rest.starts_with(b"->") {
        return from + 2;
    }
    let mut at = from;
    while let Some(k) = find(bytes, at, b"--") {
        let after = &bytes[k + 2..];
        if after.starts_with(b">") {
            return k + 3;
        }
        if after.starts_with(b"!>") {
            return k + 4;
        }
        at = k + 1;
    }
    bytes.len()
}

/// Index just past the `>` closing a tag whose attributes start at `from` and, if the tag has
/// more than [`MAX_ATTRIBUTES`], where the first one too many starts. As in the tokenizer, a
/// quote only opens a value right after `=`.
fn tag_end(bytes: &[u8], from: usize) -> (usize, Option<usize>) {
    let mut k = from;
    let mut attributes = 0;
    let mut cut = None;
    // Between attributes: the next name character starts a new one.
    let mut between = true;
    while k < bytes.len() {
        match bytes[k] {
            b'>' => return (k + 1, cut),
            b'=' => {
                k += 1;
                while k < bytes.len() && bytes[k].is_ascii_whitespace() {
                    k += 1;
                }
                if let Some(&q @ (b'"' | b'\'')) = bytes.get(k) {
                    k = memchr(q, &bytes[k + 1..]).map_or(bytes.len(), |off| k + 1 + off + 1);
                    between = true;
                } else {
                    between = false;
                }
                continue;
            }
            b'/' | b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' => between = true,
            _ => {
                if between {
                    attributes += 1;
                    if attributes > MAX_ATTRIBUTES && cut.is_none() {
                        // After ASCII whitespace or `/`: a character boundary.
                        cut = Some(k);
                    }
                }
                between = false;
            }
        }
        k += 1;
    }
    (bytes.len(), cut)
}

/// `</name` followed by whitespace, `/` or `>` at `at`: the end tag of a raw-text element.
fn is_end_tag(bytes: &[u8], at: usize, name: &[u8]) -> bool {
    bytes[at..].starts_with(b"</") && is_start_tag(bytes, at + 1, name)
}

/// Where the raw text of element `name` starting at `from` ends (the `<` of its end tag).
/// In scripts, `<!--` … `<script>` … `-->` hides `</script>` from the tokenizer (the spec's
/// "double escaped" states), which is followed here so the cut never lands early.
fn raw_text_end(bytes: &[u8], name: &[u8], from: usize, script: bool) -> usize {
    #[derive(PartialEq)]
    enum State {
        Plain,
        Escaped,
        DoubleEscaped,
    }
    let mut state = State::Plain;
    let mut at = from;
    // The next `-->` at or after `at`, found once and reused until `at` passes it (searching
    // afresh at every `<` would make `<script><!--<<<<…` quadratic).
    let mut dashes: Option<Option<usize>> = None;
    loop {
        let lt = memchr(b'<', &bytes[at..]).map(|k| at + k);
        // Inside `<!--`, a `-->` before the next tag returns to plain script data.
        if state != State::Plain {
            if dashes.is_some_and(|d| d.is_some_and(|d| d < at)) {
                dashes = None;
            }
            let d = *dashes.get_or_insert_with(|| find(bytes, at, b"-->"));
            if let Some(d) = d.filter(|&d| lt.is_none_or(|lt| d < lt)) {
                state = State::Plain;
                at = d + 3;
                continue;
            }
        }
        let Some(lt) = lt else { return bytes.len() };
        if is_end_tag(bytes, lt, name) {
            match state {
                State::DoubleEscaped => state = State::Escaped,
                _ => return lt,
            }
        } else if script && state == State::Plain && bytes[lt..].starts_with(b"<!--") {
            state = State::Escaped;
            at = lt + 4;
            continue;
        } else if state == State::Escaped && is_start_tag(bytes, lt, b"script") {
            state = State::DoubleEscaped;
        }
        at = lt + 1;
    }
}

/// `name` just after `at`, followed by whitespace, `/` or `>`: the start tag `<name` when
/// `bytes[at]` is `<` (which is not checked).
fn is_start_tag(bytes: &[u8], at: usize, name: &[u8]) -> bool {
    let tag = &bytes[at..];
    tag.len() > name.len() + 1
        && tag[1..1 + name.len()].eq_ignore_ascii_case(name)
        && matches!(
            tag[1 + name.len()],
            b'>' | b'/' | b' ' | b'\t' | b'\n' | b'\r' | b'\x0c'
        )
}

/// Position of `needle` in `hay`, 32 bytes at a time (a branch-free OR over each block
/// vectorises; a byte-by-byte search does not).
fn memchr(needle: u8, hay: &[u8]) -> Option<usize> {
    let mut blocks = hay.chunks_exact(32);
    let mut at = 0;
    for block in &mut blocks {
        if block.iter().fold(false, |hit, &b| hit | (b == needle)) {
            return block.iter().position(|&b| b == needle).map(|k| at + k);
        }
        at += 32;
    }
    blocks
        .remainder()
        .iter()
        .position(|&b| b == needle)
        .map(|k| at + k)
}

fn find(bytes: &[u8], from: usize, pat: &[u8]) -> Option<usize> {
    let mut at = from;
    while at < bytes.len() {
        let k = at + memchr(pat[0], &bytes[at..])?;
        if bytes[k..].starts_with(pat) {
            return Some(k);
        }
        at = k + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_styles_and_comments_lose_their_bodies() {
        // `<noscript>` keeps its markup: extraction parses it as a browser without scripts.
        let page = "<head><title>a<b</title><style>p{}</style></head><body><!-- x --><p>t<!---->u\
            <script type=\"x\">if (a<b) '</div>'</script ><noscript><p>w</noscript>v";
        assert_eq!(
            prepare(page, 10),
            "<head><title>a<b</title><style></style></head><body><p>tu\
            <script type=\"x\"></script ><noscript><p>w</noscript>v"
        );
    }

    #[test]
    fn escaped_script_end_tags_are_not_the_end() {
        let page = "<script>document.write('<!--<script>x</script>-->')</script>after";
        assert_eq!(prepare(page, 10), "<script></script>after");
        // Once escaped, `-->` returns to plain script data; a plain `</script>` ends it.
        let page = "<script><!-- a --></script>b";
        assert_eq!(prepare(page, 10), "<script></script>b");
    }

    #[test]
    fn deep_tags_are_dropped_and_text_kept() {
        let page = format!("{}x{}", "<div class=\"a>b\">".repeat(5), "</div>".repeat(5));
        let out = prepare(&page, 2);
        assert_eq!(
            out,
            format!(
                "<div class=\"a>b\"><div class=\"a>b\">x{}",
                "</div>".repeat(5)
            )
        );
        let flat = "<p>a<p>b<br><img src=x><a>d<a>e<ul><li>f<li>g</ul><dl><dt>h<dd>i</dl>";
        let flat = flat.repeat(100);
        assert_eq!(prepare(&flat, 2), flat);
    }

    #[test]
    fn alternating_implied_ends_still_nest() {
        // `<li>` and `<dd>` do not end each other: the parser nests them. At the cap the
        // `<dd>`s go; each `<li>` then only ends the one before it.
        let page = format!("{}x", "<li><dd>".repeat(4));
        assert_eq!(prepare(&page, 3), "<li><dd><li><li><li>x");
    }

    #[test]
    fn stray_end_tags_go_only_on_a_deep_stack() {
        let shallow = "<div></span></div>";
        assert_eq!(prepare(shallow, 100), shallow);
        let deep = format!("{}</span>x", "<div>".repeat(END_TAG_REACH + 1));
        assert_eq!(
            prepare(&deep, 100),
            format!("{}x", "<div>".repeat(END_TAG_REACH + 1))
        );
    }

    #[test]
    fn open_formatting_elements_are_capped() {
        let page = format!("<p>{}x<p>y", "<b>".repeat(MAX_FORMATTING + 3));
        let out = prepare(&page, 100);
        assert_eq!(out, format!("<p>{}x<p>y", "<b>".repeat(MAX_FORMATTING)));
        let balanced = "<i>a</i>".repeat(100);
        assert_eq!(prepare(&balanced, 100), balanced);
    }

    #[test]
    fn attributes_beyond_the_cap_are_cut() {
        let attrs: String = (0..MAX_ATTRIBUTES + 5)
            .map(|k| format!(" a{k}='>'"))
            .collect();
        let out = prepare(&format!("<div{attrs}>x</div>"), 10);
        let kept: String = (0..MAX_ATTRIBUTES).map(|k| format!(" a{k}='>'")).collect();
        assert_eq!(out, format!("<div{kept} >x</div>"));
        let few = "<a href=\"/x\" class=b data-x='1'>y</a>";
        assert_eq!(prepare(few, 10), few);
    }

    #[test]
    fn unquoted_values_may_hold_quotes() {
        let page = "<div title=it's><div>x</div></div>";
        assert_eq!(prepare(page, 2), page);
    }

    #[test]
    fn tags_past_the_element_cap_become_spaces() {
        let page = "<div><p>a<b>b</b><br>c<script>x</script><p>d</div>e</p>";
        assert_eq!(
            prepare_capped(page, 100, 3),
            "<div><p>a<b>b</b> c   d</div>e "
        );
        assert_eq!(prepare_capped(page, 100, 100), page.replace(">x<", "><"));
    }

    #[test]
    fn garbage_never_panics() {
        for page in [
            "<",
            "</",
            "<a",
            "<div x='",
            "<!--",
            "<!-->x",
            "<script>",
            "<script><!--<script>",
            "é<é<1<<>>",
            "<div\u{fffd}>",
            "<style></sty",
            "<p =>",
            "<x a= '",
        ] {
            prepare(page, 0);
        }
    }
}
