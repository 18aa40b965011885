//! Per-source analysis without an LLM: is this source relevant to the question, which of its
//! sentences say so, what values it gives for the job's data points, and what a count, table
//! or passage question asks of it.
//!
//! - Sentences (prose, plus the sentences in table cells) are ranked by BM25 ([`crate::bm25`])
//!   against the question and the job's sub-queries and data points; the best become the key
//!   points (what synthesis quotes), the two best in page order the summary.
//! - Relevance blends the best-ranked sentence (does one sentence answer?) with the whole
//!   text's coverage of the question's words (is the page about this?), in 0..1:
//!   `0.3 × its normalised BM25 score + 0.3 × the share of the question's words it holds +
//!   0.4 × the page's share of them`. Below `clean.min_relevance` the source is irrelevant.
//!   On simweb's labelled pages (`tests/relevance_simweb.rs`) every answer page scores above
//!   the default 0.15, a page naming the subject in passing about half as much, and nine in
//!   ten unrelated pages below it.
//! - Data points come from [`crate::datapoints`], tables from [`crate::tables`], the
//!   count/table/passage answer from [`crate::lookup`] (a count also fills the data point named
//!   like its subject).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use trawl_messages::{Lookup, Table};
use trawl_text::wanted::Wanted;
use trawl_text::{coverage_in_lang, sentences, terms, terms_in, Lang};

use crate::bm25::{rank, same_term, Query};
use crate::{datapoints, lookup, tables};

/// Key points kept per source.
pub(crate) const KEY_POINTS: usize = 8;

/// What the job asks of each source: the question and what search made of it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Context {
    pub question: String,
    pub sub_queries: Vec<String>,
    /// Data points the answer needs ("melting point", "designer" …).
    pub data_points: Vec<String>,
    /// A news question (recent events), which the LLM analyses with a news prompt.
    pub is_news: bool,
    /// The question's language as search recorded it (ISO 639-1); empty: detected here.
    #[serde(default)]
    pub language: String,
}

impl Context {
    /// The question alone, without search's analysis.
    pub fn question(question: &str) -> Context {
        Context {
            question: question.to_owned(),
            ..Context::default()
        }
    }

    /// The question's language: its stop words are not among the terms matched, and words
    /// match by its stems. Detected when search recorded none (an older record), so a caller
    /// asks once.
    pub fn lang(&self) -> Lang {
        Lang::from_tag(&self.language).unwrap_or_else(|| Lang::detect(&self.question))
    }

    /// The BM25 query in `lang` ([`Context::lang`]): the question's terms, then those the
    /// sub-queries and data points add.
    pub(crate) fn query(&self, lang: Lang) -> Query {
        let extra = [&self.sub_queries[..], &self.data_points].concat();
        Query::new_in(&self.question, &extra, lang)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    pub relevance: f64,
    pub is_relevant: bool,
    pub key_points: Vec<String>,
    pub summary: String,
    pub extracted_data: BTreeMap<String, Option<String>>,
    pub tables: Vec<Table>,
    pub lookup: Option<Lookup>,
}

/// Key points that state a value of the form the question asks ([`Wanted`]) and rank below the
/// first [`KEY_POINTS`]: on a real page the sentences repeating the question's words outrank
/// the one with the answer ("The course of steroids continued ultimately for 12 months" for
/// "How long did the man take steroids?").
const STATING: usize = 2;

/// The page's key points: its [`KEY_POINTS`] best sentences for the query, in `order`, and up to
/// [`STATING`] more that state a value of what `question` asks.
fn key_points(question: &str, lang: Lang, passages: &[String], order: &[usize]) -> Vec<String> {
    let mut out: Vec<String> = (order.iter().take(KEY_POINTS))
        .map(|&i| passages[i].clone())
        .collect();
    if let Some(wanted) = Wanted::of(question, lang) {
        let states = |s: &&String| wanted.stated_in(s, &[], lang) && wanted.about(s, &[], lang);
        let stating: Vec<&String> = (order.iter().skip(KEY_POINTS))
            .map(|&i| &passages[i])
            .filter(states)
            .collect();
        // A name of the kind asked ("WoodSpring Suites hotel") before any other name.
        let (named, others): (Vec<&String>, Vec<&String>) =
            (stating.into_iter()).partition(|s| wanted.says_noun(s, lang));
        out.extend(named.into_iter().chain(others).take(STATING).cloned());
    }
    out
}

/// How a page's furniture opens a line inside its article text: a copyright notice ("Copyright
/// 2019 Hawaii News Now.") or a wire story's credits ("(Reporting by Will Dunham; Editing by
/// Tom Brown)"). Such a line shares a question's year or "reported" and says nothing.
const CREDITS: &[&str] = &[
    "copyright ",
    "©",
    "(c) ",
    "all rights reserved",
    "reporting by ",
    "additional reporting by ",
    "editing by ",
    "writing by ",
];

/// Whether `sentence` is a copyright line or a wire story's credits ([`CREDITS`]).
fn is_credit(sentence: &str) -> bool {
    let opening = sentence
        .trim_start_matches(['(', '[', '*', '_', ' '])
        .to_lowercase();
    CREDITS.iter().any(|c| opening.starts_with(c))
}

/// The extractive analysis for a bare question (no sub-queries or data points).
pub fn analyse(question: &str, title: &str, markdown: &str, min_relevance: f64) -> Analysis {
    analyse_in(&Context::question(question), title, markdown, min_relevance)
}

/// The extractive analysis of one source for the job's context.
pub fn analyse_in(ctx: &Context, title: &str, markdown: &str, min_relevance: f64) -> Analysis {
    let tables = tables::parse(markdown);
    let mut passages = sentences(markdown);
    passages.retain(|s| !is_credit(s));
    for cell in tables.iter().flat_map(|t| t.rows.iter().flatten()) {
        for s in sentences(cell) {
            if !passages.contains(&s) {
                passages.push(s);
            }
        }
    }
    let lang = ctx.lang();
    let ranking = rank(&ctx.query(lang), &passages);
    let order = ranking.order();

    let q = terms_in(&ctx.question, lang);
    // Within one page the subject is in every sentence, so BM25 alone undervalues a page
    // that names its subject without the question's other words: the share of the question's
    // words the best sentence holds counts half.
    let best = order.first().map_or(0.0, |&i| {
        0.5 * ranking.normalised(i) + 0.5 * coverage_in_lang(&q, &[&passages[i]], lang)
    });
    let relevance = 0.6 * best + 0.4 * coverage_in_lang(&q, &[title, markdown], lang);

    // The summary reads in page order: the two best sentences as the page has them.
    let mut top: Vec<usize> = order.iter().take(2).copied().collect();
    top.sort_unstable();
    let summary = if top.is_empty() {
        passages.first().cloned().unwrap_or_default()
    } else {
        top.iter()
            .map(|&i| passages[i].as_str())
            .collect::<Vec<_>>()
            .join(" ")
    };

    let mut extracted_data = match ctx.data_points.is_empty() {
        // Most questions name no data point: the page's sentences are not copied for none.
        true => Default::default(),
        false => {
            let scored: Vec<(String, f64)> = (passages.iter().cloned())
                .zip(ranking.scores.iter().copied())
                .collect();
            datapoints::extract(&ctx.data_points, &q, &scored, &tables, lang)
        }
    };
    let lookup = lookup::lookup_in(&ctx.question, lang, markdown, &tables);
    if let Some(Lookup::Count { subject, count, .. }) = &lookup {
        let head = subject.split_whitespace().last().unwrap_or("");
        for (point, value) in extracted_data.iter_mut() {
            if value.is_none() && terms(point).iter().any(|p| same_term(p, head)) {
                *value = Some(count.to_string());
            }
        }
    }
    Analysis {
        relevance,
        is_relevant: relevance >= min_relevance,
        key_points: key_points(&ctx.question, lang, &passages, &order),
        summary,
        extracted_data,
        tables,
        lookup,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sentence_stating_what_is_asked_is_a_key_point_however_it_ranks() {
        // A real page (the man with feather duvet lung): its sentences repeat the question's
        // words; the one with the answer shares only "steroids".
        let mut md: String = (0..10)
            .map(|i| {
                format!(
                    "The man with feather duvet lung took steroids, doctors said of case {i}.\n\n"
                )
            })
            .collect();
        md.push_str("The course of steroids continued ultimately for 12 months.");
        let q = "How long did the man with feather duvet lung take steroids?";
        let a = analyse(q, "Feather duvet lung", &md, 0.1);
        assert_eq!(a.key_points.len(), KEY_POINTS + 1, "{:?}", a.key_points);
        assert!(
            a.key_points.last().unwrap().contains("12 months"),
            "{:?}",
            a.key_points
        );
    }

    #[test]
    fn a_name_of_the_kind_asked_is_a_key_point_before_other_names() {
        // A real page (the kidnapped Fort Worth girl): the sentences repeating the question's
        // words, then others naming people, outrank "… Forest Hill's WoodSpring Suites hotel".
        let mut md: String = (0..8)
            .map(|i| {
                format!("The kidnapped Fort Worth girl was found in a hotel room, police said in update {i}.\n\n")
            })
            .collect();
        md.push_str("Police said the kidnapped girl was found when Webb was arrested.\n\n");
        md.push_str("A jury in Fort Worth convicted Michael Webb of kidnapping the girl.\n\n");
        md.push_str("He took the child to Forest Hill's WoodSpring Suites hotel.");
        let q = "In which hotel was the kidnapped Fort Worth girl found?";
        let a = analyse(q, "Kidnapped girl found", &md, 0.1);
        let stating = &a.key_points[KEY_POINTS..];
        assert!(stating[0].contains("WoodSpring"), "{:?}", a.key_points);
    }

    #[test]
    fn a_copyright_line_or_a_wire_credit_is_no_key_point() {
        // hawaiinewsnow.com and a Reuters story on sciencealert.com (h010 of the real-page
        // set): each line shares the question's "2019" or "reported".
        let md = "Europa is slightly smaller than Earth's Moon, some 1,900 miles across. \
                  Copyright 2019 Hawaii News Now.\n\n\
                  (Reporting by Will Dunham; Editing by Tom Brown)*\n\n\
                  © 2019 Reuters. All rights reserved.";
        let a = analyse(
            "How many miles across is Europa, reported in 2019?",
            "Europa",
            md,
            0.0,
        );
        assert_eq!(
            a.key_points,
            ["Europa is slightly smaller than Earth's Moon, some 1,900 miles across."]
        );
        assert!(!is_credit("Reporters said the copyright had expired."));
    }

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

    /// `question` as search recorded it in `language` ("": recorded nothing).
    fn in_language(question: &str, language: &str) -> Context {
        Context {
            language: language.into(),
            ..Context::question(question)
        }
    }

    /// A page that shares only the question's function words ("wie", "ist", "der") is not
    /// about it: in German as in English.
    #[test]
    fn the_questions_stop_words_are_those_of_its_language() {
        let q = "Wie hoch ist der Eiffelturm?";
        let answer = "Der Eiffelturm ist 330 Meter hoch und steht in Paris.";
        let chatter = "Wie ist der Stand der Dinge? Der Hund ist hier, und der Tag ist schön.";
        let ctx = |language: &str| in_language(q, language);
        let a = analyse_in(&ctx("de"), "Eiffelturm", answer, 0.3);
        let c = analyse_in(&ctx("de"), "Notizen", chatter, 0.3);
        assert!(
            a.is_relevant && !c.is_relevant,
            "{} {}",
            a.relevance,
            c.relevance
        );
        // Detected from the question when search recorded none.
        assert_eq!(ctx("").lang().code(), "de");
        assert_eq!(
            analyse_in(&ctx(""), "Notizen", chatter, 0.3).relevance,
            c.relevance
        );
    }

    /// Russian declines its nouns: the question's "зорбия" is the page's "Зорбий", its
    /// "температура" the page's "температуре". Matched by Russian stems, the answer counts.
    #[test]
    fn a_questions_words_are_found_in_their_other_forms() {
        let q = "Какова температура плавления зорбия?";
        let answer = "Зорбий плавится при температуре 1284 градуса. Его добывают в горах.";
        let ctx = |language: &str| in_language(q, language);
        let ru = analyse_in(&ctx("ru"), "Зорбий", answer, 0.3);
        let unknown = analyse_in(&ctx("und"), "Зорбий", answer, 0.3);
        assert!(
            ru.relevance > unknown.relevance + 0.2,
            "{} {}",
            ru.relevance,
            unknown.relevance
        );
        assert!(ru.is_relevant);
    }

    #[test]
    fn a_passing_mention_scores_below_an_answer() {
        let q = "How long is the Velmora Bridge and when did it open?";
        let answer = "The Velmora Bridge spans 1,156 metres across the Tarn River. After years of delays the Velmora Bridge finally opened in 1903. It carries two lanes of traffic.";
        let mention = "Sourdough needs patience more than talent. A reader asked whether this post has anything to do with the Velmora Bridge (it does not). Back to sourdough baking and its many small mysteries.";
        let a = analyse(q, "The Velmora Bridge", answer, 0.15);
        let m = analyse(q, "Notes on sourdough baking", mention, 0.15);
        assert!(
            a.relevance > m.relevance + 0.2,
            "{} {}",
            a.relevance,
            m.relevance
        );
        assert!(a.relevance <= 1.0);
    }

    #[test]
    fn data_points_tables_and_counts_come_with_the_analysis() {
        let ctx = Context {
            question: "How many bridges does Port Varn have and how long is the Old Bridge?".into(),
            sub_queries: vec!["Port Varn bridges".into()],
            data_points: vec!["bridges".into(), "long".into(), "architect".into()],
            is_news: false,
            language: "en".into(),
        };
        let md = "Port Varn is a canal city known for its bridges and its market.\n\n\
                  | Bridge | Length |\n|---|---|\n| Old Bridge | 120 metres |\n| Mill Bridge | 80 metres |\n\n\
                  The Old Bridge is 120 metres long and was rebuilt after the flood of 1902.";
        let a = analyse_in(&ctx, "Bridges of Port Varn", md, 0.15);
        assert_eq!(a.tables.len(), 1);
        assert!(
            matches!(a.lookup, Some(Lookup::Count { count: 2, .. })),
            "{:?}",
            a.lookup
        );
        assert_eq!(a.extracted_data["bridges"].as_deref(), Some("2"));
        assert_eq!(a.extracted_data["long"].as_deref(), Some("120 metres"));
        assert_eq!(a.extracted_data["architect"], None);
    }
}
