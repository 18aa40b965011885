//! `[search]`: the search providers and how their results become URLs to fetch.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::check;

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct SearchConfig {
    /// Provider chain for general questions, tried in order.
    pub providers: Vec<String>,
    /// Provider chain for news questions.
    pub news_providers: Vec<String>,
    pub searxng_url: String,
    /// Base URL per provider, overriding its public endpoint (a proxy, a test server).
    pub endpoints: BTreeMap<String, String>,
    /// Environment variable holding each provider's API key, overriding the conventional name
    /// (`SERPER_API_KEY` …). A provider whose key is missing is skipped.
    pub api_key_env: BTreeMap<String, String>,
    /// Requests per second the whole fleet may send each provider (`brave = 1`, `serper =
    /// 5`): every worker takes its turns from one slot per provider in the store, and a
    /// provider's 429 with `Retry-After` holds every worker's calls to it. A provider not
    /// listed is not paced.
    pub requests_per_second: BTreeMap<String, f64>,
    /// Proxy for search-provider calls (`http://host:port`); empty: `HTTPS_PROXY`,
    /// `HTTP_PROXY`, `NO_PROXY`. Page fetches never use a proxy.
    pub proxy: String,
    /// Results asked of the providers per sub-query (pagination stops there or when dry).
    pub results_per_query: usize,
    /// Default recency window: any, day, week, month or year.
    pub freshness: String,
    /// How long a provider's answer to one (query, page) is reused.
    pub cache_ttl_secs: u64,
    /// Ask the LLM whether each candidate is relevant (needs `[llm]`; cached per question and URL).
    pub llm_relevance: bool,
    /// Reorder candidates by embedding similarity to the question (needs `llm.embedding_model`).
    pub rerank: bool,
    /// `score` (the formula) or `llm` (the LLM picks from the result list; the score is the fallback).
    pub selection: Selection,
    /// Results scoring below this are not fetched.
    pub min_relevance: f64,
    /// At most this many URLs are fetched per question.
    pub max_urls: usize,
    pub timeout_secs: u64,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            providers: vec!["searxng".into(), "duckduckgo".into()],
            news_providers: vec!["searxng".into(), "duckduckgo".into()],
            searxng_url: "http://127.0.0.1:8888".into(),
            proxy: String::new(),
            endpoints: BTreeMap::new(),
            api_key_env: BTreeMap::new(),
            requests_per_second: BTreeMap::new(),
            results_per_query: 15,
            freshness: "any".into(),
            cache_ttl_secs: 24 * 3600,
            llm_relevance: false,
            rerank: false,
            selection: Selection::Score,
            min_relevance: 0.3,
            max_urls: 10,
            timeout_secs: 15,
        }
    }
}

/// How search picks the URLs to fetch (`search.selection`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Selection {
    /// The formula's score, best first.
    #[default]
    Score,
    /// The LLM picks from the result list; the score decides when it cannot answer.
    Llm,
}

impl SearchConfig {
    /// Problems with this section, for [`crate::Config::validate`]; what it asks of `[llm]` is
    /// checked beside the other cross-section rules.
    pub(crate) fn problems(&self, problems: &mut Vec<String>) {
        for (provider, rps) in &self.requests_per_second {
            if !(rps.is_finite() && *rps > 0.0) {
                problems.push(format!(
                    "search.requests_per_second.{provider}: must be above 0, not {rps} (leave it out for no limit)"
                ));
            }
        }
        if !(0.0..=1.0).contains(&self.min_relevance) {
            problems.push(format!(
                "search.min_relevance must be between 0 and 1 (got {})",
                self.min_relevance
            ));
        }
        check::at_least_one(problems, "search.max_urls", self.max_urls);
        if !matches!(
            self.freshness.as_str(),
            "any" | "day" | "week" | "month" | "year"
        ) {
            problems.push(format!(
                "search.freshness must be any, day, week, month or year (got {:?})",
                self.freshness
            ));
        }
        check::at_least_one(problems, "search.results_per_query", self.results_per_query);
        if self.providers.is_empty() {
            problems.push("search.providers must name at least one provider".into());
        }
    }
}
