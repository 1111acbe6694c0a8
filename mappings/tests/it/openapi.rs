//! Hand-written OpenAPI fixtures (`tests/fixtures/`), one feature tour per version, translated
//! and snapshot-tested whole: definitions, request plans and diagnostics. Plus targeted checks
//! of rules a snapshot could hide, and robustness against truncated and garbage input.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Mutex;

use otc_mappings::openapi::{
    BodySource, CredentialSource, FetchError, MapOptions, NoFetch, RefFetcher, RequestPlan,
    map_document,
};
use otc_mappings::{Mapped, MappedTool, MappingError, Severity, Target};
use serde_json::{Value, json};

use crate::checks::violations;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Reads sibling documents from disk and records what was asked for.
#[derive(Default)]
struct FileFetcher {
    asked: Mutex<Vec<String>>,
}

impl RefFetcher for FileFetcher {
    fn fetch(&self, uri: &str) -> Result<String, FetchError> {
        self.asked.lock().unwrap().push(uri.to_owned());
        std::fs::read_to_string(uri).map_err(|e| FetchError::Failed(e.into()))
    }
}

fn map_fixture(name: &str, options: MapOptions) -> Mapped<MappedTool> {
    let path = fixtures().join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let options = MapOptions {
        base_uri: Some(path.display().to_string()),
        ..options
    };
    let mapped = map_document(&text, &options, &FileFetcher::default()).unwrap();
    let problems = violations(&mapped);
    assert!(problems.is_empty(), "{name}: {problems:#?}");
    mapped
}

fn snapshot(mapped: &Mapped<MappedTool>) -> Value {
    // The fixture directory differs per checkout: keep it out of the snapshot.
    let text = serde_json::to_string(mapped).unwrap();
    let dir = fixtures().display().to_string();
    serde_json::from_str(&text.replace(&dir, "<fixtures>")).unwrap()
}

fn tool<'a>(mapped: &'a Mapped<MappedTool>, tool: &str) -> (&'a MappedTool, &'a RequestPlan) {
    let found = mapped
        .tools
        .iter()
        .find(|t| t.definition.id.tool == tool)
        .unwrap_or_else(|| panic!("no tool {tool}"));
    let Target::Http(plan) = &found.target else {
        panic!("not an HTTP target")
    };
    (found, plan)
}

#[test]
fn swagger2_fixture() {
    let mapped = map_fixture("swagger2.yaml", MapOptions::default());
    insta::assert_json_snapshot!("swagger2", snapshot(&mapped));
    let (_, plan) = tool(&mapped, "UploadFile");
    let body = plan.body.as_ref().unwrap();
    assert_eq!(body.media_type, "multipart/form-data");
    assert_eq!(body.file_fields, ["file"]);
    assert_eq!(
        plan.server_url.as_deref(),
        Some("https://petstore.example.com/v2")
    );
}

#[test]
fn openapi30_fixture() {
    let options = MapOptions {
        bridge_credentials: BTreeSet::from(["header_key".to_owned()]),
        ..MapOptions::default()
    };
    let mapped = map_fixture("openapi30.yaml", options);
    insta::assert_json_snapshot!("openapi30", snapshot(&mapped));

    let (get, plan) = tool(&mapped, "GetItem");
    let input = get.definition.input_schema.to_value();
    let props = input["properties"].as_object().unwrap();
    assert!(props.contains_key("id") && props.contains_key("query_id"));
    assert!(!props.contains_key("Accept"));
    assert_eq!(
        get.definition.description,
        "Get one item.\n\nReturns the item with its price."
    );
    assert_eq!(
        plan.server_url.as_deref(),
        Some("https://eu.tour.example.com/api")
    );
    let (put, plan) = tool(&mapped, "ReplaceItem");
    assert_eq!(
        plan.body.as_ref().unwrap().source,
        BodySource::Spread(
            ["name", "price", "secret", "kind", "x-internal"]
                .map(String::from)
                .to_vec()
        )
    );
    // The bridge supplies header_key, so only basic is required in the second alternative.
    assert_eq!(plan.security[1][1].source, CredentialSource::Bridge);
    assert_eq!(
        put.definition.requirements.as_ref().unwrap().authorization[0].id,
        "oauth"
    );
    let (delete, _) = tool(&mapped, "DeleteItem");
    assert!(delete.definition.description.starts_with("Deprecated."));
    assert!(delete.definition.requirements.is_none());
    assert_eq!(delete.definition.output_schema, None);
    let skipped: Vec<_> = mapped
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Skipped)
        .map(|d| d.operation.clone().unwrap_or_default())
        .collect();
    assert_eq!(skipped, ["GET /broken", "POST /broken"]);
}

#[test]
fn openapi31_fixture_bundles_the_sibling_document() {
    let fetcher = FileFetcher::default();
    let path = fixtures().join("openapi31.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let options = MapOptions {
        base_uri: Some(path.display().to_string()),
        ..MapOptions::default()
    };
    let mapped = map_document(&text, &options, &fetcher).unwrap();
    assert!(violations(&mapped).is_empty(), "{:#?}", violations(&mapped));
    // One fetch per document, however many references point into it.
    assert_eq!(fetcher.asked.lock().unwrap().len(), 1);
    insta::assert_json_snapshot!("openapi31", snapshot(&mapped));
    let (create, _) = tool(&mapped, "CreateNode");
    assert_eq!(
        create.definition.input_schema.to_value()["properties"]["name"]["type"],
        json!(["string", "null"])
    );
    assert_eq!(create.definition.version.to_string(), "2024.6.20");
}

#[test]
fn external_refs_without_a_fetcher_degrade_per_operation() {
    let path = fixtures().join("openapi31.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let options = MapOptions {
        base_uri: Some(path.display().to_string()),
        ..MapOptions::default()
    };
    let mapped = map_document(&text, &options, &NoFetch).unwrap();
    assert!(violations(&mapped).is_empty());
    assert_eq!(
        mapped.tools.len(),
        1,
        "the path item in the sibling file is skipped"
    );
    assert!(
        mapped
            .diagnostics
            .iter()
            .any(|d| d.severity == Severity::Skipped
                && d.operation.as_deref() == Some("/owners/{ownerId}"))
    );
}

#[test]
fn remote_refs_are_not_followed_unless_allowed() {
    let doc = json!({"openapi": "3.0.0", "info": {"title": "R", "version": "1"}, "paths": {"/a": {"get": {
        "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "https://example.com/s.json#/S"}}}}}}}}});
    let fetcher = FileFetcher::default();
    let mapped = map_document(&doc.to_string(), &MapOptions::default(), &fetcher).unwrap();
    assert!(fetcher.asked.lock().unwrap().is_empty());
    assert_eq!(
        *mapped.tools[0].definition.output_schema.as_ref().unwrap(),
        json!({})
    );
    let allowed = MapOptions {
        allow_remote_refs: true,
        ..MapOptions::default()
    };
    let _ = map_document(&doc.to_string(), &allowed, &fetcher).unwrap();
    assert_eq!(
        *fetcher.asked.lock().unwrap(),
        ["https://example.com/s.json"]
    );
}

#[test]
fn names_collide_deterministically_and_stay_short() {
    let mapped = map_fixture("names.json", MapOptions::default());
    insta::assert_json_snapshot!("names", snapshot(&mapped));
    let ids: Vec<String> = mapped
        .tools
        .iter()
        .map(|t| t.definition.id.to_string())
        .collect();
    assert_eq!(ids[0], "Api.List@1.0.0");
    assert_eq!(ids[1], "Api.List_2@1.0.0");
    assert!(mapped.tools.iter().all(|t| t.definition.name.len() <= 64));
    // Same input, same output.
    let again = map_fixture("names.json", MapOptions::default());
    assert_eq!(snapshot(&mapped), snapshot(&again));
}

#[test]
fn configured_toolkit_and_version_win() {
    let options = MapOptions {
        toolkit: Some("my pets".into()),
        version: Some("3.1".into()),
        ..MapOptions::default()
    };
    let mapped = map_fixture("swagger2.yaml", options);
    assert_eq!(
        mapped.tools[0].definition.id.to_string(),
        "MyPets.AddPet@3.1.0"
    );
}

#[test]
fn unusable_documents_are_errors() {
    let err = |text: &str| map_document(text, &MapOptions::default(), &NoFetch).unwrap_err();
    assert!(matches!(err("{\"openapi\": "), MappingError::Parse { .. }));
    assert!(matches!(
        err("openapi: 2.5.0\npaths: {}"),
        MappingError::UnsupportedVersion(_)
    ));
    assert!(matches!(
        err("swagger: '1.2'"),
        MappingError::UnsupportedVersion(_)
    ));
    assert!(matches!(err("just text"), MappingError::Invalid(_)));
    assert!(matches!(
        err("openapi: 3.0.0\npaths: [1]"),
        MappingError::Invalid(_)
    ));
}

/// Every prefix of every fixture, and some mangled forms: never a panic, never a hang.
#[test]
fn truncated_and_garbage_input_never_panics() {
    for name in [
        "swagger2.yaml",
        "openapi30.yaml",
        "openapi31.yaml",
        "names.json",
    ] {
        let text = std::fs::read_to_string(fixtures().join(name)).unwrap();
        let cuts: Vec<usize> = (0..text.len())
            .step_by(97)
            .chain([text.len() / 2])
            .collect();
        for cut in cuts {
            let Some(prefix) = text.get(..cut) else {
                continue;
            };
            let _ = map_document(prefix, &MapOptions::default(), &NoFetch);
        }
        let mangled = text.replace("type", "tpye").replace("$ref", "$ref\u{0}");
        let _ = map_document(&mangled, &MapOptions::default(), &NoFetch);
    }
    for garbage in [
        "",
        "null",
        "[]",
        "42",
        "\u{feff}",
        "openapi: [3]",
        "swagger: 2.0\npaths: 7",
        "{\"openapi\":\"3.1.0\",\"paths\":{\"/x\":{\"get\":{\"parameters\":[7,null,{\"$ref\":5}],\"requestBody\":{\"$ref\":\"#/\"},\"responses\":[]}}}}",
    ] {
        let _ = map_document(garbage, &MapOptions::default(), &NoFetch);
    }
}
