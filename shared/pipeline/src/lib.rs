//! What every stage shares beyond the broker and store: the worker loop and the job lifecycle.
//!
//! - [`runtime`]: [`Runtime`], the broker, store and object store a stage works with, built
//!   from config (real services in a fleet, in-memory twins embedded).
//! - [`serve`]: a worker process: its runtime, its ops endpoints and its worker loop until its
//!   stop future resolves.
//! - [`worker`]: [`run_worker`], the consume loop: decode, handle, ack after outputs are
//!   confirmed, retry through delay tiers, dead-letter with a reason, drain on shutdown.
//! - [`error`]: [`StageError`], classified retryable or permanent; that choice alone decides
//!   retry versus dead-letter.
//! - [`job`]: [`Job`], a job as a stage sees it: its meta, outcomes (recorded exactly once,
//!   synthesis triggered when all are in), the next messages, retry-or-end, and LLM calls
//!   under the batch's budget, and its follow-up research rounds. [`fanin`] is the store protocol behind it (see `fanin.md`).
//! - [`batch`]: batch files (with the user's own ids and metadata), submission and collecting
//!   results.
//! - [`results`]: a job's results read back: `job.json` and the one record per job that exports
//!   write.
//! - [`table`]: a batch's results as a CSV table, its fields as columns.
//! - [`template`]: questions from a template over a table's rows.
//! - [`metrics`]: the worker metrics, declared once.

pub mod batch;
pub mod error;
pub mod fanin;
pub mod in_flight;
pub mod job;
pub mod metrics;
pub mod results;
pub mod runtime;
pub mod serve;
pub mod table;
pub mod template;
pub mod worker;

pub use error::{ErrorClass, StageError};
pub use job::{Job, JobLlm};
pub use runtime::Runtime;
pub use worker::{run_worker, Handled, Stage};
