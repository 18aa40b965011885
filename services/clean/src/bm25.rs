//! Okapi BM25 over the passages of one page (its sentences, or its paragraphs), against the
//! question and the job's sub-queries.
//!
//! The collection is the page itself: a word in every sentence (the page's subject) weighs
//! little, a word in one sentence (the answer's) weighs much. Words match by [`same_term`]
//! (light stems); passage length is its word count. Terms of the question weigh 1, terms only
//! the sub-queries or data points add weigh [`EXTRA_WEIGHT`].
//!
//! [`Ranking::normalised`] makes scores comparable across pages: a passage's score over the
//! score of an ideal passage of average length holding every query term once, so 1 means "says
//! everything the question asks about" and 0 "says none of it".

use std::collections::HashMap;

use trawl_pipeline::text::terms;

/// Term-frequency saturation and length normalisation, the usual values.
const K1: f64 = 1.2;
const B: f64 = 0.75;
/// Weight of a term that only the sub-queries or data points bring.
pub const EXTRA_WEIGHT: f64 = 0.5;

/// Whether two words match: [`trawl_pipeline::text::same_word`], or the same once a plural
/// `s` is dropped ("bridges" and "bridge", which the light stems keep apart).
pub fn same_term(a: &str, b: &str) -> bool {
    trawl_pipeline::text::same_word(a, b)
        || (a.len() > 3 && b.len() > 3 && a.trim_end_matches('s') == b.trim_end_matches('s'))
}

/// Query terms with their weights.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Query {
    pub terms: Vec<(String, f64)>,
}

impl Query {
    /// The question's terms, then those only `extra` texts (sub-queries, data points) add.
    pub fn new(question: &str, extra: &[String]) -> Query {
        let mut out: Vec<(String, f64)> = terms(question).into_iter().map(|t| (t, 1.0)).collect();
        for text in extra {
            for t in terms(text) {
                if !out.iter().any(|(q, _)| same_term(q, &t)) {
                    out.push((t, EXTRA_WEIGHT));
                }
            }
        }
        Query { terms: out }
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }
}

/// Scores of a page's passages against one query.
#[derive(Clone, Debug, PartialEq)]
pub struct Ranking {
    /// One per passage, in passage order.
    pub scores: Vec<f64>,
    /// The score of an ideal passage (every term once, average length).
    pub ideal: f64,
    /// Per query term: does any passage hold it.
    pub found: Vec<bool>,
}

impl Ranking {
    /// `scores[i]` over the ideal score, at most 1.
    pub fn normalised(&self, i: usize) -> f64 {
        if self.ideal <= 0.0 {
            return 0.0;
        }
        (self.scores[i] / self.ideal).min(1.0)
    }

    /// Passage indexes with a positive score, best first (earlier first on a tie).
    pub fn order(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.scores.len())
            .filter(|&i| self.scores[i] > 0.0)
            .collect();
        order.sort_by(|&a, &b| self.scores[b].total_cmp(&self.scores[a]).then(a.cmp(&b)));
        order
    }
}

/// Ranks `passages` against `query`.
pub fn rank(query: &Query, passages: &[String]) -> Ranking {
    let words: Vec<Vec<String>> = passages.iter().map(|p| terms(p)).collect();
    // Each distinct word of the page is matched against each query term once, and passages
    // count their words' matches by index: matching every word of every passage again for each
    // term (stems included) was a fifth of the clean stage's CPU.
    let mut vocabulary: Vec<&str> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    let ids: Vec<Vec<usize>> = words
        .iter()
        .map(|ws| {
            ws.iter()
                .map(|w| {
                    *index.entry(w.as_str()).or_insert_with(|| {
                        vocabulary.push(w.as_str());
                        vocabulary.len() - 1
                    })
                })
                .collect()
        })
        .collect();
    let lengths: Vec<f64> = passages
        .iter()
        .map(|p| p.split_whitespace().count().max(1) as f64)
        .collect();
    let n = passages.len() as f64;
    let avg = if passages.is_empty() {
        1.0
    } else {
        lengths.iter().sum::<f64>() / n
    };
    let mut scores = vec![0.0; passages.len()];
    let (mut ideal, mut found) = (0.0, Vec::new());
    for (term, weight) in &query.terms {
        let matches: Vec<bool> = vocabulary.iter().map(|w| same_term(term, w)).collect();
        let tf: Vec<f64> = ids
            .iter()
            .map(|ws| ws.iter().filter(|&&id| matches[id]).count() as f64)
            .collect();
        let df = tf.iter().filter(|&&f| f > 0.0).count() as f64;
        let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
        ideal += weight * idf;
        found.push(df > 0.0);
        for (i, &f) in tf.iter().enumerate() {
            if f > 0.0 {
                let norm = K1 * (1.0 - B + B * lengths[i] / avg);
                scores[i] += weight * idf * f * (K1 + 1.0) / (f + norm);
            }
        }
    }
    Ranking {
        scores,
        ideal,
        found,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn the_sentence_with_the_rare_terms_wins() {
        let page = s(&[
            "Zorbium is a grey metal found in the hills of an imaginary country.",
            "Zorbium was mined by hand for most of its history.",
            "Zorbium melts at 1,284 degrees Celsius, a high melting point for its class.",
            "People like walking in the hills on sunny afternoons.",
        ]);
        let r = rank(
            &Query::new("What is the melting point of zorbium?", &[]),
            &page,
        );
        assert_eq!(r.order()[0], 2);
        assert!(!r.order().contains(&3), "{:?}", r.scores);
        // The subject is in three sentences of four: it counts for little on its own.
        assert!(r.scores[0] < 0.5 * r.scores[2], "{:?}", r.scores);
    }

    #[test]
    fn sub_queries_add_terms_at_a_lower_weight() {
        let q = Query::new(
            "How long is the Velmora Bridge?",
            &s(&["Velmora Bridge opening year", "length"]),
        );
        let weights: Vec<(&str, f64)> = q.terms.iter().map(|(t, w)| (t.as_str(), *w)).collect();
        assert_eq!(
            weights,
            vec![
                ("long", 1.0),
                ("velmora", 1.0),
                ("bridge", 1.0),
                ("opening", 0.5),
                ("year", 0.5),
                ("length", 0.5)
            ]
        );
    }

    #[test]
    fn normalised_scores_are_bounded_and_reward_coverage() {
        let page = s(&[
            "The Velmora Bridge spans 1,156 metres across the river and opened in 1903.",
            "The Velmora Bridge is painted grey every ten years by a small crew.",
            "Tomatoes need sun and water every single day of the summer.",
        ]);
        let q = Query::new("How long is the Velmora Bridge and when did it open?", &[]);
        let r = rank(&q, &page);
        let (full, part, none) = (r.normalised(0), r.normalised(1), r.normalised(2));
        assert!(full > part && part > none, "{full} {part} {none}");
        assert!((0.0..=1.0).contains(&full));
        assert_eq!(none, 0.0);
        assert_eq!(r.found, vec![false, true, true, true]);
        assert_eq!(rank(&Query::default(), &page).normalised(0), 0.0);
    }
}
