//! Placeholder until this provider's format lands.

use std::sync::Arc;

use axum::Router;

use super::super::server::AppState;

pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new()
}
