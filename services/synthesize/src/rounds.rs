//! Follow-up research rounds, decided: once a round's outcomes are in, what the job still lacks
//! (target data points no relevant source gives a value for, sub-queries no relevant source
//! covers) becomes the queries of another round, while `research.max_rounds` allows. The
//! queries are the question's words plus what is missing, or the model's ([`plan`]) when there
//! is one. The stage checks the deadline and the budget; [`trawl_pipeline::Job::follow_up`]
//! starts the round, and the search stage runs it.

use serde::Deserialize;
use trawl_llm::{ChatRequest, Llm, LlmError};
use trawl_messages::{AnalysedDoc, Round};
use trawl_pipeline::fanin::JobMeta;
use trawl_text::{coverage_of, terms, terms_in, Lang};

use crate::report;

/// Share of a sub-query's words a relevant source's summary and key points must hold for the
/// sub-query to count as covered.
const COVERED: f64 = 0.6;
/// Searches one round runs, at most.
const MAX_QUERIES: usize = 3;

/// What no relevant source of `docs` about the question's subject covers, one line each, data
/// points first: another town's founding year states no founding year of the town asked about.
fn lacking(meta: &JobMeta, docs: &[AnalysedDoc], lang: Lang) -> Vec<(String, String)> {
    let answering = report::answering(&meta.query, lang, docs);
    let relevant = answering.docs;
    let mut out = Vec::new();
    for point in &meta.data_points {
        let stated =
            (relevant.iter()).any(|d| d.extracted_data.get(point).is_some_and(Option::is_some));
        if !stated {
            out.push((format!("no source read states the {point}"), point.clone()));
        }
    }
    if relevant.is_empty() {
        let why = match answering.unnamed.is_empty() {
            true => "no source read is relevant to the question".to_owned(),
            false => format!("no source read names {}", answering.unnamed.join(", ")),
        };
        out.push((why, meta.query.clone()));
        return out;
    }
    // A sub-query that is the question itself is broken down by the data points above.
    let question = terms(&meta.query);
    for sub in &meta.sub_queries {
        let words = terms(sub);
        if words == question {
            continue;
        }
        let covered = relevant.iter().any(|d| {
            let text = format!("{} {} {}", d.title, d.summary, d.key_points.join(" "));
            coverage_of(&words, &terms(&text)) >= COVERED
        });
        if !covered && !words.is_empty() {
            out.push((format!("no source read covers “{sub}”"), sub.clone()));
        }
    }
    out
}

/// The query that looks for `missing` (a data point or a sub-query) of `question`: the
/// question's words, then those of `missing` it lacks, stop words of `lang` left out.
pub fn query(question: &str, missing: &str, lang: Lang) -> String {
    let mut words = terms_in(question, lang);
    for w in terms_in(missing, lang) {
        if !words.contains(&w) {
            words.push(w);
        }
    }
    words.join(" ")
}

/// Round `done + 1`, when the job has had `done` rounds of at most `max`, and something is
/// still lacking from what was read. A job that read nothing at all (its search found nothing,
/// or no page could be fetched) has no gap a narrower search would fill.
pub fn next(meta: &JobMeta, docs: &[AnalysedDoc], done: u32, max: u32) -> Option<Round> {
    if done >= max || docs.is_empty() {
        return None;
    }
    let lang = Lang::from_tag(&meta.language).unwrap_or_default();
    let lacking = lacking(meta, docs, lang);
    if lacking.is_empty() {
        return None;
    }
    // A round searches in the question's language, without its stop words.
    let mut queries: Vec<String> = Vec::new();
    for (_, missing) in &lacking {
        let q = query(&meta.query, missing, lang);
        if !queries.contains(&q) && queries.len() < MAX_QUERIES {
            queries.push(q);
        }
    }
    Some(Round {
        n: done + 1,
        why: lacking.into_iter().map(|(why, _)| why).collect(),
        queries,
    })
}

const PLAN_SYSTEM: &str = "You plan follow-up web searches for a research question: the sources \
read so far lack what is listed. Reply with one JSON object: {\"queries\": [at most 3 short web \
search queries, each naming the question's subject and what is missing]}.";

/// The model's searches for what a round looks for.
#[derive(Deserialize, schemars::JsonSchema)]
struct Plan {
    /// At most three web search queries.
    queries: Vec<String>,
}

/// Replaces `round`'s heuristic queries with the model's; they stand when it cannot answer.
pub async fn plan(llm: &Llm, question: &str, round: &mut Round) -> Result<(), LlmError> {
    let missing: Vec<String> = round.why.iter().map(|w| format!("- {w}")).collect();
    let prompt = format!("Question: {question}\nMissing:\n{}", missing.join("\n"));
    let validate = |p: &Plan| match p.queries.iter().any(|q| !q.trim().is_empty()) {
        true => Ok(()),
        false => Err("no query"),
    };
    let request = ChatRequest::new("follow_up", PLAN_SYSTEM, prompt);
    let (plan, _) = llm.json::<Plan, _>(&request, validate).await?;
    round.queries = (plan.queries.into_iter())
        .map(|q| q.trim().to_owned())
        .filter(|q| !q.is_empty())
        .take(MAX_QUERIES)
        .collect();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::testing::doc;

    fn meta(data_points: &[&str], sub_queries: &[&str]) -> JobMeta {
        JobMeta {
            query: "What is the density of zorbium and who first isolated it?".into(),
            sub_queries: sub_queries.iter().map(|s| s.to_string()).collect(),
            data_points: data_points.iter().map(|s| s.to_string()).collect(),
            language: "en".into(),
            ..Default::default()
        }
    }

    #[test]
    fn a_data_point_no_relevant_source_states_is_searched_for_with_the_question() {
        let mut stated = doc(0, true, &["Zorbium has a density of 7.2 g/cm3."]);
        stated
            .extracted_data
            .insert("density".into(), Some("7.2 g/cm3".into()));
        let mut elsewhere = doc(1, false, &["Zorbium was first isolated by Ada Brenn."]);
        elsewhere
            .extracted_data
            .insert("isolated".into(), Some("Ada Brenn".into()));
        let m = meta(&["density", "isolated"], &[]);
        let round = next(&m, &[stated.clone(), elsewhere], 1, 2).expect("a round");
        assert_eq!(round.n, 2);
        // The irrelevant source's value does not count.
        assert_eq!(round.why, ["no source read states the isolated"]);
        assert_eq!(round.queries, ["density zorbium isolated"]);

        // Nothing lacking, or no rounds left, or nothing read: no round.
        let mut both = stated.clone();
        both.extracted_data
            .insert("isolated".into(), Some("Ada Brenn".into()));
        assert_eq!(next(&m, &[both], 1, 2), None);
        assert_eq!(next(&m, &[stated], 2, 2), None);
        assert_eq!(next(&m, &[], 1, 2), None);
    }

    #[test]
    fn a_round_searches_without_the_stop_words_of_the_questions_language() {
        let m = JobMeta {
            query: "Wie hoch ist die Dichte von Zorbium?".into(),
            data_points: vec!["Dichte".into()],
            language: "de".into(),
            ..Default::default()
        };
        let read = doc(0, true, &["Zorbium ist ein Metall."]);
        let round = next(&m, &[read], 1, 2).expect("a round");
        assert_eq!(round.queries, ["hoch dichte zorbium"]);
    }

    #[test]
    fn a_sub_query_no_relevant_source_covers_is_searched_again() {
        let covered = doc(
            0,
            true,
            &["Zorbium density is 7.2 g/cm3 at room temperature."],
        );
        let m = meta(
            &[],
            &["zorbium density", "zorbium discovery history isolation"],
        );
        let round = next(&m, std::slice::from_ref(&covered), 1, 3).expect("a round");
        assert_eq!(
            round.why,
            ["no source read covers “zorbium discovery history isolation”"]
        );
        assert_eq!(round.n, 2);
        // A sub-query that is the question itself is not a gap of its own.
        let m = meta(
            &[],
            &["What is the density of zorbium and who first isolated it?"],
        );
        assert_eq!(next(&m, &[covered], 1, 2), None);
        // Nothing relevant read: the question itself is searched again.
        let off = doc(0, false, &["The harbour festival draws crowds."]);
        let round = next(&m, &[off], 1, 2).expect("a round");
        assert_eq!(round.why, ["no source read is relevant to the question"]);
    }

    #[test]
    fn another_subject_s_value_is_no_value_read() {
        let m = JobMeta {
            query: "Wann wurde die Stadt Fikodren gegründet?".into(),
            data_points: vec!["Gründungsjahr".into()],
            language: "de".into(),
            ..Default::default()
        };
        let mut other = doc(
            0,
            true,
            &["Die Stadt Kosamel wurde im Jahr 1513 gegründet."],
        );
        (other.extracted_data).insert("Gründungsjahr".into(), Some("1513".into()));
        let round = next(&m, std::slice::from_ref(&other), 1, 2).expect("a round");
        assert_eq!(
            round.why,
            [
                "no source read states the Gründungsjahr",
                "no source read names Fikodren"
            ]
        );
        let named = doc(1, true, &["Fikodren liegt an der Küste."]);
        let round = next(&m, &[other, named], 1, 2).expect("a round");
        assert_eq!(round.why, ["no source read states the Gründungsjahr"]);
    }
}
