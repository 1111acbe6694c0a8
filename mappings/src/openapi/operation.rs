//! One operation → one tool: assembles the input object (parameters and body), the output
//! schema, the requirements and the request plan that forwards a call.
//!
//! Input property names: a parameter keeps its name unless another location already took it;
//! locations claim names in the order path, query, header, cookie, so `id` in the path stays
//! `id` and `id` in the query becomes `query_id` (reported). The body's properties are spread
//! beside the parameters when the body is a plain object schema and none of its property names
//! is taken; otherwise the body is the one property `body` (`request_body` when `body` is taken).

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::error::{Diagnostic, Severity};
use crate::naming::{UniqueNames, segment, segment_from_route, tool_name};
use crate::openapi::body::{self, Body};
use crate::openapi::params::{self, Param, ParamContext, ParamError, location_prefix};
use crate::openapi::refs::RefError;
use crate::openapi::response;
use crate::openapi::schema::Fixes;
use crate::openapi::security::map_security;
use crate::openapi::servers::server_url;
use crate::otc::{Schema, ToolDefinition, ToolId, ToolVersion};
use crate::plan::{BodyKind, BodyPlan, BodySource, ParamLocation, ParamStyle, RequestPlan};
use crate::schema::{Inliner, ensure_descriptions};
use crate::tool::{MappedTool, Target};

/// What every operation of a document shares.
#[derive(Debug)]
pub(crate) struct DocContext<'r> {
    pub(crate) root: &'r Value,
    pub(crate) toolkit: String,
    pub(crate) version: ToolVersion,
    /// The version label as written (configured, else `info.version`), for the lockfile.
    pub(crate) label: Option<Arc<str>>,
    pub(crate) base_uri: Option<&'r str>,
    pub(crate) bridge_credentials: &'r BTreeSet<String>,
}

/// One operation of the document.
#[derive(Debug)]
pub(crate) struct Operation<'r> {
    pub(crate) method: &'static str,
    pub(crate) path: &'r str,
    pub(crate) item: &'r Value,
    pub(crate) op: &'r Value,
    /// `GET /pets/{id}`.
    pub(crate) label: String,
    /// `/paths/~1pets~1{id}/get`.
    pub(crate) pointer: String,
}

/// Why an operation cannot be served. It becomes the `Skipped` diagnostic of the operation (the
/// rest of the document is still served), so its text is the whole reason.
#[derive(Debug, thiserror::Error)]
pub(crate) enum OperationError {
    #[error("the operation is not an object")]
    NotAnObject,
    #[error(transparent)]
    Param(#[from] ParamError),
    // The reference error's text is part of this one: a diagnostic shows only the top error.
    #[error("request body: {0}")]
    Body(#[source] RefError),
    /// The document's schema budget ran out (see `Inliner::with_budget`) while inlining
    /// `schema`; what was inlined after that is incomplete.
    #[error(
        "the document's schemas expand to more than {budget} nodes in all \
         (reached while inlining '{schema}'); a $ref graph this large is refused rather \
         than expanded"
    )]
    OverBudget { budget: usize, schema: String },
}

/// Translates one operation, or says why it cannot be served.
pub(crate) fn map_operation<'r>(
    cx: &DocContext<'r>,
    operation: &Operation<'r>,
    inliner: &mut Inliner<'r>,
    names: &mut UniqueNames,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<MappedTool, OperationError> {
    let Operation {
        op, label, pointer, ..
    } = operation;
    if !op.is_object() {
        return Err(OperationError::NotAnObject);
    }
    let mut fixes = Fixes::new();
    let mut params = read_params(cx, operation, inliner, diagnostics, &mut fixes)?;
    let body = match op.get("requestBody") {
        Some(raw) => body::read(cx.root, raw, inliner, label, diagnostics, &mut fixes)
            .map_err(OperationError::Body)?,
        None => None,
    };

    let mut input = InputObject::default();
    name_params(&mut params, &mut input, label, pointer, diagnostics);
    let body_plan = body.map(|b| place_body(b, &mut input));
    let mut input_schema = input.into_schema();
    ensure_descriptions(&mut input_schema);

    let output = response::read(
        cx.root,
        op.get("responses"),
        inliner,
        label,
        pointer,
        diagnostics,
        &mut fixes,
    );
    // Past the document's budget the schemas above are incomplete: the operation is not served.
    if let Some(schema) = inliner.over_budget() {
        return Err(OperationError::OverBudget {
            budget: inliner.budget(),
            schema: schema.to_owned(),
        });
    }
    let security = map_security(
        cx.root,
        cx.root.get("security"),
        op.get("security"),
        cx.bridge_credentials,
    );
    for problem in &security.problems {
        diagnostics.push(Diagnostic::new(
            Severity::Warning,
            Some(label),
            Some(format!("{pointer}/security")),
            problem.clone(),
        ));
    }
    if !fixes.is_empty() {
        let list: Vec<_> = fixes.into_iter().collect();
        diagnostics.push(Diagnostic::new(
            Severity::Info,
            Some(label),
            Some(pointer.clone()),
            format!(
                "invalid JSON Schema keywords repaired or dropped: {}",
                list.join(", ")
            ),
        ));
    }

    let tool = tool_segment(operation);
    let tool = names.claim(&tool, label, diagnostics);
    let plan = RequestPlan {
        operation: label.clone(),
        method: operation.method.to_ascii_uppercase(),
        path: operation.path.to_owned(),
        server_url: server_url(
            op.get("servers")
                .or_else(|| operation.item.get("servers"))
                .or_else(|| cx.root.get("servers")),
            cx.base_uri,
        ),
        params: params.into_iter().map(|p| p.plan).collect(),
        body: body_plan,
        security: security.alternatives,
        accept: output.accept,
        operation_id: op
            .get("operationId")
            .and_then(Value::as_str)
            .map(str::to_owned),
        tags: op
            .get("tags")
            .and_then(Value::as_array)
            .map(|tags| {
                tags.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default(),
    };
    let definition = ToolDefinition {
        id: ToolId::exact(cx.toolkit.clone(), tool.clone(), cx.version),
        name: tool_name(&cx.toolkit, &tool),
        description: description(op, label, security.note.as_deref()),
        version: cx.version,
        // Frozen here, so the trees of one operation are freed before the next is translated.
        input_schema: Schema::new(&input_schema),
        output_schema: output.schema.as_ref().map(Schema::new),
        requirements: security.requirements,
    };
    Ok(MappedTool {
        definition: Arc::new(definition),
        destructive: is_destructive(operation.method, op),
        target: Target::Http(Arc::new(plan)),
        label: cx.label.clone(),
        hidden_inputs: Vec::new(),
    })
}

/// Whether calling the operation may change something upstream: GET, HEAD, OPTIONS and TRACE
/// are read-only (RFC 9110 §9.2.1 "safe" methods), every other method is destructive, unless
/// the operation says otherwise with MCP-style hints under `x-mcp` (`readOnlyHint`,
/// `destructiveHint`, directly or in `annotations`), read as MCP reads them.
pub fn is_destructive(method: &str, op: &Value) -> bool {
    let hints = op.get("x-mcp").map(|x| x.get("annotations").unwrap_or(x));
    let hint = |name: &str| hints.and_then(|h| h.get(name)).and_then(Value::as_bool);
    match (hint("readOnlyHint"), hint("destructiveHint")) {
        (Some(true), _) => false,
        (_, Some(destructive)) => destructive,
        (Some(false), None) => true,
        (None, None) => !matches!(
            method.to_ascii_lowercase().as_str(),
            "get" | "head" | "options" | "trace"
        ),
    }
}

/// `operationId` as an id segment, else one made from the method and path.
fn tool_segment(operation: &Operation<'_>) -> String {
    let route = || segment_from_route(operation.method, operation.path);
    match operation.op.get("operationId").and_then(Value::as_str) {
        Some(id) if !id.trim().is_empty() => {
            let seg = segment(id, "");
            if seg.is_empty() { route() } else { seg }
        }
        _ => route(),
    }
}

/// Path-item parameters, overridden by the operation's own with the same name and location;
/// path placeholders without a parameter get a string one (reported).
fn read_params<'r>(
    cx: &DocContext<'r>,
    operation: &Operation<'r>,
    inliner: &mut Inliner<'r>,
    diagnostics: &mut Vec<Diagnostic>,
    fixes: &mut Fixes,
) -> Result<Vec<Param>, ParamError> {
    let list = |v: &'r Value| v.get("parameters").and_then(Value::as_array);
    let shared = list(operation.item).into_iter().flatten();
    let own = list(operation.op).into_iter().flatten();
    let mut out: Vec<Param> = Vec::new();
    let mut pcx = ParamContext {
        root: cx.root,
        inliner,
        operation: &operation.label,
        pointer: &operation.pointer,
        diagnostics,
        fixes,
    };
    for (index, raw) in shared.chain(own).enumerate() {
        let Some(param) = params::read(raw, index, &mut pcx)? else {
            continue;
        };
        out.retain(|p| !(p.plan.name == param.plan.name && p.plan.location == param.plan.location));
        out.push(param);
    }
    let placeholders = placeholders(operation.path);
    out.retain(|p| {
        let keep = p.plan.location != ParamLocation::Path || placeholders.contains(&p.plan.name);
        if !keep {
            pcx.diagnostics.push(Diagnostic::new(
                Severity::Warning,
                Some(&operation.label),
                Some(operation.pointer.clone()),
                format!(
                    "path parameter '{}' is not in the path; ignored",
                    p.plan.name
                ),
            ));
        }
        keep
    });
    for name in placeholders {
        if !out
            .iter()
            .any(|p| p.plan.location == ParamLocation::Path && p.plan.name == name)
        {
            pcx.diagnostics.push(Diagnostic::new(
                Severity::Warning,
                Some(&operation.label),
                Some(operation.pointer.clone()),
                format!("path placeholder '{{{name}}}' has no parameter; added as a string"),
            ));
            out.push(Param {
                plan: crate::plan::ParamPlan {
                    input: String::new(),
                    name: name.clone(),
                    location: ParamLocation::Path,
                    style: ParamStyle::Simple,
                    explode: false,
                    allow_reserved: false,
                    required: true,
                    default: None,
                },
                schema: json!({ "type": "string", "description": format!("The '{name}' path parameter.") }),
            });
        }
    }
    Ok(out)
}

fn placeholders(path: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = path;
    while let Some(start) = rest.find('{') {
        let after = &rest[start + 1..];
        let Some(end) = after.find('}') else { break };
        let name = &after[..end];
        if !name.is_empty() && !names.iter().any(|n| n == name) {
            names.push(name.to_owned());
        }
        rest = &after[end + 1..];
    }
    names
}

/// The input object being built.
#[derive(Debug, Default)]
struct InputObject {
    properties: Map<String, Value>,
    required: Vec<String>,
    taken: HashSet<String>,
}

impl InputObject {
    fn add(&mut self, name: &str, schema: Value, required: bool) {
        self.taken.insert(name.to_owned());
        self.properties.insert(name.to_owned(), schema);
        if required && !self.required.iter().any(|r| r == name) {
            self.required.push(name.to_owned());
        }
    }

    /// `base`, else `base_2`, `base_3`, … whichever is free first.
    fn free_name(&self, base: &str) -> String {
        let mut candidate = base.to_owned();
        let mut n = 1;
        while self.taken.contains(&candidate) {
            n += 1;
            candidate = format!("{base}_{n}");
        }
        candidate
    }

    fn into_schema(self) -> Value {
        // Built by moving the properties in: `json!` would serialize them into a copy (every
        // parameter's and the body's schema, node by node) and drop the originals.
        let mut schema = Map::with_capacity(3);
        schema.insert("type".to_owned(), Value::from("object"));
        schema.insert("properties".to_owned(), Value::Object(self.properties));
        if !self.required.is_empty() {
            let required = self.required.into_iter().map(Value::String).collect();
            schema.insert("required".to_owned(), Value::Array(required));
        }
        Value::Object(schema)
    }
}

/// Gives every parameter its input name (see the module doc) and adds its property.
fn name_params(
    params: &mut [Param],
    input: &mut InputObject,
    label: &str,
    pointer: &str,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let order = [
        ParamLocation::Path,
        ParamLocation::Query,
        ParamLocation::Header,
        ParamLocation::Cookie,
    ];
    for location in order {
        for param in params.iter_mut().filter(|p| p.plan.location == location) {
            let wanted = param.plan.name.clone();
            let name = if input.taken.contains(&wanted) {
                let renamed = input.free_name(&format!("{}_{wanted}", location_prefix(location)));
                diagnostics.push(Diagnostic::new(
                    Severity::Warning,
                    Some(label),
                    Some(pointer.to_owned()),
                    format!(
                        "{} parameter '{wanted}' clashes with another input; its input is '{renamed}'",
                        location_prefix(location)
                    ),
                ));
                renamed
            } else {
                wanted
            };
            input.add(&name, param.schema.clone(), param.plan.required);
            param.plan.input = name;
        }
    }
}

/// Adds the body to the input (spread or as one property) and returns its plan.
fn place_body(body: Body, input: &mut InputObject) -> BodyPlan {
    let spreadable = matches!(
        body.kind,
        BodyKind::Json | BodyKind::Form | BodyKind::Multipart
    ) && is_plain_object(&body.schema)
        && body.schema["properties"]
            .as_object()
            .is_some_and(|p| !p.is_empty() && p.keys().all(|k| !input.taken.contains(k)));
    let source = if spreadable {
        let mut schema = body.schema;
        let required: Vec<String> = if body.required {
            schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| {
                    r.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        let mut names = Vec::new();
        // Moved out, not copied: the rest of the body's schema is dropped here.
        if let Some(Value::Object(props)) = schema.get_mut("properties").map(Value::take) {
            for (name, schema) in props {
                input.add(&name, schema, required.contains(&name));
                names.push(name);
            }
        }
        BodySource::Spread(names)
    } else {
        let name = if input.taken.contains("body") {
            input.free_name("request_body")
        } else {
            "body".to_owned()
        };
        let mut schema = body.schema;
        let text = body
            .description
            .clone()
            .unwrap_or_else(|| format!("The request body ({}).", body.media_type));
        match &mut schema {
            Value::Object(map) => {
                map.insert("description".to_owned(), Value::String(text));
            }
            _ => schema = json!({ "description": text }),
        }
        input.add(&name, schema, body.required);
        BodySource::Property(name)
    };
    BodyPlan {
        media_type: body.media_type,
        kind: body.kind,
        source,
        required: body.required,
        file_fields: body.file_fields,
    }
}

/// An object schema whose properties are all there is to it (no composition, no extra keys).
fn is_plain_object(schema: &Value) -> bool {
    let Value::Object(map) = schema else {
        return false;
    };
    let type_ok = match map.get("type") {
        None => true,
        Some(Value::String(t)) => t == "object",
        Some(_) => false,
    };
    type_ok
        && map.get("properties").is_some_and(Value::is_object)
        && [
            "allOf",
            "anyOf",
            "oneOf",
            "not",
            "if",
            "patternProperties",
            "dependentSchemas",
        ]
        .iter()
        .all(|k| !map.contains_key(*k))
        && map
            .get("additionalProperties")
            .is_none_or(|a| *a == Value::Bool(false))
}

/// Summary and description, trimmed; "Deprecated." first when deprecated; never empty.
fn description(op: &Value, label: &str, security_note: Option<&str>) -> String {
    let text = |key: &str| {
        op.get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    };
    let mut parts: Vec<&str> = Vec::new();
    if op.get("deprecated") == Some(&Value::Bool(true)) {
        parts.push("Deprecated.");
    }
    let summary = text("summary");
    let details = text("description");
    if let Some(s) = summary {
        parts.push(s);
    }
    match details {
        Some(d) if Some(d) != summary => parts.push(d),
        _ => {}
    }
    if summary.is_none() && details.is_none() {
        parts.push(label);
    }
    if let Some(note) = security_note {
        parts.push(note);
    }
    parts.join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn destructive_by_method_unless_the_operation_says_otherwise() {
        let plain = json!({});
        for method in ["get", "HEAD", "options", "trace"] {
            assert!(!is_destructive(method, &plain), "{method}");
        }
        for method in ["post", "put", "patch", "DELETE"] {
            assert!(is_destructive(method, &plain), "{method}");
        }
        let read_only = json!({"x-mcp": {"readOnlyHint": true}});
        assert!(!is_destructive("post", &read_only));
        let safe_post = json!({"x-mcp": {"annotations": {"destructiveHint": false}}});
        assert!(!is_destructive("post", &safe_post));
        let risky_get = json!({"x-mcp": {"destructiveHint": true}});
        assert!(is_destructive("get", &risky_get));
        let not_read_only = json!({"x-mcp": {"readOnlyHint": false}});
        assert!(is_destructive("get", &not_read_only));
    }
}
