//! robots.txt handling as the fetch stage does it, on arbitrary bytes.
//!
//! Input: `AGENT\nPATH\nROBOTS.TXT`: a product token, a path (with query) on the origin, and
//! the file. The file goes through the same steps as a fetched one: decoded to text, kept as
//! `Rules::Parsed`, cached as JSON in the store and read back, then `decide` for the URL.
//!
//! What must hold: no panic; the cached rules read back equal; a decision is the same every
//! time; `/robots.txt` itself is always allowed; a Crawl-delay is positive and within
//! `MAX_CRAWL_DELAY`; the fixed rules (allow all, disallow all, refused) mean what they say.
#![no_main]

use libfuzzer_sys::fuzz_target;
use trawl_fetch::robots::{decide, origin, Rules, MAX_CRAWL_DELAY};
use url::Url;

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(3, |&b| b == b'\n');
    let agent = String::from_utf8_lossy(parts.next().unwrap_or_default());
    let path = String::from_utf8_lossy(parts.next().unwrap_or_default());
    let body = trawl_fetch::http::decode(parts.next().unwrap_or_default(), "text/plain");

    let base = Url::parse("https://site.test/").unwrap();
    // The fetch stage only ever asks about http(s) URLs.
    let url = base
        .join(&path)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https") && u.has_host())
        .unwrap_or(base);
    let robots_txt = Url::parse(&format!("{}/robots.txt", origin(&url))).unwrap();

    let rules = Rules::Parsed(body);
    let cached = serde_json::to_vec(&rules).expect("rules serialise");
    let read: Rules = serde_json::from_slice(&cached).expect("cached rules read back");
    assert_eq!(read, rules, "cached rules changed");

    let decision = decide(&rules, &agent, &url);
    assert_eq!(decide(&read, &agent, &url), decision, "a decision changed");
    if let Some(delay) = decision.crawl_delay {
        assert!(!delay.is_zero() && delay <= MAX_CRAWL_DELAY, "{delay:?}");
    }
    assert!(
        decide(&rules, &agent, &robots_txt).allowed,
        "/robots.txt refused"
    );

    let fixed = [
        (Rules::AllowAll, true),
        (Rules::DisallowAll, false),
        (Rules::Refused("refused: private".into()), false),
        (Rules::Unreachable("http 503".into()), false),
    ];
    for (rules, allowed) in fixed {
        let d = decide(&rules, &agent, &url);
        let expected = allowed || url.path() == "/robots.txt";
        assert_eq!(d.allowed, expected, "{rules:?} for {url}");
        assert_eq!(d.crawl_delay, None);
    }
});
