//! Library side of the `trawl` command: what the CLI, the benchmarks and the tests share.
//!
//! - [`embedded`]: every stage in one process over the in-memory twins (`trawl run`).

pub mod embedded;
