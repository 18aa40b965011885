//! The synthesize stage: from a job's analysed sources to a cited report and its work products.
//!
//! - [`stage`]: [`SynthesizeStage`], the worker's handler: fan-in check, deadline timer, lease,
//!   report and work products, then exactly one result per job.
//! - [`conflicts`]: data points the sources disagree on, found before the report is written.
//! - [`tokens`] and [`context`]: token counting and the budgeted context (full text for the
//!   best sources, key points for the next, references for the rest).
//! - [`report`]: the extractive and the LLM report writers, their shared ending, and the
//!   lookups (count, table, passage) that lead an answer.
//! - [`citations`]: validation of the LLM's citations.
//! - [`rounds`]: what a job still lacks after a round of research, and the next round's
//!   searches for it.
//! - [`answer`]: the job's fields (`answer.json`), typed and cited values from what it read:
//!   the extractors' or one structured LLM call's ([`answer::ask`]), values read as pages write
//!   them.
//! - [`attribution`]: every claim of a report checked against its sources' text (`claims.json`).
//! - [`products`]: `search.md`, `sources.md`, `job.json`, and the batch summary.
//! - [`webhook`]: signed `job.completed` and `batch.completed` deliveries.

pub mod answer;
pub mod attribution;
pub mod citations;
pub mod conflicts;
pub mod context;
pub mod products;
pub mod report;
pub mod rounds;
pub mod stage;
pub mod tokens;
pub mod webhook;

pub use stage::SynthesizeStage;
