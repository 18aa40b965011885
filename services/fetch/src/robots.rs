//! robots.txt with RFC 9309 semantics, cached per origin.
//!
//! | robots.txt answer | rules |
//! |---|---|
//! | 2xx | parsed (the first 500 KiB) |
//! | 4xx other than 429 ("unavailable") | allow everything |
//! | 429, 5xx, unreachable ("unreachable") | disallow everything, cached for a shorter time |
//!
//! Redirects are followed (up to the fetcher's limit) and the rules apply to the original origin.
//! `/robots.txt` itself is always allowed. One worker per origin fetches at a time across the
//! fleet (a lock in the store); the others wait briefly for its cached answer. The fetch keeps
//! the host's interval and takes one of its slots, as a page's does.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use trawl_pipeline::{Runtime, StageError};
use trawl_store::Cache;
use url::Url;

use crate::block::Block;
use crate::http::{Fetched, Fetcher};
use crate::politeness::{host_interval, host_of, Contact};

/// At most this much of a robots.txt is parsed (RFC 9309 asks for at least 500 KiB).
pub const MAX_ROBOTS_BYTES: usize = 500 * 1024;

/// The longest Crawl-delay honoured; a site asking for more is fetched at this pace (as
/// Heritrix caps it). More would outlast any job's deadline, and a delay such as `1e30` seconds
/// is no `Duration` at all.
pub const MAX_CRAWL_DELAY: Duration = Duration::from_secs(300);

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "rules", content = "body", rename_all = "snake_case")]
pub enum Rules {
    AllowAll,
    DisallowAll,
    Parsed(String),
    /// The SSRF guard refused the origin itself (its name resolves only to private addresses):
    /// nothing there may be fetched, robots.txt or not.
    Refused(String),
    /// robots.txt could not be read (a server error, a timeout, a 429 or an interstitial), for
    /// the reason given: nothing is fetched there until it can be (RFC 9309 §2.3.1.4).
    Unreachable(String),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Decision {
    pub allowed: bool,
    pub crawl_delay: Option<Duration>,
}

/// Applies `rules` to `url` for product token `agent`.
pub fn decide(rules: &Rules, agent: &str, url: &Url) -> Decision {
    if url.path() == "/robots.txt" {
        return Decision {
            allowed: true,
            crawl_delay: None,
        };
    }
    match rules {
        Rules::AllowAll => Decision {
            allowed: true,
            crawl_delay: None,
        },
        Rules::DisallowAll | Rules::Refused(_) | Rules::Unreachable(_) => Decision {
            allowed: false,
            crawl_delay: None,
        },
        Rules::Parsed(body) => {
            match texting_robots::Robot::new(agent, normalize_rules(body).as_bytes()) {
                Ok(robot) => Decision {
                    allowed: robot.allowed(&normalize_percent(&url[url::Position::BeforePath..])),
                    crawl_delay: robot
                        .delay
                        .filter(|d| d.is_finite() && *d > 0.0)
                        .map(|d| {
                            Duration::try_from_secs_f32(d)
                                .map_or(MAX_CRAWL_DELAY, |d| d.min(MAX_CRAWL_DELAY))
                        })
                        .filter(|d| !d.is_zero()),
                },
                // A file that cannot be parsed says nothing we could honour.
                Err(_) => Decision {
                    allowed: true,
                    crawl_delay: None,
                },
            }
        }
    }
}

/// RFC 9309 §2.2.2: a percent-encoded octet is compared unencoded when it is an unreserved
/// character (`/%7Euser` is `/~user`), and encoded otherwise, whatever the case of its hex
/// digits (`/a%3cd` is `/a%3Cd`). Both the rules and the URL are brought to that one form.
fn normalize_percent(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('%') {
        return text.into();
    }
    let bytes = text.as_bytes();
    let octet_at = |i: usize| -> Option<u8> {
        let pair = bytes.get(i + 1..i + 3)?;
        // Two hex digits exactly: from_str_radix alone would take "+1" too.
        if !pair.iter().all(u8::is_ascii_hexdigit) {
            return None;
        }
        u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()
    };
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], octet_at(i)) {
            (b'%', Some(octet)) => {
                if octet.is_ascii_alphanumeric() || matches!(octet, b'-' | b'.' | b'_' | b'~') {
                    out.push(octet);
                } else {
                    out.extend(format!("%{octet:02X}").bytes());
                }
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    // Only ASCII was rewritten (non-ASCII octets stay encoded), so this is still UTF-8.
    String::from_utf8_lossy(&out).into_owned().into()
}

/// The robots.txt body with each `Allow` and `Disallow` path in [`normalize_percent`]'s form.
fn normalize_rules(body: &str) -> std::borrow::Cow<'_, str> {
    if !body.contains('%') {
        return body.into();
    }
    body.lines()
        .map(|line| match line.split_once(':') {
            Some((key, value))
                if key.trim().eq_ignore_ascii_case("allow")
                    || key.trim().eq_ignore_ascii_case("disallow") =>
            {
                format!("{key}:{}\n", normalize_percent(value))
            }
            _ => format!("{line}\n"),
        })
        .collect::<String>()
        .into()
}

pub fn origin(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// Turns the answer to `GET /robots.txt` into rules; the bool says whether it was an error.
fn rules_from(fetched: Fetched) -> (Rules, bool) {
    match fetched {
        Fetched::Page(page) => {
            let mut body = page.body;
            if body.len() > MAX_ROBOTS_BYTES {
                let mut cut = MAX_ROBOTS_BYTES;
                while !body.is_char_boundary(cut) {
                    cut -= 1;
                }
                body.truncate(cut);
            }
            (Rules::Parsed(body), false)
        }
        Fetched::Unsupported(_) => (Rules::AllowAll, false),
        // 401 and 403 are "unavailable" (4xx): allow. 429, 503 and an interstitial in place
        // of the file are "unreachable": disallow until we can read it.
        Fetched::Blocked {
            block: Block::Status(status),
            ..
        } if status != 429 && status != 503 => (Rules::AllowAll, false),
        Fetched::Failed(reason) if reason.starts_with("http 4") => (Rules::AllowAll, false),
        Fetched::Refused(refusal) => (Rules::Refused(refusal.to_string()), true),
        Fetched::Blocked { block, .. } => (Rules::Unreachable(block.describe()), true),
        Fetched::Transient(reason) | Fetched::Failed(reason) => (Rules::Unreachable(reason), true),
        Fetched::TooLarge => (
            Rules::Unreachable("larger than fetch.max_bytes".into()),
            true,
        ),
        // Asked without validators, a 304 is a 3xx the file is not behind: as a 404.
        Fetched::NotModified => (Rules::AllowAll, false),
    }
}

/// The rules for `url`'s origin, from the cache or the network; `None` while another worker
/// is fetching them (a worker then comes back shortly instead of waiting on its delivery; the
/// lock's expiry frees the origin if that worker died).
pub async fn rules_for(
    rt: &Runtime,
    fetcher: &Fetcher,
    url: &Url,
) -> Result<Option<Rules>, StageError> {
    let origin = origin(url);
    if let Some(rules) = cached(rt, fetcher, &origin).await? {
        return Ok(Some(rules));
    }
    let lock = format!("robots:{origin}");
    let Some(lock) = trawl_store::lock(&rt.store, &lock, Duration::from_secs(30)).await? else {
        return Ok(None);
    };
    let rules = fetch_rules(rt, fetcher, url, &origin).await;
    // Let go on every path, errors included: the other workers' tasks on this origin would
    // otherwise wait out the lock.
    lock.release().await?;
    rules
}

/// [`rules_for`] under the origin's lock: fetches and caches the rules.
async fn fetch_rules(
    rt: &Runtime,
    fetcher: &Fetcher,
    url: &Url,
    origin: &str,
) -> Result<Option<Rules>, StageError> {
    // Another worker may have fetched them between the look before the lock and the lock: it
    // cached them, then let the lock go.
    if let Some(rules) = cached(rt, fetcher, origin).await? {
        return Ok(Some(rules));
    }
    let robots_url = Url::parse(&format!("{origin}/robots.txt"))
        .map_err(|e| StageError::permanent(format!("bad robots URL for {origin}: {e}")))?;
    // robots.txt is a request to the host like any other: it keeps the host's interval.
    let host = host_of(url);
    let interval = host_interval(rt, &host, None).await?;
    let Ok(contact) = Contact::enter(rt, &host, format!("robots:{origin}"), interval).await? else {
        return Ok(None);
    };
    let fetched = trawl_store::outside::waiting(fetcher.get(&robots_url, 0)).await;
    let (rules, is_error) = rules_from(fetched);
    // The next request waits the Crawl-delay these rules ask for, counted from this one.
    let crawl_delay = decide(&rules, &rt.config.fetch.user_agent, url).crawl_delay;
    contact.at_least(crawl_delay).leave(rt).await;
    let cfg = &rt.config.store;
    let ttl = Duration::from_secs(if is_error {
        cfg.robots_error_ttl_secs
    } else {
        cfg.robots_ttl_secs
    });
    let bytes = serde_json::to_vec(&rules).map_err(|e| StageError::permanent(e.to_string()))?;
    rt.store
        .cache_put(Cache::Robots, origin, &bytes, ttl)
        .await?;
    fetcher.robots.put(origin, &rules);
    Ok(Some(rules))
}

async fn cached(
    rt: &Runtime,
    fetcher: &Fetcher,
    origin: &str,
) -> Result<Option<Rules>, StageError> {
    if let Some(rules) = fetcher.robots.get(origin) {
        return Ok(Some(rules));
    }
    let rules: Option<Rules> = (rt.store.cache_get(Cache::Robots, origin).await?)
        .and_then(|bytes| serde_json::from_slice(&bytes).ok());
    if let Some(rules) = &rules {
        fetcher.robots.put(origin, rules);
    }
    Ok(rules)
}

/// The rules a worker read lately, for [`Memo::TTL`] at most: every page of a host would
/// otherwise ask the store for its origin's rules and decode them again. A change to a site's
/// robots.txt reaches the fleet through the store's cache as before, at most this much later.
#[derive(Default)]
pub(crate) struct Memo(std::sync::Mutex<std::collections::HashMap<String, (Instant, Rules)>>);

impl Memo {
    const TTL: Duration = Duration::from_secs(30);
    /// Origins kept at most; past it the expired go, or all.
    const MAX: usize = 10_000;

    fn get(&self, origin: &str) -> Option<Rules> {
        let memo = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let (at, rules) = memo.get(origin)?;
        (at.elapsed() < Self::TTL).then(|| rules.clone())
    }

    fn put(&self, origin: &str, rules: &Rules) {
        let mut memo = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if memo.len() >= Self::MAX {
            memo.retain(|_, (at, _)| at.elapsed() < Self::TTL);
            if memo.len() >= Self::MAX {
                memo.clear();
            }
        }
        memo.insert(origin.to_owned(), (Instant::now(), rules.clone()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 9309 §2.2.2 (issue 25, item 8): percent-encoding is compared in one form.
    #[test]
    fn percent_encodings_match_their_unencoded_and_other_case_forms() {
        let cases = [
            ("Disallow: /%7Euser", "http://h.test/~user/page", false),
            ("Disallow: /~user", "http://h.test/%7Euser/page", false),
            ("Disallow: /%7euser", "http://h.test/~user", false),
            ("Disallow: /a%3cd", "http://h.test/a%3Cd", false),
            ("Disallow: /a%3Cd", "http://h.test/a%3cd", false),
            // A reserved character stays encoded: %2F is not a path separator.
            ("Disallow: /a%2Fb", "http://h.test/a/b", true),
            ("Disallow: /a/b", "http://h.test/a%2fb", true),
            ("Disallow: /%E4%B8%AD", "http://h.test/%e4%b8%ad/x", false),
            ("Disallow: /private", "http://h.test/public?q=%7E", true),
            ("Disallow: /a%+1", "http://h.test/a%+1", false),
            ("Disallow: /a%01", "http://h.test/a%+1", true),
        ];
        for (rule, url, allowed) in cases {
            let rules = Rules::Parsed(format!("User-agent: *\n{rule}\n"));
            let decision = decide(&rules, "trawl", &Url::parse(url).unwrap());
            assert_eq!(decision.allowed, allowed, "{rule} for {url}");
        }
    }

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn applies_groups_and_crawl_delay() {
        let rules = Rules::Parsed(
            "User-agent: *\nDisallow: /private/\nCrawl-delay: 2\n\nUser-agent: trawl\nDisallow: /\n".into(),
        );
        let d = decide(&rules, "otherbot", &url("http://a.test/private/x"));
        assert!(!d.allowed);
        let d = decide(&rules, "otherbot", &url("http://a.test/public"));
        assert!(d.allowed && d.crawl_delay == Some(Duration::from_secs(2)));
        assert!(!decide(&rules, "trawl", &url("http://a.test/public")).allowed);
        assert!(decide(&rules, "trawl", &url("http://a.test/robots.txt")).allowed);
    }

    /// Found writing the robots fuzz target (fuzz/corpus/robots/regress_huge_crawl_delay): a
    /// Crawl-delay past what a `Duration` holds panicked the fetch stage on every page of the
    /// site.
    #[test]
    fn crawl_delay_is_capped_and_never_zero() {
        let delay = |value: &str| {
            let rules = Rules::Parsed(format!("User-agent: *\nCrawl-delay: {value}\n"));
            decide(&rules, "trawl", &url("http://a.test/x")).crawl_delay
        };
        assert_eq!(delay("1e30"), Some(MAX_CRAWL_DELAY));
        assert_eq!(delay("86400"), Some(MAX_CRAWL_DELAY));
        assert_eq!(delay("2.5"), Some(Duration::from_millis(2500)));
        for none in ["0", "1e-30", "-3", "inf", "NaN", "soon"] {
            assert_eq!(delay(none), None, "{none}");
        }
    }

    #[test]
    fn status_classes_follow_rfc_9309() {
        assert_eq!(
            rules_from(Fetched::Failed("http 404".into())).0,
            Rules::AllowAll
        );
        assert_eq!(
            rules_from(Fetched::Blocked {
                block: Block::Status(403),
                retry_after: None
            })
            .0,
            Rules::AllowAll
        );
        assert_eq!(
            rules_from(Fetched::Transient("http 500".into())),
            (Rules::Unreachable("http 500".into()), true)
        );
        let (rules, _) = rules_from(Fetched::Blocked {
            block: Block::Status(429),
            retry_after: None,
        });
        assert!(matches!(rules, Rules::Unreachable(_)), "{rules:?}");
        assert!(!decide(&rules, "trawl", &url("http://a.test/x")).allowed);
        assert_eq!(
            rules_from(Fetched::Transient("timed out".into())).0,
            Rules::Unreachable("timed out".into())
        );
        let refused = trawl_guard::Refusal::Resolves("intranet.example".into());
        assert_eq!(
            rules_from(Fetched::Refused(refused)),
            (
                Rules::Refused(
                    "refused: intranet.example resolves only to private or reserved addresses"
                        .into()
                ),
                true
            )
        );
    }

    /// An error once the origin's lock is taken lets the lock go, so the origin's other tasks
    /// need not wait out its 30 s. An opaque origin has no robots.txt URL: the error comes
    /// after the lock.
    #[tokio::test]
    async fn an_error_under_the_lock_lets_it_go() {
        let rt = Runtime::embedded(trawl_config::Config::default()).unwrap();
        let fetcher = Fetcher::new(&rt.config.fetch).unwrap();
        let page = url("file:///srv/page.html");
        assert!(rules_for(&rt, &fetcher, &page).await.is_err());
        let lock = format!("robots:{}", origin(&page));
        let free = rt.store.try_lock(&lock, Duration::from_secs(30)).await;
        assert!(free.unwrap().is_some(), "{lock} left locked");
    }

    /// While another worker fetches an origin's robots.txt, a task gets `None` at once (and
    /// comes back later) instead of waiting on its delivery; no request is made.
    #[tokio::test]
    async fn a_busy_origin_answers_none_at_once() {
        let rt = Runtime::embedded(trawl_config::Config::default()).unwrap();
        let fetcher = Fetcher::new(&rt.config.fetch).unwrap();
        let page = url("http://busy.test/page");
        let lock = format!("robots:{}", origin(&page));
        assert!(rt
            .store
            .try_lock(&lock, Duration::from_secs(30))
            .await
            .unwrap()
            .is_some());
        assert_eq!(rules_for(&rt, &fetcher, &page).await.unwrap(), None);
        // Once the holder has cached the rules, everyone reads them.
        let rules = serde_json::to_vec(&Rules::DisallowAll).unwrap();
        (rt.store)
            .cache_put(
                Cache::Robots,
                &origin(&page),
                &rules,
                Duration::from_secs(60),
            )
            .await
            .unwrap();
        assert_eq!(
            rules_for(&rt, &fetcher, &page).await.unwrap(),
            Some(Rules::DisallowAll)
        );
        // Read once, the rules stay in the worker for Memo::TTL: a page of the same origin
        // does not ask the store again.
        rt.store.delete_all().await.unwrap();
        assert_eq!(
            rules_for(&rt, &fetcher, &page).await.unwrap(),
            Some(Rules::DisallowAll)
        );
    }
}
