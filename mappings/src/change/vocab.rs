//! The vocabulary of a schema comparison, shared by the structure walk ([`super::schema`]) and
//! the keyword families ([`super::keywords`]): which side of a tool a schema is, which way a
//! change moved, what kind of change it is, where in the schema it is, and the reasons found.

use std::fmt;

use serde_json::Value;

use super::{Reason, RuleId};

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
pub(crate) struct Reasons(pub(crate) Vec<Reason>);

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
    /// How many levels below the root (the walk stops past a limit).
    pub(crate) depth: usize,
}

impl At {
    /// The root of `side`.
    pub(crate) fn root(side: Side) -> Self {
        Self {
            side,
            path: String::new(),
            depth: 0,
        }
    }

    /// A property, an `anyOf[1]` branch, `*` for additional properties.
    pub(crate) fn child(&self, name: &str) -> Self {
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
    pub(crate) fn items(&self) -> Self {
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
