//! The contracts between trawl's stages: the message envelope, every message body, the queues
//! they travel on, terminal outcomes and the object-store layout of a job's work products.
//!
//! - [`envelope`]: the versioned envelope every message travels in, and its decoding errors.
//! - [`body`]: the bodies (`SearchTask`, `FetchTask`, `FetchedDoc`, `SynthesizeTask`,
//!   `ResearchResult`) and the documents stages hand each other.
//! - [`domains`]: a job's domain filter, what `include_domains` and `exclude_domains` allow.
//! - [`fields`]: the fields a job fills (a JSON Schema object) and its `answer.json`.
//! - [`outcome`]: the terminal outcome every selected URL ends in.
//! - [`queue`]: queue names, one per stage, under a configurable namespace.
//! - [`paths`]: where a job's results and work products live in the object store.
//! - [`record`]: the work products other processes read back (`search.json`, `job.json`).
//! - [`whole`]: how the job options are read: errors that name the field, whole numbers as
//!   JSON Schema counts them (`3.0` too).
//!
//! Nothing here does I/O; every stage and both broker twins depend on it.

pub mod body;
pub mod documents;
pub mod domains;
pub mod envelope;
pub mod fields;
pub mod outcome;
pub mod paths;
pub mod queue;
pub mod record;
pub mod whole;

pub use body::*;
pub use domains::Domains;
pub use envelope::{DecodeError, Envelope, Kind, SCHEMA_VERSION};
pub use fields::{Answer, FieldAnswer, FieldStatus, Fields, Ordered};
pub use outcome::Outcome;
pub use queue::{Queue, StageKind};
pub use record::{JobRecord, ReportWriter, RoundRecord, SearchRecord, UnknownReportWriter};
