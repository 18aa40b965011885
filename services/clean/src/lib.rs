//! The clean stage: from a fetched page to analysed markdown.
//!
//! - [`extract`]: main-content extraction (known containers first, a scoring extractor as the
//!   fallback) and page metadata.
//! - [`markdown`]: HTML to markdown that keeps headings, lists, tables, code and links.
//! - [`analysis`]: is the source relevant to the question, and which sentences say so.
//! - [`stage`]: [`CleanStage`], the worker's handler: extract, analyse, store the document,
//!   record the outcome.

pub mod analysis;
pub mod extract;
pub mod markdown;
pub mod stage;

pub use stage::CleanStage;
