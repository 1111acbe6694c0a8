//! The served output schema of a projection, derived from the upstream's where the program is
//! in a small subset, dropped (with a reason) everywhere else.
//!
//! The subset: `.`; paths of names and indices `.a.b`, `.[0]`, `."a"`; iteration `.[]`; pipes
//! `f | g`; array construction `[f]` and `map(f)`; object construction with fixed keys
//! `{a, "b": f, c: .d.e}` whose values each give one output. A name's schema is the property's
//! schema as the upstream declares it. Anything else (other builtins, operators, definitions,
//! `//`, conditionals) drops the schema: deriving it would mean reimplementing jq's semantics
//! over schemas, and a wrong schema is worse than none.
//!
//! A member the upstream does not require may be missing, and jq then gives `null`: its
//! schema becomes `{"anyOf": [S, {"type": "null"}]}`.
//!
//! A program that may give several outputs (it iterates outside `[…]`) gives an array when it
//! does, one bare value when there is one, and `null` when there is none (see the parent
//! module); its schema is `{"anyOf": [{"type": "array", "items": S}, S, {"type": "null"}]}`.

use jaq_core::load::lex::StrPart;
use jaq_core::load::parse::{BinaryOp, Term};
use jaq_core::path::Part;
use serde_json::{Map, Value, json};

/// What became of the served output schema.
#[derive(Debug, Clone, PartialEq)]
pub enum SchemaOutcome {
    /// Derived from the upstream's.
    Derived(Value),
    /// Not derived; the projection's results are served without an output schema.
    Dropped {
        /// Why, in a few words.
        reason: String,
    },
}

/// A program in the derivable subset, owned (the parsed program borrows its text).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Shape {
    Id,
    Field(String),
    Index(usize),
    Iterate,
    Pipe(Box<Shape>, Box<Shape>),
    Array(Box<Shape>),
    Object(Vec<(String, Shape)>),
}

/// How many outputs a shape gives per input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Count {
    One,
    Many,
}

impl Shape {
    /// The shape of `term`, or why it is outside the subset.
    pub(super) fn of(term: &Term<&str>) -> Result<Self, String> {
        match term {
            Term::Id => Ok(Self::Id),
            Term::Path(base, path) => {
                let mut shape = Self::of(base)?;
                for (part, _opt) in &path.0 {
                    let step = match part {
                        Part::Index(index) => match literal(index) {
                            Some(Literal::Name(name)) => Self::Field(name),
                            Some(Literal::Index(i)) => Self::Index(i),
                            None => return Err("a computed index".to_owned()),
                        },
                        Part::Range(None, None) => Self::Iterate,
                        Part::Range(..) => return Err("a slice".to_owned()),
                    };
                    shape = Self::Pipe(Box::new(shape), Box::new(step));
                }
                Ok(shape)
            }
            Term::BinOp(l, BinaryOp::Pipe(None), r) => {
                Ok(Self::Pipe(Box::new(Self::of(l)?), Box::new(Self::of(r)?)))
            }
            Term::Arr(Some(inner)) => Ok(Self::Array(Box::new(Self::of(inner)?))),
            Term::Call(name, args) if *name == "map" && args.len() == 1 => {
                let inner = Self::of(&args[0])?;
                Ok(Self::Array(Box::new(Self::Pipe(
                    Box::new(Self::Iterate),
                    Box::new(inner),
                ))))
            }
            Term::Obj(entries) => {
                let mut fields = Vec::with_capacity(entries.len());
                for (key, value) in entries {
                    let Some(Literal::Name(name)) = literal(key) else {
                        return Err("an object with a computed key".to_owned());
                    };
                    let shape = match value {
                        Some(value) => Self::of(value)?,
                        None => Self::Field(name.clone()),
                    };
                    fields.push((name, shape));
                }
                Ok(Self::Object(fields))
            }
            Term::Call(name, _) => Err(format!("a call to `{name}`")),
            _ => Err("an expression outside the derivable subset".to_owned()),
        }
    }

    /// The served schema, given the upstream's.
    pub(super) fn schema(&self, upstream: &Value) -> SchemaOutcome {
        match self.derive(upstream) {
            Ok((schema, Count::One)) => SchemaOutcome::Derived(schema),
            Ok((schema, Count::Many)) => SchemaOutcome::Derived(json!({
                "anyOf": [{"type": "array", "items": schema}, schema, {"type": "null"}]
            })),
            Err(reason) => SchemaOutcome::Dropped { reason },
        }
    }

    fn derive(&self, input: &Value) -> Result<(Value, Count), String> {
        match self {
            Self::Id => Ok((input.clone(), Count::One)),
            Self::Field(name) => {
                let (object, nullable) = strip_null(input);
                let property = object
                    .get("properties")
                    .and_then(|p| p.get(name))
                    .ok_or_else(|| format!("the upstream schema has no property `{name}`"))?;
                // jq gives `null` for a member that is not there, and for any member of
                // `null`: a property the upstream does not require may be `null`.
                let required = object
                    .get("required")
                    .and_then(Value::as_array)
                    .is_some_and(|r| r.iter().any(|n| n == name.as_str()));
                Ok((or_null(property, nullable || !required), Count::One))
            }
            // An index past the end gives `null`.
            Self::Index(_) => Ok((or_null(&items(strip_null(input).0)?, true), Count::One)),
            Self::Iterate => Ok((items(strip_null(input).0)?, Count::Many)),
            Self::Pipe(l, r) => {
                let (mid, left) = l.derive(input)?;
                let (out, right) = r.derive(&mid)?;
                let count = if left == Count::Many || right == Count::Many {
                    Count::Many
                } else {
                    Count::One
                };
                Ok((out, count))
            }
            Self::Array(inner) => {
                let (items, _) = inner.derive(input)?;
                Ok((json!({"type": "array", "items": items}), Count::One))
            }
            Self::Object(fields) => {
                let mut properties = Map::new();
                for (name, shape) in fields {
                    let (schema, count) = shape.derive(input)?;
                    if count == Count::Many {
                        return Err(format!("member `{name}` may give several values"));
                    }
                    properties.insert(name.clone(), schema);
                }
                let required: Vec<Value> = fields
                    .iter()
                    .map(|(n, _)| Value::String(n.clone()))
                    .collect();
                Ok((
                    json!({"type": "object", "properties": properties, "required": required}),
                    Count::One,
                ))
            }
        }
    }
}

/// `schema`, or `null` too when `nullable`.
fn or_null(schema: &Value, nullable: bool) -> Value {
    if nullable && strip_null(schema).0 == schema {
        json!({"anyOf": [schema, {"type": "null"}]})
    } else {
        schema.clone()
    }
}

/// The schema inside `{"anyOf": [S, {"type": "null"}]}` (and whether it was wrapped so).
fn strip_null(schema: &Value) -> (&Value, bool) {
    match schema
        .get("anyOf")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
    {
        Some([inner, null]) if *null == json!({"type": "null"}) => (inner, true),
        _ => (schema, false),
    }
}

/// The schema of an array's items.
fn items(schema: &Value) -> Result<Value, String> {
    schema
        .get("items")
        .filter(|items| items.is_object() || items.is_boolean())
        .cloned()
        .ok_or_else(|| "the upstream schema has no `items` to iterate".to_owned())
}

enum Literal {
    Name(String),
    Index(usize),
}

/// A string or a non-negative integer written in the program.
fn literal(term: &Term<&str>) -> Option<Literal> {
    match term {
        Term::Str(None, parts) => {
            let mut name = String::new();
            for part in parts {
                match part {
                    StrPart::Str(s) => name.push_str(s),
                    StrPart::Char(c) => name.push(*c),
                    StrPart::Term(_) => return None,
                }
            }
            Some(Literal::Name(name))
        }
        Term::Num(n) => n.parse().ok().map(Literal::Index),
        _ => None,
    }
}
