//! Fleet-benchmark questions (`scripts/bench-fleet`): as many distinct research questions as a
//! batch needs, each answered by ten article pages spread over the `bench-<n>.test` hosts.
//!
//! Question `k` reads "What did the <Place> survey <k> find about <subject>?" ([`question`]).
//! SearXNG's JSON endpoint recognises it ([`parse`]) and answers [`RESULTS`] results over two
//! pages: [`SOURCES`] strong ones (title and snippet name the survey, its place and subject) and
//! five weak ones at the bottom that the default selection (`min_relevance` 0.3) leaves out, so
//! a job fetches ten sources as the default `max_urls` allows. Source `i` of question `k` lives
//! at `http://bench-<h>.test/q/<k>/<i>`, `h` drawn from [`HOSTS`] hosts: jobs in flight
//! together meet on a host now and then, so per-host politeness applies without serialising
//! the batch. Pages are 10–40 KB articles in the bench hosts' frame, about the question's
//! subject and place, so the clean stage finds them relevant; like every bench page they are
//! rendered per request, a pure function of `(k, i)`.
//!
//! The overlap set ([`overlap_question`], `scripts/bench-fleet --overlap`) is for the fleet's
//! page cache: question `k` of it is question `k % `[`OVERLAP_GROUPS`]` asked by a reader of
//! its own ("What did the <Place> survey <g> find about <subject>, as asked by reader <k>?"),
//! so the questions are distinct but [`parse`] reads each as its group's, search answers each
//! with its group's results, and every question of a group selects the same ten sources: a
//! thousand questions want 200 distinct pages.

use std::collections::BTreeSet;

use serde_json::Value;

use super::bench;
use super::content::{generic_doc, generic_subject};
use super::render::Block;
use super::rng::Rng;
use super::search::{result_json, searxng_response, PAGE_SIZE};
use super::words::Namer;

/// Hosts the sources are spread over: `bench-0.test` … `bench-999.test`.
pub const HOSTS: usize = 1000;
/// Results a question's search returns, over two pages.
pub const RESULTS: usize = 15;
/// The strong results, at the top: what a job fetches.
pub const SOURCES: usize = 10;
/// Questions are numbered below this (page paths stay short and parsing cheap).
pub const MAX_QUESTIONS: usize = 1_000_000;

const SEED: u64 = 0x666c_6565_7400_0001;

/// What question `k` is about: a place and a person of its own, and an everyday subject.
struct Survey {
    place: String,
    person: String,
    subject: &'static str,
}

fn survey(k: usize) -> Survey {
    let mut rng = Rng::new(SEED).fork(k as u64);
    let mut namer = Namer::default();
    Survey {
        subject: generic_subject(&mut rng),
        place: namer.word(&mut rng),
        person: namer.person(&mut rng),
    }
}

/// Question `k`.
pub fn question(k: usize) -> String {
    let s = survey(k);
    format!(
        "What did the {} survey {k} find about {}?",
        s.place, s.subject
    )
}

/// Questions `0..n`.
pub fn questions(n: usize) -> Vec<String> {
    assert!(n <= MAX_QUESTIONS);
    (0..n).map(question).collect()
}

/// Groups of the overlap set: its questions select the sources of fleet questions
/// `0..OVERLAP_GROUPS`, [`SOURCES`] each.
pub const OVERLAP_GROUPS: usize = 20;

/// Question `k` of the overlap set: fleet question `k % OVERLAP_GROUPS` (its place, survey and
/// subject, so [`parse`] reads it as that one and its search finds that one's sources) asked by
/// reader `k`, so no two questions of the set are the same text.
pub fn overlap_question(k: usize) -> String {
    let g = k % OVERLAP_GROUPS;
    let s = survey(g);
    format!(
        "What did the {} survey {g} find about {}, as asked by reader {k}?",
        s.place, s.subject
    )
}

/// Overlap questions `0..n`.
pub fn overlap_questions(n: usize) -> Vec<String> {
    assert!(n <= MAX_QUESTIONS);
    (0..n).map(overlap_question).collect()
}

/// The distinct source URLs the fleet questions among `questions` select (the strong results
/// of each, as a job fetches them): the pages a batch of them needs.
pub fn distinct_sources<S: AsRef<str>>(questions: &[S]) -> BTreeSet<String> {
    (questions.iter())
        .filter_map(|q| parse(q.as_ref()))
        .flat_map(|k| (0..SOURCES).map(move |i| source_url(k, i)))
        .collect()
}

/// The question number in `query`: a query holding "survey <k>" and question `k`'s place, so
/// a rewritten query (an LLM's sub-query) is still recognised and no corpus question is.
pub fn parse(query: &str) -> Option<usize> {
    let words = bench::words(query);
    let k = words
        .windows(2)
        .filter(|w| w[0] == "survey")
        .find_map(|w| bench::canonical_number(&w[1]))
        .filter(|&k| k < MAX_QUESTIONS)?;
    let place = survey(k).place.to_lowercase();
    words.contains(&place).then_some(k)
}

/// The host number of source `i` of question `k`.
pub fn host_of(k: usize, i: usize) -> usize {
    Rng::new(SEED)
        .fork(k as u64)
        .fork(1 + i as u64)
        .index(HOSTS)
}

pub fn source_url(k: usize, i: usize) -> String {
    format!("http://bench-{}.test/q/{k}/{i}", host_of(k, i))
}

fn title(s: &Survey, k: usize, i: usize) -> String {
    if i < SOURCES {
        format!(
            "The {} survey {k}: {}, report {}",
            s.place,
            s.subject,
            i + 1
        )
    } else {
        format!("Around {}: notes from the region, part {}", s.place, i + 1)
    }
}

fn snippet(s: &Survey, k: usize, i: usize) -> String {
    if i < SOURCES {
        format!(
            "What the {} survey {k} set out to find about {}, and what {} made of the results.",
            s.place, s.subject, s.person
        )
    } else {
        format!(
            "Local notes and letters from {}; the writer mentions the survey only in passing.",
            s.place
        )
    }
}

/// SearXNG's `format=json` answer for `query` if it is a fleet question, page `pageno`.
pub fn searxng_json(query: &str, pageno: usize) -> Option<Value> {
    let k = parse(query)?;
    let s = survey(k);
    let start = pageno.saturating_sub(1) * PAGE_SIZE;
    let results: Vec<Value> = (start..RESULTS.min(start + PAGE_SIZE))
        .map(|i| {
            let host = format!("bench-{}.test", host_of(k, i));
            let path = format!("/q/{k}/{i}");
            let score = (RESULTS - i) as f64 / RESULTS as f64;
            result_json(
                &source_url(k, i),
                &host,
                &path,
                &title(&s, k, i),
                &snippet(&s, k, i),
                i,
                score,
            )
        })
        .collect();
    Some(searxng_response(query, RESULTS, results))
}

/// The HTML of source `i` of question `k` as host `bench-<n>.test` serves it at `/q/<k>/<i>`;
/// `None` for another host or a number out of range, so each page has exactly one URL.
pub fn page(n: usize, k: usize, i: usize) -> Option<String> {
    if k >= MAX_QUESTIONS || i >= RESULTS || host_of(k, i) != n {
        return None;
    }
    let s = survey(k);
    let mut rng = Rng::new(SEED).fork(k as u64).fork(1 + i as u64).fork(2);
    let mut doc = generic_doc(&mut rng, s.subject);
    doc.title = title(&s, k, i);
    let intro = if i < SOURCES {
        format!(
            "This is one of several write-ups of the {place} survey {k}. The survey set out to \
             find what people in {place} actually do about {subject}, and {person} led most of \
             the interviews. What follows is this report's reading of the results.",
            place = s.place,
            subject = s.subject,
            person = s.person
        )
    } else {
        snippet(&s, k, i)
    };
    doc.blocks.insert(0, Block::P(intro));
    let target = rng.range(8_000, 34_000) as usize;
    let mut namer = Namer::default();
    let mut people = vec![s.person.clone()];
    let mut places = vec![s.place.clone()];
    people.extend((0..3).map(|_| namer.person(&mut rng)));
    places.extend((0..3).map(|_| namer.word(&mut rng)));
    bench::grow(&mut doc, &mut rng, target, &people, &places);
    Some(bench::dress(
        &format!("bench-{n}.test"),
        k,
        s.subject,
        &doc,
        &mut rng,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simweb::Corpus;

    #[test]
    fn questions_are_distinct_and_parse_back() {
        let qs = questions(2000);
        assert_eq!(qs.iter().collect::<BTreeSet<_>>().len(), qs.len());
        for (k, q) in qs.iter().enumerate() {
            assert_eq!(parse(q), Some(k), "{q}");
        }
        // Rewritten the way an LLM's sub-query might be, it is still question k.
        let s = survey(42);
        assert_eq!(
            parse(&format!("{} survey 42 {} results", s.place, s.subject)),
            Some(42)
        );
        assert_eq!(parse("What did the survey 42 find?"), None);
        assert_eq!(parse(&format!("the {} survey 042", s.place)), None);
    }

    #[test]
    fn corpus_questions_are_not_fleet_questions() {
        for q in Corpus::generate().questions() {
            assert_eq!(parse(&q.query), None, "{}", q.query);
        }
    }

    #[test]
    fn results_page_and_point_at_served_pages() {
        let q = question(7);
        let p1 = searxng_json(&q, 1).expect("a fleet question");
        let p2 = searxng_json(&q, 2).expect("a fleet question");
        let p3 = searxng_json(&q, 3).expect("a fleet question");
        let r1 = p1["results"].as_array().expect("results");
        let r2 = p2["results"].as_array().expect("results");
        assert_eq!((r1.len(), r2.len()), (PAGE_SIZE, RESULTS - PAGE_SIZE));
        assert!(p3["results"].as_array().expect("results").is_empty());
        assert_eq!(r2[0]["positions"][0], 11);
        for (i, r) in r1.iter().chain(r2).enumerate() {
            assert_eq!(r["url"], source_url(7, i));
            let html = page(host_of(7, i), 7, i).expect("served");
            assert!(
                (10_000..=45_000).contains(&html.len()),
                "source {i} is {} bytes",
                html.len()
            );
            assert!(html.contains("<article") && html.contains(&survey(7).place));
            assert_eq!(html.contains("survey 7"), i < SOURCES, "source {i}");
        }
        assert!(page((host_of(7, 0) + 1) % HOSTS, 7, 0).is_none());
        assert!(page(host_of(7, 0), 7, RESULTS).is_none());
        assert_eq!(page(host_of(7, 3), 7, 3), page(host_of(7, 3), 7, 3));
    }

    #[test]
    fn overlap_questions_are_distinct_and_share_their_groups_sources() {
        let n = 1000;
        let qs = overlap_questions(n);
        assert_eq!(qs.iter().collect::<BTreeSet<_>>().len(), n);
        let plain: BTreeSet<String> = questions(n).into_iter().collect();
        for (k, q) in qs.iter().enumerate() {
            assert_eq!(parse(q), Some(k % OVERLAP_GROUPS), "{q}");
            assert!(!plain.contains(q), "{q}");
        }
        // Search answers each with its group's results: the same pages for the whole group.
        let a = searxng_json(&overlap_question(3), 1).expect("a fleet question");
        let b = searxng_json(&overlap_question(3 + OVERLAP_GROUPS), 1).expect("a fleet question");
        assert_eq!(a["results"], b["results"]);
        assert_eq!(a["results"][0]["url"], source_url(3, 0));
        let distinct = distinct_sources(&qs);
        assert_eq!(distinct.len(), OVERLAP_GROUPS * SOURCES);
        assert_eq!(distinct_sources(&qs[..5]).len(), 5 * SOURCES);
        assert_eq!(distinct_sources(&questions(30)).len(), 30 * SOURCES);
    }

    #[test]
    fn sources_spread_over_hosts() {
        let hosts: BTreeSet<usize> = (0..100)
            .flat_map(|k| (0..SOURCES).map(move |i| host_of(k, i)))
            .collect();
        // 1000 draws over 1000 hosts: about 63 % distinct.
        assert!(hosts.len() > 550, "{} hosts", hosts.len());
    }
}
