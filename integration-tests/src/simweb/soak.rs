//! Soak questions (the chaos suite's soak case): as many questions as a run needs, each doing
//! the least work every stage can do. Question `k` reads "What does soak note <k> say about
//! <subject>?" ([`question`]); SearXNG's JSON endpoint answers it with one result on its first
//! page and nothing after ([`searxng_json`]), and that result is a page of well under 1 KB at
//! `http://soak-<h>.test/n/<k>` ([`page`]), relevant to the question, so the job still passes
//! through every stage (search, fetch, clean, synthesize) and ends `analysed` with a cited
//! report. The sources spread over [`HOSTS`] hosts, few enough that a fetch worker has met
//! them all early in a run (its per-host state is then warm) and many enough that per-host
//! politeness does not serialise the batch. Pages are rendered per request.

use serde_json::Value;

use super::bench::{canonical_number, words};
use super::render::escape;
use super::search::{result_json, searxng_response};

/// Hosts the pages are spread over: `soak-0.test` … `soak-49.test`.
pub const HOSTS: usize = 50;
/// Questions are numbered below this.
pub const MAX_QUESTIONS: usize = 10_000_000;

const ROBOTS: &str = "User-agent: *\nDisallow:\n";
const SUBJECTS: &[&str] = &[
    "bread", "rain", "bicycles", "tea", "maps", "bridges", "bees",
];

fn subject(k: usize) -> &'static str {
    SUBJECTS[k % SUBJECTS.len()]
}

/// Question `k`.
pub fn question(k: usize) -> String {
    format!("What does soak note {k} say about {}?", subject(k))
}

/// The question number in `query`: "soak note <k>" followed, somewhere, by question `k`'s
/// subject, so no corpus or fleet question is taken for a soak one.
pub fn parse(query: &str) -> Option<usize> {
    let words = words(query);
    let k = words
        .windows(3)
        .filter(|w| w[0] == "soak" && w[1] == "note")
        .find_map(|w| canonical_number(&w[2]))
        .filter(|&k| k < MAX_QUESTIONS)?;
    words.iter().any(|w| w == subject(k)).then_some(k)
}

pub fn host_of(k: usize) -> usize {
    k % HOSTS
}

pub fn source_url(k: usize) -> String {
    format!("http://soak-{}.test/n/{k}", host_of(k))
}

fn title(k: usize) -> String {
    format!("Soak note {k}: {}", subject(k))
}

/// SearXNG's `format=json` answer for `query` if it is a soak question: its one source on
/// page 1, an empty page after.
pub fn searxng_json(query: &str, pageno: usize) -> Option<Value> {
    let k = parse(query)?;
    let results = if pageno <= 1 {
        let host = format!("soak-{}.test", host_of(k));
        let snippet = format!("What soak note {k} says about {}.", subject(k));
        vec![result_json(
            &source_url(k),
            &host,
            &format!("/n/{k}"),
            &title(k),
            &snippet,
            0,
            1.0,
        )]
    } else {
        Vec::new()
    };
    Some(searxng_response(query, 1, results))
}

/// The HTML of question `k`'s page.
pub fn page(k: usize) -> String {
    let s = subject(k);
    let t = escape(&title(k));
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title></head>\n\
         <body><article><h1>{t}</h1>\n\
         <p>Soak note {k} is about {s}. It says that {s} matters most to the people who deal \
         with {s} every day, and that the note was written to record what they said.</p>\n\
         <p>The note lists three findings about {s}: it is older than most people think, it \
         changes from town to town, and nobody who was asked wanted to do without it.</p>\n\
         </article></body></html>\n"
    )
}

/// What a `soak-<n>.test` host serves: robots.txt allowing everything, and `/n/<k>` for the
/// questions whose source it holds; `None` for any other host.
pub fn handle(host: &str, path: &str) -> Option<axum::response::Response> {
    use axum::http::{header, StatusCode};
    use axum::response::{Html, IntoResponse};
    let n = canonical_number(host.strip_prefix("soak-")?.strip_suffix(".test")?)?;
    if n >= HOSTS {
        return None;
    }
    if path == "/robots.txt" {
        return Some(
            (
                [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
                ROBOTS,
            )
                .into_response(),
        );
    }
    let k = path
        .strip_prefix("/n/")
        .and_then(canonical_number)
        .filter(|&k| k < MAX_QUESTIONS && host_of(k) == n);
    Some(match k {
        Some(k) => Html(page(k)).into_response(),
        None => (StatusCode::NOT_FOUND, Html("<p>No such note.</p>")).into_response(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simweb::{fleet, Corpus};

    #[test]
    fn questions_parse_back_and_no_other_question_does() {
        for k in 0..500 {
            let q = question(k);
            assert_eq!(parse(&q), Some(k), "{q}");
        }
        assert_eq!(parse("What does soak note 3 say about tea?"), Some(3));
        assert_eq!(parse("What does soak note 3 say about rain?"), None);
        assert_eq!(parse("soak note 03 rain"), None);
        for q in Corpus::generate().questions() {
            assert_eq!(parse(&q.query), None, "{}", q.query);
        }
        for q in fleet::questions(100) {
            assert_eq!(parse(&q), None, "{q}");
        }
    }

    #[test]
    fn one_small_result_served_by_its_host() {
        let q = question(123);
        let first = searxng_json(&q, 1).expect("a soak question");
        let results = first["results"].as_array().expect("results");
        assert_eq!(results.len(), 1);
        assert_eq!(results[0]["url"], source_url(123));
        assert!(searxng_json(&q, 2).expect("a soak question")["results"]
            .as_array()
            .expect("results")
            .is_empty());
        let html = page(123);
        assert!(
            html.len() < 1024 && html.contains("Soak note 123"),
            "{html}"
        );
        let host = format!("soak-{}.test", host_of(123));
        assert_eq!(handle(&host, "/n/123").expect("served").status(), 200);
        assert_eq!(handle(&host, "/n/124").expect("served").status(), 404);
        assert_eq!(handle(&host, "/robots.txt").expect("served").status(), 200);
        assert!(handle("soak-50.test", "/n/50").is_none());
        assert!(handle("bench-1.test", "/n/1").is_none());
    }
}
