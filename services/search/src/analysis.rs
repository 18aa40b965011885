//! Query analysis without an LLM: the heuristic path every deployment has.

use serde::{Deserialize, Serialize};
pub use trawl_pipeline::text::terms;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueryAnalysis {
    /// Which path produced this analysis (`heuristic`, later `llm`).
    pub path: String,
    pub sub_queries: Vec<String>,
    /// Lower-cased content words of the question, stop words removed, in order.
    pub terms: Vec<String>,
    /// Quoted phrases, kept whole.
    pub phrases: Vec<String>,
    pub is_news: bool,
}

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

pub fn analyse(question: &str) -> QueryAnalysis {
    let phrases: Vec<String> = question
        .split('"')
        .enumerate()
        .filter(|(i, p)| i % 2 == 1 && !p.trim().is_empty())
        .map(|(_, p)| p.trim().to_owned())
        .collect();
    let lower = question.to_lowercase();
    let is_news = NEWS_WORDS.iter().any(|w| lower.contains(w));
    QueryAnalysis {
        path: "heuristic".into(),
        sub_queries: vec![question.trim().to_owned()],
        terms: terms(question),
        phrases,
        is_news,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_content_words_and_phrases() {
        let a = analyse("What is the melting point of \"Velmora alloy\" and who made it?");
        assert_eq!(
            a.terms,
            vec!["melting", "point", "velmora", "alloy", "made"]
        );
        assert_eq!(
            a.sub_queries,
            vec!["What is the melting point of \"Velmora alloy\" and who made it?"]
        );
        assert_eq!(a.phrases, vec!["Velmora alloy"]);
        assert!(!a.is_news);
        assert_eq!(a.sub_queries.len(), 1);
        assert!(analyse("latest news on zorbium").is_news);
    }
}
