//! `bench-<n>.test`: many small sites of generated articles for the fetch benchmark
//! (`scripts/bench-fetch`).
//!
//! Hosts `bench-0.test` … `bench-9999.test` each allow every agent in robots.txt and serve
//! `/page/<k>`: a 10–40 KB article page (head, navigation, article with a title and
//! paragraphs, sidebar, comments, footer) whose text is a pure function of `(n, k)`. Pages are
//! rendered per request rather than stored, so any number of hosts costs no memory; rendering
//! one takes well under a millisecond, small beside what the clients under test spend on it.
//!
//! The same hosts serve the fleet benchmark's sources at `/q/<k>/<i>` ([`fleet`]).
//!
//! `bench-stats.test` reports how politely the last client behaved: `/gaps` gives the spacing
//! between consecutive requests to each bench host (robots.txt and pages) as they arrived
//! (JSON: count, min, 1st percentile and median in milliseconds), `/reset` starts over.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::Json;

use super::content::{generic_doc, generic_subject};
use super::fleet;
use super::render::{render, simple_page, Block, Doc, Frame, Layout};
use super::rng::Rng;
use super::words::{thousands, Namer, MONTHS};

/// Host numbers served: `bench-0.test` up to `bench-9999.test`.
pub const MAX_HOSTS: usize = 10_000;
/// Page numbers served per host.
pub const MAX_PAGES: usize = 100_000;

/// The host that reports request spacing.
pub const STATS_HOST: &str = "bench-stats.test";

const ROBOTS: &str = "User-agent: *\nDisallow:\n";
const SEED: u64 = 0x6265_6e63_6800_0001;

/// Sentence shapes for the long part of an article; `{N}` a person, `{W}` an invented place
/// or thing, `{Y}` a year, `{M}` a month, `{C}` a count.
const SENTENCES: &[&str] = &[
    "{N} spent most of {M} {Y} in {W}, writing down everything that seemed to matter.",
    "By the end of the season the group around {N} had logged {C} separate observations.",
    "Nobody in {W} remembers exactly when the tradition started, only that it was before {Y}.",
    "The archive in {W} holds {C} letters on the subject, most of them never transcribed.",
    "{N} disagrees with that reading and says so at some length in a later essay.",
    "Costs rose sharply after {Y}, when the old supplier in {W} closed its doors.",
    "A survey of {C} households found the habit far more common than anyone expected.",
    "What changed in {M} was not the method but the people willing to try it.",
    "{N} keeps a list of the mistakes, and it is longer than the list of successes.",
    "Visitors to {W} are usually surprised by how small the whole operation is.",
    "The numbers are modest: roughly {C} people a year, most of them returning.",
    "In {Y} the local paper ran a short piece on it, which {N} still has framed.",
    "There is a second, less flattering version of the story that circulates in {W}.",
    "Critics point out that {C} is a small sample, and they are not wrong.",
    "{N} first heard of the idea from a neighbour in {M} and thought it was a joke.",
];

const SECTIONS: &[&str] = &[
    "How it started",
    "The first years",
    "What the records show",
    "Costs and trade-offs",
    "Disagreements",
    "Where things stand",
    "A note on sources",
    "Looking ahead",
];

/// The benchmark's URL list, hosts interleaved: page 0 of every host, then page 1 of every
/// host, and so on, as a crawl frontier of many sites usually looks.
pub fn urls(hosts: usize, pages_per_host: usize) -> Vec<String> {
    assert!(hosts <= MAX_HOSTS && pages_per_host <= MAX_PAGES);
    (0..pages_per_host)
        .flat_map(|k| (0..hosts).map(move |n| format!("http://bench-{n}.test/page/{k}")))
        .collect()
}

/// Answers for `bench-<n>.test`; `None` when `host` is not one of them.
pub fn handle(host: &str, path: &str) -> Option<Response> {
    if host == STATS_HOST {
        return Some(stats(path));
    }
    let n = host_number(host)?;
    let at = Instant::now();
    if path == "/robots.txt" {
        record(n, at);
        return Some(
            (
                [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
                ROBOTS,
            )
                .into_response(),
        );
    }
    let html = match path.strip_prefix("/q/") {
        Some(rest) => rest
            .split_once('/')
            .and_then(|(k, i)| Some((canonical_number(k)?, canonical_number(i)?)))
            .and_then(|(k, i)| fleet::page(n, k, i)),
        None => path
            .strip_prefix("/page/")
            .and_then(canonical_number)
            .filter(|&k| k < MAX_PAGES)
            .map(|k| page(n, k)),
    };
    match html {
        Some(html) => {
            record(n, at);
            Some(Html(html).into_response())
        }
        None => {
            let body = simple_page("404 Not Found", "<p>No such page.</p>");
            Some((StatusCode::NOT_FOUND, Html(body)).into_response())
        }
    }
}

fn record(host: usize, at: Instant) {
    GAPS.lock()
        .unwrap_or_else(|e| e.into_inner())
        .arrived(host, at);
}

/// Spacing of requests per host (robots.txt and pages), since the last reset.
#[derive(Default)]
struct Gaps {
    last: HashMap<usize, Instant>,
    gaps: Vec<Duration>,
}

impl Gaps {
    fn arrived(&mut self, host: usize, at: Instant) {
        if let Some(prev) = self.last.insert(host, at) {
            self.gaps.push(at.saturating_duration_since(prev));
        }
    }

    fn summary(&self) -> serde_json::Value {
        let mut ms: Vec<f64> = self.gaps.iter().map(|d| d.as_secs_f64() * 1e3).collect();
        ms.sort_by(f64::total_cmp);
        let at = |q: f64| {
            ms.get(((ms.len() as f64 - 1.0) * q).round() as usize)
                .copied()
        };
        serde_json::json!({
            "hosts": self.last.len(),
            "gaps": ms.len(),
            "min_ms": at(0.0),
            "p01_ms": at(0.01),
            "median_ms": at(0.5),
        })
    }
}

static GAPS: LazyLock<Mutex<Gaps>> = LazyLock::new(Mutex::default);

/// How the requests to bench hosts were spaced since the last reset: the JSON of
/// `bench-stats.test/gaps`, for a benchmark that runs simweb in its own process.
pub fn gaps() -> serde_json::Value {
    GAPS.lock().unwrap_or_else(|e| e.into_inner()).summary()
}

pub fn reset_gaps() {
    *GAPS.lock().unwrap_or_else(|e| e.into_inner()) = Gaps::default();
}

fn stats(path: &str) -> Response {
    match path {
        "/gaps" => Json(gaps()).into_response(),
        "/reset" => {
            reset_gaps();
            "reset\n".into_response()
        }
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

fn host_number(host: &str) -> Option<usize> {
    let n = canonical_number(host.strip_prefix("bench-")?.strip_suffix(".test")?)?;
    (n < MAX_HOSTS).then_some(n)
}

/// The words of `query`, lowercased: what the fleet's and the soak's questions are parsed from.
pub(super) fn words(query: &str) -> Vec<String> {
    query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Decimal digits without leading zeros, so each page has exactly one URL.
pub(super) fn canonical_number(s: &str) -> Option<usize> {
    if s.is_empty() || (s.len() > 1 && s.starts_with('0')) || !s.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    s.parse().ok()
}

/// The HTML of page `k` on `bench-<n>.test`.
pub fn page(n: usize, k: usize) -> String {
    let mut rng = Rng::new(SEED).fork(n as u64).fork(k as u64);
    let host = format!("bench-{n}.test");
    let subject = generic_subject(&mut rng);
    let mut doc = generic_doc(&mut rng, subject);
    doc.title = format!("{} (part {})", doc.title, k + 1);
    let target = rng.range(8_000, 34_000) as usize;
    let mut namer = Namer::default();
    let people: Vec<String> = (0..4).map(|_| namer.person(&mut rng)).collect();
    let places: Vec<String> = (0..4).map(|_| namer.word(&mut rng)).collect();
    grow(&mut doc, &mut rng, target, &people, &places);
    dress(&host, k, subject, &doc, &mut rng)
}

/// Generic articles are a few KB; grows `doc` to about `target` bytes of text with sections of
/// sentences naming `people` and `places`, so no two pages share their text.
pub(super) fn grow(
    doc: &mut Doc,
    rng: &mut Rng,
    target: usize,
    people: &[String],
    places: &[String],
) {
    let mut size: usize = doc.plain_text().len();
    while size < target {
        let heading = rng.pick(SECTIONS).to_owned();
        size += heading.len();
        doc.blocks.push(Block::H2(heading));
        for _ in 0..rng.range(2, 4) {
            let mut p = String::new();
            for _ in 0..rng.range(3, 6) {
                let s = rng
                    .pick(SENTENCES)
                    .replace("{N}", &people[rng.index(people.len())])
                    .replace("{W}", &places[rng.index(places.len())])
                    .replace("{Y}", &rng.range(1950, 2023).to_string())
                    .replace("{M}", rng.pick(MONTHS))
                    .replace("{C}", &thousands(rng.range(12, 250_000)));
                if !p.is_empty() {
                    p.push(' ');
                }
                p.push_str(&s);
            }
            size += p.len();
            doc.blocks.push(Block::P(p));
        }
    }
}

/// `doc` in a full article page on `host` (navigation, sidebar linking to pages near `k`,
/// comments, footer).
pub(super) fn dress(host: &str, k: usize, subject: &str, doc: &Doc, rng: &mut Rng) -> String {
    let nav: Vec<(String, String)> = [("/", "Home"), ("/page/0", "Latest"), ("/about", "About")]
        .iter()
        .map(|(h, t)| (h.to_string(), t.to_string()))
        .collect();
    let related: Vec<(String, String)> = (1..=4)
        .map(|i| {
            let other = (k + i) % MAX_PAGES;
            (
                format!("/page/{other}"),
                format!("More on {subject}, part {}", other + 1),
            )
        })
        .collect();
    let frame = Frame {
        host,
        layout: Layout::Article,
        nav: &nav,
        related: &related,
    };
    render(&frame, doc, rng)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn pages_are_deterministic_distinct_and_sized() {
        let mut seen = BTreeSet::new();
        for n in [0, 1, 7, 199, 9_999] {
            for k in [0, 1, 9, 42] {
                let html = page(n, k);
                assert_eq!(html, page(n, k));
                assert!(
                    (10_000..=40_000).contains(&html.len()),
                    "page {n}/{k} is {} bytes",
                    html.len()
                );
                assert!(html.contains("<article") && html.contains("<h1>"));
                assert!(html.contains("<footer") && html.contains("<nav"));
                assert!(seen.insert(html), "page {n}/{k} repeats another");
            }
        }
    }

    #[test]
    fn routes_only_bench_hosts() {
        assert!(handle("bench-3.test", "/page/2").is_some());
        assert!(handle("bench-10000.test", "/page/2").is_none());
        assert!(handle("bench-03.test", "/page/2").is_none());
        assert!(handle("daily-orbit.test", "/page/2").is_none());
        let robots = handle("bench-3.test", "/robots.txt").unwrap();
        assert_eq!(robots.status(), StatusCode::OK);
        assert_eq!(
            handle("bench-3.test", "/page/007").unwrap().status(),
            StatusCode::NOT_FOUND
        );
    }

    #[test]
    fn gaps_are_per_host() {
        let mut g = Gaps::default();
        let t = Instant::now();
        g.arrived(1, t);
        g.arrived(2, t + Duration::from_millis(5));
        g.arrived(1, t + Duration::from_millis(100));
        g.arrived(1, t + Duration::from_millis(300));
        let s = g.summary();
        assert_eq!(s["hosts"], 2);
        assert_eq!(s["gaps"], 2);
        assert_eq!(s["min_ms"], 100.0);
        assert_eq!(s["median_ms"], 200.0);
    }

    #[test]
    fn urls_interleave_hosts() {
        let u = urls(3, 2);
        assert_eq!(
            u,
            [
                "http://bench-0.test/page/0",
                "http://bench-1.test/page/0",
                "http://bench-2.test/page/0",
                "http://bench-0.test/page/1",
                "http://bench-1.test/page/1",
                "http://bench-2.test/page/1",
            ]
        );
    }
}
