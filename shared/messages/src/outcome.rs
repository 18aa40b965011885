//! Terminal outcomes. Every URL a search selects ends in exactly one of these, recorded once in
//! the job's fan-in record even when the message that produced it is redelivered.

use serde::{Deserialize, Serialize};

#[derive(
    Clone, Debug, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr, strum::VariantNames,
)]
#[serde(tag = "outcome", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Outcome {
    /// Cleaned, analysed and relevant: a candidate for citation.
    Analysed,
    /// Cleaned and analysed, but it does not answer the question.
    Irrelevant,
    RobotsDisallowed,
    /// The site refused every level up to `level`.
    Blocked {
        level: u8,
    },
    Failed {
        reason: String,
    },
    TooLarge,
    Unsupported {
        content_type: String,
    },
}

impl Outcome {
    /// The outcome's name, a fixed set: safe as a metric label.
    pub fn name(&self) -> &'static str {
        self.into()
    }

    pub const NAMES: &[&str] = <Self as strum::VariantNames>::VARIANTS;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialises_with_a_tag_and_names_match() {
        let o = Outcome::Failed {
            reason: "http 500".into(),
        };
        assert_eq!(
            serde_json::to_value(&o).unwrap(),
            serde_json::json!({"outcome": "failed", "reason": "http 500"})
        );
        for o in [
            Outcome::Analysed,
            Outcome::TooLarge,
            Outcome::Blocked { level: 1 },
        ] {
            let v = serde_json::to_value(&o).unwrap();
            assert_eq!(v["outcome"], o.name());
            assert!(Outcome::NAMES.contains(&o.name()));
        }
    }
}
