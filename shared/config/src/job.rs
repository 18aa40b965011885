//! `[job]`: what bounds one job as a whole. Any value is valid.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct JobConfig {
    /// Seconds from submission until a job is synthesised with whatever has arrived.
    pub deadline_secs: u64,
}

impl Default for JobConfig {
    fn default() -> Self {
        JobConfig { deadline_secs: 600 }
    }
}
