//! `[fetch]`: how pages are fetched (the escalation levels, the browser, per-host pacing, the
//! shallow crawl) and which addresses the SSRF guard lets through.

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};

use serde::{Deserialize, Serialize};

use crate::check;

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct FetchConfig {
    /// Host pattern (`*.test`, `example.org`) to `ip:port`, applied before DNS.
    pub resolve: BTreeMap<String, String>,
    /// Networks (CIDR) that may be fetched although private or loopback. Empty by default.
    pub allow_networks: Vec<String>,
    /// Highest escalation level: 0 honest HTTP, 1 browser-like HTTP, 2 real browser, 3 stealth
    /// browser. A batch may lower it.
    pub max_level: u8,
    /// WebDriver endpoint (chromedriver or a Selenium pod) for levels 2 and 3.
    pub webdriver_url: String,
    /// Browser sessions one browser worker keeps open (and so pages it renders at once).
    pub browser_sessions: usize,
    /// Time a browser page may take to load and settle.
    pub browser_timeout_secs: u64,
    /// Extra Chromium command-line switches (a Selenium grid's own image may need some).
    pub browser_args: Vec<String>,
    /// Where the browser worker's SSRF proxy listens: Chromium reaches the web only through it.
    /// The default suits a browser on the same machine or in the same pod (a sidecar). Whatever
    /// can reach it can fetch through it (within the guard): keep it reachable by the browser
    /// alone.
    pub browser_proxy_listen: String,
    /// The proxy's `host:port` as the browser sees it, when the browser runs elsewhere (a
    /// Selenium container: this worker's service name and a fixed `browser_proxy_listen`
    /// port). Empty: the address the proxy bound.
    pub browser_proxy_advertise: String,
    /// Product token matched against robots.txt groups, and sent in the User-Agent header.
    pub user_agent: String,
    /// Total time for one plain-HTTP fetch, body included (a slow drip ends here).
    pub timeout_secs: u64,
    /// Longest wait for the next bytes of a response (a stalled server ends here).
    pub idle_timeout_secs: u64,
    /// Bodies larger than this end as `too_large`.
    pub max_bytes: u64,
    pub max_redirects: usize,
    /// Minimum spacing between two requests to one host, across the whole fleet: from the
    /// later of the previous request's send and its end.
    pub min_interval_ms: u64,
    /// A task whose host's next turn comes within this long books that turn and waits for it
    /// in the worker, its message unacknowledged (it holds little of the worker's
    /// `broker.max_in_flight_bytes`); a longer wait goes back to the broker through a delay
    /// queue. 0: every wait goes through the broker.
    pub wait_in_worker_ms: u64,
    /// Requests in flight to one host at once, across the whole fleet. With 1 (the default)
    /// a host sees its requests at least `min_interval_ms` apart however the fleet's machines
    /// delay them, since the interval counts from the previous request's end; with more, sends
    /// are spaced by the interval but a delayed request may arrive closer to the next.
    pub max_per_host: u32,
    /// How long the level that got a host's page is remembered, so later tasks start there.
    pub level_memory_secs: u64,
    /// Shallow crawl: links followed from a fetched page, in hops (0: off, the default).
    pub crawl_depth: u8,
    /// Pages a job's crawl may add, across all its sources.
    pub crawl_max_pages: u32,
    /// Follow only links to the page's own site (its host and subdomains).
    pub crawl_same_domain: bool,
}

impl Default for FetchConfig {
    fn default() -> Self {
        FetchConfig {
            resolve: BTreeMap::new(),
            allow_networks: Vec::new(),
            max_level: 3,
            webdriver_url: "http://127.0.0.1:9515".into(),
            user_agent: "trawl".into(),
            browser_sessions: 2,
            browser_timeout_secs: 45,
            browser_args: Vec::new(),
            browser_proxy_listen: "127.0.0.1:0".into(),
            browser_proxy_advertise: String::new(),
            timeout_secs: 20,
            idle_timeout_secs: 10,
            max_bytes: 10 * 1024 * 1024,
            max_redirects: 5,
            min_interval_ms: 1000,
            wait_in_worker_ms: 5000,
            max_per_host: 1,
            level_memory_secs: 24 * 3600,
            crawl_depth: 0,
            crawl_max_pages: 10,
            crawl_same_domain: true,
        }
    }
}

impl FetchConfig {
    /// Problems with this section, for [`crate::Config::validate`].
    pub(crate) fn problems(&self, problems: &mut Vec<String>) {
        check::within(problems, "fetch.max_level", self.max_level, 0..=3);
        if self.max_per_host == 0 || self.browser_sessions == 0 {
            problems
                .push("fetch.max_per_host and fetch.browser_sessions must be at least 1".into());
        }
        for (pattern, addr) in &self.resolve {
            if !host_pattern(pattern) {
                problems.push(format!(
                    "fetch.resolve.\"{pattern}\" is not a host pattern: use a host name \
                     (example.org) or a domain with its subdomains (*.example.org)"
                ));
            }
            if addr.parse::<SocketAddr>().is_err() {
                problems.push(format!(
                    "fetch.resolve.\"{pattern}\" must be ip:port (got {addr:?})"
                ));
            }
        }
        for net in &self.allow_networks {
            if parse_cidr(net).is_none() {
                problems.push(format!(
                    "fetch.allow_networks: {net:?} is not a CIDR like 10.0.0.0/8"
                ));
            }
        }
        if self.user_agent.trim().is_empty() {
            problems.push("fetch.user_agent must not be empty".into());
        }
        if self.browser_proxy_listen.parse::<SocketAddr>().is_err() {
            problems.push(format!(
                "fetch.browser_proxy_listen must be ip:port (got {:?})",
                self.browser_proxy_listen
            ));
        }
        let advertise = &self.browser_proxy_advertise;
        if !advertise.is_empty()
            && !advertise.rsplit_once(':').is_some_and(|(host, port)| {
                !host.is_empty() && port.parse::<u16>().is_ok_and(|p| p > 0)
            })
        {
            problems.push(format!(
                "fetch.browser_proxy_advertise must be host:port or empty (got {advertise:?})"
            ));
        }
    }
}

/// A `fetch.resolve` key: a host name, or `*.` and a domain (which matches the domain and its
/// subdomains). A bare `*` would match nothing, so it is refused rather than ignored.
fn host_pattern(pattern: &str) -> bool {
    let host = pattern.strip_prefix("*.").unwrap_or(pattern);
    !host.is_empty()
        && host.len() <= 253
        && host.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        })
}

/// Parses `a.b.c.d/n` or `x::y/n`.
pub fn parse_cidr(s: &str) -> Option<(IpAddr, u8)> {
    let (addr, len) = s.split_once('/')?;
    let addr: IpAddr = addr.parse().ok()?;
    let len: u8 = len.parse().ok()?;
    let max = if addr.is_ipv4() { 32 } else { 128 };
    (len <= max).then_some((addr, len))
}

#[cfg(test)]
mod tests {
    use crate::tests::env;
    use crate::Config;

    #[test]
    fn resolve_keys_must_be_host_patterns() {
        let file = |patterns: &[&str]| {
            let entries: Vec<String> = (patterns.iter())
                .map(|p| format!("\"{p}\" = \"127.0.0.1:9000\""))
                .collect();
            format!("[fetch]\nresolve = {{ {} }}\n", entries.join(", "))
        };
        let dir = std::env::temp_dir().join(format!("trawl-resolve-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("trawl.toml");
        std::fs::write(&path, file(&["*", "a b.test", "*.test", "Example.org"])).unwrap();
        let err = Config::load(Some(&path), &env(&[]))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("fetch.resolve.\"*\" is not a host pattern")
                && err.contains("\"a b.test\" is not a host pattern")
                && !err.contains("*.test\" is not")
                && !err.contains("Example.org\" is not"),
            "{err}"
        );
    }
}
