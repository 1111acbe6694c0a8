//! The common shape of a condition, answered without CEL's interpreter where the answer is
//! certain.
//!
//! Most argument conditions are a few presence tests and comparisons of an input field with a
//! literal, joined by `!`, `&&` and `||` (`!has(input.a) || input.a < 1000`,
//! `input.owner == "acme" && !input.force`). cel 0.15's interpreter builds an overload error for
//! every `!` and comparison before it knows whether there is one, and a `Vec` and a `String` for
//! every qualified name: for the README's five rules that was most of what policies add to a
//! call. A [`Native`] is compiled once per configuration from the parsed expression, when every
//! node of it is one of those; it reads the input's JSON in place.
//!
//! It answers only where cel's answer is certain: same-typed scalars compared, booleans joined,
//! fields that are there. It reads the input, `caller.name`, `caller.claims.…`, `tool.toolkit`
//! and `tool.destructive`, all in place. Anything else (a missing field, a comparison across
//! types, a list or a map, an operand of `!` that is not a boolean) is `None`, and the
//! interpreter decides, so a decision is the interpreter's in every case (the tests compare both
//! on every shape).

use cel::common::ast::{Expr, LiteralValue, operators};
use cel::parser::Expression;
use serde_json::{Map, Value};

use super::caller::Caller;
use crate::catalog::registry::Entry;

/// A condition made only of the nodes this module answers.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Native {
    Literal(Literal),
    /// `input.a.b`, `caller.name`, `tool.destructive`.
    Field(Field),
    /// `has(input.a.b)`.
    Has(Box<[String]>),
    Not(Box<Native>),
    And(Box<[Native; 2]>),
    Or(Box<[Native; 2]>),
    Compare(Comparison, Box<[Native; 2]>),
}

/// A literal of the expression, owned.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Literal {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Double(f64),
    String(String),
}

/// A variable read in place.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Field {
    /// The path inside the input.
    Input(Box<[String]>),
    CallerName,
    /// The path inside the caller's claims.
    Claim(Box<[String]>),
    ToolToolkit,
    ToolDestructive,
}

impl Field {
    /// The variable that `root.path` names, when it is one of those read in place.
    fn of(root: &str, path: Box<[String]>) -> Option<Self> {
        let names: Vec<&str> = path.iter().map(String::as_str).collect();
        Some(match (root, names.as_slice()) {
            ("input", [_, ..]) => Self::Input(path),
            ("caller", ["name"]) => Self::CallerName,
            ("caller", ["claims", _, ..]) => Self::Claim(path[1..].into()),
            ("tool", ["toolkit"]) => Self::ToolToolkit,
            ("tool", ["destructive"]) => Self::ToolDestructive,
            _ => return None,
        })
    }
}

/// What a call's condition reads.
#[derive(Debug, Clone, Copy)]
pub(super) struct Call<'a> {
    pub(super) input: &'a Map<String, Value>,
    pub(super) caller: &'a Caller,
    pub(super) entry: &'a Entry,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Comparison {
    Equal,
    NotEqual,
    Less,
    LessOrEqual,
    Greater,
    GreaterOrEqual,
}

/// A value while evaluating: a scalar, borrowed from the input or the expression.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Scalar<'a> {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Double(f64),
    String(&'a str),
}

impl Native {
    /// The condition `expression` as a [`Native`], or `None` when a node of it is not one this
    /// module answers.
    pub(super) fn compile(expression: &Expression) -> Option<Self> {
        match &expression.expr {
            Expr::Literal(literal) => Some(Self::Literal(Literal::of(literal)?)),
            Expr::Select(select) => {
                let mut path = vec![select.field.clone()];
                let mut operand = &select.operand.expr;
                let root = loop {
                    match operand {
                        Expr::Ident(root) => break root,
                        Expr::Select(inner) if !inner.test => {
                            path.push(inner.field.clone());
                            operand = &inner.operand.expr;
                        }
                        _ => return None,
                    }
                };
                path.reverse();
                let path = path.into_boxed_slice();
                match (select.test, root.as_str()) {
                    (true, "input") => Some(Self::Has(path)),
                    (true, _) => None,
                    (false, root) => Some(Self::Field(Field::of(root, path)?)),
                }
            }
            Expr::Call(call) if call.target.is_none() => {
                let compiled = |at: usize| call.args.get(at).and_then(Self::compile);
                let pair = || Some(Box::new([compiled(0)?, compiled(1)?]));
                match (call.func_name.as_str(), call.args.len()) {
                    (operators::LOGICAL_NOT, 1) => Some(Self::Not(Box::new(compiled(0)?))),
                    (operators::LOGICAL_AND, 2) => Some(Self::And(pair()?)),
                    (operators::LOGICAL_OR, 2) => Some(Self::Or(pair()?)),
                    (name, 2) => Some(Self::Compare(Comparison::of(name)?, pair()?)),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// Whether the condition holds for `call`, when that is certain without the interpreter:
    /// `Some(true)` only where the interpreter's answer is the boolean `true`.
    pub(super) fn holds(&self, call: Call<'_>) -> Option<bool> {
        match self.eval(call)? {
            Scalar::Bool(b) => Some(b),
            _ => Some(false),
        }
    }

    fn eval<'a>(&'a self, call: Call<'a>) -> Option<Scalar<'a>> {
        let input = call.input;
        match self {
            Self::Literal(literal) => Some(literal.scalar()),
            Self::Field(Field::Input(path)) => Scalar::of(field(input, path)?),
            Self::Field(Field::CallerName) => Some(Scalar::String(&call.caller.name)),
            Self::Field(Field::Claim(path)) => Scalar::of(field(&call.caller.claims, path)?),
            Self::Field(Field::ToolToolkit) => {
                Some(Scalar::String(&call.entry.definition().id.toolkit))
            }
            Self::Field(Field::ToolDestructive) => Some(Scalar::Bool(call.entry.tool.destructive)),
            Self::Has(path) => {
                let (last, parent) = path.split_last()?;
                let parent = match parent {
                    [] => input,
                    parent => field(input, parent)?.as_object()?,
                };
                Some(Scalar::Bool(parent.contains_key(last)))
            }
            Self::Not(operand) => match operand.eval(call)? {
                Scalar::Bool(b) => Some(Scalar::Bool(!b)),
                _ => None,
            },
            // As the interpreter: the left side first; the right only when the left does not
            // decide, and then a boolean or nothing certain.
            Self::And(sides) => match sides[0].eval(call)? {
                Scalar::Bool(false) => Some(Scalar::Bool(false)),
                Scalar::Bool(true) => sides[1].eval(call).filter(Scalar::is_bool),
                _ => None,
            },
            Self::Or(sides) => match sides[0].eval(call)? {
                Scalar::Bool(true) => Some(Scalar::Bool(true)),
                Scalar::Bool(false) => sides[1].eval(call).filter(Scalar::is_bool),
                _ => None,
            },
            Self::Compare(comparison, sides) => {
                let left = sides[0].eval(call)?;
                let right = sides[1].eval(call)?;
                comparison.of_scalars(left, right).map(Scalar::Bool)
            }
        }
    }
}

/// The value at `path` inside `object`, when every step is there.
fn field<'a>(object: &'a Map<String, Value>, path: &[String]) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    let mut value = object.get(first)?;
    for step in rest {
        value = value.as_object()?.get(step)?;
    }
    Some(value)
}

impl Literal {
    fn of(literal: &LiteralValue) -> Option<Self> {
        Some(match literal {
            LiteralValue::Null => Self::Null,
            LiteralValue::Boolean(b) => Self::Bool(*b.inner()),
            LiteralValue::Int(i) => Self::Int(*i.inner()),
            LiteralValue::UInt(u) => Self::UInt(*u.inner()),
            LiteralValue::Double(d) => Self::Double(*d.inner()),
            LiteralValue::String(s) => Self::String(s.inner().to_owned()),
            LiteralValue::Bytes(_) => return None,
        })
    }

    fn scalar(&self) -> Scalar<'_> {
        match self {
            Self::Null => Scalar::Null,
            Self::Bool(b) => Scalar::Bool(*b),
            Self::Int(i) => Scalar::Int(*i),
            Self::UInt(u) => Scalar::UInt(*u),
            Self::Double(d) => Scalar::Double(*d),
            Self::String(s) => Scalar::String(s),
        }
    }
}

impl<'a> Scalar<'a> {
    /// A JSON scalar as the interpreter sees it (numbers as `Held::of` converts them); `None`
    /// for an array or an object.
    fn of(value: &'a Value) -> Option<Self> {
        Some(match value {
            Value::Null => Self::Null,
            Value::Bool(b) => Self::Bool(*b),
            Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
                (Some(i), _, _) => Self::Int(i),
                (None, Some(u), _) => Self::UInt(u),
                (None, None, Some(d)) => Self::Double(d),
                (None, None, None) => return None,
            },
            Value::String(s) => Self::String(s),
            Value::Array(_) | Value::Object(_) => return None,
        })
    }

    fn is_bool(&self) -> bool {
        matches!(self, Self::Bool(_))
    }
}

impl Comparison {
    fn of(operator: &str) -> Option<Self> {
        Some(match operator {
            operators::EQUALS => Self::Equal,
            operators::NOT_EQUALS => Self::NotEqual,
            operators::LESS => Self::Less,
            operators::LESS_EQUALS => Self::LessOrEqual,
            operators::GREATER => Self::Greater,
            operators::GREATER_EQUALS => Self::GreaterOrEqual,
            _ => return None,
        })
    }

    /// Two scalars of the same type compared; `None` across types (where CEL's numeric
    /// comparisons and heterogeneous equality have rules of their own), for an order between
    /// booleans or nulls, and for doubles that do not compare (NaN).
    fn of_scalars(self, left: Scalar<'_>, right: Scalar<'_>) -> Option<bool> {
        use std::cmp::Ordering;
        let order = match (left, right) {
            (Scalar::Int(l), Scalar::Int(r)) => l.cmp(&r),
            (Scalar::UInt(l), Scalar::UInt(r)) => l.cmp(&r),
            (Scalar::Double(l), Scalar::Double(r)) => l.partial_cmp(&r)?,
            (Scalar::String(l), Scalar::String(r)) => l.cmp(r),
            (Scalar::Bool(l), Scalar::Bool(r)) if self.is_equality() => l.cmp(&r),
            (Scalar::Null, Scalar::Null) if self.is_equality() => Ordering::Equal,
            _ => return None,
        };
        Some(match self {
            Self::Equal => order == Ordering::Equal,
            Self::NotEqual => order != Ordering::Equal,
            Self::Less => order == Ordering::Less,
            Self::LessOrEqual => order != Ordering::Greater,
            Self::Greater => order == Ordering::Greater,
            Self::GreaterOrEqual => order != Ordering::Less,
        })
    }

    fn is_equality(self) -> bool {
        matches!(self, Self::Equal | Self::NotEqual)
    }
}
