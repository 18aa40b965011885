//! What tokens cost: a built-in table of the well-known models' list prices, which config can
//! override or extend (`llm.prices`), and the cost of one answer's usage.
//!
//! The table holds US dollars per million tokens as the providers' pricing pages listed them
//! on [`PRICES_AS_OF`]; prices change, so a deployment that bills from these figures should set
//! its own in `llm.prices`. A model is matched by its exact name, then by the longest entry its
//! name starts with (`gpt-4o-mini-2024-07-18` is priced as `gpt-4o-mini`), so dated snapshots
//! and provider prefixes (`openai/gpt-4o` on OpenRouter, `models/gemini-2.5-flash`) resolve.

use trawl_config::LlmConfig;
pub use trawl_config::ModelPrice as Price;

use crate::Usage;

/// When the table's prices were read off the providers' pricing pages.
pub const PRICES_AS_OF: &str = "2025-08-15";

const fn p(input: f64, cached_input: f64, output: f64) -> Price {
    Price {
        input,
        cached_input: Some(cached_input),
        output,
    }
}

/// (model name or prefix, price). Reasoning tokens are billed as output tokens by every
/// provider here, and are counted in the output the APIs report.
const TABLE: &[(&str, Price)] = &[
    // OpenAI
    ("gpt-5", p(1.25, 0.125, 10.0)),
    ("gpt-5-mini", p(0.25, 0.025, 2.0)),
    ("gpt-5-nano", p(0.05, 0.005, 0.40)),
    ("gpt-4.1", p(2.0, 0.50, 8.0)),
    ("gpt-4.1-mini", p(0.40, 0.10, 1.60)),
    ("gpt-4.1-nano", p(0.10, 0.025, 0.40)),
    ("gpt-4o", p(2.50, 1.25, 10.0)),
    ("gpt-4o-mini", p(0.15, 0.075, 0.60)),
    ("o3", p(2.0, 0.50, 8.0)),
    ("o3-mini", p(1.10, 0.55, 4.40)),
    ("o4-mini", p(1.10, 0.275, 4.40)),
    ("o1", p(15.0, 7.50, 60.0)),
    ("o1-mini", p(1.10, 0.55, 4.40)),
    ("text-embedding-3-small", p(0.02, 0.02, 0.0)),
    ("text-embedding-3-large", p(0.13, 0.13, 0.0)),
    // Anthropic (cached input: a cache read)
    ("claude-opus-4-1", p(15.0, 1.50, 75.0)),
    ("claude-opus-4", p(15.0, 1.50, 75.0)),
    ("claude-sonnet-4", p(3.0, 0.30, 15.0)),
    ("claude-3-7-sonnet", p(3.0, 0.30, 15.0)),
    ("claude-3-5-haiku", p(0.80, 0.08, 4.0)),
    ("claude-3-haiku", p(0.25, 0.03, 1.25)),
    // Google (prompts up to 200k tokens)
    ("gemini-2.5-pro", p(1.25, 0.31, 10.0)),
    ("gemini-2.5-flash", p(0.30, 0.075, 2.50)),
    ("gemini-2.5-flash-lite", p(0.10, 0.025, 0.40)),
    ("gemini-2.0-flash", p(0.10, 0.025, 0.40)),
    ("gemini-embedding-001", p(0.15, 0.15, 0.0)),
];

/// The built-in price of `model`, if the table knows it.
pub(crate) fn builtin(model: &str) -> Option<Price> {
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    if let Some((_, price)) = TABLE.iter().find(|(m, _)| *m == name) {
        return Some(*price);
    }
    TABLE
        .iter()
        .filter(|(m, _)| {
            name.strip_prefix(m)
                .is_some_and(|rest| rest.starts_with(['-', '@', ':']))
        })
        .max_by_key(|(m, _)| m.len())
        .map(|(_, price)| *price)
}

/// `model`'s price: `llm.prices`, then the main model's `llm.*_price_per_mtok`, then the
/// built-in table.
pub fn of(config: &LlmConfig, model: &str) -> Option<Price> {
    if let Some(price) = config.prices.get(model) {
        return Some(*price);
    }
    let (input, output) = (config.input_price_per_mtok, config.output_price_per_mtok);
    if model == config.model && (input.is_some() || output.is_some()) {
        return Some(Price {
            input: input.unwrap_or(0.0),
            cached_input: None,
            output: output.unwrap_or(0.0),
        });
    }
    builtin(model)
}

/// The models in use without a known price (a budget cannot be kept with them).
pub fn unpriced(config: &LlmConfig) -> Vec<String> {
    let mut models: Vec<String> = (config.endpoints().into_iter())
        .map(|e| e.model)
        .filter(|m| of(config, m).is_none())
        .collect();
    models.sort();
    models.dedup();
    models
}

/// The cost in micro-dollars of `usage` (dollars per million tokens times tokens is
/// micro-dollars); cached input at its own price.
pub fn cost_micro(price: &Price, usage: &Usage) -> u64 {
    let cached = usage.cached_input_tokens.min(usage.input_tokens);
    let fresh = (usage.input_tokens - cached) as f64 * price.input;
    let cached = cached as f64 * price.cached_input.unwrap_or(price.input);
    (fresh + cached + usage.output_tokens as f64 * price.output).round() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_are_priced_by_name_snapshot_or_prefix() {
        assert_eq!(builtin("gpt-4o-mini").unwrap().input, 0.15);
        assert_eq!(builtin("gpt-4o-mini-2024-07-18").unwrap().input, 0.15);
        assert_eq!(builtin("gpt-4o-2024-08-06").unwrap().input, 2.50);
        assert_eq!(builtin("openai/gpt-5-mini").unwrap().output, 2.0);
        assert_eq!(builtin("claude-sonnet-4-20250514").unwrap().output, 15.0);
        assert_eq!(builtin("models/gemini-2.5-flash").unwrap().input, 0.30);
        assert_eq!(builtin("gemini-2.5-flash-lite").unwrap().input, 0.10);
        assert!(builtin("llama3.1:8b").is_none());
        assert!(
            builtin("gpt-4omni").is_none(),
            "a prefix must end at a separator"
        );
        assert_eq!(builtin("o1-mini").unwrap().input, 1.10);
    }

    #[test]
    fn cached_input_is_billed_at_its_own_price() {
        let usage = |input, cached_input_tokens, output_tokens| Usage {
            input_tokens: input,
            cached_input_tokens,
            output_tokens,
            ..Usage::default()
        };
        let price = builtin("gpt-5").unwrap();
        // 1M input of which 400k cached, 100k output: 0.6M × 1.25 + 0.4M × 0.125 + 0.1M × 10.
        assert_eq!(
            cost_micro(&price, &usage(1_000_000, 400_000, 100_000)),
            1_800_000
        );
        let flat = Price {
            input: 1.0,
            cached_input: None,
            output: 2.0,
        };
        assert_eq!(cost_micro(&flat, &usage(10, 5, 1)), 12);
    }

    #[test]
    fn config_prices_win_and_unknown_models_are_named() {
        let mut config = LlmConfig {
            model: "llama3.1:8b".into(),
            ..LlmConfig::default()
        };
        assert_eq!(unpriced(&config), ["llama3.1:8b"]);
        config.input_price_per_mtok = Some(0.0);
        config.output_price_per_mtok = Some(0.0);
        assert!(unpriced(&config).is_empty(), "a price of 0 is a price");
        config.models.insert(
            "report".into(),
            trawl_config::StepModel::Name("my-finetune".into()),
        );
        assert_eq!(unpriced(&config), ["my-finetune"]);
        config.prices.insert(
            "my-finetune".into(),
            Price {
                input: 3.0,
                cached_input: None,
                output: 12.0,
            },
        );
        assert!(unpriced(&config).is_empty());
        config.prices.insert(
            "gpt-4o-mini".into(),
            Price {
                input: 9.0,
                cached_input: None,
                output: 9.0,
            },
        );
        assert_eq!(of(&config, "gpt-4o-mini").unwrap().input, 9.0);
    }
}
