//! Tool transforms: the definition a tool is served with, made from the upstream's, and the map
//! that turns each call back into the upstream's shape.
//!
//! A [`Transform`] is configuration, written under a tool (or a glob of tools) in the bridge's
//! YAML. It renames the tool, replaces or extends its description, and per argument hides it
//! behind a fixed value, gives it a default, renames it, narrows it (an `enum` subset, `minimum`,
//! `maximum`) or documents it. [`Transform::apply`] checks it against the upstream's definition
//! once, at configuration load, and returns the served definition together with an
//! [`ArgumentMap`]; [`ArgumentMap::map_back`] then runs on every call, so everything it needs is
//! computed in `apply` and it only moves keys and clones small values.
//!
//! The served definition is the one that is fingerprinted, locked and diffed (DESIGN.md §15).
//! The bridge validates a call's input against the served schema, maps it back with
//! [`ArgumentMap::map_back`], and validates the result against the upstream's own schema before
//! forwarding it.
//!
//! Only the top-level properties of the input object are transformed; nested properties are
//! served as the upstream wrote them.
//!
//! `apply` checks the values it is given (`enum` items, defaults, literal fixed values) against
//! the argument's `type`, `enum`, `minimum` and `maximum` only: that catches configuration
//! mistakes early, and the full validation happens on each call anyway.

use std::collections::{BTreeMap, HashMap, HashSet};

use otc_mappings::otc::{Schema, ToolDefinition};
use serde::Deserialize;
use serde_json::{Map, Number, Value};
use thiserror::Error;

/// How a tool is served: its name, description and arguments, as configured.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Transform {
    /// The served tool name (`^[A-Za-z0-9_-]{1,64}$`). Only `name` changes; the tool's id is the
    /// catalog's to choose.
    #[serde(default)]
    pub name: Option<String>,
    /// Replaces the description.
    #[serde(default)]
    pub description: Option<String>,
    /// Appended to the description, after a blank line.
    #[serde(default)]
    pub description_append: Option<String>,
    /// Per argument (by its upstream name), how it is served.
    #[serde(default)]
    pub arguments: BTreeMap<String, ArgumentTransform>,
}

/// How one argument is served.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArgumentTransform {
    /// Hide the argument and always send this value (see [`FixedSource`] for the forms).
    #[serde(default, deserialize_with = "fixed_source")]
    pub fixed: Option<FixedSource>,
    /// The value sent when the caller leaves the argument out; the argument stops being required.
    #[serde(default, deserialize_with = "present")]
    pub default: Option<Value>,
    /// The name the argument is served under.
    #[serde(default)]
    pub rename: Option<String>,
    /// The values the caller may pass: a subset of the upstream's.
    #[serde(default, rename = "enum")]
    pub enum_values: Option<Vec<Value>>,
    /// The largest value the caller may pass, at most the upstream's.
    #[serde(default)]
    pub maximum: Option<Number>,
    /// The smallest value the caller may pass, at least the upstream's.
    #[serde(default)]
    pub minimum: Option<Number>,
    /// The argument's served description.
    #[serde(default)]
    pub description: Option<String>,
}

impl ArgumentTransform {
    /// Whether anything but `fixed` is set: those shape a served argument, and a fixed one is not
    /// served.
    fn shapes(&self) -> bool {
        self.default.is_some()
            || self.rename.is_some()
            || self.enum_values.is_some()
            || self.maximum.is_some()
            || self.minimum.is_some()
            || self.description.is_some()
    }
}

/// Where a fixed argument's value comes from.
///
/// In YAML: `{env: NAME}` is an environment variable, `{caller: key}` a value of the caller's
/// context (its name, or an attribute or claim), `{value: …}` a literal (for a literal that
/// would otherwise read as one of the first two), and anything else is the literal itself.
#[derive(Debug, Clone, PartialEq)]
pub enum FixedSource {
    /// A literal value.
    Value(Value),
    /// The value of an environment variable, resolved by the bridge.
    Env(String),
    /// A value of the caller's context (`name`, or an attribute or claim key), resolved by the
    /// bridge.
    Caller(String),
}

impl From<Value> for FixedSource {
    fn from(value: Value) -> Self {
        if let Value::Object(members) = &value
            && members.len() == 1
        {
            match members.iter().next() {
                Some((key, Value::String(name))) if key == "env" => return Self::Env(name.clone()),
                Some((key, Value::String(key_))) if key == "caller" => {
                    return Self::Caller(key_.clone());
                }
                Some((key, literal)) if key == "value" => return Self::Value(literal.clone()),
                _ => {}
            }
        }
        Self::Value(value)
    }
}

impl std::fmt::Display for FixedSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Value(_) => f.write_str("a literal value"),
            Self::Env(name) => write!(f, "environment variable `{name}`"),
            Self::Caller(key) => write!(f, "caller context key `{key}`"),
        }
    }
}

fn fixed_source<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<FixedSource>, D::Error> {
    Value::deserialize(d).map(|value| Some(FixedSource::from(value)))
}

/// Reads a field that is present (even as `null`, a valid default) into `Some`.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// A transform that does not fit the upstream's definition; each names what is wrong.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum TransformError {
    /// The served tool name does not match `^[A-Za-z0-9_-]{1,64}$`.
    #[error("tool name `{name}` must match ^[A-Za-z0-9_-]{{1,64}}$")]
    BadToolName {
        /// The configured name.
        name: String,
    },
    /// Both `description` and `description_append` are set.
    #[error("`description` replaces and `description_append` appends: set one of them")]
    TwoDescriptions,
    /// The upstream's input schema has no such property.
    #[error("argument `{argument}`: the upstream tool has no such argument")]
    UnknownArgument {
        /// The configured argument.
        argument: String,
    },
    /// A fixed argument is not served, so it cannot also be renamed, narrowed or documented.
    #[error(
        "argument `{argument}`: a fixed argument is hidden, so it cannot also have a default, a \
         new name, an enum, a minimum, a maximum or a description"
    )]
    FixedAndShaped {
        /// The configured argument.
        argument: String,
    },
    /// The served argument name is not usable.
    #[error("argument `{argument}`: new name `{name}` must match ^[A-Za-z0-9_.-]{{1,64}}$")]
    BadArgumentName {
        /// The configured argument.
        argument: String,
        /// The new name.
        name: String,
    },
    /// A rename onto the name of another upstream argument or another rename.
    #[error("argument `{argument}`: new name `{name}` is already taken by `{taken_by}`")]
    NameTaken {
        /// The configured argument.
        argument: String,
        /// The new name.
        name: String,
        /// The argument that has that name (upstream, or after its own rename).
        taken_by: String,
    },
    /// An `enum` that allows a value the upstream does not.
    #[error("argument `{argument}`: enum value {value} is not allowed upstream: {reason}")]
    EnumNotSubset {
        /// The configured argument.
        argument: String,
        /// The offending value.
        value: Value,
        /// Why the upstream refuses it.
        reason: String,
    },
    /// An empty `enum` (no call could pass it).
    #[error("argument `{argument}`: enum must list at least one value")]
    EmptyEnum {
        /// The configured argument.
        argument: String,
    },
    /// A bound that widens the upstream's, or that is set on an argument that is not a number.
    #[error("argument `{argument}`: {reason}")]
    BadBound {
        /// The configured argument.
        argument: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A default or a literal fixed value the (narrowed) argument does not accept.
    #[error("argument `{argument}`: value {value} is not valid for it: {reason}")]
    InvalidValue {
        /// The configured argument.
        argument: String,
        /// The offending value.
        value: Value,
        /// Why it is not valid.
        reason: String,
    },
    /// The upstream's input schema is not an object schema with `properties`.
    #[error(
        "the upstream tool's input schema has no `properties` object, so arguments cannot be transformed"
    )]
    NoProperties,
}

/// A call's input that cannot be mapped back to the upstream's shape.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum MapBackError {
    /// The caller passed an argument that is not served: a fixed one, or the upstream name of a
    /// renamed one. Reported exactly like an argument that does not exist, so a fixed argument
    /// does not reveal itself.
    #[error("unknown argument `{argument}`")]
    UnknownArgument {
        /// The argument as the caller passed it.
        argument: String,
    },
    /// A fixed value from the environment or the caller's context that `resolve` did not give.
    #[error("argument `{argument}`: no value for {origin}")]
    Unresolved {
        /// The upstream argument.
        argument: String,
        /// Where the value should have come from (never the value).
        origin: String,
    },
}

/// The served definition and the map from its calls back to the upstream's.
#[derive(Debug, Clone)]
pub struct Transformed {
    /// The definition as served (and fingerprinted).
    pub definition: ToolDefinition,
    /// Maps each call's input back to the upstream's arguments.
    pub arguments: ArgumentMap,
}

/// Everything [`ArgumentMap::map_back`] needs, computed once by [`Transform::apply`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ArgumentMap {
    /// Served name → upstream name, for renamed arguments.
    renamed: HashMap<String, String>,
    /// Names the caller may not pass: the upstream names of renamed arguments.
    refused: HashSet<String>,
    /// Upstream name and value, filled in when the caller leaves the argument out.
    defaults: Vec<(String, Value)>,
    /// Upstream name and source, always sent.
    fixed: Vec<(String, FixedSource)>,
}

impl ArgumentMap {
    /// Whether the map changes nothing (no transform of arguments).
    pub fn is_identity(&self) -> bool {
        *self == Self::default()
    }

    /// The arguments hidden behind a fixed value, by their upstream names.
    pub fn hidden(&self) -> impl Iterator<Item = &str> {
        self.fixed.iter().map(|(name, _)| name.as_str())
    }

    /// Takes the hidden arguments out of a call's `input`: a caller written before the argument
    /// was hidden may still send it, and its value is ignored (the fixed one is sent), so hiding
    /// an argument breaks no client (DESIGN.md §15; the change classes call it minor). Done
    /// before the input is validated against the served schema, which may be closed.
    pub fn drop_hidden(&self, input: &mut Map<String, Value>) {
        for (name, _) in &self.fixed {
            input.shift_remove(name);
        }
    }

    /// The call's `input` (as served) in the upstream's shape: renamed arguments under their
    /// upstream names, defaults filled in, fixed values added (over any value the caller sent).
    ///
    /// `resolve` is asked for each fixed value that comes from the environment or the caller's
    /// context ([`FixedSource::Env`], [`FixedSource::Caller`]), once per call and argument; it
    /// is never asked for literals.
    pub fn map_back(
        &self,
        input: Map<String, Value>,
        resolve: &dyn Fn(&FixedSource) -> Option<Value>,
    ) -> Result<Map<String, Value>, MapBackError> {
        if self.is_identity() {
            return Ok(input);
        }
        let mut out = Map::with_capacity(input.len() + self.defaults.len() + self.fixed.len());
        for (key, value) in input {
            if self.refused.contains(&key) {
                return Err(MapBackError::UnknownArgument { argument: key });
            }
            match self.renamed.get(&key) {
                Some(upstream) => out.insert(upstream.clone(), value),
                None => out.insert(key, value),
            };
        }
        for (name, value) in &self.defaults {
            if !out.contains_key(name) {
                out.insert(name.clone(), value.clone());
            }
        }
        for (name, source) in &self.fixed {
            let value = match source {
                FixedSource::Value(value) => value.clone(),
                FixedSource::Env(_) | FixedSource::Caller(_) => {
                    resolve(source).ok_or_else(|| MapBackError::Unresolved {
                        argument: name.clone(),
                        origin: source.to_string(),
                    })?
                }
            };
            out.insert(name.clone(), value);
        }
        Ok(out)
    }
}

/// `^[A-Za-z0-9_-]{1,64}$`, the OTC tool name rule.
fn is_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// `^[A-Za-z0-9_.-]{1,64}$`: a served argument name that every client can write as a key.
fn is_argument_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
}

impl Transform {
    /// The served definition of `upstream` and the map of its calls back, or what in the
    /// transform does not fit `upstream`.
    pub fn apply(&self, upstream: &ToolDefinition) -> Result<Transformed, TransformError> {
        let mut definition = upstream.clone();
        if let Some(name) = &self.name {
            if !is_tool_name(name) {
                return Err(TransformError::BadToolName { name: name.clone() });
            }
            definition.name = name.clone();
        }
        match (&self.description, &self.description_append) {
            (Some(_), Some(_)) => return Err(TransformError::TwoDescriptions),
            (Some(description), None) => definition.description = description.clone(),
            (None, Some(append)) if definition.description.is_empty() => {
                definition.description = append.clone();
            }
            (None, Some(append)) => {
                definition.description = format!("{}\n\n{append}", definition.description);
            }
            (None, None) => {}
        }
        if self.arguments.is_empty() {
            return Ok(Transformed {
                definition,
                arguments: ArgumentMap::default(),
            });
        }
        let (schema, arguments) = self.transform_arguments(upstream.input_schema.to_value())?;
        definition.input_schema = Schema::from(schema);
        Ok(Transformed {
            definition,
            arguments,
        })
    }

    fn transform_arguments(&self, schema: Value) -> Result<(Value, ArgumentMap), TransformError> {
        let Value::Object(mut schema) = schema else {
            return Err(TransformError::NoProperties);
        };
        let properties = match schema.get_mut("properties") {
            Some(Value::Object(properties)) => std::mem::take(properties),
            _ => return Err(TransformError::NoProperties),
        };
        let mut required: Vec<String> = match schema.get("required") {
            Some(Value::Array(names)) => names
                .iter()
                .filter_map(|n| n.as_str().map(str::to_owned))
                .collect(),
            _ => Vec::new(),
        };
        for argument in self.arguments.keys() {
            if !properties.contains_key(argument) {
                return Err(TransformError::UnknownArgument {
                    argument: argument.clone(),
                });
            }
        }
        self.check_renames(&properties)?;

        let mut map = ArgumentMap::default();
        let mut served = Map::with_capacity(properties.len());
        for (name, property) in properties {
            let Some(t) = self.arguments.get(&name) else {
                served.insert(name, property);
                continue;
            };
            if let Some(source) = &t.fixed {
                if t.shapes() {
                    return Err(TransformError::FixedAndShaped { argument: name });
                }
                if let FixedSource::Value(value) = source {
                    check_value(&property, value).map_err(|reason| {
                        TransformError::InvalidValue {
                            argument: name.clone(),
                            value: value.clone(),
                            reason,
                        }
                    })?;
                }
                required.retain(|r| *r != name);
                map.fixed.push((name, source.clone()));
                continue;
            }
            let property = shape_property(&name, t, property)?;
            if let Some(default) = &t.default {
                required.retain(|r| *r != name);
                map.defaults.push((name.clone(), default.clone()));
            }
            match &t.rename {
                Some(new) => {
                    for r in required.iter_mut().filter(|r| **r == name) {
                        *r = new.clone();
                    }
                    map.refused.insert(name.clone());
                    map.renamed.insert(new.clone(), name);
                    served.insert(new.clone(), property);
                }
                None => {
                    served.insert(name, property);
                }
            }
        }
        // Both keys keep their place, so the schema's text changes only where it must.
        schema.insert("properties".to_owned(), Value::Object(served));
        if required.is_empty() {
            schema.shift_remove("required");
        } else {
            schema.insert(
                "required".to_owned(),
                required.into_iter().map(Value::String).collect(),
            );
        }
        Ok((Value::Object(schema), map))
    }

    /// Every new name is usable and unique among the served names.
    fn check_renames(&self, properties: &Map<String, Value>) -> Result<(), TransformError> {
        let mut taken: HashMap<&str, &str> = HashMap::new();
        for (argument, t) in &self.arguments {
            let Some(new) = &t.rename else { continue };
            if !is_argument_name(new) {
                return Err(TransformError::BadArgumentName {
                    argument: argument.clone(),
                    name: new.clone(),
                });
            }
            if new != argument && properties.contains_key(new) {
                return Err(TransformError::NameTaken {
                    argument: argument.clone(),
                    name: new.clone(),
                    taken_by: new.clone(),
                });
            }
            if let Some(other) = taken.insert(new, argument) {
                return Err(TransformError::NameTaken {
                    argument: argument.clone(),
                    name: new.clone(),
                    taken_by: other.to_owned(),
                });
            }
        }
        Ok(())
    }
}

/// The served form of one upstream property: narrowed, documented, with its default.
fn shape_property(
    name: &str,
    t: &ArgumentTransform,
    property: Value,
) -> Result<Value, TransformError> {
    let mut property = match property {
        Value::Object(p) => p,
        // `true` or `{}`: any value; narrowing starts from nothing.
        _ => Map::new(),
    };
    if let Some(values) = &t.enum_values {
        if values.is_empty() {
            return Err(TransformError::EmptyEnum {
                argument: name.to_owned(),
            });
        }
        let upstream = Value::Object(property.clone());
        for value in values {
            check_value(&upstream, value).map_err(|reason| TransformError::EnumNotSubset {
                argument: name.to_owned(),
                value: value.clone(),
                reason,
            })?;
        }
        property.insert("enum".to_owned(), Value::Array(values.clone()));
    }
    let bound_error = |reason: String| TransformError::BadBound {
        argument: name.to_owned(),
        reason,
    };
    if t.maximum.is_some() || t.minimum.is_some() {
        let numeric = match property.get("type") {
            Some(Value::String(ty)) => ty == "number" || ty == "integer",
            Some(Value::Array(types)) => types.iter().any(|ty| ty == "number" || ty == "integer"),
            _ => true,
        };
        if !numeric {
            return Err(bound_error(
                "minimum and maximum apply to numbers, and the argument is not one".to_owned(),
            ));
        }
    }
    if let Some(max) = &t.maximum {
        let new = max.as_f64().unwrap_or(f64::INFINITY);
        if let Some(up) = property.get("maximum").and_then(Value::as_f64)
            && new > up
        {
            return Err(bound_error(format!(
                "maximum {max} is above the upstream's maximum {up}"
            )));
        }
        if let Some(up) = property.get("exclusiveMaximum").and_then(Value::as_f64)
            && new >= up
        {
            return Err(bound_error(format!(
                "maximum {max} is not below the upstream's exclusiveMaximum {up}"
            )));
        }
        property.insert("maximum".to_owned(), Value::Number(max.clone()));
    }
    if let Some(min) = &t.minimum {
        let new = min.as_f64().unwrap_or(f64::NEG_INFINITY);
        if let Some(up) = property.get("minimum").and_then(Value::as_f64)
            && new < up
        {
            return Err(bound_error(format!(
                "minimum {min} is below the upstream's minimum {up}"
            )));
        }
        if let Some(up) = property.get("exclusiveMinimum").and_then(Value::as_f64)
            && new <= up
        {
            return Err(bound_error(format!(
                "minimum {min} is not above the upstream's exclusiveMinimum {up}"
            )));
        }
        property.insert("minimum".to_owned(), Value::Number(min.clone()));
    }
    if let (Some(min), Some(max)) = (
        property.get("minimum").and_then(Value::as_f64),
        property.get("maximum").and_then(Value::as_f64),
    ) && min > max
    {
        return Err(bound_error(format!("minimum {min} is above maximum {max}")));
    }
    if let Some(description) = &t.description {
        property.insert("description".to_owned(), Value::String(description.clone()));
    }
    let property = Value::Object(property);
    if let Some(default) = &t.default {
        check_value(&property, default).map_err(|reason| TransformError::InvalidValue {
            argument: name.to_owned(),
            value: default.clone(),
            reason,
        })?;
        if let Value::Object(mut p) = property {
            p.insert("default".to_owned(), default.clone());
            return Ok(Value::Object(p));
        }
    }
    Ok(property)
}

/// Whether `value` passes `schema`'s `type`, `enum`, `minimum` and `maximum` (the checks a
/// configuration mistake trips; the full validation runs on each call).
fn check_value(schema: &Value, value: &Value) -> Result<(), String> {
    let Value::Object(schema) = schema else {
        return Ok(());
    };
    if let Some(ty) = schema.get("type") {
        let types: Vec<&str> = match ty {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !types.is_empty() && !types.iter().any(|t| has_type(value, t)) {
            return Err(format!("it is not of type {ty}"));
        }
    }
    if let Some(Value::Array(allowed)) = schema.get("enum")
        && !allowed.contains(value)
    {
        return Err(format!(
            "it is not one of {}",
            Value::Array(allowed.clone())
        ));
    }
    if let Some(n) = value.as_f64() {
        if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
            && n > max
        {
            return Err(format!("it is above the maximum {max}"));
        }
        if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
            && n < min
        {
            return Err(format!("it is below the minimum {min}"));
        }
    }
    Ok(())
}

fn has_type(value: &Value, ty: &str) -> bool {
    match ty {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "string" => value.is_string(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "number" => value.is_number(),
        "integer" => {
            value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        // An unknown type name is the upstream's problem, not the transform's.
        _ => true,
    }
}
