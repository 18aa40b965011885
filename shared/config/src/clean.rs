//! `[clean]`: turning a fetched page into clean Markdown and an analysis of its relevance.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct CleanConfig {
    /// A source whose analysis scores below this ends as `irrelevant`.
    pub min_relevance: f64,
    /// Markdown a job reads of a source, in bytes. A longer one (a filing, a long page) is
    /// read by its passages that answer the question, wherever they stand, with their pages.
    pub max_chars: usize,
    /// Content whose cleanliness score (0 to 1) is at or above this skips LLM cleaning.
    pub judge_threshold: f64,
    /// Let the LLM judge cleanliness on a sample of the page (needs `[llm]`); without it the
    /// heuristic score decides.
    pub llm_judge: bool,
    /// Let the LLM clean content judged below `judge_threshold` (needs `[llm]`). A cleaning
    /// that loses code blocks, shell commands or tables is discarded and the reason recorded.
    pub llm_cleaning: bool,
    /// Let the LLM write each source's analysis (needs `[llm]`); without it, extractive.
    pub llm_analysis: bool,
    /// Characters of the page the LLM judge sees (from its start and its end).
    pub judge_sample_chars: usize,
    /// Pages longer than this, in characters, are not LLM-cleaned (the reason is recorded);
    /// shorter ones are cleaned in chunks of about 8,000 characters.
    pub llm_clean_max_chars: usize,
    /// Characters of the page the LLM analysis sees; a longer page is cut to its passages
    /// most relevant to the question.
    pub llm_analysis_max_chars: usize,
    /// How long a source's cleaning and analysis by the LLM are reused for the same content and
    /// question (0: no cache). Without LLM steps nothing is cached: they cost less than the cache.
    pub cache_ttl_secs: u64,
}

impl Default for CleanConfig {
    fn default() -> Self {
        CleanConfig {
            min_relevance: 0.15,
            max_chars: 200_000,
            judge_threshold: 0.7,
            llm_judge: true,
            llm_cleaning: true,
            llm_analysis: true,
            judge_sample_chars: 4_000,
            llm_clean_max_chars: 32_000,
            llm_analysis_max_chars: 16_000,
            cache_ttl_secs: 7 * 24 * 3600,
        }
    }
}

impl CleanConfig {
    /// Problems with this section, for [`crate::Config::validate`].
    pub(crate) fn problems(&self, problems: &mut Vec<String>) {
        if !(0.0..=1.0).contains(&self.min_relevance)
            || !(0.0..=1.0).contains(&self.judge_threshold)
        {
            problems.push(
                "clean.min_relevance and clean.judge_threshold must be between 0 and 1".into(),
            );
        }
        if self.judge_sample_chars < 200 || self.llm_analysis_max_chars < 200 {
            problems.push(
                "clean.judge_sample_chars and clean.llm_analysis_max_chars must be at least 200"
                    .into(),
            );
        }
    }
}
