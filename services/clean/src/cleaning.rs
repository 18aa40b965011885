//! LLM cleaning of markdown the judge found dirty: the model removes page furniture and keeps
//! the article word for word, with the question as context for what matters.
//!
//! Input is bounded: a page longer than `clean.llm_clean_max_chars` is not sent (the reason is
//! recorded); a shorter one goes in chunks of about [`CHUNK_CHARS`] split between paragraphs,
//! never inside a code block, one request per chunk. The chunks' answers are joined and the
//! whole checked by the technical-content guard ([`crate::guard`]): if code, commands or tables
//! were lost, or too little is left, the original stays and [`Cleaning::reason`] says why.

use trawl_llm::{ChatRequest, Llm};
use trawl_messages::Cleaning;

use crate::guard;

/// Characters per cleaning request.
pub(crate) const CHUNK_CHARS: usize = 8_000;

const SYSTEM: &str = "You clean the text of a web page converted to markdown. Remove page \
furniture only: navigation, cookie notices, share and subscribe prompts, ads, comment forms, \
related-article lists, repeated lines. Keep everything else exactly as written, in order: \
headings, paragraphs, lists, links, tables, every fenced code block and every shell command. Do \
not summarise, rephrase or add anything. Reply with the cleaned markdown only.";

/// What cleaning did.
#[derive(Clone, Debug, PartialEq)]
pub struct Cleaned {
    /// The cleaned markdown, or the original when cleaning was not used.
    pub markdown: String,
    pub cleaning: Cleaning,
    /// An LLM request failed (the result must not be cached: a retry may succeed).
    pub failed: bool,
}

impl Cleaned {
    fn kept(original: &str, reason: String, failed: bool) -> Cleaned {
        Cleaned {
            markdown: original.to_owned(),
            cleaning: Cleaning {
                applied: false,
                reason,
            },
            failed,
        }
    }
}

/// Paragraph blocks of `markdown` (split at blank lines, a fenced code block kept whole), each
/// with its trailing blank lines.
pub fn blocks(markdown: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut start, mut at, mut in_code, mut blank) = (0, 0, false, false);
    for line in markdown.split_inclusive('\n') {
        let t = line.trim();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_code = !in_code;
        }
        if !in_code && t.is_empty() {
            blank = true;
        } else if blank {
            out.push(&markdown[start..at]);
            (start, blank) = (at, false);
        }
        at += line.len();
    }
    if start < markdown.len() {
        out.push(&markdown[start..]);
    }
    out
}

/// `markdown` in chunks of about `size` characters, split between blocks (a block longer than
/// `size` is a chunk of its own).
pub fn chunks(markdown: &str, size: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    for block in blocks(markdown) {
        if !current.is_empty() && current.len() + block.len() > size {
            out.push(std::mem::take(&mut current));
        }
        current.push_str(block);
    }
    if !current.trim().is_empty() {
        out.push(current);
    }
    out
}

/// The reply without a fence the model wrapped the whole answer in.
fn unwrap_fence(reply: &str) -> &str {
    let t = reply.trim();
    for open in ["```markdown\n", "```md\n", "```\n"] {
        if let Some(inner) = t.strip_prefix(open).and_then(|r| r.strip_suffix("```")) {
            // Only a wrapper if no other fence is inside (else it was the page's own code).
            if !inner.contains("```") {
                return inner;
            }
        }
    }
    t
}

/// Cleans `original` with the LLM, keeping it when the guard or the size bound says so.
pub async fn clean(
    llm: &Llm,
    question: &str,
    problems: &[String],
    original: &str,
    max_chars: usize,
) -> Cleaned {
    let total = original.chars().count();
    if total > max_chars {
        return Cleaned::kept(
            original,
            format!("too long for LLM cleaning ({total} characters, limit {max_chars})"),
            false,
        );
    }
    let parts = chunks(original, CHUNK_CHARS);
    let mut cleaned = Vec::with_capacity(parts.len());
    for (i, part) in parts.iter().enumerate() {
        let prompt = format!(
            "Question: {question}\nProblems seen: {}\nPart {} of {}. Markdown:\n{part}",
            if problems.is_empty() {
                "none named".to_owned()
            } else {
                problems.join("; ")
            },
            i + 1,
            parts.len(),
        );
        let mut request = ChatRequest::new("clean", SYSTEM, prompt);
        // The answer is about as long as the part: room for all of it (about 3 characters a token).
        request.max_tokens = (part.len() / 3 + 256).min(8_192) as u32;
        match llm.chat(&request).await {
            Ok(response) => cleaned.push(unwrap_fence(&response.text).trim().to_owned()),
            Err(e) => return Cleaned::kept(original, format!("LLM cleaning failed: {e}"), true),
        }
    }
    let joined = cleaned.join("\n\n") + "\n";
    match guard::check(original, &joined) {
        Ok(()) => Cleaned {
            markdown: joined,
            cleaning: Cleaning {
                applied: true,
                reason: String::new(),
            },
            failed: false,
        },
        Err(why) => Cleaned::kept(original, why.to_string(), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_split_at_blank_lines_but_not_inside_code() {
        let md = "# T\n\npara one\nstill one\n\n```\ncode\n\nmore code\n```\n\nlast";
        let b = blocks(md);
        assert_eq!(
            b,
            vec![
                "# T\n\n",
                "para one\nstill one\n\n",
                "```\ncode\n\nmore code\n```\n\n",
                "last"
            ]
        );
        assert_eq!(b.concat(), md);
    }

    #[test]
    fn chunks_respect_the_size_between_blocks() {
        let md = "aaaa\n\nbbbb\n\ncccc\n\n".repeat(3);
        let c = chunks(&md, 14);
        assert!(c.iter().all(|c| c.len() <= 14), "{c:?}");
        assert_eq!(c.concat(), md);
        let big = format!("{}\n\nsmall", "x".repeat(50));
        assert_eq!(chunks(&big, 14).len(), 2);
    }

    #[test]
    fn a_wrapping_fence_is_removed_but_page_code_is_not() {
        assert_eq!(unwrap_fence("```markdown\n# T\ntext\n```"), "# T\ntext\n");
        let page = "```\ncode\n```\ntext\n```\nmore\n```";
        assert_eq!(unwrap_fence(page), page);
    }
}
