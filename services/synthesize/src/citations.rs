//! Citation validation for reports the LLM writes.
//!
//! The context labels each source with a number, `[`[`label`]`(idx)]`: the numbered-sources
//! form that models are trained on and that OpenAI-compatible stand-ins parse (an `[S3]` label
//! was read by neither small local models nor the research benchmark's mock as a source). In
//! the model's text every `[label]` (also `[1, 3]` and `[1][3]`) that names a source of the
//! context becomes a numbered citation `[n]`, numbered in order of first use; anything else that
//! looks like a citation (`[99]`, `[S2]`) points to nothing the job read, so it is removed and
//! counted. The sources list is then built from exactly the cited sources, numbered without
//! gaps.

use std::collections::BTreeMap;

/// The text with citations renumbered, the cited source indexes in citation order, and how many
/// citations were removed.
#[derive(Debug, PartialEq)]
pub struct Checked {
    pub text: String,
    pub cited: Vec<u32>,
    pub removed: usize,
}

/// The number a source of index `idx` is labelled with in the writer's context: search's order,
/// counted from one.
pub fn label(idx: u32) -> u32 {
    idx + 1
}

/// Rewrites `text`'s citations; `known` are the source indexes the context offered.
pub fn check(text: &str, known: &[u32]) -> Checked {
    let mut numbers: BTreeMap<u32, u32> = BTreeMap::new();
    let mut cited = Vec::new();
    let mut removed = 0;
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find(']') else {
            out.push_str(&rest[open..]);
            rest = "";
            break;
        };
        let inner = &after[..close];
        match parse_refs(inner) {
            Some(refs) => {
                let mut kept = Vec::new();
                for r in refs {
                    match r {
                        Ref::Source(idx) if known.contains(&idx) => {
                            let next = numbers.len() as u32 + 1;
                            let n = *numbers.entry(idx).or_insert_with(|| {
                                cited.push(idx);
                                next
                            });
                            if !kept.contains(&n) {
                                kept.push(n);
                            }
                        }
                        _ => removed += 1,
                    }
                }
                for n in kept {
                    out.push_str(&format!("[{n}]"));
                }
            }
            // Not a citation (a markdown link's text, a checkbox …): keep it as written.
            None => {
                out.push('[');
                out.push_str(inner);
                out.push(']');
            }
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    Checked {
        text: tidy(&out),
        cited,
        removed,
    }
}

enum Ref {
    Source(u32),
    Bare,
}

/// `3`, `1, 4`, `S7`: a citation list (a label names source `label - 1`; an `S`-number, the
/// old form, names nothing); anything else is not one.
fn parse_refs(inner: &str) -> Option<Vec<Ref>> {
    let parts: Vec<&str> = inner.split([',', ';']).map(str::trim).collect();
    if parts.is_empty() || parts.iter().any(|p| p.is_empty()) {
        return None;
    }
    parts
        .into_iter()
        .map(
            |p| match p.strip_prefix('S').or_else(|| p.strip_prefix('s')) {
                Some(n) => n.parse::<u32>().ok().map(|_| Ref::Bare),
                None => (p.parse::<u32>().ok()).map(|n| match n.checked_sub(1) {
                    Some(idx) => Ref::Source(idx),
                    None => Ref::Bare,
                }),
            },
        )
        .collect()
}

/// Removing a citation can leave a space before punctuation or two spaces in a row.
fn tidy(text: &str) -> String {
    let mut out = text.to_owned();
    for (from, to) in [(" .", "."), (" ,", ","), (" ;", ";"), ("  ", " ")] {
        while out.contains(from) {
            out = out.replace(from, to);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renumbers_in_order_of_first_use_and_removes_unknown() {
        let c = check(
            "A [5]. B [3, 5]. Fake [99], [0] and old [S3]. Again [3][5].",
            &[2, 4, 5],
        );
        assert_eq!(c.text, "A [1]. B [2][1]. Fake, and old. Again [2][1].");
        assert_eq!(c.cited, vec![4, 2]);
        assert_eq!(c.removed, 3);
    }

    #[test]
    fn leaves_other_brackets_alone() {
        let c = check("See [the docs](http://x.test/) and [ ] and [2].", &[1]);
        assert_eq!(c.text, "See [the docs](http://x.test/) and [ ] and [1].");
        assert_eq!((c.cited, c.removed), (vec![1], 0));
        let c = check("unclosed [2", &[1]);
        assert_eq!(c.text, "unclosed [2");
    }
}
