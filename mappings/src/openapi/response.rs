//! The success response: the tool's output schema and the `Accept` list of the plan.
//!
//! Which response counts as success: the lowest explicit 2xx code (200, 201, …), else `2XX`,
//! else `default` when it is the only response. Its JSON content's schema is the output schema;
//! no content at all means the tool returns nothing (`None`, `null` on the wire, e.g. 204); content
//! that is not JSON (text, binary) has no JSON Schema, so it is `{}`. When no response can be
//! taken as success, nothing is known, so `{}` as well.

use serde_json::{Map, Value};

use crate::error::{Diagnostic, Severity};
use crate::openapi::body::ranked;
use crate::openapi::refs::chase;
use crate::openapi::schema::{Direction, Fixes, convert};
use crate::plan::BodyKind;
use crate::schema::Inliner;

/// The output side of one operation.
#[derive(Debug)]
pub(crate) struct Output {
    pub(crate) schema: Option<Value>,
    pub(crate) accept: Vec<String>,
}

/// Reads the success response of `responses`.
pub(crate) fn read<'r>(
    root: &'r Value,
    responses: Option<&'r Value>,
    inliner: &mut Inliner<'r>,
    operation: &str,
    pointer: &str,
    diagnostics: &mut Vec<Diagnostic>,
    fixes: &mut Fixes,
) -> Output {
    let unknown = Output {
        schema: Some(Value::Object(Map::new())),
        accept: Vec::new(),
    };
    let Some(Value::Object(responses)) = responses else {
        return unknown;
    };
    let Some((code, response)) = success(responses) else {
        return unknown;
    };
    let response = match chase(root, response) {
        Ok(r) => r,
        Err(e) => {
            diagnostics.push(Diagnostic::new(
                Severity::Warning,
                Some(operation),
                Some(format!("{pointer}/responses/{code}")),
                format!("success response: {e}; output schema left open"),
            ));
            return unknown;
        }
    };
    let content = match response.get("content").and_then(Value::as_object) {
        Some(c) if !c.is_empty() => c,
        _ => {
            return Output {
                schema: None,
                accept: Vec::new(),
            };
        }
    };
    let media = ranked(content);
    let accept = media.iter().map(|(m, _, _)| (*m).to_owned()).collect();
    let schema = match media.first() {
        Some((_, BodyKind::Json, m)) => match m.get("schema") {
            Some(s) => {
                let mut schema = inliner.inline(s, Some(operation), diagnostics);
                convert(&mut schema, Direction::Output, fixes);
                schema
            }
            None => Value::Object(Map::new()),
        },
        _ => Value::Object(Map::new()),
    };
    Output {
        schema: Some(schema),
        accept,
    }
}

fn success(responses: &Map<String, Value>) -> Option<(&str, &Value)> {
    let explicit = responses
        .iter()
        .filter_map(|(code, r)| {
            let n: u16 = code.trim().parse().ok()?;
            (200..300).contains(&n).then_some((n, code.as_str(), r))
        })
        .min_by_key(|(n, _, _)| *n);
    if let Some((_, code, r)) = explicit {
        return Some((code, r));
    }
    if let Some((code, r)) = responses
        .iter()
        .find(|(code, _)| code.eq_ignore_ascii_case("2xx"))
    {
        return Some((code, r));
    }
    match (responses.len(), responses.get_key_value("default")) {
        (1, Some((code, r))) => Some((code, r)),
        _ => None,
    }
}
