//! Word documents (DOCX): `word/document.xml` streamed through quick-xml into markdown.
//! Headings come from paragraph styles (resolved through `word/styles.xml`, because localised
//! Word names its style ids "berschrift1" but keeps the name "heading 1"), list paragraphs
//! (`w:numPr`) become `- ` items, tables GFM tables; the title comes from `docProps/core.xml`.
//!
//! Bounded against zip bombs: the entry count is read from the end-of-directory record before
//! the archive is parsed, and no part is inflated past its cap. The body part is parsed as it
//! inflates, never held whole: memory stays at the longest stretch between two tags, which is
//! capped too ([`MAX_UNMARKED`]), so a 64 MiB body costs what a small one does.

use std::collections::HashMap;
use std::io::{BufReader, Cursor, Read};

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;
use trawl_text::collapse_whitespace;

use super::{Converted, FileError, DOCX_MIME};

/// More entries than any real document has (a large one has a few hundred).
pub(crate) const MAX_ENTRIES: usize = 10_000;
/// The body part may inflate to this much and no more.
pub(crate) const MAX_DOCUMENT_XML: u64 = 64 << 20;
/// Bytes of the body part between one `<` and the next: Word splits text into runs and writes
/// images to parts of their own, so more than this is a bomb of text (or zeros), not a document.
pub(crate) const MAX_UNMARKED: u64 = 4 << 20;
const MAX_SIDE_PART: u64 = 8 << 20;

pub fn convert(bytes: &[u8]) -> Result<Converted, FileError> {
    let corrupt = |why: String| FileError::Corrupt(why);
    if let Some(n) = declared_entries(bytes) {
        if n > MAX_ENTRIES {
            return Err(corrupt(format!(
                "a zip of {n} entries is not a Word document"
            )));
        }
    }
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes))
        .map_err(|e| corrupt(format!("not a readable zip: {e}")))?;
    if archive.len() > MAX_ENTRIES {
        return Err(corrupt(format!(
            "a zip of {} entries is not a Word document",
            archive.len()
        )));
    }
    // Side parts are optional: a broken one costs headings or the title, not the document.
    let styles = read_part(&mut archive, "word/styles.xml", MAX_SIDE_PART)
        .ok()
        .flatten()
        .map(|xml| paragraph_styles(&xml))
        .unwrap_or_default();
    let core_title = read_part(&mut archive, "docProps/core.xml", MAX_SIDE_PART)
        .ok()
        .flatten()
        .and_then(|xml| core_title(&xml));
    let document = match archive.by_name("word/document.xml") {
        Ok(part) => part,
        Err(zip::result::ZipError::FileNotFound) => {
            return Err(corrupt("no word/document.xml: not a Word document".into()))
        }
        Err(e) => return Err(corrupt(format!("word/document.xml: {e}"))),
    };

    let mut reader = Reader::from_reader(BufReader::new(Inflating::new(document)));
    let mut body = Body::new(&styles);
    if let Err(e) = body.run(&mut reader) {
        return Err(match reader.get_ref().get_ref().breach {
            Some(why) => FileError::TooLarge(format!("word/document.xml {why} (a zip bomb?)")),
            None => corrupt(format!("word/document.xml is not well-formed XML: {e}")),
        });
    }
    let mut text = body.out;
    if text.trim().is_empty() {
        return Err(corrupt("no text in the document".into()));
    }
    super::cap(&mut text);
    Ok(Converted {
        mime: DOCX_MIME.into(),
        title: core_title.or(body.first_title),
        text,
        pages: None,
    })
}

/// The entry count from the end-of-central-directory record; `usize::MAX` for ZIP64 (no Word
/// document needs it); `None` when the record is not found (the zip crate then says why).
fn declared_entries(bytes: &[u8]) -> Option<usize> {
    // The record is 22 bytes plus a comment of at most 64 KiB, at the very end.
    let tail_start = bytes.len().saturating_sub(22 + 0xffff);
    let tail = &bytes[tail_start..];
    let at = (0..tail.len().saturating_sub(21))
        .rev()
        .find(|&i| tail[i..].starts_with(b"PK\x05\x06"))?;
    let n = u16::from_le_bytes([tail[at + 10], tail[at + 11]]);
    Some(if n == 0xffff {
        usize::MAX
    } else {
        usize::from(n)
    })
}

fn read_part(
    archive: &mut zip::ZipArchive<Cursor<&[u8]>>,
    name: &str,
    limit: u64,
) -> Result<Option<String>, FileError> {
    let file = match archive.by_name(name) {
        Ok(f) => f,
        Err(zip::result::ZipError::FileNotFound) => return Ok(None),
        Err(e) => return Err(FileError::Corrupt(format!("{name}: {e}"))),
    };
    let mut buf = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut buf)
        .map_err(|e| FileError::Corrupt(format!("{name}: {e}")))?;
    if buf.len() as u64 > limit {
        return Err(FileError::TooLarge(format!(
            "{name} inflates past {} MiB (a zip bomb?)",
            limit >> 20
        )));
    }
    // Not `from_utf8_lossy(..).into_owned()`: that copies a valid part, up to the whole cap.
    Ok(Some(String::from_utf8(buf).unwrap_or_else(|e| {
        String::from_utf8_lossy(e.as_bytes()).into_owned()
    })))
}

/// The body part as it inflates, ended by an error past [`MAX_DOCUMENT_XML`] bytes in all or
/// [`MAX_UNMARKED`] bytes without a `<`; `breach` says which.
struct Inflating<R> {
    part: R,
    total: u64,
    unmarked: u64,
    breach: Option<&'static str>,
}

impl<R: Read> Inflating<R> {
    fn new(part: R) -> Self {
        Inflating {
            part,
            total: 0,
            unmarked: 0,
            breach: None,
        }
    }
}

impl<R: Read> Read for Inflating<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.part.read(buf)?;
        let read = &buf[..n];
        self.total += n as u64;
        self.unmarked = match read.iter().rposition(|&b| b == b'<') {
            Some(at) => (n - at - 1) as u64,
            None => self.unmarked + n as u64,
        };
        self.breach = if self.total > MAX_DOCUMENT_XML {
            Some("inflates past 64 MiB")
        } else if self.unmarked > MAX_UNMARKED {
            Some("holds over 4 MiB without markup")
        } else {
            return Ok(n);
        };
        Err(std::io::Error::other("the part is too large"))
    }
}

/// The value of the attribute whose local name is `local` (`w:val` → `val`).
fn attr(e: &BytesStart, local: &str) -> Option<String> {
    e.attributes()
        .with_checks(false)
        .flatten()
        .find(|a| a.key.local_name().as_ref() == local)
        .and_then(|a| {
            a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                .ok()
                .map(|v| v.into_owned())
        })
}

fn local(e: &BytesStart) -> String {
    e.local_name().as_ref().to_owned()
}

/// What a paragraph style makes of its paragraphs.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Style {
    heading: Option<usize>,
    /// Numbered by the style itself ("List Bullet" carries its `w:numPr`).
    list: bool,
}

/// Style id → what it means: Title is heading 1, "heading N" is N, else the style's outline
/// level; a list when the style has numbering or is one of Word's list styles.
fn paragraph_styles(xml: &str) -> HashMap<String, Style> {
    let mut map = HashMap::new();
    let mut reader = Reader::from_str(xml);
    let (mut id, mut name, mut outline) = (None::<String>, String::new(), None::<usize>);
    let mut numbered = false;
    loop {
        match reader.read_event() {
            Ok(Event::Start(e) | Event::Empty(e)) => match local(&e).as_str() {
                "style" => {
                    id = attr(&e, "styleId");
                    name.clear();
                    outline = None;
                    numbered = false;
                }
                "numPr" => numbered = true,
                "name" => name = attr(&e, "val").unwrap_or_default().to_ascii_lowercase(),
                "outlineLvl" => outline = attr(&e, "val").and_then(|v| v.parse().ok()),
                _ => {}
            },
            Ok(Event::End(e)) if e.local_name().as_ref() == "style" => {
                let heading = if name == "title" {
                    Some(1)
                } else if let Some(n) = name.strip_prefix("heading ") {
                    n.trim().parse().ok()
                } else {
                    // Outline level 9 is body text.
                    outline.filter(|&l| l < 9).map(|l| l + 1)
                };
                let list =
                    numbered || name.starts_with("list bullet") || name.starts_with("list number");
                if let Some(id) = id.take() {
                    map.insert(id, Style { heading, list });
                }
            }
            Ok(Event::Eof) | Err(_) => return map,
            _ => {}
        }
    }
}

fn core_title(xml: &str) -> Option<String> {
    let mut reader = Reader::from_str(xml);
    let mut in_title = false;
    let mut title = String::new();
    loop {
        match reader.read_event() {
            Ok(Event::Start(e)) if e.local_name().as_ref() == "title" => in_title = true,
            Ok(Event::End(e)) if e.local_name().as_ref() == "title" => break,
            Ok(Event::Text(t)) if in_title => title.push_str(&t),
            Ok(Event::GeneralRef(r)) if in_title => title.push_str(&resolve(&r)),
            Ok(Event::Eof) | Err(_) => break,
            _ => {}
        }
    }
    let title = title.trim();
    (!title.is_empty()).then(|| title.to_owned())
}

fn resolve(r: &quick_xml::events::BytesRef) -> String {
    match r.resolve_char_ref() {
        Ok(Some(c)) => c.to_string(),
        _ => quick_xml::escape::resolve_predefined_entity(r)
            .unwrap_or("")
            .to_owned(),
    }
}

#[derive(Default)]
struct Para {
    style: Option<String>,
    outline: Option<usize>,
    list_level: Option<usize>,
    text: String,
}

#[derive(Default)]
struct Table {
    rows: Vec<Vec<String>>,
    row: Vec<String>,
    cell: Vec<String>,
    span: usize,
}

#[derive(PartialEq)]
enum Block {
    None,
    Para,
    ListItem,
}

struct Body<'s> {
    styles: &'s HashMap<String, Style>,
    out: String,
    first_title: Option<String>,
    paras: Vec<Para>,
    tables: Vec<Table>,
    /// Inside `w:t`: the only element whose text is document text.
    in_text: bool,
    /// Inside `w:r`: a `w:tab` there is a tab character, elsewhere a tab stop definition.
    runs: usize,
    /// Depth inside `mc:Fallback`, which repeats its `mc:Choice` for old readers.
    skip: usize,
    last: Block,
}

impl<'s> Body<'s> {
    fn new(styles: &'s HashMap<String, Style>) -> Self {
        Body {
            styles,
            out: String::new(),
            first_title: None,
            paras: Vec::new(),
            tables: Vec::new(),
            in_text: false,
            runs: 0,
            skip: 0,
            last: Block::None,
        }
    }

    fn run<R: std::io::BufRead>(&mut self, reader: &mut Reader<R>) -> Result<(), quick_xml::Error> {
        let mut buf = Vec::new();
        loop {
            buf.clear();
            let event = reader.read_event_into(&mut buf)?;
            if self.skip > 0 {
                match event {
                    Event::Start(_) => self.skip += 1,
                    Event::End(_) => self.skip -= 1,
                    Event::Eof => return Ok(()),
                    _ => {}
                }
                continue;
            }
            match event {
                Event::Start(e) => self.start(&e, false),
                Event::Empty(e) => self.start(&e, true),
                Event::End(e) => self.end(e.local_name().as_ref()),
                Event::Text(t) if self.in_text => self.push(&t),
                Event::GeneralRef(r) if self.in_text => self.push(&resolve(&r)),
                Event::Eof => return Ok(()),
                _ => {}
            }
            if self.out.len() > super::MAX_TEXT {
                return Ok(());
            }
        }
    }

    fn push(&mut self, s: &str) {
        if let Some(p) = self.paras.last_mut() {
            p.text.push_str(s);
        }
    }

    fn start(&mut self, e: &BytesStart, empty: bool) {
        let name = local(e);
        match name.as_str() {
            "Fallback" if !empty => self.skip = 1,
            "p" => {
                self.paras.push(Para::default());
                if empty {
                    self.end("p");
                }
            }
            "pStyle" => {
                if let Some(p) = self.paras.last_mut() {
                    p.style = attr(e, "val");
                }
            }
            "outlineLvl" => {
                if let Some(p) = self.paras.last_mut() {
                    p.outline = attr(e, "val").and_then(|v| v.parse().ok());
                }
            }
            "numPr" => {
                if let Some(p) = self.paras.last_mut() {
                    p.list_level.get_or_insert(0);
                }
            }
            "ilvl" => {
                if let Some(p) = self.paras.last_mut() {
                    p.list_level = Some(attr(e, "val").and_then(|v| v.parse().ok()).unwrap_or(0));
                }
            }
            "r" if !empty => self.runs += 1,
            "t" if !empty => self.in_text = true,
            "tab" if self.runs > 0 => self.push("\t"),
            "br" | "cr" if self.runs > 0 => self.push("\n"),
            "tbl" if !empty => self.tables.push(Table::default()),
            "tr" => {
                if let Some(t) = self.tables.last_mut() {
                    t.row.clear();
                }
            }
            "tc" => {
                if let Some(t) = self.tables.last_mut() {
                    t.cell.clear();
                    t.span = 1;
                }
            }
            "gridSpan" => {
                if let Some(t) = self.tables.last_mut() {
                    t.span = attr(e, "val")
                        .and_then(|v| v.parse().ok())
                        .unwrap_or(1)
                        .clamp(1, 64);
                }
            }
            _ => {}
        }
    }

    fn end(&mut self, name: &str) {
        match name {
            "t" => self.in_text = false,
            "r" => self.runs = self.runs.saturating_sub(1),
            "p" => {
                if let Some(p) = self.paras.pop() {
                    self.paragraph(p);
                }
            }
            "tc" => {
                if let Some(t) = self.tables.last_mut() {
                    let cell = std::mem::take(&mut t.cell).join("<br>");
                    t.row.push(cell);
                    for _ in 1..t.span {
                        t.row.push(String::new());
                    }
                }
            }
            "tr" => {
                if let Some(t) = self.tables.last_mut() {
                    let row = std::mem::take(&mut t.row);
                    t.rows.push(row);
                }
            }
            "tbl" => {
                if let Some(t) = self.tables.pop() {
                    self.table(t);
                }
            }
            _ => {}
        }
    }

    fn style(&self, p: &Para) -> Style {
        let Some(id) = p.style.as_deref() else {
            return Style::default();
        };
        self.styles.get(id).copied().unwrap_or_else(|| {
            // No styles.xml: Word's own ids.
            let lower = id.to_ascii_lowercase();
            Style {
                heading: if lower == "title" {
                    Some(1)
                } else {
                    lower.strip_prefix("heading").and_then(|n| n.parse().ok())
                },
                list: lower.starts_with("listbullet") || lower.starts_with("listnumber"),
            }
        })
    }

    fn paragraph(&mut self, p: Para) {
        let text = p
            .text
            .split('\n')
            .map(collapse_whitespace)
            .collect::<Vec<_>>();
        let text = text.join("\n");
        let text = text.trim();
        if text.is_empty() {
            return;
        }
        if let Some(t) = self.tables.last_mut() {
            t.cell.push(text.replace('\n', "<br>"));
            return;
        }
        let style = self.style(&p);
        let level = style
            .heading
            .or(p.outline.filter(|&l| l < 9).map(|l| l + 1))
            .map(|l| l.clamp(1, 6));
        let list_level = p.list_level.or(style.list.then_some(0));
        if level == Some(1) && self.first_title.is_none() {
            self.first_title = Some(text.replace('\n', " "));
        }
        let (block, line) = match (level, list_level) {
            (Some(n), _) => (
                Block::Para,
                format!("{} {}", "#".repeat(n), text.replace('\n', " ")),
            ),
            (None, Some(depth)) => (
                Block::ListItem,
                format!("{}- {}", "  ".repeat(depth.min(8)), text.replace('\n', " ")),
            ),
            // A soft line break inside a paragraph stays one (markdown: two spaces).
            (None, None) => (Block::Para, text.replace('\n', "  \n")),
        };
        self.separate(&block);
        self.out.push_str(&line);
        self.last = block;
    }

    /// Blank line between blocks, but list items of one list stay together.
    fn separate(&mut self, next: &Block) {
        match (&self.last, next) {
            (Block::None, _) => {}
            (Block::ListItem, Block::ListItem) => self.out.push('\n'),
            _ => self.out.push_str("\n\n"),
        }
    }

    fn table(&mut self, t: Table) {
        let width = t.rows.iter().map(Vec::len).max().unwrap_or(0);
        if width == 0 {
            return;
        }
        let cell = |s: &str| s.replace('|', "\\|");
        let render = |row: &[String]| {
            let mut line = String::from("|");
            for i in 0..width {
                line.push(' ');
                line.push_str(&cell(row.get(i).map_or("", String::as_str)));
                line.push_str(" |");
            }
            line
        };
        let mut lines = vec![render(&t.rows[0])];
        lines.push(format!("|{}", " --- |".repeat(width)));
        lines.extend(t.rows[1..].iter().map(|r| render(r)));
        if let Some(outer) = self.tables.last_mut() {
            // A table in a table cell: its rows as lines of the cell.
            let flat: Vec<String> = t.rows.iter().map(|r| r.join(" · ")).collect();
            outer.cell.push(flat.join("<br>"));
            return;
        }
        self.separate(&Block::Para);
        self.out.push_str(&lines.join("\n"));
        self.last = Block::Para;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use zip::write::SimpleFileOptions;

    const W: &str = r#"xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main""#;

    fn docx(parts: &[(&str, &str)]) -> Vec<u8> {
        let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let opts = SimpleFileOptions::default();
        for (name, body) in parts {
            zip.start_file(*name, opts).unwrap();
            zip.write_all(body.as_bytes()).unwrap();
        }
        zip.finish().unwrap().into_inner()
    }

    fn p(style: &str, text: &str) -> String {
        let ppr = if style.is_empty() {
            String::new()
        } else {
            format!(r#"<w:pPr><w:pStyle w:val="{style}"/></w:pPr>"#)
        };
        format!("<w:p>{ppr}<w:r><w:t xml:space=\"preserve\">{text}</w:t></w:r></w:p>")
    }

    fn cell(text: &str) -> String {
        format!("<w:tc><w:tcPr/>{}</w:tc>", p("", text))
    }

    fn document(body: &str) -> String {
        format!(
            r#"<?xml version="1.0"?><w:document {W}><w:body>{body}<w:sectPr/></w:body></w:document>"#
        )
    }

    #[test]
    fn headings_lists_tables_and_title() {
        let list = r#"<w:p><w:pPr><w:pStyle w:val="ListBullet"/><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr></w:pPr><w:r><w:t>one</w:t></w:r></w:p>"#;
        let body = [
            p("Title", "Kestrel Brief"),
            p("Heading1", "Findings"),
            p("", "Counts rose &amp; fell."),
            list.to_owned(),
            list.replace("one", "two"),
            format!(
                "<w:tbl><w:tr>{}{}</w:tr><w:tr>{}{}</w:tr></w:tbl>",
                cell("Site"),
                cell("Pairs"),
                cell("North|East"),
                cell("210")
            ),
            "<w:p><w:r><w:t>After</w:t></w:r><w:r><w:tab/></w:r><w:r><w:t>the table.</w:t></w:r></w:p>".to_owned(),
            "<w:p><mc:AlternateContent><mc:Choice><w:r><w:t>shown</w:t></w:r></mc:Choice><mc:Fallback><w:r><w:t>twice</w:t></w:r></mc:Fallback></mc:AlternateContent></w:p>".to_owned(),
        ]
        .concat();
        let bytes = docx(&[
            ("[Content_Types].xml", "<Types/>"),
            ("word/document.xml", &document(&body)),
            (
                "docProps/core.xml",
                r#"<cp:coreProperties xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Brief &#x2013; 2023</dc:title></cp:coreProperties>"#,
            ),
        ]);
        let out = convert(&bytes).unwrap();
        assert_eq!(out.title.as_deref(), Some("Brief – 2023"));
        assert_eq!(out.mime, DOCX_MIME);
        assert_eq!(
            out.text,
            "# Kestrel Brief\n\n# Findings\n\nCounts rose & fell.\n\n- one\n- two\n\n\
             | Site | Pairs |\n| --- | --- |\n| North\\|East | 210 |\n\nAfter the table.\n\nshown"
        );
    }

    #[test]
    fn heading_levels_come_from_styles_xml() {
        let styles = format!(
            r#"<w:styles {W}><w:style w:styleId="berschrift2"><w:name w:val="heading 2"/></w:style><w:style w:styleId="Custom"><w:name w:val="Mine"/><w:pPr><w:outlineLvl w:val="2"/></w:pPr></w:style><w:style w:styleId="Aufz"><w:name w:val="List Bullet"/></w:style><w:style w:styleId="Num"><w:name w:val="Mine"/><w:pPr><w:numPr><w:numId w:val="3"/></w:numPr></w:pPr></w:style></w:styles>"#
        );
        let body = [
            p("berschrift2", "Zwei"),
            p("Custom", "Drei"),
            p("Normal", "Text"),
            p("Aufz", "a"),
            p("Num", "b"),
        ]
        .concat();
        let bytes = docx(&[
            ("word/document.xml", &document(&body)),
            ("word/styles.xml", &styles),
        ]);
        assert_eq!(
            convert(&bytes).unwrap().text,
            "## Zwei\n\n### Drei\n\nText\n\n- a\n- b"
        );
    }

    #[test]
    fn not_a_document() {
        let zip = docx(&[("hello.txt", "hi")]);
        assert!(convert(&zip)
            .unwrap_err()
            .to_string()
            .contains("no word/document.xml"));
        assert!(convert(b"PK\x03\x04 truncated").is_err());
        let bad = docx(&[("word/document.xml", "<w:document><w:body><w:p></w:body>")]);
        assert!(matches!(convert(&bad), Err(FileError::Corrupt(_))));
    }

    #[test]
    fn zip_bomb_stops_at_the_cap() {
        let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let opts =
            SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        zip.start_file("word/document.xml", opts).unwrap();
        let chunk = vec![b' '; 1 << 20];
        for _ in 0..(MAX_DOCUMENT_XML >> 20) + 2 {
            zip.write_all(&chunk).unwrap();
        }
        let bytes = zip.finish().unwrap().into_inner();
        assert!(bytes.len() < 1 << 20, "the bomb is small: {}", bytes.len());
        let err = convert(&bytes).unwrap_err();
        assert!(matches!(err, FileError::TooLarge(_)), "{err:?}");
        assert!(err.to_string().contains("without markup"), "{err}");
        assert!(err.to_string().contains("zip bomb"), "{err}");
    }

    #[test]
    fn the_body_part_is_cut_off_past_its_cap_however_marked_up() {
        let mut part = Inflating::new(std::io::repeat(b'<').take(MAX_DOCUMENT_XML + 1));
        assert!(std::io::copy(&mut part, &mut std::io::sink()).is_err());
        assert_eq!(part.breach, Some("inflates past 64 MiB"));
        let mut part = Inflating::new(std::io::repeat(b'<').take(MAX_DOCUMENT_XML));
        assert_eq!(
            std::io::copy(&mut part, &mut std::io::sink()).unwrap(),
            MAX_DOCUMENT_XML
        );
    }

    #[test]
    fn absurd_entry_counts_are_refused_before_parsing() {
        let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let opts = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
        for i in 0..=MAX_ENTRIES {
            zip.start_file(format!("{i}"), opts).unwrap();
        }
        let bytes = zip.finish().unwrap().into_inner();
        let err = convert(&bytes).unwrap_err();
        assert!(err.to_string().contains("entries"), "{err}");
    }
}
