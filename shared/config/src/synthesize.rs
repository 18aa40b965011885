//! `[synthesize]`: writing a job's report from its sources, and the webhook that announces it.
//! Any value is valid here; the webhook checks its own settings where it is built.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct SynthesizeConfig {
    /// Token budget of the prompt given to the report writer (sources, question, instructions).
    pub max_tokens: usize,
    /// Sentences the extractive report takes in all.
    pub sentences: usize,
    /// Language of LLM reports for jobs without a `language` option; empty: the question's
    /// language, as detected.
    pub language: String,
    /// Environment variable holding the HMAC key that signs webhook deliveries.
    pub webhook_secret_env: String,
    /// Delivery attempts per webhook event.
    pub webhook_attempts: u32,
}

impl Default for SynthesizeConfig {
    fn default() -> Self {
        SynthesizeConfig {
            max_tokens: 20_000,
            sentences: 6,
            language: String::new(),
            webhook_secret_env: "TRAWL_WEBHOOK_SECRET".into(),
            webhook_attempts: 5,
        }
    }
}
