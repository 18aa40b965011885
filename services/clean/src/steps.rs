//! The steps after extraction, in order: judge, clean, analyse. Each LLM step is optional
//! (`[llm]` configured, its `clean.llm_*` switch on, the batch budget not spent) and falls back
//! to its non-LLM path with a note saying why:
//!
//! 1. **judge**: the heuristic score always; the LLM's score on a sample replaces it when asked.
//! 2. **clean**: only below `clean.judge_threshold`; the guard may keep the original.
//! 3. **analyse**: the extractive analysis always (it gives the relevance score, the quotable
//!    key points, tables and the count/table/passage lookup); the LLM's answer, when valid,
//!    decides `is_relevant`, writes the summary and the extracted data, and its key points that
//!    the source holds word for word lead the list.
//!
//! [`Processed::complete`] is false when an LLM step failed, so the caller does not cache a
//! fallback that a retry could improve on.

use serde::{Deserialize, Serialize};
use trawl_config::CleanConfig;
use trawl_llm::{Fallback, Llm};
use trawl_messages::{Cleaning, Cleanliness};
use trawl_text::collapse_whitespace;

use crate::analysis::{analyse_in, Analysis, Context, KEY_POINTS};
use crate::metrics::{step, METRICS};
use crate::{cleaning, judge, llm_analysis};

/// Everything the steps decided about one source.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Processed {
    /// The markdown kept: cleaned when cleaning was applied, else as extracted.
    pub markdown: String,
    pub cleanliness: Cleanliness,
    pub cleaning: Cleaning,
    pub analysis: Analysis,
    /// `llm` or `extractive`.
    pub analysed_by: String,
    pub notes: Vec<String>,
    /// Every step tried answered (nothing fell back after a failure).
    pub complete: bool,
}

/// The LLM the steps may use, or why there is none.
pub enum LlmUse<'a> {
    Yes(&'a Llm),
    NotConfigured,
    /// Configured but not to be used for this source (the batch's budget is spent …).
    Unavailable(&'a str),
}

/// `s` lower-cased with its whitespace runs made single spaces, to compare quotes with the
/// page they come from.
fn collapse(s: &str) -> String {
    collapse_whitespace(s).to_lowercase()
}

/// Runs judge, clean and analyse on one source's markdown.
pub async fn process(
    llm: LlmUse<'_>,
    cfg: &CleanConfig,
    ctx: &Context,
    title: &str,
    markdown: String,
) -> Processed {
    let mut steps = Steps {
        llm: None,
        why_not: "",
        cfg,
        ctx,
        notes: Vec::new(),
        complete: true,
    };
    match llm {
        LlmUse::Yes(llm) => steps.llm = Some(llm),
        LlmUse::NotConfigured => steps.why_not = "no LLM configured",
        LlmUse::Unavailable(why) => {
            steps.notes.push(format!("no LLM steps: {why}"));
            steps.why_not = why;
        }
    }
    let cleanliness = steps.judge(&markdown).await;
    let (markdown, cleaning) = steps.clean(markdown, &cleanliness).await;
    let (analysis, analysed_by) = steps.analyse(title, &markdown).await;
    Processed {
        markdown,
        cleanliness,
        cleaning,
        analysis,
        analysed_by: analysed_by.into(),
        notes: steps.notes,
        complete: steps.complete,
    }
}

/// What the steps share: the LLM (or why there is none), the settings and the question, and
/// what they have to say so far.
struct Steps<'a> {
    llm: Option<&'a Llm>,
    /// Why there is no LLM, when there is none.
    why_not: &'a str,
    cfg: &'a CleanConfig,
    ctx: &'a Context,
    notes: Vec<String>,
    complete: bool,
}

impl<'a> Steps<'a> {
    /// The LLM, when it is there and `switch` allows it.
    fn llm_if(&self, switch: bool) -> Option<&'a Llm> {
        self.llm.filter(|_| switch)
    }

    /// An LLM step failed and took its non-LLM path.
    fn fell_back(&mut self, fallback: Fallback<'_>) {
        self.notes.push(fallback.emit());
        self.complete = false;
        step(fallback.step, "failed");
    }

    /// The heuristic score, replaced by the LLM's on a sample when `clean.llm_judge` asks.
    async fn judge(&mut self, markdown: &str) -> Cleanliness {
        let h = judge::heuristic(markdown);
        let mut cleanliness = Cleanliness {
            score: h.score,
            source: "heuristic".into(),
            heuristic: h.score,
            problems: h.problems,
        };
        match self.llm_if(self.cfg.llm_judge) {
            Some(llm) => {
                let sample = judge::sample(markdown, self.cfg.judge_sample_chars);
                match judge::llm(llm, &sample, markdown.chars().count()).await {
                    Ok(v) => {
                        cleanliness.score = v.score;
                        cleanliness.source = "llm".into();
                        cleanliness.problems = v.problems;
                        step("judge", "llm");
                    }
                    Err(error) => self.fell_back(Fallback {
                        step: "judge",
                        instead: "heuristic score",
                        error: &error,
                    }),
                }
            }
            None => step("judge", "heuristic"),
        }
        METRICS
            .cleanliness
            .get_or_create(&vec![("source", cleanliness.source.clone())])
            .observe(cleanliness.score);
        cleanliness
    }

    /// The markdown kept: cleaned by the LLM under its guard only when judged below
    /// `clean.judge_threshold` and `clean.llm_cleaning` is on.
    async fn clean(&mut self, markdown: String, judged: &Cleanliness) -> (String, Cleaning) {
        let threshold = self.cfg.judge_threshold;
        let skip = |reason: String| {
            step("cleaning", "skipped");
            Cleaning {
                applied: false,
                reason,
            }
        };
        if judged.score >= threshold {
            let reason = format!(
                "judged clean ({:.2} at or above {threshold:.2})",
                judged.score
            );
            return (markdown, skip(reason));
        }
        let Some(llm) = self.llm_if(self.cfg.llm_cleaning) else {
            let reason = match self.llm {
                Some(_) => "LLM cleaning is off (clean.llm_cleaning)",
                None => self.why_not,
            };
            return (markdown, skip(reason.to_owned()));
        };
        let cleaned = cleaning::clean(
            llm,
            &self.ctx.question,
            &judged.problems,
            &markdown,
            self.cfg.llm_clean_max_chars,
        )
        .await;
        step(
            "cleaning",
            match (&cleaned.cleaning.applied, cleaned.failed) {
                (true, _) => "applied",
                (false, true) => "failed",
                (false, false) => "rejected",
            },
        );
        self.complete &= !cleaned.failed;
        (cleaned.markdown, cleaned.cleaning)
    }

    /// The extractive analysis, with the LLM's answer laid over it when `clean.llm_analysis`
    /// asks and it answers; and who analysed (`llm` or `extractive`).
    async fn analyse(&mut self, title: &str, markdown: &str) -> (Analysis, &'static str) {
        let mut analysis = analyse_in(self.ctx, title, markdown, self.cfg.min_relevance);
        let Some(llm) = self.llm_if(self.cfg.llm_analysis) else {
            step("analysis", "extractive");
            return (analysis, "extractive");
        };
        let (text, note) =
            llm_analysis::bounded(self.ctx, markdown, self.cfg.llm_analysis_max_chars);
        self.notes.extend(note);
        match llm_analysis::analyse(llm, self.ctx, title, &text).await {
            Ok(answer) => {
                lay_over(&mut analysis, answer, markdown);
                step("analysis", "llm");
                (analysis, "llm")
            }
            Err(error) => {
                self.fell_back(Fallback {
                    step: "analysis",
                    instead: "extractive analysis",
                    error: &error,
                });
                (analysis, "extractive")
            }
        }
    }
}

/// The LLM's analysis over the extractive one: it decides relevance and writes the summary;
/// its data points fill in (a point it left out keeps the pattern's value); its key points
/// lead where the source holds them word for word, so every key point stays quotable.
fn lay_over(analysis: &mut Analysis, answer: llm_analysis::LlmAnalysis, markdown: &str) {
    analysis.is_relevant = answer.is_relevant;
    analysis.summary = answer.summary;
    for (point, value) in answer.extracted_data {
        if value.is_some() || !analysis.extracted_data.contains_key(&point) {
            analysis.extracted_data.insert(point, value);
        }
    }
    let source = collapse(markdown);
    let mut points: Vec<String> = answer
        .key_points
        .into_iter()
        .filter(|k| !k.trim().is_empty() && source.contains(&collapse(k)))
        .collect();
    // The extractive key points past the first KEY_POINTS state what is asked: they stay.
    let mut heuristic = std::mem::take(&mut analysis.key_points);
    let stating = heuristic.split_off(KEY_POINTS.min(heuristic.len()));
    for k in heuristic {
        if !points.iter().any(|p| collapse(p) == collapse(&k)) {
            points.push(k);
        }
    }
    points.truncate(KEY_POINTS);
    for k in stating {
        if !points.iter().any(|p| collapse(p) == collapse(&k)) {
            points.push(k);
        }
    }
    analysis.key_points = points;
}
