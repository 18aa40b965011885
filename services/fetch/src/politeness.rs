//! What a fetch waits for before it may go, shared by every worker of the fleet through the
//! store: the host's robots.txt, its request rate, and its requests in flight. Each gate either
//! lets the task through or says how long until it should look again; only a host's turn that
//! comes within `fetch.wait_in_worker_ms` is booked and waited for in the worker.
//!
//! - [`robots`]: the origin's rules (cached per origin) and the Crawl-delay they ask for.
//! - [`take_turn`]: the host's rate, one request per interval (the configured minimum, the
//!   Crawl-delay, or the last Retry-After, whichever is longest), booked ahead so that tasks
//!   for one host wake one by one.
//! - [`Contact`]: one of the host's `fetch.max_per_host` requests in flight, sent an interval
//!   after the host's last contact (the later of the last send and the last request's end):
//!   with one request per host at a time, the host sees its requests an interval apart
//!   however the machine delays them, as Nutch and Heritrix space theirs.
//! - [`hold`]: a Retry-After that holds the host for everyone.

use std::time::Duration;

use tracing::warn;
use trawl_config::FetchConfig;
use trawl_messages::Outcome;
use trawl_pipeline::{Runtime, StageError};
use trawl_store::{Cache, Entry, Turn};
use url::Url;

use crate::http::Fetcher;
use crate::metrics::{deferred, labels, METRICS};
use crate::robots::{decide, rules_for, Rules};

/// How soon to look again when another worker is fetching the host's robots.txt.
const ROBOTS_WAIT: Duration = Duration::from_millis(250);
/// How soon to look again when every slot of a host is taken, through the broker; and the
/// longest sleep between two looks in the worker, which start at [`SLOT_POLL`].
const SLOT_WAIT: Duration = Duration::from_millis(250);
const SLOT_POLL: Duration = Duration::from_millis(10);

/// What robots.txt says about one URL.
pub enum Robots {
    /// Allowed, at most this often.
    Allowed { crawl_delay: Option<Duration> },
    /// Another worker is fetching the rules: look again then.
    Later(Duration),
    /// The source ends here (disallowed, or the guard refused the origin).
    End(Outcome),
}

/// The origin's robots.txt rules applied to `url` for `fetch.user_agent`.
pub async fn robots(rt: &Runtime, fetcher: &Fetcher, url: &Url) -> Result<Robots, StageError> {
    let Some(rules) = rules_for(rt, fetcher, url).await? else {
        deferred("robots", ROBOTS_WAIT);
        return Ok(Robots::Later(ROBOTS_WAIT));
    };
    if let Rules::Refused(reason) = rules {
        METRICS.ssrf_refusals.inc();
        return Ok(Robots::End(Outcome::Failed { reason }));
    }
    let decision = decide(&rules, &rt.config.fetch.user_agent, url);
    if !decision.allowed {
        robots_decision("disallowed");
        return Ok(Robots::End(Outcome::RobotsDisallowed));
    }
    Ok(Robots::Allowed {
        crawl_delay: decision.crawl_delay,
    })
}

/// Takes the host's turn at its rate: its interval once the request may go, or how long to
/// wait (taking nothing). A turn within `fetch.wait_in_worker_ms` is booked and waited for
/// here, which costs the broker nothing; a later one is the caller's to wait for through the
/// broker. The request then waits for its [`Contact`], which counts the interval from the
/// host's last contact and so, almost always, lets it go at once.
pub(crate) async fn take_turn(
    rt: &Runtime,
    host: &str,
    known: &Known,
    crawl_delay: Option<Duration>,
) -> Result<Result<Duration, Duration>, StageError> {
    let interval = interval(&rt.config.fetch, known.backoff_ms, crawl_delay);
    let within = Duration::from_millis(rt.config.fetch.wait_in_worker_ms);
    match rt.store.rate_reserve(host, interval, within).await? {
        Turn::Reserved(wait) => {
            if !wait.is_zero() {
                METRICS.host_wait.observe(wait.as_secs_f64());
                trawl_store::outside::waiting(tokio::time::sleep(wait)).await;
            }
            Ok(Ok(interval))
        }
        Turn::Busy(wait) => {
            deferred("rate", wait);
            Ok(Err(wait))
        }
    }
}

/// The name a host's politeness state is kept under.
pub(crate) fn host_of(url: &Url) -> String {
    url.host_str().unwrap_or_default().to_ascii_lowercase()
}

/// What the fleet remembers of a host: the level its pages last needed and the Retry-After of
/// its last 429 or 503.
#[derive(Default)]
pub(crate) struct Known {
    pub level: Option<u64>,
    pub backoff_ms: Option<u64>,
}

impl Known {
    /// Both, in one round trip to the store.
    pub async fn read(rt: &Runtime, host: &str) -> Result<Known, StageError> {
        let found = (rt.store)
            .cache_get_many(&[(Cache::HostLevel, host), (Cache::HostBackoff, host)])
            .await?;
        // Numbers kept as text (a level, a Retry-After in ms).
        let number = |i: usize| {
            std::str::from_utf8(found.get(i)?.as_deref()?)
                .ok()?
                .parse()
                .ok()
        };
        Ok(Known {
            level: number(0),
            backoff_ms: number(1),
        })
    }
}

/// `host`'s interval now: the configured minimum, `crawl_delay` or its last Retry-After,
/// whichever is longest.
pub(crate) async fn host_interval(
    rt: &Runtime,
    host: &str,
    crawl_delay: Option<Duration>,
) -> Result<Duration, StageError> {
    let known = Known::read(rt, host).await?;
    Ok(interval(&rt.config.fetch, known.backoff_ms, crawl_delay))
}

/// The host's interval: the configured minimum, its Crawl-delay or its last Retry-After (ms),
/// whichever is longest.
fn interval(cfg: &FetchConfig, backoff_ms: Option<u64>, crawl_delay: Option<Duration>) -> Duration {
    Duration::from_millis(cfg.min_interval_ms.max(backoff_ms.unwrap_or(0)))
        .max(crawl_delay.unwrap_or_default())
}

/// The site said when to come back: holds `host` for every worker, and keeps the interval long
/// enough afterwards.
pub async fn hold(rt: &Runtime, host: &str, hold: Duration) -> Result<(), StageError> {
    rt.store.rate_hold(host, hold).await?;
    deferred("retry_after", hold);
    let ms = hold.as_millis().to_string();
    let ttl = (hold * 10).max(Duration::from_secs(600));
    rt.store
        .cache_put(Cache::HostBackoff, host, ms.as_bytes(), ttl)
        .await?;
    Ok(())
}

/// A request to a host under way: one of its `fetch.max_per_host` slots (leased, so a crashed
/// worker's frees itself), taken when the host's interval since its last contact has passed.
/// Held until [`Contact::leave`], which makes the request's end the host's last contact.
pub(crate) struct Contact {
    host: String,
    token: String,
    interval: Duration,
}

impl Contact {
    /// Waits in the worker, within `fetch.wait_in_worker_ms`, until `host` may be sent the
    /// request `token` (its interval counted from the later of the last send and the last
    /// request's end) and takes a slot for it; `Err(wait)` when that is further off, for the
    /// caller to wait through the broker. A host whose every slot is taken is asked again
    /// after a short sleep that doubles, up to [`SLOT_WAIT`]: only the tasks whose turn has
    /// come ask, and asking costs less than a round trip through a delay queue.
    pub async fn enter(
        rt: &Runtime,
        host: &str,
        token: String,
        interval: Duration,
    ) -> Result<Result<Contact, Duration>, StageError> {
        let cfg = &rt.config.fetch;
        let lease = Duration::from_secs(cfg.timeout_secs.max(cfg.browser_timeout_secs) + 30);
        let within = Duration::from_millis(cfg.wait_in_worker_ms);
        let started = tokio::time::Instant::now();
        let mut poll = SLOT_POLL;
        loop {
            let left = within.saturating_sub(started.elapsed());
            let entry = (rt.store)
                .host_enter(host, &token, cfg.max_per_host, lease, interval, left)
                .await?;
            match entry {
                Entry::Go(wait) => {
                    let waited = started.elapsed() + wait;
                    if !waited.is_zero() {
                        METRICS.host_wait.observe(waited.as_secs_f64());
                    }
                    if !wait.is_zero() {
                        trawl_store::outside::waiting(tokio::time::sleep(wait)).await;
                    }
                    let host = host.to_owned();
                    return Ok(Ok(Contact {
                        host,
                        token,
                        interval,
                    }));
                }
                Entry::Later(wait) => {
                    deferred("rate", wait);
                    return Ok(Err(wait));
                }
                Entry::Full if poll < left => {
                    trawl_store::outside::waiting(tokio::time::sleep(poll)).await;
                    poll = (poll * 2).min(SLOT_WAIT);
                }
                Entry::Full => {
                    deferred("slot", SLOT_WAIT);
                    return Ok(Err(SLOT_WAIT));
                }
            }
        }
    }

    /// The interval after this request is at least `delay` (a Crawl-delay it taught us).
    pub fn at_least(mut self, delay: Option<Duration>) -> Contact {
        self.interval = self.interval.max(delay.unwrap_or_default());
        self
    }

    /// Frees the slot and makes now the host's last contact; if the store cannot be told, the
    /// lease frees the slot.
    pub async fn leave(self, rt: &Runtime) {
        if let Err(e) = (rt.store)
            .host_leave(&self.host, &self.token, self.interval)
            .await
        {
            warn!(host = %self.host, error = %e, "could not release a host slot; its lease will");
        }
    }
}

pub(crate) fn robots_decision(decision: &str) {
    METRICS
        .robots
        .get_or_create(&labels(&[("decision", decision)]))
        .inc();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_of_minimum_crawl_delay_and_retry_after_wins() {
        let cfg = FetchConfig {
            min_interval_ms: 1000,
            ..FetchConfig::default()
        };
        let secs = Duration::from_secs;
        assert_eq!(interval(&cfg, None, None), secs(1));
        assert_eq!(interval(&cfg, Some(5000), Some(secs(2))), secs(5));
        assert_eq!(interval(&cfg, Some(500), Some(secs(3))), secs(3));
    }

    /// Five tasks for one host at once, 300 ms apart: the four turns within the second a task
    /// may wait are booked and waited for here; the fifth (1.2 s off) goes back to the broker.
    #[tokio::test]
    async fn turns_that_come_soon_are_waited_for_here_and_later_ones_handed_back() {
        let mut config = trawl_config::Config::default();
        config.output.url = "memory://".into();
        config.fetch.min_interval_ms = 300;
        config.fetch.wait_in_worker_ms = 1_000;
        let rt = Runtime::embedded(config).unwrap();
        let tasks: Vec<_> = (0..5)
            .map(|_| {
                let rt = rt.clone();
                tokio::spawn(async move {
                    let known = Known::default();
                    take_turn(&rt, "h.test", &known, None).await.unwrap()
                })
            })
            .collect();
        let (mut went, mut handed_back) = (0, Vec::new());
        for task in tasks {
            match task.await.unwrap() {
                Ok(interval) => {
                    assert_eq!(interval, Duration::from_millis(300));
                    went += 1;
                }
                Err(wait) => handed_back.push(wait),
            }
        }
        assert_eq!(went, 4);
        assert!(
            handed_back.len() == 1 && handed_back[0] > Duration::from_secs(1),
            "{handed_back:?}"
        );
    }

    /// With one request per host at a time, each request goes an interval after the previous
    /// one's end, and a task that finds the host's slot taken waits for it in the worker.
    #[tokio::test]
    async fn a_hosts_requests_go_an_interval_after_the_previous_ones_end() {
        let mut config = trawl_config::Config::default();
        config.output.url = "memory://".into();
        config.fetch.max_per_host = 1;
        let rt = Runtime::embedded(config).unwrap();
        let (interval, takes) = (Duration::from_millis(100), Duration::from_millis(50));
        let requests: Vec<_> = (0..3)
            .map(|i| {
                let rt = rt.clone();
                tokio::spawn(async move {
                    let contact = Contact::enter(&rt, "c.test", format!("t{i}"), interval)
                        .await
                        .unwrap()
                        .expect("the slot frees within wait_in_worker_ms");
                    let sent = tokio::time::Instant::now();
                    tokio::time::sleep(takes).await;
                    let ended = tokio::time::Instant::now();
                    contact.leave(&rt).await;
                    (sent, ended)
                })
            })
            .collect();
        let mut times = Vec::new();
        for r in requests {
            times.push(r.await.unwrap());
        }
        times.sort();
        for pair in times.windows(2) {
            let gap = pair[1].0 - pair[0].1;
            assert!(gap >= interval, "sent {gap:?} after the previous one's end");
        }
    }
}
