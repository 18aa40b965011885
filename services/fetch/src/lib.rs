//! The fetch stage: get the page when it can be had, politely, and say why when it cannot.
//!
//! - [`ssrf`]: the guard against fetching private, loopback and metadata addresses, and the DNS
//!   resolver that applies it (plus the configured host overrides) to every connection.
//! - [`robots`]: robots.txt per RFC 9309, cached per origin in the store.
//! - [`http`]: levels 0 and 1 over plain HTTP, bounded in size, time and redirects; charset
//!   decoding.
//! - [`files`]: downloads that are not HTML (PDF, DOCX, CSV/TSV, JSON, text, markdown): what they
//!   are from magic bytes, type and extension, and their text as markdown, bounded on hostile input.
//! - [`stage`]: [`FetchStage`], the worker's handler: SSRF check, robots, shared per-host rate
//!   limit, fetch, then a `FetchedDoc` for clean or a terminal outcome.

pub mod block;
pub mod browser;
pub mod files;
pub mod http;
pub mod robots;
pub mod ssrf;
pub mod stage;

pub use stage::FetchStage;
