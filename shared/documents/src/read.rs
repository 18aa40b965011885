//! Reading a root: its files listed with their etags, each file's text for the index, and a
//! file as fetch hands it to clean.

use trawl_config::OutputConfig;
use trawl_files::{sniff, Kind};
use trawl_store::Objects;

use crate::{doc_url, DocumentsError, Root};

/// A file of a root.
#[derive(Clone, Debug, PartialEq)]
pub struct Listed {
    /// Its path under the root.
    pub name: String,
    pub etag: String,
    pub size: u64,
}

/// The object store of `root`, read with the output store's settings (endpoint, region,
/// credentials from the same environment).
pub fn open(root: &Root, output: &OutputConfig) -> Result<Objects, DocumentsError> {
    let config = OutputConfig {
        url: root.url().to_owned(),
        ..output.clone()
    };
    Objects::open(&config).map_err(|e| DocumentsError::Unavailable {
        root: root.to_string(),
        why: e.to_string(),
    })
}

/// Every file of `root` but hidden ones (a segment starting with `.`), sorted by name.
pub async fn list(root: &Root, docs: &Objects) -> Result<Vec<Listed>, DocumentsError> {
    let unavailable = |why: String| DocumentsError::Unavailable {
        root: root.to_string(),
        why,
    };
    if let Some(dir) = docs.local_dir() {
        if !dir.is_dir() {
            return Err(unavailable(format!("no folder at {}", dir.display())));
        }
    }
    let listed = docs
        .list_meta()
        .await
        .map_err(|e| unavailable(e.to_string()))?;
    let mut out: Vec<Listed> = (listed.into_iter())
        .filter(|m| !m.key.split('/').any(|s| s.starts_with('.')))
        .map(|m| Listed {
            name: m.key,
            etag: m.etag,
            size: m.size,
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// A file's text.
#[derive(Clone, Debug, PartialEq)]
pub struct Text {
    /// What it is (`application/pdf`, `text/html` …).
    pub mime: String,
    /// Its own title, else its first heading, else its file name.
    pub title: String,
    /// As markdown, a PDF's pages after `<!-- page N -->` markers.
    pub text: String,
    pub pages: Option<usize>,
}

/// The text of file `name` of the root `docs` opens, converted off the I/O threads.
pub async fn text(docs: &Objects, name: &str) -> Result<Text, DocumentsError> {
    let bytes = bytes(docs, name).await?;
    let owned = name.to_owned();
    tokio::task::spawn_blocking(move || convert(&owned, &bytes))
        .await
        .map_err(|e| unreadable(name, format!("conversion panicked: {e}")))?
        .map_err(|why| unreadable(name, why))
}

/// File `name` as fetch hands a page to clean: its content type and body (an HTML file as it
/// is, for clean's extraction; any other as its text under its title).
pub async fn document(
    root: &Root,
    output: &OutputConfig,
    name: &str,
    max_bytes: u64,
) -> Result<(String, String), DocumentsError> {
    let docs = open(root, output)?;
    let bytes = bytes(&docs, name).await?;
    if bytes.len() as u64 > max_bytes {
        return Err(unreadable(
            name,
            format!("{} bytes, over the bound of {max_bytes}", bytes.len()),
        ));
    }
    if is_html(name, &bytes) {
        return Ok(("text/html".into(), trawl_files::decode(&bytes, "", None)));
    }
    let text = (tokio::task::spawn_blocking({
        let name = name.to_owned();
        move || convert(&name, &bytes)
    }))
    .await
    .map_err(|e| unreadable(name, format!("conversion panicked: {e}")))?
    .map_err(|why| unreadable(name, why))?;
    let body = match text.text.starts_with("# ") {
        true => text.text,
        false => format!("# {}\n\n{}", text.title, text.text),
    };
    Ok((text.mime, body))
}

async fn bytes(docs: &Objects, name: &str) -> Result<Vec<u8>, DocumentsError> {
    docs.get(name)
        .await?
        .ok_or_else(|| unreadable(name, "no such file in the root".into()))
}

fn unreadable(name: &str, why: String) -> DocumentsError {
    DocumentsError::Unreadable {
        name: name.to_owned(),
        why,
    }
}

fn kind(name: &str, bytes: &[u8]) -> Kind {
    let url = url::Url::parse(&doc_url(name, None))
        .unwrap_or_else(|_| url::Url::parse("doc://file").expect("a valid URL"));
    sniff(bytes, "", &url)
}

fn is_html(name: &str, bytes: &[u8]) -> bool {
    kind(name, bytes) == Kind::Html
}

/// A file's text by what its bytes (then its extension) say it is.
pub fn convert(name: &str, bytes: &[u8]) -> Result<Text, String> {
    let file_name = name.rsplit('/').next().unwrap_or(name).to_owned();
    let (mime, title, text, pages) = match kind(name, bytes) {
        Kind::Html => {
            let html = trawl_files::decode(bytes, "", None);
            let (title, text) = trawl_files::html_text(&html);
            ("text/html".to_owned(), title, text, None)
        }
        Kind::Unsupported(mime) => return Err(format!("unsupported file type {mime}")),
        kind => {
            let c = trawl_files::convert(&kind, bytes, "").map_err(|e| e.to_string())?;
            (c.mime, c.title, c.text, c.pages)
        }
    };
    let heading = || {
        (text.lines().find(|l| !l.trim().is_empty()))
            .and_then(|l| l.strip_prefix("# "))
            .map(|t| t.trim().to_owned())
    };
    let title = (title.filter(|t| !t.trim().is_empty()))
        .or_else(heading)
        .unwrap_or(file_name);
    Ok(Text {
        mime,
        title,
        text,
        pages,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_read_by_what_they_are_with_a_title() {
        let md = convert(
            "notes/field.md",
            b"# Kestrel notes\n\nPairs counted: 412.\n",
        )
        .unwrap();
        assert_eq!((md.title.as_str(), md.pages), ("Kestrel notes", None));
        let txt = convert("plain.txt", b"Nothing but words here.").unwrap();
        assert_eq!(txt.title, "plain.txt");
        let html = convert(
            "page.html",
            b"<html><head><title>Kestrels</title><style>p{}</style></head><body><p>They hover.</p><script>x()</script></body></html>",
        )
        .unwrap();
        assert_eq!(html.title, "Kestrels");
        assert!(
            html.text.contains("They hover.") && !html.text.contains("x()"),
            "{}",
            html.text
        );
        let err = convert("photo.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap_err();
        assert!(err.contains("unsupported"), "{err}");
        assert!(convert("broken.pdf", b"%PDF-1.4\nnothing").is_err());
    }
}
