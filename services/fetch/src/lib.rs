//! The fetch stage: get the page when it can be had, politely, and say why when it cannot.
//!
//! Every connection goes through `trawl_guard` (the SSRF guard and the resolver that applies
//! it and the configured host overrides), shared with webhooks.
//!
//! - [`robots`]: robots.txt per RFC 9309, cached per origin in the store.
//! - [`http`]: levels 0 and 1 over plain HTTP, bounded in size, time and redirects; charset
//!   decoding.
//! - [`block`]: is a response the page, or a refusal, a bot-management interstitial or a
//!   JavaScript-only shell standing in for it.
//! - [`browser`]: levels 2 and 3, Chromium over WebDriver (fantoccini), pooled sessions that are
//!   always closed.
//! - [`browser_proxy`]: the forward proxy that is Chromium's only way out, resolving and
//!   connecting through the SSRF guard.
//! - [`crawl`]: the optional shallow crawl, the links of a page worth following.
//! - Downloads that are not HTML (PDF, DOCX, CSV/TSV, JSON, text, markdown) are told apart and
//!   turned into markdown by [`trawl_files`], bounded on hostile input; `doc://` sources are read
//!   from the job's documents root by [`trawl_documents`].
//! - [`metrics`]: the stage's metrics.
//! - [`politeness`]: what a fetch waits for, fleet-wide: robots.txt, the host's rate and its
//!   requests in flight.
//! - [`pages`]: the fleet's page cache: a fresh copy read instead of a fetch, a stale one
//!   revalidated, one fetch for the jobs that want a page at once.
//! - [`one`]: one page fetched for a tool (`trawl mcp`, `trawl extract`) with the same guard,
//!   robots.txt and levels 0–1 as the stage.
//! - [`stage`]: [`FetchStage`], the handler of both fetch queues: SSRF check, politeness, the
//!   level the host last needed, the fetch, escalation on a block, then a `FetchedDoc` for clean
//!   or a terminal outcome.

pub mod block;
pub mod browser;
pub mod browser_proxy;
pub mod crawl;
pub mod http;
pub mod metrics;
pub mod one;
pub mod pages;
pub mod politeness;
pub mod robots;
pub mod stage;

pub use stage::FetchStage;
