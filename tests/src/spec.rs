//! Validates bodies the bridge emits against the official OpenAPI documents of each dialect,
//! read from `OTC_SPEC_DIR` (see `otc_fixtures::spec_dir`).
//!
//! The upstream `CallToolResponse` schema rejects every real response (SOURCES.md: `value` and
//! `error` are declared only inside `oneOf` while the object is closed). We patch that one bug
//! here, exactly as `oxp-1.0/openapi.flat.derived.json` does, and nothing else.

use std::path::Path;

use otc_mappings::otc::Dialect;
use serde_json::{Value, json};

/// The official document of one dialect, ready to validate response bodies.
#[derive(Debug)]
pub struct SpecDocument {
    root: Value,
}

impl SpecDocument {
    /// The document for `dialect`, or `None` when `OTC_SPEC_DIR` is not set.
    pub fn load(dialect: Dialect) -> Option<Self> {
        let dir = otc_fixtures::spec_dir()?;
        Some(Self::from_file(&dir.join(Self::file(dialect))))
    }

    /// The file holding `dialect`'s document, relative to the spec directory.
    pub fn file(dialect: Dialect) -> &'static str {
        match dialect {
            Dialect::Otc | Dialect::RfcDraft => "otc-1.0/openapi.json",
            Dialect::OxpMain => "oxp-1.0/openapi.main.json",
            Dialect::OxpFlat => "oxp-1.0/openapi.flat.derived.json",
        }
    }

    /// Reads a document and applies the `CallToolResponse` fix.
    pub fn from_file(path: &Path) -> Self {
        let text =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut root: Value = serde_json::from_str(&text).unwrap();
        let props = &mut root["components"]["schemas"]["CallToolResponse"]["properties"];
        if props.get("value").is_none() {
            props["value"] =
                json!({"type": ["object", "array", "string", "number", "boolean", "null"]});
            props["error"] = json!({"$ref": "#/components/schemas/ToolError"});
        }
        Self { root }
    }

    /// The named component schema (e.g. `ToolDefinition`).
    pub fn component(&self, name: &str) -> jsonschema::Validator {
        self.validator(&format!("#/components/schemas/{name}"))
    }

    fn validator(&self, pointer: &str) -> jsonschema::Validator {
        let mut schema = self.root.clone();
        schema["$ref"] = Value::String(pointer.to_owned());
        jsonschema::options()
            .build(&schema)
            .unwrap_or_else(|e| panic!("{pointer}: {e}"))
    }

    /// Asserts `body` is valid for the response `status` of `method path`.
    pub fn check_response(&self, method: &str, path: &str, status: u16, body: &Value) {
        let escaped = path.replace('~', "~0").replace('/', "~1");
        let responses = format!("/paths/{escaped}/{method}/responses/{status}");
        let Some(response) = self.root.pointer(&responses) else {
            panic!("the spec defines no {status} response for {method} {path}");
        };
        let pointer = match response.get("$ref").and_then(Value::as_str) {
            Some(r) => format!(
                "{}/content/application~1json/schema",
                r.trim_start_matches('#').to_owned()
            ),
            None => format!("{responses}/content/application~1json/schema"),
        };
        assert!(
            self.root.pointer(&pointer).is_some(),
            "no schema at {pointer}"
        );
        let validator = self.validator(&format!("#{pointer}"));
        let errors: Vec<String> = validator
            .iter_errors(body)
            .map(|e| format!("{} at {}", e, e.instance_path().as_str()))
            .collect();
        assert!(
            errors.is_empty(),
            "{method} {path} {status} body does not match the spec:\n{errors:#?}\nbody: {body:#}"
        );
    }
}
