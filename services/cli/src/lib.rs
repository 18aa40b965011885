//! Library side of the `trawl` command: what the CLI, the benchmarks and the tests share.
//!
//! - [`embedded`]: every stage in one process over the in-memory twins (`trawl run`).
//! - [`extract`]: a page's main content as markdown, text or JSON (`trawl extract`).
//! - [`input`]: local files and standard input, read with a bound.
//! - [`mcp`]: trawl's tools for agents over MCP (`trawl mcp`).
//! - [`monitor`]: the fleet's queue and batch gauges (`trawl monitor`).
//! - [`stages`]: the stage registry, each stage kind to its constructor.

pub mod embedded;
pub mod extract;
pub mod input;
pub mod mcp;
pub mod monitor;
pub mod stages;
