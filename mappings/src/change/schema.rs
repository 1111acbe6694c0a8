//! Comparison of two JSON Schemas, one side of a tool (input or output), keyword by keyword.
//!
//! Each keyword family says in which direction the set of values a schema accepts moved
//! ([`Direction`]); [`Side`] turns a direction into a rule, because inputs and outputs break in
//! opposite directions (see [`super::rules`]). Object properties, array items,
//! `additionalProperties` and the branches of `anyOf`/`allOf`/`oneOf` are compared recursively,
//! with a path in every reason (`input.filter.state`, `output.items[].id`). A keyword no family
//! knows that differs is [`RuleId::Unproven`]: only what the rules prove compatible is minor.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::RuleId;
use super::keywords;
use super::vocab::{At, Direction, Kind, Reasons, Side, show, show_opt};

/// Deeper than this, schemas are compared as values (equal, or unproven): inlined schemas
/// are finite but can be deep, and a comparison must not exhaust the stack.
const MAX_DEPTH: usize = 128;

/// Compares a whole input or output schema.
pub(crate) fn compare(reasons: &mut Reasons, side: Side, old: &Value, new: &Value) {
    subschema(reasons, &At::root(side), old, new);
}

/// A schema as far as comparison cares: `true` is `{}` (anything), `false` nothing.
enum Shape<'a> {
    Map(&'a Map<String, Value>),
    Nothing,
    Invalid,
}

static EMPTY: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);

fn shape(value: &Value) -> Shape<'_> {
    match value {
        Value::Object(map) => Shape::Map(map),
        Value::Bool(true) => Shape::Map(&EMPTY),
        Value::Bool(false) => Shape::Nothing,
        _ => Shape::Invalid,
    }
}

/// Compares two schemas found at `at`.
fn subschema(reasons: &mut Reasons, at: &At, old: &Value, new: &Value) {
    if old == new {
        return;
    }
    if at.depth > MAX_DEPTH {
        reasons.unproven(
            &at.full(),
            format!("{} changed too deep down to compare", at.name()),
        );
        return;
    }
    match (shape(old), shape(new)) {
        (Shape::Map(a), Shape::Map(b)) if a.is_empty() && b.is_empty() => reasons.push(
            RuleId::EquivalentForm,
            at.full(),
            format!("{} written differently (`true` ↔ `{{}}`)", at.name()),
        ),
        (Shape::Map(a), Shape::Map(b)) => keywords(reasons, at, a, b),
        (Shape::Nothing, Shape::Map(_)) => at.moved(
            reasons,
            Kind::Constraint,
            Direction::Wider,
            format!("{} allowed (it was `false`)", at.name()),
        ),
        (Shape::Map(_), Shape::Nothing) => at.moved(
            reasons,
            Kind::Constraint,
            Direction::Narrower,
            format!("{} no longer allowed (now `false`)", at.name()),
        ),
        _ => reasons.unproven(
            &at.full(),
            format!("{} changed: {} → {}", at.name(), show(old), show(new)),
        ),
    }
}

/// The keywords handled here or in [`keywords`]; any other keyword that differs is unproven.
const STRUCTURAL: &[&str] = &[
    "properties",
    "required",
    "additionalProperties",
    "items",
    "anyOf",
    "allOf",
    "oneOf",
];

fn keywords(reasons: &mut Reasons, at: &At, old: &Map<String, Value>, new: &Map<String, Value>) {
    keywords::text(reasons, at, old, new);
    keywords::default(reasons, at, old, new);
    keywords::types(reasons, at, old, new);
    keywords::values(reasons, at, old, new);
    keywords::bounds(reasons, at, old, new);
    properties(reasons, at, old, new);
    additional_properties(reasons, at, old, new);
    items(reasons, at, old, new);
    for keyword in ["anyOf", "allOf", "oneOf"] {
        branches(reasons, at, keyword, old.get(keyword), new.get(keyword));
    }
    let keys: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    for key in keys {
        let known = STRUCTURAL.contains(&key.as_str()) || keywords::KNOWN.contains(&key.as_str());
        if !known && old.get(key) != new.get(key) {
            reasons.unproven(
                &at.full(),
                format!(
                    "`{key}` of {} changed: {} → {}",
                    at.name(),
                    show_opt(old.get(key)),
                    show_opt(new.get(key))
                ),
            );
        }
    }
}

/// Properties and `required`, name by name. A name counts as declared on a side when it is a
/// property there or required there.
fn properties(reasons: &mut Reasons, at: &At, old: &Map<String, Value>, new: &Map<String, Value>) {
    if old.get("properties") == new.get("properties") && old.get("required") == new.get("required")
    {
        return;
    }
    let (Some(old_props), Some(new_props)) = (props(old), props(new)) else {
        reasons.unproven(&at.full(), format!("`properties` of {} changed", at.name()));
        return;
    };
    let (Some(old_req), Some(new_req)) = (required(old), required(new)) else {
        reasons.unproven(&at.full(), format!("`required` of {} changed", at.name()));
        return;
    };
    let names: BTreeSet<&str> = old_props
        .keys()
        .map(String::as_str)
        .chain(new_props.keys().map(String::as_str))
        .chain(old_req.iter().copied())
        .chain(new_req.iter().copied())
        .collect();
    let empty = Value::Object(Map::new());
    for name in names {
        let here = at.child(name);
        let declared = |props: &Map<String, Value>, req: &BTreeSet<&str>| {
            props.contains_key(name) || req.contains(name)
        };
        let (was_required, is_required) = (old_req.contains(name), new_req.contains(name));
        match (declared(old_props, &old_req), declared(new_props, &new_req)) {
            (true, true) => {
                let a = old_props.get(name).unwrap_or(&empty);
                let b = new_props.get(name).unwrap_or(&empty);
                subschema(reasons, &here, a, b);
                required_changed(reasons, &here, was_required, is_required);
            }
            (false, true) => {
                let (rule, message) = match (at.side, is_required) {
                    (Side::Input, true) => (
                        RuleId::InputRequiredAdded,
                        format!("new required input `{}`", here.path),
                    ),
                    (Side::Input, false) => (
                        RuleId::InputAdded,
                        format!("new optional input `{}`", here.path),
                    ),
                    (Side::Output, _) => (
                        RuleId::OutputPropertyAdded,
                        format!("new output property `{}`", here.path),
                    ),
                };
                reasons.push(rule, here.full(), message);
            }
            (true, false) => {
                let rule = match at.side {
                    Side::Input => RuleId::InputRemoved,
                    Side::Output => RuleId::OutputPropertyRemoved,
                };
                reasons.push(rule, here.full(), format!("{} removed", here.name()));
            }
            (false, false) => {}
        }
    }
}

fn required_changed(reasons: &mut Reasons, at: &At, was: bool, is: bool) {
    let (rule, what) = match (at.side, was, is) {
        (Side::Input, false, true) => (RuleId::InputMadeRequired, "now required"),
        (Side::Input, true, false) => (RuleId::InputMadeOptional, "now optional"),
        (Side::Output, false, true) => (RuleId::OutputMadeRequired, "now always present"),
        (Side::Output, true, false) => (RuleId::OutputMadeOptional, "may now be absent"),
        _ => return,
    };
    reasons.push(rule, at.full(), format!("{} {what}", at.name()));
}

/// `properties` as a map (none is empty); `None` when it is not an object.
fn props(schema: &Map<String, Value>) -> Option<&Map<String, Value>> {
    match schema.get("properties") {
        None => Some(&EMPTY),
        Some(Value::Object(map)) => Some(map),
        Some(_) => None,
    }
}

/// `required` as a set (none is empty); `None` when it is not a list of names.
fn required(schema: &Map<String, Value>) -> Option<BTreeSet<&str>> {
    match schema.get("required") {
        None => Some(BTreeSet::new()),
        Some(Value::Array(items)) => items.iter().map(Value::as_str).collect(),
        Some(_) => None,
    }
}

/// `additionalProperties`: absent or `true` allows anything, `false` nothing, a schema what it
/// accepts (compared at `path.*`). On an output, allowing undeclared properties is a new
/// property that callers must ignore, as for a declared one.
fn additional_properties(
    reasons: &mut Reasons,
    at: &At,
    old: &Map<String, Value>,
    new: &Map<String, Value>,
) {
    let (a, b) = (
        old.get("additionalProperties"),
        new.get("additionalProperties"),
    );
    if a == b {
        return;
    }
    let open = Value::Bool(true);
    let (a, b) = (a.unwrap_or(&open), b.unwrap_or(&open));
    let closed = |v: &Value| matches!(v, Value::Bool(false));
    match (closed(a), closed(b)) {
        (true, false) => {
            let (rule, message) = match at.side {
                Side::Input => (
                    RuleId::InputConstraintRelaxed,
                    format!("{} now accepts undeclared properties", at.name()),
                ),
                Side::Output => (
                    RuleId::OutputPropertyAdded,
                    format!("{} may now contain undeclared properties", at.name()),
                ),
            };
            reasons.push(rule, at.full(), message);
        }
        (false, true) => at.moved(
            reasons,
            Kind::Constraint,
            Direction::Narrower,
            format!("{} no longer allows undeclared properties", at.name()),
        ),
        _ => subschema(reasons, &at.child("*"), a, b),
    }
}

/// `items` as one schema (absent is anything), compared at `path[]`; the tuple form (a list)
/// must be equal.
fn items(reasons: &mut Reasons, at: &At, old: &Map<String, Value>, new: &Map<String, Value>) {
    let (a, b) = (old.get("items"), new.get("items"));
    if a == b {
        return;
    }
    let open = Value::Bool(true);
    match (a.unwrap_or(&open), b.unwrap_or(&open)) {
        (Value::Array(_), _) | (_, Value::Array(_)) => reasons.unproven(
            &at.full(),
            format!("tuple `items` of {} changed", at.name()),
        ),
        (a, b) => subschema(reasons, &at.items(), a, b),
    }
}

/// `anyOf`, `allOf` and `oneOf`. Adding one where there was none narrows, dropping one widens.
/// Lists of the same length are compared branch by branch; for `anyOf` and `allOf` that is
/// sound (widening a branch widens the union and the intersection), for `oneOf` it is not
/// (a wider branch may overlap another), so there only text changes are accepted. Lists of
/// different lengths are compared as sets of branches.
fn branches(
    reasons: &mut Reasons,
    at: &At,
    keyword: &str,
    old: Option<&Value>,
    new: Option<&Value>,
) {
    if old == new {
        return;
    }
    let name = at.name();
    let (a, b) = match (old, new) {
        (Some(Value::Array(a)), Some(Value::Array(b))) => (a, b),
        (None, Some(Value::Array(_))) => {
            let message = format!("`{keyword}` added to {name}");
            return at.moved(reasons, Kind::Constraint, Direction::Narrower, message);
        }
        (Some(Value::Array(_)), None) => {
            let message = format!("`{keyword}` dropped from {name}");
            return at.moved(reasons, Kind::Constraint, Direction::Wider, message);
        }
        _ => return reasons.unproven(&at.full(), format!("`{keyword}` of {name} changed")),
    };
    if a.len() == b.len() {
        let mut found = Reasons::default();
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            subschema(&mut found, &at.child(&format!("{keyword}[{i}]")), x, y);
        }
        let beyond_text = found.0.iter().any(|r| r.class > super::Class::Patch);
        if keyword == "oneOf" && beyond_text {
            reasons.unproven(
                &at.full(),
                format!("`oneOf` of {name} changed beyond text (branches may now overlap)"),
            );
        } else {
            reasons.0.extend(found.0);
        }
        return;
    }
    let within = |xs: &[Value], ys: &[Value]| xs.iter().all(|x| ys.contains(x));
    // More branches: `anyOf` accepts more, `allOf` less.
    let direction = match (keyword, within(a, b), within(b, a)) {
        ("anyOf", true, _) | ("allOf", _, true) => Some(Direction::Wider),
        ("anyOf", _, true) | ("allOf", true, _) => Some(Direction::Narrower),
        _ => None,
    };
    let change = if b.len() > a.len() {
        "gained a branch"
    } else {
        "lost a branch"
    };
    match direction {
        Some(direction) => at.moved(
            reasons,
            Kind::Constraint,
            direction,
            format!("`{keyword}` of {name} {change}"),
        ),
        None => reasons.unproven(&at.full(), format!("`{keyword}` of {name} restructured")),
    }
}
