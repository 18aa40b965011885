//! One function per fuzz target: its input format and what must hold for any input.

use arbitrary::{Arbitrary, Unstructured};
use scraper::Html;
use trawl_clean::{analysis, cleaning, guard, judge, markdown as md, tables};
use trawl_fetch::robots::{decide, origin, Rules, MAX_CRAWL_DELAY};
use trawl_messages::envelope::{with_attempt, Body};
use trawl_messages::{Envelope, FetchTask, FetchedDoc, ResearchResult, SearchTask, SynthesizeTask};
use url::Url;

use crate::shape::{assert_markdown_ok, Node};

/// Envelope decoding of every body the queues carry, from arbitrary bytes.
///
/// What must hold (docs/design.md, Messages): decoding never panics, whatever arrives; a
/// message that decodes re-encodes to bytes that decode to the same value; the header `peek`
/// reads agrees with the full decode; and a retry (`with_attempt`, which the worker republishes
/// without decoding the body) decodes to the same message with only the attempt changed.
pub fn envelope(data: &[u8]) {
    let header = Envelope::<()>::peek(data);
    let decoded = [
        envelope_as::<SearchTask>(data),
        envelope_as::<FetchTask>(data),
        envelope_as::<FetchedDoc>(data),
        envelope_as::<SynthesizeTask>(data),
        envelope_as::<ResearchResult>(data),
    ];
    // One kind per message: at most one body type accepts it, and only if the header did.
    let accepted = decoded.iter().filter(|&&ok| ok).count();
    assert!(accepted <= 1, "one message decoded as {accepted} kinds");
    if accepted == 1 {
        assert!(header.is_ok(), "decoded but its header did not: {header:?}");
    }
}

/// Decodes `data` as an envelope of `B` and checks what follows from success; true if it
/// decoded.
fn envelope_as<B: Body + Clone + PartialEq + std::fmt::Debug>(data: &[u8]) -> bool {
    let Ok(env) = Envelope::<B>::decode(data) else {
        return false;
    };
    let header = Envelope::<()>::peek(data).expect("a decoded envelope's header peeks");
    assert_eq!(header.kind, Some(env.kind));
    assert_eq!(header.job_id, Some(env.job_id));
    assert_eq!(header.batch_id, Some(env.batch_id));
    assert_eq!(header.attempt, env.attempt);

    let encoded = env.encode();
    let again = Envelope::<B>::decode(&encoded).expect("a re-encoded envelope decodes");
    assert_eq!(again, env, "decode(encode(x)) != x");
    assert_eq!(again.encode(), encoded, "encoding is not stable");

    let attempt = env.attempt.wrapping_add(1);
    let retried = with_attempt(data, attempt).expect("a decoded envelope takes an attempt");
    let retried = Envelope::<B>::decode(&retried).expect("a retried envelope decodes");
    assert_eq!(
        retried,
        Envelope { attempt, ..env },
        "a retry changed more than the attempt"
    );
    true
}

/// robots.txt handling as the fetch stage does it, on arbitrary bytes.
///
/// Input: `AGENT\nPATH\nROBOTS.TXT`: a product token, a path (with query) on the origin, and
/// the file. The file goes through the same steps as a fetched one: decoded to text, kept as
/// `Rules::Parsed`, cached as JSON in the store and read back, then `decide` for the URL.
///
/// What must hold: no panic; the cached rules read back equal; a decision is the same every
/// time; `/robots.txt` itself is always allowed; a Crawl-delay is positive and within
/// `MAX_CRAWL_DELAY`; the fixed rules (allow all, disallow all, refused, unreachable) mean what
/// they say.
pub fn robots(data: &[u8]) {
    let mut parts = data.splitn(3, |&b| b == b'\n');
    let agent = String::from_utf8_lossy(parts.next().unwrap_or_default());
    let path = String::from_utf8_lossy(parts.next().unwrap_or_default());
    let body = trawl_files::decode(parts.next().unwrap_or_default(), "text/plain", None);

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
}

/// Page URLs for `extract`: with a path and query, odd but valid, not a URL at all, and
/// non-ASCII.
const URLS: [&str; 4] = [
    "https://news.example.com/2024/05/budget.html?page=2#top",
    "http://a.test/",
    "not a url",
    "https://例え.テスト/パス/ページ?q=ü",
];

/// Main-content extraction, as the clean stage runs it, on arbitrary page bytes.
///
/// Input: one byte choosing the page's URL from `URLS`, then the page. The bytes are decoded
/// the way the fetch stage decodes a page (`charset=` sniffed in the head), then extracted.
///
/// What must hold: no panic and no runaway time (libFuzzer's `-timeout`); the visible text
/// counted is at most twice the page's characters (a word counts its length plus one); the
/// markdown has no trailing whitespace and no run of blank lines outside fenced code; and it
/// stays within a constant factor of the page (`GROWTH`): a hostile page must not turn into
/// far more markdown than it had HTML, since the clean worker holds both, and a worker killed
/// for memory gets the same page redelivered to the next one.
pub fn extract(data: &[u8]) {
    let Some((&pick, page)) = data.split_first() else {
        return;
    };
    let url = URLS[usize::from(pick) % URLS.len()];
    // The page's domain guides the charset detector when the page names no charset.
    let tld = Url::parse(url).ok().and_then(|u| trawl_files::tld_of(&u));
    let html = trawl_files::decode(page, "text/html", tld.as_deref());
    let x = trawl_clean::extract::extract(&html, url);

    // The measure counts each word's characters plus one (a word is at least one character).
    assert!(
        x.text_chars <= 2 * html.chars().count(),
        "{} text chars from a page of {}",
        x.text_chars,
        html.chars().count()
    );
    assert_markdown_ok(&html, url, &x.markdown);
}

const BASE: &str = "https://docs.example.org/guide/intro.html";

/// Questions of each form `lookup` answers, and a plain one.
const QUESTIONS: [&str; 4] = [
    "How many budget items are there?",
    "Compare the budget table",
    "What does the report say about budget cuts?",
    "budget",
];

/// HTML → markdown, and what the clean stage then reads out of markdown, on arbitrary input.
///
/// Input: an even first byte (an HTML file starts with `<`) takes the bytes as an HTML
/// fragment; an odd one builds an element tree from them with `arbitrary` (tables, lists,
/// quotes, code and links nested in every way). The fragment is rendered to markdown with
/// `to_markdown_with` (elements marked `hidden` skipped).
///
/// What must hold for the rendered markdown: the shape and size bound of `extract`'s output.
/// Then, for it and for the input read as markdown (an LLM's cleaned text is arbitrary too):
/// GFM table parsing, the judge's heuristic (a score in 0..=1), the judge's sample (within its
/// budget), cleaning's chunks (which lose nothing) and the cleaning guard (markdown compared
/// with itself passes) never panic and keep their promises; the extractive analysis (BM25,
/// data points, count/table/passage lookups) never panics.
pub fn markdown(data: &[u8]) {
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
    let rendered = md::to_markdown_with(fragment.root_element(), Some(&base), &|e| {
        e.value().attr("hidden").is_some()
    });
    assert_markdown_ok(&html, BASE, &rendered);

    read(&rendered, usize::from(mode));
    if mode % 2 == 0 {
        read(&html, usize::from(mode));
    }
}

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
        let too_short = |l: &guard::Loss| matches!(l, guard::Loss::TooShort(_));
        assert!(why.0.iter().all(too_short), "unchanged markdown: {why}");
    }

    let question = QUESTIONS[pick % QUESTIONS.len()];
    let a = analysis::analyse(question, "Budget report", md, 0.3);
    assert!(a.relevance.is_finite(), "relevance {}", a.relevance);
}
