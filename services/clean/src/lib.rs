//! The clean stage: from a fetched page to analysed markdown.
//!
//! - [`extract`]: main-content extraction (known containers first, a scoring extractor as the
//!   fallback) and page metadata.
//! - [`markdown`]: HTML to markdown that keeps headings, lists, tables, code and links.
//! - [`passages`]: a long text (a filing, a long page) read by the passages that answer,
//!   wherever they stand, with their page markers.
//! - [`steps`]: what follows extraction, in order, each LLM step with its non-LLM path:
//!   - [`judge`]: the cleanliness score (heuristic always, the LLM's on a sample when asked);
//!   - [`cleaning`]: LLM cleaning of content judged dirty, checked by [`guard`] (code,
//!     commands and tables must survive);
//!   - [`analysis`]: the extractive analysis — [`bm25`] sentence ranking, relevance,
//!     [`datapoints`] by pattern, [`tables`] as rows, [`lookup`] for count, table and passage
//!     questions — and [`llm_analysis`], the LLM's validated JSON analysis.
//! - [`stage`]: [`CleanStage`], the worker's handler: extract, load the job's context,
//!   run the steps (or take them from the analysis cache), charge the LLM spend, store the
//!   document, record the outcome.
//! - `metrics`: the stage's metrics.

pub mod analysis;
pub mod bm25;
pub mod cleaning;
pub mod datapoints;
pub mod extract;
pub mod guard;
pub mod judge;
pub mod llm_analysis;
pub mod lookup;
pub mod markdown;
mod metrics;
pub mod passages;
pub mod stage;
pub mod steps;
pub mod tables;

pub use stage::CleanStage;
