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

use trawl_text::{each_word, is_wide, stem, terms_in, Lang};

/// Term-frequency saturation and length normalisation, the usual values.
const K1: f64 = 1.2;
const B: f64 = 0.75;
/// Weight of a term that only the sub-queries or data points bring.
pub(crate) const EXTRA_WEIGHT: f64 = 0.5;

/// Whether two words match: [`trawl_text::same_word`], or the same once a plural
/// `s` is dropped ("bridges" and "bridge", which the light stems keep apart).
pub(crate) fn same_term(a: &str, b: &str) -> bool {
    Term::new(a).matches(b)
}

/// Query terms with their weights.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Query {
    pub terms: Vec<(String, f64)>,
    /// The question's language: its words match by its stems ([`Lang::stem`]).
    pub lang: Lang,
}

impl Query {
    /// The question's terms, then those only `extra` texts (sub-queries, data points) add.
    pub fn new(question: &str, extra: &[String]) -> Query {
        Query::new_in(question, extra, Lang::UND)
    }

    /// [`Query::new`] without the stop words of `lang`.
    pub fn new_in(question: &str, extra: &[String], lang: Lang) -> Query {
        let mut out: Vec<(String, f64)> = (terms_in(question, lang).into_iter())
            .map(|t| (t, 1.0))
            .collect();
        for text in extra {
            for t in terms_in(text, lang) {
                if !out.iter().any(|(q, _)| same_term(q, &t)) {
                    out.push((t, EXTRA_WEIGHT));
                }
            }
        }
        Query { terms: out, lang }
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

/// [`same_term`]'s keys of a word: its light stem, and without its plural `s` (words over
/// three bytes only). Each is a prefix of the word.
fn keys(w: &str) -> (&str, Option<&str>) {
    (stem(w), (w.len() > 3).then(|| w.trim_end_matches('s')))
}

/// A query term as passages' words are matched against it.
struct Term<'a> {
    word: &'a str,
    stem: &'a str,
    plural: Option<&'a str>,
    /// The term's Snowball stem, in a language that has one: words match by it alone.
    snowball: Option<(Lang, std::borrow::Cow<'a, str>)>,
    /// In a language that writes compounds as one word, a compound ending in the term matches:
    /// the term's first two letters, looked for in a word before it is stemmed ([`heads`]).
    compound: Option<&'a str>,
}

impl<'a> Term<'a> {
    fn new(word: &'a str) -> Term<'a> {
        Term::new_in(word, Lang::UND)
    }

    fn new_in(word: &'a str, lang: Lang) -> Term<'a> {
        let (stem, plural) = keys(word);
        let snowball = lang.has_snowball().then(|| (lang, lang.stem(word)));
        let head = snowball
            .as_ref()
            .is_some_and(|(_, s)| s.chars().count() >= COMPOUND_PART);
        let opening = word.char_indices().nth(2).map_or(word.len(), |(i, _)| i);
        Term {
            word,
            stem,
            plural,
            snowball,
            compound: (lang.joins_compounds() && head).then(|| &word[..opening]),
        }
    }

    /// [`same_term`] for a word of the page. Either key of a word is a prefix of it, so a word
    /// starting with neither of the term's keys cannot match: most words are told apart by
    /// their first byte, and only the rest are stemmed.
    fn matches(&self, w: &str) -> bool {
        if let Some((lang, stem)) = &self.snowball {
            // Snowball rewrites only a word's end, so a word of another first letter is
            // another word, told apart without stemming it.
            return w == self.word
                || (w.chars().next() == stem.chars().next() && lang.stem(w) == *stem)
                || self
                    .compound
                    .is_some_and(|opening| heads(w, opening, *lang, stem));
        }
        // The first byte before the rest: most words part there, without a comparison call.
        let opens = |key: &str| {
            key.as_bytes()
                .first()
                .is_none_or(|b| w.as_bytes().first() == Some(b))
                && w.starts_with(key)
        };
        if !(opens(self.stem) || self.plural.is_some_and(opens)) {
            return false;
        }
        let (w_stem, w_plural) = keys(w);
        w == self.word || w_stem == self.stem || (w_plural.is_some() && w_plural == self.plural)
    }
}

/// Whether `w` is a compound whose last part is a term (its first two letters `opening`, its
/// Snowball stem `stem`): "steinbrücke" of "brücken", "gesamtlänge" of "länge". Both parts
/// have at least four letters, so a prefix ("verlangen") or a short head makes no compound.
/// Only a word holding the term's opening after its fourth letter is stemmed: most words are
/// told apart without it, and nothing is allocated per word.
fn heads(w: &str, opening: &str, lang: Lang, stem: &str) -> bool {
    let tail = w.char_indices().nth(COMPOUND_PART).map(|(i, _)| &w[i..]);
    tail.is_some_and(|t| t.contains(opening))
        && lang
            .stem(w)
            .strip_suffix(stem)
            .is_some_and(|first| first.chars().count() >= COMPOUND_PART)
}

/// The fewest letters of each part of a compound [`heads`] reads.
const COMPOUND_PART: usize = 4;

/// Words a sentence is searched for (a data point's markers) in the question's language: by
/// its stems ([`Term::new_in`]), and a Chinese or Japanese word inside the text, as the
/// segmenter does not always cut it out whole ("全长" holds "长").
pub(crate) struct Marks<'a> {
    terms: Vec<Term<'a>>,
    wide: Vec<&'a str>,
}

impl<'a> Marks<'a> {
    pub(crate) fn new(words: &'a [String], lang: Lang) -> Marks<'a> {
        let (wide, terms): (Vec<&String>, Vec<&String>) =
            (words.iter()).partition(|w| w.chars().any(is_wide));
        Marks {
            terms: terms.into_iter().map(|w| Term::new_in(w, lang)).collect(),
            wide: wide.into_iter().map(String::as_str).collect(),
        }
    }

    /// Whether one lower-cased word (or a run of Chinese or Japanese text) is a marker.
    pub(crate) fn word(&self, w: &str) -> bool {
        self.terms.iter().any(|t| t.matches(w)) || self.wide.iter().any(|m| w.contains(m))
    }

    /// Where the first Chinese or Japanese marker is in `text` (byte range; the longest of
    /// those starting there).
    pub(crate) fn wide_at(&self, text: &str) -> Option<std::ops::Range<usize>> {
        (self.wide.iter())
            .filter_map(|m| text.find(m).map(|i| i..i + m.len()))
            .min_by_key(|r| (r.start, std::cmp::Reverse(r.end)))
    }

    /// Whether any word of `text` is a marker; it stops at the first.
    pub(crate) fn in_text(&self, text: &str) -> bool {
        if self.wide.iter().any(|m| text.contains(m)) {
            return true;
        }
        let mut found = false;
        each_word(text, |w| {
            found = self.terms.iter().any(|t| t.matches(w));
            !found
        });
        found
    }
}

/// Ranks `passages` against `query`: one pass over each passage's words, matched against the
/// query's terms as they come (nothing is allocated per word; splitting pages into owned words
/// and matching those was most of the clean stage's CPU).
pub fn rank<S: AsRef<str>>(query: &Query, passages: &[S]) -> Ranking {
    let terms: Vec<Term> = (query.terms.iter())
        .map(|(t, _)| Term::new_in(t, query.lang))
        .collect();
    // tf[p][t]: distinct words of passage p matching term t.
    let mut tf: Vec<Vec<u32>> = Vec::with_capacity(passages.len());
    let mut lengths: Vec<f64> = Vec::with_capacity(passages.len());
    let mut matched: Vec<String> = Vec::new();
    let mut hits = vec![false; terms.len()];
    for p in passages {
        let p = p.as_ref();
        let mut counts = vec![0u32; terms.len()];
        matched.clear();
        each_word(p, |w| {
            let mut any = false;
            for (hit, t) in hits.iter_mut().zip(&terms) {
                *hit = t.matches(w);
                any |= *hit;
            }
            // A word counts once per passage, as `terms` keeps it once.
            if any && !matched.iter().any(|m| m == w) {
                matched.push(w.to_owned());
                for (count, &hit) in counts.iter_mut().zip(&hits) {
                    *count += u32::from(hit);
                }
            }
            true
        });
        tf.push(counts);
        lengths.push(words_apart(p).max(1) as f64);
    }
    let n = passages.len() as f64;
    let avg = if passages.is_empty() {
        1.0
    } else {
        lengths.iter().sum::<f64>() / n
    };
    let mut scores = vec![0.0; passages.len()];
    let (mut ideal, mut found) = (0.0, Vec::new());
    for (t, (_, weight)) in query.terms.iter().enumerate() {
        let df = tf.iter().filter(|c| c[t] > 0).count() as f64;
        let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
        ideal += weight * idf;
        found.push(df > 0.0);
        for (i, counts) in tf.iter().enumerate() {
            let f = f64::from(counts[t]);
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

/// `p.split_whitespace().count()`, counted byte by byte when `p` is ASCII (as most passages
/// are): it is taken of every passage of every page.
fn words_apart(p: &str) -> usize {
    if !p.is_ascii() {
        return p.split_whitespace().count();
    }
    let mut after_space = true;
    let mut n = 0;
    for &b in p.as_bytes() {
        let is_space = trawl_text::is_ascii_space(b);
        n += usize::from(after_space && !is_space);
        after_space = is_space;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use trawl_text::terms;

    #[test]
    fn words_apart_are_split_whitespace_counts() {
        for p in [
            "",
            " ",
            "a",
            " two words ",
            "tab\tand\u{b}vertical\u{c}feed\r\n",
            "caf\u{e9} \u{a0}x y",
        ] {
            assert_eq!(words_apart(p), p.split_whitespace().count(), "{p:?}");
        }
    }

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

    #[test]
    fn a_mention_is_any_word_matching_any_term() {
        let markers = s(&["bridges", "melts"]);
        let marks = Marks::new(&markers, Lang::UND);
        assert!(marks.in_text("The old BRIDGE is long."));
        assert!(marks.in_text("It is melting."));
        assert!(!marks.in_text("The bridal party crossed the span."));
        assert!(!Marks::new(&[], Lang::UND).in_text("bridge"));
        // Another language's forms by its stems; a Chinese word inside a longer run.
        let ru = s(&["длина"]);
        let ru = Marks::new(&ru, Lang::from_tag("ru").unwrap());
        assert!(ru.in_text("Мост длиной 798 метров."));
        assert!(ru.word("длиной"));
        let zh = s(&["长"]);
        assert!(Marks::new(&zh, Lang::UND).in_text("大桥全长1738米"));
        // A German compound is its last part; a prefix or a word merely ending so is not.
        let de = Lang::from_tag("de").unwrap();
        let words = s(&["brücken", "länge"]);
        let marks = Marks::new(&words, de);
        for w in [
            "steinbrücke",
            "steinbrücken",
            "eisenbahnbrücken",
            "gesamtlänge",
            "brückenlänge",
        ] {
            assert!(marks.word(w), "{w}");
        }
        for w in ["verlangen", "belange", "brückner", "umfang"] {
            assert!(!marks.word(w), "{w}");
        }
        // Not in a language that writes compounds apart.
        let fr = s(&["ponts"]);
        assert!(!Marks::new(&fr, Lang::from_tag("fr").unwrap()).word("aqueponts"));
    }

    #[test]
    fn term_counts_are_those_of_each_passages_distinct_words() {
        // The plain reading of the definition: each passage's `terms`, matched by `same_term`.
        let page = s(&[
            "Bridges, bridge and BRIDGE: the Bridging Authority bridged the river's bridges.",
            "Melting points: zorbium melts, melted, is melting at 1,284 degrees; the melt.",
            "Über Brücken und Straßen: die Brücke ist alt, statues and status differ.",
            "Nothing here.",
        ]);
        let q = Query::new(
            "When did bridges melt? Brücke status",
            &s(&["statue melting point"]),
        );
        let r = rank(&q, &page);
        let n = page.len() as f64;
        let avg = page
            .iter()
            .map(|p| p.split_whitespace().count() as f64)
            .sum::<f64>()
            / n;
        for (i, p) in page.iter().enumerate() {
            let words = terms(p);
            let mut expected = 0.0;
            for (term, weight) in &q.terms {
                let tf = |p: &String| terms(p).iter().filter(|w| same_term(term, w)).count();
                let df = page.iter().filter(|p| tf(p) > 0).count() as f64;
                let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                let f = words.iter().filter(|w| same_term(term, w)).count() as f64;
                let len = p.split_whitespace().count() as f64;
                if f > 0.0 {
                    expected +=
                        weight * idf * f * (K1 + 1.0) / (f + K1 * (1.0 - B + B * len / avg));
                }
            }
            assert!(
                (r.scores[i] - expected).abs() < 1e-9,
                "{i}: {} {expected}",
                r.scores[i]
            );
        }
        assert!(r.scores[0] > 0.0 && r.scores[1] > 0.0 && r.scores[2] > 0.0);
        assert_eq!(r.scores[3], 0.0);
    }
}
