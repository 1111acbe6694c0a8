//! Request bodies: which media type to send, what its input looks like, and which multipart
//! fields are files. Also the media-type preference shared with responses.
//!
//! Preference (DESIGN.md §4): JSON (`application/json`, `*+json`), then
//! `application/x-www-form-urlencoded`, `multipart/form-data`, `text/*`, and anything else as
//! binary (a base64 string in the input).

use serde_json::{Map, Value, json};

use crate::error::Diagnostic;
use crate::openapi::refs::{RefError, chase};
use crate::openapi::schema::{Direction, Fixes, convert};
use crate::plan::BodyKind;
use crate::schema::Inliner;

/// The description given to a file field of a multipart body.
const FILE_NOTE: &str =
    "File content, base64-encoded or as a data: URL (data:<type>;base64,<data>).";

/// A request body read from the document.
#[derive(Debug)]
pub(crate) struct Body {
    /// The media type as the document writes it.
    pub(crate) media_type: String,
    pub(crate) kind: BodyKind,
    /// The schema of the body as the caller gives it (converted; file fields are strings).
    pub(crate) schema: Value,
    pub(crate) required: bool,
    pub(crate) description: Option<String>,
    pub(crate) file_fields: Vec<String>,
}

/// How a media type is sent.
pub(crate) fn kind_of(media_type: &str) -> BodyKind {
    let essence = media_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    if essence == "application/json" || essence.ends_with("+json") || essence.ends_with("/json") {
        BodyKind::Json
    } else if essence == "application/x-www-form-urlencoded" {
        BodyKind::Form
    } else if essence == "multipart/form-data" {
        BodyKind::Multipart
    } else if essence.starts_with("text/") {
        BodyKind::Text
    } else {
        BodyKind::Binary
    }
}

fn rank(kind: BodyKind) -> u8 {
    match kind {
        BodyKind::Json => 0,
        BodyKind::Form => 1,
        BodyKind::Multipart => 2,
        BodyKind::Text => 3,
        BodyKind::Binary => 4,
    }
}

/// Media types of a `content` object, most preferred first (stable within a rank).
pub(crate) fn ranked(content: &Map<String, Value>) -> Vec<(&str, BodyKind, &Value)> {
    let mut media: Vec<_> = content
        .iter()
        .map(|(m, v)| (m.as_str(), kind_of(m), v))
        .collect();
    media.sort_by_key(|(_, k, _)| rank(*k));
    media
}

/// Reads `requestBody`. `Ok(None)` when there is none (or it has no media types). `Err` when
/// its `$ref` leads nowhere: the operation cannot be called correctly.
pub(crate) fn read<'r>(
    root: &'r Value,
    raw: &'r Value,
    inliner: &mut Inliner<'r>,
    operation: &str,
    diagnostics: &mut Vec<Diagnostic>,
    fixes: &mut Fixes,
) -> Result<Option<Body>, RefError> {
    let body = chase(root, raw)?;
    let Some(content) = body.get("content").and_then(Value::as_object) else {
        return Ok(None);
    };
    let Some(&(media_type, kind, media)) = ranked(content).first() else {
        return Ok(None);
    };
    let description = body
        .get("description")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(str::to_owned);
    let mut file_fields = Vec::new();
    let schema = match kind {
        BodyKind::Json | BodyKind::Form | BodyKind::Multipart => {
            let mut schema = match media.get("schema") {
                Some(s) => inliner.inline(s, Some(operation), diagnostics),
                None => json!({}),
            };
            convert(&mut schema, Direction::Input, fixes);
            if kind == BodyKind::Multipart {
                file_fields = mark_files(&mut schema);
            }
            schema
        }
        BodyKind::Text => json!({ "type": "string" }),
        BodyKind::Binary => json!({
            "type": "string",
            "contentEncoding": "base64",
            "description": format!("The {media_type} body, base64-encoded or as a data: URL."),
        }),
    };
    Ok(Some(Body {
        media_type: media_type.to_owned(),
        kind,
        schema,
        required: body.get("required") == Some(&Value::Bool(true)),
        description,
        file_fields,
    }))
}

/// Replaces binary string properties of a multipart schema by base64/data-URL strings and
/// returns their names.
fn mark_files(schema: &mut Value) -> Vec<String> {
    let Some(Value::Object(props)) = schema.get_mut("properties") else {
        return Vec::new();
    };
    let mut files = Vec::new();
    for (name, prop) in props.iter_mut() {
        let is_binary = prop.get("format").and_then(Value::as_str) == Some("binary")
            || (prop.get("contentMediaType").is_some() && prop.get("contentEncoding").is_none());
        if !is_binary {
            continue;
        }
        let description = match prop.get("description").and_then(Value::as_str) {
            Some(d) if !d.trim().is_empty() => format!("{} {FILE_NOTE}", d.trim()),
            _ => FILE_NOTE.to_owned(),
        };
        *prop = json!({ "type": "string", "description": description });
        files.push(name.clone());
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types_are_ranked() {
        assert_eq!(kind_of("application/vnd.github+json"), BodyKind::Json);
        assert_eq!(kind_of("application/json; charset=utf-8"), BodyKind::Json);
        assert_eq!(kind_of("text/plain"), BodyKind::Text);
        assert_eq!(kind_of("application/octet-stream"), BodyKind::Binary);
        let content: Map<String, Value> = serde_json::from_value(json!({
            "text/plain": {}, "multipart/form-data": {}, "application/xml": {}, "application/json": {}
        }))
        .unwrap();
        let order: Vec<_> = ranked(&content).into_iter().map(|(m, _, _)| m).collect();
        assert_eq!(
            order,
            [
                "application/json",
                "multipart/form-data",
                "text/plain",
                "application/xml"
            ]
        );
    }
}
