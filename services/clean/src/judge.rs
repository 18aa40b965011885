//! The cleanliness judge: how much of the extracted markdown is page furniture rather than the
//! article. Its score (0 all furniture, 1 clean) decides whether LLM cleaning is worth a call:
//! at or above `clean.judge_threshold` the markdown is kept as it is.
//!
//! - [`heuristic`], always: the share of lines that look like residue the extractor left —
//!   boilerplate phrases (cookie, subscribe, share …), link-heavy lines, lines repeated
//!   verbatim, nav-like runs of short list items, and (at half weight) very short lines. Code
//!   blocks and table rows count as content.
//! - [`llm`], with an LLM configured: the model scores a bounded [`sample`] of the page (its
//!   start and end, where furniture gathers) and names the problems it saw. The question is
//!   left out of the prompt so one page's verdict is cached across questions.

use std::collections::HashSet;
use std::sync::LazyLock;

use aho_corasick::AhoCorasick;

use serde::Deserialize;
use trawl_llm::{ChatRequest, Llm, LlmError};
use trawl_text::{is_wide, weighted_len};

use trawl_text::floor_char_boundary;

/// Phrases of page furniture, matched case-insensitively.
const PHRASES: &[&str] = &[
    "cookie",
    "subscribe",
    "newsletter",
    "sign up",
    "sign in",
    "log in",
    "share on",
    "share this",
    "follow us",
    "all rights reserved",
    "privacy policy",
    "terms of use",
    "terms of service",
    "accept all",
    "advertisement",
    "sponsored",
    "related posts",
    "related articles",
    "you may also like",
    "skip to content",
    "skip to main",
    "back to top",
    "leave a comment",
    "©",
    // The same furniture in the languages trawl is measured on: each phrase says its own
    // language, so all are matched on every page.
    "alle rechte vorbehalten",
    "datenschutzerklärung",
    "newsletter abonnieren",
    "zum inhalt springen",
    "nach oben",
    "das könnte sie auch interessieren",
    "tous droits réservés",
    "politique de confidentialité",
    "mentions légales",
    "abonnez-vous",
    "partager sur",
    "aller au contenu",
    "retour en haut",
    "vous aimerez aussi",
    "todos los derechos reservados",
    "política de privacidad",
    "aviso legal",
    "suscríbete",
    "compartir en",
    "ir al contenido",
    "volver arriba",
    "también te puede interesar",
    "все права защищены",
    "политика конфиденциальности",
    "подпишитесь",
    "поделиться",
    "читайте также",
    "版权所有",
    "隐私政策",
    "分享到",
    "返回顶部",
    "相关文章",
    "無断転載",
    "プライバシーポリシー",
    "関連記事",
    "ページトップ",
    "جميع الحقوق محفوظة",
    "سياسة الخصوصية",
    "مقالات ذات صلة",
];
/// A run of at least this many short list items reads as navigation.
const NAV_RUN: usize = 4;

/// The heuristic's verdict.
#[derive(Clone, Debug, PartialEq)]
pub struct Heuristic {
    pub score: f64,
    pub problems: Vec<String>,
}

#[derive(Clone, Copy, PartialEq)]
enum Line {
    Clean,
    Phrase,
    Links,
    Repeated,
    Nav,
    Short,
}

/// Under four words: by its spaces, or where Chinese or Japanese leave none, by its length
/// in Latin letters (a sentence of ten characters says what four words do).
fn short(line: &str, words: usize) -> bool {
    words < 4 && !(line.chars().any(is_wide) && weighted_len(line) >= 24)
}

/// Visible text of a markdown line, and how much of it is link text.
fn link_share(line: &str) -> (usize, usize, usize) {
    let (mut visible, mut linked, mut links) = (0, 0, 0);
    let mut rest = line;
    while let Some(open) = rest.find('[') {
        let Some(mid) = rest[open..].find("](") else {
            break;
        };
        let Some(close) = rest[open + mid..].find(')') else {
            break;
        };
        visible += rest[..open].trim().chars().count();
        let text = rest[open + 1..open + mid].trim().chars().count();
        visible += text;
        linked += text;
        links += 1;
        rest = &rest[open + mid + close + 1..];
    }
    visible += rest.trim().chars().count();
    (visible, linked, links)
}

/// The text of a bullet list item (`- `, `* ` or `+ `).
pub(crate) fn list_item(t: &str) -> Option<&str> {
    t.strip_prefix("- ")
        .or_else(|| t.strip_prefix("* "))
        .or_else(|| t.strip_prefix("+ "))
}

/// The heuristic cleanliness score of `markdown`, with what lowered it.
pub fn heuristic(markdown: &str) -> Heuristic {
    verdict(&classify(markdown))
}

/// A line's words, lowercased, as one hash: lines that differ only in their whitespace or
/// their case hash alike. FNV-1a over the bytes, as SipHash cost a tenth of the judge.
struct WordsHash(u64);

impl WordsHash {
    fn of(line: &str) -> u64 {
        let mut h = WordsHash(0xcbf2_9ce4_8422_2325);
        if line.is_ascii() {
            // Byte by byte, lowercased as they come: the hash `split_whitespace` and
            // `to_lowercase` would give, without a copy of the line or a pass over its words.
            let mut in_word = false;
            for b in line.bytes() {
                if trawl_text::is_ascii_space(b) {
                    if in_word {
                        h.byte(0xff);
                    }
                    in_word = false;
                } else {
                    h.byte(b.to_ascii_lowercase());
                    in_word = true;
                }
            }
            if in_word {
                h.byte(0xff);
            }
        } else {
            for word in line.to_lowercase().split_whitespace() {
                word.bytes().for_each(|b| h.byte(b));
                h.byte(0xff);
            }
        }
        h.0
    }

    fn byte(&mut self, b: u8) {
        self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
}

/// Whether `line` holds one of [`PHRASES`], case-insensitively.
fn has_phrase(line: &str) -> bool {
    // The phrases in one pass over a line, not one pass each. An ASCII line can only hold the
    // ASCII phrases, which need no lowercased copy of it to be matched.
    static ASCII: LazyLock<AhoCorasick> = LazyLock::new(|| {
        (AhoCorasick::builder().ascii_case_insensitive(true))
            .build(PHRASES.iter().filter(|p| p.is_ascii()))
            .expect("the phrases are a valid pattern set")
    });
    static ALL: LazyLock<AhoCorasick> =
        LazyLock::new(|| AhoCorasick::new(PHRASES).expect("the phrases are a valid pattern set"));
    match line.is_ascii() {
        true => ASCII.is_match(line),
        false => ALL.is_match(&line.to_lowercase()),
    }
}

/// What each line of content of `markdown` is (a code block counts as one clean line).
fn classify(markdown: &str) -> Vec<Line> {
    let mut kinds: Vec<Line> = Vec::new();
    // Every earlier line, normalised: a set, as a page may have tens of thousands of lines, of
    // hashes, as a copy of each would be an allocation a line for a yes or a no.
    let mut seen: HashSet<u64> = HashSet::new();
    let mut in_code = false;
    // Start of the current run of short list items in `kinds`.
    let mut run: Option<usize> = None;
    for line in markdown.lines() {
        let t = line.trim();
        if t.starts_with("```") || t.starts_with("~~~") {
            if !in_code {
                // A code block is one line of content, whatever its length.
                kinds.push(Line::Clean);
            }
            in_code = !in_code;
            continue;
        }
        if in_code || t.is_empty() {
            continue;
        }
        // Most lines hold no link: their share of link text is not counted.
        let (visible, linked, links) = match t.contains('[') {
            true => link_share(t),
            false => (0, 0, 0),
        };
        let item = list_item(t);
        let short_item = item.is_some_and(|i| {
            i.split_whitespace().take(4).count() <= 3 || (links == 1 && linked * 10 >= visible * 8)
        });
        let repeated = !seen.insert(WordsHash::of(t));
        let kind = if has_phrase(t) {
            Line::Phrase
        } else if links >= 3 || (links > 0 && linked * 10 >= visible * 6 && item.is_none()) {
            Line::Links
        } else if repeated && !t.starts_with('|') {
            Line::Repeated
        } else if item.is_none()
            && !t.starts_with('#')
            && !t.starts_with('|')
            // Counted only as far as `short` looks.
            && short(t, t.split_whitespace().take(4).count())
        {
            Line::Short
        } else {
            Line::Clean
        };
        if short_item {
            run.get_or_insert(kinds.len());
        } else if let Some(start) = run.take() {
            mark_nav(&mut kinds, start);
        }
        kinds.push(kind);
    }
    if let Some(start) = run {
        mark_nav(&mut kinds, start);
    }
    kinds
}

/// The score of `kinds`: bad lines count whole and very short ones half; with a problem for
/// each kind of bad line found.
fn verdict(kinds: &[Line]) -> Heuristic {
    if kinds.is_empty() {
        return Heuristic {
            score: 1.0,
            problems: Vec::new(),
        };
    }
    let count = |k: Line| kinds.iter().filter(|&&x| x == k).count();
    let bad = count(Line::Phrase) + count(Line::Links) + count(Line::Repeated) + count(Line::Nav);
    let weighted = bad as f64 + 0.5 * count(Line::Short) as f64;
    let score = (1.0 - weighted / kinds.len() as f64).clamp(0.0, 1.0);
    let mut problems = Vec::new();
    for (kind, what) in [
        (
            Line::Phrase,
            "with cookie, subscribe, share or similar phrases",
        ),
        (Line::Links, "mostly links"),
        (Line::Repeated, "repeated"),
        (Line::Nav, "in nav-like lists of short items"),
        (Line::Short, "very short"),
    ] {
        let n = count(kind);
        if n > 0 {
            let lines = if n == 1 { "line" } else { "lines" };
            problems.push(format!("{n} {lines} {what}"));
        }
    }
    Heuristic {
        score: (score * 1000.0).round() / 1000.0,
        problems,
    }
}

/// Marks the run of short list items from `start` as navigation if it is long enough.
fn mark_nav(kinds: &mut [Line], start: usize) {
    if kinds.len() - start >= NAV_RUN {
        for k in &mut kinds[start..] {
            if *k == Line::Clean || *k == Line::Short {
                *k = Line::Nav;
            }
        }
    }
}

/// At most `max` characters of `markdown`: all of it when it fits, else its first two thirds
/// and last third of the budget, each cut at a line break.
pub fn sample(markdown: &str, max: usize) -> String {
    if markdown.len() <= max {
        return markdown.to_owned();
    }
    let head_end = floor_char_boundary(markdown, max * 2 / 3);
    let head_end = markdown[..head_end].rfind('\n').unwrap_or(head_end);
    let tail_start = floor_char_boundary(markdown, markdown.len() - max / 3);
    let tail_start = markdown[tail_start..]
        .find('\n')
        .map_or(tail_start, |i| tail_start + i + 1);
    format!(
        "{}\n[…]\n{}",
        &markdown[..head_end],
        &markdown[tail_start.max(head_end)..]
    )
}

/// The LLM's verdict.
#[derive(Clone, Debug, PartialEq, Deserialize, schemars::JsonSchema)]
pub struct Verdict {
    /// 1: only the page's own content; 0: only page furniture.
    pub score: f64,
    #[serde(default)]
    pub problems: Vec<String>,
}

const SYSTEM: &str = "You judge how clean the text extracted from a web page is. 1 means it is \
only the page's own content; 0 means it is only page furniture: navigation, cookie notices, \
share and subscribe prompts, ads, comment forms, repeated lines. Code, shell commands and tables \
are content. Reply with one JSON object: {\"score\": a number from 0 to 1, \"problems\": [short \
descriptions of the furniture you saw]}.";

/// The LLM's cleanliness verdict on a sample of the page.
pub async fn llm(llm: &Llm, sample: &str, total_chars: usize) -> Result<Verdict, LlmError> {
    let prompt = format!(
        "Text sample ({} of {total_chars} characters):\n{sample}",
        sample.chars().count()
    );
    let mut request = ChatRequest::new("judge", SYSTEM, prompt);
    request.max_tokens = 300;
    let validate = |v: &Verdict| {
        if !(0.0..=1.0).contains(&v.score) {
            Err("score must be between 0 and 1".to_owned())
        } else if v.problems.len() > 20 {
            Err("list at most 20 problems".to_owned())
        } else {
            Ok(())
        }
    };
    let (mut verdict, _) = llm.json::<Verdict, _>(&request, validate).await?;
    for p in &mut verdict.problems {
        p.truncate(floor_char_boundary(p, 200));
    }
    Ok(verdict)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ARTICLE: &str = "# Zorbium\n\nZorbium is a grey metal found in the hills of an imaginary country.\n\nZorbium melts at 1,284 degrees Celsius, a high melting point for its class.\n\n```\n$ zorb --melt\n```\n\n| Property | Value |\n|---|---|\n| Colour | grey |\n";

    #[test]
    fn a_clean_article_scores_high() {
        let h = heuristic(ARTICLE);
        assert!(h.score >= 0.9, "{h:?}");
        assert!(h.problems.is_empty(), "{h:?}");
    }

    #[test]
    fn residue_lowers_the_score_and_is_named() {
        let dirty = format!(
            "[Home](/) [News](/news) [About](/about)\n\n- [One](/1)\n- [Two](/2)\n- [Three](/3)\n- [Four](/4)\n\nWe use cookies. Accept all?\n\n{ARTICLE}\nShare on Twitter\n\nSubscribe to our newsletter\n\nZorbium is a grey metal found in the hills of an imaginary country.\n\nMenu\n"
        );
        let h = heuristic(&dirty);
        assert!(h.score < 0.7, "{h:?}");
        let all = h.problems.join(" | ");
        for what in [
            "phrases",
            "mostly links",
            "repeated",
            "nav-like",
            "very short",
        ] {
            assert!(all.contains(what), "{what}: {all}");
        }
    }

    /// A Chinese article's lines have no spaces and are not short; other languages' furniture
    /// is furniture.
    #[test]
    fn articles_and_furniture_in_other_languages() {
        let zh = "大桥连接老城区和港口区，每天有数万辆汽车通过。\n\n\
                  大桥全长1738米，设有四条车道，是该地区最长的桥梁。\n\n\
                  交通部门建议司机提前规划经过大桥的路线，以免拥堵。\n";
        let h = heuristic(zh);
        assert_eq!(h.score, 1.0, "{h:?}");
        let furniture = "Alle Rechte vorbehalten. Impressum und Kontakt.\n\n\
                         Politique de confidentialité et gestion des cookies du site.\n\n\
                         版权所有，未经许可不得转载本站任何内容。\n\n\
                         جميع الحقوق محفوظة لموقع الأخبار اليومية وشركائه\n";
        let h = heuristic(&format!("{zh}\n{furniture}"));
        assert!(h.problems[0].starts_with("4 lines with cookie"), "{h:?}");
    }

    #[test]
    fn repeats_are_found_among_many_lines() {
        // 50 000 distinct lines: compared pairwise, over 10⁹ comparisons.
        let mut page: String = (0..50_000)
            .map(|i| format!("line {i} of the text\n"))
            .collect();
        page.push_str("LINE 7   of the  text\n");
        let h = heuristic(&page);
        assert_eq!(h.problems, ["1 line repeated"], "{h:?}");
        // Words are compared, not the letters run together.
        assert_ne!(WordsHash::of("line 7 of"), WordsHash::of("line 7of"));
    }

    #[test]
    fn ascii_lines_match_and_hash_as_their_lowercase_does() {
        // ASCII lines take a path without a lowercased copy; it must agree with the other.
        assert_eq!(WordsHash::of("Read  MORE"), WordsHash::of("read more"));
        assert_eq!(WordsHash::of("ÉTÉ à Paris"), WordsHash::of("été  à paris"));
        assert_eq!(WordsHash::of("Kelvin"), WordsHash::of("\u{212A}elvin"));
        assert!(has_phrase("ACCEPT All cookies"));
        assert!(has_phrase("Bitte DATENSCHUTZERKLÄRUNG lesen"));
        assert!(has_phrase("© 2026 Ada"));
        assert!(!has_phrase("The cook kept the recipe"));
    }

    #[test]
    fn samples_keep_the_start_and_the_end() {
        let text: String = (0..200).map(|i| format!("line {i}\n")).collect();
        let s = sample(&text, 300);
        assert!(s.len() <= 310, "{}", s.len());
        assert!(
            s.starts_with("line 0\n") && s.ends_with("line 199\n"),
            "{s}"
        );
        assert!(s.contains("[…]"));
        assert_eq!(sample("short", 300), "short");
    }
}
