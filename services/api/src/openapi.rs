//! The OpenAPI 3.1 document, generated from the handlers' annotations so it cannot drift from
//! the code. The repository keeps a copy (`services/api/openapi.json`) that a test holds equal:
//! regenerate it with `UPDATE_OPENAPI=1 cargo test -p trawl-api openapi`.

use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::routes;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "trawl",
        description = "Research questions in, cited reports out: submit batches of questions, follow them, collect each job's report and work products.",
        license(name = "Apache-2.0", identifier = "Apache-2.0")
    ),
    paths(
        routes::submit,
        routes::get_batch,
        routes::cancel_batch,
        routes::list_jobs,
        routes::events,
        routes::get_job,
        routes::work_product,
    ),
    modifiers(&BearerAuth),
    tags(
        (name = "batches", description = "Submit, follow and cancel batches of research questions"),
        (name = "jobs", description = "One question's report and the work products behind it"),
    )
)]
pub struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("A token from `trawl token create`"))
                    .build(),
            ),
        );
    }
}

/// The document as served at `/openapi.json`.
pub fn document() -> String {
    let mut json = ApiDoc::openapi()
        .to_pretty_json()
        .expect("the OpenAPI document serialises");
    json.push('\n');
    json
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openapi_document_in_the_repository_is_current() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("openapi.json");
        let generated = document();
        if std::env::var_os("UPDATE_OPENAPI").is_some() {
            std::fs::write(&path, &generated).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == generated,
            "services/api/openapi.json is stale: run `UPDATE_OPENAPI=1 cargo test -p trawl-api openapi`"
        );
        let doc: serde_json::Value = serde_json::from_str(&generated).unwrap();
        assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    }
}
