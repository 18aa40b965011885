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
use tracing::warn;
use trawl_config::CleanConfig;
use trawl_llm::Llm;
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
    let mut out = collapse_whitespace(s);
    if out.is_ascii() {
        out.make_ascii_lowercase();
        out
    } else {
        out.to_lowercase()
    }
}

/// Runs judge, clean and analyse on one source's markdown.
pub async fn process(
    llm: LlmUse<'_>,
    cfg: &CleanConfig,
    ctx: &Context,
    title: &str,
    markdown: String,
) -> Processed {
    let mut notes = Vec::new();
    let (llm, why_not) = match llm {
        LlmUse::Yes(llm) => (Some(llm), ""),
        LlmUse::NotConfigured => (None, "no LLM configured"),
        LlmUse::Unavailable(why) => {
            notes.push(format!("no LLM steps: {why}"));
            (None, why)
        }
    };
    let mut complete = true;

    let h = judge::heuristic(&markdown);
    let mut cleanliness = Cleanliness {
        score: h.score,
        source: "heuristic".into(),
        heuristic: h.score,
        problems: h.problems,
    };
    match llm.filter(|_| cfg.llm_judge) {
        Some(llm) => {
            let sample = judge::sample(&markdown, cfg.judge_sample_chars);
            match judge::llm(llm, &sample, markdown.chars().count()).await {
                Ok(v) => {
                    cleanliness.score = v.score;
                    cleanliness.source = "llm".into();
                    cleanliness.problems = v.problems;
                    step("judge", "llm");
                }
                Err(e) => {
                    warn!(error = %e, "LLM judge failed; heuristic score used");
                    notes.push(format!("LLM judge failed, heuristic score used: {e}"));
                    complete = false;
                    step("judge", "failed");
                }
            }
        }
        None => step("judge", "heuristic"),
    }
    METRICS
        .cleanliness
        .get_or_create(&vec![("source", cleanliness.source.clone())])
        .observe(cleanliness.score);

    let threshold = cfg.judge_threshold;
    let skip = |reason: String| {
        step("cleaning", "skipped");
        Cleaning {
            applied: false,
            reason,
        }
    };
    let (markdown, cleaning) = if cleanliness.score >= threshold {
        let reason = format!(
            "judged clean ({:.2} at or above {threshold:.2})",
            cleanliness.score
        );
        (markdown, skip(reason))
    } else if let Some(llm) = llm.filter(|_| cfg.llm_cleaning) {
        let cleaned = cleaning::clean(
            llm,
            &ctx.question,
            &cleanliness.problems,
            &markdown,
            cfg.llm_clean_max_chars,
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
        complete &= !cleaned.failed;
        (cleaned.markdown, cleaned.cleaning)
    } else if llm.is_some() {
        (
            markdown,
            skip("LLM cleaning is off (clean.llm_cleaning)".into()),
        )
    } else {
        (markdown, skip(why_not.to_owned()))
    };

    let mut analysis = analyse_in(ctx, title, &markdown, cfg.min_relevance);
    let mut analysed_by = "extractive";
    if let Some(llm) = llm.filter(|_| cfg.llm_analysis) {
        let (text, note) = llm_analysis::bounded(ctx, &markdown, cfg.llm_analysis_max_chars);
        notes.extend(note);
        match llm_analysis::analyse(llm, ctx, title, &text).await {
            Ok(answer) => {
                analysed_by = "llm";
                analysis.is_relevant = answer.is_relevant;
                analysis.summary = answer.summary;
                for (point, value) in answer.extracted_data {
                    // A data point the LLM left out keeps the pattern's value.
                    if value.is_some() || !analysis.extracted_data.contains_key(&point) {
                        analysis.extracted_data.insert(point, value);
                    }
                }
                // Key points stay quotable: the LLM's lead only where the source has them.
                let source = collapse(&markdown);
                let mut points: Vec<String> = answer
                    .key_points
                    .into_iter()
                    .filter(|k| !k.trim().is_empty() && source.contains(&collapse(k)))
                    .collect();
                for k in analysis.key_points.drain(..) {
                    if !points.iter().any(|p| collapse(p) == collapse(&k)) {
                        points.push(k);
                    }
                }
                points.truncate(KEY_POINTS);
                analysis.key_points = points;
                step("analysis", "llm");
            }
            Err(e) => {
                warn!(error = %e, "LLM analysis failed; extractive analysis used");
                notes.push(format!(
                    "LLM analysis failed, extractive analysis used: {e}"
                ));
                complete = false;
                step("analysis", "failed");
            }
        }
    } else {
        step("analysis", "extractive");
    }
    Processed {
        markdown,
        cleanliness,
        cleaning,
        analysis,
        analysed_by: analysed_by.into(),
        notes,
        complete,
    }
}
