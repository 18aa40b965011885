//! What the fleet benchmarks (`bench_fleet`, `bench_export`) share: where the release binaries
//! are, and the settings that put a fleet of processes on the shared services and on simweb.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::Context;

/// The directory of the release binaries: `explicit`, else this example's own target
/// directory (target/release/examples/NAME → target/release).
pub fn release_bins(explicit: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(dir) = explicit {
        return Ok(dir.to_owned());
    }
    let exe = std::env::current_exe().context("failed to find this executable")?;
    exe.parent()
        .and_then(|p| p.parent())
        .map(PathBuf::from)
        .context("odd executable path; give --bins")
}

/// A fleet's settings on the broker at `amqp` and the store at `redis` under `namespace`,
/// searching and fetching simweb at `web` only, on top of any TRAWL__* variables of the
/// environment (to try other settings, e.g. TRAWL__BROKER__PREFETCH). Jobs get a deadline
/// past `timeout_secs`, so a slow run measures every job rather than synthesising the late
/// ones at their deadline.
pub fn simweb_fleet(
    amqp: &str,
    redis: &str,
    namespace: &str,
    web: SocketAddr,
    timeout_secs: u64,
) -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = std::env::vars()
        .filter(|(k, _)| k.starts_with("TRAWL__"))
        .collect();
    let settings = [
        ("TRAWL__BROKER__URL", amqp.to_owned()),
        ("TRAWL__STORE__URL", redis.to_owned()),
        ("TRAWL__BROKER__NAMESPACE", namespace.to_owned()),
        ("TRAWL__STORE__PREFIX", namespace.to_owned()),
        ("TRAWL__SEARCH__SEARXNG_URL", format!("http://{web}")),
        // simweb only: a question it did not answer must not fall through to the real web.
        ("TRAWL__SEARCH__PROVIDERS", "[\"searxng\"]".into()),
        ("TRAWL__SEARCH__NEWS_PROVIDERS", "[\"searxng\"]".into()),
        (
            "TRAWL__FETCH__RESOLVE",
            format!("{{ \"*.test\" = \"{web}\" }}"),
        ),
        ("TRAWL__FETCH__ALLOW_NETWORKS", "[\"127.0.0.1/32\"]".into()),
        // Plain HTTP levels only: the browser levels are outside what these measure.
        ("TRAWL__FETCH__MAX_LEVEL", "1".into()),
        ("TRAWL__JOB__DEADLINE_SECS", (timeout_secs * 2).to_string()),
        // Several processes on one machine: each its own metrics port.
        ("TRAWL__METRICS__ADDR", "127.0.0.1:0".into()),
        ("TRAWL__BROKER__SHUTDOWN_GRACE_SECS", "5".into()),
    ];
    for (k, v) in settings {
        env.insert(k.to_owned(), v);
    }
    env
}
