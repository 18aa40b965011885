//! Query analysis: what the question asks, and which searches answer it.
//!
//! With an LLM: one call returning validated JSON (`intent`, 1–5 `sub_queries`, `info_type`,
//! `target_data_points`, `search_strategy`), one repair turn if the JSON is invalid, and the
//! heuristic path if that fails too. Without an LLM, or after such a failure: the heuristic
//! (content words without stop words, quoted phrases kept, news detection, the question itself
//! as the one sub-query). The work product records which path ran and why.

use serde::Deserialize;
use trawl_llm::{ChatRequest, Llm};
use trawl_messages::SearchTask;
use trawl_text::{collapse_whitespace, terms_in, Locale};

/// Providers reject very long queries; a question is cut to this many characters for them.
pub const MAX_QUERY_CHARS: usize = 400;

use trawl_messages::record::QueryAnalysis;

const NEWS_WORDS: &[&str] = &[
    "news",
    "latest",
    "today",
    "yesterday",
    "breaking",
    "recent",
    "recently",
    "this week",
    "this month",
    "current events",
    "announced",
    "headlines",
];
const NEWS_TYPES: &[&str] = &[
    "news",
    "latest",
    "current events",
    "breaking news",
    "recent events",
];

fn time_words(question: &str) -> bool {
    let lower = question.to_lowercase();
    NEWS_WORDS.iter().any(|w| lower.contains(w))
}

/// Cuts at a word boundary so providers get a query they accept.
fn provider_query(question: &str) -> String {
    let q = collapse_whitespace(question);
    if q.chars().count() <= MAX_QUERY_CHARS {
        return q;
    }
    let cut: String = q.chars().take(MAX_QUERY_CHARS).collect();
    match cut.rfind(' ') {
        Some(at) => cut[..at].to_owned(),
        None => cut,
    }
}

/// Data points an English question names outright: "the melting point of …" → `melting
/// point`, "how long …" → `long`, "how many bridges" → `bridges`. Other languages' questions
/// name theirs by [`trawl_text::points::asked_in`].
pub fn data_points(question: &str) -> Vec<String> {
    let words: Vec<String> = question
        .split(|c: char| !c.is_alphanumeric() && c != '-')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let mut out: Vec<String> = Vec::new();
    for (i, w) in words.iter().enumerate() {
        if w == "the" {
            if let Some(of) = words[i + 1..].iter().take(4).position(|x| x == "of") {
                if of > 0 {
                    out.push(words[i + 1..i + 1 + of].join(" "));
                }
            }
        }
        if w == "how" {
            match words.get(i + 1).map(String::as_str) {
                Some("many" | "much") => {
                    if let Some(n) = words.get(i + 2) {
                        out.push(n.clone());
                    }
                }
                Some(
                    adj @ ("long" | "tall" | "high" | "old" | "big" | "large" | "far" | "deep"
                    | "wide"),
                ) => out.push(adj.to_owned()),
                _ => {}
            }
        }
    }
    out.dedup();
    out
}

/// The language (and region) a job searches in: its `language` option, else the question's,
/// detected.
pub fn locale_of(task: &SearchTask) -> Locale {
    (task.options.language.as_deref())
        .and_then(Locale::from_option)
        .unwrap_or_else(|| Locale::detect(&task.query))
}

/// The heuristic analysis of a question in `locale`'s language, always available.
pub fn analyse(question: &str, locale: &Locale) -> QueryAnalysis {
    let phrases: Vec<String> = question
        .split('"')
        .enumerate()
        .filter(|(i, p)| i % 2 == 1 && !p.trim().is_empty())
        .map(|(_, p)| p.trim().to_owned())
        .collect();
    let is_news = time_words(question);
    let query = provider_query(question);
    QueryAnalysis {
        path: "heuristic".into(),
        llm_error: None,
        intent: String::new(),
        sub_queries: if query.is_empty() {
            Vec::new()
        } else {
            vec![query]
        },
        info_type: if is_news {
            "news".into()
        } else {
            "facts".into()
        },
        target_data_points: if locale.lang.is_english_or_und() {
            data_points(question)
        } else {
            (trawl_text::points::asked_in(question, locale.lang).into_iter())
                .map(str::to_owned)
                .collect()
        },
        search_strategy: String::new(),
        language: locale.lang.code().into(),
        terms: terms_in(question, locale.lang),
        phrases,
        is_news,
    }
}

/// The model's plan for a question; its JSON Schema goes with the request.
#[derive(Deserialize, schemars::JsonSchema)]
struct LlmAnalysis {
    /// What the asker wants, one sentence.
    intent: String,
    /// 1 to 5 web search queries that together answer the question, the most direct first.
    sub_queries: Vec<String>,
    /// facts, definition, how-to, comparison, opinion, statistics, news, latest or current events.
    info_type: String,
    /// The specific values the answer must contain, as short noun phrases.
    target_data_points: Vec<String>,
    search_strategy: String,
}

const SYSTEM: &str = "You plan web searches for a research question. Reply with one JSON object \
with exactly these keys: \"intent\" (what the asker wants, one sentence), \"sub_queries\" (1 to 5 \
web search queries that together answer the question, the most direct first), \"info_type\" \
(one of: facts, definition, how-to, comparison, opinion, statistics, news, latest, current events), \
\"target_data_points\" (the specific values the answer must contain, as short noun phrases), \
\"search_strategy\" (one sentence). Write the sub_queries in the language of the question.";

/// What is wrong with the LLM's analysis; the text goes back to it in the repair turn.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
enum BadAnalysis {
    #[error("sub_queries must hold 1 to 5 queries, not {0}")]
    SubQueryCount(usize),
    #[error("sub_queries must not be empty strings")]
    EmptySubQuery,
    #[error("info_type must not be empty")]
    EmptyInfoType,
}

fn validate(a: &LlmAnalysis) -> Result<(), BadAnalysis> {
    if a.sub_queries.is_empty() || a.sub_queries.len() > 5 {
        return Err(BadAnalysis::SubQueryCount(a.sub_queries.len()));
    }
    if a.sub_queries.iter().any(|q| q.trim().is_empty()) {
        return Err(BadAnalysis::EmptySubQuery);
    }
    if a.info_type.trim().is_empty() {
        return Err(BadAnalysis::EmptyInfoType);
    }
    Ok(())
}

/// The LLM analysis when an LLM is configured and answers well, else the heuristic one.
pub(crate) async fn analyse_with(
    llm: Option<&Llm>,
    question: &str,
    locale: &Locale,
) -> QueryAnalysis {
    let mut heuristic = analyse(question, locale);
    let Some(llm) = llm else { return heuristic };
    if heuristic.sub_queries.is_empty() {
        heuristic.llm_error = Some("empty question".into());
        return heuristic;
    }
    let request = ChatRequest::new(
        "query_analysis",
        SYSTEM,
        format!("Question: {}", provider_query(question)),
    );
    match llm.json::<LlmAnalysis, _>(&request, validate).await {
        Ok((a, _)) => {
            let info_type = a.info_type.trim().to_lowercase();
            QueryAnalysis {
                path: "llm".into(),
                llm_error: None,
                is_news: NEWS_TYPES.contains(&info_type.as_str()) || time_words(question),
                intent: a.intent,
                sub_queries: a.sub_queries.iter().map(|q| provider_query(q)).collect(),
                info_type,
                target_data_points: llm_points(a.target_data_points, question, locale),
                search_strategy: a.search_strategy,
                ..heuristic
            }
        }
        Err(e) => {
            tracing::warn!(error = %e, "LLM query analysis failed; using the heuristic");
            heuristic.llm_error = Some(e.to_string());
            heuristic
        }
    }
}

/// The model's data points, each once, without those that are the question itself: a small
/// model asked for "short noun phrases" may echo the question (three times, word for word),
/// and a page states no value of a whole question. None is left then, rather than the
/// heuristic's: those were tried on real pages, and a point such as "performance gt version"
/// took a value from a page about another car, so that a question no page answers was
/// answered.
fn llm_points(points: Vec<String>, question: &str, locale: &Locale) -> Vec<String> {
    let asked = terms_in(question, locale.lang);
    let mut out: Vec<String> = Vec::new();
    for point in points {
        let point = collapse_whitespace(&point);
        let words = terms_in(&point, locale.lang);
        // A short question ("Population of Lyon?") may be its own data point.
        let echoes = asked.len() >= 3 && asked.iter().all(|w| words.contains(w));
        let again = || out.iter().any(|o| o.to_lowercase() == point.to_lowercase());
        if !point.is_empty() && !echoes && !again() {
            out.push(point);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The analysis of a question in its detected language.
    fn heuristic(question: &str) -> QueryAnalysis {
        analyse(question, &Locale::detect(question))
    }

    #[test]
    fn keeps_content_words_and_phrases() {
        let a = heuristic("What is the melting point of \"Velmora alloy\" and who made it?");
        assert_eq!(
            a.terms,
            vec!["melting", "point", "velmora", "alloy", "made"]
        );
        assert_eq!(a.phrases, vec!["Velmora alloy"]);
        assert!(!a.is_news);
        assert_eq!(
            a.sub_queries,
            vec!["What is the melting point of \"Velmora alloy\" and who made it?"]
        );
        assert!(heuristic("latest news on zorbium").is_news);
    }

    #[test]
    fn a_model_that_echoes_the_question_gives_no_data_point() {
        // What a model gave on a real-page question: the question, three times.
        let q = "In which hotel was the kidnapped Fort Worth girl found?";
        let locale = Locale::detect(q);
        let echoed = vec![q.to_owned(), q.to_owned(), format!("{q} ")];
        assert!(llm_points(echoed, q, &locale).is_empty());
        let given = vec![
            "hotel name".to_owned(),
            "Hotel  name".to_owned(),
            q.to_owned(),
        ];
        assert_eq!(llm_points(given, q, &locale), ["hotel name"]);
        // A question of two words may be its own point.
        let short = "Lyon population?";
        let points = llm_points(
            vec!["Lyon population".into()],
            short,
            &Locale::detect(short),
        );
        assert_eq!(points, ["Lyon population"]);
    }

    #[test]
    fn data_points_named_outright() {
        assert_eq!(
            data_points("What is the melting point of zorbium and who first isolated it?"),
            vec!["melting point"]
        );
        assert_eq!(
            data_points("How long is the Brimomir Bridge and when did it open?"),
            vec!["long"]
        );
        assert_eq!(
            data_points("How many moons does Velmor have?"),
            vec!["moons"]
        );
        assert!(data_points("Why?").is_empty());
    }

    #[test]
    fn empty_long_and_other_script_questions() {
        assert!(heuristic("   ").sub_queries.is_empty());
        let long = "zorbium ".repeat(2000);
        let a = heuristic(&long);
        assert!(a.sub_queries[0].chars().count() <= MAX_QUERY_CHARS);
        assert_eq!(a.terms, vec!["zorbium"]);
        let a = heuristic("Какова температура плавления зорбия?");
        // Four words leave whatlang unsure between the Cyrillic languages, and none of them
        // is a Russian stop word: the script's main language.
        assert_eq!(a.language, "ru");
        let longer = heuristic("Какова температура плавления зорбия и где его добывают?");
        assert_eq!(longer.language, "ru");
        assert_eq!(
            a.terms,
            vec!["какова", "температура", "плавления", "зорбия"]
        );
        let a = heuristic("Wie hoch ist die Schmelztemperatur von Zorbium?");
        assert_eq!(a.language, "de");
        assert_eq!(a.terms, vec!["hoch", "schmelztemperatur", "zorbium"]);
        // Its data point in its own words, for clean to read values by.
        assert_eq!(a.target_data_points, vec!["Schmelzpunkt"]);
        assert_eq!(
            heuristic("Какова температура плавления зорбия?").target_data_points,
            vec!["температура плавления"]
        );
        // The job's language wins over what the words look like.
        let pt = Locale::from_tag("pt-BR").unwrap();
        assert_eq!(analyse("Zorbium", &pt).language, "pt");
    }
}
