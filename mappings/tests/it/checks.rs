//! The standard's rules every translated definition must satisfy (CHECKLIST §4a), checked the
//! same way for hand-written fixtures and for the installed corpus.

use std::collections::HashSet;

use otc_mappings::schema::has_refs;
use otc_mappings::{Mapped, MappedTool};
use serde_json::Value;

/// Every rule violation in `mapped`, as readable lines (empty: all good).
pub(crate) fn violations(mapped: &Mapped<MappedTool>) -> Vec<String> {
    let mut out = Vec::new();
    let mut ids = HashSet::new();
    let mut names = HashSet::new();
    for tool in &mapped.tools {
        let d = &tool.definition;
        let id = d.id.to_string();
        if !is_id(&id) {
            out.push(format!("{id}: id does not match Toolkit.Tool@x.y.z"));
        }
        if !ids.insert(id.clone()) {
            out.push(format!("{id}: duplicate id"));
        }
        if !is_name(&d.name) {
            out.push(format!("{id}: bad name '{}'", d.name));
        }
        if !names.insert(d.name.clone()) {
            out.push(format!("{id}: duplicate name '{}'", d.name));
        }
        if d.description.trim().is_empty() {
            out.push(format!("{id}: empty description"));
        }
        let input = d.input_schema.to_value();
        let output = d.output_schema.as_ref().map(|s| s.to_value());
        if has_refs(&input) {
            out.push(format!("{id}: input schema has $ref/$defs/definitions"));
        }
        if output.as_ref().is_some_and(has_refs) {
            out.push(format!("{id}: output schema has $ref/$defs/definitions"));
        }
        if input.get("type").and_then(Value::as_str) != Some("object") {
            out.push(format!("{id}: input schema is not an object"));
        }
        let mut missing = Vec::new();
        undescribed(&input, "", &mut missing);
        if !missing.is_empty() {
            out.push(format!("{id}: properties without description: {missing:?}"));
        }
        if let Err(e) = jsonschema::validator_for(&input) {
            out.push(format!("{id}: input schema does not compile: {e}"));
        }
        if let Some(Err(e)) = output.as_ref().map(jsonschema::validator_for) {
            out.push(format!("{id}: output schema does not compile: {e}"));
        }
    }
    out
}

/// `^[A-Za-z0-9_]+\.[A-Za-z0-9_]+@\d+\.\d+\.\d+$`
fn is_id(id: &str) -> bool {
    let seg = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    let num = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let Some((name, version)) = id.split_once('@') else {
        return false;
    };
    let Some((kit, tool)) = name.split_once('.') else {
        return false;
    };
    let parts: Vec<&str> = version.split('.').collect();
    seg(kit) && seg(tool) && parts.len() == 3 && parts.iter().all(|p| num(p))
}

/// `^[A-Za-z0-9_-]{1,64}$`
fn is_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn undescribed(schema: &Value, at: &str, out: &mut Vec<String>) {
    let Value::Object(map) = schema else { return };
    if let Some(Value::Object(props)) = map.get("properties") {
        for (name, prop) in props {
            let path = format!("{at}/{name}");
            let described = prop
                .get("description")
                .and_then(Value::as_str)
                .is_some_and(|d| !d.trim().is_empty());
            if !described && prop.is_object() {
                out.push(path.clone());
            }
            undescribed(prop, &path, out);
        }
    }
    for key in ["items", "additionalProperties", "not"] {
        if let Some(sub) = map.get(key) {
            undescribed(sub, &format!("{at}/{key}"), out);
        }
    }
    for key in ["allOf", "anyOf", "oneOf", "prefixItems"] {
        if let Some(Value::Array(subs)) = map.get(key) {
            for (i, sub) in subs.iter().enumerate() {
                undescribed(sub, &format!("{at}/{key}/{i}"), out);
            }
        }
    }
}
