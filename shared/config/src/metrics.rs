//! `[metrics]`: where a worker serves its metrics and health checks.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct MetricsConfig {
    /// Where `/metrics`, `/healthz` and `/readyz` listen; empty disables the endpoint.
    pub addr: String,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        MetricsConfig {
            addr: "0.0.0.0:9464".into(),
        }
    }
}

impl MetricsConfig {
    /// Problems with this section, for [`crate::Config::validate`].
    pub(crate) fn problems(&self, problems: &mut Vec<String>) {
        if !self.addr.is_empty() && self.addr.parse::<std::net::SocketAddr>().is_err() {
            problems.push(format!(
                "metrics.addr must be ip:port or empty (got {:?})",
                self.addr
            ));
        }
    }
}
