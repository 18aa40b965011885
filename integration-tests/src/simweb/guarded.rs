//! Hosts that make fetch escalate or hold back: `guarded.test` and the robots.txt variants.

use axum::http::{HeaderMap, Uri};
use axum::response::Response;

/// Answers for the hosts of this module; `None` when `host` is not one of them.
pub async fn handle(_host: &str, _uri: &Uri, _headers: &HeaderMap) -> Option<Response> {
    None
}
