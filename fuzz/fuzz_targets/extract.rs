//! Main-content extraction, as the clean stage runs it, on arbitrary page bytes.
//!
//! Input: one byte choosing the page's URL from `URLS`, then the page. The bytes are decoded
//! the way the fetch stage decodes a page (`charset=` sniffed in the head), then extracted.
//!
//! What must hold: no panic and no runaway time (libFuzzer's `-timeout`); the visible text
//! counted is at most twice the page's characters (a word counts its length plus one); the
//! markdown has no trailing whitespace and no run of blank lines outside fenced code; and it
//! stays within a constant factor of the page (`GROWTH`): a hostile page must not turn into
//! far more markdown than it had HTML, since the clean worker holds both, and a worker killed
//! for memory gets the same page redelivered to the next one.
#![no_main]

use libfuzzer_sys::fuzz_target;
use trawl_fuzz::assert_markdown_ok;

/// Page URLs: with a path and query, odd but valid, not a URL at all, and non-ASCII.
const URLS: [&str; 4] = [
    "https://news.example.com/2024/05/budget.html?page=2#top",
    "http://a.test/",
    "not a url",
    "https://例え.テスト/パス/ページ?q=ü",
];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, page)) = data.split_first() else {
        return;
    };
    let url = URLS[usize::from(pick) % URLS.len()];
    let html = trawl_fetch::http::decode(page, "text/html");
    let x = trawl_clean::extract::extract(&html, url);

    // The measure counts each word's characters plus one (a word is at least one character).
    assert!(
        x.text_chars <= 2 * html.chars().count(),
        "{} text chars from a page of {}",
        x.text_chars,
        html.chars().count()
    );
    assert_markdown_ok(&html, url, &x.markdown);
});
