//! Data point values without an LLM: simple patterns on the sentences that best match the
//! question, and cells of the page's tables.
//!
//! A data point's name says what kind of value it wants:
//!
//! | name (examples) | value |
//! |---|---|
//! | `date`, `year`, `founded`, `opened` | a date (`12 March 1931`, `March 1931`, `2021-03-04`), a year, else a month |
//! | `percentage`, `rate`, `share` | a percentage (`12.5%`, `40 percent`) |
//! | `price`, `cost`, `revenue` | money (`$4.2 million`, `300 euros`) |
//! | `long`, `height`, `weight`, `age`, `melting point` … | a number with its unit (`1,156 metres`) |
//! | `designer`, `discoverer`, `captain` (agent nouns, people) | a name after "by", or before the verb |
//! | `location`, `place`, `city` | a capitalised place after "in" or "at" ("in the town of …") |
//! | `number`, `count`, `amount`, `population` | the first number that is not a year |
//! | a plural noun (`bridges`, from "how many bridges") | the number before that noun |
//! | anything else | the first number (with unit) or date after the name, else "NAME is VALUE" |
//!
//! Tables come first: a column whose header matches the data point gives the cell of the row
//! naming the question's subject (or of the only row); a row whose first cell matches gives
//! the rest of that row. Then sentences that name the data point, best ranked first; for kinds
//! whose name a page rarely repeats (dates, names, places, measures) also the best-ranked
//! sentences that do not. The first value found wins; none leaves the data point `None`.

use std::collections::BTreeMap;

use trawl_messages::Table;
use trawl_text::points::{kind, markers, unit_of, wide_unit, Kind};
use trawl_text::{ascii_digits, is_digit, is_hiragana, is_wide, terms, Lang, Numerals, MONTHS};

use crate::bm25::{same_term, Marks};

/// Candidate sentences tried per data point.
const TRIES: usize = 10;
const SCALES: &[&str] = &["thousand", "million", "billion", "trillion", "m", "bn"];
const CURRENCY_WORDS: &[&str] = &[
    "dollars", "dollar", "euros", "euro", "pounds", "usd", "eur", "gbp", "yen",
];
/// Words after a number that are not its unit.
const NOT_UNITS: &[&str] = &[
    "and", "or", "the", "a", "an", "in", "of", "to", "by", "at", "for", "from", "on", "with", "is",
    "was", "are", "were", "it", "its", "as", "that", "which", "than", "after", "before", "when",
    "but", "so", "if", "then", "this", "these",
];
const SECOND_UNITS: &[&str] = &["celsius", "fahrenheit", "kelvin", "per", "squared", "cubed"];
/// Numbers written as words, one to twelve in order.
pub(crate) const SMALL_NUMBERS: &[&str] = &[
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve",
];
const PERSON_TITLES: &[&str] = &["dr", "prof", "mr", "mrs", "ms", "sir", "dame"];
/// Words between a verb and the name before it ("Dr. Ilse Strand first isolated …").
const ADVERBS: &[&str] = &[
    "first",
    "originally",
    "later",
    "also",
    "famously",
    "finally",
];
/// Words between "in" and a place's name ("in the town of Drenmel").
const PLACE_FILLER: &[&str] = &[
    "the", "town", "city", "village", "region", "province", "state", "county", "district", "of",
];

/// How a language says who did something and where something is, for the patterns of
/// [`from_sentence`]: trawl's own reading, as [`trawl_text::points`]' words are.
struct Phrasing {
    /// Before the one who did it: "designed by Hana Wirth", "conçu par", "entworfen von".
    by: &'static [&'static str],
    /// Before a place: "in", "à", "в".
    at: &'static [&'static str],
    /// Between those and the place's name: "in the town of", "dans la ville de".
    filler: &'static [&'static str],
    /// A name may follow the verb saying what was done ("entwarf der Architekt Karl Brenner",
    /// "спроектировал Иван Петров"), as well as come before it.
    name_after_verb: bool,
}

const ENGLISH: Phrasing = Phrasing {
    by: &["by"],
    at: &["in", "at", "near"],
    filler: PLACE_FILLER,
    name_after_verb: false,
};

#[rustfmt::skip]
const PHRASINGS: &[(&str, Phrasing)] = &[
    ("de", Phrasing {
        by: &["von", "vom"],
        at: &["in", "im", "bei", "nahe"],
        filler: &["der", "die", "dem", "den", "des", "stadt", "region", "provinz", "nähe", "gemeinde", "dorf", "kanton", "bezirk", "land", "bundesland", "von"],
        name_after_verb: true,
    }),
    ("fr", Phrasing {
        by: &["par"],
        at: &["à", "au", "aux", "en", "dans", "près"],
        filler: &["la", "le", "les", "ville", "région", "province", "de", "du", "des", "village", "commune", "département"],
        name_after_verb: true,
    }),
    ("es", Phrasing {
        by: &["por"],
        at: &["en", "cerca"],
        filler: &["la", "el", "los", "las", "ciudad", "región", "provincia", "de", "del", "pueblo", "municipio"],
        name_after_verb: true,
    }),
    // Russian says who by the instrumental case ("спроектирован Иваном Петровым"), not a word.
    ("ru", Phrasing {
        by: &[],
        at: &["в", "во", "около", "близ", "у"],
        filler: &["городе", "город", "регионе", "области", "провинции", "деревне", "селе", "посёлке", "поселке", "районе"],
        name_after_verb: true,
    }),
];

fn phrasing(lang: Lang) -> &'static Phrasing {
    (PHRASINGS.iter())
        .find(|(code, _)| *code == lang.code())
        .map_or(&ENGLISH, |(_, p)| p)
}

/// German nouns naming what someone is, written before the name ("der Architekt Karl
/// Brenner"): word starts, as they take endings ("Architekten", "Ingenieurin").
#[rustfmt::skip]
const GERMAN_ROLES: &[&str] = &[
    "architekt", "ingenieur", "baumeister", "konstrukteur", "chemiker", "forscher", "entdecker",
    "physiker", "professor", "geologe", "geologin", "bildhauer", "künstler", "stadtbaurat",
];
#[rustfmt::skip]
const GERMAN_ARTICLES: &[&str] = &[
    "der", "die", "das", "den", "dem", "des", "ein", "eine", "einen", "einem", "einer", "eines",
];

/// Where a name looked for at `j` starts. German capitalises every noun: an article and a
/// role noun before the name are skipped ("der Architekt Karl Brenner"), and a noun after an
/// article ("die Brücke", "Der Plan") starts no name.
fn name_start(toks: &[Tok], j: usize, lang: Lang) -> Option<usize> {
    if lang.capitals_mark_names() {
        return Some(j);
    }
    let article = |t: &Tok| GERMAN_ARTICLES.contains(&t.lower.as_str());
    let role = |t: &Tok| GERMAN_ROLES.iter().any(|r| t.lower.starts_with(r));
    let mut k = j;
    let mut after_article = j > 0 && article(&toks[j - 1]);
    if toks.get(k).is_some_and(article) {
        (k, after_article) = (k + 1, true);
    }
    let roles = k;
    while toks.get(k).is_some_and(role) {
        k += 1;
    }
    (k > roles || !after_article).then_some(k)
}

/// A word of a sentence with its surrounding punctuation trimmed.
struct Tok<'a> {
    core: &'a str,
    lower: String,
    /// Ends with a comma, full stop or other clause mark.
    ends_clause: bool,
    /// Written straight after the word before it: Chinese and Japanese put no space between
    /// a number and the text around it ("全长1738米，设有").
    glued: bool,
}

const OPENING: &[char] = &['(', '"', '\'', '“', '‘', '[', '「', '『', '（'];
/// Marks that end a clause, in the scripts whose numbers are read here.
const CLAUSE_ENDS: &[char] = &[
    ',', '.', ';', ':', ')', '!', '?', '，', '。', '、', '；', '：', '）', '！', '？', '،', '؛',
    '؟',
];
const CLOSING: &[char] = &[
    ',', '.', ';', ':', ')', '"', '\'', '”', '’', '!', '?', ']', '，', '。', '、', '；', '：',
    '）', '」', '』', '！', '？', '،', '؛', '؟',
];

/// The words of `s`. Where the language sets thousands apart by spaces ("1 175 mètres":
/// [`Numerals::grouped`]), a number's groups are one word, spaces kept as the text has them.
fn tokens(s: &str, numerals: Numerals) -> Vec<Tok<'_>> {
    let mut out: Vec<Tok> = Vec::new();
    let words: Vec<&str> = s.split_whitespace().collect();
    let mut k = 0;
    while let Some(&word) = words.get(k) {
        let groups = numerals.grouped(&words[k..]);
        k += groups;
        if groups > 1 {
            // The words are slices of `s`: the span from the first to the last's end.
            let last = words[k - 1];
            let core = last.trim_end_matches(CLOSING);
            let start = word.as_ptr() as usize - s.as_ptr() as usize;
            let end = core.as_ptr() as usize - s.as_ptr() as usize + core.len();
            out.push(Tok {
                core: &s[start..end],
                lower: s[start..end].to_owned(),
                ends_clause: last.ends_with(CLAUSE_ENDS),
                glued: false,
            });
            continue;
        }
        // A run of Chinese or Japanese text is cut where its numbers start and end.
        let pieces = match word.chars().any(is_wide) {
            true => digit_runs(word),
            false => vec![word],
        };
        for (i, raw) in pieces.into_iter().enumerate() {
            let core = raw.trim_start_matches(OPENING).trim_end_matches(CLOSING);
            let core = if core.is_empty() { raw } else { core };
            out.push(Tok {
                core,
                lower: core.to_lowercase(),
                ends_clause: raw.ends_with(CLAUSE_ENDS),
                glued: i > 0,
            });
        }
    }
    out
}

/// `word` cut where a number (digits, with its separators) starts and ends.
fn digit_runs(word: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut in_number = false;
    for (at, c) in word.char_indices() {
        let numeric = c.is_ascii_digit() || (in_number && matches!(c, ',' | '.'));
        if numeric != in_number && at > start {
            out.push(&word[start..at]);
            start = at;
        }
        in_number = numeric;
    }
    out.push(&word[start..]);
    out
}

fn is_number(t: &str) -> bool {
    let t = t
        .trim_start_matches(['$', '€', '£', '¥'])
        .trim_end_matches('%');
    // Spaces only between the groups [`tokens`] joined; digits of any script ("١١٧٥").
    t.starts_with(is_digit)
        && t.chars()
            .all(|c| is_digit(c) || matches!(c, ',' | '.' | '٫' | '٬') || c.is_whitespace())
}

fn is_year(t: &str) -> bool {
    t.chars().count() == 4
        && t.chars().all(is_digit)
        && (ascii_digits(t).parse::<u32>()).is_ok_and(|y| (1000..=2100).contains(&y))
}

fn capitalised(t: &Tok) -> bool {
    t.core.chars().next().is_some_and(char::is_uppercase)
}

/// A date or year starting at `i`.
fn date_at(toks: &[Tok], i: usize) -> Option<String> {
    let t = &toks[i];
    let month = |j: usize| {
        toks.get(j)
            .is_some_and(|t| MONTHS.contains(&t.lower.as_str()))
    };
    let day = |j: usize| {
        toks.get(j)
            .is_some_and(|t| t.core.parse::<u32>().is_ok_and(|d| (1..=31).contains(&d)))
    };
    let year = |j: usize| toks.get(j).is_some_and(|t| is_year(t.core));
    let bytes = t.core.as_bytes();
    if t.core.len() == 10 && bytes[4] == b'-' && bytes[7] == b'-' && is_year(&t.core[..4]) {
        return Some(t.core.to_owned());
    }
    if day(i) && month(i + 1) && year(i + 2) {
        return Some(format!(
            "{} {} {}",
            t.core,
            toks[i + 1].core,
            toks[i + 2].core
        ));
    }
    if month(i) && day(i + 1) && year(i + 2) {
        return Some(format!(
            "{} {}, {}",
            t.core,
            toks[i + 1].core,
            toks[i + 2].core
        ));
    }
    if month(i) && year(i + 1) {
        return Some(format!("{} {}", t.core, toks[i + 1].core));
    }
    year(i).then(|| t.core.to_owned())
}

/// A number at `i` with what qualifies it: currency, scale, percent, unit. Returns the value
/// and whether it had a unit (or was money or a percentage).
fn number_at(toks: &[Tok], i: usize) -> Option<(String, bool)> {
    let t = &toks[i];
    if !is_number(t.core) {
        return None;
    }
    let mut value = t.core.to_owned();
    let mut j = i + 1;
    let next = |j: usize| toks.get(j).filter(|_| !toks[j - 1].ends_clause);
    if let Some(n) = next(j).filter(|n| SCALES.contains(&n.lower.as_str())) {
        value.push(' ');
        value.push_str(n.core);
        j += 1;
    }
    if t.core.starts_with(['$', '€', '£', '¥']) || t.core.ends_with('%') {
        return Some((value, true));
    }
    let Some(n) = next(j) else {
        return Some((value, false));
    };
    // Chinese and Japanese: a unit of theirs, or a symbol, at the start of the text after
    // the number ("米，设有" is metres; "年" is no unit).
    if n.glued || n.core.starts_with(is_wide) {
        let unit = wide_unit(n.core);
        let symbol = &n.core[..n
            .core
            .find(|c: char| !(c.is_ascii_alphabetic() || c == '°'))
            .unwrap_or(n.core.len())];
        let unit = unit.or((!symbol.is_empty() && !n.core.starts_with(is_wide)).then_some(symbol));
        return Some(match unit {
            Some(unit) => (
                format!("{value}{}{unit}", if n.glued { "" } else { " " }),
                true,
            ),
            None => (value, false),
        });
    }
    if n.lower == "percent" || CURRENCY_WORDS.contains(&n.lower.as_str()) {
        return Some((format!("{value} {}", n.core), true));
    }
    // "1903 Paris" is a year and a place; "1523 Grad" (German capitalises nouns) a measure.
    let unit = n.core.starts_with(|c: char| c.is_alphabetic() || c == '°')
        && !NOT_UNITS.contains(&n.lower.as_str())
        && !(is_year(t.core) && capitalised(n) && {
            let after: Vec<&str> = toks[j..].iter().take(2).map(|t| t.core).collect();
            unit_of(&after).is_none()
        });
    if !unit {
        return Some((value, false));
    }
    value.push(' ');
    value.push_str(n.core);
    if let Some(m) = next(j + 1).filter(|m| SECOND_UNITS.contains(&m.lower.as_str())) {
        value.push(' ');
        value.push_str(m.core);
    }
    Some((value, true))
}

/// Capitalised words from `i` on (a name), allowing a title like "Dr." first.
fn name_at(toks: &[Tok], i: usize) -> Option<String> {
    let mut parts = Vec::new();
    let mut j = i;
    while let Some(t) = toks.get(j) {
        let title = PERSON_TITLES.contains(&t.lower.trim_end_matches('.'));
        if !(capitalised(t) && t.core.chars().any(char::is_alphabetic)) || parts.len() == 4 {
            break;
        }
        parts.push(if title {
            format!("{}.", t.core.trim_end_matches('.'))
        } else {
            t.core.to_owned()
        });
        j += 1;
        if t.ends_clause && !title {
            break;
        }
    }
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// Where the sentence names the data point (first matching token), if it does.
fn mention_at(toks: &[Tok], marks: &Marks) -> Option<usize> {
    toks.iter().position(|t| marks.word(&t.lower))
}

/// Indexes ordered by distance from `at`: after it first, then before it.
fn around(len: usize, at: Option<usize>) -> Vec<usize> {
    match at {
        None => (0..len).collect(),
        Some(at) => (at + 1..len).chain((0..at).rev()).collect(),
    }
}

/// Nouns naming what someone is, written before a Chinese or Japanese name ("建筑师王明",
/// "建築家の田中一郎").
#[rustfmt::skip]
const WIDE_ROLES: &[&str] = &[
    "著名", "建筑师", "工程师", "设计师", "化学家", "科学家", "物理学家", "地质学家", "教授", "博士",
    "建築家", "技師", "技術者", "化学者", "科学者", "物理学者", "地質学者",
];

/// A Chinese or Japanese name or place at the start of `text`: up to punctuation, a particle
/// or "的", its role noun left out; two to twelve characters.
fn wide_name(text: &str) -> Option<String> {
    let mut t = text.trim();
    while let Some(rest) = WIDE_ROLES.iter().find_map(|r| t.strip_prefix(r)) {
        t = rest.trim_start_matches('の');
    }
    let end = t
        .find(|c: char| !(is_wide(c) || c == '·' || c == '・') || is_hiragana(c) || c == '的')
        .unwrap_or(t.len());
    let name = &t[..end];
    (2..=12)
        .contains(&name.chars().count())
        .then(|| name.to_owned())
}

/// The start of the last clause of `text` (after punctuation or a topic particle): where a
/// Japanese name before "によって" or "に" starts.
fn last_clause(text: &str) -> &str {
    let cut = text.rfind(['、', '。', '，', 'は', 'が', 'も', '「', '」', ' ']);
    cut.map_or(text, |i| {
        &text[i + text[i..].chars().next().map_or(0, char::len_utf8)..]
    })
}

/// Who or where in Chinese or Japanese, which has no capitals to mark a name, around the
/// marker at `at`: "由建筑师王明设计", "被王明发现", "设计者是王明", "田中一郎によって設計",
/// "設計者は田中一郎", "位于阿尔卑斯山", "アルプスに位置".
fn wide_who_where(kind: Kind, sentence: &str, at: std::ops::Range<usize>) -> Option<String> {
    let (before, after) = (&sentence[..at.start], &sentence[at.end..]);
    match kind {
        Kind::Person => {
            // The name fills what is between: "由于资金不足，设计…" ("because") names no one.
            let whole = |x: &str| wide_name(x).filter(|n| x.ends_with(n.as_str()));
            let by = (before.char_indices().rev())
                .find(|&(_, c)| c == '由' || c == '被')
                .and_then(|(i, c)| whole(&before[i + c.len_utf8()..]));
            let japanese = || {
                let x = ["によって", "により", "が"]
                    .iter()
                    .find_map(|p| before.strip_suffix(p))?;
                whole(last_clause(x))
            };
            let is = || {
                let rest = after.trim_start_matches(['者', '师', '師', '人']);
                let rest = ["是", "为", "為", "は"]
                    .iter()
                    .find_map(|w| rest.strip_prefix(w))?;
                wide_name(rest)
            };
            by.or_else(japanese).or_else(is)
        }
        Kind::Place => {
            let chinese = || wide_name(after.trim_start_matches(['于', '在', '於']));
            let japanese = || wide_name(last_clause(before.strip_suffix('に')?));
            japanese().or_else(chinese)
        }
        _ => None,
    }
}

/// Arabic has no capitals to mark a name: it is the words after a role noun ("المهندس أحمد
/// علي") near the verb, or after a verbal noun ("من تصميم سامي حداد"), and a place the words
/// after "في", up to a word that starts another part of the sentence.
#[rustfmt::skip]
const ARABIC_ROLES: &[&str] = &[
    "المهندس", "المهندسة", "المعماري", "المعمارية", "الكيميائي", "الكيميائية", "العالم",
    "العالمة", "الدكتور", "الدكتورة", "المستكشف", "الباحث", "الباحثة",
];
#[rustfmt::skip]
const ARABIC_AFTER_NAME: &[&str] = &[
    "عام", "سنة", "في", "من", "و", "الذي", "التي", "عن", "على", "إلى", "بين", "منذ",
];
const ARABIC_PLACE_FILLER: &[&str] = &["مدينة", "منطقة", "محافظة", "قرية", "إقليم"];

fn arabic_who_where(kind: Kind, toks: &[Tok], at: Option<usize>) -> Option<String> {
    let name_from = |start: usize| {
        let words: Vec<&str> = (toks[start.min(toks.len())..].iter())
            .take_while(|t| {
                !ARABIC_AFTER_NAME.contains(&t.lower.as_str())
                    && !t.core.chars().any(|c| c.is_numeric())
            })
            .scan(false, |ended, t| {
                // A word ending the clause is the name's last.
                let take = !*ended;
                *ended |= t.ends_clause;
                take.then_some(t.core)
            })
            .take(3)
            .collect();
        (!words.is_empty()).then(|| words.join(" "))
    };
    match kind {
        Kind::Person => {
            let at = at?;
            let role = (at + 1..(at + 4).min(toks.len()))
                .find(|&j| ARABIC_ROLES.contains(&toks[j].lower.as_str()));
            let verbal_noun =
                || toks[at].lower.starts_with("تصميم") || toks[at].lower.starts_with("اكتشاف");
            let start = role
                .map(|j| j + 1)
                .or_else(|| verbal_noun().then_some(at + 1))?;
            name_from(start)
        }
        Kind::Place => {
            let i = (at.unwrap_or(0)..toks.len()).find(|&i| toks[i].lower == "في")?;
            let mut j = i + 1;
            while toks
                .get(j)
                .is_some_and(|t| ARABIC_PLACE_FILLER.contains(&t.lower.as_str()))
            {
                j += 1;
            }
            name_from(j)
        }
        _ => None,
    }
}

fn from_sentence(
    kind: Kind,
    marks: &Marks,
    sentence: &str,
    lang: Lang,
    numerals: Numerals,
) -> Option<String> {
    if matches!(kind, Kind::Person | Kind::Place) {
        if let Some(at) = marks.wide_at(sentence) {
            return wide_who_where(kind, sentence, at);
        }
    }
    let toks = tokens(sentence, numerals);
    let at = mention_at(&toks, marks);
    if lang.code() == "ar" && matches!(kind, Kind::Person | Kind::Place) {
        return arabic_who_where(kind, &toks, at);
    }
    let order = around(toks.len(), at);
    match kind {
        // A month alone ("held every December") only when the sentence has no fuller date.
        Kind::Date => order.iter().find_map(|&i| date_at(&toks, i)).or_else(|| {
            order.iter().find_map(|&i| {
                let t = &toks[i];
                (capitalised(t) && MONTHS.contains(&t.lower.as_str())).then(|| t.core.to_owned())
            })
        }),
        Kind::Percent => order.iter().find_map(|&i| {
            number_at(&toks, i)
                .filter(|(v, _)| v.ends_with('%') || v.ends_with("percent"))
                .map(|(v, _)| v)
        }),
        Kind::Money => order.iter().find_map(|&i| {
            number_at(&toks, i)
                .filter(|(v, _)| {
                    v.starts_with(['$', '€', '£', '¥'])
                        || CURRENCY_WORDS.iter().any(|c| v.to_lowercase().ends_with(c))
                })
                .map(|(v, _)| v)
        }),
        // A measure needs its unit (so a year is one only with a unit: "1523 °C"); a quantity
        // may have none, and is not a year.
        Kind::Measure | Kind::Quantity => order.iter().find_map(|&i| {
            let (v, unit) = number_at(&toks, i)?;
            match kind {
                Kind::Measure => unit.then_some(v),
                _ => (!is_year(toks[i].core)).then_some(v),
            }
        }),
        Kind::Count => {
            let noun = at?;
            // "12 stone bridges": the number up to two words before the noun.
            (noun.saturating_sub(3)..noun).rev().find_map(|i| {
                let t = &toks[i];
                (is_number(t.core) && !is_year(t.core) || SMALL_NUMBERS.contains(&t.lower.as_str()))
                    .then(|| t.core.to_owned())
            })
        }
        Kind::Person => person(&toks, at, lang),
        Kind::Place => place(&toks, &order, lang),
        Kind::Generic => {
            let at = at?;
            let after = at + 1..toks.len();
            after
                .clone()
                .find_map(|i| number_at(&toks, i).map(|(v, _)| v))
                .or_else(|| after.clone().find_map(|i| date_at(&toks, i)))
                .or_else(|| definition(&toks, at))
        }
    }
}

/// Who did what the marker at `at` names: a name after "by" (the "by" nearest the verb
/// first), after the verb where the language puts it there, else before the verb or after its
/// "was"/"is".
fn person(toks: &[Tok], at: Option<usize>, lang: Lang) -> Option<String> {
    let words = phrasing(lang);
    // The name in the words after `i`: "by (engineer) Hana Wirth", "por el ingeniero
    // Luis Ortega".
    let reach = if words.name_after_verb { 4 } else { 3 };
    let name_after = |i: usize| {
        (i + 1..(i + reach).min(toks.len())).find_map(|j| name_at(toks, name_start(toks, j, lang)?))
    };
    // "designed by (engineer) Hana Wirth", the "by" nearest the verb first …
    let mut by: Vec<usize> = (0..toks.len())
        .filter(|&i| words.by.contains(&toks[i].lower.as_str()))
        .collect();
    if let Some(at) = at {
        by.sort_by_key(|&i| i.abs_diff(at));
    }
    let by = by.into_iter().find_map(name_after);
    // … or "entwarf der Architekt Karl Brenner", "спроектировал Иван Петров" …
    let after_verb = || at.filter(|_| words.name_after_verb).and_then(name_after);
    // … or "Hana Wirth designed", "was Hana Wirth".
    by.or_else(after_verb).or_else(|| {
        let at = at?;
        let mut end = at;
        while end > 0 && ADVERBS.contains(&toks[end - 1].lower.as_str()) {
            end -= 1;
        }
        if end > 0 {
            let start = (0..end).rev().take_while(|&j| capitalised(&toks[j])).last();
            if let Some(name) = start.and_then(|s| name_at(toks, name_start(toks, s, lang)?)) {
                return Some(name);
            }
        }
        (at + 1..toks.len())
            .find(|&j| matches!(toks[j].lower.as_str(), "was" | "is"))
            .and_then(|j| name_at(toks, j + 1))
    })
}

/// Where: the name after the language's "in"/"at" (and its filler words) nearest the marker
/// in `order`, not a month.
fn place(toks: &[Tok], order: &[usize], lang: Lang) -> Option<String> {
    let words = phrasing(lang);
    order.iter().find_map(|&i| {
        if !words.at.contains(&toks[i].lower.as_str()) {
            return None;
        }
        let mut j = i + 1;
        while toks
            .get(j)
            .is_some_and(|t| words.filler.contains(&t.lower.as_str()))
        {
            j += 1;
        }
        name_at(toks, j).filter(|n| !MONTHS.contains(&n.to_lowercase().as_str()))
    })
}

/// "NAME is VALUE": the words after the first is/was/are/were that follows the name, up to the
/// clause's end (at most eight words).
fn definition(toks: &[Tok], at: usize) -> Option<String> {
    let verb = (at + 1..toks.len().min(at + 6))
        .find(|&i| matches!(toks[i].lower.as_str(), "is" | "was" | "are" | "were"))?;
    let mut words = Vec::new();
    for t in toks.iter().skip(verb + 1).take(8) {
        words.push(t.core);
        if t.ends_clause {
            break;
        }
    }
    let value = words.join(" ");
    (!value.is_empty()).then_some(value)
}

fn from_tables(point: &str, subject: &[String], tables: &[Table]) -> Option<String> {
    let p = terms(point);
    if p.is_empty() {
        return None;
    }
    let matches = |cell: &str| {
        let c = terms(cell);
        !c.is_empty()
            && (p.iter().all(|x| c.iter().any(|y| same_term(x, y)))
                || c.iter().all(|y| p.iter().any(|x| same_term(x, y))))
    };
    let names_subject = |row: &[String]| {
        let words: Vec<String> = row.iter().flat_map(|c| terms(c)).collect();
        subject
            .iter()
            .filter(|s| words.iter().any(|w| same_term(s, w)))
            .count()
    };
    for table in tables {
        if let Some(col) = table.headers.iter().position(|h| matches(h)) {
            let best = table
                .rows
                .iter()
                .map(|r| (names_subject(r), r))
                .filter(|(n, _)| *n > 0)
                .max_by_key(|(n, _)| *n)
                .map(|(_, r)| r)
                .or_else(|| (table.rows.len() == 1).then(|| &table.rows[0]));
            if let Some(cell) = best.and_then(|r| r.get(col)).filter(|c| !c.is_empty()) {
                return Some(cell.clone());
            }
        }
        for row in &table.rows {
            if row.first().is_some_and(|c| matches(c)) {
                let rest: Vec<&str> = row[1..]
                    .iter()
                    .map(String::as_str)
                    .filter(|c| !c.is_empty())
                    .collect();
                if !rest.is_empty() {
                    return Some(rest.join(" | "));
                }
            }
        }
    }
    None
}

/// A value per data point (`None` where none was found).
///
/// `sentences` are the page's candidate sentences with their rank against the question (higher
/// is better); `subject` are the question's terms, to pick a table's row; `lang` is the
/// question's language, whose stems the data points' markers match by.
pub fn extract(
    points: &[String],
    subject: &[String],
    sentences: &[(String, f64)],
    tables: &[Table],
    lang: Lang,
) -> BTreeMap<String, Option<String>> {
    let mut by_rank: Vec<usize> = (0..sentences.len()).collect();
    by_rank.sort_by(|&a, &b| sentences[b].1.total_cmp(&sentences[a].1).then(a.cmp(&b)));
    let mut out = BTreeMap::new();
    let numerals = lang.numerals();
    for point in points {
        let kind = kind(point);
        let markers = markers(point);
        let subject: Vec<String> = subject
            .iter()
            .filter(|s| !markers.iter().any(|m| same_term(m, s)))
            .cloned()
            .collect();
        // A count's column would give one row's cell; the lookup counts the rows instead.
        let mut value = (kind != Kind::Count)
            .then(|| from_tables(point, &subject, tables))
            .flatten();
        if value.is_none() {
            // Which sentences name the point: one pass over each, stopping at the first marker.
            let marks = Marks::new(&markers, lang);
            let named: Vec<bool> = (sentences.iter()).map(|(s, _)| marks.in_text(s)).collect();
            let naming = by_rank.iter().filter(|&&i| named[i]);
            let ranked = by_rank.iter().filter(|&&i| {
                sentences[i].1 > 0.0 && !matches!(kind, Kind::Generic | Kind::Count) && !named[i]
            });
            value = naming
                .chain(ranked)
                .take(TRIES)
                .find_map(|&i| from_sentence(kind, &marks, &sentences[i].0, lang, numerals));
        }
        out.insert(point.clone(), value);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(point: &str, sentence: &str) -> Option<String> {
        extract(
            &[point.to_string()],
            &[],
            &[(sentence.to_string(), 1.0)],
            &[],
            Lang::UND,
        )
        .remove(point)
        .flatten()
    }

    #[test]
    fn numbers_with_units_percentages_and_money() {
        assert_eq!(
            one(
                "melting point",
                "Zorbium melts at 1,284 degrees Celsius, a high melting point."
            ),
            Some("1,284 degrees Celsius".into())
        );
        assert_eq!(
            one(
                "long",
                "The Velmora Bridge spans 1,156 metres across the river."
            ),
            Some("1,156 metres".into())
        );
        assert_eq!(
            one(
                "growth rate",
                "Sales rose last year, a growth rate of 12.5% in all."
            ),
            Some("12.5%".into())
        );
        assert_eq!(
            one(
                "share",
                "Wind now provides 40 percent of the island's power."
            ),
            Some("40 percent".into())
        );
        assert_eq!(
            one(
                "cost",
                "The bridge cost $4.2 million when it was built in 1903."
            ),
            Some("$4.2 million".into())
        );
        assert_eq!(
            one(
                "port",
                "By default the Frell protocol listens on port 4410."
            ),
            Some("4410".into())
        );
    }

    #[test]
    fn dates_and_years() {
        assert_eq!(
            one("date", "The festival opened on 12 March 1931 in a field."),
            Some("12 March 1931".into())
        );
        assert_eq!(
            one(
                "opened",
                "Traffic first rolled across it when it opened in 1903."
            ),
            Some("1903".into())
        );
        assert_eq!(
            one(
                "release date",
                "Version 2 came out on March 4, 2021 to little fanfare."
            ),
            Some("March 4, 2021".into())
        );
    }

    #[test]
    fn names_places_counts_and_definitions() {
        assert_eq!(
            one(
                "designer",
                "The Velmora Bridge was designed by engineer Hana Wirth."
            ),
            Some("Hana Wirth".into())
        );
        assert_eq!(
            one("isolator", "Dr. Ilse Strand isolated zorbium in a cellar."),
            Some("Dr. Ilse Strand".into())
        );
        assert_eq!(
            one(
                "location",
                "The Ostra Festival is held every summer in Port Varn."
            ),
            Some("Port Varn".into())
        );
        assert_eq!(
            one("bridges", "The city has 14 stone bridges over its canals."),
            Some("14".into())
        );
        assert_eq!(
            one("capital", "The capital of Freedonia is Zelda, a port city."),
            Some("Zelda".into())
        );
        assert_eq!(one("capital", "Freedonia has no such thing."), None);
        assert_eq!(
            one(
                "captain",
                "The vessel Gansor was captained by Bastian Ficru at first."
            ),
            Some("Bastian Ficru".into())
        );
        assert_eq!(
            one(
                "isolator",
                "It was in 1985 that Dr. Yuki Saosk first isolated it."
            ),
            Some("Dr. Yuki Saosk".into())
        );
        assert_eq!(
            one(
                "location",
                "The festival is held every December in the town of Drenmel."
            ),
            Some("Drenmel".into())
        );
        assert_eq!(
            one(
                "date",
                "The festival is held every December in the town of Drenmel."
            ),
            Some("December".into())
        );
        assert_eq!(
            one(
                "number",
                "Founded in 1972, it attracts about 266,000 visitors a year."
            ),
            Some("266,000 visitors".into())
        );
    }

    /// [`one`] for a data point of a question in `code`.
    fn one_in(code: &str, point: &str, sentence: &str) -> Option<String> {
        let lang = Lang::from_tag(code).unwrap();
        extract(
            &[point.to_string()],
            &[],
            &[(sentence.to_string(), 1.0)],
            &[],
            lang,
        )
        .remove(point)
        .flatten()
    }

    /// Data points named in the question's language ([`trawl_text::points::asked_in`]) are
    /// read from sentences in it: its words that state such a value, its units, and numbers
    /// written into Chinese and Japanese text with no space around them.
    #[test]
    fn values_in_other_languages() {
        let cases = [
            (
                "de",
                "Schmelzpunkt",
                "Das Metall Yaosk schmilzt bei 1523 Grad Celsius.",
                "1523 Grad Celsius",
            ),
            (
                "de",
                "Höhe",
                "Der Gipfel des Berges Velsor liegt auf 3120 Metern.",
                "3120 Metern",
            ),
            (
                "fr",
                "point de fusion",
                "Le Rabel fond à 957 degrés Celsius, bien au-dessus du cuivre.",
                "957 degrés Celsius",
            ),
            (
                "es",
                "fundación",
                "Fundada en 1412, Brela conserva su plaza medieval.",
                "1412",
            ),
            (
                "ru",
                "длина",
                "Мост Товмо длиной 798 метров считается самым длинным.",
                "798 метров",
            ),
            (
                "ar",
                "طول",
                "يبلغ طول جسر كيلفي 1175 مترا، ويضم أربع حارات.",
                "1175 مترا",
            ),
            (
                "zh",
                "长度",
                "拉泽奥大桥全长1738米，设有四条车道。",
                "1738米",
            ),
            (
                "zh",
                "熔点",
                "特伦尔在2104°C时熔化，多家实验室证实了这一点。",
                "2104°C",
            ),
            (
                "zh",
                "建立",
                "自1532年建镇以来，一直保留着中世纪的集市广场。",
                "1532",
            ),
            (
                "ja",
                "融点",
                "カルデンは摂氏1290度で溶けることが確認されている。",
                "1290度",
            ),
            ("ar", "طول", "يبلغ طول جسر كيلفي ١١٧٥ مترا.", "١١٧٥ مترا"),
            (
                "ar",
                "تأسيس",
                "تأسست مدينة برلا عام ١٤١٢ على يد تجار.",
                "١٤١٢",
            ),
        ];
        let cases = cases.into_iter().chain([
            // Thousands set apart by spaces, as French and Russian write them.
            (
                "fr",
                "longueur",
                "Le pont de Tovmo mesure 1\u{202f}175 mètres de longueur.",
                "1\u{202f}175 mètres",
            ),
            (
                "ru",
                "население",
                "В городе Брела проживает 12 500 человек.",
                "12 500 человек",
            ),
        ]);
        for (code, point, sentence, want) in cases {
            assert_eq!(
                one_in(code, point, sentence).as_deref(),
                Some(want),
                "{sentence}"
            );
        }
        // A number glued to Chinese text that is no unit is no measure.
        assert_eq!(one_in("zh", "长度", "大桥长了3倍，全长未知。"), None);
    }

    /// Who did it and where it is: after the words saying so where capitals mark a name ("von
    /// dem Ingenieur Hana Wirth"), else by the words around the name ("由建筑师王明设计").
    #[test]
    fn people_and_places_in_other_languages() {
        #[rustfmt::skip]
        let cases = [
            ("de", "Architekt", "Die Brücke von Tovmo wurde von dem Ingenieur Hana Wirth entworfen.", Some("Hana Wirth")),
            ("de", "Architekt", "Die Brücke entwarf der Architekt Karl Brenner im Jahr 1903.", Some("Karl Brenner")),
            ("de", "Architekt", "Hana Wirth entwarf die Brücke.", Some("Hana Wirth")),
            // A German noun after its article is no name.
            ("de", "Architekt", "Der Plan entwarf die Brücke neu.", None),
            ("de", "Lage", "Der Berg Velsor liegt in der Nähe von Drenmel.", Some("Drenmel")),
            ("fr", "architecte", "Le pont de Tovmo a été conçu par l'architecte Jean Marais.", Some("Jean Marais")),
            ("fr", "lieu", "Le mont Ultov est situé dans la région de Savoie.", Some("Savoie")),
            ("es", "descubridor", "El rabel fue descubierto por la química Ana Ruiz en 1871.", Some("Ana Ruiz")),
            ("es", "ubicación", "El monte Ultov se encuentra en la provincia de Huesca.", Some("Huesca")),
            ("ru", "архитектор", "Мост Товмо спроектировал архитектор Иван Петров.", Some("Иван Петров")),
            ("ru", "местоположение", "Гора Ультов находится в Альпах.", Some("Альпах")),
            ("zh", "设计者", "拉泽奥大桥由建筑师王明设计，于1903年建成。", Some("王明")),
            ("zh", "设计者", "这座桥的设计者是王明。", Some("王明")),
            ("zh", "发现者", "特伦尔于1871年被化学家李华发现。", Some("李华")),
            ("zh", "位置", "乌尔托夫山位于阿尔卑斯山脉东部，海拔3120米。", Some("阿尔卑斯山脉东部")),
            // A design without its designer names no one, nor does "由于" ("because").
            ("zh", "设计者", "大桥的设计寿命为一百年。", None),
            ("zh", "设计者", "由于资金不足，设计推迟了两年。", None),
            ("ja", "設計者", "ソドルサ橋は建築家の田中一郎によって設計された。", Some("田中一郎")),
            ("ja", "設計者", "設計者は田中一郎である。", Some("田中一郎")),
            ("ja", "場所", "ウルトフ山はアルプスに位置する。", Some("アルプス")),
            ("ar", "المصمم", "صمم الجسر المهندس أحمد علي عام ١٩٠٣.", Some("أحمد علي")),
            ("ar", "المصمم", "الجسر من تصميم المعماري سامي حداد.", Some("سامي حداد")),
            ("ar", "المصمم", "صمم الجسر ليصمد أمام الزلازل.", None),
            ("ar", "الموقع", "يقع جبل أولتوف في جبال الألب.", Some("جبال الألب")),
        ];
        for (code, point, sentence, want) in cases {
            assert_eq!(one_in(code, point, sentence).as_deref(), want, "{sentence}");
        }
    }

    #[test]
    fn tables_answer_first() {
        let table = Table {
            headers: vec!["Metal".into(), "Melting point".into()],
            rows: vec![
                vec!["Kelvar".into(), "990 °C".into()],
                vec!["Zorbium".into(), "1,284 °C".into()],
            ],
        };
        let row_headed = Table {
            headers: vec!["Item".into(), "Detail".into()],
            rows: vec![vec!["Port".into(), "4410".into()]],
        };
        let got = extract(
            &["melting point".into(), "port".into(), "colour".into()],
            &["zorbium".into(), "melting".into(), "point".into()],
            &[(
                "Zorbium melts at 1,300 degrees in some accounts.".into(),
                1.0,
            )],
            &[table, row_headed],
            Lang::UND,
        );
        assert_eq!(got["melting point"].as_deref(), Some("1,284 °C"));
        assert_eq!(got["port"].as_deref(), Some("4410"));
        assert_eq!(got["colour"], None);
    }

    #[test]
    fn best_ranked_sentence_wins() {
        let sentences = vec![
            (
                "The old bridge was 300 metres long before the flood.".to_string(),
                0.2,
            ),
            ("The Velmora Bridge is 1,156 metres long.".to_string(), 2.0),
        ];
        let got = extract(&["long".into()], &[], &sentences, &[], Lang::UND);
        assert_eq!(got["long"].as_deref(), Some("1,156 metres"));
    }
}
