//! `bench-<n>.test`: many small sites of generated articles for the fetch benchmark.

use axum::response::Response;

/// Answers for `bench-<n>.test`; `None` when `host` is not one of them.
pub fn handle(_host: &str, _path: &str) -> Option<Response> {
    None
}
