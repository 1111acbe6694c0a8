//! Where a schema's subschemas are: the one rule every walk over JSON Schemas follows.
//!
//! Inlining (`Inliner`), the `$ref` check ([`has_refs`](super::has_refs)), bundling external
//! references (`openapi::refs`) and the OpenAPI → JSON Schema conversion (`openapi::schema`) all
//! read keyword positions from here, so they cannot disagree about them. The rule:
//! - **data** ([`DATA`]: `const`, `enum`, `default`, `example`, `examples`) holds instances, never
//!   schemas: an object in it is a value, and a `$ref` key in it is not a reference;
//! - **maps of names to schemas** ([`SCHEMA_MAPS`], [`DEFINITIONS`]): every value is a schema,
//!   whatever its name (a property named `default` is a schema, not data);
//! - **everything else is walked into**: the keywords of [`ONE_SCHEMA`] and [`SCHEMA_LISTS`],
//!   and unknown keywords too, because extensions and (for the bundler, which walks whole
//!   documents) the OpenAPI objects around schemas hold references as well. Arrays are walked
//!   item by item by the caller.
//!
//! The lists of known keywords are also what `openapi::schema` checks the shape of (one schema,
//! a non-empty list, a map), in this order.

use serde_json::{Map, Value};

/// Keywords whose value is data (instances of the schema), never a schema.
pub(crate) const DATA: &[&str] = &["const", "default", "enum", "example", "examples"];

/// Keywords whose value is one schema.
pub(crate) const ONE_SCHEMA: &[&str] = &[
    "items",
    "additionalProperties",
    "not",
    "contains",
    "propertyNames",
    "if",
    "then",
    "else",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
    "contentSchema",
];

/// Keywords whose value is a list of schemas.
pub(crate) const SCHEMA_LISTS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];

/// Keywords whose value is a map of names to schemas, read by validators.
pub(crate) const SCHEMA_MAPS: &[&str] = &["properties", "patternProperties", "dependentSchemas"];

/// Keywords whose value is a map of names to schemas kept for references only (never in a
/// self-contained schema).
pub(crate) const DEFINITIONS: &[&str] = &["$defs", "definitions"];

/// How the value of one keyword of a schema object is walked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Position {
    /// Data: copied as it is, never walked.
    Data,
    /// An object mapping names to schemas: each value is walked as a schema.
    Named,
    /// A schema, a list of schemas, or an unknown keyword: walked as it is.
    Schema,
}

/// Where `value`, found under `key` in a schema object, sits (see the module doc).
pub(crate) fn position(key: &str, value: &Value) -> Position {
    if DATA.contains(&key) {
        Position::Data
    } else if value.is_object() && (SCHEMA_MAPS.contains(&key) || DEFINITIONS.contains(&key)) {
        Position::Named
    } else {
        Position::Schema
    }
}

/// The values directly under the schema object `map` that are walked as schemas, in key order:
/// data left out, maps of names opened. (Arrays among them are walked item by item by the caller.)
pub(crate) fn subschemas(map: &Map<String, Value>) -> impl Iterator<Item = &Value> {
    map.iter().flat_map(|(key, value)| {
        let (one, named) = match position(key, value) {
            Position::Data => (None, None),
            Position::Named => (None, value.as_object()),
            Position::Schema => (Some(value), None),
        };
        one.into_iter()
            .chain(named.into_iter().flat_map(Map::values))
    })
}

/// [`subschemas`], for rewriting in place.
pub(crate) fn subschemas_mut(map: &mut Map<String, Value>) -> impl Iterator<Item = &mut Value> {
    map.iter_mut().flat_map(|(key, value)| {
        let (one, named) = match (position(key, value), value) {
            (Position::Data, _) => (None, None),
            (Position::Named, Value::Object(schemas)) => (None, Some(schemas)),
            (_, value) => (Some(value), None),
        };
        one.into_iter()
            .chain(named.into_iter().flat_map(Map::values_mut))
    })
}

/// The value of `key` rebuilt with every schema in it passed through `walk`: data copied as it
/// is, each schema of a map of names walked, anything else walked whole.
pub(crate) fn map_keyword(
    key: &str,
    value: &Value,
    mut walk: impl FnMut(&Value) -> Value,
) -> Value {
    match (position(key, value), value) {
        (Position::Data, _) => value.clone(),
        (Position::Named, Value::Object(schemas)) => Value::Object(
            schemas
                .iter()
                .map(|(name, schema)| (name.clone(), walk(schema)))
                .collect(),
        ),
        (_, value) => walk(value),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Every keyword position at once; each `$ref` names where it sits.
    fn tour() -> Value {
        json!({
            "const": {"$ref": "#/const"},
            "enum": [{"$ref": "#/enum"}],
            "default": {"$ref": "#/default"},
            "example": {"$ref": "#/example"},
            "examples": [{"$ref": "#/examples"}],
            "dependentSchemas": {"default": {"$ref": "#/dependentSchemas"}},
            "properties": {"enum": {"$ref": "#/properties"}},
            "patternProperties": {"^const$": {"$ref": "#/patternProperties"}},
            "$defs": {"examples": {"$ref": "#/defs"}},
            "items": {"$ref": "#/items"},
            "allOf": [{"$ref": "#/allOf"}],
            "if": {"$ref": "#/if"},
            "x-extension": {"$ref": "#/extension"}
        })
    }

    const WALKED: &[&str] = &[
        "#/allOf",
        "#/defs",
        "#/dependentSchemas",
        "#/extension",
        "#/if",
        "#/items",
        "#/patternProperties",
        "#/properties",
    ];

    fn refs(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get("$ref") {
                    out.push(r.clone());
                }
                subschemas(map).for_each(|s| refs(s, out));
            }
            Value::Array(items) => items.iter().for_each(|s| refs(s, out)),
            _ => {}
        }
    }

    fn refs_mut(value: &mut Value, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get("$ref") {
                    out.push(r.clone());
                }
                subschemas_mut(map).for_each(|s| refs_mut(s, out));
            }
            Value::Array(items) => items.iter_mut().for_each(|s| refs_mut(s, out)),
            _ => {}
        }
    }

    #[test]
    fn data_is_never_walked_and_dependent_schemas_are() {
        let mut seen = Vec::new();
        refs(&tour(), &mut seen);
        seen.sort();
        assert_eq!(seen, WALKED);

        let mut seen = Vec::new();
        refs_mut(&mut tour(), &mut seen);
        seen.sort();
        assert_eq!(seen, WALKED);
    }

    #[test]
    fn rebuilding_copies_data_and_walks_named_schemas() {
        let mark = |v: &Value| json!({"walked": v.clone()});
        let schema = tour();
        for key in DATA {
            assert_eq!(map_keyword(key, &schema[key], mark), schema[key]);
        }
        assert_eq!(
            map_keyword("dependentSchemas", &schema["dependentSchemas"], mark),
            json!({"default": {"walked": {"$ref": "#/dependentSchemas"}}})
        );
        assert_eq!(
            map_keyword("allOf", &schema["allOf"], mark),
            json!({"walked": [{"$ref": "#/allOf"}]})
        );
        // A map keyword whose value is not a map is walked whole, like any unknown value.
        assert_eq!(
            map_keyword("properties", &json!(true), mark),
            json!({"walked": true})
        );
    }
}
