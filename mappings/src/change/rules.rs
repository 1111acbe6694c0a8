//! The rules of change classification, as one table: every reason the classifier gives names
//! one [`RuleId`], and its class comes from [`RuleId::rule`], never from the code that noticed
//! the change. [`markdown_table`] renders the same table for the README, so what users read is
//! what the code applies.
//!
//! Direction matters. Inputs are what callers send, so a schema that accepts more is compatible
//! (minor) and one that accepts less breaks someone (major). Outputs are what callers receive,
//! so the reverse holds: an output that may take a new type or enum value can surprise a caller
//! (major), one that takes fewer cannot (minor). New output *properties* are the exception the
//! issue asks for: callers are expected to ignore properties they do not know.

use std::fmt::Write as _;

use serde::Serialize;

/// A change class, ordered as semver orders them: `Patch < Minor < Major`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// Text only: nothing a program could rely on changed.
    Patch,
    /// Backward compatible: every call that worked still works, every value still fits.
    Minor,
    /// May break a caller, or could not be proved compatible.
    Major,
}

impl Class {
    /// `patch`, `minor` or `major`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Patch => "patch",
            Self::Minor => "minor",
            Self::Major => "major",
        }
    }
}

impl std::fmt::Display for Class {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One row of the rule table: what changed, and the class that change gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// The rule's stable name (`input_removed`), as logs and `diff` print it.
    pub name: &'static str,
    /// The class of a change this rule covers.
    pub class: Class,
    /// What the rule covers, in one line (Markdown).
    pub doc: &'static str,
}

/// Which rule a reason was given under. The order is the table's order: by class, then topic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RuleId {
    /// See [`RuleId::rule`].
    DescriptionChanged,
    /// See [`RuleId::rule`].
    SchemaTextChanged,
    /// See [`RuleId::rule`].
    EquivalentForm,
    /// See [`RuleId::rule`].
    ToolAdded,
    /// See [`RuleId::rule`].
    InputAdded,
    /// See [`RuleId::rule`].
    InputMadeOptional,
    /// See [`RuleId::rule`].
    InputTypeWidened,
    /// See [`RuleId::rule`].
    InputEnumWidened,
    /// See [`RuleId::rule`].
    InputConstraintRelaxed,
    /// See [`RuleId::rule`].
    OutputPropertyAdded,
    /// See [`RuleId::rule`].
    OutputMadeRequired,
    /// See [`RuleId::rule`].
    OutputTypeNarrowed,
    /// See [`RuleId::rule`].
    OutputEnumNarrowed,
    /// See [`RuleId::rule`].
    OutputConstraintTightened,
    /// See [`RuleId::rule`].
    RequirementRemoved,
    /// See [`RuleId::rule`].
    MadeNonDestructive,
    /// See [`RuleId::rule`].
    InputHidden,
    /// See [`RuleId::rule`].
    ToolRemoved,
    /// See [`RuleId::rule`].
    InputRemoved,
    /// See [`RuleId::rule`].
    InputRequiredAdded,
    /// See [`RuleId::rule`].
    InputMadeRequired,
    /// See [`RuleId::rule`].
    InputTypeNarrowed,
    /// See [`RuleId::rule`].
    InputEnumNarrowed,
    /// See [`RuleId::rule`].
    InputConstraintTightened,
    /// See [`RuleId::rule`].
    InputDefaultChanged,
    /// See [`RuleId::rule`].
    OutputPropertyRemoved,
    /// See [`RuleId::rule`].
    OutputMadeOptional,
    /// See [`RuleId::rule`].
    OutputTypeWidened,
    /// See [`RuleId::rule`].
    OutputEnumWidened,
    /// See [`RuleId::rule`].
    OutputConstraintRelaxed,
    /// See [`RuleId::rule`].
    OutputKindChanged,
    /// See [`RuleId::rule`].
    RequirementAdded,
    /// See [`RuleId::rule`].
    MadeDestructive,
    /// See [`RuleId::rule`].
    Unproven,
}

impl RuleId {
    /// Every rule, in table order.
    pub const ALL: [Self; 34] = [
        Self::DescriptionChanged,
        Self::SchemaTextChanged,
        Self::EquivalentForm,
        Self::ToolAdded,
        Self::InputAdded,
        Self::InputMadeOptional,
        Self::InputTypeWidened,
        Self::InputEnumWidened,
        Self::InputConstraintRelaxed,
        Self::OutputPropertyAdded,
        Self::OutputMadeRequired,
        Self::OutputTypeNarrowed,
        Self::OutputEnumNarrowed,
        Self::OutputConstraintTightened,
        Self::RequirementRemoved,
        Self::MadeNonDestructive,
        Self::InputHidden,
        Self::ToolRemoved,
        Self::InputRemoved,
        Self::InputRequiredAdded,
        Self::InputMadeRequired,
        Self::InputTypeNarrowed,
        Self::InputEnumNarrowed,
        Self::InputConstraintTightened,
        Self::InputDefaultChanged,
        Self::OutputPropertyRemoved,
        Self::OutputMadeOptional,
        Self::OutputTypeWidened,
        Self::OutputEnumWidened,
        Self::OutputConstraintRelaxed,
        Self::OutputKindChanged,
        Self::RequirementAdded,
        Self::MadeDestructive,
        Self::Unproven,
    ];

    /// The class of a change under this rule.
    pub const fn class(self) -> Class {
        self.rule().class
    }

    /// THE rule table: one row per rule, exhaustive by construction (a new rule does not
    /// compile until it has its row).
    pub const fn rule(self) -> Rule {
        use Class::{Major, Minor, Patch};
        let (name, class, doc) = match self {
            Self::DescriptionChanged => (
                "description_changed",
                Patch,
                "The tool's description changed (for an MCP tool it also carries the title and the annotation hints).",
            ),
            Self::SchemaTextChanged => (
                "schema_text_changed",
                Patch,
                "Text inside a schema changed: `title`, `description`, `examples`, `example`, `$comment`, `deprecated`, or an output's `default`.",
            ),
            Self::EquivalentForm => (
                "equivalent_form",
                Patch,
                "A schema says the same in another form: enum values reordered, `type: \"string\"` ↔ `[\"string\"]`.",
            ),
            Self::ToolAdded => ("tool_added", Minor, "A new tool."),
            Self::InputAdded => ("input_added", Minor, "A new optional input (at any depth)."),
            Self::InputMadeOptional => (
                "input_made_optional",
                Minor,
                "A required input became optional.",
            ),
            Self::InputTypeWidened => (
                "input_type_widened",
                Minor,
                "An input accepts more types: `integer` → `number`, a type added to a list, `type` dropped.",
            ),
            Self::InputEnumWidened => (
                "input_enum_widened",
                Minor,
                "An input's `enum`/`const` gained values or was dropped.",
            ),
            Self::InputConstraintRelaxed => (
                "input_constraint_relaxed",
                Minor,
                "An input constraint relaxed or dropped: larger `max*`, smaller `min*`, no `pattern`/`format`/`uniqueItems`, a divisor of `multipleOf`, `additionalProperties` allowed, an `anyOf` branch added, an `allOf` branch dropped.",
            ),
            Self::OutputPropertyAdded => (
                "output_property_added",
                Minor,
                "An output may contain a new property (declared, or allowed by `additionalProperties`).",
            ),
            Self::OutputMadeRequired => (
                "output_made_required",
                Minor,
                "An output property is now always present.",
            ),
            Self::OutputTypeNarrowed => (
                "output_type_narrowed",
                Minor,
                "An output takes fewer types: `number` → `integer`, `null` dropped, a `type` where there was none.",
            ),
            Self::OutputEnumNarrowed => (
                "output_enum_narrowed",
                Minor,
                "An output's `enum`/`const` lost values, or one was added.",
            ),
            Self::OutputConstraintTightened => (
                "output_constraint_tightened",
                Minor,
                "An output constraint tightened or added (the reverse of relaxed).",
            ),
            Self::RequirementRemoved => (
                "requirement_removed",
                Minor,
                "A secret, authorization, scope or `user_id` is no longer required.",
            ),
            Self::MadeNonDestructive => (
                "made_non_destructive",
                Minor,
                "The tool is no longer destructive (an MCP tool now `readOnlyHint: true` or `destructiveHint: false`).",
            ),
            Self::InputHidden => (
                "input_hidden",
                Minor,
                "An input hidden by a transform behind a fixed value: no longer served, but a value a caller sends is still accepted (and overridden).",
            ),
            Self::ToolRemoved => ("tool_removed", Major, "A tool removed."),
            Self::InputRemoved => (
                "input_removed",
                Major,
                "An input removed (a renamed input is one removed and one added).",
            ),
            Self::InputRequiredAdded => ("input_required_added", Major, "A new required input."),
            Self::InputMadeRequired => (
                "input_made_required",
                Major,
                "An optional input became required.",
            ),
            Self::InputTypeNarrowed => (
                "input_type_narrowed",
                Major,
                "An input accepts fewer types (`number` → `integer`, a type dropped, a `type` where there was none) or another type.",
            ),
            Self::InputEnumNarrowed => (
                "input_enum_narrowed",
                Major,
                "An input's `enum`/`const` lost values, or one was added.",
            ),
            Self::InputConstraintTightened => (
                "input_constraint_tightened",
                Major,
                "An input constraint tightened, added, or changed where no order is known (`pattern`, `format`).",
            ),
            Self::InputDefaultChanged => (
                "input_default_changed",
                Major,
                "An input's `default` added, removed or changed: the bridge applies defaults, so an omitted input now means something else.",
            ),
            Self::OutputPropertyRemoved => (
                "output_property_removed",
                Major,
                "An output property removed.",
            ),
            Self::OutputMadeOptional => (
                "output_made_optional",
                Major,
                "An output property is no longer always present.",
            ),
            Self::OutputTypeWidened => (
                "output_type_widened",
                Major,
                "An output may take more types (`integer` → `number`, `null` added, `type` dropped) or another type.",
            ),
            Self::OutputEnumWidened => (
                "output_enum_widened",
                Major,
                "An output's `enum`/`const` gained values or was dropped.",
            ),
            Self::OutputConstraintRelaxed => (
                "output_constraint_relaxed",
                Major,
                "An output constraint relaxed, dropped, or changed where no order is known.",
            ),
            Self::OutputKindChanged => (
                "output_kind_changed",
                Major,
                "The tool started or stopped returning a value (`output_schema` null on one side).",
            ),
            Self::RequirementAdded => (
                "requirement_added",
                Major,
                "A new secret, authorization or scope is required, or `user_id` became required.",
            ),
            Self::MadeDestructive => (
                "made_destructive",
                Major,
                "The tool became destructive (an MCP tool lost `readOnlyHint: true`).",
            ),
            Self::Unproven => (
                "unproven",
                Major,
                "Anything else: an unknown keyword, `oneOf`/`not`/`if` restructured, a changed requirement detail. Not provably compatible.",
            ),
        };
        Rule { name, class, doc }
    }
}

impl std::fmt::Display for RuleId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.rule().name)
    }
}

/// The rule table as Markdown (`| Rule | Class | Change |`), in table order: what the README
/// shows, generated from the code that applies it.
pub fn markdown_table() -> String {
    let mut out = String::from("| Rule | Class | Change |\n| --- | --- | --- |\n");
    for id in RuleId::ALL {
        let rule = id.rule();
        // Writing to a String cannot fail.
        let _ = writeln!(
            out,
            "| `{}` | {} | {} |",
            rule.name,
            rule.class,
            rule.doc.replace('|', "\\|")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn every_rule_is_listed_once_in_class_order() {
        let names: HashSet<_> = RuleId::ALL.iter().map(|id| id.rule().name).collect();
        assert_eq!(names.len(), RuleId::ALL.len(), "names are unique");
        let ids: HashSet<_> = RuleId::ALL.iter().collect();
        assert_eq!(ids.len(), RuleId::ALL.len(), "ids are unique");
        assert!(
            RuleId::ALL.windows(2).all(|w| w[0] < w[1]),
            "declaration order"
        );
        assert!(
            RuleId::ALL.windows(2).all(|w| w[0].class() <= w[1].class()),
            "table order is class order"
        );
        assert_eq!(RuleId::ALL.last(), Some(&RuleId::Unproven));
    }

    #[test]
    fn class_order_is_semver_order() {
        assert!(Class::Patch < Class::Minor && Class::Minor < Class::Major);
        assert_eq!(Class::Major.to_string(), "major");
    }
}
