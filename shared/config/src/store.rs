//! `[store]`: the shared store (Redis) of job records, batch records and caches.

use serde::{Deserialize, Serialize};

use crate::check;

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct StoreConfig {
    /// Redis URL; absent means the in-memory store.
    pub url: Option<String>,
    /// Prefix of every key (`trawl:` …); tests use a unique one.
    pub prefix: String,
    /// TTL of job records (fan-in, synthesis leases).
    pub job_ttl_secs: u64,
    /// TTL of cached robots.txt rules (at most 24 h by RFC 9309).
    pub robots_ttl_secs: u64,
    /// TTL of cached robots.txt errors (5xx, unreachable).
    pub robots_error_ttl_secs: u64,
    /// How long a batch's record (progress, job statuses, counters) stays in the store once
    /// its last job has ended or it was cancelled; afterwards its status is read from the
    /// `final.json` saved beside its work products.
    pub batch_ttl_secs: u64,
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            url: None,
            prefix: "trawl".into(),
            job_ttl_secs: 7 * 24 * 3600,
            robots_ttl_secs: 24 * 3600,
            robots_error_ttl_secs: 600,
            batch_ttl_secs: 30 * 24 * 3600,
        }
    }
}

impl StoreConfig {
    /// Problems with this section, for [`crate::Config::validate`].
    pub(crate) fn problems(&self, problems: &mut Vec<String>) {
        check::safe_name(problems, "store.prefix", &self.prefix);
        if self.robots_ttl_secs > 24 * 3600 {
            problems.push(format!(
                "store.robots_ttl_secs must be at most 86400 (RFC 9309; got {})",
                self.robots_ttl_secs
            ));
        }
    }
}
