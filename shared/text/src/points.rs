//! What a data point's name asks for: the kind of value ("opened" wants a date, "long" a
//! length) and the words that mark a sentence as stating it. Clean reads values by it and
//! synthesize compares them, so both agree on what a sentence about a data point is.

use crate::terms;

/// Words that mark a sentence as stating a data point of a kind the page may never name.
const SYNONYMS: &[(&[&str], &[&str])] = &[
    (
        &["long", "length"],
        // "grows to", "reaches", "measures": with a length unit after them, as clean and the
        // conflict check require, they state a length.
        &[
            "long", "length", "longest", "spans", "span", "grows", "reaches", "measures",
        ],
    ),
    (
        &["tall", "height", "high"],
        &[
            "tall",
            "height",
            "high",
            "rises",
            "elevation",
            "tallest",
            "highest",
            "stands",
            "summit",
            "altitude",
            "above",
        ],
    ),
    (
        &["location", "where", "place"],
        &["located", "found", "lies", "held", "based", "situated"],
    ),
    (&["number", "count"], &["about", "around", "some", "nearly"]),
];

/// People named by a noun that is not an agent noun in -er/-or/-ist.
const PERSON_NOUNS: &[&str] = &[
    "captain",
    "author",
    "architect",
    "chef",
    "pilot",
    "king",
    "queen",
    "president",
    "leader",
    "head",
    "coach",
];

/// The kind of value a data point asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Date,
    Percent,
    Money,
    Measure,
    Person,
    Place,
    Count,
    Quantity,
    Generic,
}

/// The kind of value `point` asks for, by its words (a table of examples is in clean's
/// `datapoints`).
pub fn kind(point: &str) -> Kind {
    let p = point.to_lowercase();
    let last = p.split_whitespace().last().unwrap_or("");
    let has = |words: &[&str]| words.iter().any(|w| p.split_whitespace().any(|x| x == *w));
    if has(&[
        "date",
        "year",
        "when",
        "founded",
        "opened",
        "established",
        "born",
        "released",
        "published",
        "day",
    ]) {
        Kind::Date
    } else if has(&["percent", "percentage", "rate", "share", "proportion"]) {
        Kind::Percent
    } else if has(&[
        "price", "cost", "revenue", "salary", "budget", "worth", "fee", "income", "profit",
    ]) {
        Kind::Money
    } else if has(&[
        "long",
        "length",
        "tall",
        "height",
        "high",
        "far",
        "distance",
        "deep",
        "depth",
        "wide",
        "width",
        "big",
        "large",
        "size",
        "weight",
        "heavy",
        "old",
        "age",
        "point",
        "temperature",
        "speed",
        "capacity",
        "area",
        "duration",
    ]) {
        Kind::Measure
    } else if has(&["location", "place", "where", "city", "country", "region"]) {
        Kind::Place
    } else if has(&[
        "number",
        "count",
        "amount",
        "total",
        "population",
        "quantity",
    ]) {
        Kind::Quantity
    } else if p.split_whitespace().count() == 1
        && (PERSON_NOUNS.contains(&last)
            || ["er", "or", "ist"].iter().any(|s| last.ends_with(s))
                && !["other", "order", "color", "colour", "floor"].contains(&last))
    {
        Kind::Person
    } else if p.split_whitespace().count() == 1 && last.len() > 3 && last.ends_with('s') {
        Kind::Count
    } else {
        Kind::Generic
    }
}

/// The words whose presence marks a sentence as talking about `point`: its own terms, words
/// that state such a value ("spans" for a length), and the verb of a person noun ("designer"
/// → "designed", "captain" → "captained").
pub fn markers(point: &str) -> Vec<String> {
    let mut out = terms(point);
    let lower = point.to_lowercase();
    for (names, words) in SYNONYMS {
        if lower.split_whitespace().any(|w| names.contains(&w)) {
            out.extend(words.iter().map(|w| w.to_string()));
        }
    }
    if kind(point) == Kind::Person {
        if PERSON_NOUNS.contains(&lower.as_str()) {
            out.push(format!("{lower}ed"));
        }
        for suffix in ["er", "or", "ist"] {
            if let Some(stem) = lower.strip_suffix(suffix) {
                if stem.len() >= 4 {
                    out.push(format!("{stem}ed"));
                }
            }
        }
    }
    out
}
