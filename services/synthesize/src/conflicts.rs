//! Conflict detection before the report is written: two sources giving different values for
//! the same attribute of the same subject. The attributes are the target data points whose
//! values are numbers, the verb of a "when" clause and the noun after "which" or "what"
//! ([`attributes`]). For each, each relevant source's first sentence that states it (all its
//! words, stemmed, or a word that states such a value, such as "spans" for a length followed by a
//! length unit: [`trawl_text::points`]) and is about the subject (the question's names, in the
//! sentence before the value, or in the source's title or the sentence, with no other name
//! before the value) is read for its first value. Values are compared after normalising number
//! formats (`1,284` = `1284`), units (°F and K to °C, feet, miles and km to metres, pounds and
//! tonnes to kilograms) and dates (a day of the month is not the value; the year is); a
//! converted value agrees within half a percent. Sources that give different values are a
//! conflict, listed in the report and given to the report writer. A page about another subject,
//! or a sentence giving another subject's value ("For comparison: Brimium melts at 902 °C"),
//! never makes one. A question in another language is read by its own words ([`detect_in`]).

use std::collections::BTreeSet;

use serde::Serialize;
use trawl_messages::AnalysedDoc;
use trawl_text::points::{asked_in, kind, markers, unit_of, wide_unit, Kind};
use trawl_text::{
    coverage, coverage_of, names, names_in, same_word, sentences, terms, Lang, Numerals, MONTHS,
};

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Conflict {
    pub data_point: String,
    /// Each value with the sources (by index) that state it.
    pub values: Vec<(String, Vec<u32>)>,
}

/// A value as a source states it: the number in its unit's base (°C, metres, kilograms), or as
/// written when no unit known here follows it.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Value {
    number: f64,
    unit: Option<&'static str>,
    /// Written in another unit than its base (°F, km …).
    converted: bool,
}

impl Value {
    /// Two statements of one value: the same unit (or one without a known unit), and the same
    /// number, or within half a percent when one was converted (a conversion's rounding).
    fn agrees(&self, other: &Value) -> bool {
        let units = self.unit.is_none() || other.unit.is_none() || self.unit == other.unit;
        let scale = self.number.abs().max(other.number.abs());
        let room = match self.converted || other.converted {
            true => 0.005 * scale,
            false => 1e-9 * scale,
        };
        units && (self.number - other.number).abs() <= room
    }

    fn show(&self) -> String {
        let n = if self.number.fract().abs() < 1e-9 {
            format!("{:.0}", self.number)
        } else {
            format!("{:.2}", self.number)
                .trim_end_matches('0')
                .to_owned()
        };
        match self.unit {
            Some(unit) => format!("{n} {unit}"),
            None => n,
        }
    }
}

/// Whether `value` can be a value of `kind`: a measure has a unit, a date is a year.
fn fits(kind: Kind, value: &Value) -> bool {
    match kind {
        Kind::Measure => value.unit.is_some(),
        Kind::Date => {
            value.unit.is_none()
                && value.number.fract() == 0.0
                && (1000.0..=2100.0).contains(&value.number)
        }
        _ if !takes_numbers(kind) => false,
        _ => value.unit.is_none(),
    }
}

/// Whether a number answers what asks for values of `kind`: not who ("entworfen 1903 von …")
/// nor where.
fn takes_numbers(kind: Kind) -> bool {
    !matches!(kind, Kind::Person | Kind::Place)
}

fn is_month(word: &str) -> bool {
    let w = word
        .trim_matches(|c: char| !c.is_alphabetic())
        .to_lowercase();
    w.len() >= 3 && MONTHS.iter().any(|m| m.starts_with(&w))
}

/// A number as written (`1,284`, `3.50`, `1,5` in German: [`Numerals::read`]), with its unit
/// when one is glued to it (`540m`, `1284°C`).
fn number_in(word: &str, numerals: Numerals) -> Option<(f64, &str)> {
    let w = word.trim_start_matches(|c: char| !c.is_ascii_digit());
    let end = w
        .find(|c: char| !(c.is_ascii_digit() || c == ',' || c == '.'))
        .unwrap_or(w.len());
    let (digits, rest) = w.split_at(end);
    let digits = digits.trim_end_matches(['.', ',']);
    if digits.is_empty() || !digits.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    Some((numerals.read(digits)?, rest))
}

/// The first value in `sentence` (a number, not a day of the month, with its unit if known),
/// and where in `sentence` its number starts. Numbers are read as `numerals` write them,
/// thousands set apart by spaces included ("1 175 mètres").
fn value_at(sentence: &str, numerals: Numerals) -> Option<(Value, usize)> {
    let words: Vec<&str> = sentence
        .split(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | ';'))
        .filter(|w| !w.is_empty())
        .collect();
    let mut skip = 0;
    for (i, word) in words.iter().enumerate() {
        if skip > 0 {
            skip -= 1;
            continue;
        }
        // "1 175 000": one number where the language sets thousands apart by spaces.
        let last = i + numerals.grouped(&words[i..]) - 1;
        let grouped;
        let word_read = if last > i {
            grouped = words[i..=last].concat();
            &grouped
        } else {
            *word
        };
        skip = last - i;
        let Some((number, glued)) = number_in(word_read, numerals) else {
            continue;
        };
        let i = last;
        // "12 March 1903", "March 12, 1903": the day is not the value; the year after it is.
        let next_is_month = words.get(i + 1).is_some_and(|w| is_month(w));
        let after_month = i > 0 && is_month(words[i - 1]) && number < 32.0;
        if (next_is_month && number < 32.0) || after_month {
            continue;
        }
        let unit = match glued.trim_matches(|c: char| matches!(c, '.' | ',' | ':')) {
            "" => unit_of(&words[i + 1..]),
            // Chinese and Japanese write the unit and the rest of the sentence on ("1738米，设有").
            glued => unit_of(&[glued]).or_else(|| unit_of(&[wide_unit(glued)?])),
        };
        let value = match unit {
            Some((base, factor, offset)) => Value {
                number: number * factor + offset,
                unit: Some(base),
                converted: factor != 1.0 || offset != 0.0,
            },
            None => Value {
                number,
                unit: None,
                converted: false,
            },
        };
        // `word` is a slice of `sentence`.
        return Some((value, word.as_ptr() as usize - sentence.as_ptr() as usize));
    }
    None
}

/// Sentences of a source's text read for values, past its key points.
const SENTENCES_READ: usize = 200;

/// A sentence of a source and its words ([`terms`]).
type Sentence = (String, Vec<String>);

/// An attribute compared across sources: a target data point, or what a "when" clause or a
/// "which" noun of the question asks for.
struct Attribute {
    name: String,
    kind: Kind,
    /// A sentence naming all of these states the attribute.
    words: Vec<String>,
    /// So does one naming any of these ("spans" for a length), when its value has the unit
    /// the kind needs.
    markers: Vec<String>,
}

impl Attribute {
    fn new(name: &str, kind: Kind) -> Attribute {
        Attribute {
            name: name.to_owned(),
            kind,
            words: terms(name),
            markers: markers(name),
        }
    }

    /// Whether a sentence with these words states the attribute as `value`.
    fn stated(&self, words: &[String], value: &Value) -> bool {
        let has = |w: &String| words.iter().any(|x| same_word(x, w));
        let named = self.words.iter().all(has);
        let marked = named || self.markers.iter().any(has);
        match self.kind {
            // A year: "opened on 12 March 1903" is 1903 (value_at skips the day).
            Kind::Date => named && fits(Kind::Date, value),
            Kind::Measure => named || (marked && value.unit.is_some()),
            _ => named,
        }
    }
}

/// The attributes `question` asks for: its data points whose values are numbers (a person or
/// a place is not compared here), the verb of a "when" clause ("When was the vessel launched"
/// asks for the year it was launched), and the noun after "which" or "what" ("Which port does
/// it use").
fn attributes(question: &str, data_points: &[String]) -> Vec<Attribute> {
    let mut out: Vec<Attribute> = (data_points.iter())
        .map(|p| Attribute::new(p, kind(p)))
        .filter(|a| !a.words.is_empty() && !matches!(a.kind, Kind::Person | Kind::Place))
        .collect();
    for clause in question.split([',', '?', '.', ';']) {
        let words: Vec<String> = (clause.split_whitespace())
            .map(|w| {
                w.trim_matches(|c: char| !c.is_alphanumeric())
                    .to_lowercase()
            })
            .collect();
        for (i, w) in words.iter().enumerate() {
            let asked: Option<(&str, Kind)> = match w.as_str() {
                "when" => (words[i + 1..].iter())
                    .take_while(|w| *w != "and")
                    .last()
                    .filter(|_| words.len() > i + 2)
                    .map(|verb| (verb.as_str(), Kind::Date)),
                // "Who created it and in what year?": the year it was created, as sentences
                // name a year by the verb, not by the word "year".
                "which" | "what" if words.get(i + 1).is_some_and(|n| n == "year") => (question
                    .split(|c: char| !c.is_alphanumeric()))
                .find(|w| w.len() > 4 && w.ends_with("ed"))
                .map(|verb| (verb, Kind::Date)),
                "which" | "what" => words.get(i + 1).map(|noun| (noun.as_str(), kind(noun))),
                _ => None,
            };
            let Some((name, kind)) = asked else { continue };
            let known = (out.iter()).any(|a| a.words.iter().any(|x| same_word(x, name)));
            if !terms(name).is_empty() && !known {
                out.push(Attribute::new(&name.to_lowercase(), kind));
            }
        }
    }
    out
}

/// A name other than the subject's before `at` in `sentence`: a capitalised word past the first
/// that is not one of the subject's words or a month, or a first word that owns or does
/// something ("Quellium's melting point", "Brimium has", "Brimium melts").
fn other_name_before(sentence: &str, at: usize, subject: &[String]) -> bool {
    let words: Vec<&str> = sentence[..at].split_whitespace().collect();
    words.iter().enumerate().any(|(i, raw)| {
        let w = raw.trim_matches(|c: char| !c.is_alphanumeric());
        let bare = w
            .strip_suffix("'s")
            .or_else(|| w.strip_suffix("’s"))
            .unwrap_or(w);
        let named = bare.chars().next().is_some_and(char::is_uppercase)
            && !terms(bare).is_empty()
            && !is_month(bare)
            && !subject.iter().any(|s| same_word(s, &bare.to_lowercase()));
        // "Brimium has", "Brimium melts": a verb after it, not "Heated to".
        let acts = bare != w
            || (words.get(i + 1)).is_some_and(|n| {
                matches!(*n, "has" | "is" | "was" | "had" | "are" | "were")
                    || (n.len() > 3 && n.ends_with('s') && n.starts_with(char::is_lowercase))
            });
        named && (i > 0 || acts)
    })
}

/// The value a source gives for `attribute` of `subject`: the first value of its first
/// sentence (key points first, then its text's) that states the attribute and holds one, where
/// the sentence names the subject before the value, or the source's title or the rest of the
/// sentence names it and no other name comes before the value ("Quellium's melting point is
/// 455 °C, below zorbium's" is not about zorbium).
fn value_in(
    numerals: Numerals,
    sentences: &[Sentence],
    attribute: &Attribute,
    subject: &[String],
    title: &str,
) -> Option<Value> {
    let titled = subject.is_empty() || coverage(subject, title) == 1.0;
    (sentences.iter())
        .filter_map(|(s, words)| value_at(s, numerals).map(|(v, at)| (s, words, v, at)))
        .filter(|(_, words, v, _)| attribute.stated(words, v))
        .find(|(s, words, _, at)| {
            coverage(subject, &s[..*at]) == 1.0
                || ((titled || coverage_of(subject, words) == 1.0)
                    && !other_name_before(s, *at, subject))
        })
        .map(|(_, _, v, _)| v)
}

/// What the question is about: its names (capitalised words past the first), or its content
/// words that are not the data points'.
fn subject_of(question: &str, data_points: &[String]) -> Vec<String> {
    let names = names(question);
    if !names.is_empty() {
        return names;
    }
    let point_words: BTreeSet<String> = data_points.iter().flat_map(|p| terms(p)).collect();
    (terms(question).into_iter())
        .filter(|w| !point_words.contains(w))
        .collect()
}

/// Attributes whose relevant sources give different values for the question's subject, for a
/// question in English (or one whose language is unknown).
pub fn detect(question: &str, data_points: &[String], docs: &[AnalysedDoc]) -> Vec<Conflict> {
    detect_in(question, Lang::UND, data_points, docs)
}

/// [`detect`] for a question in `lang`. English questions are read by their English shapes
/// (data points, "when" and "which" clauses, capitalised names). A question in another language
/// asks for the value its sentences state in the question's own words: each relevant source's
/// first sentence holding a number and the words of the question that its sources use (by the
/// language's stems; a Chinese or Japanese word anywhere in the sentence, which a name split
/// into characters needs) gives the source's value, and sources that give different values in
/// the same unit are a conflict. The sentence must hold the subject's name, which keeps another
/// subject's sentence out, and may miss one of the other words when the name is known; a word
/// stating the question's data point in its language ("fond" for "point de fusion") stands
/// for the data point's own words when the value is of its kind.
pub fn detect_in(
    question: &str,
    lang: Lang,
    data_points: &[String],
    docs: &[AnalysedDoc],
) -> Vec<Conflict> {
    if !lang.is_english_or_und() {
        return detect_asked(question, lang, docs);
    }
    let numerals = lang.numerals();
    let attributes = attributes(question, data_points);
    if attributes.is_empty() {
        return Vec::new();
    }
    let subject = subject_of(question, data_points);
    // Each source's sentences and their words once, not once per attribute.
    let read: Vec<(&AnalysedDoc, Vec<Sentence>)> = (docs.iter().filter(|d| d.is_relevant))
        .map(|d| {
            let all = read_sentences(d).into_iter().map(|s| {
                let words = terms(&s);
                (s, words)
            });
            (d, all.collect())
        })
        .collect();
    let mut out = Vec::new();
    for attribute in &attributes {
        let values = (read.iter()).filter_map(|(doc, sentences)| {
            let title = format!("{} {}", doc.title, doc.source.title);
            let v = value_in(numerals, sentences, attribute, &subject, &title)?;
            Some((doc.source.idx, v))
        });
        out.extend(conflict(&attribute.name, values));
    }
    out
}

/// [`detect_in`] for a question not in English.
fn detect_asked(question: &str, lang: Lang, docs: &[AnalysedDoc]) -> Vec<Conflict> {
    let numerals = lang.numerals();
    // Each source's sentences that hold a value, with their words' stems, each stemmed once.
    let stated: Vec<(u32, Vec<Said>)> = (docs.iter().filter(|d| d.is_relevant))
        .map(|d| {
            let said = (read_sentences(d).iter())
                .filter_map(|s| Said::new(s, lang, numerals))
                .collect();
            (d.source.idx, said)
        })
        .collect();
    // The data points the question names in its language ("point de fusion"), and the words
    // that state them ("fond"), with the kind of value they take.
    let points = asked_in(question, lang);
    let stem = |t: String| {
        let stem = lang.stem(&t).into_owned();
        (t, stem)
    };
    let marks: Vec<Word> = (points.iter())
        .flat_map(|p| markers(p))
        .map(|m| stem(m.to_lowercase()))
        .collect();
    let kinds: Vec<Kind> = points.iter().map(|p| kind(p)).collect();
    // Who or where is no number: two sources' years beside the name differ about something else.
    if !kinds.is_empty() && kinds.iter().all(|&k| !takes_numbers(k)) {
        return Vec::new();
    }
    // What says which value is asked, not whose: a data point's word, or a unit ("米").
    // A Chinese or Japanese word by its characters: "全长" holds "长".
    let says_what = |(t, st): &Word| {
        let wide = t.chars().any(trawl_text::is_wide);
        unit_of(&[t.as_str()]).is_some()
            || (marks.iter()).any(|(m, ms)| m == t || ms == st || (wide && t.contains(m.as_str())))
    };
    // The question's words its sources use: "какова", "quelle" and "cuánto" ask, and no
    // sentence answers with them. A name the segmenter cut apart is one word again ("特伦").
    let apart = |w: &str| says_what(&stem(w.to_owned()));
    let words: Vec<Word> = (trawl_text::joined_terms(question, lang, apart).into_iter())
        .map(stem)
        .filter(|t| (stated.iter()).any(|(_, ss)| ss.iter().any(|s| s.has(t))))
        .collect();
    if words.len() < 2 {
        return Vec::new();
    }
    // The subject's name, where capitals say it (German: where a noun introduces it; not in a
    // script without case): a sentence must hold it, and may miss one of the other words,
    // which say what is asked, when there are two or more. Without a name, every word is
    // needed: the name is among them, and nothing tells which it is. A sentence holding a word
    // that states the data point ("Le Rabel fond à 957 degrés" for "Quel est le point de
    // fusion du Rabel ?") needs none of the data point's own words, if its value is of the
    // data point's kind.
    let names = names_in(question, lang);
    let (subject, asked): (Vec<&Word>, Vec<&Word>) =
        (words.iter()).partition(|(t, _)| names.contains(t));
    let may_miss = usize::from(asked.len() >= 2 && !subject.is_empty());
    let missing = |s: &Said, also: &dyn Fn(&Word) -> bool| {
        (asked.iter()).filter(|t| also(t) && !s.has(t)).count()
    };
    let marked = |s: &Said| {
        marks.iter().any(|m| s.has(m))
            && kinds.iter().any(|k| fits(*k, &s.value))
            && missing(s, &|t| !says_what(t)) <= may_miss
    };
    let answers = |s: &Said| {
        subject.iter().all(|t| s.has(t)) && (missing(s, &|_| true) <= may_miss || marked(s))
    };
    let values: Vec<(u32, Value)> = (stated.iter())
        .filter_map(|(idx, ss)| Some((*idx, ss.iter().find(|s| answers(s))?.value)))
        .collect();
    // Values in one unit: a sentence naming two things asked ("wie hoch … und wann") may give
    // a year in one source and a height in another.
    let Some(unit) = most_common(values.iter().map(|(_, v)| v.unit)) else {
        return Vec::new();
    };
    let asked = question.trim_end_matches(|c: char| c.is_whitespace() || "?？؟".contains(c));
    let in_unit = values.into_iter().filter(|(_, v)| v.unit == unit);
    conflict(asked, in_unit).into_iter().collect()
}

/// A word of the question and its stem.
type Word = (String, String);

/// A sentence that holds a value, as [`detect_asked`] reads it.
struct Said {
    /// Lower-cased.
    text: String,
    /// Its words' stems in the question's language.
    stems: Vec<String>,
    value: Value,
}

impl Said {
    fn new(sentence: &str, lang: Lang, numerals: Numerals) -> Option<Said> {
        // "١١٧٥ مترا" is 1175 metres.
        let (value, _) = value_at(&trawl_text::ascii_digits(sentence), numerals)?;
        let text = sentence.to_lowercase();
        let mut stems = Vec::new();
        trawl_text::each_word_in(&text, lang, |w| {
            stems.push(lang.stem(w).into_owned());
            true
        });
        Some(Said { text, stems, value })
    }

    /// Whether the sentence holds a (word, stem) of the question: by its stem, or for a
    /// Chinese or Japanese word anywhere in the sentence, which a name split into characters
    /// needs.
    fn has(&self, (word, stem): &Word) -> bool {
        match word.chars().any(trawl_text::is_wide) {
            true => self.text.contains(word.as_str()),
            false => self.stems.contains(stem),
        }
    }
}

/// A source's sentences read for values: its key points, then its text's first sentences.
fn read_sentences(d: &AnalysedDoc) -> Vec<String> {
    let mut all = d.key_points.clone();
    all.extend(sentences(&d.markdown).into_iter().take(SENTENCES_READ));
    all
}

/// The conflict on `data_point` among the sources' values (by source index), if they give
/// more than one: agreeing values grouped, the most attested first.
fn conflict(data_point: &str, values: impl Iterator<Item = (u32, Value)>) -> Option<Conflict> {
    let mut groups: Vec<(Value, Vec<u32>)> = Vec::new();
    for (idx, v) in values {
        match groups.iter_mut().find(|(g, _)| g.agrees(&v)) {
            Some((_, idxs)) => idxs.push(idx),
            None => groups.push((v, vec![idx])),
        }
    }
    if groups.len() < 2 {
        return None;
    }
    let mut values: Vec<(String, Vec<u32>)> = (groups.into_iter())
        .map(|(v, idxs)| (v.show(), idxs))
        .collect();
    values.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    Some(Conflict {
        data_point: data_point.to_owned(),
        values,
    })
}

/// The item seen most often, the first seen among equals.
fn most_common<T: PartialEq + Copy>(items: impl Iterator<Item = T>) -> Option<T> {
    let mut counts: Vec<(T, usize)> = Vec::new();
    for item in items {
        match counts.iter_mut().find(|(t, _)| *t == item) {
            Some((_, n)) => *n += 1,
            None => counts.push((item, 1)),
        }
    }
    let best = counts.iter().map(|(_, n)| *n).max()?;
    counts.into_iter().find(|(_, n)| *n == best).map(|(t, _)| t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use trawl_messages::{Source, SourceKind};

    fn doc(idx: u32, title: &str, text: &str) -> AnalysedDoc {
        let source = Source {
            idx,
            url: format!("http://s{idx}.test/"),
            title: String::new(),
            snippet: String::new(),
            provider: "searxng".into(),
            position: 1,
            score: 0.5,
            kind: SourceKind::Page,
            file_type: None,
        };
        AnalysedDoc {
            title: title.into(),
            relevance: 0.8,
            is_relevant: true,
            ..AnalysedDoc::new(source, text.into())
        }
    }

    const ZORBIUM: &str = "What is the melting point of zorbium?";

    #[test]
    fn finds_sources_that_disagree_on_a_number() {
        let docs = vec![
            doc(
                0,
                "",
                "Zorbium has a melting point of 1,284 degrees Celsius.",
            ),
            doc(
                1,
                "",
                "The melting point of zorbium is 1284 °C, found in 1931.",
            ),
            doc(
                2,
                "Zorbium",
                "Its melting point was measured at 1,310 degrees.",
            ),
            doc(3, "", "Zorbium is grey and was found by Dr. Strand."),
        ];
        let c = detect(ZORBIUM, &["melting point".into(), "colour".into()], &docs);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].data_point, "melting point");
        assert_eq!(
            c[0].values,
            vec![("1284 °C".into(), vec![0, 1]), ("1310".into(), vec![2])]
        );
    }

    #[test]
    fn agreeing_sources_are_no_conflict() {
        let docs = vec![
            doc(0, "", "The Brimomir Bridge is 1,156 metres long."),
            doc(1, "Brimomir Bridge", "At 1156 m long, it is the longest."),
        ];
        assert!(detect("How long is the Brimomir Bridge?", &["long".into()], &docs).is_empty());
        assert_eq!(
            value_at("version 3.50 (beta)", Lang::EN.numerals()).map(|(v, _)| v),
            Some(Value {
                number: 3.5,
                unit: None,
                converted: false
            })
        );
    }

    #[test]
    fn other_subjects_never_conflict() {
        // The second page is about another element: its melting point is not zorbium's.
        let docs = vec![
            doc(0, "Zorbium", "Zorbium has a melting point of 1,284 °C."),
            doc(1, "Brimium", "Brimium has a melting point of 902 °C."),
            doc(
                2,
                "Elements",
                "Quellium's melting point is 455 °C, far below zorbium's.",
            ),
        ];
        assert!(detect(ZORBIUM, &["melting point".into()], &docs).is_empty());
    }

    #[test]
    fn units_and_dates_are_normalised_before_comparing() {
        let docs = vec![
            doc(0, "", "Zorbium has a melting point of 1,284 °C."),
            doc(1, "", "Zorbium's melting point is 2343.2 °F."),
            doc(2, "", "Zorbium has a melting point of 1557.15 K."),
        ];
        assert!(detect(ZORBIUM, &["melting point".into()], &docs).is_empty());
        let opened = vec![
            doc(0, "", "The Brimomir Bridge opened on 12 March 1903."),
            doc(1, "", "The Brimomir Bridge opened in 1903 after delays."),
            doc(
                2,
                "",
                "The Brimomir Bridge opened March 14, 1903, to traffic.",
            ),
        ];
        let q = "When did the Brimomir Bridge open?";
        assert!(detect(q, &["opened".into()], &opened).is_empty());
        let lengths = vec![
            doc(0, "", "The Brimomir Bridge is 1.2 km long."),
            doc(1, "", "The Brimomir Bridge is 1,156 metres long."),
        ];
        let c = detect(
            "How long is the Brimomir Bridge?",
            &["long".into()],
            &lengths,
        );
        assert_eq!(
            c[0].values,
            vec![("1156 m".into(), vec![1]), ("1200 m".into(), vec![0])]
        );
    }

    /// Documents numbered from 0, each `(title, text)`.
    fn docs(items: &[(&str, &str)]) -> Vec<AnalysedDoc> {
        (items.iter().enumerate())
            .map(|(i, (title, text))| doc(i as u32, title, text))
            .collect()
    }

    #[test]
    fn when_clauses_and_synonyms_name_what_is_compared() {
        let launched = docs(&[
            ("", "The research vessel Gansor was launched in 1897."),
            (
                "Research vessel Gansor",
                "Launched in 1910, it spent a winter in dock.",
            ),
        ]);
        let q = "When was the research vessel Gansor launched and who captained it?";
        let c = detect(q, &[], &launched);
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(c[0].data_point, "launched");
        let created = docs(&[
            (
                "",
                "The Tovcru language was created by Tomas Zudren in 1997.",
            ),
            (
                "Tovcru",
                "In 2010, Tomas Zudren released the Tovcru he had created.",
            ),
        ]);
        let q = "Who created the Tovcru language and in what year?";
        assert_eq!(detect(q, &[], &created)[0].data_point, "created");
        // "spans" and "reaches" state a length when a length unit follows.
        let lengths = docs(&[
            (
                "",
                "The Brimomir Bridge spans 1,156 metres across the river.",
            ),
            (
                "Brimomir Bridge",
                "At 1,169 metres, it is the longest crossing.",
            ),
            (
                "Brimomir Bridge",
                "It reaches 40 cars an hour at the longest queue.",
            ),
        ]);
        let c = detect(
            "How long is the Brimomir Bridge?",
            &["long".into()],
            &lengths,
        );
        assert_eq!(
            c[0].values,
            vec![("1156 m".into(), vec![0]), ("1169 m".into(), vec![1])]
        );
    }

    #[test]
    fn a_page_about_the_subject_quoting_other_subjects_is_no_conflict() {
        // Titled for zorbium, but its other values are other elements' own.
        let docs = docs(&[
            ("Zorbium", "Zorbium has a melting point of 1,284 °C."),
            (
                "Zorbium compared with its rivals",
                "Zorbium melts at 1,284 °C. For comparison: Brimium melts at 902 °C. \
                 Quellium's melting point is 455 °C. The melting point of Tharbium is 300 °C.",
            ),
        ]);
        assert!(detect(ZORBIUM, &["melting point".into()], &docs).is_empty());
    }

    fn lang(code: &str) -> Lang {
        Lang::from_tag(code).unwrap()
    }

    #[test]
    fn sources_disagreeing_in_other_languages_are_a_conflict_and_other_subjects_are_not() {
        for (code, question, texts, values) in [
            (
                "de",
                "Wie lang ist die Zorvel-Brücke?",
                [
                    "Die Zorvel-Brücke ist 1175 Meter lang und trägt vier Fahrspuren.",
                    "Die Zorvel-Brücke ist 1188 Meter lang.",
                    "Die Kelmo-Brücke ist 900 Meter lang.",
                ],
                ["1175 m", "1188 m"],
            ),
            (
                "zh",
                "拉泽奥大桥有多长？",
                [
                    "拉泽奥大桥全长1738米，设有四条车道。",
                    "这座长1751米的拉泽奥大桥是该地区最长的桥梁。",
                    "拉奥塔大桥全长900米。",
                ],
                ["1738 m", "1751 m"],
            ),
            (
                "ar",
                "ما طول جسر زوربيل؟",
                [
                    "يبلغ طول جسر زوربيل 1175 مترا، ويضم أربع حارات للسيارات.",
                    "يبلغ طول جسر زوربيل 1188 مترا.",
                    "يبلغ طول جسر كيلمو 900 مترا.",
                ],
                ["1175 m", "1188 m"],
            ),
            (
                // The name known by its capitals, a sentence may miss one other word.
                "fr",
                "Quel est le point de fusion du Rabel ?",
                [
                    "Le point de fusion du Rabel est de 957 °C.",
                    "Le Rabel a une température de fusion de 970 degrés Celsius.",
                    "Le point de fusion du Kelmo est de 500 °C.",
                ],
                ["957 °C", "970 °C"],
            ),
            (
                "ru",
                "Какова температура плавления металла Павмо?",
                [
                    "Температура плавления металла Павмо составляет 3074 °C.",
                    "Металл Павмо плавится при температуре 3087 градусов Цельсия.",
                    "Температура плавления металла Круфа составляет 1228 °C.",
                ],
                ["3074 °C", "3087 °C"],
            ),
        ] {
            let docs = docs(&texts.map(|t| ("", t)));
            let c = detect_in(question, lang(code), &[], &docs);
            assert_eq!(c.len(), 1, "{code}: {c:?}");
            let found: Vec<&str> = c[0].values.iter().map(|(v, _)| v.as_str()).collect();
            assert_eq!(found, values, "{code}");
            assert_eq!(
                c[0].data_point,
                question.trim_end_matches(['?', '？', '؟', ' '])
            );
            // Agreeing sources (the first twice) are none.
            let agreeing = docs_of(&[texts[0], texts[0], texts[2]]);
            assert!(
                detect_in(question, lang(code), &[], &agreeing).is_empty(),
                "{code}"
            );
        }
    }

    /// A sentence stating the data point by another word than the question's ("fond" for
    /// "point de fusion", "schmilzt" for "Schmelzpunkt") gives its source's value; a Chinese
    /// name's characters count only together, as the question writes them.
    #[test]
    fn words_stating_a_data_point_and_names_cut_apart() {
        for (code, question, texts, values) in [
            (
                "fr",
                "Quel est le point de fusion du Rabel ?",
                [
                    "Le Rabel fond à 957 degrés Celsius, bien au-dessus du cuivre.",
                    "Le point de fusion du Rabel est de 970 °C.",
                    "Le Kelmo fond à 500 degrés Celsius.",
                ],
                &["957 °C", "970 °C"][..],
            ),
            (
                "es",
                "¿Cuál es el punto de fusión del Beltovix?",
                [
                    "El Beltovix se funde a 2893 grados Celsius, muy por encima del cobre.",
                    "El punto de fusión del Beltovix es de 2906 °C.",
                    "El Kelmo se funde a 500 grados Celsius.",
                ],
                &["2893 °C", "2906 °C"],
            ),
            (
                "de",
                "Wie hoch ist der Schmelzpunkt des Metalls Yaosk?",
                [
                    "Das Metall Yaosk schmilzt bei 1523 Grad Celsius.",
                    "Der Schmelzpunkt von Yaosk liegt bei 1536 °C.",
                    "Das Metall Kelmo schmilzt bei 500 Grad Celsius.",
                ],
                &["1523 °C", "1536 °C"],
            ),
            (
                // 伦斯特 holds 特 and 伦, not 特伦.
                "zh",
                "特伦尔的熔点是多少度？",
                [
                    "特伦尔的熔点为2104摄氏度，远高于铜。",
                    "伦斯特的熔点为1512摄氏度，远高于铜。",
                    "特伦尔是一种稀有的银灰色金属。",
                ],
                &[],
            ),
        ] {
            let docs = docs(&texts.map(|t| ("", t)));
            let c = detect_in(question, lang(code), &[], &docs);
            let found: Vec<&str> = (c.iter().flat_map(|c| &c.values))
                .map(|(v, _)| v.as_str())
                .collect();
            assert_eq!(found, values, "{code}");
        }
        // "fond" with no temperature is no melting point: "au fond" is the bottom.
        let bottom = docs_of(&[
            "Le Rabel fond à 957 degrés Celsius.",
            "Le Rabel repose au fond de 40 puits.",
        ]);
        let q = "Quel est le point de fusion du Rabel ?";
        assert!(detect_in(q, lang("fr"), &[], &bottom).is_empty());
        // Who designed it is no number: years beside the name are no conflict.
        let years = docs_of(&[
            "Die Zorvel-Brücke wurde 1903 von Hana Wirth entworfen.",
            "Die Zorvel-Brücke wurde 1905 von Hana Wirth entworfen.",
        ]);
        let q = "Wer hat die Zorvel-Brücke entworfen?";
        assert!(detect_in(q, lang("de"), &[], &years).is_empty());
    }

    /// "1,2 Kilometer" is 1200 metres in German, as "1.200 Meter" is; "1 175 mètres" is 1175
    /// in French.
    #[test]
    fn numbers_are_read_as_the_questions_language_writes_them() {
        let q = "Wie lang ist die Zorvel-Brücke?";
        let agreeing = docs_of(&[
            "Die Zorvel-Brücke ist 1,2 Kilometer lang.",
            "Die Zorvel-Brücke ist 1.200 Meter lang.",
        ]);
        assert!(detect_in(q, lang("de"), &[], &agreeing).is_empty());
        let disagreeing = docs_of(&[
            "Die Zorvel-Brücke ist 1,2 Kilometer lang.",
            "Die Zorvel-Brücke ist 1,3 Kilometer lang.",
        ]);
        let c = detect_in(q, lang("de"), &[], &disagreeing);
        assert_eq!(c[0].values[0].0, "1200 m");
        assert_eq!(c[0].values[1].0, "1300 m");
        let q = "Quelle est la longueur du pont de Tovmo ?";
        let c = detect_in(
            q,
            lang("fr"),
            &[],
            &docs_of(&[
                "Le pont de Tovmo mesure 1 175 mètres de longueur.",
                "Le pont de Tovmo mesure 1\u{202f}188 mètres de longueur.",
            ]),
        );
        let found: Vec<&str> = c[0].values.iter().map(|(v, _)| v.as_str()).collect();
        assert_eq!(found, ["1175 m", "1188 m"]);
    }

    #[test]
    fn arabic_digits_are_numbers() {
        let q = "ما طول جسر زوربيل؟";
        let docs = docs_of(&[
            "يبلغ طول جسر زوربيل ١١٧٥ مترا، ويضم أربع حارات.",
            "يبلغ طول جسر زوربيل 1188 مترا.",
        ]);
        let c = detect_in(q, lang("ar"), &[], &docs);
        let found: Vec<&str> = c[0].values.iter().map(|(v, _)| v.as_str()).collect();
        assert_eq!(found, ["1175 m", "1188 m"]);
    }

    fn docs_of(texts: &[&str]) -> Vec<AnalysedDoc> {
        docs(&texts.iter().map(|t| ("", *t)).collect::<Vec<_>>())
    }

    #[test]
    fn values_in_another_unit_or_without_the_questions_words_are_not_compared() {
        let q = "Wie lang ist die Zorvel-Brücke?";
        let docs = docs_of(&[
            "Die Zorvel-Brücke ist 1175 Meter lang.",
            // A year in a sentence with the question's words: not a length.
            "Die Zorvel-Brücke ist seit 1911 lang geplant worden, gebaut 1930.",
            "Die Zorvel-Brücke ist 1175 Meter lang, sagt die Stadt.",
            // The subject, but not what was asked.
            "Die Zorvel-Brücke hat 4 Fahrspuren.",
        ]);
        assert!(detect_in(q, lang("de"), &[], &docs).is_empty());
    }
}
