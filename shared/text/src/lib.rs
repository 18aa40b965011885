//! Text helpers the stages share without an LLM: content words, sentences, term coverage.
//! A crate of its own, so fetch, clean, search and synthesize share them without depending on
//! the worker machinery.
//!
//! Words beyond ASCII are normalised (NFKC: ligatures, full-width forms and compatibility
//! characters become what they stand for), and text in scripts written without spaces
//! (Chinese, Japanese, Thai, Lao, Khmer, Burmese) is cut into words by ICU4X's segmenter
//! (UAX #29, with dictionaries for Chinese and Japanese): split on spaces and punctuation
//! alone, a whole clause would be one word.

use std::borrow::Cow;
use std::collections::HashSet;

use icu_segmenter::WordSegmenter;

pub mod asked;
pub mod entities;
mod lang;
pub mod pages;
pub mod places;
pub mod points;
pub mod wanted;

pub use lang::{Lang, Locale, Numerals};

/// Words that carry no topic; dropped from questions and sentences before matching.
#[rustfmt::skip] // One line a word made this list a hundred lines long.
pub(crate) fn is_stop_word(w: &str) -> bool {
    // A `match` compiles to a switch on length and a few comparisons; `contains` on a list of
    // 80 words was a tenth of the clean stage's CPU.
    matches!(
        w,
        "a" | "about" | "all" | "also" | "an" | "and" | "any" | "are" | "as" | "at" | "be" | "been"
        | "but" | "by" | "can" | "could" | "did" | "do" | "does" | "for" | "from" | "had" | "has"
        | "have" | "how" | "i" | "if" | "in" | "into" | "is" | "it" | "its" | "many" | "me" | "more"
        | "most" | "much" | "my" | "no" | "not" | "of" | "on" | "or" | "our" | "out" | "so" | "some"
        | "such" | "tell" | "than" | "that" | "the" | "their" | "them" | "then" | "there" | "these"
        | "they" | "this" | "those" | "to" | "up" | "was" | "we" | "were" | "what" | "when"
        | "where" | "which" | "while" | "who" | "whom" | "why" | "will" | "with" | "would" | "you"
        | "your" | "first"
    )
}

/// Lower-cased alphanumeric runs of `text`, English stop words removed, each once, in order.
pub fn terms(text: &str) -> Vec<String> {
    terms_in(text, Lang::UND)
}

/// [`terms`] with the stop words of `lang`: a German question loses "wie", "ist" and "der",
/// which would otherwise be found on every German page.
pub fn terms_in(text: &str, lang: Lang) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    // Scanning `out` for each word is quadratic, and a whole page has thousands of distinct
    // words; a set takes over once there are more than a sentence's worth.
    let mut seen: HashSet<String> = HashSet::new();
    each_word_in(text, lang, |w| {
        let repeated = if out.len() < 32 {
            out.iter().any(|o| o == w)
        } else {
            if seen.is_empty() {
                seen.extend(out.iter().cloned());
            }
            // Only a new word is copied: most of a page's words are repeats or stop words.
            seen.contains(w) || !seen.insert(w.to_owned())
        };
        if !repeated {
            out.push(w.to_owned());
        }
        true
    });
    out
}

/// The names a question is about: the content words of its capitalised words past the first
/// ("How long is the Brimomir Bridge?" → brimomir, bridge). None when most of those words are
/// capitalised: a question in title case names nothing by its capitals.
pub fn names(question: &str) -> Vec<String> {
    let words: Vec<&str> = (question.split(|c: char| !c.is_alphanumeric()))
        .filter(|w| !w.is_empty())
        .skip(1)
        .collect();
    let capitalised: Vec<&str> = (words.iter().copied())
        .filter(|w| w.chars().next().is_some_and(char::is_uppercase))
        .collect();
    if capitalised.len() > 2 && capitalised.len() * 2 > words.len() {
        return Vec::new();
    }
    terms(&capitalised.join(" "))
}

/// [`names`] of a question in `lang`. German capitalises every noun, so a capital alone names
/// nothing in particular ("Wie hoch ist der Schmelzpunkt des Metalls Quarvium?" would make
/// "Schmelzpunkt" a name): a German question's names are those a noun introduces ("des Metalls
/// Quarvium", "die Stadt Fikodren") and the first part of a hyphenated one ("die
/// Zorvel-Brücke"). Scripts without case have none.
pub fn names_in(question: &str, lang: Lang) -> Vec<String> {
    match lang.capitals_mark_names() {
        true => names(question),
        false => german_names(question),
    }
}

/// The nouns that introduce a question's names in a language whose capitals do not take them
/// into the name, as English's do with "Bridge": "pont" of "le pont de Tovmo", "моста" of
/// "моста Товмо", "Berg" of "der Berg Velsor", "Brücke" of "die Zorvel-Brücke". They say what
/// the subject is, not what is asked about it. A word asking for a value ("la population de
/// Paris") is none. Lower-cased; none for English.
pub fn head_nouns(question: &str, lang: Lang) -> Vec<String> {
    let names = names_in(question, lang);
    if lang.is_english_or_und() || names.is_empty() {
        return Vec::new();
    }
    let is_name = |w: &str| names.iter().any(|n| *n == w.to_lowercase());
    let words: Vec<&str> = (question.split(|c: char| c.is_whitespace() || c == '\'' || c == '’'))
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '-'))
        .filter(|w| !w.is_empty())
        .collect();
    let mut out: Vec<String> = Vec::new();
    let mut add = |w: &str| {
        let w = w.to_lowercase();
        let content = !lang.is_stop_word(&w) && w.chars().any(char::is_alphabetic);
        if content && !is_name(&w) && !points::names_a_value(&w, lang) && !out.contains(&w) {
            out.push(w);
        }
    };
    for (i, w) in words.iter().enumerate() {
        let parts: Vec<&str> = w.split('-').collect();
        if parts.len() > 1 && parts.iter().any(|p| is_name(p)) {
            parts.iter().filter(|p| !is_name(p)).for_each(|p| add(p));
        } else if is_name(w) && i > 0 {
            let linked = matches!(
                words[i - 1],
                "de" | "du" | "del" | "d" | "di" | "da" | "des"
            );
            let before = if linked {
                i.checked_sub(2)
            } else {
                Some(i - 1)
            };
            if let Some(head) = before.map(|j| words[j]).filter(|h| !is_name(h)) {
                add(head);
            }
        }
    }
    out
}

fn german_names(question: &str) -> Vec<String> {
    let capitalised = |w: &str| w.chars().next().is_some_and(char::is_uppercase);
    let words: Vec<&str> = (question.split_whitespace())
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .collect();
    let mut found: Vec<&str> = Vec::new();
    for (i, w) in words.iter().enumerate().skip(1) {
        if !capitalised(w) {
            continue;
        }
        if let Some((head, _)) = w.rsplit_once('-') {
            found.extend(head.split('-').filter(|p| capitalised(p)));
        } else if i > 1 && capitalised(words[i - 1]) && !words[i - 1].contains('-') {
            found.push(w);
        }
    }
    terms(&found.join(" "))
}

/// Calls `f` with each lower-cased content word of `text` (the words of [`terms`], repeats
/// included) until it returns false, allocating nothing per word.
pub fn each_word(text: &str, f: impl FnMut(&str) -> bool) {
    each_word_in(text, Lang::UND, f)
}

/// [`each_word`] with the stop words of `lang`.
pub fn each_word_in(text: &str, lang: Lang, mut f: impl FnMut(&str) -> bool) {
    // Scratch space for the words that need lower-casing.
    let mut lower = String::new();
    for word in words(text) {
        let w = if word.is_ascii() {
            if word.bytes().any(|b| b.is_ascii_uppercase()) {
                lower.clear();
                lower.push_str(word);
                lower.make_ascii_lowercase();
                lower.as_str()
            } else {
                word
            }
        } else {
            // `str::to_lowercase` for its final-sigma rule, as everything compared with these
            // words is lower-cased.
            let normal = icu_normalizer::ComposingNormalizerBorrowed::new_nfkc().normalize(word);
            let lowered = normal.to_lowercase();
            if written_without_spaces(&lowered) {
                for (start, end) in segments(&lowered) {
                    let piece = &lowered[start..end];
                    if !lang.is_stop_word(piece) && !f(piece) {
                        return;
                    }
                }
                continue;
            }
            lower.clear();
            lower.push_str(&lowered);
            lower.as_str()
        };
        if !lang.is_stop_word(w) && !f(w) {
            return;
        }
    }
}

/// The content words of a question written without spaces (Chinese, Japanese), with the
/// pieces of a name the segmenter cut apart joined as the question writes them: "特伦尔的熔点"
/// gives "特伦" and "熔点", not "特" and "伦", which "伦斯特" also holds. Segments side by side
/// are joined, and so is a one-character segment after one Chinese function character
/// ("拉泽奥大桥": 拉, 泽, 奥, 大, 桥). A segment for which `apart` is true (the words asking for the
/// value: "熔点", "多长") is never joined. Other texts: [`terms_in`].
pub fn joined_terms(question: &str, lang: Lang, apart: impl Fn(&str) -> bool) -> Vec<String> {
    if !written_without_spaces(question) {
        return terms_in(question, lang);
    }
    let text = question.to_lowercase();
    let one_char = |(a, b): (usize, usize)| text[a..b].chars().count() == 1;
    // Runs of segments as (start, end, closed): a closed run takes no more segments.
    let mut runs: Vec<(usize, usize, bool)> = Vec::new();
    // The previous segment, and whether it was a function word.
    let mut last: Option<((usize, usize), bool)> = None;
    for (a, b) in segments(&text) {
        let piece = &text[a..b];
        let stop = lang.is_stop_word(piece) || piece.chars().all(|c| c.is_ascii_digit());
        let joins = match (runs.last(), last) {
            (Some(&(_, end, false)), Some((_, false))) => end == a,
            // One function character between two one-character segments.
            // One Chinese function character between two one-character segments ("大" of
            // "大桥"); not a Japanese particle ("の" of "橋の長さ"), which is kana.
            (Some(&(_, end, false)), Some((s, true))) => {
                s.0 == end
                    && s.1 == a
                    && one_char(s)
                    && one_char((a, b))
                    && !text[s.0..s.1]
                        .chars()
                        .all(|c| matches!(c, '\u{3040}'..='\u{30FF}'))
            }
            _ => false,
        };
        last = Some(((a, b), stop));
        if stop {
            continue;
        }
        let closed = apart(piece);
        match runs.last_mut() {
            Some(run) if joins && !closed => run.1 = b,
            _ => runs.push((a, b, closed)),
        }
    }
    let mut out: Vec<String> = Vec::new();
    for (a, b, _) in runs {
        let w = text[a..b].to_owned();
        if !out.contains(&w) {
            out.push(w);
        }
    }
    out
}

/// The words of `text`, as `text.split(|c| !in_word(c))` gives them less the empty ones. An ASCII
/// byte is told by itself, without decoding a character: this runs over every word of every
/// page clean ranks.
fn words(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut at = 0;
    // Whether the character at `at` is in a word, and its length.
    let step = move |at: usize| match bytes[at] {
        b if b.is_ascii() => (b.is_ascii_alphanumeric(), 1),
        _ => {
            let c = text[at..]
                .chars()
                .next()
                .expect("`at` is a character boundary");
            (in_word(c), c.len_utf8())
        }
    };
    std::iter::from_fn(move || {
        let start = loop {
            if at == bytes.len() {
                return None;
            }
            let (inside, len) = step(at);
            if inside {
                break at;
            }
            at += len;
        };
        while at < bytes.len() {
            let (inside, len) = step(at);
            if !inside {
                break;
            }
            at += len;
        }
        Some(&text[start..at])
    })
}

/// Letters and digits, and the marks that belong to them: an accent written apart, a vowel
/// sign or virama of an Indic script (split there, "हिन्दी" was three words).
pub(crate) fn in_word(c: char) -> bool {
    use icu_properties::props::{GeneralCategory, GeneralCategoryGroup};
    c.is_alphanumeric()
        || !c.is_ascii()
            && GeneralCategoryGroup::Mark
                .contains(icu_properties::CodePointMapData::<GeneralCategory>::new().get(c))
}

/// Whether `word` holds a character of a script written without spaces between words: Han,
/// Hiragana, Katakana, Thai, Lao, Khmer or Myanmar.
fn written_without_spaces(word: &str) -> bool {
    word.chars().any(|c| {
        matches!(c,
            '\u{0E00}'..='\u{0EFF}' // Thai, Lao
            | '\u{1000}'..='\u{109F}' // Myanmar
            | '\u{1780}'..='\u{17FF}' // Khmer
            | '\u{3040}'..='\u{30FF}' // Hiragana, Katakana
            | '\u{31F0}'..='\u{31FF}' // Katakana phonetic extensions
            | '\u{3400}'..='\u{4DBF}' // CJK extension A
            | '\u{4E00}'..='\u{9FFF}' // CJK unified ideographs
            | '\u{F900}'..='\u{FAFF}' // CJK compatibility ideographs
            | '\u{20000}'..='\u{3FFFF}' // CJK extensions B onwards
        )
    })
}

/// The byte ranges of `text`'s words by UAX #29 with ICU4X's dictionaries and models,
/// punctuation left out.
fn segments(text: &str) -> Vec<(usize, usize)> {
    // One segmenter a thread: its data is not `Sync`, and building it costs more than a word.
    thread_local!(static SEGMENTER: WordSegmenter = WordSegmenter::new_auto());
    SEGMENTER.with(|segmenter| {
        let (mut start, mut words) = (0, Vec::new());
        for end in segmenter.segment_str(text) {
            // By its characters, not the segmenter's word type: ICU4X 1.5 types a text that
            // is one dictionary word as no word at all.
            if text[start..end].chars().any(char::is_alphanumeric) {
                words.push((start, end));
            }
            start = end;
        }
        words
    })
}

/// The last character boundary of `s` at or before byte `at` (`s.len()` past its end), where
/// `s` can be cut. (`str::floor_char_boundary` is newer than the workspace's minimum Rust.)
pub fn floor_char_boundary(s: &str, at: usize) -> usize {
    (0..=at.min(s.len()))
        .rev()
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(0)
}

/// `s` in pieces of at most `max` bytes (at least one character each), each cut at its last
/// whitespace when it has one: a paragraph too long for a passage or a chunk, read in parts.
pub fn pieces(s: &str, max: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = s;
    while rest.len() > max {
        let cut = floor_char_boundary(rest, max);
        let cut = (rest[..cut].rfind(char::is_whitespace))
            .filter(|&at| at > 0)
            .unwrap_or(cut)
            .max(rest.chars().next().map_or(1, char::len_utf8));
        out.push(&rest[..cut]);
        rest = &rest[cut..];
    }
    if !rest.is_empty() || out.is_empty() {
        out.push(rest);
    }
    out
}

/// `char::is_whitespace` of an ASCII byte: `\t` to `\r` and the space (`u8::is_ascii_whitespace`
/// leaves out the vertical tab). For text read byte by byte where it is ASCII.
#[inline]
pub fn is_ascii_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t'..=b'\r')
}

/// `s` with leading and trailing whitespace dropped and every inner run of it made one space.
pub fn collapse_whitespace(s: &str) -> String {
    // Most sentences are collapsed already: ASCII words one space apart. Any byte that may
    // start a Unicode space (U+0085, U+00A0, U+1680, U+2000–U+205F, U+3000) takes the long way.
    let mut after_space = true;
    let plain = s.bytes().all(|b| {
        let fits = match b {
            b' ' => !after_space,
            0xc2 | 0xe1 | 0xe2 | 0xe3 => false,
            b => !is_ascii_space(b),
        };
        after_space = b == b' ';
        fits
    });
    if (plain && !after_space) || s.is_empty() {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len());
    for word in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// Two words match when their light stems agree ("melts", "melting" and "melted" all stem to
/// "melt"): a cheap stand-in for real stemming that keeps short words exact.
pub fn same_word(a: &str, b: &str) -> bool {
    a == b || stem(a) == stem(b)
}

/// The light stem [`same_word`] compares: a common suffix dropped when at least three
/// characters remain, then a final "e", so that a word ending in "e" and its forms agree:
/// "value", "values" and "valued" are "valu"; "mile", "miles" and a page's "1,900-mile-wide"
/// are "mil".
pub fn stem(w: &str) -> &str {
    let stripped = ["ations", "ation", "ings", "ing", "ed", "es", "s", "ly"]
        .into_iter()
        .find_map(|suffix| w.strip_suffix(suffix).filter(|s| s.chars().count() >= 3))
        .unwrap_or(w);
    match stripped.strip_suffix('e') {
        Some(s) if s.chars().count() >= 3 => s,
        _ => stripped,
    }
}

/// Share of `query_terms` found among `words`.
pub fn coverage_of(query_terms: &[String], words: &[String]) -> f64 {
    let mut found = Found::new(query_terms, Lang::UND);
    for w in words {
        if found.word(w) {
            break;
        }
    }
    found.share()
}

/// Share of `query_terms` found in `text`.
pub fn coverage(query_terms: &[String], text: &str) -> f64 {
    coverage_in(query_terms, &[text])
}

/// Share of `query_terms` found in any of `texts`: one pass over their words, nothing
/// allocated per word, and it stops once every term is found (a page about the question
/// names them all early).
pub fn coverage_in(query_terms: &[String], texts: &[&str]) -> f64 {
    coverage_in_lang(query_terms, texts, Lang::UND)
}

/// [`coverage_in`] for texts in `lang`: words match by its stems ([`Lang::stem`]), so a
/// Russian term is found in any of its cases.
pub fn coverage_in_lang(query_terms: &[String], texts: &[&str], lang: Lang) -> f64 {
    scan(query_terms, texts, lang).share()
}

/// Which of `query_terms` occur in `texts`, matched as [`coverage_in_lang`] matches them, in one
/// pass over the texts that stops once all are found.
pub fn found_in_lang(query_terms: &[String], texts: &[&str], lang: Lang) -> Vec<bool> {
    scan(query_terms, texts, lang)
        .missing
        .iter()
        .map(|m| !m)
        .collect()
}

fn scan<'a>(query_terms: &'a [String], texts: &[&str], lang: Lang) -> Found<'a> {
    let mut found = Found::new(query_terms, lang);
    for text in texts {
        let mut all = false;
        each_word(text, |w| {
            all = found.word(w);
            !all
        });
        if all {
            break;
        }
    }
    found
}

/// Which query terms a run of words has matched so far (by their stems in the language, each
/// term's stem taken once).
struct Found<'a> {
    lang: Lang,
    terms: Vec<(&'a str, Cow<'a, str>)>,
    missing: Vec<bool>,
    left: usize,
}

impl<'a> Found<'a> {
    fn new(query_terms: &'a [String], lang: Lang) -> Found<'a> {
        Found {
            lang,
            terms: query_terms
                .iter()
                .map(|t| (t.as_str(), lang.stem(t)))
                .collect(),
            missing: vec![true; query_terms.len()],
            left: query_terms.len(),
        }
    }

    /// Notes `w`; true once every term is found.
    fn word(&mut self, w: &str) -> bool {
        let mut stemmed = None;
        for (i, (term, term_stem)) in self.terms.iter().enumerate() {
            if self.missing[i]
                && (*term == w || *stemmed.get_or_insert_with(|| self.lang.stem(w)) == *term_stem)
            {
                self.missing[i] = false;
                self.left -= 1;
            }
        }
        self.left == 0
    }

    fn share(&self) -> f64 {
        if self.terms.is_empty() {
            return 0.0;
        }
        (self.terms.len() - self.left) as f64 / self.terms.len() as f64
    }
}

/// Prose sentences of markdown: headings, code blocks, tables, list markers and comment lines
/// (a PDF's page markers) left out.
pub fn sentences(markdown: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_code = false;
    let mut paragraph = String::new();
    let flush = |p: &mut String, out: &mut Vec<String>| {
        split_sentences(p, out);
        p.clear();
    };
    for line in markdown.lines() {
        let t = line.trim();
        if t.starts_with("```") {
            in_code = !in_code;
            flush(&mut paragraph, &mut out);
            continue;
        }
        let comment = t.starts_with("<!--") && t.ends_with("-->");
        if in_code || t.starts_with('#') || t.starts_with('|') || t.is_empty() || comment {
            flush(&mut paragraph, &mut out);
            continue;
        }
        let t = t.trim_start_matches(['-', '*', '>', '+']).trim_start();
        if !paragraph.is_empty() {
            paragraph.push(' ');
        }
        paragraph.push_str(&unlink(t));
    }
    flush(&mut paragraph, &mut out);
    out
}

/// `[text](url)` → `text` (an image `![alt](url)` → `alt`), and bold and code marks dropped,
/// so sentences quote prose, not markup. A link's text is the bracket closed right before its
/// `(`: a citation `[1]` or a `[sic]` earlier in the text is kept as written, not taken for
/// the start of a link further on.
pub fn strip_links(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find(']').map(|c| open + c) else {
            break;
        };
        // The innermost bracket: "[a [b](u)" links "b".
        let open = open + rest[open..close].rfind('[').unwrap_or(0);
        let end = (rest[close + 1..].starts_with('('))
            .then(|| rest[close..].find(')'))
            .flatten();
        match end {
            Some(end) => {
                out.push_str(rest[..open].strip_suffix('!').unwrap_or(&rest[..open]));
                out.push_str(&rest[open + 1..close]);
                rest = &rest[close + end + 1..];
            }
            None => {
                out.push_str(&rest[..=close]);
                rest = &rest[close + 1..];
            }
        }
    }
    out.push_str(rest);
    // Most lines have neither mark: they are not copied twice more for none.
    if out.contains("**") {
        out = out.replace("**", "");
    }
    if out.contains('`') {
        out = out.replace('`', "");
    }
    out
}

/// `s` with no URL left: links and images as their text ([`strip_links`]), and a URL standing
/// alone (`https://…`, `<https://…>`, `www.…`) dropped. What a report quotes from a source goes
/// through it, so every URL in a report is one of its numbered sources.
pub fn unlink(s: &str) -> String {
    let text = strip_links(s);
    // Most lines hold no URL: they need no second pass.
    if !text.contains("://") && !text.contains("www.") && !text.contains("WWW.") {
        return text;
    }
    let mut out = String::with_capacity(text.len());
    for word in text.split_inclusive(char::is_whitespace) {
        // A URL glued to the word before it, as a tweet quoted in a page has it ("from
        // 2014.https://t.co/…"): the word is kept, the URL goes.
        let glued = (word.find("http://").or(word.find("https://")))
            .filter(|at| word[..*at].chars().any(char::is_alphanumeric));
        let (kept, word) = match glued {
            Some(at) => word.split_at(at),
            None => ("", word),
        };
        out.push_str(kept);
        let bare = word.trim_start_matches(['(', '<', '"', '\'']);
        let lower = bare.get(..8).unwrap_or(bare).to_ascii_lowercase();
        if lower.starts_with("http://")
            || lower.starts_with("https://")
            || lower.starts_with("www.")
        {
            // Keep what ends the sentence or clause after the URL.
            let tail = word.trim_end().trim_end_matches([')', '>', '"', '\'']);
            if let Some(p) = tail
                .chars()
                .last()
                .filter(|c| matches!(c, '.' | ',' | ';' | ':'))
            {
                if out.ends_with(' ') {
                    out.pop();
                }
                out.push(p);
            }
            // The space before the URL goes with it; what ended it (a space, a line break)
            // stays.
            let ending = &word[word.trim_end().len()..];
            if out.ends_with(' ') {
                out.pop();
            }
            if !ending.is_empty() && !out.is_empty() {
                out.push_str(if ending.contains('\n') { "\n" } else { " " });
            }
            continue;
        }
        out.push_str(word);
    }
    out
}

/// The months in English, lower-cased: dates in text are read by name.
pub const MONTHS: &[&str] = &[
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// Words after which a full stop does not end a sentence.
const ABBREVIATIONS: &[&str] = &[
    "dr", "mr", "mrs", "ms", "prof", "st", "vs", "etc", "inc", "ltd", "jr", "sr", "no", "fig",
    "e.g", "i.e", "approx", "dept", "est", "mt", "gen", "col", "sgt", "capt",
];
/// The longest of [`ABBREVIATIONS`], in bytes ("approx").
const ABBREVIATION_BYTES: usize = 6;

fn split_sentences(text: &str, out: &mut Vec<String>) {
    for (start, end) in sentence_spans(text) {
        push_sentence(&text[start..end], out);
    }
}

/// A decimal digit as Latin, Arabic (٠–٩), Persian and Urdu (۰–۹) or Devanagari (०–९) text
/// writes it.
pub fn is_digit(c: char) -> bool {
    ascii_digit(c).is_ascii_digit()
}

/// `c` as an ASCII digit (or `.` and `,` for the Arabic decimal and thousands signs `٫` and
/// `٬`); any other character as it is.
fn ascii_digit(c: char) -> char {
    let from = |zero: char| char::from(b'0' + (c as u32 - zero as u32) as u8);
    match c {
        '\u{0660}'..='\u{0669}' => from('\u{0660}'),
        '\u{06F0}'..='\u{06F9}' => from('\u{06F0}'),
        '\u{0966}'..='\u{096F}' => from('\u{0966}'),
        '\u{066B}' => '.',
        '\u{066C}' => ',',
        c => c,
    }
}

/// `text` with its digits as ASCII ones ([`is_digit`]), so "١١٧٥" reads as 1175; borrowed
/// when it has none to change.
pub fn ascii_digits(text: &str) -> std::borrow::Cow<'_, str> {
    match text.chars().any(|c| !c.is_ascii() && ascii_digit(c) != c) {
        true => text.chars().map(ascii_digit).collect::<String>().into(),
        false => text.into(),
    }
}

/// Hiragana: Japanese particles and endings, which end a noun written in kanji or katakana
/// ("橋が", "田中一郎によって").
#[inline]
pub fn is_hiragana(c: char) -> bool {
    matches!(c, '\u{3040}'..='\u{309F}')
}

/// Chinese characters and Japanese kana: written without spaces between words, each saying
/// about what three Latin letters do.
#[inline]
pub fn is_wide(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x3FFFF)
}

/// What one character says, in Latin letters: a Chinese or Japanese character about three (a
/// word of English is about five letters and a space; of Chinese, one or two characters), a
/// Hangul syllable two, anything else one. Length thresholds set in Latin letters measure text
/// by it.
#[inline]
pub fn char_weight(c: char) -> usize {
    match c {
        c if is_wide(c) => 3,
        '\u{AC00}'..='\u{D7AF}' => 2,
        _ => 1,
    }
}

/// The length of `text` in Latin letters ([`char_weight`]).
pub fn weighted_len(text: &str) -> usize {
    if text.is_ascii() {
        return text.len();
    }
    text.chars().map(char_weight).sum()
}

/// Byte spans of the sentences of one paragraph of plain text, where [`sentences`] splits it
/// (an abbreviation or an initial does not end one), with nothing left out: every byte of
/// `text` is in one span.
pub fn sentence_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = 0;
    for (at, &b) in text.as_bytes().iter().enumerate() {
        // Only these bytes start a character that may end a sentence ('.', '!', '?', and the
        // lead bytes of '؟', '。', '！', '？' and '｡'): the rest are passed over undecoded.
        if !matches!(b, b'.' | b'!' | b'?' | 0xd8 | 0xe3 | 0xef) {
            continue;
        }
        let c = text[at..]
            .chars()
            .next()
            .expect("a lead byte starts a character");
        let end = at + c.len_utf8();
        // Chinese and Japanese full stops end a sentence wherever they are: no space follows
        // them, and the next sentence starts with no capital.
        if matches!(c, '。' | '！' | '？' | '｡') {
            spans.push((start, end));
            start = end;
            continue;
        }
        // The Arabic question mark is written like the Latin one.
        if !matches!(c, '.' | '!' | '?' | '؟') {
            continue;
        }
        let mut rest = text[end..].chars();
        let (next, after) = (rest.next(), rest.next());
        let mut ends = next.is_none_or(char::is_whitespace)
            // Any next word but one in lower case: scripts without case (Arabic, Hebrew,
            // Devanagari) start sentences with the letters they always use.
            && after.is_none_or(|a| !a.is_lowercase());
        if ends && c == '.' {
            let word = text[start..at]
                .rsplit(char::is_whitespace)
                .next()
                .unwrap_or("");
            let word = word.trim_start_matches(|ch: char| !ch.is_alphanumeric());
            // Initials ("J. Smith") and abbreviations ("Dr. Strand") do not end a sentence.
            // Neither is longer than the longest abbreviation: a longer word is not
            // lowercased to be looked up.
            ends = word.len() > ABBREVIATION_BYTES || {
                let word = word.to_lowercase();
                !(ABBREVIATIONS.contains(&word.as_str())
                    || (word.chars().count() == 1 && word.chars().all(char::is_alphabetic)))
            };
        }
        if ends {
            spans.push((start, end));
            start = end;
        }
    }
    if start < text.len() {
        spans.push((start, text.len()));
    }
    spans
}

fn push_sentence(s: &str, out: &mut Vec<String>) {
    // Fragments and walls of text make poor evidence. Collapsing whitespace only shortens a
    // sentence, so one under the minimum in bytes is one in characters too.
    const MIN_CHARS: usize = 25;
    if s.len() < MIN_CHARS {
        return;
    }
    // Single spaces between words, none around them (trimmed first, as most sentences only
    // need that).
    let sentence = collapse_whitespace(s.trim());
    // A character of a script without spaces says about what three Latin letters do, and
    // its words are not counted by spaces: six of them make a sentence.
    let (wide, chars) = match sentence.is_ascii() {
        true => (0, sentence.len()),
        false => sentence
            .chars()
            .fold((0, 0), |(w, n), c| (w + usize::from(is_wide(c)), n + 1)),
    };
    let words = sentence.bytes().filter(|&b| b == b' ').count() + 1 + wide / 2;
    let chars = chars + 2 * wide;
    if (MIN_CHARS..=600).contains(&chars) && words >= 4 {
        out.push(sentence);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_are_bounded_and_cut_at_whitespace() {
        assert_eq!(pieces("one two three", 8), ["one two", " three"]);
        assert_eq!(pieces("short", 8), ["short"]);
        // No whitespace: cut at a character boundary, never inside one, never empty.
        assert_eq!(pieces("ééé", 3), ["é", "é", "é"]);
        assert_eq!(pieces("ééé", 1), ["é", "é", "é"]);
        assert_eq!(pieces("", 4), [""]);
    }

    /// A clause in a script written without spaces is cut into its words (dictionaries for
    /// Chinese and Japanese, a model for Thai), so a question and a page about it share terms;
    /// split on punctuation alone, each clause was one word and nothing matched.
    #[test]
    fn scripts_without_spaces_are_cut_into_words() {
        let chinese = terms("北京是中华人民共和国的首都");
        for word in ["北京", "首都"] {
            assert!(chinese.iter().any(|t| t == word), "{chinese:?}");
        }
        let japanese = terms("東京は日本の首都です");
        for word in ["東京", "日本", "首都"] {
            assert!(japanese.iter().any(|t| t == word), "{japanese:?}");
        }
        let thai = terms("กรุงเทพมหานครเป็นเมืองหลวงของประเทศไทย");
        assert!(thai.len() >= 3, "{thai:?}");
        assert!(thai.iter().any(|t| t == "ประเทศ"), "{thai:?}");
        let question = terms("中国的首都是哪个城市？");
        let page = "北京是中华人民共和国的首都，也是全国的政治中心和文化中心。";
        assert!(coverage(&question, page) >= 0.5, "{question:?}");
        // Text in other scripts, and mixed text, keeps its words as before.
        assert_eq!(
            terms("Москва, столица России"),
            ["москва", "столица", "россии"]
        );
        assert_eq!(terms("Kyoto 京都 tower"), ["kyoto", "京都", "tower"]);
    }

    /// Ligatures, full-width letters and other compatibility characters match their plain
    /// forms (NFKC), as does a letter written with a combining accent.
    #[test]
    fn compatibility_characters_match_their_plain_forms() {
        assert_eq!(terms("ﬁnancial ﬂows"), ["financial", "flows"]);
        assert_eq!(terms("ＵＮＥＳＣＯ report"), ["unesco", "report"]);
        assert_eq!(terms("cafe\u{301} crème"), ["café", "crème"]);
        assert_eq!(terms("हिन्दी भाषा"), ["हिन्दी", "भाषा"]);
    }

    #[test]
    fn names_are_the_capitalised_words_unless_the_question_is_in_title_case() {
        assert_eq!(
            names("How long is the Brimomir Bridge and when did it open?"),
            ["brimomir", "bridge"]
        );
        assert_eq!(names("Could you tell me about Velmorite?"), ["velmorite"]);
        assert!(names("What Is The Best Way To Learn Rust").is_empty());
        assert!(names("what is the boiling point of water").is_empty());
    }

    #[test]
    fn terms_drop_stop_words_and_repeat() {
        assert_eq!(
            terms("What is the melting point of the Zorbium, zorbium?"),
            vec!["melting", "point", "zorbium"]
        );
        assert!(
            same_word("melts", "melting")
                && same_word("melted", "melt")
                && !same_word("point", "pointer")
        );
        // A plural is its singular's word, however the singular ends (h010: "How many miles
        // across" against "the 1,900-mile-wide Europa").
        for (form, word) in [
            ("miles", "mile"),
            ("games", "game"),
            ("boxes", "box"),
            ("valued", "values"),
            ("priced", "price"),
        ] {
            assert!(same_word(form, word), "{form}");
        }
        assert_eq!(stem("studies"), stem("studied"));
        assert_eq!(stem("use"), "use");
        assert!(
            (coverage(
                &terms("zorbium melting point"),
                "Zorbium melts at 1,284 degrees."
            ) - 2.0 / 3.0)
                .abs()
                < 1e-9
        );
    }

    #[test]
    fn coverage_in_a_language_finds_its_terms_in_any_form() {
        let ru = Lang::from_tag("ru").unwrap();
        let q = terms_in("температура плавления зорбия", ru);
        let page = ["Зорбий плавится при температуре 1284 градуса."];
        assert!(coverage_in_lang(&q, &page, ru) > coverage_in(&q, &page));
        assert!(coverage_in_lang(&q, &page, ru) >= 2.0 / 3.0);
        // Each term, found or not, in one pass.
        assert_eq!(found_in_lang(&q, &page, ru), [true, false, true]);
        // English is matched as it was.
        let en = terms("melting point of zorbium");
        let text = ["Zorbium melts at a high point."];
        assert_eq!(
            coverage_in_lang(&en, &text, Lang::EN),
            coverage_in(&en, &text)
        );
    }

    #[test]
    fn terms_drop_the_stop_words_of_their_language() {
        let de = Lang::from_tag("de").unwrap();
        assert_eq!(
            terms_in("Wie hoch ist der Eiffelturm?", de),
            ["hoch", "eiffelturm"]
        );
        let zh = Lang::from_tag("zh").unwrap();
        let chinese = terms_in("北京是中华人民共和国的首都", zh);
        assert!(
            !chinese.iter().any(|t| t == "是" || t == "的"),
            "{chinese:?}"
        );
        assert!(chinese.iter().any(|t| t == "北京"), "{chinese:?}");
        // Unknown and English are the English list, as before.
        assert_eq!(
            terms_in("How tall is it", Lang::UND),
            terms("How tall is it")
        );
    }

    #[test]
    fn terms_of_a_long_text_keep_first_occurrences_in_order() {
        // Past 32 distinct words the set takes over from the scan; the result must not change.
        let text: Vec<String> = (0..300)
            .map(|i| format!("Word{} the WORD{} Ünïcode{}", i % 50, i % 50, i % 7))
            .collect();
        let t = terms(&text.join(". "));
        let mut expected: Vec<String> = Vec::new();
        for i in 0..50 {
            expected.push(format!("word{i}"));
            if i < 7 {
                expected.push(format!("ünïcode{i}"));
            }
        }
        assert_eq!(t, expected);
    }

    #[test]
    fn coverage_counts_a_term_found_in_any_of_the_texts_once() {
        let q = terms("zorbium melting point");
        assert_eq!(
            coverage_in(&q, &["Zorbium facts", "It melts at 1,284 degrees."]),
            2.0 / 3.0
        );
        assert_eq!(coverage_in(&q, &["", "The melting point of zorbium."]), 1.0);
        assert_eq!(coverage_in(&q, &[]), 0.0);
        assert_eq!(coverage_in(&[], &["zorbium"]), 0.0);
    }

    #[test]
    fn whitespace_runs_become_one_space() {
        assert_eq!(collapse_whitespace("  a\t\n b   c\u{a0}d \r\n"), "a b c d");
        assert_eq!(collapse_whitespace(" \n "), "");
        // The short way (nothing to collapse) and the long one agree.
        for s in TRICKY {
            let long: Vec<&str> = s.split_whitespace().collect();
            assert_eq!(collapse_whitespace(s), long.join(" "), "{s:?}");
        }
    }

    /// Texts where a byte-wise short cut could part from the char-wise definition: marks,
    /// scripts without spaces, Unicode spaces, a vertical tab, stops of other scripts.
    const TRICKY: &[&str] = &[
        "",
        " ",
        "plain words one space apart",
        " leading and trailing ",
        "two  spaces",
        "tab\there, vertical\u{b}tab, feed\u{c}page",
        "no\u{a0}break\u{2009}thin\u{3000}ideographic\u{85}next",
        "हिन्दी भाषा, café naïve e\u{301}te",
        "这座桥以三个拱跨越河流。它很长！真的？",
        "Dr. Strand met J. Smith. Then 3.5 km away? Yes! هل؟ Ok｡",
        "x-ray, 1,284.5°C (re-run) — done…",
    ];

    #[test]
    fn sentence_stops_of_every_script_are_found_among_the_bytes() {
        let spans = |t: &'static str| -> Vec<&str> {
            sentence_spans(t)
                .into_iter()
                .map(|(a, b)| t[a..b].trim())
                .collect()
        };
        assert_eq!(
            spans(TRICKY[9]),
            [
                "Dr. Strand met J. Smith.",
                "Then 3.5 km away?",
                "Yes!",
                "هل؟",
                "Ok｡"
            ]
        );
        assert_eq!(
            spans(TRICKY[8]),
            ["这座桥以三个拱跨越河流。", "它很长！", "真的？"]
        );
    }

    #[test]
    fn words_are_those_of_the_char_wise_split() {
        for s in TRICKY {
            let want: Vec<&str> = s
                .split(|c: char| !in_word(c))
                .filter(|w| !w.is_empty())
                .collect();
            assert_eq!(words(s).collect::<Vec<_>>(), want, "{s:?}");
        }
    }

    #[test]
    fn unlinked_text_keeps_anchor_and_alt_text_and_loses_every_url() {
        assert_eq!(
            unlink("See [the survey](http://a.test/s) and ![a chart](c.png), or https://b.test/x."),
            "See the survey and a chart, or."
        );
        assert_eq!(
            unlink("Sources: <https://c.test/> www.d.test and (http://e.test/f) here"),
            "Sources: and here"
        );
        assert_eq!(unlink("No links here."), "No links here.");
        // A model's report: a citation, then a reference list linking each source.
        assert_eq!(
            unlink("It was a sign [1].\n- Science. [http://n.test/s/](http://n.test/s/)"),
            "It was a sign [1].\n- Science."
        );
        assert_eq!(unlink("- One [x](http://a.test/)\n- Two"), "- One x\n- Two");
        assert_eq!(
            unlink("- One http://a.test/\n- Two http://b.test/ more"),
            "- One\n- Two more"
        );
        assert_eq!(
            strip_links("Wikipedia [citation needed] and the [survey](u) [c]"),
            "Wikipedia [citation needed] and the survey [c]"
        );
        assert_eq!(
            unlink("campaign from 2014.https://t.co/hFciHO5Qc7 pic.twitter.com/x — Cooper"),
            "campaign from 2014. pic.twitter.com/x — Cooper"
        );
    }

    #[test]
    fn a_name_the_segmenter_cuts_apart_is_joined_again() {
        let zh = Lang::from_tag("zh").unwrap();
        let asks = |w: &str| ["熔点", "海拔", "建立", "长"].contains(&w);
        assert_eq!(
            joined_terms("特伦尔的熔点是多少度？", zh, asks),
            ["特伦", "熔点", "度"]
        );
        assert_eq!(
            joined_terms("拉泽奥大桥有多长？", zh, asks),
            ["拉泽奥大桥", "长"]
        );
        assert_eq!(
            joined_terms("拉诺诺山的海拔是多少米？", zh, asks),
            ["拉诺诺山", "海拔", "米"]
        );
        assert_eq!(
            joined_terms("萨达镇是哪一年建立的？", zh, asks),
            ["萨达镇", "哪一", "建立"]
        );
        let ja = Lang::from_tag("ja").unwrap();
        assert_eq!(
            joined_terms("カルデン橋の長さは何メートルですか？", ja, |w| w == "長"),
            ["カルデン橋", "長", "メートル"]
        );
        // A particle between two characters is not part of a name.
        assert_eq!(
            joined_terms("ソドルサ橋の長さは何メートルですか？", ja, |_| false),
            ["ソドルサ橋", "長", "メートル"]
        );
        // Other scripts: their terms.
        let en = "How long is the Brimomir Bridge?";
        assert_eq!(joined_terms(en, Lang::EN, |_| false), terms(en));
    }

    #[test]
    fn digits_of_other_scripts_read_as_ascii() {
        assert_eq!(ascii_digits("يبلغ ١١٧٥ مترا و۲۳٫٥"), "يبلغ 1175 مترا و23.5");
        assert_eq!(ascii_digits("१९४७"), "1947");
        assert!(matches!(
            ascii_digits("1175 m"),
            std::borrow::Cow::Borrowed(_)
        ));
        assert!(is_digit('٧') && is_digit('7') && !is_digit('a') && !is_digit('٫'));
    }

    #[test]
    fn the_nouns_introducing_a_name_are_its_head() {
        let lang = |c: &str| Lang::from_tag(c).unwrap();
        let cases = [
            (
                "fr",
                "Quelle est la longueur du pont de Tovmo ?",
                vec!["pont"],
            ),
            ("fr", "Quelle est l'altitude du mont Ultov ?", vec!["mont"]),
            ("es", "¿Cuánto mide el puente de Brela?", vec!["puente"]),
            ("ru", "Какова длина моста Товмо?", vec!["моста"]),
            ("de", "Wie lang ist die Zorvel-Brücke?", vec!["brücke"]),
            ("de", "Wie hoch ist der Berg Velsor?", vec!["berg"]),
            // What is asked is not the subject's head.
            ("fr", "Quelle est la population de Brela ?", vec![]),
        ];
        for (code, q, want) in cases {
            assert_eq!(head_nouns(q, lang(code)), want, "{q}");
        }
        assert!(head_nouns("How long is the Brimomir Bridge?", Lang::EN).is_empty());
    }

    #[test]
    fn a_german_questions_nouns_are_not_names() {
        let q = "Wie hoch ist der Schmelzpunkt des Metalls Quarvium?";
        assert_eq!(names(q), ["schmelzpunkt", "metalls", "quarvium"]);
        let de = Lang::from_tag("de").unwrap();
        assert_eq!(names_in(q, de), ["quarvium"]);
        assert_eq!(names_in("Wie lang ist die Zorvel-Brücke?", de), ["zorvel"]);
        assert_eq!(
            names_in("Wann wurde die Stadt Fikodren gegründet?", de),
            ["fikodren"]
        );
        // A noun after a verb or an article is no name.
        assert!(names_in("Welche Vorteile hat Solarenergie?", de).is_empty());
        assert!(names_in("Wie hoch ist der Eiffelturm?", de).is_empty());
        let en = "How long is the Brimomir Bridge?";
        assert_eq!(names_in(en, Lang::EN), ["brimomir", "bridge"]);
    }

    #[test]
    fn sentences_end_as_each_script_ends_them() {
        // Fragments are left out in every script: "Is there a park? Yes."
        let zh = sentences(
            "瓦尔坦大桥于二零零八年通车。大桥全长1580米，是当地最长的桥梁！有公园吗？有。",
        );
        assert_eq!(
            zh,
            vec![
                "瓦尔坦大桥于二零零八年通车。",
                "大桥全长1580米，是当地最长的桥梁！"
            ]
        );
        let ja = sentences("カルデン山の標高は2317メートルです。登山道は三本ある。");
        assert_eq!(
            ja,
            vec!["カルデン山の標高は2317メートルです。", "登山道は三本ある。"]
        );
        let ar = sentences("ما هو طول الجسر الجديد فوق النهر؟ يبلغ طول الجسر 1275 مترا.");
        assert_eq!(
            ar,
            vec![
                "ما هو طول الجسر الجديد فوق النهر؟",
                "يبلغ طول الجسر 1275 مترا."
            ]
        );
    }

    #[test]
    fn abbreviations_end_no_sentence_whatever_their_case() {
        let longest = ABBREVIATIONS.iter().map(|a| a.len()).max();
        assert_eq!(longest, Some(ABBREVIATION_BYTES));
        let text = "The sample was APPROX. Ten grams in all. It came from J. Strand and Co. \
                    in June. É. Marsh signed it.";
        assert_eq!(sentence_spans(text).len(), 3, "{:?}", sentences(text));
    }

    #[test]
    fn sentences_skip_markup() {
        let md = "# Title\n\nZorbium melts at 1,284 degrees Celsius. It was found by [Dr. Strand](http://x.test) in 1931.\n\n```\ncode here is not prose.\n```\n| a | b |\n- A list item that is long enough to count.\n";
        let s = sentences(md);
        assert_eq!(
            s,
            vec![
                "Zorbium melts at 1,284 degrees Celsius.",
                "It was found by Dr. Strand in 1931.",
                "A list item that is long enough to count.",
            ]
        );
        // A PDF's page marker is no sentence, nor part of the paragraph beside it.
        let paged = "<!-- page 240 -->\nAt the end of 2023 the firm employed 18,420 people.\n";
        assert_eq!(
            sentences(paged),
            ["At the end of 2023 the firm employed 18,420 people."]
        );
    }

    #[test]
    fn weighted_length_counts_a_chinese_character_as_three_letters() {
        assert_eq!(weighted_len("bridge"), 6);
        assert_eq!(weighted_len("大桥"), 6);
        assert_eq!(weighted_len("다리"), 4);
        // A two-sentence Chinese news item is as long as an English paragraph of 80 letters.
        assert!(
            weighted_len(
                "因道路维修，瓦尔坦大桥北侧匝道将于下周封闭三天。交通部门建议司机提前规划路线。"
            ) >= 80
        );
    }
}
