//! Fetch's file conversion over every file simweb's `files.test` serves, without a socket:
//! `sniff` on the served content type and URL, then `convert`, as the fetch worker does.

use trawl_files::{convert, sniff, Converted, FileError, Kind};
use trawl_integration_tests::simweb::files::{self, fixture};
use url::Url;

fn run(path_and_query: &str) -> (Kind, Result<Converted, FileError>) {
    let url = Url::parse(&format!("http://{}{path_and_query}", files::HOST)).unwrap();
    let (content_type, body) = fixture(url.path()).unwrap_or_else(|| panic!("{path_and_query}"));
    let kind = sniff(body, content_type, &url);
    let converted = convert(&kind, body, content_type);
    (kind, converted)
}

fn text_of(path: &str) -> Converted {
    match run(path) {
        (_, Ok(c)) => c,
        (kind, Err(e)) => panic!("{path} ({kind:?}): {e}"),
    }
}

#[test]
fn every_fixture_has_an_expected_outcome() {
    for path in files::PATHS {
        let (kind, result) = run(path);
        match *path {
            "/photo.png" | "/archive.zip" => {
                assert!(matches!(kind, Kind::Unsupported(_)), "{path}: {kind:?}")
            }
            "/misnamed.pdf" => assert_eq!(kind, Kind::Html),
            "/broken.pdf" => assert!(matches!(result, Err(FileError::Corrupt(_))), "{path}"),
            _ => assert!(result.is_ok(), "{path} ({kind:?}): {result:?}"),
        }
    }
}

#[test]
fn a_long_pdf_keeps_every_page_and_its_answer_on_its_page() {
    let pdf = text_of("/annual-report.pdf");
    assert_eq!(pdf.pages, Some(files::ANNUAL_PAGES));
    let pages = trawl_text::pages::Pages::of(&pdf.text).unwrap();
    assert_eq!(
        pages.page_of(files::ANNUAL_ANSWER),
        Some(files::ANNUAL_ANSWER_PAGE as u32)
    );
}

#[test]
fn the_pdf_yields_its_pages_in_order_with_markers() {
    for path in ["/report.pdf", "/download?id=7"] {
        let (kind, _) = run(path);
        assert_eq!(kind, Kind::Pdf, "{path}");
        let pdf = text_of(path);
        assert_eq!(pdf.mime, "application/pdf");
        assert_eq!(pdf.pages, Some(2));
        assert_eq!(pdf.title.as_deref(), Some(files::PDF_TITLE));
        let page2 = pdf.text.find("<!-- page 2 -->").expect("page 2 marker");
        assert!(pdf.text.starts_with("<!-- page 1 -->\n\n"), "{}", pdf.text);
        for (n, sentences) in files::PDF_PAGES.iter().enumerate() {
            for sentence in *sentences {
                // A sentence is its own paragraph, on the page it was printed on.
                let at = pdf
                    .text
                    .find(&format!("{sentence}\n\n"))
                    .unwrap_or_else(|| panic!("{sentence:?} missing from {}", pdf.text));
                assert_eq!(at > page2, n == 1, "{sentence:?} on page {}", n + 1);
            }
        }
    }
}

#[test]
fn the_docx_yields_headings_list_and_table() {
    let docx = text_of("/brief.docx");
    assert!(docx.mime.contains("wordprocessingml"));
    assert_eq!(docx.title.as_deref(), Some(files::DOCX_TITLE));
    let mut expected = vec![
        format!("# {}", files::DOCX_TITLE),
        format!("# {}", files::DOCX_HEADING),
    ];
    expected.extend(files::DOCX_PARAGRAPHS.map(String::from));
    expected.push(files::DOCX_BULLETS.map(|b| format!("- {b}")).join("\n"));
    let [head, rows @ ..] = files::DOCX_TABLE;
    let mut table = vec![
        format!("| {} |", head.join(" | ")),
        "| --- | --- | --- |".into(),
    ];
    table.extend(rows.iter().map(|r| format!("| {} |", r.join(" | "))));
    expected.push(table.join("\n"));
    assert_eq!(docx.text, expected.join("\n\n"));
}

#[test]
fn tables_text_and_json() {
    let csv = text_of("/data.csv");
    assert_eq!(csv.mime, "text/csv");
    assert_eq!(
        csv.text,
        "| site | pairs | note |\n| --- | --- | --- |\n| North | 210 | upland, dry |\n| East | 202 | coastal |\n"
    );
    let tsv = text_of("/data.tsv");
    assert_eq!(
        tsv.text,
        "| site | pairs |\n| --- | --- |\n| North | 210 |\n| East | 202 |\n"
    );
    let notes = text_of("/notes.txt");
    assert_eq!(notes.text, files::NOTES.replace("\r\n", "\n"));
    let readme = text_of("/readme.md");
    assert_eq!(
        (readme.mime.as_str(), readme.title.as_deref()),
        ("text/markdown", Some("Kestrel data"))
    );
    assert_eq!(readme.text, files::README);
    let json = text_of("/data.json");
    // Pretty-printed (serde_json sorts the keys) in a fenced block.
    assert!(
        json.text.starts_with("```json\n{\n  \"pairs\": 412,\n"),
        "{}",
        json.text
    );
    assert!(
        json.text.ends_with("  \"year\": 2023\n}\n```\n"),
        "{}",
        json.text
    );
}

#[test]
fn unusable_files_say_why() {
    assert_eq!(run("/photo.png").0, Kind::Unsupported("image/png".into()));
    assert_eq!(
        run("/archive.zip").0,
        Kind::Unsupported("application/zip".into())
    );
    let (kind, result) = run("/broken.pdf");
    assert_eq!(kind, Kind::Pdf);
    let reason = result.unwrap_err().to_string();
    assert!(
        reason.starts_with("unreadable file: not a readable PDF"),
        "{reason}"
    );
}
