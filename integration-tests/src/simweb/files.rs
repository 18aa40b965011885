//! `files.test`: documents that are not HTML (PDF, DOCX, CSV …), for fetch's file conversion.

use axum::response::Response;

pub const HOST: &str = "files.test";

/// Serves `path` on files.test; `None` means 404.
pub fn handle(_path: &str) -> Option<Response> {
    None
}
