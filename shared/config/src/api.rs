//! `[api]`: `trawl serve`'s HTTP API, its limits per request, connection and token.

use serde::{Deserialize, Serialize};

/// `trawl serve`: the HTTP API in front of the fleet.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ApiConfig {
    /// Where the API listens.
    pub addr: String,
    /// Largest request body accepted, in bytes.
    pub max_body_bytes: usize,
    /// Most questions one batch may hold.
    pub max_questions: usize,
    /// Requests per second allowed to each token, counted in one-second windows shared by every
    /// API replica.
    pub rate_per_sec: u32,
    /// How long an Idempotency-Key is remembered.
    pub idempotency_ttl_secs: u64,
    /// A request's head must arrive within this many seconds of the connection being ready for
    /// it (also how long an idle keep-alive connection stays open).
    pub header_timeout_secs: u64,
    /// A connection on which nothing moves either way for this long is closed.
    pub idle_timeout_secs: u64,
    /// Most connections open at once.
    pub max_connections: usize,
    /// Most connections open at once from one client address (IPv6: one /64); 0 for no limit,
    /// e.g. behind a proxy that opens them all (then limit clients at the proxy).
    pub max_connections_per_client: usize,
    /// Questions each token may submit per UTC day, counted across every replica; 0 for no
    /// limit.
    pub questions_per_day: u64,
    /// Batches each token may have open (with jobs not yet ended) at once; 0 for no limit.
    pub open_batches: u64,
    /// Serve the web app for batches at `/` (`docs/ui.md`); `false` leaves only the API.
    pub ui: bool,
}

impl Default for ApiConfig {
    fn default() -> Self {
        ApiConfig {
            addr: "0.0.0.0:8080".into(),
            max_body_bytes: 4 << 20,
            max_questions: 10_000,
            rate_per_sec: 20,
            idempotency_ttl_secs: 24 * 3600,
            header_timeout_secs: 10,
            idle_timeout_secs: 60,
            max_connections: 4096,
            max_connections_per_client: 256,
            questions_per_day: 100_000,
            open_batches: 100,
            ui: true,
        }
    }
}

impl ApiConfig {
    /// Problems with this section, for [`crate::Config::validate`].
    pub(crate) fn problems(&self, problems: &mut Vec<String>) {
        if self.max_body_bytes == 0 || self.max_questions == 0 || self.rate_per_sec == 0 {
            problems.push(
                "api.max_body_bytes, api.max_questions and api.rate_per_sec must be at least 1"
                    .into(),
            );
        }
        if self.header_timeout_secs == 0 || self.idle_timeout_secs == 0 || self.max_connections == 0
        {
            problems.push(
                "api.header_timeout_secs, api.idle_timeout_secs and api.max_connections must be at least 1"
                    .into(),
            );
        }
    }
}
