//! Test support for trawl's integration tests.
//!
//! `simweb` is the deterministic fake outside world: a generated corpus of sites, a
//! SearXNG-compatible search endpoint over it, and an OpenAI-compatible LLM endpoint.
//! `procfs` reads the kernel's CPU and memory accounting for the benchmarks and the chaos suite.

pub mod benchkit;
pub mod procfs;
pub mod simweb;
