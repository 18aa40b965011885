//! `[research]`: follow-up rounds of search for what a job still lacks.

use serde::{Deserialize, Serialize};

use crate::check;

/// The most rounds of research a job may have (`research.max_rounds`).
pub const MAX_ROUNDS: u32 = 5;

/// Follow-up research rounds: once a round's sources are in, a job that still lacks a target
/// data point or a sub-query searches again for it.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ResearchConfig {
    /// Rounds of research per job, the question's own search included: 1 turns follow-ups off.
    pub max_rounds: u32,
    /// New URLs one follow-up round may add to its job.
    pub urls_per_round: usize,
    /// A follow-up round starts only while this much of the job's deadline is left.
    pub min_secs_left: u64,
}

impl Default for ResearchConfig {
    fn default() -> Self {
        ResearchConfig {
            max_rounds: 2,
            urls_per_round: 5,
            min_secs_left: 30,
        }
    }
}

impl ResearchConfig {
    /// Problems with this section, for [`crate::Config::validate`].
    pub(crate) fn problems(&self, problems: &mut Vec<String>) {
        check::within(
            problems,
            "research.max_rounds",
            self.max_rounds,
            1..=MAX_ROUNDS,
        );
        check::within(
            problems,
            "research.urls_per_round",
            self.urls_per_round,
            1..=100,
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::tests::env;
    use crate::Config;

    #[test]
    fn research_rounds_are_bounded() {
        let c = Config::load(None, &env(&[("TRAWL__RESEARCH__MAX_ROUNDS", "3")])).unwrap();
        assert_eq!(c.research.max_rounds, 3);
        assert_eq!(c.research.urls_per_round, 5);
        let e = Config::load(
            None,
            &env(&[
                ("TRAWL__RESEARCH__MAX_ROUNDS", "0"),
                ("TRAWL__RESEARCH__URLS_PER_ROUND", "0"),
            ]),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("research.max_rounds must be 1 to 5 (got 0)"),
            "{e}"
        );
        assert!(
            e.contains("research.urls_per_round must be 1 to 100 (got 0)"),
            "{e}"
        );
    }
}
