//! A job's fields filled from what it read: each a typed value with the sentence that states it
//! and the sources that do, `not_found` where none does, `conflict` where they disagree.
//!
//! Two paths give candidates and one check decides what is kept:
//! - without an LLM, the values clean's data-point extractors found in each source (a field is
//!   a data point named by the field, [`Field::point`]);
//! - with one, a single structured call over the job's evidence ([`ask`]).
//!
//! Either way a value is kept only when a sentence of a source the report may cite states it
//! ([`Candidate::checked`]) and it is valid against the field: never a value no source states.

use std::collections::BTreeMap;

use serde_json::{json, Value};
use trawl_messages::fields::{Field, FieldAnswer, Stated, Type};
use trawl_messages::{AnalysedDoc, Answer, Citation, Fields};
use trawl_text::collapse_whitespace;

pub mod ask;
mod values;

use values::{contains_word, in_unit, newest_date, numbers_in, typed};

/// What a job's question is about: a value is taken only from a sentence that names it, or
/// from a source whose title does ("2,883 degrees" on a page about another metal that also
/// names this one is that metal's melting point).
pub struct About<'a> {
    pub entities: &'a [trawl_text::entities::Entity],
    pub lang: trawl_text::Lang,
    /// The question's terms: of two sentences stating a field, the one nearer the question is
    /// the one to believe.
    pub terms: Vec<String>,
    /// What the question asks for, when its form says: the field that asks the same is read
    /// from the sentences that state it, as the report's answer is.
    pub wanted: Option<trawl_text::wanted::Wanted>,
}

impl About<'_> {
    /// Of `candidates`, those whose sentence is at least `share` as near the question (and the
    /// field's words) as the nearest: a number in a sentence on something else the page also
    /// says is no rival to the answer.
    fn nearest(&self, field: &Field, candidates: Vec<Candidate>, share: f64) -> Vec<Candidate> {
        let mut terms = self.terms.clone();
        terms.extend(trawl_text::terms_in(&field.point(), self.lang));
        let near: Vec<f64> = (candidates.iter())
            .map(|c| trawl_text::coverage_in_lang(&terms, &[&c.quote], self.lang))
            .collect();
        let best = near.iter().copied().fold(0.0, f64::max);
        (candidates.into_iter().zip(near))
            .filter(|(_, n)| *n >= best * share)
            .map(|(c, _)| c)
            .collect()
    }

    fn holds(&self, quote: &str, doc: &AnalysedDoc) -> bool {
        self.entities.is_empty()
            || (trawl_text::entities::named_in(self.entities, &[quote, &doc.title], self.lang))
                .contains(&true)
    }
}

/// A value one source states for a field.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub value: Value,
    /// The source's index (search's order).
    pub idx: u32,
    /// The sentence of the source that states the value.
    pub quote: String,
}

/// What the job found for one field: candidates grouped by value, most sources first.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Finding {
    pub groups: Vec<Group>,
}

/// One value and every source that states it.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    pub value: Value,
    pub idxs: Vec<u32>,
    pub quote: String,
    /// The newest date the quote gives, for an `as_of` field.
    pub as_of: Option<String>,
}

/// Each field's finding in the schema's order, and how they were found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Findings {
    pub fields: Vec<(Field, Finding)>,
    pub by: &'static str,
    pub notes: Vec<String>,
}

impl Findings {
    /// The sources the report must list for these findings, in order of first use.
    pub fn sources(&self) -> Vec<u32> {
        let mut out: Vec<u32> = Vec::new();
        for (_, finding) in &self.fields {
            for idx in finding.groups.iter().flat_map(|g| &g.idxs) {
                if !out.contains(idx) {
                    out.push(*idx);
                }
            }
        }
        out
    }

    /// `answer.json`, the sources numbered as the report's `citations` number them.
    pub fn answer(&self, citations: &[Citation]) -> Answer {
        let number = |idxs: &[u32]| -> Vec<u32> {
            (idxs.iter())
                .filter_map(|i| citations.iter().find(|c| c.idx == *i).map(|c| c.n))
                .collect()
        };
        let url = |idxs: &[u32]| {
            (idxs.first())
                .and_then(|i| citations.iter().find(|c| c.idx == *i))
                .map_or_else(String::new, |c| c.url.clone())
        };
        let stated = |g: &Group| Stated {
            value: g.value.clone(),
            sources: number(&g.idxs),
            quote: g.quote.clone(),
            url: url(&g.idxs),
            as_of: g.as_of.clone(),
        };
        let fields = (self.fields.iter())
            .map(|(field, finding)| {
                let answer = match finding.decided(field) {
                    Decided::None => FieldAnswer::not_found(),
                    Decided::One(g) => FieldAnswer::found(stated(g)),
                    Decided::Conflict => {
                        FieldAnswer::conflict(finding.groups.iter().map(stated).collect())
                    }
                };
                (field.name.clone(), answer)
            })
            .collect();
        Answer {
            fields: trawl_messages::fields::Ordered(fields),
            by: self.by.to_owned(),
            notes: self.notes.clone(),
        }
    }

    /// The fields of `answer` (this finding's, numbered) as a markdown table: name, value and
    /// citations.
    pub fn table(&self, answer: &Answer) -> String {
        let mut md = String::from("| Field | Value | Sources |\n|---|---|---|\n");
        for (field, _) in &self.fields {
            let Some(a) = answer.fields.get(&field.name) else {
                continue;
            };
            let cite = |ns: &[u32]| ns.iter().map(|n| format!("[{n}]")).collect::<String>();
            let (value, sources) = match a.status {
                trawl_messages::FieldStatus::Found => (
                    shown(a.value.as_ref(), field, a.as_of.as_deref()),
                    cite(&a.sources),
                ),
                trawl_messages::FieldStatus::NotFound => ("not found".to_owned(), String::new()),
                trawl_messages::FieldStatus::Conflict => {
                    let each: Vec<String> = (a.values.iter())
                        .map(|s| {
                            format!(
                                "{} {}",
                                shown(Some(&s.value), field, None),
                                cite(&s.sources)
                            )
                        })
                        .collect();
                    (
                        format!("sources disagree: {}", each.join("; ")),
                        String::new(),
                    )
                }
            };
            md.push_str(&format!(
                "| {} | {} | {} |\n",
                cell(&field.name),
                cell(&value),
                sources
            ));
        }
        md
    }
}

/// A table cell's text: one line, pipes escaped.
fn cell(text: &str) -> String {
    collapse_whitespace(text).replace('|', "\\|")
}

/// A value as the report shows it, with the field's unit and the date it holds at.
fn shown(value: Option<&Value>, field: &Field, as_of: Option<&str>) -> String {
    let mut out = match value {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => (items.iter())
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
            .collect::<Vec<_>>()
            .join(", "),
        Some(v) => v.to_string(),
        None => String::new(),
    };
    if let Some(unit) = &field.unit {
        out = format!("{out} {unit}");
    }
    if let Some(date) = as_of {
        out = format!("{out} (as of {date})");
    }
    out
}

/// What a finding comes to.
enum Decided<'a> {
    None,
    One(&'a Group),
    Conflict,
}

impl Finding {
    /// This finding with `c` first: its value's group leads, with `c`'s source first in it.
    fn led_by(self, field: &Field, c: Candidate) -> Finding {
        let mut groups = self.groups;
        add(field, &mut groups, c, true);
        Finding { groups }
    }

    fn decided(&self, field: &Field) -> Decided<'_> {
        match &self.groups[..] {
            [] => Decided::None,
            [one] => Decided::One(one),
            // A value that changes over time: the newest dated statement is the value now.
            groups if field.as_of => {
                let newest = (groups.iter())
                    .filter(|g| g.as_of.is_some())
                    .max_by(|a, b| a.as_of.cmp(&b.as_of));
                newest.map_or(Decided::Conflict, Decided::One)
            }
            _ => Decided::Conflict,
        }
    }
}

/// Groups `candidates` (best source first) by value: a value stated by several sources is
/// one group, and sources that disagree are several.
pub fn gather(field: &Field, candidates: Vec<Candidate>) -> Finding {
    let mut groups: Vec<Group> = Vec::new();
    for c in candidates {
        add(field, &mut groups, c, false);
    }
    // Stable: of equal support, the best source's value first.
    groups.sort_by_key(|g| std::cmp::Reverse(g.idxs.len()));
    Finding { groups }
}

/// Adds `c` to the group of its value, joining every group that is the same value as `c` (a
/// name joins the sentences that say it); a new group where none is. `lead`: that group comes
/// first, with `c`'s value, quote and source first.
fn add(field: &Field, groups: &mut Vec<Group>, c: Candidate, lead: bool) {
    let at = groups.iter().position(|g| same(&g.value, &c.value));
    let (joined, rest): (Vec<Group>, Vec<Group>) = std::mem::take(groups)
        .into_iter()
        .partition(|g| same(&g.value, &c.value));
    *groups = rest;
    let new = Group {
        as_of: field.as_of.then(|| newest_date(&c.quote)).flatten(),
        value: c.value,
        idxs: vec![c.idx],
        quote: c.quote,
    };
    // The lead's value and source come first; otherwise the group that was there first.
    let mut parts = joined.into_iter();
    let (mut group, after) = match (lead, parts.next()) {
        (false, Some(first)) => (first, Some(new)),
        (true, first) => (new, first),
        (false, None) => (new, None),
    };
    for g in after.into_iter().chain(parts) {
        for idx in g.idxs {
            if !group.idxs.contains(&idx) {
                group.idxs.push(idx);
            }
        }
        // Of "Ada Quist" and the sentence naming her, the value is the name.
        if !lead && shorter(&g.value, &group.value) {
            (group.value, group.quote, group.as_of) = (g.value, g.quote, g.as_of);
        }
    }
    let at = if lead {
        0
    } else {
        at.unwrap_or(groups.len()).min(groups.len())
    };
    groups.insert(at, group);
}

/// Two values are the same when equal, numbers within a rounding's difference (0.5 %), and
/// strings without regard to case, or when one holds the other's words ("Ada Quist" and "Dr Ada
/// Quist, the chemist"): a value that says more does not disagree.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
            x == y || (x - y).abs() <= 0.005 * x.abs().max(y.abs())
        }
        (Value::String(x), Value::String(y)) => {
            let (x, y) = (x.to_lowercase(), y.to_lowercase());
            x == y || contains_word(&x, &y) || contains_word(&y, &x)
        }
        _ => a == b,
    }
}

/// Whether `a` is a string shorter than the string `b`.
fn shorter(a: &Value, b: &Value) -> bool {
    matches!((a, b), (Value::String(a), Value::String(b)) if a.len() < b.len())
}

/// The fields filled from the values clean's extractors found in `docs` (the sources the
/// report may cite, best first), each stated in a sentence `about` the question's subject.
pub fn extracted(fields: &Fields, docs: &[&AnalysedDoc], about: &About) -> Findings {
    let points: Vec<String> = fields.fields.iter().map(Field::point).collect();
    // Each source's sentences are read once, for all the fields it states a value of.
    let texts: Vec<Sentences> = (docs.iter())
        .filter(|d| {
            points
                .iter()
                .any(|p| matches!(d.extracted_data.get(p), Some(Some(_))))
        })
        .map(|d| Sentences::of(d))
        .collect();
    let asked = about.wanted.as_ref().and_then(|w| asked_field(fields, w));
    let found = (fields.fields.iter().zip(&points))
        .enumerate()
        .map(|(i, (field, point))| {
            if let Some(wanted) = asked.filter(|&a| a == i).and(about.wanted.as_ref()) {
                let stated = stating(field, wanted, docs, about);
                if !stated.is_empty() {
                    // Every such sentence states a value of the form asked, so only one
                    // nearly as near the question as the nearest is its rival.
                    return (
                        field.clone(),
                        gather(field, about.nearest(field, stated, 0.8)),
                    );
                }
            }
            let candidates = (texts.iter())
                .filter_map(|t| {
                    let raw = t.doc.extracted_data.get(point)?.as_deref()?;
                    Candidate::read(field, raw, t).filter(|c| about.holds(&c.quote, t.doc))
                })
                .collect();
            let candidates = about.nearest(field, candidates, 0.5);
            (field.clone(), gather(field, candidates))
        })
        .collect();
    Findings {
        fields: found,
        by: "extractive",
        notes: Vec::new(),
    }
}

/// The field that asks what the question asks: the schema's one number field, for a question
/// asking a number ("How much did … pay", "In what year …"). None when two could be it.
fn asked_field(fields: &Fields, wanted: &trawl_text::wanted::Wanted) -> Option<usize> {
    if !wanted.asks_a_number() {
        return None;
    }
    let numbers: Vec<usize> = (fields.fields.iter().enumerate())
        .filter(|(_, f)| {
            matches!(f.shape.ty, Type::Number | Type::Integer)
                && !f.array
                && f.shape.choices.is_empty()
        })
        .map(|(i, _)| i)
        .collect();
    match numbers[..] {
        [one] => Some(one),
        _ => None,
    }
}

/// `field`'s values as the sentences of `docs` (their key points, best first) that state what
/// the question asks give them ([`Wanted::stated_in`], not of someone else). The report's
/// answer is judged by the same test, on the same sources (those that name the question's
/// subject: "He was convicted … in 1998" on a page about him), so the field and the prose
/// agree; the extractors, which take a data point's first value, read "38" from "Braun, 38,
/// who …" where the page says he paid "$300M".
///
/// [`Wanted::stated_in`]: trawl_text::wanted::Wanted::stated_in
fn stating(
    field: &Field,
    wanted: &trawl_text::wanted::Wanted,
    docs: &[&AnalysedDoc],
    about: &About,
) -> Vec<Candidate> {
    let lang = about.lang;
    (docs.iter())
        .flat_map(|doc| {
            let site = crate::report::answerable::site_of(Some(doc));
            (doc.key_points.iter()).filter_map(move |s| {
                if !(wanted.stated_in(s, &site, lang) && wanted.about(s, &site, lang)) {
                    return None;
                }
                let value = typed(field, &wanted.number_in(s, lang)?)?;
                Some(Candidate {
                    value,
                    idx: doc.source.idx,
                    quote: s.clone(),
                })
            })
        })
        .collect()
}

impl Candidate {
    /// The value `raw` (as a page states it) gives `field` in `doc`, with the sentence stating
    /// it; none where it is not of the field's type and unit, or no sentence of `doc` holds it.
    pub fn read(field: &Field, raw: &str, text: &Sentences) -> Option<Candidate> {
        let quote = text.with(raw)?;
        // "another 30 people had been injured": the number the field's own words follow, if the
        // sentence has one, over the one the extractor took.
        let value = (named_number(field, &quote).and_then(|n| typed(field, &n)))
            .or_else(|| typed(field, raw))?;
        Some(Candidate {
            value,
            idx: text.doc.source.idx,
            quote,
        })
    }

    /// This candidate when `quote` is a sentence of its source (as the source writes it, or
    /// within it) and states `value`: an LLM's answer is taken only so.
    pub fn checked(
        field: &Field,
        value: Value,
        quote: &str,
        text: &Sentences,
    ) -> Option<Candidate> {
        let quote = text.with(quote)?;
        let value = whole(field, value);
        if field.refuses(&value).is_some() || !states(field, &value, &quote) {
            return None;
        }
        Some(Candidate {
            value,
            idx: text.doc.source.idx,
            quote,
        })
    }
}

/// The number of `quote` (with its scale and unit) that a word of `field`'s name follows within
/// three words ("13,000 US troops" for `troops`), for a number field.
fn named_number(field: &Field, quote: &str) -> Option<String> {
    if !matches!(field.shape.ty, Type::Number | Type::Integer) || field.array {
        return None;
    }
    let point = field.point();
    let names: Vec<&str> = point.split_whitespace().filter(|w| w.len() >= 3).collect();
    let words: Vec<&str> = quote.split_whitespace().collect();
    let stem = |w: &str| w.chars().take(5).collect::<String>();
    (0..words.len())
        .filter(|&i| words[i].chars().any(|c| c.is_ascii_digit()))
        .find(|&i| {
            (words[i + 1..].iter().take(3))
                .map(|w| {
                    w.trim_matches(|c: char| !c.is_alphanumeric())
                        .to_lowercase()
                })
                .any(|w| names.iter().any(|n| stem(&w) == stem(n) && w.len() >= 3))
        })
        .map(|i| words[i..(i + 3).min(words.len())].join(" "))
}

/// `value` with its whole numbers written as such (`1934`, not `1934.0`, as a model or a
/// conversion may give them): a table shows what a page wrote.
fn whole(field: &Field, value: Value) -> Value {
    let numeric = matches!(field.shape.ty, Type::Integer | Type::Number);
    let whole = |v: Value| match v.as_f64() {
        Some(n) if numeric && v.is_f64() && n.fract() == 0.0 && n.abs() < 9e15 => json!(n as i64),
        _ => v,
    };
    match value {
        Value::Array(items) => Value::Array(items.into_iter().map(whole).collect()),
        v => whole(v),
    }
}

/// Whether `quote` states `value`: a number it gives (converted to the field's unit) is the
/// value; a date's year, a name's or a choice's words are in it.
fn states(field: &Field, value: &Value, quote: &str) -> bool {
    let values: Vec<&Value> = match value {
        Value::Array(items) => items.iter().collect(),
        v => vec![v],
    };
    let lower = quote.to_lowercase();
    values.iter().all(|v| match v {
        Value::Number(n) => {
            let n = n.as_f64().unwrap_or(f64::NAN);
            numbers_in(quote)
                .into_iter()
                .filter_map(|q| in_unit(&q, field.unit.as_deref()))
                .any(|q| same(&json!(q), &json!(n)))
        }
        Value::String(s) if field.shape.date => lower.contains(&s[..4.min(s.len())]),
        Value::String(s) => lower.contains(&s.to_lowercase()),
        Value::Bool(_) => true,
        _ => false,
    })
}

/// A source's sentences as a quote is looked for among them: its key points, then every
/// sentence of its text (short ones too: "Acme is a retail chain."), each also as compared,
/// without regard to case and spacing. The text is cut into sentences only when a key point
/// does not hold the quote, and then once for all of a job's fields.
pub struct Sentences<'a> {
    pub doc: &'a AnalysedDoc,
    key_points: Vec<(&'a str, String)>,
    text: std::cell::OnceCell<Vec<(&'a str, String)>>,
}

impl<'a> Sentences<'a> {
    pub fn of(doc: &'a AnalysedDoc) -> Sentences<'a> {
        Sentences {
            doc,
            key_points: compared(doc.key_points.iter().map(String::as_str)),
            text: std::cell::OnceCell::new(),
        }
    }

    /// The sentence that holds `text`, or that `text` is a sentence of, as the source writes
    /// it (links as their text).
    fn with(&self, text: &str) -> Option<String> {
        let wanted = collapse_whitespace(text).to_lowercase();
        if wanted.is_empty() {
            return None;
        }
        let holding = |all: &'_ [(&'a str, String)]| {
            all.iter()
                .find(|(_, lower)| lower.contains(&wanted))
                .map(|(s, _)| *s)
        };
        let within = |all: &'_ [(&'a str, String)]| {
            (all.iter())
                .find(|(_, lower)| lower.len() > 20 && wanted.contains(lower.as_str()))
                .map(|(s, _)| *s)
        };
        let sentences = || {
            let markdown = &self.doc.markdown;
            let spans = trawl_text::sentence_spans(markdown);
            compared(spans.into_iter().map(|(a, b)| &markdown[a..b]))
        };
        let found = holding(&self.key_points).or_else(|| {
            let text = self.text.get_or_init(sentences);
            holding(text)
                .or_else(|| within(&self.key_points))
                .or_else(|| within(text))
        });
        found.map(|s| collapse_whitespace(&trawl_text::unlink(s)))
    }
}

/// Sentences each with its form as compared: spacing collapsed, lower case.
fn compared<'a>(sentences: impl Iterator<Item = &'a str>) -> Vec<(&'a str, String)> {
    sentences
        .map(|s| (s, collapse_whitespace(s).to_lowercase()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use trawl_messages::{FieldStatus, Source, SourceKind};

    fn doc(idx: u32, text: &str, data: &[(&str, &str)]) -> AnalysedDoc {
        AnalysedDoc {
            source: Source {
                idx,
                url: format!("https://s{idx}.example/page"),
                title: format!("Source {idx}"),
                snippet: String::new(),
                provider: "test".into(),
                position: idx + 1,
                score: 0.5,
                kind: SourceKind::Page,
                file_type: None,
            },
            final_url: format!("https://s{idx}.example/page"),
            title: format!("Source {idx}"),
            markdown: text.into(),
            summary: String::new(),
            key_points: vec![],
            key_point_pages: vec![],
            relevance: 0.8,
            is_relevant: true,
            level: 0,
            bytes: text.len() as u64,
            extracted_data: (data.iter())
                .map(|(k, v)| (k.to_string(), Some(v.to_string())))
                .collect(),
            tables: vec![],
            lookup: None,
            cleanliness: None,
            cleaning: None,
            analysed_by: "extractive".into(),
            language: "en".into(),
            notes: vec![],
            cached_at: None,
        }
    }

    /// A question that names nothing: every sentence may answer it.
    const ANY: About = About {
        entities: &[],
        lang: trawl_text::Lang::UND,
        terms: Vec::new(),
        wanted: None,
    };

    fn fields(schema: Value) -> Fields {
        Fields::parse(schema).unwrap()
    }

    fn citations(docs: &[&AnalysedDoc]) -> Vec<Citation> {
        (docs.iter().enumerate())
            .map(|(i, d)| crate::report::citation(d, i as u32 + 1))
            .collect()
    }

    #[test]
    fn values_are_typed_converted_and_quoted() {
        let f = fields(json!({"type": "object", "properties": {
            "length": {"type": "number", "unit": "km"},
            "opened": {"type": "integer"},
            "designer": {"type": "string"},
            "opening date": {"type": "string", "format": "date"},
        }}));
        let a = doc(0, "The Velmora Bridge spans 1,156 metres across the Drell River. It opened on 12 March 1931. The bridge was designed by engineer Ilse Strand.", &[
            ("length", "1,156 metres"),
            ("opened", "12 March 1931"),
            ("designer", "Ilse Strand"),
            ("opening date", "12 March 1931"),
        ]);
        let found = extracted(&f, &[&a], &ANY);
        let answer = found.answer(&citations(&[&a]));
        let length = &answer.fields["length"];
        assert_eq!(length.status, FieldStatus::Found);
        assert_eq!(length.value, Some(json!(1.156)));
        assert_eq!(length.sources, vec![1]);
        assert_eq!(
            length.quote.as_deref(),
            Some("The Velmora Bridge spans 1,156 metres across the Drell River.")
        );
        assert_eq!(answer.fields["opened"].value, Some(json!(1931)));
        assert_eq!(answer.fields["designer"].value, Some(json!("Ilse Strand")));
        assert_eq!(
            answer.fields["opening date"].value,
            Some(json!("1931-03-12"))
        );
        assert_eq!(length.url.as_deref(), Some("https://s0.example/page"));
    }

    #[test]
    fn a_value_no_sentence_states_or_of_another_quantity_is_not_found() {
        let f = fields(json!({"type": "object", "properties": {
            "length": {"type": "number", "unit": "km"},
            "weight": {"type": "number", "unit": "kg"},
        }}));
        let a = doc(
            0,
            "The span is 300 metres.",
            &[("length", "1,156 metres"), ("weight", "300 metres")],
        );
        let answer = extracted(&f, &[&a], &ANY).answer(&citations(&[&a]));
        assert_eq!(answer.fields["length"].status, FieldStatus::NotFound);
        assert_eq!(answer.fields["weight"].status, FieldStatus::NotFound);
    }

    #[test]
    fn sources_that_agree_are_one_value_and_those_that_differ_a_conflict() {
        let f = fields(json!({"type": "object", "properties": {
            "melting point": {"type": "number", "unit": "°C"},
            "ceo": {"type": "string", "as_of": true},
        }}));
        let a = doc(
            0,
            "Zorbium melts at 1,284 degrees Celsius. In 2019 Ada Quist became chief executive.",
            &[
                ("melting point", "1,284 degrees Celsius"),
                ("ceo", "Ada Quist"),
            ],
        );
        let b = doc(1, "Its melting point is 2343 degrees Fahrenheit. Since March 2023 the chief executive is Bo Lind.", &[("melting point", "2343 degrees Fahrenheit"), ("ceo", "Bo Lind")]);
        let c = doc(
            2,
            "It melts at 1,297 degrees Celsius.",
            &[("melting point", "1,297 degrees Celsius")],
        );
        let two = extracted(&f, &[&a, &b], &ANY).answer(&citations(&[&a, &b]));
        let mp = &two.fields["melting point"];
        assert_eq!(
            (mp.status, mp.sources.clone()),
            (FieldStatus::Found, vec![1, 2])
        );
        // The newest dated statement is the value of an `as_of` field.
        let ceo = &two.fields["ceo"];
        assert_eq!(ceo.value, Some(json!("Bo Lind")));
        assert_eq!(ceo.as_of.as_deref(), Some("2023-03"));
        let three = extracted(&f, &[&a, &b, &c], &ANY).answer(&citations(&[&a, &b, &c]));
        let mp = &three.fields["melting point"];
        assert_eq!(mp.status, FieldStatus::Conflict);
        assert_eq!(mp.value, None);
        assert_eq!(mp.values.len(), 2);
        assert_eq!(mp.values[1].sources, vec![3]);
    }

    #[test]
    fn a_value_stated_of_something_else_is_not_the_subjects() {
        let f = fields(json!({"type": "object", "properties": {
            "melting point": {"type": "number"},
            "isolator": {"type": "string"},
        }}));
        let entities = trawl_text::entities::entities_in(
            "What is the melting point of Zorbium?",
            trawl_text::Lang::EN,
        );
        let about = About {
            entities: &entities,
            lang: trawl_text::Lang::EN,
            terms: Vec::new(),
            wanted: None,
        };
        let mut other = doc(0, "Velmium melts at 3,332 degrees. It was isolated by Dr. Ada Quist. Zorbium is its neighbour.", &[
            ("melting point", "3,332 degrees"),
            ("isolator", "Dr. Ada Quist"),
        ]);
        other.title = "Velmium: the essential facts".into();
        let mut own = doc(
            1,
            "Zorbium melts at 1,284 degrees. It was first isolated by Dr. Ilse Strand.",
            &[
                ("melting point", "1,284 degrees"),
                ("isolator", "Dr. Ilse Strand"),
            ],
        );
        own.title = "Zorbium: the essential facts".into();
        let answer = extracted(&f, &[&other, &own], &about).answer(&citations(&[&other, &own]));
        assert_eq!(answer.fields["melting point"].value, Some(json!(1284)));
        assert_eq!(answer.fields["melting point"].sources, vec![2]);
        // The title names the subject: its sentences are about it. A name loses its title.
        assert_eq!(answer.fields["isolator"].value, Some(json!("Ilse Strand")));
    }

    #[test]
    fn a_sentence_naming_the_value_agrees_with_it() {
        let f = fields(json!({"type": "object", "properties": {"captain": {"type": "string"}}}));
        let long = doc(
            0,
            "The vessel was captained by Emeka Ulquilpav on its first expedition.",
            &[(
                "captain",
                "The vessel was captained by Emeka Ulquilpav on its first expedition",
            )],
        );
        let short = doc(
            1,
            "Emeka Ulquilpav captained it.",
            &[("captain", "Emeka Ulquilpav")],
        );
        let answer = extracted(&f, &[&long, &short], &ANY).answer(&citations(&[&long, &short]));
        let captain = &answer.fields["captain"];
        assert_eq!(
            (captain.status, captain.value.clone()),
            (FieldStatus::Found, Some(json!("Emeka Ulquilpav")))
        );
        assert_eq!(captain.sources, vec![1, 2]);
        assert_eq!(
            captain.quote.as_deref(),
            Some("Emeka Ulquilpav captained it.")
        );
    }

    #[test]
    fn a_number_is_the_one_the_fields_words_follow() {
        let f = fields(json!({"type": "object", "properties": {"people": {"type": "integer"}}}));
        let a = doc(
            0,
            "Besides the three deaths, another 30 people had been injured in the clashes.",
            &[("people", "3")],
        );
        let answer = extracted(&f, &[&a], &ANY).answer(&citations(&[&a]));
        assert_eq!(answer.fields["people"].value, Some(json!(30)));
    }

    #[test]
    fn the_field_the_question_asks_is_read_from_the_sentence_stating_it() {
        // A real page: the amount extractor takes Braun's age; the question asks what was paid.
        let q = "How much did Scooter Braun's company pay for Big Machine?";
        let f = fields(json!({"type": "object", "properties": {"amount": {"type": "number"}}}));
        let age = "In the midst of a public fissure with Big Machine Records, Braun, 38 – who \
                   reps Justin Bieber – took over the label.";
        let paid = "The drama began when Braun's Ithaca Holdings purchased Big Machine for $300M \
                    in a deal backed by The Carlyle Group.";
        let mut a = doc(0, &format!("{age} {paid}"), &[("amount", "38")]);
        a.key_points = vec![age.into(), paid.into()];
        let mut about = About {
            entities: &[],
            lang: trawl_text::Lang::EN,
            terms: trawl_text::terms_in(q, trawl_text::Lang::EN),
            wanted: trawl_text::wanted::Wanted::of(q, trawl_text::Lang::EN),
        };
        let answer = extracted(&f, &[&a], &about).answer(&citations(&[&a]));
        let amount = answer.fields.get("amount").unwrap();
        assert_eq!(amount.value, Some(json!(300_000_000)), "{amount:?}");
        assert_eq!(amount.quote.as_deref(), Some(paid));
        // Without what the question asks, the extractor's value stands.
        about.wanted = None;
        let answer = extracted(&f, &[&a], &about).answer(&citations(&[&a]));
        assert_eq!(answer.fields.get("amount").unwrap().value, Some(json!(38)));
        // Two number fields: which one the question asks is not guessed.
        let two = fields(json!({"type": "object", "properties": {
            "amount": {"type": "number"}, "age": {"type": "integer"}}}));
        about.wanted = trawl_text::wanted::Wanted::of(q, trawl_text::Lang::EN);
        let answer = extracted(&two, &[&a], &about).answer(&citations(&[&a]));
        assert_eq!(answer.fields.get("amount").unwrap().value, Some(json!(38)));
    }

    #[test]
    fn of_two_sentences_the_one_on_the_question_is_believed() {
        let f = fields(json!({"type": "object", "properties": {"employees": {"type": "integer"}}}));
        let about = About {
            entities: &[],
            lang: trawl_text::Lang::EN,
            terms: trawl_text::terms_in(
                "How many employees did WeWork have before the layoffs?",
                trawl_text::Lang::EN,
            ),
            wanted: None,
        };
        let near = doc(
            0,
            "Before the layoffs WeWork had 12,000 employees.",
            &[("employees", "12,000")],
        );
        let far = doc(
            1,
            "The weather cost 4,000 fans a day out.",
            &[("employees", "4,000")],
        );
        let answer = extracted(&f, &[&near, &far], &about).answer(&citations(&[&near, &far]));
        assert_eq!(answer.fields["employees"].status, FieldStatus::Found);
        assert_eq!(answer.fields["employees"].value, Some(json!(12000)));
    }

    #[test]
    fn money_enums_and_lists() {
        let f = fields(json!({"type": "object", "properties": {
            "revenue": {"type": "number", "unit": "USD"},
            "sector": {"type": "string", "enum": ["energy", "retail"]},
            "products": {"type": "array", "items": {"type": "string"}},
        }}));
        let a = doc(0, "Revenue was $4.2 billion in 2023. Acme is a retail chain. It sells tea, coffee and cocoa.", &[
            ("revenue", "$4.2 billion"),
            ("sector", "a retail chain"),
            ("products", "tea, coffee and cocoa"),
        ]);
        let answer = extracted(&f, &[&a], &ANY).answer(&citations(&[&a]));
        assert_eq!(
            answer.fields["revenue"].value,
            Some(json!(4_200_000_000i64))
        );
        assert_eq!(answer.fields["sector"].value, Some(json!("retail")));
        assert_eq!(
            answer.fields["products"].value,
            Some(json!(["tea", "coffee", "cocoa"]))
        );
        let euros = doc(
            1,
            "Revenue was €4.2 billion.",
            &[("revenue", "€4.2 billion")],
        );
        let answer = extracted(&f, &[&euros], &ANY).answer(&citations(&[&euros]));
        assert_eq!(answer.fields["revenue"].status, FieldStatus::NotFound);
    }

    #[test]
    fn a_models_value_is_kept_only_where_its_source_states_it() {
        let f = fields(json!({"type": "object", "properties": {
            "length": {"type": "integer", "unit": "m"},
            "designer": {"type": "string"},
        }}));
        let a = doc(
            3,
            "The Velmora Bridge spans 1,156 metres across the river. Ilse Strand designed it.",
            &[],
        );
        let model = json!({
            "length": {"value": 1156.0, "source": 4, "quote": "The Velmora Bridge spans 1,156 metres across the river."},
            "designer": {"value": "Ada Quist", "source": 4, "quote": "Ilse Strand designed it."},
        });
        let read = ask::read(
            &f,
            &model,
            &[&a],
            |n| n.checked_sub(1),
            extracted(&f, &[&a], &ANY),
        );
        let answer = read.answer(&citations(&[&a]));
        assert_eq!(answer.fields["length"].value, Some(json!(1156)));
        assert_eq!(answer.fields["designer"].status, FieldStatus::NotFound);
        assert_eq!(read.notes.len(), 1, "{:?}", read.notes);
        let schema = ask::schema(&f);
        assert_eq!(
            schema["properties"]["length"]["properties"]["value"]["type"],
            json!(["integer", "null"])
        );
    }
}
