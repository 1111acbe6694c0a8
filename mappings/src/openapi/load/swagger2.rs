//! Swagger 2.0 → the OpenAPI 3.x shape (see the parent module for what that shape is).
//!
//! Operations are rewritten in place; everything the mapper does not read (tags, external docs)
//! is left alone. References to parameters and responses are followed here, because their 2.0
//! form differs from the 3.x form; references to schemas (`#/definitions/…`) are kept, because
//! 2.0 schemas already are (nearly) 3.0 schemas.

use serde_json::{Map, Value, json};

use crate::error::{Diagnostic, Severity};
use crate::openapi::refs::chase;
use crate::pointer;

const METHODS: &[&str] = &[
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// Keywords a non-body 2.0 parameter (or its `items`) shares with a schema.
const SCHEMA_KEYWORDS: &[&str] = &[
    "type",
    "format",
    "items",
    "default",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "enum",
    "multipleOf",
    "x-nullable",
];

pub(super) fn convert(
    mut root: Value,
    base_uri: Option<&str>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Value {
    let servers = servers(&root, base_uri);
    let schemes = security_schemes(&root);
    let global_consumes = strings(root.get("consumes"));
    let global_produces = strings(root.get("produces"));

    // Operations are converted against a read-only copy of the root (for references), then put
    // back: the paths object is taken out, so the root can be borrowed meanwhile.
    let paths = root
        .get_mut("paths")
        .map(Value::take)
        .unwrap_or(Value::Null);
    let mut new_paths = Map::new();
    if let Value::Object(paths) = paths {
        for (path, item) in paths {
            let pointer = format!("/paths/{}", pointer::escape(&path));
            let item = match chase(&root, &item) {
                Ok(resolved) => resolved.clone(),
                Err(reason) => {
                    diagnostics.push(Diagnostic::new(
                        Severity::Skipped,
                        Some(&path),
                        Some(pointer),
                        format!("path item: {reason}"),
                    ));
                    continue;
                }
            };
            let Value::Object(mut item) = item else {
                continue;
            };
            let shared: Vec<Value> = item
                .remove("parameters")
                .and_then(|p| match p {
                    Value::Array(a) => Some(a),
                    _ => None,
                })
                .unwrap_or_default();
            for method in METHODS {
                let Some(Value::Object(op)) = item.get_mut(*method) else {
                    continue;
                };
                let context = OpContext {
                    root: &root,
                    consumes: strings(op.get("consumes")).or_else(|| global_consumes.clone()),
                    produces: strings(op.get("produces")).or_else(|| global_produces.clone()),
                };
                convert_operation(op, &shared, &context);
            }
            new_paths.insert(path, Value::Object(item));
        }
    }

    if let Value::Object(map) = &mut root {
        map.insert("paths".into(), Value::Object(new_paths));
        if let Some(servers) = servers {
            map.insert("servers".into(), servers);
        }
        let components = map
            .entry("components")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(components) = components {
            components.insert("securitySchemes".into(), Value::Object(schemes));
        }
    }
    root
}

struct OpContext<'a> {
    root: &'a Value,
    consumes: Option<Vec<String>>,
    produces: Option<Vec<String>>,
}

fn convert_operation(op: &mut Map<String, Value>, shared: &[Value], cx: &OpContext<'_>) {
    let own: Vec<Value> = match op.remove("parameters") {
        Some(Value::Array(a)) => a,
        _ => Vec::new(),
    };
    // Operation parameters override path-level ones with the same name and location.
    let mut params: Vec<Value> = Vec::new();
    for raw in shared.iter().chain(own.iter()) {
        let resolved = match chase(cx.root, raw) {
            Ok(p) => p.clone(),
            // Kept as the unresolvable reference: the mapper reports it for this operation.
            Err(_) => raw.clone(),
        };
        let key = (resolved.get("name").cloned(), resolved.get("in").cloned());
        if key.0.is_some() {
            params.retain(|p| (p.get("name").cloned(), p.get("in").cloned()) != key);
        }
        params.push(resolved);
    }

    let consumes = cx
        .consumes
        .clone()
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| vec!["application/json".to_owned()]);
    let mut converted = Vec::new();
    let mut form_props = Map::new();
    let mut form_required = Vec::new();
    let mut has_file = false;
    for param in params {
        match param.get("in").and_then(Value::as_str) {
            Some("body") => {
                let schema = param.get("schema").cloned().unwrap_or_else(|| json!({}));
                let content: Map<String, Value> = consumes
                    .iter()
                    .map(|m| (m.clone(), json!({ "schema": schema })))
                    .collect();
                let mut body = Map::new();
                copy(&param, &mut body, &["description", "required"]);
                body.insert("content".into(), Value::Object(content));
                op.insert("requestBody".into(), Value::Object(body));
            }
            Some("formData") => {
                let Some(name) = param.get("name").and_then(Value::as_str) else {
                    continue;
                };
                let mut schema = param_schema(&param);
                if schema.get("type").and_then(Value::as_str) == Some("file") {
                    has_file = true;
                    schema = json!({ "type": "string", "format": "binary" });
                }
                if let (Some(d), Value::Object(s)) = (param.get("description"), &mut schema) {
                    s.insert("description".into(), d.clone());
                }
                if param.get("required").and_then(Value::as_bool) == Some(true) {
                    form_required.push(Value::String(name.to_owned()));
                }
                form_props.insert(name.to_owned(), schema);
            }
            Some(location) => {
                let mut out = Map::new();
                copy(&param, &mut out, &["name", "in", "description", "required"]);
                out.insert("schema".into(), param_schema(&param));
                if param.get("type").and_then(Value::as_str) == Some("array") {
                    let format = param
                        .get("collectionFormat")
                        .and_then(Value::as_str)
                        .unwrap_or("csv");
                    let (style, explode) = match (format, location) {
                        ("multi", _) => ("form", true),
                        ("ssv", "query") => ("spaceDelimited", false),
                        ("pipes", "query") => ("pipeDelimited", false),
                        (_, "query" | "cookie") => ("form", false),
                        _ => ("simple", false),
                    };
                    out.insert("style".into(), style.into());
                    out.insert("explode".into(), explode.into());
                }
                converted.push(Value::Object(out));
            }
            // No `in`: passed on, so the mapper reports the bad parameter for this operation.
            None => converted.push(param),
        }
    }
    if !form_props.is_empty() {
        let media = if has_file
            || consumes
                .iter()
                .any(|c| c.starts_with("multipart/form-data"))
        {
            "multipart/form-data"
        } else {
            "application/x-www-form-urlencoded"
        };
        let mut schema = json!({ "type": "object", "properties": form_props });
        if !form_required.is_empty() {
            schema["required"] = Value::Array(form_required);
        }
        op.insert(
            "requestBody".into(),
            json!({ "required": true, "content": { media: { "schema": schema } } }),
        );
    }
    op.insert("parameters".into(), Value::Array(converted));

    let produces = cx
        .produces
        .clone()
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| vec!["application/json".to_owned()]);
    if let Some(Value::Object(responses)) = op.get_mut("responses") {
        for response in responses.values_mut() {
            let resolved = match chase(cx.root, response) {
                Ok(r) => r.clone(),
                Err(_) => continue,
            };
            let mut out = Map::new();
            copy(&resolved, &mut out, &["description"]);
            if let Some(schema) = resolved.get("schema") {
                let content: Map<String, Value> = produces
                    .iter()
                    .map(|m| (m.clone(), json!({ "schema": schema })))
                    .collect();
                out.insert("content".into(), Value::Object(content));
            }
            *response = Value::Object(out);
        }
    }
}

/// The schema of a non-body parameter: its own schema keywords.
fn param_schema(param: &Value) -> Value {
    let mut schema = Map::new();
    copy(param, &mut schema, SCHEMA_KEYWORDS);
    if let Some(items) = schema.get_mut("items") {
        *items = param_schema(items);
    }
    Value::Object(schema)
}

fn copy(from: &Value, to: &mut Map<String, Value>, keys: &[&str]) {
    for key in keys {
        if let Some(v) = from.get(*key) {
            to.insert((*key).to_owned(), v.clone());
        }
    }
}

fn strings(v: Option<&Value>) -> Option<Vec<String>> {
    match v? {
        Value::Array(items) => Some(
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
        ),
        Value::String(s) => Some(vec![s.clone()]),
        _ => None,
    }
}

/// `schemes` + `host` + `basePath`. Without `schemes`, the scheme the document was fetched with
/// (the 2.0 rule), else https. Without `host`, the base path alone (relative to the document).
fn servers(root: &Value, base_uri: Option<&str>) -> Option<Value> {
    let host = root.get("host").and_then(Value::as_str);
    let base_path = root.get("basePath").and_then(Value::as_str).unwrap_or("");
    let base_path = base_path.trim_end_matches('/');
    let url = match host {
        Some(host) if !host.trim().is_empty() => {
            let fetched_with = base_uri.and_then(|b| {
                ["https", "http"]
                    .into_iter()
                    .find(|s| b.starts_with(&format!("{s}://")))
            });
            let declared = strings(root.get("schemes")).unwrap_or_default();
            let scheme = if declared.iter().any(|s| s == "https") {
                "https"
            } else if let Some(first) = declared.iter().find(|s| *s == "http") {
                first.as_str()
            } else {
                fetched_with.unwrap_or("https")
            };
            format!(
                "{scheme}://{}{base_path}",
                host.trim().trim_end_matches('/')
            )
        }
        _ if base_path.is_empty() => return None,
        _ => base_path.to_owned(),
    };
    Some(json!([{ "url": url }]))
}

fn security_schemes(root: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    let Some(Value::Object(defs)) = root.get("securityDefinitions") else {
        return out;
    };
    for (name, def) in defs {
        let def = chase(root, def).unwrap_or(def);
        let mut scheme = Map::new();
        copy(def, &mut scheme, &["description"]);
        match def.get("type").and_then(Value::as_str) {
            Some("basic") => {
                scheme.insert("type".into(), "http".into());
                scheme.insert("scheme".into(), "basic".into());
            }
            Some("apiKey") => copy(def, &mut scheme, &["type", "name", "in"]),
            Some("oauth2") => {
                let flow = match def.get("flow").and_then(Value::as_str) {
                    Some("implicit") => "implicit",
                    Some("password") => "password",
                    Some("application") => "clientCredentials",
                    _ => "authorizationCode",
                };
                let mut f = Map::new();
                copy(def, &mut f, &["authorizationUrl", "tokenUrl", "scopes"]);
                scheme.insert("type".into(), "oauth2".into());
                scheme.insert("flows".into(), json!({ flow: f }));
            }
            _ => copy(def, &mut scheme, &["type"]),
        }
        out.insert(name.clone(), Value::Object(scheme));
    }
    out
}
