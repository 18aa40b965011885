//! Citation validation for reports the LLM writes.
//!
//! The context labels each source `[S<idx>]`. In the model's text every `[S<idx>]` (also
//! `[S1, S3]` and `[S1][S3]`) that names a source of the context becomes a numbered citation
//! `[n]`, numbered in order of first use; anything else that looks like a citation (`[S99]`, a
//! bare `[7]`) points to nothing the job read, so it is removed and counted. The sources list is
//! then built from exactly the cited sources, numbered without gaps.

use std::collections::BTreeMap;

/// The text with citations renumbered, the cited source indexes in citation order, and how many
/// citations were removed.
#[derive(Debug, PartialEq)]
pub struct Checked {
    pub text: String,
    pub cited: Vec<u32>,
    pub removed: usize,
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

/// `S3`, `S1, S4`, `7`, `1, 2`: a citation list; anything else is not one.
fn parse_refs(inner: &str) -> Option<Vec<Ref>> {
    let parts: Vec<&str> = inner.split([',', ';']).map(str::trim).collect();
    if parts.is_empty() || parts.iter().any(|p| p.is_empty()) {
        return None;
    }
    parts
        .into_iter()
        .map(
            |p| match p.strip_prefix('S').or_else(|| p.strip_prefix('s')) {
                Some(n) => n.parse().ok().map(Ref::Source),
                None => p.parse::<u32>().ok().map(|_| Ref::Bare),
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
            "A [S4]. B [S2, S4]. Fake [S99] and bare [7]. Again [S2][S4].",
            &[2, 4, 5],
        );
        assert_eq!(c.text, "A [1]. B [2][1]. Fake and bare. Again [2][1].");
        assert_eq!(c.cited, vec![4, 2]);
        assert_eq!(c.removed, 2);
    }

    #[test]
    fn leaves_other_brackets_alone() {
        let c = check("See [the docs](http://x.test/) and [ ] and [S1].", &[1]);
        assert_eq!(c.text, "See [the docs](http://x.test/) and [ ] and [1].");
        assert_eq!((c.cited, c.removed), (vec![1], 0));
        let c = check("unclosed [S1", &[1]);
        assert_eq!(c.text, "unclosed [S1");
    }
}
