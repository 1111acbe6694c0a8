//! Parameters: one OpenAPI parameter object → its input property schema and its [`ParamPlan`].
//!
//! Serialisation defaults follow the OpenAPI rules (path and header: `simple`; query and cookie:
//! `form`; `explode` defaults to true for `form` only), so the adapter never re-derives them.
//! A parameter given by `content` instead of `schema` takes the schema of its first media type.

use serde_json::{Map, Value, json};

use crate::error::{Diagnostic, Severity};
use crate::openapi::refs::{RefError, chase};
use crate::openapi::schema::{Direction, Fixes, convert};
use crate::plan::{ParamLocation, ParamPlan, ParamStyle};
use crate::schema::Inliner;

/// A parameter read from the document; `plan.input` is set once names are assigned.
#[derive(Debug)]
pub(crate) struct Param {
    pub(crate) plan: ParamPlan,
    /// The property schema (converted, with a description).
    pub(crate) schema: Value,
}

/// What [`read`] needs besides the parameter.
pub(crate) struct ParamContext<'a, 'r> {
    pub(crate) root: &'r Value,
    pub(crate) inliner: &'a mut Inliner<'r>,
    pub(crate) operation: &'a str,
    pub(crate) pointer: &'a str,
    pub(crate) diagnostics: &'a mut Vec<Diagnostic>,
    pub(crate) fixes: &'a mut Fixes,
}

/// Why a parameter cannot be read; its operation is skipped with this as the reason.
/// `index` counts the path item's parameters, then the operation's.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ParamError {
    // The reference error's text is part of this one: a diagnostic shows only the top error.
    #[error("parameter {index}: {source}")]
    Ref {
        index: usize,
        #[source]
        source: RefError,
    },
    #[error("parameter {0} has no name")]
    NoName(usize),
    /// `location` as written; `None` when the parameter has no `in`.
    #[error(
        "parameter '{name}' has an unsupported location {}",
        location.as_ref().map_or_else(|| "(none)".to_owned(), |o| format!("'{o}'"))
    )]
    Location {
        name: String,
        location: Option<String>,
    },
}

/// Reads one parameter. `Ok(None)`: ignored by the OpenAPI rules (the `Accept`, `Content-Type`
/// and `Authorization` headers). `Err`: the operation cannot be called correctly.
pub(crate) fn read(
    raw: &Value,
    index: usize,
    cx: &mut ParamContext<'_, '_>,
) -> Result<Option<Param>, ParamError> {
    let param = chase(cx.root, raw).map_err(|source| ParamError::Ref { index, source })?;
    let name = param
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .ok_or(ParamError::NoName(index))?;
    let location = match param.get("in").and_then(Value::as_str) {
        Some("path") => ParamLocation::Path,
        Some("query") => ParamLocation::Query,
        Some("header") => ParamLocation::Header,
        Some("cookie") => ParamLocation::Cookie,
        other => {
            return Err(ParamError::Location {
                name: name.to_owned(),
                location: other.map(str::to_owned),
            });
        }
    };
    if location == ParamLocation::Header
        && ["accept", "content-type", "authorization"].contains(&name.to_ascii_lowercase().as_str())
    {
        cx.diagnostics.push(Diagnostic::new(
            Severity::Info,
            Some(cx.operation),
            Some(format!("{}/parameters/{index}", cx.pointer)),
            format!(
                "header parameter '{name}' is ignored, as OpenAPI requires (the bridge sets it)"
            ),
        ));
        return Ok(None);
    }

    let raw_schema = param.get("schema").or_else(|| {
        param
            .get("content")?
            .as_object()?
            .values()
            .next()?
            .get("schema")
    });
    let mut schema = match raw_schema {
        Some(s) => cx.inliner.inline(s, Some(cx.operation), cx.diagnostics),
        None => json!({ "type": "string" }),
    };
    convert(&mut schema, Direction::Input, cx.fixes);

    let declared_style = param.get("style").and_then(Value::as_str);
    let style = style_for(location, declared_style).unwrap_or_else(|| {
        cx.diagnostics.push(Diagnostic::new(
            Severity::Warning,
            Some(cx.operation),
            Some(format!("{}/parameters/{index}", cx.pointer)),
            format!(
                "parameter '{name}': style '{}' does not apply to {location:?} parameters; using the default",
                declared_style.unwrap_or_default()
            ),
        ));
        style_for(location, None).unwrap_or(ParamStyle::Simple)
    });
    let explode = param
        .get("explode")
        .and_then(Value::as_bool)
        .unwrap_or(style == ParamStyle::Form);
    let required = location == ParamLocation::Path
        || param.get("required").and_then(Value::as_bool) == Some(true);
    let default = schema.get("default").cloned();

    describe(&mut schema, param, name, location);
    if param.get("deprecated") == Some(&Value::Bool(true))
        && let Value::Object(map) = &mut schema
    {
        map.insert("deprecated".to_owned(), Value::Bool(true));
    }
    Ok(Some(Param {
        plan: ParamPlan {
            input: String::new(),
            name: name.to_owned(),
            location,
            style,
            explode,
            allow_reserved: location == ParamLocation::Query
                && param.get("allowReserved") == Some(&Value::Bool(true)),
            required,
            default,
        },
        schema,
    }))
}

/// The style to use, `None` when the declared one does not apply to the location.
fn style_for(location: ParamLocation, declared: Option<&str>) -> Option<ParamStyle> {
    use ParamLocation as L;
    use ParamStyle as S;
    let Some(declared) = declared else {
        return Some(match location {
            L::Path | L::Header => S::Simple,
            L::Query | L::Cookie => S::Form,
        });
    };
    let style = match declared {
        "simple" => S::Simple,
        "label" => S::Label,
        "matrix" => S::Matrix,
        "form" => S::Form,
        "spaceDelimited" => S::SpaceDelimited,
        "pipeDelimited" => S::PipeDelimited,
        "deepObject" => S::DeepObject,
        _ => return None,
    };
    let fits = match location {
        L::Path => matches!(style, S::Simple | S::Label | S::Matrix),
        L::Query => matches!(
            style,
            S::Form | S::SpaceDelimited | S::PipeDelimited | S::DeepObject
        ),
        L::Header => style == S::Simple,
        L::Cookie => style == S::Form,
    };
    fits.then_some(style)
}

/// The parameter's own description wins over its schema's; one is made up when neither exists.
fn describe(schema: &mut Value, param: &Value, name: &str, location: ParamLocation) {
    let own = param
        .get("description")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|d| !d.is_empty());
    let Value::Object(map) = schema else {
        // A boolean schema: make it an object that can carry a description.
        let allows = *schema != Value::Bool(false);
        let mut map = Map::new();
        if !allows {
            map.insert("not".to_owned(), json!({}));
        }
        *schema = Value::Object(map);
        return describe(schema, param, name, location);
    };
    let text = match own {
        Some(d) => d.to_owned(),
        None => match map
            .get("description")
            .and_then(Value::as_str)
            .map(str::trim)
        {
            Some(d) if !d.is_empty() => return,
            _ => format!("The '{name}' {} parameter.", location_word(location)),
        },
    };
    map.insert("description".to_owned(), Value::String(text));
}

fn location_word(location: ParamLocation) -> &'static str {
    match location {
        ParamLocation::Path => "path",
        ParamLocation::Query => "query",
        ParamLocation::Header => "header",
        ParamLocation::Cookie => "cookie",
    }
}

/// The prefix used when a parameter name clashes with one in another location (`query_id`).
pub(crate) fn location_prefix(location: ParamLocation) -> &'static str {
    location_word(location)
}
