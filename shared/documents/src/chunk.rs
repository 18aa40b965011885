//! A document's text cut into chunks for the index: each page of a paged text (a PDF's
//! `<!-- page N -->` markers) cut at its paragraphs into pieces of about [`CHUNK_CHARS`].

use serde::{Deserialize, Serialize};
use trawl_text::pages::segments;
use trawl_text::pieces;

/// A chunk's length in bytes, about: long enough to hold an answer with its context, short
/// enough that a chunk that matches is about what matched.
const CHUNK_CHARS: usize = 1_500;

/// One chunk of a document: its page, if the document has pages, and its text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Chunk {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
    pub text: String,
}

/// `text` in chunks: its paragraphs gathered up to [`CHUNK_CHARS`] within each page, a longer
/// paragraph cut at whitespace.
pub fn chunks(text: &str) -> Vec<Chunk> {
    let mut out = Vec::new();
    for (page, part) in segments(text) {
        let mut current = String::new();
        for paragraph in part.split("\n\n").map(str::trim).filter(|p| !p.is_empty()) {
            if !current.is_empty() && current.len() + paragraph.len() > CHUNK_CHARS {
                out.push(Chunk {
                    page,
                    text: std::mem::take(&mut current),
                });
            }
            let mut parts = pieces(paragraph, CHUNK_CHARS);
            let rest = parts.pop().unwrap_or_default().trim_start();
            for part in parts {
                let text = part.trim().to_owned();
                out.push(Chunk { page, text });
            }
            if !current.is_empty() {
                current.push_str("\n\n");
            }
            current.push_str(rest);
        }
        if !current.trim().is_empty() {
            out.push(Chunk {
                page,
                text: current,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use trawl_text::pages::marker;

    #[test]
    fn chunks_keep_their_page_and_stay_short() {
        let long = "word ".repeat(700);
        let text = format!(
            "# Title\n\n{}\n\nFirst page.\n\n{}\n\n{long}\n\nAfter the long one.\n",
            marker(1),
            marker(2)
        );
        let chunks = chunks(&text);
        assert_eq!(
            chunks[0],
            Chunk {
                page: None,
                text: "# Title".into()
            }
        );
        assert_eq!(chunks[1].page, Some(1));
        assert!(chunks[2..].iter().all(|c| c.page == Some(2)));
        assert!(
            chunks.iter().all(|c| c.text.len() <= CHUNK_CHARS),
            "{chunks:?}"
        );
        assert!(chunks.last().unwrap().text.ends_with("After the long one."));
        assert!(super::chunks("").is_empty());
    }
}
