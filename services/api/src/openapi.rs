//! The OpenAPI 3.1 document, generated from the handlers' annotations so it cannot drift from
//! the code. The repository keeps a copy (`services/api/openapi.json`) that a test holds equal:
//! regenerate it with `UPDATE_OPENAPI=1 cargo test -p trawl-api openapi`.

use trawl_config::ApiConfig;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{RefOr, Schema};
use utoipa::{Modify, OpenApi};

use crate::error::{RateLimited, ReadOnly, Unauthorized, Unavailable};
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
        routes::list_batches,
        routes::get_batch,
        routes::cancel_batch,
        routes::list_jobs,
        routes::events,
        routes::export_results,
        routes::get_job,
        routes::report_view,
        routes::work_product,
        routes::token_info,
    ),
    components(responses(Unauthorized, ReadOnly, RateLimited, Unavailable)),
    modifiers(&BearerAuth),
    tags(
        (name = "batches", description = "Submit, follow and cancel batches of research questions"),
        (name = "jobs", description = "One question's report and the work products behind it"),
    )
)]
pub(crate) struct ApiDoc;

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

/// The document for an API configured with `api`: a batch's `maxItems` is its
/// `api.max_questions` (of `questions` and of `rows`, and of both together), so clients (and
/// schemathesis) learn the limit this server enforces.
pub(crate) fn document_for(api: &ApiConfig) -> String {
    let mut doc = ApiDoc::openapi();
    let questions = doc
        .components
        .as_mut()
        .and_then(|c| c.schemas.get_mut("BatchIn"))
        .and_then(|batch| match batch {
            RefOr::T(Schema::Object(batch)) => batch.properties.get_mut("questions"),
            _ => None,
        });
    match questions {
        Some(RefOr::T(Schema::Array(questions))) => questions.max_items = Some(api.max_questions),
        _ => unreachable!("BatchIn.questions is an inline array"),
    }
    let mut json = with_rules(doc.to_json().expect("the OpenAPI document serialises"));
    json["components"]["schemas"]["BatchIn"]["properties"]["rows"]["maxItems"] =
        api.max_questions.into();
    let json = serde_json::to_string_pretty(&json).expect("a value serialises");
    // utoipa 5 writes a Link object's `operationId` in snake case, which no client reads. The
    // key is unique to links (operations already say `operationId`), so a rename is exact; the
    // test below fails once utoipa fixes it, and this line can go.
    let mut json = json.replace("\"operation_id\": ", "\"operationId\": ");
    json.push('\n');
    json
}

/// The document with the rules utoipa's attributes cannot state, in JSON Schema 2020-12 (what
/// OpenAPI 3.1 uses): a batch holds its questions in `questions` or in `rows` (with a
/// `template`); a schema of fields has 1 to 50 fields, each named by 1 to 64 characters without
/// control characters.
fn with_rules(json: String) -> serde_json::Value {
    let mut doc: serde_json::Value = serde_json::from_str(&json).expect("utoipa writes JSON");
    let schemas = &mut doc["components"]["schemas"];
    let batch = &mut schemas["BatchIn"];
    batch["anyOf"] = serde_json::json!([
        {"required": ["questions"], "properties": {"questions": {"minItems": 1}, "rows": {"maxItems": 0}}},
        {"required": ["template", "rows"], "properties": {"template": {"type": "string"}, "rows": {"minItems": 1}}, "not": {"required": ["file"]}},
        {"required": ["file"], "properties": {"file": {"type": "string", "minLength": 1}, "rows": {"maxItems": 0}}},
    ]);
    let properties = &mut schemas["Fields"]["properties"]["properties"];
    properties["minProperties"] = 1.into();
    properties["maxProperties"] = (trawl_messages::fields::MAX_FIELDS as u64).into();
    properties["propertyNames"] = serde_json::json!({
        "minLength": 1,
        "maxLength": trawl_messages::fields::MAX_NAME_CHARS,
        "pattern": "^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
    });
    // A placeholder: a column's name in braces.
    schemas["BatchIn"]["properties"]["template"]["pattern"] = "\\{[^{}]+\\}".into();
    inline_fields(&mut doc);
    doc
}

/// A schema of fields is itself JSON Schema, which a client passes on as it is, not a type of
/// its own: `Fields` and the schemas it is made of are written where they are used.
fn inline_fields(doc: &mut serde_json::Value) {
    fn refs(value: &mut serde_json::Value, parts: &serde_json::Map<String, serde_json::Value>) {
        match value {
            serde_json::Value::Object(map) => {
                let named = (map.get("$ref").and_then(|r| r.as_str()))
                    .and_then(|r| r.strip_prefix("#/components/schemas/"))
                    .and_then(|name| parts.get(name));
                if let Some(schema) = named {
                    *value = schema.clone();
                    refs(value, parts);
                    return;
                }
                map.values_mut().for_each(|v| refs(v, parts));
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(|v| refs(v, parts)),
            _ => {}
        }
    }
    let Some(schemas) = doc["components"]["schemas"].as_object_mut() else {
        return;
    };
    let names = trawl_messages::fields::doc::SCHEMAS
        .iter()
        .map(|n| n.to_string());
    let parts: serde_json::Map<String, serde_json::Value> = names
        .filter_map(|n| schemas.remove(&n).map(|s| (n, s)))
        .collect();
    refs(doc, &parts);
}

/// The document for the default configuration: the one kept in the repository.
pub fn document() -> String {
    document_for(&ApiConfig::default())
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

    /// Every link names an operation of the document and parameters that operation has, so a
    /// client (or schemathesis' stateful phase) can follow it.
    #[test]
    fn links_name_existing_operations_and_their_parameters() {
        let raw = serde_json::to_value(ApiDoc::openapi()).unwrap();
        let doc: serde_json::Value = serde_json::from_str(&document()).unwrap();
        let operations: Vec<&serde_json::Value> = doc["paths"]
            .as_object()
            .unwrap()
            .values()
            .flat_map(|item| item.as_object().unwrap().values())
            .collect();
        let mut links = 0;
        for op in &operations {
            for response in op["responses"].as_object().unwrap().values() {
                for link in response["links"]
                    .as_object()
                    .into_iter()
                    .flat_map(|l| l.values())
                {
                    links += 1;
                    let target = link["operationId"].as_str().expect("operationId");
                    let target = operations
                        .iter()
                        .find(|o| o["operationId"] == target)
                        .unwrap_or_else(|| panic!("no operation {target}"));
                    for name in link["parameters"].as_object().unwrap().keys() {
                        let known = target["parameters"].as_array().unwrap();
                        assert!(known.iter().any(|p| p["name"] == name.as_str()), "{name}");
                    }
                }
            }
        }
        assert!(links >= 6, "{links} links");
        // Remove the rename in `document_for` once utoipa spells the key itself.
        assert!(raw.to_string().contains("\"operation_id\""));
    }

    /// The `language` option's pattern lists exactly the languages submission accepts.
    #[test]
    fn the_language_pattern_lists_the_languages_accepted() {
        let doc: serde_json::Value = serde_json::from_str(&document()).unwrap();
        let pattern = doc["components"]["schemas"]["JobOptions"]["properties"]["language"]
            ["pattern"]
            .as_str()
            .unwrap()
            .to_owned();
        let listed = (pattern.strip_prefix("^(").and_then(|p| p.split(')').next())).unwrap();
        let mut listed: Vec<&str> = listed.split('|').collect();
        let mut accepted = trawl_pipeline::batch::language_codes();
        listed.sort_unstable();
        accepted.sort_unstable();
        assert_eq!(listed, accepted);
    }

    #[test]
    fn the_served_document_states_the_configured_batch_limit() {
        let api = ApiConfig {
            max_questions: 7,
            ..ApiConfig::default()
        };
        let doc: serde_json::Value = serde_json::from_str(&document_for(&api)).unwrap();
        let questions = &doc["components"]["schemas"]["BatchIn"]["properties"]["questions"];
        assert_eq!(questions["maxItems"], 7);
    }
}
