//! PDF text through pdf-extract, each page after a `<!-- page N -->` line.
//!
//! pdf-extract interprets content streams faithfully but trusts its input: it unwraps, follows
//! `Parent` links and form XObjects (`Do`) by recursion with no depth limit (a stack overflow
//! aborts the process: `catch_unwind` cannot help), walks the whole page tree for every page,
//! and lopdf inflates streams without a limit. So before extraction the document is made safe:
//! object and xref streams are test-inflated from the raw bytes (they are inflated at load),
//! every other stream after load; images are emptied (`Do` on an image would parse its pixels as
//! a content stream); the page tree is replaced by one flat node of at most [`MAX_PAGES`] pages
//! that carry their inherited attributes; form XObjects are checked for cycles and depth; fonts
//! with a predefined CJK CMap get it spelled out ([`cmaps`]). What is left to fail, panics, is
//! caught per page.

mod cmaps;

use std::collections::HashSet;
use std::io::Read;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use pdf_extract::{Dictionary, Document, Object, ObjectId, OutputDev, OutputError, Transform};
use trawl_text::collapse_whitespace;

use super::{Converted, FileError, MAX_TEXT};

pub const MAX_PAGES: usize = 2000;
/// One stream may inflate to this much (a page's content, a font, an object stream).
const MAX_STREAM: u64 = 64 << 20;
/// All streams together, images aside.
const MAX_INFLATED: u64 = 512 << 20;
const MAX_FORM_DEPTH: usize = 32;
const MAX_FORM_USES: usize = 10_000;
/// Spent interpreting text before we stop with what we have.
const TIME_BUDGET: Duration = Duration::from_secs(60);

pub fn convert(bytes: &[u8]) -> Result<Converted, FileError> {
    match catch_unwind(AssertUnwindSafe(|| extract(bytes))) {
        Ok(result) => result,
        Err(panic) => Err(FileError::Corrupt(format!(
            "the PDF reader gave up: {}",
            panic_message(&panic)
        ))),
    }
}

fn corrupt(why: impl Into<String>) -> FileError {
    FileError::Corrupt(why.into())
}

fn extract(bytes: &[u8]) -> Result<Converted, FileError> {
    check_raw_streams(bytes)?;
    let mut doc =
        Document::load_mem(bytes).map_err(|e| corrupt(format!("not a readable PDF: {e}")))?;
    if doc.is_encrypted() && doc.decrypt("").is_err() {
        return Err(corrupt("encrypted PDF: text needs a password"));
    }
    empty_images(&mut doc);
    cmaps::spell_out(&mut doc);
    check_streams(&doc)?;
    let (pages, total) = flatten_pages(&mut doc)?;
    check_forms(&doc, &pages)?;
    let title = title(&doc);

    let mut out = String::new();
    let mut device = Device::new(Instant::now() + TIME_BUDGET);
    let (mut read, mut failed, mut first_failure) = (0, 0, None);
    for n in 1..=pages.len() {
        device.reset(MAX_TEXT.saturating_sub(out.len()));
        let page = catch_unwind(AssertUnwindSafe(|| {
            pdf_extract::output_doc_page(&doc, &mut device, n as u32)
        }));
        out.push_str(&trawl_text::pages::marker(n));
        out.push_str("\n\n");
        match page {
            Ok(Ok(())) => {}
            // Our device stopped it: keep what it had.
            Ok(Err(_)) if device.stop.is_some() => {}
            Ok(Err(e)) => {
                failed += 1;
                first_failure.get_or_insert_with(|| e.to_string());
            }
            Err(panic) => {
                failed += 1;
                first_failure.get_or_insert_with(|| panic_message(&panic));
            }
        }
        read += 1;
        let text = paragraphs(&device.text);
        if !text.is_empty() {
            out.push_str(&text);
            out.push_str("\n\n");
        }
        if let Some(stop) = device.stop {
            out.push_str(&format!("<!-- truncated: {stop} -->\n"));
            break;
        }
    }
    if read == failed {
        return Err(corrupt(format!(
            "no page could be read: {}",
            first_failure.unwrap_or_default()
        )));
    }
    if !out
        .lines()
        .any(|l| !l.trim().is_empty() && !l.starts_with("<!-- "))
    {
        return Err(corrupt(
            "no extractable text (a scanned or image-only PDF?)",
        ));
    }
    if total > pages.len() && device.stop.is_none() {
        out.push_str(&format!(
            "<!-- truncated: {} more pages not read -->\n",
            total - pages.len()
        ));
    }
    Ok(Converted {
        mime: "application/pdf".into(),
        title,
        text: out,
        pages: Some(read),
    })
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".into())
}

/// Bytes `data` inflates to, up to `limit + 1`, the way lopdf does it (zlib, else raw deflate).
fn inflated_len(data: &[u8], limit: u64) -> u64 {
    let count = |reader: &mut dyn Read| {
        let mut sink = std::io::sink();
        let mut limited = reader.take(limit + 1);
        let mut n = 0u64;
        let mut buf = [0u8; 64 << 10];
        loop {
            match limited.read(&mut buf) {
                Ok(0) | Err(_) => return n,
                Ok(k) => {
                    n += k as u64;
                    let _ = std::io::Write::write_all(&mut sink, &buf[..k]);
                }
            }
        }
    };
    let n = count(&mut flate2::read::ZlibDecoder::new(data));
    if n == 0 && data.len() > 2 {
        count(&mut flate2::read::DeflateDecoder::new(&data[2..]))
    } else {
        n
    }
}

/// Object and xref streams are inflated while the file loads, so they are measured first, from
/// the raw bytes.
fn check_raw_streams(bytes: &[u8]) -> Result<(), FileError> {
    let mut total = 0u64;
    let mut at = 0;
    while let Some(pos) = find(&bytes[at..], b"stream") {
        let start = at + pos;
        at = start + 6;
        if bytes[..start].ends_with(b"end") {
            continue;
        }
        let window = &bytes[start.saturating_sub(4096)..start];
        let dict = match rfind(window, b"obj") {
            Some(i) => &window[i..],
            None => window,
        };
        if !(super::contains(dict, b"/ObjStm") || super::contains(dict, b"/XRef"))
            || !super::contains(dict, b"Flate")
        {
            continue;
        }
        let mut data = at;
        if bytes.get(data) == Some(&b'\r') {
            data += 1;
        }
        if bytes.get(data) == Some(&b'\n') {
            data += 1;
        }
        total = add_inflated(
            total,
            inflated_len(&bytes[data.min(bytes.len())..], MAX_STREAM),
        )?;
    }
    Ok(())
}

fn add_inflated(total: u64, n: u64) -> Result<u64, FileError> {
    if n > MAX_STREAM {
        return Err(FileError::TooLarge(format!(
            "a stream inflates past {} MiB (a compression bomb?)",
            MAX_STREAM >> 20
        )));
    }
    let total = total + n;
    if total > MAX_INFLATED {
        return Err(FileError::TooLarge(format!(
            "streams inflate past {} MiB in all",
            MAX_INFLATED >> 20
        )));
    }
    Ok(total)
}

fn is_image(dict: &Dictionary) -> bool {
    dict.get(b"Subtype")
        .and_then(Object::as_name)
        .is_ok_and(|n| n == b"Image")
}

/// Images carry no text, and pdf-extract would interpret their pixels as a content stream.
fn empty_images(doc: &mut Document) {
    for object in doc.objects.values_mut() {
        if let Object::Stream(stream) = object {
            if is_image(&stream.dict) {
                stream.set_plain_content(Vec::new());
            }
        }
    }
}

/// Every stream left is inflated when its page is read: measured first.
fn check_streams(doc: &Document) -> Result<(), FileError> {
    let mut total = 0u64;
    for object in doc.objects.values() {
        if let Object::Stream(stream) = object {
            let flate = match stream.dict.get(b"Filter") {
                Ok(Object::Name(n)) => n == b"FlateDecode",
                Ok(Object::Array(a)) => a
                    .iter()
                    .any(|f| f.as_name().is_ok_and(|n| n == b"FlateDecode")),
                _ => false,
            };
            if flate {
                total = add_inflated(total, inflated_len(&stream.content, MAX_STREAM))?;
            }
        }
    }
    Ok(())
}

/// Replaces the page tree with one node over its first [`MAX_PAGES`] pages, each carrying the
/// `Resources` and `MediaBox` it inherited. The walk is iterative and refuses a node seen twice,
/// so cycles and shared subtrees end here. Returns the pages kept and the number found.
fn flatten_pages(doc: &mut Document) -> Result<(Vec<ObjectId>, usize), FileError> {
    let root = doc
        .catalog()
        .and_then(|c| c.get(b"Pages"))
        .and_then(Object::as_reference)
        .map_err(|_| corrupt("no page tree"))?;
    let mut seen = HashSet::new();
    let mut stack = vec![(root, None::<Object>, None::<Object>)];
    let mut leaves = Vec::new();
    let mut total = 0usize;
    while let Some((id, resources, media_box)) = stack.pop() {
        if !seen.insert(id) {
            return Err(corrupt("the page tree has a cycle or a shared node"));
        }
        let Ok(node) = doc.get_dictionary(id) else {
            continue;
        };
        let resources = node.get(b"Resources").ok().cloned().or(resources);
        let media_box = node.get(b"MediaBox").ok().cloned().or(media_box);
        match node.get(b"Kids").and_then(|k| doc.dereference(k)) {
            Ok((_, Object::Array(kids))) => {
                for kid in kids.iter().rev() {
                    if let Ok(kid) = kid.as_reference() {
                        stack.push((kid, resources.clone(), media_box.clone()));
                    }
                }
            }
            _ => {
                total += 1;
                if leaves.len() < MAX_PAGES {
                    leaves.push((id, resources, media_box));
                }
            }
        }
    }
    if leaves.is_empty() {
        return Err(corrupt("no pages"));
    }
    let kids: Vec<Object> = leaves
        .iter()
        .map(|(id, _, _)| Object::Reference(*id))
        .collect();
    let mut flat = Dictionary::new();
    flat.set("Type", Object::Name(b"Pages".to_vec()));
    flat.set("Count", leaves.len() as i64);
    flat.set("Kids", kids);
    let flat = doc.add_object(flat);
    let letter = || Object::Array([0, 0, 612, 792].map(Object::Integer).to_vec());
    for (id, resources, media_box) in &leaves {
        if let Ok(Object::Dictionary(page)) = doc.get_object_mut(*id) {
            page.set("Parent", Object::Reference(flat));
            page.set("Type", Object::Name(b"Page".to_vec()));
            page.set(
                "Resources",
                resources
                    .clone()
                    .unwrap_or_else(|| Dictionary::new().into()),
            );
            page.set("MediaBox", media_box.clone().unwrap_or_else(letter));
        }
    }
    doc.catalog_mut()
        .map_err(|_| corrupt("no catalog"))?
        .set("Pages", Object::Reference(flat));
    Ok((leaves.into_iter().map(|(id, _, _)| id).collect(), total))
}

fn resolved<'a>(doc: &'a Document, dict: &'a Dictionary, key: &[u8]) -> Option<&'a Dictionary> {
    let object = dict.get(key).ok()?;
    doc.dereference(object).ok()?.1.as_dict().ok()
}

/// Form XObjects as pdf-extract will run them: a form resolves names in its own resources, or
/// in its caller's when it has none, so a use is (form, resources in effect). A cycle or a chain
/// deeper than [`MAX_FORM_DEPTH`] would recurse until the stack overflows.
fn check_forms(doc: &Document, pages: &[ObjectId]) -> Result<(), FileError> {
    let mut walk = FormWalk {
        doc,
        visiting: HashSet::new(),
        done: HashSet::new(),
        uses: 0,
    };
    for page in pages {
        let Some(resources) = doc
            .get_dictionary(*page)
            .ok()
            .and_then(|p| resolved(doc, p, b"Resources"))
        else {
            continue;
        };
        // Every form the page could name: an over-approximation that costs nothing here.
        if let Some(xobjects) = resolved(doc, resources, b"XObject") {
            for (_, target) in xobjects.iter() {
                if let Ok(id) = target.as_reference() {
                    walk.visit(id, resources, 0)?;
                }
            }
        }
    }
    Ok(())
}

struct FormWalk<'a> {
    doc: &'a Document,
    visiting: HashSet<(ObjectId, usize)>,
    done: HashSet<(ObjectId, usize)>,
    uses: usize,
}

impl<'a> FormWalk<'a> {
    fn visit(
        &mut self,
        id: ObjectId,
        caller: &'a Dictionary,
        depth: usize,
    ) -> Result<(), FileError> {
        let Ok(Object::Stream(form)) = self.doc.get_object(id) else {
            return Ok(());
        };
        if form.dict.get(b"Subtype").and_then(Object::as_name).ok() != Some(b"Form") {
            return Ok(());
        }
        let resources = resolved(self.doc, &form.dict, b"Resources").unwrap_or(caller);
        // The dictionary's address names it: the document is not modified during the walk.
        let key = (id, resources as *const Dictionary as usize);
        if self.done.contains(&key) {
            return Ok(());
        }
        if self.visiting.contains(&key) {
            return Err(corrupt("a form XObject draws itself (a cycle)"));
        }
        if depth >= MAX_FORM_DEPTH {
            return Err(corrupt(format!(
                "form XObjects nested more than {MAX_FORM_DEPTH} deep"
            )));
        }
        self.uses += 1;
        if self.uses > MAX_FORM_USES {
            return Err(corrupt(format!("more than {MAX_FORM_USES} form XObjects")));
        }
        self.visiting.insert(key);
        let content = form
            .decompressed_content()
            .unwrap_or_else(|_| form.content.clone());
        let operations = pdf_extract::content::Content::decode(&content)
            .map(|c| c.operations)
            .unwrap_or_default();
        let xobjects = resolved(self.doc, resources, b"XObject");
        for op in operations.iter().filter(|op| op.operator == "Do") {
            let target = op
                .operands
                .first()
                .and_then(|n| n.as_name().ok())
                .and_then(|n| xobjects?.get(n).ok())
                .and_then(|t| t.as_reference().ok());
            if let Some(target) = target {
                self.visit(target, resources, depth + 1)?;
            }
        }
        self.visiting.remove(&key);
        self.done.insert(key);
        Ok(())
    }
}

/// The document information dictionary's title, a PDF text string (UTF-16BE with a BOM, UTF-8
/// with a BOM, else PDFDocEncoding, which is Latin-1 for letters).
fn title(doc: &Document) -> Option<String> {
    let info = doc.trailer.get(b"Info").ok()?;
    let info = doc.dereference(info).ok()?.1.as_dict().ok()?;
    let Object::String(raw, _) = doc.dereference(info.get(b"Title").ok()?).ok()?.1 else {
        return None;
    };
    let text = if let Some(utf16) = raw.strip_prefix(b"\xfe\xff") {
        let units: Vec<u16> = utf16
            .chunks_exact(2)
            .map(|c| u16::from_be_bytes([c[0], c[1]]))
            .collect();
        String::from_utf16_lossy(&units)
    } else if let Some(utf8) = raw.strip_prefix(b"\xef\xbb\xbf") {
        String::from_utf8_lossy(utf8).into_owned()
    } else {
        raw.iter().map(|&b| char::from(b)).collect()
    };
    let text = collapse_whitespace(&text);
    (!text.is_empty()).then_some(text)
}

/// Receives positioned characters and lays them out as lines: a move down starts a line, a
/// larger one (more than 1.5 font sizes) or a change of font size a paragraph, a gap to the
/// right a space. Stops the
/// interpreter (by returning an error) when out of room or time.
struct Device {
    text: String,
    /// End of the last character (x), its baseline (y) and size, in page space.
    last: Option<(f64, f64, f64)>,
    room: usize,
    deadline: Instant,
    chars: u64,
    stop: Option<&'static str>,
}

impl Device {
    fn new(deadline: Instant) -> Self {
        Device {
            text: String::new(),
            last: None,
            room: MAX_TEXT,
            deadline,
            chars: 0,
            stop: None,
        }
    }

    fn reset(&mut self, room: usize) {
        self.text.clear();
        self.last = None;
        self.room = room;
    }

    fn break_line(&mut self, blank: bool) {
        let kept = self.text.trim_end_matches(' ').len();
        self.text.truncate(kept);
        if self.text.is_empty() {
            return;
        }
        let end = if blank { "\n\n" } else { "\n" };
        while !self.text.ends_with(end) {
            self.text.push('\n');
        }
    }
}

impl OutputDev for Device {
    fn begin_page(
        &mut self,
        _: u32,
        _: &pdf_extract::MediaBox,
        _: Option<(f64, f64, f64, f64)>,
    ) -> Result<(), OutputError> {
        Ok(())
    }

    fn end_page(&mut self) -> Result<(), OutputError> {
        Ok(())
    }

    fn output_character(
        &mut self,
        trm: &Transform,
        width: f64,
        _spacing: f64,
        font_size: f64,
        char: &str,
    ) -> Result<(), OutputError> {
        self.chars += 1;
        if self.chars.is_multiple_of(4096) && Instant::now() > self.deadline {
            self.stop = Some("the time budget for this file ran out");
            return Err(OutputError::FormatError(std::fmt::Error));
        }
        let scale = (trm.m11 * trm.m22 - trm.m12 * trm.m21).abs().sqrt();
        let mut size = (font_size * scale).abs();
        if !size.is_finite() || size < 0.1 {
            size = 10.0;
        }
        let (x, y) = (trm.m31, trm.m32);
        if let Some((end, last_y, last_size)) = self.last {
            let s = size.max(last_size);
            let dy = (y - last_y).abs();
            // A change of size between lines is a heading's edge even without extra space.
            let resized = size > last_size * 1.15 || last_size > size * 1.15;
            if dy > s * 1.5 || (dy > s * 0.5 && resized) {
                self.break_line(true);
            } else if dy > s * 0.5 {
                self.break_line(false);
            } else if x > end + s * 0.1 && !self.text.ends_with([' ', '\n']) {
                self.text.push(' ');
            }
        }
        for c in char.chars() {
            match c {
                '\u{a0}' | '\t' => self.text.push(' '),
                // A space after a space (a space glyph after a positioning gap) says nothing.
                ' ' if self.text.ends_with([' ', '\n']) || self.text.is_empty() => {}
                c if c.is_control() || c == '\u{fffd}' => {}
                c => self.text.push(c),
            }
        }
        self.last = Some((x + width * size, y, size));
        if self.text.len() > self.room {
            self.stop = Some("the text goes on past 5 MB");
            return Err(OutputError::FormatError(std::fmt::Error));
        }
        Ok(())
    }

    fn begin_word(&mut self) -> Result<(), OutputError> {
        Ok(())
    }

    fn end_word(&mut self) -> Result<(), OutputError> {
        Ok(())
    }

    fn end_line(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
}

const BULLETS: &[char] = &['•', '◦', '▪', '‣', '●', '○', '■', '□', '➢', '·'];

/// Joins the lines a PDF breaks mid-sentence: a line that reaches (nearly) the width of the
/// page's longest is continued by the next one, a short line that ends a sentence ends its
/// paragraph, other short lines (headings, table rows) keep their break. Bullet glyphs become
/// markdown list items.
fn paragraphs(page: &str) -> String {
    let width = page.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    // Ragged-right text rarely sets a full line below three quarters of the widest.
    let full = |line: &str| line.chars().count() * 4 >= width * 3;
    let mut out = String::new();
    for block in page.split("\n\n") {
        let mut prev: Option<&str> = None;
        let mut para = String::new();
        for line in block.lines().map(str::trim).filter(|l| !l.is_empty()) {
            let item = line
                .strip_prefix(BULLETS)
                .map(|rest| format!("- {}", rest.trim_start()));
            match (prev, &item) {
                (None, _) => {}
                (Some(_), Some(_)) => para.push('\n'),
                (Some(p), None) if full(p) => {
                    let hyphenated = p.ends_with('-')
                        && p[..p.len() - 1].ends_with(char::is_alphabetic)
                        && line.starts_with(char::is_lowercase);
                    if hyphenated {
                        para.pop();
                    } else {
                        para.push(' ');
                    }
                }
                (Some(p), None)
                    if p.trim_end_matches(['"', '”', '’', ')'])
                        .ends_with(['.', '!', '?', ':']) =>
                {
                    para.push_str("\n\n")
                }
                (Some(_), None) => para.push('\n'),
            }
            para.push_str(item.as_deref().unwrap_or(line));
            prev = Some(line);
        }
        if !para.is_empty() {
            if !out.is_empty() {
                out.push_str("\n\n");
            }
            out.push_str(&para);
        }
    }
    out
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn rfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).rposition(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use trawl_integration_tests::simweb::files::{pdf_stream as stream, write_pdf as pdf};

    fn deflate(data: &[u8]) -> Vec<u8> {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(data).unwrap();
        z.finish().unwrap()
    }

    /// Catalog, pages, font, then one page + content per entry (content already a stream).
    fn doc(contents: &[Vec<u8>], xobjects: &str, extra: &[Vec<u8>], trailer: &str) -> Vec<u8> {
        let n = contents.len();
        let kids: Vec<String> = (0..n).map(|i| format!("{} 0 R", 4 + 2 * i)).collect();
        let mut objects = vec![
            b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
            format!("<< /Type /Pages /Kids [{}] /Count {n} /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> {xobjects} >> >>", kids.join(" ")).into_bytes(),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".to_vec(),
        ];
        for (i, content) in contents.iter().enumerate() {
            objects.push(
                format!(
                    "<< /Type /Page /Parent 2 0 R /Contents {} 0 R >>",
                    5 + 2 * i
                )
                .into_bytes(),
            );
            objects.push(content.clone());
        }
        objects.extend_from_slice(extra);
        pdf(&objects, trailer)
    }

    fn text(lines: &[&str]) -> Vec<u8> {
        let mut s = String::from("BT /F1 12 Tf 14 TL 72 720 Td ");
        for line in lines {
            if line.is_empty() {
                s.push_str("T* ");
            } else {
                s.push_str(&format!("({line}) Tj T* "));
            }
        }
        s.push_str("ET");
        stream("", s.as_bytes())
    }

    #[test]
    fn pages_in_order_with_markers_title_and_compressed_streams() {
        let page2 =
            deflate(b"BT /F1 12 Tf 72 720 Td (Voles were scarce in the eastern sector.) Tj ET");
        let bytes = doc(
            &[
                text(&["The Kestrel survey counted 412 breeding pairs in 2023."]),
                stream("/Filter /FlateDecode", &page2),
            ],
            "",
            &[b"<< /Title (Kestrel Survey) >>".to_vec()],
            "/Info 8 0 R",
        );
        let out = convert(&bytes).unwrap();
        assert_eq!(out.pages, Some(2));
        assert_eq!(out.title.as_deref(), Some("Kestrel Survey"));
        assert_eq!(out.mime, "application/pdf");
        assert_eq!(
            out.text,
            "<!-- page 1 -->\n\nThe Kestrel survey counted 412 breeding pairs in 2023.\n\n\
             <!-- page 2 -->\n\nVoles were scarce in the eastern sector.\n\n"
        );
    }

    #[test]
    fn fonts_with_predefined_cjk_cmaps_lose_no_page() {
        // 中文 as UCS-2 codes (UniGB-UCS2-H), then as GBK bytes (GBK-EUC-H) with ASCII beside
        // them, then 文中 in a second GBK font (sharing the first's CMap streams); pdf-extract
        // alone panics on each font and the page is lost.
        let content = b"BT /F1 12 Tf 72 720 Td <4E2D6587> Tj 0 -40 Td /F2 12 Tf <D6D0CEC4> Tj 0 -40 Td <504446> Tj 0 -40 Td /F3 12 Tf <CEC4D6D0> Tj ET";
        let type0 = |encoding: &str| {
            format!("<< /Type /Font /Subtype /Type0 /BaseFont /STSong-Light /Encoding /{encoding} /DescendantFonts [6 0 R] >>").into_bytes()
        };
        let bytes = pdf(
            &[
                b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
                b"<< /Type /Pages /Kids [3 0 R] /Count 1 /MediaBox [0 0 612 792] >>".to_vec(),
                b"<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 5 0 R /F2 7 0 R /F3 9 0 R >> >> /Contents 4 0 R >>".to_vec(),
                stream("", content),
                type0("UniGB-UCS2-H"),
                b"<< /Type /Font /Subtype /CIDFontType0 /BaseFont /STSong-Light /CIDSystemInfo << /Registry (Adobe) /Ordering (GB1) /Supplement 4 >> /FontDescriptor 8 0 R /DW 1000 >>".to_vec(),
                type0("GBK-EUC-H"),
                b"<< /Type /FontDescriptor /FontName /STSong-Light /Flags 4 /FontBBox [0 -120 1000 880] /ItalicAngle 0 /Ascent 880 /Descent -120 /CapHeight 880 /StemV 80 >>".to_vec(),
                type0("GBK-EUC-H"),
            ],
            "",
        );
        let out = convert(&bytes).unwrap();
        assert_eq!(out.pages, Some(1));
        assert_eq!(
            out.text,
            "<!-- page 1 -->\n\n中文\n\n中文\n\nPDF\n\n文中\n\n"
        );
    }

    #[test]
    fn words_placed_by_offsets_and_moves_get_spaces() {
        let content = b"BT /F1 10 Tf 72 700 Td [(The)-333(Kestrel)-333(survey.)]TJ 0 -40 Td (Second) Tj 40 0 Td (line) Tj ET";
        let out = convert(&doc(&[stream("", content)], "", &[], "")).unwrap();
        assert_eq!(
            out.text,
            "<!-- page 1 -->\n\nThe Kestrel survey.\n\nSecond line\n\n"
        );
    }

    #[test]
    fn lines_broken_mid_sentence_are_joined() {
        let page = "The kestrel is a small falcon that hovers over\nfields and verges looking for voles; its num-\nbers fell in the nineties.\nA short last line.\nNext paragraph starts here and\nTable row\n• first item\n• second item";
        assert_eq!(
            paragraphs(page),
            "The kestrel is a small falcon that hovers over fields and verges looking for voles; its numbers fell in the nineties.\n\n\
             A short last line.\n\nNext paragraph starts here and\nTable row\n- first item\n- second item"
        );
        assert_eq!(paragraphs("Heading\n\nBody text."), "Heading\n\nBody text.");
    }

    #[test]
    fn image_only_pdf_has_no_text() {
        let image = stream("/Type /XObject /Subtype /Image /Width 1 /Height 1 /ColorSpace /DeviceGray /BitsPerComponent 8", b"\x80");
        let bytes = doc(
            &[stream("", b"q 100 0 0 100 72 600 cm /Im1 Do Q")],
            "/XObject << /Im1 6 0 R >>",
            &[image],
            "",
        );
        let err = convert(&bytes).unwrap_err();
        assert!(err.to_string().contains("no extractable text"), "{err}");
    }

    #[test]
    fn self_drawing_forms_are_refused_not_a_stack_overflow() {
        let form = stream(
            "/Type /XObject /Subtype /Form /BBox [0 0 10 10]",
            b"/Fm1 Do",
        );
        let bytes = doc(
            &[stream("", b"/Fm1 Do")],
            "/XObject << /Fm1 6 0 R >>",
            &[form],
            "",
        );
        let err = convert(&bytes).unwrap_err();
        assert!(err.to_string().contains("cycle"), "{err}");
    }

    #[test]
    fn page_tree_cycles_are_refused() {
        let objects = vec![
            b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
            b"<< /Type /Pages /Kids [2 0 R 2 0 R] /Count 2 >>".to_vec(),
        ];
        let err = convert(&pdf(&objects, "")).unwrap_err();
        assert!(err.to_string().contains("cycle"), "{err}");
    }

    #[test]
    fn compression_bombs_are_measured_before_inflating() {
        let bomb = deflate(&vec![b' '; (MAX_STREAM + (1 << 20)) as usize]);
        let bytes = doc(&[stream("/Filter /FlateDecode", &bomb)], "", &[], "");
        let err = convert(&bytes).unwrap_err();
        assert!(matches!(err, FileError::TooLarge(_)), "{err:?}");
        assert!(err.to_string().contains("compression bomb"), "{err}");
    }

    #[test]
    fn garbage_and_truncation_are_clear_errors() {
        let good = doc(&[text(&["Some words on a page."])], "", &[], "");
        assert!(convert(&good).is_ok());
        for cut in [20, good.len() / 2, good.len() - 30] {
            // Truncated files may still yield their text (lopdf rebuilds the xref) or fail: never panic.
            let _ = convert(&good[..cut]);
        }
        assert!(matches!(convert(&good[..20]), Err(FileError::Corrupt(_))));
        let mut junk = b"%PDF-1.4\n".to_vec();
        let mut x = 0x2545_u32;
        for _ in 0..20_000 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            junk.push((x >> 16) as u8);
        }
        assert!(matches!(convert(&junk), Err(FileError::Corrupt(_))));
        assert!(matches!(convert(&junk[9..]), Err(FileError::Corrupt(_))));
    }
}
