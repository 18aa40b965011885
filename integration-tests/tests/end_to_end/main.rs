//! The end-to-end tests and the chaos suite, one module per area, in one test binary: each file
//! as a binary of its own compiled and linked the shared fleet code again (nineteen times), a
//! third of the test build. nextest still runs every test in a process of its own; the chaos
//! cases are the modules named `chaos*` (`.config/nextest.toml`, `scripts/chaos`).

mod chaos_kit;
mod common;

mod api;
mod api_schema;
mod budget;
mod chaos;
mod chaos_api;
mod chaos_browser;
mod chaos_cache;
mod chaos_input;
mod chaos_load;
mod chaos_ssrf;
mod documents;
mod domains;
mod embedded;
mod fetch;
mod fields;
mod files;
mod fleet;
mod follow_up_corpus;
mod languages;
mod llm_providers;
mod markdown;
mod mcp;
mod ops;
mod page_cache;
mod shared_nothing;
mod slow_model;
mod ui;
