//! Per-source analysis without an LLM: is this source relevant to the question, and which of
//! its sentences say so.
//!
//! Each prose sentence is scored by the share of the question's content words it covers; the
//! best become the source's key points (what synthesis quotes). Relevance blends the best
//! sentence (does one sentence answer?) with the whole text's coverage (is it about this?).

use trawl_pipeline::text::{coverage, coverage_of, sentences, terms};

/// Key points kept per source.
const KEY_POINTS: usize = 8;

#[derive(Debug, PartialEq)]
pub struct Analysis {
    pub relevance: f64,
    pub is_relevant: bool,
    pub key_points: Vec<String>,
    pub summary: String,
}

pub fn analyse(question: &str, title: &str, markdown: &str, min_relevance: f64) -> Analysis {
    let q = terms(question);
    let all = sentences(markdown);
    let mut scored: Vec<(usize, f64)> = all
        .iter()
        .enumerate()
        .map(|(i, s)| (i, coverage(&q, s)))
        .filter(|&(_, c)| c > 0.0)
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.truncate(KEY_POINTS);

    let best = scored.first().map_or(0.0, |&(_, c)| c);
    let mut words = terms(title);
    words.extend(terms(markdown));
    let whole = coverage_of(&q, &words);
    let relevance = 0.6 * best + 0.4 * whole;

    // The summary reads in document order: the two best sentences as the page has them.
    let mut top: Vec<usize> = scored.iter().take(2).map(|&(i, _)| i).collect();
    top.sort_unstable();
    let summary = if top.is_empty() {
        all.first().cloned().unwrap_or_default()
    } else {
        top.iter()
            .map(|&i| all[i].as_str())
            .collect::<Vec<_>>()
            .join(" ")
    };
    Analysis {
        relevance,
        is_relevant: relevance >= min_relevance,
        key_points: scored.into_iter().map(|(i, _)| all[i].clone()).collect(),
        summary,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_answering_sentences_first() {
        let md = "Zorbium is a grey metal found in the hills of an imaginary country.\n\n\
                  Many people like walking in those hills on sunny afternoons.\n\n\
                  Zorbium melts at 1,284 degrees Celsius, a high melting point for its class.";
        let a = analyse(
            "What is the melting point of zorbium?",
            "Zorbium facts",
            md,
            0.2,
        );
        assert!(a.is_relevant);
        assert!(a.key_points[0].contains("1,284"), "{:?}", a.key_points);
        assert!(!a.key_points.iter().any(|k| k.contains("walking")));
        assert!(
            a.summary.starts_with("Zorbium is a grey metal"),
            "{}",
            a.summary
        );
    }

    #[test]
    fn unrelated_text_is_irrelevant() {
        let a = analyse(
            "What is the melting point of zorbium?",
            "Gardening",
            "Tomatoes need sun and water every single day.",
            0.2,
        );
        assert!(!a.is_relevant && a.key_points.is_empty());
    }
}
