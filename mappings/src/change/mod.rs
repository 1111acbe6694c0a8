//! Versions that mean something (issue 11, DESIGN.md §9): the canonical form of a tool's
//! contract, its fingerprint, and the classification of a change between two contracts as
//! patch, minor or major.
//!
//! The bridge pins what a tool id promises in a lockfile; when an upstream's tool no longer has
//! the locked fingerprint, [`classify`] explains how it changed and how much, and
//! [`next_version`] says which version the changed tool deserves. Everything here is pure and
//! total: definitions come from upstreams and lockfiles, so any JSON is accepted, and what the
//! rules cannot prove compatible is major, never a panic.
//!
//! - [`canonical`] / [`fingerprint`]: one spelling of a contract and its `sha256:` hash.
//! - [`classify`] / [`classify_tools`]: the change between two canonical forms (or two sets of
//!   them), as a [`Change`]: its [`Class`] and one [`Reason`] per observed change.
//! - [`RuleId::rule`]: the rule table every reason comes from; [`markdown_table`] renders it.

mod canonical;
mod classify;
mod keywords;
mod rules;
mod schema;
mod vocab;

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;
use serde_json::Value;

use crate::otc::ToolVersion;

pub use canonical::{canonical, fingerprint, write_sorted, write_sorted_object};
pub use classify::classify;
pub use rules::{Class, Rule, RuleId, markdown_table};

/// One observed change and the rule it falls under.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reason {
    /// The rule; its class is [`Reason::class`].
    pub rule: RuleId,
    /// The class of this change (the rule's class).
    pub class: Class,
    /// Where the change is: `description`, `input.filter.state`, `output.items[].id`,
    /// `requirements`.
    pub path: String,
    /// For people: "input `owner` removed", "enum of input `state` narrowed: `all` removed".
    pub message: String,
}

impl Reason {
    pub(crate) fn new(rule: RuleId, path: String, message: String) -> Self {
        Self {
            rule,
            class: rule.class(),
            path,
            message,
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// How a contract changed: the class of the whole (the highest of its reasons) and the
/// reasons, the most severe first. No reasons means no change.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Change {
    class: Option<Class>,
    reasons: Vec<Reason>,
}

impl Change {
    /// A change made of `reasons`, ordered most severe first (otherwise in the order found).
    pub(crate) fn new(mut reasons: Vec<Reason>) -> Self {
        reasons.sort_by_key(|r| std::cmp::Reverse(r.class));
        Self {
            class: reasons.iter().map(|r| r.class).max(),
            reasons,
        }
    }

    /// The class of the change; `None` when nothing changed.
    pub fn class(&self) -> Option<Class> {
        self.class
    }

    /// Every observed change, the most severe first.
    pub fn reasons(&self) -> &[Reason] {
        &self.reasons
    }

    /// Whether the two contracts are the same.
    pub fn is_unchanged(&self) -> bool {
        self.reasons.is_empty()
    }

    /// The reasons of `class` or above, as one line for a log or an error message:
    /// "input `owner` removed; new required input `org`".
    pub fn summary(&self, at_least: Class) -> String {
        let parts: Vec<&str> = self
            .reasons
            .iter()
            .filter(|r| r.class >= at_least)
            .map(|r| r.message.as_str())
            .collect();
        parts.join("; ")
    }
}

/// The version a tool at `version` gets after a change of `class`, as semver counts:
/// `1.4.2` → `1.4.3` (patch), `1.5.0` (minor), `2.0.0` (major).
pub fn next_version(version: ToolVersion, class: Class) -> ToolVersion {
    let ToolVersion {
        major,
        minor,
        patch,
    } = version;
    // Saturating: a label like 18446744073709551615.0.0 must not panic the bridge.
    match class {
        Class::Patch => ToolVersion::new(major, minor, patch.saturating_add(1)),
        Class::Minor => ToolVersion::new(major, minor.saturating_add(1), 0),
        Class::Major => ToolVersion::new(major.saturating_add(1), 0, 0),
    }
}

/// One tool of a set that was added, removed or changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolChange {
    /// The key the caller gave the tool (e.g. `Github.ReposGet`, without a version).
    pub tool: String,
    /// How it changed; a tool that was added or removed has the one reason saying so.
    pub change: Change,
}

/// The changes between two sets of tools, each keyed by a name the caller chooses (e.g.
/// `Toolkit.Tool`) and holding the tool's canonical form: a new tool is minor, a removed tool
/// major, a changed tool as [`classify`] says. Unchanged tools are left out; the result is in
/// key order.
pub fn classify_tools(
    old: &BTreeMap<String, Value>,
    new: &BTreeMap<String, Value>,
) -> Vec<ToolChange> {
    let mut out = Vec::new();
    let names: std::collections::BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    for name in names {
        let change = match (old.get(name), new.get(name)) {
            (Some(a), Some(b)) => classify(a, b),
            (None, Some(_)) => Change::new(vec![Reason::new(
                RuleId::ToolAdded,
                String::new(),
                format!("new tool `{name}`"),
            )]),
            (Some(_), None) => Change::new(vec![Reason::new(
                RuleId::ToolRemoved,
                String::new(),
                format!("tool `{name}` removed"),
            )]),
            (None, None) => continue,
        };
        if !change.is_unchanged() {
            out.push(ToolChange {
                tool: name.clone(),
                change,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn next_version_follows_semver() {
        let v = ToolVersion::new(1, 4, 2);
        assert_eq!(next_version(v, Class::Patch).to_string(), "1.4.3");
        assert_eq!(next_version(v, Class::Minor).to_string(), "1.5.0");
        assert_eq!(next_version(v, Class::Major).to_string(), "2.0.0");
        let max = ToolVersion::new(u64::MAX, u64::MAX, u64::MAX);
        assert_eq!(next_version(max, Class::Major).major, u64::MAX);
    }

    #[test]
    fn tool_sets_report_added_removed_and_changed_tools_in_order() {
        let def = |d: &str| json!({"description": d, "destructive": false, "input_schema": {"type": "object"}, "output_schema": {}, "requirements": {}});
        let old = BTreeMap::from([
            ("Kit.A".to_owned(), def("a")),
            ("Kit.B".to_owned(), def("b")),
            ("Kit.C".to_owned(), def("c")),
        ]);
        let new = BTreeMap::from([
            ("Kit.A".to_owned(), def("a")),
            ("Kit.C".to_owned(), def("c, reworded")),
            ("Kit.D".to_owned(), def("d")),
        ]);
        let changes = classify_tools(&old, &new);
        let got: Vec<(&str, Option<Class>)> = changes
            .iter()
            .map(|c| (c.tool.as_str(), c.change.class()))
            .collect();
        assert_eq!(
            got,
            [
                ("Kit.B", Some(Class::Major)),
                ("Kit.C", Some(Class::Patch)),
                ("Kit.D", Some(Class::Minor)),
            ]
        );
        assert_eq!(
            changes[0].change.summary(Class::Patch),
            "tool `Kit.B` removed"
        );
    }

    #[test]
    fn an_input_hidden_behind_a_fixed_value_is_minor_and_one_removed_major() {
        let def = |properties: serde_json::Value, hidden: &[&str]| {
            let mut def = json!({"description": "d", "destructive": false,
                "input_schema": {"type": "object", "properties": properties, "required": ["id"]},
                "output_schema": null, "requirements": {}});
            if !hidden.is_empty() {
                def["hidden_inputs"] = json!(hidden);
                def["input_schema"]["required"] = json!([]);
            }
            def
        };
        let before = def(json!({"id": {"type": "integer"}, "q": {}}), &[]);
        let hidden = classify(&before, &def(json!({"q": {}}), &["id"]));
        assert_eq!(hidden.class(), Some(Class::Minor), "{hidden:?}");
        assert_eq!(hidden.reasons[0].rule, RuleId::InputHidden);
        // Hidden, then hidden no more and required again: a client of the hidden form does not
        // send it.
        let shown = classify(&def(json!({"q": {}}), &["id"]), &before);
        assert_eq!(shown.class(), Some(Class::Major), "{shown:?}");
        // Another input removed alongside stays a removal.
        let both = classify(&before, &def(json!({}), &["id"]));
        assert_eq!(both.class(), Some(Class::Major), "{both:?}");
    }
}
