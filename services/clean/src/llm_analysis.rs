//! Per-source analysis by the LLM: one request (`analysis`, or `analysis_news` for news
//! questions, whose prompt asks for dates and the newest information) returning
//!
//! ```json
//! {"is_relevant": true, "summary": "…", "extracted_data": {"melting point": "1,284 °C", "isolator": null},
//!  "key_points": ["…"]}
//! ```
//!
//! The answer is validated — types, `extracted_data` keys among the requested data points,
//! values plain (string, number, boolean or null), summary and key points bounded — and
//! repaired once through [`Llm::json`]; if it still fails the caller falls back to the
//! extractive analysis.
//!
//! Input is bounded by `clean.llm_analysis_max_chars`: a longer page is cut to its passages
//! that rank best against the question ([`crate::passages`]), in page order with their page
//! markers, and a note says so.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;
use trawl_llm::{ChatRequest, Llm, LlmError};

use crate::analysis::Context;
use crate::passages;

/// Longest summary accepted, in characters.
pub(crate) const MAX_SUMMARY: usize = 1_500;
const MAX_KEY_POINTS: usize = 12;
const MAX_KEY_POINT: usize = 600;

const SYSTEM: &str = "You analyse one web source for a research question, using only what the \
source says. Reply with one JSON object: {\"is_relevant\": true if the source helps answer the \
question, \"summary\": at most three sentences on what the source says about the question, \
\"extracted_data\": {each data point listed in the prompt: its value as the source states it, \
or null if the source does not state it}, \"key_points\": [up to 8 sentences copied exactly \
from the source that support the answer]}.";

const NEWS: &str = " The question is about recent events: say in the summary when things \
happened (dates as the source gives them), prefer the newest information the source has, and \
say so if the source looks out of date.";

/// The LLM's analysis after validation.
#[derive(Clone, Debug, PartialEq)]
pub struct LlmAnalysis {
    pub is_relevant: bool,
    pub summary: String,
    /// One entry per requested data point.
    pub extracted_data: BTreeMap<String, Option<String>>,
    pub key_points: Vec<String>,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Answer {
    is_relevant: bool,
    summary: String,
    #[serde(default)]
    extracted_data: BTreeMap<String, Value>,
    #[serde(default)]
    key_points: Vec<String>,
}

/// The requested data point `key` names (exact, else ignoring case and outer spaces).
fn requested<'a>(points: &'a [String], key: &str) -> Option<&'a String> {
    points.iter().find(|p| *p == key).or_else(|| {
        points
            .iter()
            .find(|p| p.trim().eq_ignore_ascii_case(key.trim()))
    })
}

/// What is wrong with the LLM's answer; the text goes back to it in the repair turn.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
enum BadAnswer {
    #[error("extracted_data values must be a string, a number or null")]
    NotPlain,
    #[error("summary must not be empty")]
    EmptySummary,
    #[error("summary must be at most {MAX_SUMMARY} characters")]
    LongSummary,
    /// Keys of `extracted_data` that are none of the data points asked for.
    #[error(
        "extracted_data keys must be among the data points asked for ({}); not asked for: {}",
        .asked.join(", "),
        .unknown.join(", ")
    )]
    NotAskedFor {
        asked: Vec<String>,
        unknown: Vec<String>,
    },
    #[error("key_points must be at most {MAX_KEY_POINTS} sentences of at most {MAX_KEY_POINT} characters")]
    KeyPoints,
}

fn plain(value: &Value) -> Result<Option<String>, BadAnswer> {
    match value {
        Value::Null => Ok(None),
        Value::String(s) if s.trim().is_empty() => Ok(None),
        Value::String(s) => Ok(Some(s.trim().to_owned())),
        Value::Number(n) => Ok(Some(n.to_string())),
        Value::Bool(b) => Ok(Some(b.to_string())),
        _ => Err(BadAnswer::NotPlain),
    }
}

fn validate(points: &[String], a: &Answer) -> Result<(), BadAnswer> {
    if a.summary.trim().is_empty() {
        return Err(BadAnswer::EmptySummary);
    }
    if a.summary.chars().count() > MAX_SUMMARY {
        return Err(BadAnswer::LongSummary);
    }
    let unknown: Vec<String> = (a.extracted_data.keys())
        .filter(|k| requested(points, k).is_none())
        .cloned()
        .collect();
    if !unknown.is_empty() {
        return Err(BadAnswer::NotAskedFor {
            asked: points.to_vec(),
            unknown,
        });
    }
    for v in a.extracted_data.values() {
        plain(v)?;
    }
    if a.key_points.len() > MAX_KEY_POINTS
        || a.key_points
            .iter()
            .any(|k| k.chars().count() > MAX_KEY_POINT)
    {
        return Err(BadAnswer::KeyPoints);
    }
    Ok(())
}

/// At most `max` characters of `markdown` for the prompt, and a note when it was cut: its
/// passages that rank best against the question, in page order ([`passages::fit`]).
pub fn bounded(ctx: &Context, markdown: &str, max: usize) -> (String, Option<String>) {
    let fitted = passages::fit(&ctx.query(ctx.lang()), markdown, max);
    let note = fitted.note("the LLM analysed", markdown.len());
    (fitted.text, note)
}

/// The LLM's analysis of one source, validated; `Err` when it cannot give a valid one.
pub async fn analyse(
    llm: &Llm,
    ctx: &Context,
    title: &str,
    text: &str,
) -> Result<LlmAnalysis, LlmError> {
    let (task, system) = if ctx.is_news {
        ("analysis_news", format!("{SYSTEM}{NEWS}"))
    } else {
        ("analysis", SYSTEM.to_owned())
    };
    let prompt = format!(
        "Question: {}\nSub-queries: {}\nData points: {}\nTitle: {title}\nSource:\n{text}",
        ctx.question,
        ctx.sub_queries.join(" | "),
        serde_json::to_string(&ctx.data_points).unwrap_or_else(|_| "[]".into()),
    );
    let mut request = ChatRequest::new(task, &system, prompt);
    request.max_tokens = 1_500;
    let points = &ctx.data_points;
    let (answer, _) = llm
        .json::<Answer, _>(&request, |a| validate(points, a))
        .await?;
    let mut extracted_data: BTreeMap<String, Option<String>> =
        points.iter().map(|p| (p.clone(), None)).collect();
    for (key, value) in &answer.extracted_data {
        if let (Some(point), Ok(value)) = (requested(points, key), plain(value)) {
            extracted_data.insert(point.clone(), value);
        }
    }
    Ok(LlmAnalysis {
        is_relevant: answer.is_relevant,
        summary: answer.summary.trim().to_owned(),
        extracted_data,
        key_points: answer.key_points,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(json: &str) -> Answer {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn validation_checks_keys_types_and_sizes() {
        let points = vec!["melting point".to_string(), "isolator".to_string()];
        let ok = answer(
            r#"{"is_relevant": true, "summary": "It melts at 1,284 °C.", "extracted_data": {"Melting Point": 1284, "isolator": null}, "key_points": ["It melts at 1,284 °C."]}"#,
        );
        assert_eq!(validate(&points, &ok), Ok(()));
        let extra = answer(
            r#"{"is_relevant": true, "summary": "s", "extracted_data": {"colour": "grey"}}"#,
        );
        assert!(validate(&points, &extra)
            .unwrap_err()
            .to_string()
            .contains("not asked for: colour"));
        let nested = answer(
            r#"{"is_relevant": true, "summary": "s", "extracted_data": {"isolator": ["a", "b"]}}"#,
        );
        assert!(validate(&points, &nested).is_err());
        let empty = answer(r#"{"is_relevant": false, "summary": " "}"#);
        assert!(validate(&points, &empty).is_err());
        let long = answer(&format!(
            r#"{{"is_relevant": true, "summary": "{}"}}"#,
            "x".repeat(MAX_SUMMARY + 1)
        ));
        assert!(validate(&points, &long).is_err());
    }

    #[test]
    fn long_pages_are_cut_to_their_best_passages_in_order() {
        let ctx = Context::question("What is the melting point of zorbium?");
        let filler = "People enjoy walking in the hills on sunny afternoons.\n\n".repeat(40);
        let md = format!(
            "Zorbium is a grey metal.\n\n{filler}Zorbium melts at 1,284 degrees Celsius.\n\n{filler}"
        );
        let (text, note) = bounded(&ctx, &md, 300);
        assert!(text.len() <= 300);
        assert!(text.starts_with("Zorbium is a grey metal."), "{text}");
        assert!(text.contains("1,284"), "{text}");
        assert!(note.unwrap().contains("passages most relevant"));
        assert_eq!(bounded(&ctx, "short", 300), ("short".to_owned(), None));
    }
}
