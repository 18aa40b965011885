//! The report writer's context: the analysed sources, compressed level by level to fit a token
//! budget.
//!
//! Sources come sorted by relevance, best first; their order is their rank. By default the top
//! [`FULL_SOURCES`] are given in full (their markdown, cut to [`FULL_MAX_CHARS`] characters at a
//! paragraph or line boundary), the next [`KEY_POINT_SOURCES`] as key points (summary and key
//! points, at most [`KEY_POINTS_MAX_CHARS`] characters), and the rest as references (title, URL,
//! relevance). Every block starts with the line `[<label>] <title> — <url>`, which the report
//! writer cites as `[<label>]` ([`crate::citations::label`]: the numbered-sources form models
//! are trained on). Blocks are joined by a blank line.
//!
//! When the text would exceed the budget, sources are degraded a level at a time, never cut
//! mid-source: the lowest-ranked full source becomes key points, then the lowest-ranked key
//! points source becomes a reference, and so on in turn; when only references are left they are
//! dropped from the bottom. If not even the best source fits as a reference the context is
//! empty. Each block is counted once per level it is rendered at and the counts are summed with
//! the separators'; the joined text is then counted once more, and should merging across a
//! block boundary ever cost more than the parts (possible in BPE, never in the approximation),
//! degradation continues, so `tokens <= budget` always holds.

use std::borrow::Cow;

use trawl_text::collapse_whitespace;

use crate::citations::label;
use crate::tokens::Tokenizer;

/// How many of the best sources are given in full.
pub(crate) const FULL_SOURCES: usize = 3;
/// How many sources after those are given as key points.
pub(crate) const KEY_POINT_SOURCES: usize = 3;
/// A full source's markdown is cut to this many characters.
pub(crate) const FULL_MAX_CHARS: usize = 8_000;
/// A key points body (summary and key points) is cut to this many characters.
pub(crate) const KEY_POINTS_MAX_CHARS: usize = 800;

/// Between blocks.
const SEPARATOR: &str = "\n\n";
/// Ends a body that was cut; counted within the character limits.
const CUT_MARKER: &str = "\n[…]";

/// One analysed source, as the context builder needs it.
#[derive(Clone, Debug, Default)]
pub struct ContextSource {
    /// The source's index; the report writer cites it as `[`[`label`]`(idx)]`.
    pub idx: u32,
    pub title: String,
    pub url: String,
    pub relevance: f64,
    pub summary: String,
    pub key_points: Vec<String>,
    pub markdown: String,
    /// The job's data points the source's analysis found, as (data point, value).
    pub data: Vec<(String, String)>,
    /// The count, table or passage the question's form asks for ([`crate::report::lookup`]).
    pub lookup: Option<String>,
}

/// How much of a source the context holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    Full,
    KeyPoints,
    Reference,
    Dropped,
}

impl Level {
    fn slot(self) -> usize {
        match self {
            Level::Full => 0,
            Level::KeyPoints => 1,
            Level::Reference => 2,
            Level::Dropped => unreachable!("dropped sources are not rendered"),
        }
    }
}

/// The built context.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Context {
    /// The blocks, best source first, joined by blank lines.
    pub text: String,
    /// `text`'s tokens by the tokenizer given to [`build`]; at most the budget.
    pub tokens: usize,
    /// Each source's level, in input order, by its `idx`.
    pub levels: Vec<(u32, Level)>,
}

/// The context for `sources` (sorted best first) in at most `budget` tokens of `tokenizer`.
pub fn build(sources: &[ContextSource], budget: usize, tokenizer: &Tokenizer) -> Context {
    let mut levels: Vec<Level> = (0..sources.len()).map(default_level).collect();
    // Tokens of each source's block at each level, counted when first needed.
    let mut counts: Vec<[Option<usize>; 3]> = vec![[None; 3]; sources.len()];
    let separator = tokenizer.count(SEPARATOR);
    let mut demote_full_next = true;
    loop {
        // Degrade until the summed counts fit.
        loop {
            let mut sum = 0;
            let mut blocks = 0usize;
            for (i, level) in levels.iter().enumerate() {
                if *level == Level::Dropped {
                    continue;
                }
                let slot = &mut counts[i][level.slot()];
                sum += *slot.get_or_insert_with(|| tokenizer.count(&render(&sources[i], *level)));
                blocks += 1;
            }
            sum += blocks.saturating_sub(1) * separator;
            if sum <= budget || !degrade(&mut levels, &mut demote_full_next) {
                break;
            }
        }
        if levels.iter().all(|l| *l == Level::Dropped) {
            return Context {
                text: String::new(),
                tokens: 0,
                levels: with_idx(sources, &levels),
            };
        }
        let text = assemble(sources, &levels);
        let tokens = tokenizer.count(&text);
        if tokens <= budget {
            return Context {
                text,
                tokens,
                levels: with_idx(sources, &levels),
            };
        }
        // The joined text costs more than its counted parts: degrade one more step and retry.
        degrade(&mut levels, &mut demote_full_next);
    }
}

fn default_level(rank: usize) -> Level {
    if rank < FULL_SOURCES {
        Level::Full
    } else if rank < FULL_SOURCES + KEY_POINT_SOURCES {
        Level::KeyPoints
    } else {
        Level::Reference
    }
}

fn with_idx(sources: &[ContextSource], levels: &[Level]) -> Vec<(u32, Level)> {
    sources
        .iter()
        .zip(levels)
        .map(|(s, l)| (s.idx, *l))
        .collect()
}

/// One step down: the lowest-ranked full source to key points and the lowest-ranked key points
/// source to a reference, in turn (either alone once the other level is empty); with only
/// references left, the lowest-ranked is dropped. False when everything is dropped already.
fn degrade(levels: &mut [Level], demote_full_next: &mut bool) -> bool {
    for _ in 0..2 {
        let (from, to) = if *demote_full_next {
            (Level::Full, Level::KeyPoints)
        } else {
            (Level::KeyPoints, Level::Reference)
        };
        *demote_full_next = !*demote_full_next;
        if let Some(l) = levels.iter_mut().rev().find(|l| **l == from) {
            *l = to;
            return true;
        }
    }
    match levels.iter_mut().rev().find(|l| **l == Level::Reference) {
        Some(l) => {
            *l = Level::Dropped;
            true
        }
        None => false,
    }
}

/// The blocks of the sources not dropped, in order, joined by [`SEPARATOR`].
fn assemble(sources: &[ContextSource], levels: &[Level]) -> String {
    let blocks: Vec<String> = sources
        .iter()
        .zip(levels)
        .filter(|(_, l)| **l != Level::Dropped)
        .map(|(s, l)| render(s, *l))
        .collect();
    blocks.join(SEPARATOR)
}

/// A source's block at `level`: the citation line, then the level's body. No trailing newline.
fn render(source: &ContextSource, level: Level) -> String {
    let title = collapse_whitespace(&source.title);
    let title = if title.is_empty() {
        "(untitled)".to_string()
    } else {
        title
    };
    let mut block = format!(
        "[{}] {} — {}",
        label(source.idx),
        title,
        collapse_whitespace(&source.url)
    );
    // Values the analysis found, and the lookup, are the densest evidence there is: every
    // level but the last two carries them.
    if matches!(level, Level::Full | Level::KeyPoints) && !source.data.is_empty() {
        let data: Vec<String> = (source.data.iter())
            .map(|(k, v)| format!("{} = {}", collapse_whitespace(k), collapse_whitespace(v)))
            .collect();
        block.push_str("\nData: ");
        block.push_str(&cut(&data.join("; "), KEY_POINTS_MAX_CHARS));
    }
    if let Some(lookup) =
        (source.lookup.as_ref()).filter(|_| matches!(level, Level::Full | Level::KeyPoints))
    {
        block.push_str("\nLookup: ");
        block.push_str(&cut(lookup, KEY_POINTS_MAX_CHARS));
    }
    let body = match level {
        Level::Full if !source.markdown.trim().is_empty() => full(source),
        // A full source without markdown has only its key points to give.
        Level::Full | Level::KeyPoints => key_points(source),
        Level::Reference => format!("Relevance: {:.2}", source.relevance),
        Level::Dropped => String::new(),
    };
    if !body.is_empty() {
        block.push('\n');
        block.push_str(&body);
    }
    block
}

/// A full source's body: its markdown, cut to [`FULL_MAX_CHARS`]. When a longer one (a filing,
/// a long page) has key points past the cut, they come first, and its opening gets the room
/// left: the sentence that answers on page 240 is not cut away.
fn full(source: &ContextSource) -> String {
    let markdown = source.markdown.trim();
    let opening = cut(markdown, FULL_MAX_CHARS);
    if opening.len() == markdown.len() {
        return opening.into_owned();
    }
    let read = collapse_whitespace(&opening);
    let beyond: Vec<&String> = (source.key_points.iter())
        .filter(|p| !read.contains(collapse_whitespace(p).as_str()))
        .collect();
    if beyond.is_empty() {
        return opening.into_owned();
    }
    let points: Vec<String> = beyond
        .iter()
        .map(|p| format!("- {}", collapse_whitespace(p)))
        .collect();
    let mut body = cut(&points.join("\n"), KEY_POINTS_MAX_CHARS).into_owned();
    let room = FULL_MAX_CHARS.saturating_sub(body.chars().count() + SEPARATOR.len());
    body.push_str(SEPARATOR);
    body.push_str(&cut(markdown, room));
    body
}

/// Summary, then one `- ` line per key point, cut to [`KEY_POINTS_MAX_CHARS`].
fn key_points(source: &ContextSource) -> String {
    let mut body = collapse_whitespace(&source.summary);
    for point in &source.key_points {
        let point = collapse_whitespace(point);
        if point.is_empty() {
            continue;
        }
        if !body.is_empty() {
            body.push('\n');
        }
        body.push_str("- ");
        body.push_str(&point);
    }
    cut(&body, KEY_POINTS_MAX_CHARS).into_owned()
}

/// `text` if it has at most `max_chars` characters; otherwise its longest prefix ending at a
/// paragraph break (else a line break, else a space) in the second half of the allowance, or
/// failing those at the last whole character, followed by [`CUT_MARKER`]. The result has at
/// most `max_chars` characters and is valid UTF-8 by construction (cuts only at char
/// boundaries).
fn cut(text: &str, max_chars: usize) -> Cow<'_, str> {
    let Some((end, _)) = text.char_indices().nth(max_chars) else {
        return Cow::Borrowed(text);
    };
    let marker = CUT_MARKER.chars().count();
    if max_chars <= marker {
        return Cow::Borrowed(&text[..end]);
    }
    // Byte offset of the first character beyond what fits with the marker.
    let limit = text
        .char_indices()
        .nth(max_chars - marker)
        .map_or(end, |(i, _)| i);
    let prefix = &text[..limit];
    let half = limit / 2;
    let at = [SEPARATOR, "\n", " "]
        .iter()
        .find_map(|b| prefix.rfind(b).filter(|&i| i >= half))
        .unwrap_or(limit);
    let mut out = prefix[..at].trim_end().to_string();
    out.push_str(CUT_MARKER);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(idx: u32, markdown: String) -> ContextSource {
        ContextSource {
            idx,
            title: format!("Source number {idx}"),
            url: format!("https://example.com/{idx}"),
            relevance: 1.0 - f64::from(idx) / 100.0,
            summary: format!("Summary of source {idx}: what it says about the question."),
            key_points: vec![
                format!("Key point one of source {idx}."),
                format!("Key point two of source {idx}, with a figure of {idx}00 m."),
            ],
            markdown,
            data: Vec::new(),
            lookup: None,
        }
    }

    /// About `bytes` bytes of markdown paragraphs; `multibyte` mixes in 2-, 3- and 4-byte
    /// characters.
    fn markdown(idx: u32, bytes: usize, multibyte: bool) -> String {
        let mut out = format!("# Source {idx}\n\n");
        let mut n = 0;
        while out.len() < bytes {
            n += 1;
            if multibyte {
                out.push_str(&format!(
                    "Paragraph {n} über Brücken: 東京の橋は長い 🚀 — naïve café, ünïcödé.\n\n"
                ));
            } else {
                out.push_str(&format!(
                    "Paragraph {n} of source {idx}: the bridge opened in 1937 and is 2,737 m long.\n\n"
                ));
            }
        }
        out
    }

    fn sources(count: u32, bytes: usize, multibyte: bool) -> Vec<ContextSource> {
        (1..=count)
            .map(|i| source(i, markdown(i, bytes, multibyte)))
            .collect()
    }

    fn levels(context: &Context) -> Vec<Level> {
        context.levels.iter().map(|(_, l)| *l).collect()
    }

    use Level::{Dropped, Full, KeyPoints, Reference};

    #[test]
    fn default_levels_with_a_large_budget() {
        let t = Tokenizer::for_model("gpt-4o");
        let srcs = sources(10, 2_000, false);
        let c = build(&srcs, 1_000_000, &t);
        assert_eq!(
            levels(&c),
            [Full, Full, Full, KeyPoints, KeyPoints, KeyPoints]
                .into_iter()
                .chain([Reference; 4])
                .collect::<Vec<_>>()
        );
        let idx: Vec<u32> = c.levels.iter().map(|(i, _)| *i).collect();
        assert_eq!(idx, (1..=10).collect::<Vec<_>>());
        assert_eq!(c.tokens, t.count(&c.text));
        // Blocks in rank order, each opening with its citation line.
        let mut from = 0;
        for s in &srcs {
            let header = format!("[{}] {} — {}\n", s.idx + 1, s.title, s.url);
            let at = c.text[from..].find(&header).expect("header") + from;
            assert!(at == 0 || c.text[..at].ends_with("\n\n"));
            from = at + header.len();
        }
        assert!(c.text.contains(srcs[2].markdown.trim()));
        assert!(!c.text.contains(srcs[3].markdown.trim()));
        assert!(c
            .text
            .contains("- Key point two of source 6, with a figure of 600 m."));
        assert!(!c.text.contains("Key point one of source 7"));
        assert!(c
            .text
            .ends_with("[11] Source number 10 — https://example.com/10\nRelevance: 0.90"));
    }

    #[test]
    fn budget_is_never_exceeded() {
        let tokenizers = [
            Tokenizer::for_model("gpt-4"),
            Tokenizer::for_model("gpt-4o"),
            Tokenizer::for_model("claude-sonnet-4-5"),
        ];
        let sizes = [(40, false), (2_000, false), (30_000, true)];
        for (bytes, multibyte) in sizes {
            for count in [0, 1, 7, 40] {
                let srcs = sources(count, bytes, multibyte);
                for t in &tokenizers {
                    for budget in [0, 10, 50, 200, 1_000, 5_000, 20_000] {
                        let c = build(&srcs, budget, t);
                        let actual = t.count(&c.text);
                        let case = format!("{} {bytes}B ×{count} budget {budget}", t.name());
                        assert!(actual <= budget, "{case}: {actual} tokens");
                        assert_eq!(c.tokens, actual, "{case}");
                        assert_eq!(c.levels.len(), srcs.len(), "{case}");
                        assert_eq!(c.text.is_empty(), c.tokens == 0, "{case}");
                        // The kept sources are the best ones: dropping only ever starts from the bottom.
                        let kept = c.levels.iter().filter(|(_, l)| *l != Dropped).count();
                        assert!(
                            c.levels[kept..].iter().all(|(_, l)| *l == Dropped),
                            "{case}"
                        );
                        assert_eq!(
                            c.text.matches(" — https://example.com/").count(),
                            kept,
                            "{case}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn over_budget_demotes_the_third_full_source_instead_of_cutting_it() {
        let t = Tokenizer::for_model("gpt-4");
        let srcs = sources(10, 2_000, false);
        let mut expected = (0..10).map(default_level).collect::<Vec<_>>();
        expected[2] = KeyPoints;
        let two_full = t.count(&assemble(&srcs, &expected));
        // A little room for what merging across block boundaries saves, far less than the
        // third source's markdown.
        let budget = two_full + 20;
        assert!(
            t.count(&assemble(
                &srcs,
                &(0..10).map(default_level).collect::<Vec<_>>()
            )) > budget
        );
        let c = build(&srcs, budget, &t);
        assert_eq!(levels(&c), expected);
        assert!(c.tokens <= budget);
        assert!(c.text.contains(srcs[1].markdown.trim()));
        assert!(!c.text.contains("Paragraph 1 of source 3"));
        assert!(c
            .text
            .contains("[4] Source number 3 — https://example.com/3\nSummary of source 3"));
    }

    #[test]
    fn degradation_alternates_then_drops_references_from_the_bottom() {
        let mut levels: Vec<Level> = (0..8).map(default_level).collect();
        let mut full_next = true;
        let mut steps = Vec::new();
        while degrade(&mut levels, &mut full_next) {
            steps.push(levels.clone());
        }
        let short = |l: &Level| match l {
            Full => 'F',
            KeyPoints => 'K',
            Reference => 'R',
            Dropped => '-',
        };
        let steps: Vec<String> = steps
            .iter()
            .map(|s| s.iter().map(short).collect())
            .collect();
        assert_eq!(
            steps,
            [
                "FFKKKKRR", "FFKKKRRR", "FKKKKRRR", "FKKKRRRR", "KKKKRRRR", "KKKRRRRR", "KKRRRRRR",
                "KRRRRRRR", "RRRRRRRR", "RRRRRRR-", "RRRRRR--", "RRRRR---", "RRRR----", "RRR-----",
                "RR------", "R-------", "--------",
            ]
        );
    }

    #[test]
    fn tight_budgets_keep_the_best_references_or_nothing() {
        let t = Tokenizer::for_model("gpt-4o");
        let srcs = sources(5, 2_000, false);
        let one = t.count(&render(&srcs[0], Reference));
        let c = build(&srcs, one, &t);
        assert_eq!(levels(&c), [Reference, Dropped, Dropped, Dropped, Dropped]);
        assert_eq!(c.text, render(&srcs[0], Reference));
        let c = build(&srcs, one - 1, &t);
        assert_eq!(c.text, "");
        assert_eq!(c.tokens, 0);
        assert!(levels(&c).iter().all(|l| *l == Dropped));
    }

    #[test]
    fn empty_input_is_an_empty_context() {
        let t = Tokenizer::for_model("claude-sonnet-4-5");
        assert_eq!(build(&[], 1_000, &t), Context::default());
        assert_eq!(build(&[], 0, &t), Context::default());
    }

    #[test]
    fn full_markdown_is_cut_at_a_boundary_without_splitting_characters() {
        // Paragraphs: cut at a paragraph break.
        let md = markdown(1, 30_000, true);
        let out = cut(&md, FULL_MAX_CHARS);
        assert!(out.chars().count() <= FULL_MAX_CHARS);
        let kept = out.strip_suffix(CUT_MARKER).expect("marker");
        assert!(md.starts_with(kept));
        assert!(md[kept.len()..].starts_with("\n\n"));
        assert!(kept.chars().count() > FULL_MAX_CHARS / 2);

        // No breaks at all, every character multibyte: cut at the last whole character.
        for filler in ["é", "東", "🚀", "a東🚀é"] {
            let md = filler.repeat(10_000);
            let out = cut(&md, FULL_MAX_CHARS);
            assert_eq!(out.chars().count(), FULL_MAX_CHARS);
            let kept = out.strip_suffix(CUT_MARKER).expect("marker");
            assert!(md.starts_with(kept), "{filler}");
        }

        // Short enough: untouched.
        assert_eq!(cut("short", FULL_MAX_CHARS), "short");
        let exact = "東".repeat(FULL_MAX_CHARS);
        assert_eq!(cut(&exact, FULL_MAX_CHARS), exact);

        // In a built context, a source without key points.
        let t = Tokenizer::for_model("gpt-4o");
        let mut bare = source(1, md.clone());
        bare.key_points.clear();
        let c = build(&[bare], 1_000_000, &t);
        let body = c.text.split_once('\n').expect("body").1;
        assert!(body.chars().count() <= FULL_MAX_CHARS);
        assert!(md.starts_with(body.strip_suffix(CUT_MARKER).expect("marker")));
    }

    #[test]
    fn a_long_full_source_opens_with_its_key_points_past_the_cut() {
        let md = markdown(1, 30_000, false);
        let mut s = source(1, md.clone());
        let opening = cut(&md, FULL_MAX_CHARS).into_owned();
        let last = md.trim_end().rsplit("\n\n").next().unwrap().to_owned();
        assert!(!opening.contains(&last));
        s.key_points = vec![last.clone(), "Key point one of source 1.".into()];
        s.markdown = format!("Key point one of source 1.\n\n{md}");
        let body = render(&s, Level::Full);
        let body = body.split_once('\n').expect("body").1;
        assert!(body.chars().count() <= FULL_MAX_CHARS);
        // Only the point the cut leaves out comes first.
        let (points, rest) = body.split_once(SEPARATOR).unwrap();
        assert_eq!(points, format!("- {last}"));
        assert!(
            rest.starts_with("Key point one of source 1.\n\n# Source 1"),
            "{rest:.80}"
        );
        // Points within the opening change nothing; a source that fits is given as it is.
        s.key_points.remove(0);
        assert_eq!(full(&s), cut(s.markdown.trim(), FULL_MAX_CHARS));
        let short = render(&source(2, "Short body.".into()), Level::Full);
        assert!(short.ends_with("\nShort body."), "{short}");
    }

    #[test]
    fn found_data_rides_with_full_and_key_point_sources_only() {
        let mut s = source(4, "Body text.".into());
        s.data = vec![("melting point".into(), "1 234 °C".into())];
        for level in [Level::Full, Level::KeyPoints] {
            assert!(render(&s, level).contains("\nData: melting point = 1 234 °C\n"));
        }
        assert!(!render(&s, Level::Reference).contains("Data:"));
        s.lookup = Some("14 moons (stated): It has 14 known moons.".into());
        assert!(render(&s, Level::KeyPoints).contains("\nLookup: 14 moons (stated): It has"));
        assert!(!render(&s, Level::Reference).contains("Lookup:"));
    }

    #[test]
    fn key_points_are_cut_to_their_limit() {
        let mut s = source(4, String::new());
        s.key_points = (0..100)
            .map(|i| format!("Point {i} says something long-winded."))
            .collect();
        let body = key_points(&s);
        assert!(body.chars().count() <= KEY_POINTS_MAX_CHARS);
        assert!(body.ends_with(CUT_MARKER));
        assert!(body.starts_with("Summary of source 4"));
        // Cut at a line: no half points.
        assert!(body
            .strip_suffix(CUT_MARKER)
            .unwrap()
            .ends_with("long-winded."));
    }

    #[test]
    fn titles_and_urls_stay_on_the_citation_line() {
        let mut s = source(7, "Body".into());
        s.title = "  A title\nwith a break ".into();
        s.url = "https://example.com/x".into();
        assert_eq!(
            render(&s, Full),
            "[8] A title with a break — https://example.com/x\nBody"
        );
        s.title = String::new();
        assert!(render(&s, Reference).starts_with("[8] (untitled) — https://example.com/x\n"));
    }

    #[test]
    fn level_serialises_in_snake_case() {
        let json = serde_json::to_string(&[Full, KeyPoints, Reference, Dropped]).unwrap();
        assert_eq!(json, r#"["full","key_points","reference","dropped"]"#);
    }
}
