//! The canonical form of a tool's contract, and its fingerprint (DESIGN.md §9).
//!
//! The canonical form is a JSON object with exactly the parts of a definition a caller relies
//! on, in one spelling:
//!
//! ```text
//! { "description":   the tool's description (for MCP: with its title and annotation hints),
//!   "destructive":   whether a call may change or delete something upstream,
//!   "input_schema":  the input schema,
//!   "output_schema": the output schema, or null when the tool returns nothing,
//!   "requirements":  the requirements, {} when there are none,
//!   "hidden_inputs": the inputs a transform hides behind a fixed value, sorted; only when there
//!                    are some, so a tool without transforms keeps the fingerprint it had }
//! ```
//!
//! The id, name and version are not in it: they are what the fingerprint vouches for. MCP's
//! title and annotations are covered without a field of their own, because translation already
//! writes the title and every hint into the description ([`crate::mcp::describe`]) and derives
//! `destructive` from the hints; a hint that flips is both a text change and, when it changes
//! `destructive`, a contract change.
//!
//! "One spelling" means: object keys sorted at every depth; numbers that are integers written as
//! integers (`100.0` → `100`); in schemas, the name lists `required` and the type lists `type`
//! sorted and without duplicates (sets, whose order no validator reads); in requirements,
//! authorizations and secrets sorted by id and scopes sorted. Data inside schemas (`enum`,
//! `default`, `examples`…) keeps its array order: there the order can be meaningful.

use serde_json::{Map, Number, Value};
use sha2::{Digest, Sha256};

use crate::schema::walk::{Position, position};
use crate::tool::MappedTool;

/// The canonical form of `tool`'s contract (see the module doc).
pub fn canonical(tool: &MappedTool) -> Value {
    let def = &tool.definition;
    let requirements = def
        .requirements
        .as_ref()
        .and_then(|r| serde_json::to_value(r).ok())
        .unwrap_or_else(|| Value::Object(Map::new()));
    let mut map = Map::new();
    map.insert(
        "description".to_owned(),
        Value::String(def.description.clone()),
    );
    map.insert("destructive".to_owned(), Value::Bool(tool.destructive));
    map.insert("input_schema".to_owned(), def.input_schema.to_value());
    map.insert(
        "output_schema".to_owned(),
        def.output_schema
            .as_ref()
            .map_or(Value::Null, |s| s.to_value()),
    );
    map.insert("requirements".to_owned(), requirements);
    if !tool.hidden_inputs.is_empty() {
        let mut hidden = tool.hidden_inputs.clone();
        hidden.sort();
        hidden.dedup();
        map.insert(
            "hidden_inputs".to_owned(),
            hidden.into_iter().map(Value::String).collect(),
        );
    }
    normalize(&Value::Object(map))
}

/// `sha256:<64 hex digits>` of the compact JSON of `canonical` in its canonical spelling.
///
/// The spelling is applied again here, so a canonical form read back from a lockfile (in any
/// key order, reformatted, `100.0` for `100`) has the fingerprint it had when written.
pub fn fingerprint(canonical: &Value) -> String {
    let mut hash = Sha256::new();
    write_sorted(&normalize(canonical), &mut |bytes| hash.update(bytes));
    let digest = hash.finalize();
    let mut out = String::with_capacity(7 + 2 * digest.len());
    out.push_str("sha256:");
    crate::hex::push_hex(&mut out, &digest);
    out
}

/// Writes `value` to `sink` as compact JSON with object keys sorted at every depth: one spelling
/// of a value however its keys were ordered, streamed (nothing is built), for hashing. The
/// lockfile's fingerprints and the idempotency fingerprints of calls both go through it.
pub fn write_sorted(value: &Value, sink: &mut impl FnMut(&[u8])) {
    match value {
        Value::Object(map) => write_sorted_object(map, sink),
        Value::Array(items) => {
            sink(b"[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    sink(b",");
                }
                write_sorted(item, sink);
            }
            sink(b"]");
        }
        // A scalar's `Display` is its compact JSON (strings quoted and escaped).
        other => sink(other.to_string().as_bytes()),
    }
}

/// [`write_sorted`] of an object.
pub fn write_sorted_object(map: &Map<String, Value>, sink: &mut impl FnMut(&[u8])) {
    let mut keys: Vec<(&String, &Value)> = map.iter().collect();
    keys.sort_unstable_by(|a, b| a.0.cmp(b.0));
    sink(b"{");
    for (i, (key, value)) in keys.into_iter().enumerate() {
        if i > 0 {
            sink(b",");
        }
        sink(Value::String(key.clone()).to_string().as_bytes());
        sink(b":");
        write_sorted(value, sink);
    }
    sink(b"}");
}

/// A definition in the canonical spelling: schemas with [`schema_form`], requirements with
/// [`requirements_form`], everything else [`sorted`]. Idempotent, and total on any JSON.
pub(crate) fn normalize(definition: &Value) -> Value {
    let Value::Object(map) = definition else {
        return sorted(definition);
    };
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort();
    let mut out = Map::new();
    for key in keys {
        let Some(value) = map.get(key) else { continue };
        let form = match key.as_str() {
            "input_schema" | "output_schema" => schema_form(value),
            "requirements" => requirements_form(value),
            _ => sorted(value),
        };
        out.insert(key.clone(), form);
    }
    Value::Object(out)
}

/// `value` with object keys sorted at every depth and integral numbers written as integers.
pub(crate) fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .filter_map(|k| Some((k.clone(), sorted(map.get(k)?))))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        Value::Number(n) => Value::Number(integral(n)),
        other => other.clone(),
    }
}

/// `n` as an integer when it is a float with no fraction that an `f64` holds exactly.
fn integral(n: &Number) -> Number {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    match n.as_f64() {
        Some(f) if !n.is_i64() && !n.is_u64() && f.fract() == 0.0 && f.abs() <= EXACT => {
            // In range and integral, so the cast is exact.
            Number::from(f as i64)
        }
        _ => n.clone(),
    }
}

/// A schema in its canonical spelling: [`sorted`], with `required` and `type` lists as sets.
/// Keyword positions come from [`crate::schema::walk`], so data (`enum`, `default`) is never
/// mistaken for a schema.
pub(crate) fn schema_form(schema: &Value) -> Value {
    let Value::Object(map) = schema else {
        return sorted(schema);
    };
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort();
    let mut out = Map::new();
    for key in keys {
        let Some(value) = map.get(key) else { continue };
        let form = match (key.as_str(), value) {
            ("required" | "type", Value::Array(items)) if items.iter().all(Value::is_string) => {
                string_set(items)
            }
            _ => match position(key, value) {
                Position::Data => sorted(value),
                Position::Named => match value {
                    Value::Object(named) => {
                        let mut names: Vec<&String> = named.keys().collect();
                        names.sort();
                        Value::Object(
                            names
                                .into_iter()
                                .filter_map(|n| Some((n.clone(), schema_form(named.get(n)?))))
                                .collect(),
                        )
                    }
                    other => sorted(other),
                },
                Position::Schema => match value {
                    Value::Array(items) => Value::Array(items.iter().map(schema_form).collect()),
                    other => schema_form(other),
                },
            },
        };
        out.insert(key.clone(), form);
    }
    Value::Object(out)
}

/// Strings, sorted and without duplicates.
fn string_set(items: &[Value]) -> Value {
    let mut strings: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
    strings.sort_unstable();
    strings.dedup();
    Value::Array(
        strings
            .into_iter()
            .map(|s| Value::String(s.to_owned()))
            .collect(),
    )
}

/// Requirements in their canonical spelling: authorizations and secrets sorted by id, scopes
/// sorted and without duplicates.
fn requirements_form(requirements: &Value) -> Value {
    let mut value = sorted(requirements);
    if let Some(map) = value.as_object_mut() {
        for key in ["authorization", "secrets"] {
            if let Some(Value::Array(list)) = map.get_mut(key) {
                list.sort_by(|a, b| id_of(a).cmp(id_of(b)));
                if key == "authorization" {
                    list.iter_mut().for_each(sort_scopes);
                }
            }
        }
    }
    value
}

fn id_of(value: &Value) -> &str {
    value.get("id").and_then(Value::as_str).unwrap_or_default()
}

fn sort_scopes(authorization: &mut Value) {
    let scopes = authorization
        .get_mut("oauth2")
        .and_then(|o| o.get_mut("scopes"));
    if let Some(scopes) = scopes
        && let Value::Array(items) = scopes
        && items.iter().all(Value::is_string)
    {
        *scopes = string_set(items);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn keys_sort_at_every_depth_and_integral_floats_are_integers() {
        let v: Value =
            serde_json::from_str(r#"{"b": {"y": 1.0, "x": [2.5, 3.0]}, "a": 1}"#).unwrap();
        assert_eq!(
            serde_json::to_string(&sorted(&v)).unwrap(),
            r#"{"a":1,"b":{"x":[2.5,3],"y":1}}"#
        );
    }

    #[test]
    fn required_and_type_lists_are_sets_but_data_keeps_its_order() {
        let schema = json!({
            "type": ["string", "null", "string"],
            "required": ["b", "a"],
            "enum": ["z", "a"],
            "default": {"required": ["z", "a"]},
            "properties": {"required": {"type": "array", "default": ["z", "a"]}}
        });
        let form = schema_form(&schema);
        assert_eq!(form["type"], json!(["null", "string"]));
        assert_eq!(form["required"], json!(["a", "b"]));
        assert_eq!(form["enum"], json!(["z", "a"]));
        assert_eq!(form["default"]["required"], json!(["z", "a"]));
        assert_eq!(form["properties"]["required"]["default"], json!(["z", "a"]));
    }

    #[test]
    fn fingerprint_is_sha256_hex_of_the_sorted_compact_json() {
        // sha256 of `{}`, as any sha256 tool prints it.
        assert_eq!(
            fingerprint(&json!({})),
            "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
        );
        let a: Value = serde_json::from_str(r#"{"b": 1, "a": {"d": 2, "c": 3}}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"a": {"c": 3, "d": 2}, "b": 1.0}"#).unwrap();
        assert_eq!(fingerprint(&a), fingerprint(&b));
    }

    #[test]
    fn requirements_are_sorted_by_id_with_sorted_scopes() {
        let r = json!({
            "secrets": [{"id": "B"}, {"id": "A"}],
            "authorization": [{"id": "z", "oauth2": {"scopes": ["w", "r", "w"]}}, {"id": "a"}]
        });
        assert_eq!(
            requirements_form(&r),
            json!({
                "authorization": [{"id": "a"}, {"id": "z", "oauth2": {"scopes": ["r", "w"]}}],
                "secrets": [{"id": "A"}, {"id": "B"}]
            })
        );
    }
}
