//! Files as text: what a downloaded body or a document is ([`sniff`], [`hopeless`]), its text in
//! whatever charset it came ([`decode`]), and the text of files that are not HTML as markdown
//! ([`convert`]), because clean passes non-HTML bodies through as markdown. Fetch reads files on
//! the web with it, and `trawl-documents` the files of a documents root.
//!
//! - `charset`: [`decode`], by the header, the page's `<meta>` or the detector.
//! - [`pdf`]: PDF text per page, with `<!-- page N -->` markers for citations.
//! - [`html_text`]: the words of an HTML document, for a search index.
//! - [`docx`]: Word documents: headings, lists, tables.
//! - [`table`]: CSV and TSV as GFM tables.
//! - plain text, markdown and JSON here.
//!
//! Crates, chosen by measuring on PDFs from fpdf2 (core and embedded TrueType fonts), ReportLab
//! and Chromium's print-to-PDF, plus a hand-made TeX-style PDF whose words are placed by `TJ`
//! offsets and `Td` moves:
//! - `pdf-extract` (37 crates on top of this crate's tree, its own `lopdf` 0.42 among them) over
//!   `lopdf` 0.47 alone (33): both decode the font encodings of all four producers, but only
//!   pdf-extract places text by position, so it keeps the blank line between paragraphs and the
//!   spaces between words set by `Td` (lopdf's `extract_text` ran "Second page words" together as
//!   "Secondpagewords" and drops every paragraph break). Its text device is ours ([`pdf`]): the
//!   stock one doubles spaces and cannot be bounded.
//! - `zip` with only `deflate-flate2` (inflate through the `flate2` already in the tree; the
//!   `deflate` feature would add zopfli and zlib-rs for compression we never do), `quick-xml`
//!   (no dependencies) for WordprocessingML; CSV by hand (the quoting rules fit in 60 lines).
//!
//! Everything here is CPU-bound and bounded: callers run [`convert`] in `spawn_blocking`.

mod charset;
mod docx;
mod html;
mod pdf;
mod table;

pub use charset::{decode, tld_of};
pub use html::html_text;

use url::Url;

/// At most this much markdown comes out of one file (bytes); the rest is cut with a note.
pub const MAX_TEXT: usize = 5 << 20;

/// What a downloaded body is: magic bytes first, then the Content-Type, then the URL's extension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    Html,
    Text,
    Markdown,
    Json,
    Csv,
    Tsv,
    Pdf,
    Docx,
    /// Nothing we can read; the mime type we name it by (for the outcome's reason).
    Unsupported(String),
}

/// A file's text as markdown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Converted {
    /// What the file was, e.g. `application/pdf`, `text/csv`.
    pub mime: String,
    pub title: Option<String>,
    pub text: String,
    /// Pages read, for PDFs.
    pub pages: Option<usize>,
}

impl Converted {
    /// The text under the file's own title as its heading, when it has one: clean takes a
    /// file's title from its first heading, and the job's sources list names it so.
    pub fn titled(self) -> String {
        match self.title.as_deref().map(str::trim) {
            Some(title) if !title.is_empty() && !self.text.starts_with("# ") => {
                format!("# {title}\n\n{}", self.text)
            }
            _ => self.text,
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FileError {
    /// A format we do not read (the mime type).
    #[error("unsupported file type {0}")]
    Unsupported(String),
    /// The bytes are not what they claim, or are hostile (cycles, no text).
    #[error("unreadable file: {0}")]
    Corrupt(String),
    /// Fine on the wire, too big once inflated (zip and compression bombs): like a body over
    /// `fetch.max_bytes`, the URL ends as `too_large`.
    #[error("too large: {0}")]
    TooLarge(String),
}

const DOCX_MIME: &str = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

/// Types that say nothing: the bytes and the extension decide.
fn is_generic(mime: &str) -> bool {
    matches!(
        mime,
        "" | "application/octet-stream"
            | "binary/octet-stream"
            | "application/unknown"
            | "application/x-unknown"
            | "application/download"
            | "application/force-download"
            | "application/x-download"
    )
}

/// `head` = the first bytes of the body (at least the first 512 when available; the whole body
/// lets a ZIP be recognised as DOCX by its entry names), `content_type` = the raw header value,
/// `url` = final URL.
pub fn sniff(head: &[u8], content_type: &str, url: &Url) -> Kind {
    let mime = mime_of(content_type);
    let ext = extension(url);
    if let Some(kind) = by_magic(head, &mime, &ext) {
        return kind;
    }
    let Some(kind) = by_mime(&mime, &ext).or_else(|| by_extension(&ext)) else {
        return if weak_html(head) {
            Kind::Html
        } else if looks_like_text(head) {
            Kind::Text
        } else {
            Kind::Unsupported("application/octet-stream".into())
        };
    };
    // A body whose first tag is a weak HTML sign (`<p>`, `<!--` …) is HTML unless its type or
    // extension names a text format, where such a start is ordinary (READMEs open with `<p
    // align=center>`). Strong signs were handled by `by_magic`.
    let text_format = matches!(
        kind,
        Kind::Text | Kind::Markdown | Kind::Csv | Kind::Tsv | Kind::Json
    );
    if weak_html(head) && !text_format {
        return Kind::Html;
    }
    kind
}

/// True when a declared Content-Type already says the body is nothing we can use, so the
/// download can stop before the body is read. False for generic and empty types: the bytes
/// decide those.
pub fn hopeless(content_type: &str, url: &Url) -> bool {
    let mime = mime_of(content_type);
    if ["image/", "video/", "audio/", "font/", "model/"]
        .iter()
        .any(|p| mime.starts_with(p))
        || mime.starts_with("application/font-")
        || mime.starts_with("application/x-font")
    {
        return true;
    }
    match mime.as_str() {
        // A .docx is a zip, and some servers say so.
        "application/zip" | "application/x-zip-compressed" | "application/x-zip" => {
            extension(url) != "docx"
        }
        _ => UNREADABLE.contains(&mime.as_str()),
    }
}

/// Declared types of archives, executables and office formats we do not read.
const UNREADABLE: &[&str] = &[
    "application/gzip",
    "application/x-gzip",
    "application/x-tar",
    "application/x-bzip2",
    "application/x-xz",
    "application/zstd",
    "application/x-7z-compressed",
    "application/x-rar-compressed",
    "application/vnd.rar",
    "application/java-archive",
    "application/vnd.android.package-archive",
    "application/x-msdownload",
    "application/x-executable",
    "application/x-sharedlib",
    "application/x-iso9660-image",
    "application/x-apple-diskimage",
    "application/wasm",
    "application/x-shockwave-flash",
    "application/msword",
    "application/vnd.ms-excel",
    "application/vnd.ms-powerpoint",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "application/vnd.oasis.opendocument.text",
    "application/vnd.oasis.opendocument.spreadsheet",
    "application/vnd.oasis.opendocument.presentation",
    "application/epub+zip",
];

/// Converts a non-HTML body to markdown. `content_type` gives the charset of text kinds. Never
/// panics and stays bounded in memory, time and output on hostile input.
pub fn convert(kind: &Kind, bytes: &[u8], content_type: &str) -> Result<Converted, FileError> {
    match kind {
        Kind::Html => Err(FileError::Unsupported("text/html".into())),
        Kind::Unsupported(mime) => Err(FileError::Unsupported(mime.clone())),
        Kind::Pdf => pdf::convert(bytes),
        Kind::Docx => docx::convert(bytes),
        Kind::Csv => table::convert(&text_of(bytes, content_type), b',', "text/csv"),
        Kind::Tsv => table::convert(
            &text_of(bytes, content_type),
            b'\t',
            "text/tab-separated-values",
        ),
        Kind::Json => Ok(json(&text_of(bytes, content_type))),
        Kind::Text => Ok(plain(text_of(bytes, content_type), "text/plain", None)),
        Kind::Markdown => {
            let text = text_of(bytes, content_type);
            let title = text.lines().find_map(|l| {
                let t = l.strip_prefix("# ")?.trim();
                (!t.is_empty()).then(|| t.to_owned())
            });
            Ok(plain(text, "text/markdown", title))
        }
    }
}

/// Decoded per the charset, without BOM, with `\n` line ends; copied again only when a line
/// end needs rewriting (a 10 MB file would otherwise exist four times over).
fn text_of(bytes: &[u8], content_type: &str) -> String {
    let mut text = decode(bytes, content_type, None);
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    if text.contains('\r') {
        text = text.replace("\r\n", "\n").replace('\r', "\n");
    }
    text
}

fn plain(mut text: String, mime: &str, title: Option<String>) -> Converted {
    cap(&mut text);
    Converted {
        mime: mime.into(),
        title,
        text,
        pages: None,
    }
}

/// Valid JSON becomes a pretty-printed fenced block (keys sorted: serde_json's map without
/// `preserve_order`, a feature not worth a workspace-wide change); anything else is plain text.
fn json(text: &str) -> Converted {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(text) else {
        return plain(text.to_owned(), "text/plain", None);
    };
    let mut pretty = serde_json::to_string_pretty(&value).unwrap_or_else(|_| text.to_owned());
    cap(&mut pretty);
    Converted {
        mime: "application/json".into(),
        title: None,
        text: format!("```json\n{pretty}\n```\n"),
        pages: None,
    }
}

/// Cuts `text` to [`MAX_TEXT`] bytes on a char boundary, saying so.
pub(crate) fn cap(text: &mut String) -> bool {
    if text.len() <= MAX_TEXT {
        return false;
    }
    let mut end = MAX_TEXT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push_str("\n\n<!-- truncated: the file's text goes on past 5 MB -->\n");
    true
}

/// The media type of a Content-Type value, lowercase, without parameters.
pub fn mime_of(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// The final path segment's extension, lowercase; empty when there is none.
fn extension(url: &Url) -> String {
    let last = url
        .path_segments()
        .and_then(|mut s| s.next_back())
        .unwrap_or("");
    match last.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => ext.to_ascii_lowercase(),
        _ => String::new(),
    }
}

fn by_magic(head: &[u8], mime: &str, ext: &str) -> Option<Kind> {
    let unsupported = |m: &str| Some(Kind::Unsupported(m.into()));
    let trimmed = trim_start(head);
    if trimmed.starts_with(b"%PDF-") {
        return Some(Kind::Pdf);
    }
    if head.starts_with(b"PK\x03\x04") {
        return Some(zip_kind(head, mime, ext));
    }
    const SIGNATURES: &[(&[u8], &str)] = &[
        (b"\x89PNG\r\n\x1a\n", "image/png"),
        (b"\xff\xd8\xff", "image/jpeg"),
        (b"GIF87a", "image/gif"),
        (b"GIF89a", "image/gif"),
        (b"II*\0", "image/tiff"),
        (b"MM\0*", "image/tiff"),
        (b"\0\0\x01\0", "image/x-icon"),
        (b"\x1f\x8b", "application/gzip"),
        (b"BZh", "application/x-bzip2"),
        (b"\xfd7zXZ\0", "application/x-xz"),
        (b"\x28\xb5\x2f\xfd", "application/zstd"),
        (b"7z\xbc\xaf\x27\x1c", "application/x-7z-compressed"),
        (b"Rar!\x1a\x07", "application/vnd.rar"),
        (
            b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1",
            "application/x-ole-storage",
        ),
        (b"{\\rtf", "application/rtf"),
        (b"%!PS", "application/postscript"),
        (b"\x7fELF", "application/x-executable"),
        (b"\0asm", "application/wasm"),
        (b"OggS", "audio/ogg"),
        (b"ID3", "audio/mpeg"),
        (b"fLaC", "audio/flac"),
        (b"\x1a\x45\xdf\xa3", "video/webm"),
        (b"wOFF", "font/woff"),
        (b"wOF2", "font/woff2"),
    ];
    if let Some((_, m)) = SIGNATURES.iter().find(|(sig, _)| head.starts_with(sig)) {
        return unsupported(m);
    }
    if head.len() >= 12 && &head[..4] == b"RIFF" {
        return match &head[8..12] {
            b"WEBP" => unsupported("image/webp"),
            b"WAVE" => unsupported("audio/wav"),
            b"AVI " => unsupported("video/x-msvideo"),
            _ => unsupported("application/octet-stream"),
        };
    }
    if head.len() >= 12 && &head[4..8] == b"ftyp" {
        return unsupported(
            if head[8..12].starts_with(b"avi") || &head[8..12] == b"heic" {
                "image/avif"
            } else {
                "video/mp4"
            },
        );
    }
    if strong_html(trimmed) {
        return Some(Kind::Html);
    }
    None
}

/// A ZIP is a DOCX when its type, extension or entry names say so.
fn zip_kind(head: &[u8], mime: &str, ext: &str) -> Kind {
    if mime == DOCX_MIME || ext == "docx" || contains(head, b"word/document.xml") {
        return Kind::Docx;
    }
    let named = match ext {
        "xlsx" => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "pptx" => "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "odt" => "application/vnd.oasis.opendocument.text",
        "epub" => "application/epub+zip",
        "jar" => "application/java-archive",
        _ if !is_generic(mime) && mime.starts_with("application/") => mime,
        _ => "application/zip",
    };
    Kind::Unsupported(named.into())
}

fn by_mime(mime: &str, ext: &str) -> Option<Kind> {
    if is_generic(mime) {
        return None;
    }
    Some(match mime {
        "text/html" | "application/xhtml+xml" => Kind::Html,
        "text/markdown" | "text/x-markdown" => Kind::Markdown,
        // Raw-file servers say text/plain for everything: a text extension is more precise.
        "text/plain" => match by_extension(ext) {
            Some(k @ (Kind::Markdown | Kind::Csv | Kind::Tsv | Kind::Json)) => k,
            _ => Kind::Text,
        },
        "text/csv" | "application/csv" | "text/comma-separated-values" => Kind::Csv,
        "text/tab-separated-values" | "text/tsv" => Kind::Tsv,
        "application/json" | "text/json" => Kind::Json,
        m if m.ends_with("+json") => Kind::Json,
        "application/pdf" | "application/x-pdf" | "application/acrobat" => Kind::Pdf,
        DOCX_MIME => Kind::Docx,
        m if m.starts_with("text/")
            && !matches!(m, "text/xml" | "text/css" | "text/javascript") =>
        {
            Kind::Text
        }
        m => Kind::Unsupported(m.to_owned()),
    })
}

fn by_extension(ext: &str) -> Option<Kind> {
    Some(match ext {
        "html" | "htm" | "xhtml" | "shtml" => Kind::Html,
        "txt" | "text" => Kind::Text,
        "md" | "markdown" => Kind::Markdown,
        "json" => Kind::Json,
        "csv" => Kind::Csv,
        "tsv" | "tab" => Kind::Tsv,
        "pdf" => Kind::Pdf,
        "docx" => Kind::Docx,
        _ => return None,
    })
}

/// Skips a UTF-8 BOM and leading ASCII whitespace.
fn trim_start(head: &[u8]) -> &[u8] {
    let head = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    let start = head
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(head.len());
    &head[start..]
}

/// Starts that only HTML has.
fn strong_html(trimmed: &[u8]) -> bool {
    let lower: Vec<u8> = trimmed
        .iter()
        .take(16)
        .map(u8::to_ascii_lowercase)
        .collect();
    [&b"<!doctype html"[..], b"<html", b"<head"]
        .iter()
        .any(|sig| lower.starts_with(sig) && tag_ends(&lower, sig.len()))
        || (lower.starts_with(b"<?xml") && contains(&trimmed[..trimmed.len().min(1024)], b"<html"))
}

/// Starts that HTML usually has (the WHATWG sniffing list), but a markdown file may too.
fn weak_html(head: &[u8]) -> bool {
    let lower: Vec<u8> = trim_start(head)
        .iter()
        .take(16)
        .map(u8::to_ascii_lowercase)
        .collect();
    const TAGS: &[&[u8]] = &[
        b"<body", b"<script", b"<iframe", b"<h1", b"<div", b"<font", b"<table", b"<a", b"<style",
        b"<title", b"<b", b"<br", b"<p", b"<!--", b"<meta",
    ];
    TAGS.iter()
        .any(|sig| lower.starts_with(sig) && tag_ends(&lower, sig.len()))
}

/// The byte after a tag name is a space or `>`, so `<p` does not match `<pre`… or `<!--x`.
fn tag_ends(lower: &[u8], at: usize) -> bool {
    lower[..at].ends_with(b"--")
        || matches!(lower.get(at), Some(b' ' | b'>' | b'\t' | b'\n' | b'\r'))
}

/// No NUL and few control bytes in the head: text in some ASCII-compatible encoding.
fn looks_like_text(head: &[u8]) -> bool {
    let head = &head[..head.len().min(1024)];
    !head.is_empty()
        && !head.contains(&0)
        && head
            .iter()
            .filter(|&&b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x0c | 0x1b))
            .count()
            * 100
            <= head.len()
}

pub(crate) fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn sniffed(head: &[u8], ct: &str, u: &str) -> Kind {
        sniff(head, ct, &url(u))
    }

    #[test]
    fn magic_bytes_beat_type_and_extension() {
        let pdf = b"%PDF-1.7\n%\xe2\xe3\n1 0 obj";
        assert_eq!(
            sniffed(
                pdf,
                "application/octet-stream",
                "https://a.test/download?id=7"
            ),
            Kind::Pdf
        );
        assert_eq!(
            sniffed(pdf, "text/html", "https://a.test/x.html"),
            Kind::Pdf
        );
        let html = b"\n<!DOCTYPE html><html><head><title>x</title>";
        assert_eq!(
            sniffed(html, "application/octet-stream", "https://a.test/a.pdf"),
            Kind::Html
        );
        assert_eq!(
            sniffed(html, "application/pdf", "https://a.test/a.pdf"),
            Kind::Html
        );
        assert_eq!(
            sniffed(html, "text/plain", "https://a.test/a.txt"),
            Kind::Html
        );
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
        assert_eq!(
            sniffed(png, "text/plain", "https://a.test/a.txt"),
            Kind::Unsupported("image/png".into())
        );
    }

    #[test]
    fn zips_are_docx_only_when_something_says_so() {
        let zip = b"PK\x03\x04\x14\0\0\0\x08\0[Content_Types].xml";
        assert_eq!(sniffed(zip, "", "https://a.test/brief.docx"), Kind::Docx);
        assert_eq!(sniffed(zip, DOCX_MIME, "https://a.test/get"), Kind::Docx);
        let mut whole = zip.to_vec();
        whole.extend_from_slice(b"...PK\x03\x04....word/document.xml");
        assert_eq!(
            sniffed(&whole, "application/octet-stream", "https://a.test/get"),
            Kind::Docx
        );
        assert_eq!(
            sniffed(zip, "application/zip", "https://a.test/a.zip"),
            Kind::Unsupported("application/zip".into())
        );
        assert!(matches!(
            sniffed(zip, "application/octet-stream", "https://a.test/t.xlsx"),
            Kind::Unsupported(m) if m.contains("spreadsheetml")
        ));
    }

    #[test]
    fn declared_types_then_extensions() {
        assert_eq!(
            sniffed(b"a,b\n1,2\n", "text/csv; charset=utf-8", "https://a.test/x"),
            Kind::Csv
        );
        assert_eq!(
            sniffed(b"a,b\n1,2\n", "text/plain", "https://a.test/x.csv"),
            Kind::Csv
        );
        assert_eq!(
            sniffed(b"# T\n", "text/plain", "https://a.test/README.md"),
            Kind::Markdown
        );
        assert_eq!(
            sniffed(b"# T\n", "", "https://a.test/README.md"),
            Kind::Markdown
        );
        assert_eq!(
            sniffed(b"{\"a\":1}", "application/ld+json", "https://a.test/x"),
            Kind::Json
        );
        assert_eq!(
            sniffed(
                b"a\tb\n",
                "application/octet-stream",
                "https://a.test/d.tsv"
            ),
            Kind::Tsv
        );
        assert_eq!(sniffed(b"hello", "", "https://a.test/notes"), Kind::Text);
        assert_eq!(
            sniffed(b"\0\x01\x02\x03binary", "", "https://a.test/blob"),
            Kind::Unsupported("application/octet-stream".into())
        );
        assert_eq!(
            sniffed(
                b"<?xml version='1.0'?><rss>",
                "application/rss+xml",
                "https://a.test/f"
            ),
            Kind::Unsupported("application/rss+xml".into())
        );
        // Bytes that are not a PDF but are labelled one: conversion says why it failed.
        assert_eq!(
            sniffed(b"\x93\x11garbage", "application/pdf", "https://a.test/x"),
            Kind::Pdf
        );
    }

    #[test]
    fn weak_html_starts_lose_to_text_formats() {
        let readme = b"<p align=\"center\"><img src=logo.png></p>\n# Tool\n";
        assert_eq!(
            sniffed(readme, "text/markdown", "https://a.test/README.md"),
            Kind::Markdown
        );
        assert_eq!(
            sniffed(readme, "application/octet-stream", "https://a.test/get"),
            Kind::Html
        );
        assert_eq!(
            sniffed(b"<!-- c --><div>x</div>", "", "https://a.test/a.pdf"),
            Kind::Html
        );
        assert_eq!(
            sniffed(b"<pre>x</pre>", "text/plain", "https://a.test/x"),
            Kind::Text
        );
    }

    #[test]
    fn hopeless_types_stop_before_the_body() {
        let u = url("https://a.test/file");
        for ct in [
            "image/png",
            "video/mp4",
            "audio/mpeg",
            "font/woff2",
            "application/x-7z-compressed",
        ] {
            assert!(hopeless(ct, &u), "{ct}");
        }
        assert!(hopeless("application/zip", &u));
        assert!(!hopeless(
            "application/zip",
            &url("https://a.test/brief.docx")
        ));
        for ct in [
            "",
            "application/octet-stream",
            "application/pdf",
            "text/html; charset=utf-8",
            DOCX_MIME,
        ] {
            assert!(!hopeless(ct, &u), "{ct}");
        }
    }

    #[test]
    fn text_and_markdown_pass_through_normalised() {
        let out = convert(
            &Kind::Text,
            b"\xef\xbb\xbfline one\r\nline two\rthree",
            "text/plain",
        )
        .unwrap();
        assert_eq!(out.text, "line one\nline two\nthree");
        assert_eq!(out.mime, "text/plain");
        let latin = convert(&Kind::Text, b"caf\xe9", "text/plain; charset=iso-8859-1").unwrap();
        assert_eq!(latin.text, "café");
        let md = convert(
            &Kind::Markdown,
            b"intro\n# The Title\n\nbody",
            "text/markdown",
        )
        .unwrap();
        assert_eq!(md.title.as_deref(), Some("The Title"));
        assert_eq!(md.text, "intro\n# The Title\n\nbody");
    }

    #[test]
    fn json_is_pretty_printed_or_falls_back_to_text() {
        let out = convert(
            &Kind::Json,
            br#"{"pairs":412,"year":2023}"#,
            "application/json",
        )
        .unwrap();
        assert_eq!(
            out.text,
            "```json\n{\n  \"pairs\": 412,\n  \"year\": 2023\n}\n```\n"
        );
        assert_eq!(out.mime, "application/json");
        let bad = convert(&Kind::Json, b"{not json", "application/json").unwrap();
        assert_eq!(
            (bad.mime.as_str(), bad.text.as_str()),
            ("text/plain", "{not json")
        );
        // Nesting past serde_json's recursion limit is an error, not a stack overflow.
        let deep = "[".repeat(100_000);
        assert_eq!(
            convert(&Kind::Json, deep.as_bytes(), "").unwrap().mime,
            "text/plain"
        );
    }

    #[test]
    fn output_is_capped() {
        let big = "x".repeat(MAX_TEXT + 10);
        let out = convert(&Kind::Text, big.as_bytes(), "text/plain").unwrap();
        assert!(out.text.len() < MAX_TEXT + 100);
        assert!(out.text.ends_with("past 5 MB -->\n"));
    }

    #[test]
    fn html_and_unsupported_are_not_converted_here() {
        assert_eq!(
            convert(&Kind::Unsupported("image/png".into()), b"", ""),
            Err(FileError::Unsupported("image/png".into()))
        );
        assert!(convert(&Kind::Html, b"<p>x", "text/html").is_err());
    }

    #[test]
    fn a_files_title_heads_its_text_once() {
        let file = |title: Option<&str>, text: &str| Converted {
            mime: "application/pdf".into(),
            title: title.map(Into::into),
            text: text.into(),
            pages: None,
        };
        let titled = file(Some("Annual Report"), "<!-- page 1 -->\n\nText.\n").titled();
        assert_eq!(titled, "# Annual Report\n\n<!-- page 1 -->\n\nText.\n");
        assert_eq!(file(Some("A"), "# B\n\nText.").titled(), "# B\n\nText.");
        assert_eq!(file(Some(" "), "Text.").titled(), "Text.");
        assert_eq!(file(None, "Text.").titled(), "Text.");
    }
}
