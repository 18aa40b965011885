//! The search stage: from a question to the URLs worth fetching.
//!
//! - [`analysis`]: what the question asks (terms, phrases, news or not, sub-queries).
//! - [`providers`]: search providers, each speaking its real wire format.
//! - [`chain`]: a provider chain for one query: paging, caching, fallback.
//! - [`normalize`]: URL normalisation, so one page found twice is fetched once.
//! - [`score`]: the relevance score (position 40 % + title 30 % + snippet 30 %) and selection.
//! - [`judge`]: the optional LLM steps of selection: relevance check, rerank, LLM pick.
//! - [`metrics`]: the stage's metrics, declared once.
//! - [`stage`]: [`SearchStage`], the worker's handler: analyse, search, score, select, record
//!   the work product, open the job's fan-in and publish one fetch task per selected URL; and
//!   a job's follow-up research rounds, which grow it once per round.

pub mod analysis;
pub mod chain;
pub mod documents;
pub mod judge;
pub mod metrics;
pub mod normalize;
pub mod providers;
pub mod score;
pub mod stage;

pub use stage::SearchStage;
