//! `[report]`: the report a job ends with, its length, shape and unverified statements.

use serde::{Deserialize, Serialize};

use crate::check;

/// The report a job ends with.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ReportConfig {
    /// Most tokens the LLM's report may take (a job's `report_max_tokens` option overrides it).
    pub max_tokens: u32,
    /// A statement of the report that no source read supports: `drop` it, or `keep` it under
    /// an "Unverified" heading, without a citation.
    pub unverified: Unverified,
    /// The report's shape: `answer` (a short paragraph), `brief` (the answer, then details
    /// under short headings) or `detailed` (a thorough account); a job's `report_type` option
    /// overrides it.
    #[serde(rename = "type")]
    #[schemars(with = "String")]
    pub kind: trawl_messages::ReportType,
}

impl Default for ReportConfig {
    fn default() -> Self {
        ReportConfig {
            max_tokens: 1500,
            unverified: Unverified::Drop,
            kind: trawl_messages::ReportType::Brief,
        }
    }
}

/// What becomes of a report's statement that no source supports (`report.unverified`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Unverified {
    #[default]
    Drop,
    Keep,
}

impl ReportConfig {
    /// Problems with this section, for [`crate::Config::validate`].
    pub(crate) fn problems(&self, problems: &mut Vec<String>) {
        check::within(problems, "report.max_tokens", self.max_tokens, 100..=16_000);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::env;
    use crate::Config;

    #[test]
    fn the_report_section_takes_its_shape_and_policy_by_name() {
        let c = Config::load(
            None,
            &env(&[
                ("TRAWL__REPORT__TYPE", "answer"),
                ("TRAWL__REPORT__UNVERIFIED", "keep"),
            ]),
        )
        .unwrap();
        assert_eq!(c.report.kind, trawl_messages::ReportType::Answer);
        assert_eq!(c.report.unverified, Unverified::Keep);
        let e = Config::load(None, &env(&[("TRAWL__REPORT__TYPE", "long")])).unwrap_err();
        assert!(
            e.to_string().contains("answer") && e.to_string().contains("type"),
            "{e}"
        );
    }
}
