//! Comparison of two JSON Schemas, one side of a tool (input or output), keyword by keyword.
//!
//! Each keyword family says in which direction the set of values a schema accepts moved
//! ([`Direction`]); [`Side`] turns a direction into a rule, because inputs and outputs break in
//! opposite directions (see [`super::rules`]). Object properties, array items,
//! `additionalProperties` and the branches of `anyOf`/`allOf`/`oneOf` are compared recursively,
//! with a path in every reason (`input.filter.state`, `output.items[].id`). A keyword no family
//! knows that differs is [`RuleId::Unproven`]: only what the rules prove compatible is minor.

use std::collections::BTreeSet;
use std::fmt;

use serde_json::{Map, Value};

use super::keywords;
use super::{Reason, RuleId};

/// Deeper than this, schemas are compared as values (equal, or unproven): inlined schemas
/// are finite but can be deep, and a comparison must not exhaust the stack.
const MAX_DEPTH: usize = 128;

/// Which side of a tool a schema describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    /// What callers send: accepting more is compatible.
    Input,
    /// What callers receive: producing less is compatible.
    Output,
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Input => "input",
            Self::Output => "output",
        })
    }
}

/// How the set of values a schema accepts moved under one keyword.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    /// Accepts everything it did, and more.
    Wider,
    /// Accepts only what it did, and less.
    Narrower,
    /// Accepts other values: some gained, some lost (or no order is known, e.g. two patterns).
    Other,
}

/// What a keyword constrains, which picks the rule a direction falls under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `type`.
    Type,
    /// `enum` and `const`.
    Enum,
    /// Everything else that bounds values.
    Constraint,
}

/// The rule for a move of `kind` in `direction` on `side`: inputs may widen, outputs narrow;
/// the other way, or both at once, is major.
pub(crate) fn rule_for(side: Side, kind: Kind, direction: Direction) -> RuleId {
    let compatible = match side {
        Side::Input => direction == Direction::Wider,
        Side::Output => direction == Direction::Narrower,
    };
    match (side, kind, compatible) {
        (Side::Input, Kind::Type, true) => RuleId::InputTypeWidened,
        (Side::Input, Kind::Type, false) => RuleId::InputTypeNarrowed,
        (Side::Input, Kind::Enum, true) => RuleId::InputEnumWidened,
        (Side::Input, Kind::Enum, false) => RuleId::InputEnumNarrowed,
        (Side::Input, Kind::Constraint, true) => RuleId::InputConstraintRelaxed,
        (Side::Input, Kind::Constraint, false) => RuleId::InputConstraintTightened,
        (Side::Output, Kind::Type, true) => RuleId::OutputTypeNarrowed,
        (Side::Output, Kind::Type, false) => RuleId::OutputTypeWidened,
        (Side::Output, Kind::Enum, true) => RuleId::OutputEnumNarrowed,
        (Side::Output, Kind::Enum, false) => RuleId::OutputEnumWidened,
        (Side::Output, Kind::Constraint, true) => RuleId::OutputConstraintTightened,
        (Side::Output, Kind::Constraint, false) => RuleId::OutputConstraintRelaxed,
    }
}

/// The reasons found so far.
#[derive(Debug, Default)]
pub(crate) struct Reasons(Vec<Reason>);

impl Reasons {
    pub(crate) fn push(&mut self, rule: RuleId, path: String, message: String) {
        self.0.push(Reason::new(rule, path, message));
    }

    pub(crate) fn unproven(&mut self, path: &str, message: String) {
        self.push(RuleId::Unproven, path.to_owned(), message);
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(crate) fn into_vec(self) -> Vec<Reason> {
        self.0
    }
}

/// Where in a schema a comparison is: the side and the path below its root.
#[derive(Debug, Clone)]
pub(crate) struct At {
    pub(crate) side: Side,
    /// `filter.state`, `labels[]`; empty at the root.
    pub(crate) path: String,
    depth: usize,
}

impl At {
    fn root(side: Side) -> Self {
        Self {
            side,
            path: String::new(),
            depth: 0,
        }
    }

    /// A property, an `anyOf[1]` branch, `*` for additional properties.
    fn child(&self, name: &str) -> Self {
        let path = if self.path.is_empty() {
            name.to_owned()
        } else {
            format!("{}.{name}", self.path)
        };
        Self {
            side: self.side,
            path,
            depth: self.depth + 1,
        }
    }

    /// The items of an array.
    fn items(&self) -> Self {
        Self {
            side: self.side,
            path: format!("{}[]", self.path),
            depth: self.depth + 1,
        }
    }

    /// The path in reasons: `input.filter.state`, `output[].id`, or `input` at the root.
    pub(crate) fn full(&self) -> String {
        if self.path.is_empty() || self.path.starts_with('[') {
            format!("{}{}", self.side, self.path)
        } else {
            format!("{}.{}", self.side, self.path)
        }
    }

    /// How messages name the place: "input `filter.state`", or "the input" at the root.
    pub(crate) fn name(&self) -> String {
        if self.path.is_empty() {
            format!("the {}", self.side)
        } else {
            format!("{} `{}`", self.side, self.path)
        }
    }

    /// Records a move of `kind` in `direction` here.
    pub(crate) fn moved(
        &self,
        reasons: &mut Reasons,
        kind: Kind,
        direction: Direction,
        message: String,
    ) {
        reasons.push(rule_for(self.side, kind, direction), self.full(), message);
    }
}

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

/// A value for a message: strings as they are, anything else as compact JSON; cut at 60
/// characters so a message stays one readable line.
pub(crate) fn show(value: &Value) -> String {
    let text = match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if text.chars().count() > 60 {
        let cut: String = text.chars().take(57).collect();
        format!("{cut}…")
    } else {
        text
    }
}

/// [`show`], or `none` for an absent keyword.
pub(crate) fn show_opt(value: Option<&Value>) -> String {
    value.map_or_else(|| "none".to_owned(), show)
}
