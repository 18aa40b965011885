//! Conflict detection before the report is written: two sources giving different values for
//! the same attribute of the same subject. For each target data point, each relevant source's
//! first sentence that names it (all its words, stemmed) and its subject (the question's names,
//! in the sentence or the source's title) is read for its first value. Values are compared after
//! normalising number formats (`1,284` = `1284`), units (°F and K to °C, feet, miles and km to
//! metres, pounds and tonnes to kilograms) and dates (a day of the month is not the value; the
//! year is); a converted value agrees within half a percent. Sources that give different values are a
//! conflict, listed in the report and given to the report writer. A page about another subject
//! never makes one: its sentences do not name the question's subject.

use std::collections::BTreeSet;

use serde::Serialize;
use trawl_messages::AnalysedDoc;
use trawl_text::{coverage, sentences, terms, MONTHS};

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

fn is_month(word: &str) -> bool {
    let w = word
        .trim_matches(|c: char| !c.is_alphabetic())
        .to_lowercase();
    w.len() >= 3 && MONTHS.iter().any(|m| m.starts_with(&w))
}

/// The unit `words` start with (after a number), as (base unit, factor, offset): a value in it
/// is `number * factor + offset` in the base unit.
fn unit_of(words: &[&str]) -> Option<(&'static str, f64, f64)> {
    let w = |i: usize| {
        words.get(i).map(|w| {
            w.trim_matches(|c: char| matches!(c, '.' | ',' | ';' | ':' | ')'))
                .to_lowercase()
        })
    };
    let first = w(0)?;
    let second = w(1).unwrap_or_default();
    let degrees = matches!(first.as_str(), "degrees" | "degree" | "°" | "deg");
    let scale = if degrees {
        second.as_str()
    } else {
        first.as_str()
    };
    Some(match scale {
        "°c" | "celsius" | "c" if degrees || scale != "c" => ("°C", 1.0, 0.0),
        "°f" | "fahrenheit" | "f" if degrees || scale != "f" => {
            ("°C", 5.0 / 9.0, -32.0 * 5.0 / 9.0)
        }
        "k" | "kelvin" => ("°C", 1.0, -273.15),
        "m" | "metre" | "metres" | "meter" | "meters" => ("m", 1.0, 0.0),
        "km" | "kilometre" | "kilometres" | "kilometer" | "kilometers" => ("m", 1000.0, 0.0),
        "cm" | "centimetres" | "centimeters" => ("m", 0.01, 0.0),
        "ft" | "foot" | "feet" => ("m", 0.3048, 0.0),
        "mi" | "mile" | "miles" => ("m", 1609.344, 0.0),
        "kg" | "kilogram" | "kilograms" => ("kg", 1.0, 0.0),
        "g" | "gram" | "grams" => ("kg", 0.001, 0.0),
        "t" | "tonne" | "tonnes" => ("kg", 1000.0, 0.0),
        "lb" | "lbs" | "pound" | "pounds" => ("kg", 0.453_592_37, 0.0),
        _ => return None,
    })
}

/// A number as written (`1,284`, `3.50`), with its unit when one is glued to it (`540m`,
/// `1284°C`).
fn number_in(word: &str) -> Option<(f64, &str)> {
    let w = word.trim_start_matches(|c: char| !c.is_ascii_digit());
    let end = w
        .find(|c: char| !(c.is_ascii_digit() || c == ',' || c == '.'))
        .unwrap_or(w.len());
    let (digits, rest) = w.split_at(end);
    let digits = digits.trim_end_matches(['.', ',']);
    if digits.is_empty() || !digits.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    Some((digits.replace(',', "").parse().ok()?, rest))
}

/// The first value in `sentence` (a number, not a day of the month, with its unit if known),
/// and where in `sentence` its number starts.
fn value_at(sentence: &str) -> Option<(Value, usize)> {
    let words: Vec<&str> = sentence
        .split(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | ';'))
        .filter(|w| !w.is_empty())
        .collect();
    for (i, word) in words.iter().enumerate() {
        let Some((number, glued)) = number_in(word) else {
            continue;
        };
        // "12 March 1903", "March 12, 1903": the day is not the value; the year after it is.
        let next_is_month = words.get(i + 1).is_some_and(|w| is_month(w));
        let after_month = i > 0 && is_month(words[i - 1]) && number < 32.0;
        if (next_is_month && number < 32.0) || after_month {
            continue;
        }
        let unit = match glued.trim_matches(|c: char| matches!(c, '.' | ',' | ':')) {
            "" => unit_of(&words[i + 1..]),
            glued => unit_of(&[glued]),
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

/// The value a source gives for `point` about `subject`: the first value of its first sentence
/// (key points first, then its text's) that names the point and holds one, where the source's
/// title names the subject or the sentence does before the value ("Quellium's melting point is
/// 455 °C, below zorbium's" is not about zorbium).
fn value_in(
    sentences: &[String],
    point: &[String],
    subject: &[String],
    title: &str,
) -> Option<Value> {
    let titled = subject.is_empty() || coverage(subject, title) == 1.0;
    (sentences.iter())
        .filter(|s| coverage(point, s) == 1.0)
        .filter_map(|s| value_at(s).map(|(v, at)| (s, v, at)))
        .find(|(s, _, at)| titled || coverage(subject, &s[..*at]) == 1.0)
        .map(|(_, v, _)| v)
}

/// What the question is about: its names (capitalised words past the first), or its content
/// words that are not the data points'.
fn subject_of(question: &str, data_points: &[String]) -> Vec<String> {
    let names: Vec<String> = (question.split(|c: char| !c.is_alphanumeric()))
        .filter(|w| !w.is_empty())
        .skip(1)
        .filter(|w| w.chars().next().is_some_and(char::is_uppercase))
        .flat_map(terms)
        .collect();
    if !names.is_empty() {
        return names;
    }
    let point_words: BTreeSet<String> = data_points.iter().flat_map(|p| terms(p)).collect();
    (terms(question).into_iter())
        .filter(|w| !point_words.contains(w))
        .collect()
}

/// Data points whose relevant sources give different values for the question's subject.
pub fn detect(question: &str, data_points: &[String], docs: &[AnalysedDoc]) -> Vec<Conflict> {
    let points: Vec<(&String, Vec<String>)> = (data_points.iter())
        .map(|p| (p, terms(p)))
        .filter(|(_, words)| !words.is_empty())
        .collect();
    if points.is_empty() {
        return Vec::new();
    }
    let subject = subject_of(question, data_points);
    // Each source's sentences once, not once per data point.
    let read: Vec<(&AnalysedDoc, Vec<String>)> = (docs.iter().filter(|d| d.is_relevant))
        .map(|d| {
            let mut all = d.key_points.clone();
            all.extend(sentences(&d.markdown).into_iter().take(SENTENCES_READ));
            (d, all)
        })
        .collect();
    let mut out = Vec::new();
    for (point, words) in points {
        let mut groups: Vec<(Value, Vec<u32>)> = Vec::new();
        for (doc, sentences) in &read {
            let title = format!("{} {}", doc.title, doc.source.title);
            let Some(v) = value_in(sentences, &words, &subject, &title) else {
                continue;
            };
            match groups.iter_mut().find(|(g, _)| g.agrees(&v)) {
                Some((_, idxs)) => idxs.push(doc.source.idx),
                None => groups.push((v, vec![doc.source.idx])),
            }
        }
        if groups.len() > 1 {
            let mut values: Vec<(String, Vec<u32>)> = groups
                .into_iter()
                .map(|(v, idxs)| (v.show(), idxs))
                .collect();
            // Most-attested value first.
            values.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
            out.push(Conflict {
                data_point: point.clone(),
                values,
            });
        }
    }
    out
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
            value_at("version 3.50 (beta)").map(|(v, _)| v),
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
}
