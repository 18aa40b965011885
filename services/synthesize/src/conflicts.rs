//! Conflict detection before the report is written: the same data point given different values
//! by different sources. For each target data point, each relevant source's first sentence that
//! names it (all its words, stemmed) is read for its first number; sources that give different
//! numbers are a conflict, listed in the report and given to the report writer.

use std::collections::BTreeMap;

use serde::Serialize;
use trawl_messages::AnalysedDoc;
use trawl_text::{coverage, sentences, terms};

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Conflict {
    pub data_point: String,
    /// Each value with the sources (by index) that state it.
    pub values: Vec<(String, Vec<u32>)>,
}

/// The first number in `sentence`, normalised (`1,284` → `1284`, `3.50` → `3.5`).
fn first_number(sentence: &str) -> Option<String> {
    sentence
        .split(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | ';' | ':'))
        .map(|w| w.trim_matches(|c: char| !c.is_ascii_digit()))
        .find(|w| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_digit() || c == ',' || c == '.')
        })
        .map(|w| {
            let plain = w.replace(',', "");
            match plain.parse::<f64>() {
                Ok(v) if v.fract() == 0.0 => format!("{v:.0}"),
                Ok(v) => format!("{v}"),
                Err(_) => plain,
            }
        })
}

/// Sentences of a source's text read for values, past its key points.
const SENTENCES_READ: usize = 200;

/// The value a source gives for `point`: the first number of its first sentence (key points
/// first, then its text's) that names the point and holds one.
fn value_in(sentences: &[String], point: &[String]) -> Option<String> {
    sentences
        .iter()
        .filter(|s| coverage(point, s) == 1.0)
        .find_map(|s| first_number(s))
}

/// Data points whose relevant sources give different values.
pub fn detect(data_points: &[String], docs: &[AnalysedDoc]) -> Vec<Conflict> {
    let points: Vec<(&String, Vec<String>)> = (data_points.iter())
        .map(|p| (p, terms(p)))
        .filter(|(_, words)| !words.is_empty())
        .collect();
    if points.is_empty() {
        return Vec::new();
    }
    // Each source's sentences once, not once per data point.
    let read: Vec<(u32, Vec<String>)> = (docs.iter().filter(|d| d.is_relevant))
        .map(|d| {
            let mut all = d.key_points.clone();
            all.extend(sentences(&d.markdown).into_iter().take(SENTENCES_READ));
            (d.source.idx, all)
        })
        .collect();
    let mut out = Vec::new();
    for (point, words) in points {
        let mut by_value: BTreeMap<String, Vec<u32>> = BTreeMap::new();
        for (idx, sentences) in &read {
            if let Some(v) = value_in(sentences, &words) {
                by_value.entry(v).or_default().push(*idx);
            }
        }
        if by_value.len() > 1 {
            let mut values: Vec<(String, Vec<u32>)> = by_value.into_iter().collect();
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

    fn doc(idx: u32, text: &str) -> AnalysedDoc {
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
            relevance: 0.8,
            is_relevant: true,
            ..AnalysedDoc::new(source, text.into())
        }
    }

    #[test]
    fn finds_sources_that_disagree_on_a_number() {
        let docs = vec![
            doc(0, "Zorbium has a melting point of 1,284 degrees Celsius."),
            doc(1, "The melting point of zorbium is 1284 °C, found in 1931."),
            doc(2, "Its melting point was measured at 1,310 degrees."),
            doc(3, "Zorbium is grey and was found by Dr. Strand."),
        ];
        let c = detect(&["melting point".into(), "colour".into()], &docs);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].data_point, "melting point");
        assert_eq!(
            c[0].values,
            vec![("1284".into(), vec![0, 1]), ("1310".into(), vec![2])]
        );
    }

    #[test]
    fn agreeing_sources_are_no_conflict() {
        let docs = vec![
            doc(0, "The bridge is 1,156 metres long."),
            doc(1, "At 1156 metres long, it is the longest."),
        ];
        assert!(detect(&["long".into()], &docs).is_empty());
        assert_eq!(first_number("version 3.50 (beta)"), Some("3.5".into()));
    }
}
