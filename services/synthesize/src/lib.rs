//! The synthesize stage: from a job's analysed sources to a cited report.
//!
//! - [`report`]: the extractive report (no LLM needed): best sentences for the question, each
//!   with a numbered citation to a fetched and analysed source, and the numbered source list.
//! - [`stage`]: [`SynthesizeStage`], the worker's handler: fan-in check, deadline timer, lease,
//!   report and work products, then exactly one `ResearchResult` per job.

pub mod report;
pub mod stage;

pub use stage::SynthesizeStage;
