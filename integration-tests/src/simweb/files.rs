//! `files.test`: documents that are not HTML (PDF, DOCX, CSV …), for fetch's file conversion.
//!
//! Every file is built in code at first use: a real two-page PDF (page 2 FlateDecode-compressed)
//! from a small writer with exact xref offsets, a 300-page annual report whose one answer stands
//! on page 240 alone ([`annual_report_pdf`]), a real DOCX written with the `zip` crate, a 1×1
//! PNG, a zip that is not a DOCX. The texts they must yield are the pub consts below.

use std::io::Write;
use std::sync::OnceLock;

use axum::http::header;
use axum::response::{IntoResponse, Response};

use super::render::simple_page;

pub const HOST: &str = "files.test";

pub const PATHS: &[&str] = &[
    "/report.pdf",
    "/download?id=7",
    "/brief.docx",
    "/data.csv",
    "/data.tsv",
    "/notes.txt",
    "/readme.md",
    "/data.json",
    "/photo.png",
    "/archive.zip",
    "/misnamed.pdf",
    "/broken.pdf",
    "/annual-report.pdf",
];

pub const PDF_TITLE: &str = "Kestrel Survey 2023";
/// The sentences of each page of `/report.pdf`, in order; each is one paragraph.
pub const PDF_PAGES: [&[&str]; 2] = [
    &[
        "The Kestrel survey counted 412 breeding pairs in 2023.",
        "Most nests were found on the upland moors (north sector).",
    ],
    &["Vole numbers in the eastern sector fell by a third after the dry spring."],
];

pub const DOCX_TITLE: &str = "Kestrel Field Brief";
pub const DOCX_HEADING: &str = "Survey findings";
pub const DOCX_PARAGRAPHS: [&str; 2] = [
    "Observers walked fixed transects every fortnight from March to July.",
    "Nest boxes & natural sites were checked in June.",
];
pub const DOCX_BULLETS: [&str; 2] = ["North sector: 210 pairs", "East sector: 202 pairs"];
pub const DOCX_TABLE: [[&str; 3]; 3] = [
    ["Site", "Pairs", "Change"],
    ["North", "210", "+4%"],
    ["East", "202", "-2%"],
];

pub const CSV: &str = "site,pairs,note\nNorth,210,\"upland, dry\"\nEast,202,coastal\n";
pub const TSV: &str = "site\tpairs\nNorth\t210\nEast\t202\n";
pub const NOTES: &str =
    "Field notes, 12 June 2023.\r\nA kestrel hovered over the north verge for ten minutes.\r\n";
pub const README: &str =
    "# Kestrel data\n\nCounts of breeding pairs by sector, 2023.\n\n- `data.csv`: one row per sector\n";
pub const JSON: &str = r#"{"survey":"kestrel","year":2023,"pairs":412,"sectors":["north","east"]}"#;
pub const MISNAMED_SENTENCE: &str = "This article about kestrels is HTML, whatever its name says.";

const DOCX_MIME: &str = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

/// `/annual-report.pdf`: a filing of [`ANNUAL_PAGES`] pages of about 2,500 characters, all of
/// them about the company, and the question only [`ANNUAL_ANSWER_PAGE`] answers.
pub const ANNUAL_TITLE: &str = "Harlow Dynamics Annual Report 2023";
pub const ANNUAL_PAGES: usize = 300;
pub const ANNUAL_ANSWER_PAGE: usize = 240;
pub const ANNUAL_QUESTION: &str = "How many people did Harlow Dynamics employ at the end of 2023?";
pub const ANNUAL_ANSWER: &str =
    "At the end of 2023 Harlow Dynamics employed 18,420 people in 31 countries.";

/// The sentences of page `n` (from 1) of `/annual-report.pdf`: a filing's prose, varied by
/// page, naming the company throughout; page 57 thanks its staff without a number, and
/// [`ANNUAL_ANSWER_PAGE`] states [`ANNUAL_ANSWER`].
pub fn annual_page(n: usize) -> Vec<String> {
    const SEGMENTS: [&str; 5] = ["aerospace", "marine", "rail", "energy", "defence"];
    const TOPICS: [&str; 6] = [
        "supplier contracts",
        "lease liabilities",
        "foreign exchange exposure",
        "pension obligations",
        "warranty provisions",
        "capital expenditure",
    ];
    const RISKS: [&str; 4] = [
        "cyber attack",
        "interest rates",
        "raw material prices",
        "regulation",
    ];
    let mut out = vec![format!(
        "Section {n}. Review of operations, part {}.",
        n % 17 + 1
    )];
    for i in 0..21 {
        let (seg, topic) = (SEGMENTS[(n + i) % 5], TOPICS[(n * 7 + i) % 6]);
        out.push(match i % 4 {
            0 => format!("Harlow Dynamics reviewed the {topic} of its {seg} segment in quarter {}.", i % 4 + 1),
            1 => format!("Revenue from {seg} contracts was {} million dollars, against {} million a year before.", 100 + (n * 13 + i) % 900, 90 + (n * 11 + i) % 800),
            2 => format!("The board considered {} a principal risk to the {seg} business.", RISKS[(n + i) % 4]),
            _ => format!("Note {n}.{i}: {topic} are measured at amortised cost under the group's policies."),
        });
    }
    if n == 57 {
        out.push("Harlow Dynamics thanks its staff for their work during 2023.".into());
    }
    if n == ANNUAL_ANSWER_PAGE {
        out.push(ANNUAL_ANSWER.into());
    }
    out
}

/// A file's content type and body, for the server and for tests that skip the socket.
/// `path` has no query: `/download` is the PDF without an extension.
pub fn fixture(path: &str) -> Option<(&'static str, &'static [u8])> {
    Some(match path {
        "/report.pdf" => ("application/pdf", report_pdf()),
        "/download" => ("application/octet-stream", report_pdf()),
        "/brief.docx" => (DOCX_MIME, brief_docx()),
        "/data.csv" => ("text/csv; charset=utf-8", CSV.as_bytes()),
        "/data.tsv" => ("text/tab-separated-values", TSV.as_bytes()),
        "/notes.txt" => ("text/plain; charset=utf-8", NOTES.as_bytes()),
        "/readme.md" => ("text/markdown; charset=utf-8", README.as_bytes()),
        "/data.json" => ("application/json", JSON.as_bytes()),
        "/photo.png" => ("image/png", photo_png()),
        "/archive.zip" => ("application/zip", archive_zip()),
        "/misnamed.pdf" => ("text/html; charset=utf-8", misnamed_html()),
        "/broken.pdf" => ("application/pdf", broken_pdf()),
        "/annual-report.pdf" => ("application/pdf", annual_report_pdf()),
        _ => return None,
    })
}

/// Serves `path` on files.test; `None` means 404.
pub fn handle(path: &str) -> Option<Response> {
    match path {
        "/robots.txt" => Some(
            (
                [(header::CONTENT_TYPE, "text/plain")],
                "User-agent: *\nDisallow:\n",
            )
                .into_response(),
        ),
        "/" => {
            let links: String = PATHS
                .iter()
                .map(|p| format!("<li><a href=\"{p}\">{p}</a></li>\n"))
                .collect();
            let page = simple_page("Files", &format!("<ul>\n{links}</ul>"));
            Some(([(header::CONTENT_TYPE, "text/html; charset=utf-8")], page).into_response())
        }
        _ => {
            let (content_type, body) = fixture(path)?;
            Some(([(header::CONTENT_TYPE, content_type)], body).into_response())
        }
    }
}

fn deflate(data: &[u8]) -> Vec<u8> {
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(data).expect("writing to a Vec");
    z.finish().expect("writing to a Vec")
}

/// A PDF literal string: `(`, `)` and `\` escaped.
fn pdf_string(s: &str) -> String {
    let mut out = String::from("(");
    for c in s.chars() {
        if matches!(c, '(' | ')' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push(')');
    out
}

/// One text object: each sentence on its own line, a blank line's height between them so that
/// extractors see paragraphs.
fn page_content(sentences: &[&str]) -> String {
    let mut s = String::from("BT /F1 12 Tf 72 720 Td ");
    for (i, sentence) in sentences.iter().enumerate() {
        if i > 0 {
            s.push_str("0 -30 Td ");
        }
        s.push_str(&format!("{} Tj ", pdf_string(sentence)));
    }
    s.push_str("ET");
    s
}

/// Objects as (body), numbered from 1, written with a cross-reference table whose offsets are
/// exact: object 1 is the catalog; `trailer_extra` joins the trailer dictionary (`/Info 8 0 R`).
/// Also what fetch's PDF tests build their documents with.
pub fn write_pdf(objects: &[Vec<u8>], trailer_extra: &str) -> Vec<u8> {
    // The binary comment line tells transfer tools the file is binary.
    let mut out = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let mut offsets = Vec::with_capacity(objects.len());
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend_from_slice(body);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for offset in offsets {
        // Each entry is exactly 20 bytes, the line end included.
        out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R {trailer_extra} >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

/// A stream object's body: `dict` entries, then the length and the data.
pub fn pdf_stream(dict: &str, data: &[u8]) -> Vec<u8> {
    let mut s = format!("<< {dict} /Length {} >>\nstream\n", data.len()).into_bytes();
    s.extend_from_slice(data);
    s.extend_from_slice(b"\nendstream");
    s
}

pub fn report_pdf() -> &'static [u8] {
    static PDF: OnceLock<Vec<u8>> = OnceLock::new();
    PDF.get_or_init(|| {
        let page = |content: usize| {
            format!("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents {content} 0 R >>").into_bytes()
        };
        let objects = vec![
            b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
            b"<< /Type /Pages /Kids [4 0 R 6 0 R] /Count 2 >>".to_vec(),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
                .to_vec(),
            page(5),
            pdf_stream("", page_content(PDF_PAGES[0]).as_bytes()),
            page(7),
            pdf_stream("/Filter /FlateDecode", &deflate(page_content(PDF_PAGES[1]).as_bytes())),
            format!("<< /Title {} /Producer (simweb) >>", pdf_string(PDF_TITLE)).into_bytes(),
        ];
        write_pdf(&objects, "/Info 8 0 R")
    })
}

/// A folder of documents no page of the web has: the annual report
/// (`filings/harlow-2023.pdf`), the field brief (`field/brief.docx`) and an observatory's
/// notes (`notes/observatory.md`, [`NOTES_ANSWER`]), for `trawl run --documents`.
pub fn write_documents(dir: &std::path::Path) -> std::io::Result<()> {
    let files: [(&str, &[u8]); 3] = [
        ("filings/harlow-2023.pdf", annual_report_pdf()),
        ("field/brief.docx", brief_docx()),
        ("notes/observatory.md", NOTES_MD.as_bytes()),
    ];
    for (name, bytes) in files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().expect("a file in a folder"))?;
        std::fs::write(path, bytes)?;
    }
    Ok(())
}

/// `notes/observatory.md` of [`write_documents`], and the question only it answers.
pub const NOTES_MD: &str = "# Zephyr Point observatory log\n\nVolunteers kept the nets open from April to October.\n\nThe Zephyr Point observatory ringed 3,117 swallows in 2024.\n";
pub const NOTES_QUESTION: &str = "How many swallows did the Zephyr Point observatory ring in 2024?";
pub const NOTES_ANSWER: &str = "3,117";

/// `/annual-report.pdf`: [`ANNUAL_PAGES`] pages of [`annual_page`].
pub fn annual_report_pdf() -> &'static [u8] {
    static PDF: OnceLock<Vec<u8>> = OnceLock::new();
    PDF.get_or_init(|| {
        let pages: Vec<Vec<String>> = (1..=ANNUAL_PAGES).map(annual_page).collect();
        paged_pdf(ANNUAL_TITLE, &pages)
    })
}

/// A real PDF titled `title`, a page for each list of sentences (each its own paragraph), every
/// content stream compressed.
pub fn paged_pdf(title: &str, pages: &[Vec<String>]) -> Vec<u8> {
    // Objects: catalog, page tree, font, then each page and its contents, then the info.
    let kids: String = (0..pages.len())
        .map(|i| format!("{} 0 R ", 4 + 2 * i))
        .collect();
    let mut objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        format!("<< /Type /Pages /Kids [{kids}] /Count {} >>", pages.len()).into_bytes(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
            .to_vec(),
    ];
    for (i, sentences) in pages.iter().enumerate() {
        let content = 5 + 2 * i;
        objects.push(format!("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents {content} 0 R >>").into_bytes());
        let sentences: Vec<&str> = sentences.iter().map(String::as_str).collect();
        let text = page_content(&sentences);
        objects.push(pdf_stream(
            "/Filter /FlateDecode",
            &deflate(text.as_bytes()),
        ));
    }
    let info = objects.len() + 1;
    objects.push(format!("<< /Title {} /Producer (simweb) >>", pdf_string(title)).into_bytes());
    write_pdf(&objects, &format!("/Info {info} 0 R"))
}

fn broken_pdf() -> &'static [u8] {
    static PDF: OnceLock<Vec<u8>> = OnceLock::new();
    PDF.get_or_init(|| {
        let mut out = b"%PDF-1.4\n".to_vec();
        let mut x = 0x9e37_79b9_u32;
        out.extend((0..4096).map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x >> 24) as u8
        }));
        out
    })
}

fn misnamed_html() -> &'static [u8] {
    static HTML: OnceLock<String> = OnceLock::new();
    HTML.get_or_init(|| {
        simple_page(
            "Kestrels, misnamed",
            &format!("<article><p>{MISNAMED_SENTENCE}</p><p>Kestrels hover before they stoop on voles.</p></article>"),
        )
    })
    .as_bytes()
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn w_paragraph(style: Option<&str>, numbered: bool, text: &str) -> String {
    let mut ppr = String::new();
    if let Some(style) = style {
        ppr.push_str(&format!("<w:pStyle w:val=\"{style}\"/>"));
    }
    if numbered {
        ppr.push_str("<w:numPr><w:ilvl w:val=\"0\"/><w:numId w:val=\"1\"/></w:numPr>");
    }
    let ppr = if ppr.is_empty() {
        ppr
    } else {
        format!("<w:pPr>{ppr}</w:pPr>")
    };
    format!(
        "<w:p>{ppr}<w:r><w:t xml:space=\"preserve\">{}</w:t></w:r></w:p>",
        xml_escape(text)
    )
}

fn document_xml() -> String {
    let mut body = w_paragraph(Some("Title"), false, DOCX_TITLE);
    body.push_str(&w_paragraph(Some("Heading1"), false, DOCX_HEADING));
    for p in DOCX_PARAGRAPHS {
        body.push_str(&w_paragraph(None, false, p));
    }
    for b in DOCX_BULLETS {
        body.push_str(&w_paragraph(Some("ListParagraph"), true, b));
    }
    body.push_str("<w:tbl><w:tblPr><w:tblStyle w:val=\"TableGrid\"/><w:tblW w:w=\"0\" w:type=\"auto\"/></w:tblPr><w:tblGrid><w:gridCol w:w=\"3000\"/><w:gridCol w:w=\"3000\"/><w:gridCol w:w=\"3000\"/></w:tblGrid>");
    for row in DOCX_TABLE {
        body.push_str("<w:tr>");
        for cell in row {
            body.push_str("<w:tc><w:tcPr><w:tcW w:w=\"3000\" w:type=\"dxa\"/></w:tcPr>");
            body.push_str(&w_paragraph(None, false, cell));
            body.push_str("</w:tc>");
        }
        body.push_str("</w:tr>");
    }
    body.push_str("</w:tbl>");
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<w:document xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\"><w:body>{body}<w:sectPr><w:pgSz w:w=\"12240\" w:h=\"15840\"/></w:sectPr></w:body></w:document>"
    )
}

const CONTENT_TYPES: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/><Override PartName="/word/numbering.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.numbering+xml"/><Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/></Types>"#;

const ROOT_RELS: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/></Relationships>"#;

const DOCUMENT_RELS: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/numbering" Target="numbering.xml"/></Relationships>"#;

const STYLES: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/></w:style><w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/><w:basedOn w:val="Normal"/><w:rPr><w:sz w:val="56"/></w:rPr></w:style><w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/><w:basedOn w:val="Normal"/><w:pPr><w:outlineLvl w:val="0"/></w:pPr><w:rPr><w:b/><w:sz w:val="32"/></w:rPr></w:style><w:style w:type="paragraph" w:styleId="ListParagraph"><w:name w:val="List Paragraph"/><w:basedOn w:val="Normal"/><w:pPr><w:ind w:left="720"/></w:pPr></w:style><w:style w:type="table" w:styleId="TableGrid"><w:name w:val="Table Grid"/><w:tblPr><w:tblBorders><w:top w:val="single" w:sz="4"/><w:left w:val="single" w:sz="4"/><w:bottom w:val="single" w:sz="4"/><w:right w:val="single" w:sz="4"/><w:insideH w:val="single" w:sz="4"/><w:insideV w:val="single" w:sz="4"/></w:tblBorders></w:tblPr></w:style></w:styles>"#;

const NUMBERING: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:numbering xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="bullet"/><w:lvlText w:val="•"/><w:lvlJc w:val="left"/><w:pPr><w:ind w:left="720" w:hanging="360"/></w:pPr></w:lvl></w:abstractNum><w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num></w:numbering>"#;

fn core_xml() -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>{}</dc:title><dc:creator>simweb</dc:creator></cp:coreProperties>"#,
        xml_escape(DOCX_TITLE)
    )
}

fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        // A fixed time keeps the bytes identical from run to run.
        .last_modified_time(zip::DateTime::default());
    for (name, data) in entries {
        zip.start_file(*name, options).expect("zip to memory");
        zip.write_all(data).expect("zip to memory");
    }
    zip.finish().expect("zip to memory").into_inner()
}

pub fn brief_docx() -> &'static [u8] {
    static DOCX: OnceLock<Vec<u8>> = OnceLock::new();
    DOCX.get_or_init(|| {
        let document = document_xml();
        let core = core_xml();
        zip_of(&[
            ("[Content_Types].xml", CONTENT_TYPES.as_bytes()),
            ("_rels/.rels", ROOT_RELS.as_bytes()),
            ("word/document.xml", document.as_bytes()),
            ("word/_rels/document.xml.rels", DOCUMENT_RELS.as_bytes()),
            ("word/styles.xml", STYLES.as_bytes()),
            ("word/numbering.xml", NUMBERING.as_bytes()),
            ("docProps/core.xml", core.as_bytes()),
        ])
    })
}

fn archive_zip() -> &'static [u8] {
    static ZIP: OnceLock<Vec<u8>> = OnceLock::new();
    ZIP.get_or_init(|| {
        zip_of(&[
            ("notes.txt", NOTES.as_bytes()),
            ("data.csv", CSV.as_bytes()),
        ])
    })
}

/// A 1×1 grey PNG: signature, IHDR, one zlib-compressed IDAT row, IEND.
fn photo_png() -> &'static [u8] {
    static PNG: OnceLock<Vec<u8>> = OnceLock::new();
    PNG.get_or_init(|| {
        let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
        let mut chunk = |kind: &[u8; 4], data: &[u8]| {
            out.extend_from_slice(&(data.len() as u32).to_be_bytes());
            let mut crc = flate2::Crc::new();
            crc.update(kind);
            crc.update(data);
            out.extend_from_slice(kind);
            out.extend_from_slice(data);
            out.extend_from_slice(&crc.sum().to_be_bytes());
        };
        // Width 1, height 1, bit depth 8, greyscale, default compression/filter/interlace.
        chunk(b"IHDR", &[0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0]);
        chunk(b"IDAT", &deflate(&[0, 0x80]));
        chunk(b"IEND", &[]);
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
        haystack.windows(needle.len()).position(|w| w == needle)
    }

    #[test]
    fn report_pdf_xref_offsets_point_at_their_objects() {
        let pdf = report_pdf();
        assert!(pdf.starts_with(b"%PDF-1.4\n"));
        let tail = std::str::from_utf8(&pdf[pdf.len() - 40..]).unwrap();
        let startxref: usize = tail
            .split("startxref\n")
            .nth(1)
            .and_then(|t| t.lines().next())
            .unwrap()
            .parse()
            .unwrap();
        assert!(pdf[startxref..].starts_with(b"xref\n0 9\n"));
        let table = std::str::from_utf8(&pdf[startxref..]).unwrap();
        for (n, entry) in table.lines().skip(3).take(8).enumerate() {
            let offset: usize = entry[..10].parse().unwrap();
            let header = format!("{} 0 obj\n", n + 1);
            assert!(
                pdf[offset..].starts_with(header.as_bytes()),
                "object {}",
                n + 1
            );
        }
    }

    #[test]
    fn page_two_is_compressed_and_holds_its_sentence() {
        let pdf = report_pdf();
        let at = find(pdf, b"/FlateDecode /Length ").unwrap();
        let digits: String = pdf[at + 21..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .map(|&b| char::from(b))
            .collect();
        let len: usize = digits.parse().unwrap();
        let data = find(&pdf[at..], b"stream\n").unwrap() + at + 7;
        let mut text = String::new();
        flate2::read::ZlibDecoder::new(&pdf[data..data + len])
            .read_to_string(&mut text)
            .unwrap();
        assert!(text.contains(PDF_PAGES[1][0]));
        assert!(pdf[data + len..].starts_with(b"\nendstream"));
    }

    #[test]
    fn brief_docx_is_a_zip_with_the_word_parts() {
        let mut zip = zip::ZipArchive::new(std::io::Cursor::new(brief_docx())).unwrap();
        let mut document = String::new();
        zip.by_name("word/document.xml")
            .unwrap()
            .read_to_string(&mut document)
            .unwrap();
        assert!(document.contains("Nest boxes &amp; natural sites"));
        assert!(document.contains(r#"<w:pStyle w:val="Heading1"/>"#));
        for part in [
            "[Content_Types].xml",
            "_rels/.rels",
            "docProps/core.xml",
            "word/styles.xml",
        ] {
            assert!(zip.by_name(part).is_ok(), "{part}");
        }
        assert_eq!(brief_docx(), brief_docx(), "built once");
    }

    #[test]
    fn png_and_zip_are_what_they_claim() {
        let png = photo_png();
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR"));
        assert!(
            png.ends_with(b"IEND\xae\x42\x60\x82"),
            "IEND's CRC is a known constant"
        );
        let zip = zip::ZipArchive::new(std::io::Cursor::new(archive_zip())).unwrap();
        assert_eq!(zip.len(), 2);
        assert!(!zip.file_names_raw().any(|n| n.starts_with(b"word/")));
    }

    #[test]
    fn every_path_is_served() {
        for path in PATHS {
            let path = path.split('?').next().unwrap();
            assert!(fixture(path).is_some(), "{path}");
        }
        assert!(fixture("/nothing").is_none());
        assert!(
            broken_pdf().starts_with(b"%PDF-1.4\n")
                && !broken_pdf()[9..].windows(3).any(|w| w == b"obj")
        );
    }
}
