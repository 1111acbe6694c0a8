//! The keyword families of a schema that are compared as values at one place: text, `default`,
//! `type`, `enum`/`const`, and the bounds (`maxLength`, `minimum`, `pattern`, …). Each says
//! which way the set of accepted values moved; [`super::schema`] walks the structure.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::RuleId;
use super::canonical::sorted;
use super::vocab::{At, Direction, Kind, Reasons, Side, show, show_opt};

/// Keywords that are text for people and models, never checked by a validator.
const TEXT: &[&str] = &[
    "title",
    "description",
    "$comment",
    "examples",
    "example",
    "deprecated",
];

/// Bounds where a larger value accepts more.
const UPPER: &[&str] = &[
    "maximum",
    "exclusiveMaximum",
    "maxLength",
    "maxItems",
    "maxProperties",
    "maxContains",
];

/// Bounds where a smaller value accepts more.
const LOWER: &[&str] = &[
    "minimum",
    "exclusiveMinimum",
    "minLength",
    "minItems",
    "minProperties",
    "minContains",
];

/// Constraints with no order between two values: dropping one widens, adding one narrows,
/// changing one is both.
const UNORDERED: &[&str] = &["pattern", "format"];

/// Every keyword this module compares.
pub(crate) const KNOWN: &[&str] = &[
    "title",
    "description",
    "$comment",
    "examples",
    "example",
    "deprecated",
    "default",
    "type",
    "enum",
    "const",
    "maximum",
    "exclusiveMaximum",
    "maxLength",
    "maxItems",
    "maxProperties",
    "maxContains",
    "minimum",
    "exclusiveMinimum",
    "minLength",
    "minItems",
    "minProperties",
    "minContains",
    "pattern",
    "format",
    "multipleOf",
    "uniqueItems",
];

/// Text keywords, reported together; an output's `default` is text too (nothing applies it).
pub(crate) fn text(
    reasons: &mut Reasons,
    at: &At,
    old: &Map<String, Value>,
    new: &Map<String, Value>,
) {
    let mut changed: Vec<&str> = TEXT
        .iter()
        .copied()
        .filter(|k| old.get(*k) != new.get(*k))
        .collect();
    if at.side == Side::Output && old.get("default") != new.get("default") {
        changed.push("default");
    }
    if !changed.is_empty() {
        reasons.push(
            RuleId::SchemaTextChanged,
            at.full(),
            format!("text of {} changed ({})", at.name(), changed.join(", ")),
        );
    }
}

/// An input's `default`: the bridge fills it in for a caller who omits the input, so any change
/// changes what such a call does.
pub(crate) fn default(
    reasons: &mut Reasons,
    at: &At,
    old: &Map<String, Value>,
    new: &Map<String, Value>,
) {
    let (a, b) = (old.get("default"), new.get("default"));
    if at.side == Side::Input && a != b {
        reasons.push(
            RuleId::InputDefaultChanged,
            at.full(),
            format!(
                "default of {} changed: {} → {}",
                at.name(),
                show_opt(a),
                show_opt(b)
            ),
        );
    }
}

/// The JSON types every instance has, for "no `type`".
const ALL_TYPES: [&str; 6] = ["array", "boolean", "null", "number", "object", "string"];

/// `type` as a set; absent is every type. `None` when it is not a name or a list of names.
fn type_set(value: Option<&Value>) -> Option<BTreeSet<&str>> {
    match value {
        None => Some(ALL_TYPES.into_iter().collect()),
        Some(Value::String(t)) => Some(BTreeSet::from([t.as_str()])),
        Some(Value::Array(items)) => items.iter().map(Value::as_str).collect(),
        Some(_) => None,
    }
}

/// Whether every instance of a type in `b` is an instance of a type in `a` (an integer is a
/// number).
fn covers(a: &BTreeSet<&str>, b: &BTreeSet<&str>) -> bool {
    b.iter()
        .all(|t| a.contains(t) || (*t == "integer" && a.contains("number")))
}

fn show_types(value: Option<&Value>) -> String {
    match value {
        None => "any".to_owned(),
        Some(Value::Array(items)) => {
            let names: Vec<String> = items.iter().map(show).collect();
            names.join(" | ")
        }
        Some(other) => show(other),
    }
}

/// `type`, compared as sets of JSON types.
pub(crate) fn types(
    reasons: &mut Reasons,
    at: &At,
    old: &Map<String, Value>,
    new: &Map<String, Value>,
) {
    let (a, b) = (old.get("type"), new.get("type"));
    if a == b {
        return;
    }
    let (Some(x), Some(y)) = (type_set(a), type_set(b)) else {
        return reasons.unproven(&at.full(), format!("`type` of {} changed", at.name()));
    };
    let change = format!("{} → {}", show_types(a), show_types(b));
    let name = at.name();
    match (covers(&y, &x), covers(&x, &y)) {
        (true, true) => reasons.push(
            RuleId::EquivalentForm,
            at.full(),
            format!("type of {name} written differently: {change}"),
        ),
        (true, false) => at.moved(
            reasons,
            Kind::Type,
            Direction::Wider,
            format!("type of {name} widened: {change}"),
        ),
        (false, true) => at.moved(
            reasons,
            Kind::Type,
            Direction::Narrower,
            format!("type of {name} narrowed: {change}"),
        ),
        (false, false) => at.moved(
            reasons,
            Kind::Type,
            Direction::Other,
            format!("type of {name} changed: {change}"),
        ),
    }
}

/// The values `enum` and `const` allow, keyed by their canonical JSON; `Ok(None)` is any value,
/// `Err` an `enum` that is not a list.
fn allowed(schema: &Map<String, Value>) -> Result<Option<Vec<(String, &Value)>>, ()> {
    let key = |v: &Value| sorted(v).to_string();
    let listed = match schema.get("enum") {
        None => None,
        Some(Value::Array(items)) => Some(items.iter().map(|v| (key(v), v)).collect::<Vec<_>>()),
        Some(_) => return Err(()),
    };
    Ok(match (listed, schema.get("const")) {
        (listed, None) => listed,
        (None, Some(c)) => Some(vec![(key(c), c)]),
        (Some(listed), Some(c)) => {
            let k = key(c);
            Some(listed.into_iter().filter(|(x, _)| *x == k).collect())
        }
    })
}

fn show_values(values: &[&Value]) -> String {
    let mut shown: Vec<String> = values
        .iter()
        .take(5)
        .map(|v| format!("`{}`", show(v)))
        .collect();
    if values.len() > 5 {
        shown.push(format!("and {} more", values.len() - 5));
    }
    shown.join(", ")
}

/// `enum` and `const` together, compared as sets of values.
pub(crate) fn values(
    reasons: &mut Reasons,
    at: &At,
    old: &Map<String, Value>,
    new: &Map<String, Value>,
) {
    if old.get("enum") == new.get("enum") && old.get("const") == new.get("const") {
        return;
    }
    let name = at.name();
    let (Ok(a), Ok(b)) = (allowed(old), allowed(new)) else {
        return reasons.unproven(&at.full(), format!("`enum` of {name} changed"));
    };
    let (a, b) = match (a, b) {
        (None, None) => return,
        (None, Some(b)) => {
            let values: Vec<&Value> = b.iter().map(|(_, v)| *v).collect();
            let message = format!("enum of {name} added: {}", show_values(&values));
            return at.moved(reasons, Kind::Enum, Direction::Narrower, message);
        }
        (Some(_), None) => {
            let message = format!("enum of {name} dropped");
            return at.moved(reasons, Kind::Enum, Direction::Wider, message);
        }
        (Some(a), Some(b)) => (a, b),
    };
    let keys = |xs: &[(String, &Value)]| xs.iter().map(|(k, _)| k.clone()).collect::<BTreeSet<_>>();
    let (ka, kb) = (keys(&a), keys(&b));
    let (removed, added) = (only(&a, &kb), only(&b, &ka));
    match (removed.is_empty(), added.is_empty()) {
        (true, true) => reasons.push(
            RuleId::EquivalentForm,
            at.full(),
            format!("enum of {name} written differently (same values)"),
        ),
        (true, false) => at.moved(
            reasons,
            Kind::Enum,
            Direction::Wider,
            format!("enum of {name} widened: {} added", show_values(&added)),
        ),
        (false, true) => at.moved(
            reasons,
            Kind::Enum,
            Direction::Narrower,
            format!("enum of {name} narrowed: {} removed", show_values(&removed)),
        ),
        (false, false) => at.moved(
            reasons,
            Kind::Enum,
            Direction::Other,
            format!(
                "enum of {name} changed: {} removed, {} added",
                show_values(&removed),
                show_values(&added)
            ),
        ),
    }
}

/// The values of `xs` whose key is not in `other`, each once, in `xs`'s order.
fn only<'v>(xs: &[(String, &'v Value)], other: &BTreeSet<String>) -> Vec<&'v Value> {
    let mut seen = BTreeSet::new();
    xs.iter()
        .filter(|(k, _)| !other.contains(k) && seen.insert(k.as_str()))
        .map(|(_, v)| *v)
        .collect()
}

/// Numeric bounds, `pattern`, `format`, `multipleOf` and `uniqueItems`.
pub(crate) fn bounds(
    reasons: &mut Reasons,
    at: &At,
    old: &Map<String, Value>,
    new: &Map<String, Value>,
) {
    for keyword in UPPER.iter().chain(LOWER).chain(UNORDERED) {
        let (a, b) = (old.get(*keyword), new.get(*keyword));
        if a == b {
            continue;
        }
        let upper = UPPER.contains(keyword);
        let direction = match (a, b) {
            (Some(_), None) => Some(Direction::Wider),
            (None, Some(_)) => Some(Direction::Narrower),
            (Some(x), Some(y)) if UNORDERED.contains(keyword) => {
                (x.is_string() && y.is_string()).then_some(Direction::Other)
            }
            (Some(x), Some(y)) => match (x.as_f64(), y.as_f64()) {
                (Some(x), Some(y)) if (y > x) == upper && x != y => Some(Direction::Wider),
                (Some(x), Some(y)) if x != y => Some(Direction::Narrower),
                // Equal numbers written differently (1 and 1.0): the same bound.
                (Some(_), Some(_)) => {
                    reasons.push(
                        RuleId::EquivalentForm,
                        at.full(),
                        format!("`{keyword}` of {} written differently", at.name()),
                    );
                    continue;
                }
                _ => None,
            },
            (None, None) => continue,
        };
        bound_moved(reasons, at, keyword, direction, a, b);
    }
    multiple_of(reasons, at, old.get("multipleOf"), new.get("multipleOf"));
    unique_items(reasons, at, old.get("uniqueItems"), new.get("uniqueItems"));
}

fn bound_moved(
    reasons: &mut Reasons,
    at: &At,
    keyword: &str,
    direction: Option<Direction>,
    old: Option<&Value>,
    new: Option<&Value>,
) {
    let change = format!("{} → {}", show_opt(old), show_opt(new));
    let name = at.name();
    let Some(direction) = direction else {
        return reasons.unproven(
            &at.full(),
            format!("`{keyword}` of {name} changed: {change}"),
        );
    };
    let verb = match direction {
        Direction::Wider => "relaxed",
        Direction::Narrower => "tightened",
        Direction::Other => "changed",
    };
    at.moved(
        reasons,
        Kind::Constraint,
        direction,
        format!("`{keyword}` of {name} {verb}: {change}"),
    );
}

/// `multipleOf`: a divisor of the old step accepts more, a multiple of it less.
fn multiple_of(reasons: &mut Reasons, at: &At, old: Option<&Value>, new: Option<&Value>) {
    if old == new {
        return;
    }
    let divides = |big: f64, small: f64| {
        let q = big / small;
        small > 0.0 && q.is_finite() && (q - q.round()).abs() < 1e-9 * q.abs().max(1.0)
    };
    let direction = match (old, new) {
        (Some(_), None) => Some(Direction::Wider),
        (None, Some(_)) => Some(Direction::Narrower),
        (Some(x), Some(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) if divides(x, y) => Some(Direction::Wider),
            (Some(x), Some(y)) if divides(y, x) => Some(Direction::Narrower),
            (Some(_), Some(_)) => Some(Direction::Other),
            _ => None,
        },
        (None, None) => return,
    };
    bound_moved(reasons, at, "multipleOf", direction, old, new);
}

/// `uniqueItems`: absent is `false`.
fn unique_items(reasons: &mut Reasons, at: &At, old: Option<&Value>, new: Option<&Value>) {
    if old == new {
        return;
    }
    let flag = |v: Option<&Value>| match v {
        None => Some(false),
        Some(Value::Bool(b)) => Some(*b),
        Some(_) => None,
    };
    let direction = match (flag(old), flag(new)) {
        (Some(true), Some(false)) => Some(Direction::Wider),
        (Some(false), Some(true)) => Some(Direction::Narrower),
        (Some(_), Some(_)) => {
            return reasons.push(
                RuleId::EquivalentForm,
                at.full(),
                format!("`uniqueItems` of {} written differently", at.name()),
            );
        }
        _ => None,
    };
    bound_moved(reasons, at, "uniqueItems", direction, old, new);
}
