//! What a fetch waits for before it may go, shared by every worker of the fleet through the
//! store: the host's robots.txt, its request rate, and its requests in flight. Each gate either
//! lets the task through or says how long until it should look again; only a host's turn that
//! comes within `fetch.wait_in_worker_ms` is booked and waited for in the worker.
//!
//! - [`robots`]: the origin's rules (cached per origin) and the Crawl-delay they ask for.
//! - [`take_turn`]: the host's rate, one request per interval (the configured minimum, the
//!   Crawl-delay, or the last Retry-After, whichever is longest), and [`gate`], which keeps
//!   the interval between the requests as sent.
//! - [`Slot`]: one of the host's `fetch.max_per_host` requests in flight, leased so a crashed
//!   worker's slot frees itself.
//! - [`hold`]: a Retry-After that holds the host for everyone.

use std::time::Duration;

use tracing::warn;
use trawl_config::FetchConfig;
use trawl_messages::Outcome;
use trawl_pipeline::{Runtime, StageError};
use trawl_store::{rate_wait, Cache, Turn};
use url::Url;

use crate::http::Fetcher;
use crate::metrics::{deferred, labels, METRICS};
use crate::robots::{decide, rules_for, Rules};

/// How soon to look again when another worker is fetching the host's robots.txt.
const ROBOTS_WAIT: Duration = Duration::from_millis(250);
/// How soon to look again when every slot of a host is taken.
const SLOT_WAIT: Duration = Duration::from_millis(250);

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
/// broker. The request then passes [`gate`] right before it is sent.
pub(crate) async fn take_turn(
    rt: &Runtime,
    host: &str,
    crawl_delay: Option<Duration>,
) -> Result<Result<Duration, Duration>, StageError> {
    let backoff = cached_number(rt, Cache::HostBackoff, host).await?;
    let cfg = &rt.config.fetch;
    let interval = interval(cfg, backoff, crawl_delay);
    let within = Duration::from_millis(cfg.wait_in_worker_ms);
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

/// Holds a request whose turn has come until `interval` has passed since the host's last
/// request was sent, by any worker. Turns are booked an interval apart, but what happens
/// between a turn and its send (the host's slot, a connection) takes longer for some requests
/// than others, and the host sees the sends: booked alone, two requests could arrive closer
/// than the interval. Almost always it goes at once; the store's round trip is its cost.
pub(crate) async fn gate(rt: &Runtime, host: &str, interval: Duration) -> Result<(), StageError> {
    let waited = rate_wait::take_turn(rt.store.as_ref(), &format!("sent:{host}"), interval).await?;
    if !waited.is_zero() {
        METRICS.host_wait.observe(waited.as_secs_f64());
    }
    Ok(())
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

/// One of the host's requests in flight, held until [`Slot::release`].
pub struct Slot {
    key: String,
    token: String,
}

impl Slot {
    /// Takes one of `host`'s slots for the request known as `token`: `Err(wait)` when every
    /// slot is taken. A task turned away here has spent its turn at the rate limit: the host
    /// stays polite, only a little slower while it is saturated.
    pub async fn take(
        rt: &Runtime,
        host: &str,
        token: String,
    ) -> Result<Result<Slot, Duration>, StageError> {
        let cfg = &rt.config.fetch;
        let key = format!("host:{host}");
        let lease = Duration::from_secs(cfg.timeout_secs.max(cfg.browser_timeout_secs) + 30);
        if !(rt.store)
            .slot_acquire(&key, &token, cfg.max_per_host, lease)
            .await?
        {
            deferred("slot", SLOT_WAIT);
            return Ok(Err(SLOT_WAIT));
        }
        // Counted once per request made, not per deferral.
        robots_decision("allowed");
        Ok(Ok(Slot { key, token }))
    }

    /// Frees the slot; if the store cannot be told, the lease frees it.
    pub async fn release(self, rt: &Runtime) {
        if let Err(e) = rt.store.slot_release(&self.key, &self.token).await {
            warn!(slot = %self.key, error = %e, "could not release a host slot; its lease will");
        }
    }
}

fn robots_decision(decision: &str) {
    METRICS
        .robots
        .get_or_create(&labels(&[("decision", decision)]))
        .inc();
}

/// A number kept as text in a host cache (a level, a Retry-After in ms).
pub(crate) async fn cached_number(
    rt: &Runtime,
    cache: Cache,
    host: &str,
) -> Result<Option<u64>, StageError> {
    Ok(rt
        .store
        .cache_get(cache, host)
        .await?
        .and_then(|v| String::from_utf8(v).ok()?.parse().ok()))
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
                tokio::spawn(async move { take_turn(&rt, "h.test", None).await.unwrap() })
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

    /// Requests to a host pass the gate at least its interval apart, however their turns came.
    #[tokio::test]
    async fn the_gate_spaces_sends_by_the_interval() {
        let mut config = trawl_config::Config::default();
        config.output.url = "memory://".into();
        let rt = Runtime::embedded(config).unwrap();
        let interval = Duration::from_millis(100);
        let started = tokio::time::Instant::now();
        for _ in 0..3 {
            gate(&rt, "g.test", interval).await.unwrap();
        }
        assert!(started.elapsed() >= 2 * interval, "{:?}", started.elapsed());
    }
}
