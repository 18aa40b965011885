//! HTML → markdown, and what the clean stage then reads out of markdown, on arbitrary input.
//!
//! Input: an even first byte (an HTML file starts with `<`) takes the bytes as an HTML
//! fragment; an odd one builds an element tree from them with `arbitrary` (tables, lists,
//! quotes, code and links nested in every way). The fragment is rendered to markdown with
//! `to_markdown_with` (elements marked `hidden` skipped).
//!
//! What must hold for the rendered markdown: the shape and size bound of `extract`'s output.
//! Then, for it and for the input read as markdown (an LLM's cleaned text is arbitrary too):
//! GFM table parsing, the judge's heuristic (a score in 0..=1), the judge's sample (within its
//! budget), cleaning's chunks (which lose nothing) and the cleaning guard (markdown compared
//! with itself passes) never panic and keep their promises; the extractive analysis (BM25,
//! data points, count/table/passage lookups) never panics.
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use scraper::Html;
use trawl_clean::{analysis, cleaning, guard, judge, markdown, tables};
use trawl_fuzz::{assert_markdown_ok, Node};
use url::Url;

const BASE: &str = "https://docs.example.org/guide/intro.html";

/// Questions of each form `lookup` answers, and a plain one.
const QUESTIONS: [&str; 4] = [
    "How many budget items are there?",
    "Compare the budget table",
    "What does the report say about budget cuts?",
    "budget",
];

fuzz_target!(|data: &[u8]| {
    let Some(&mode) = data.first() else {
        return;
    };
    let html = if mode % 2 == 0 {
        String::from_utf8_lossy(data).into_owned()
    } else {
        let u = Unstructured::new(&data[1..]);
        let Ok(nodes) = Vec::<Node>::arbitrary_take_rest(u) else {
            return;
        };
        let mut html = String::new();
        for n in &nodes {
            n.write(&mut html, 0);
        }
        html
    };

    let fragment = Html::parse_fragment(&html);
    let base = Url::parse(BASE).unwrap();
    let md = markdown::to_markdown_with(fragment.root_element(), Some(&base), &|e| {
        e.value().attr("hidden").is_some()
    });
    assert_markdown_ok(&html, BASE, &md);

    read(&md, usize::from(mode));
    if mode % 2 == 0 {
        read(&html, usize::from(mode));
    }
});

/// Everything the clean stage reads out of markdown, with the invariants each keeps.
fn read(md: &str, pick: usize) {
    let _ = tables::parse(md);

    let h = judge::heuristic(md);
    assert!((0.0..=1.0).contains(&h.score), "score {}", h.score);
    let budget = 64 + pick;
    let sample = judge::sample(md, budget);
    // The tail's cut may move back to a character boundary (3 bytes); the marker is 7.
    assert!(sample.len() <= budget + 10, "{} > {budget}", sample.len());

    let chunks = cleaning::chunks(md, 32 + pick);
    let joined = chunks.concat();
    assert!(
        md.starts_with(&joined) && md[joined.len()..].trim().is_empty(),
        "chunks lost text"
    );

    // Unchanged markdown loses nothing; only "too short" may be said of it.
    if let Err(why) = guard::check(md, md) {
        assert!(!why.contains("dropped"), "unchanged markdown: {why}");
    }

    let question = QUESTIONS[pick % QUESTIONS.len()];
    let a = analysis::analyse(question, "Budget report", md, 0.3);
    assert!(a.relevance.is_finite(), "relevance {}", a.relevance);
}
