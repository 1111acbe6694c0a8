//! Classification of a change between two canonical definitions: the top level (description,
//! `destructive`, which schema is which) and the requirements. Schemas are compared in
//! [`super::schema`].
//!
//! Both sides may come from anywhere (a lockfile written by an older release, a hand edit), so
//! nothing here assumes the canonical shape: a part that is not what it should be is compared
//! as a value, and any difference in it is [`RuleId::Unproven`].

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::canonical::{normalize, sorted};
use super::schema;
use super::vocab::{Reasons, Side, show};
use super::{Change, Reason, RuleId};

/// How `new` differs from `old`, two canonical definitions ([`super::canonical`]).
///
/// Identical definitions (in any key order) give an unchanged [`Change`]; anything else gives at
/// least one reason, [`RuleId::Unproven`] when no rule recognises the difference.
pub fn classify(old: &Value, new: &Value) -> Change {
    // Compared in the canonical spelling, so that what the fingerprint does not see (key order,
    // `100.0` for `100`, the order of `required`) is no change here either.
    let (old, new) = (&normalize(old), &normalize(new));
    let mut reasons = Reasons::default();
    match (old.as_object(), new.as_object()) {
        (Some(a), Some(b)) => definition(&mut reasons, a, b),
        _ => reasons.unproven("definition", "the definition is not an object".to_owned()),
    }
    if reasons.is_empty() && old != new {
        reasons.unproven(
            "definition",
            "the definition changed in a way no rule recognises".to_owned(),
        );
    }
    Change::new(reasons.into_vec())
}

fn definition(reasons: &mut Reasons, old: &Map<String, Value>, new: &Map<String, Value>) {
    let keys: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    for key in keys {
        let (a, b) = (old.get(key), new.get(key));
        if a == b {
            continue;
        }
        match key.as_str() {
            "description" => match (a, b) {
                (Some(Value::String(_)), Some(Value::String(_))) => reasons.push(
                    RuleId::DescriptionChanged,
                    "description".to_owned(),
                    "description changed".to_owned(),
                ),
                _ => reasons.unproven("description", "description changed".to_owned()),
            },
            "destructive" => match (a, b) {
                (Some(Value::Bool(false)), Some(Value::Bool(true))) => reasons.push(
                    RuleId::MadeDestructive,
                    "destructive".to_owned(),
                    "the tool became destructive".to_owned(),
                ),
                (Some(Value::Bool(true)), Some(Value::Bool(false))) => reasons.push(
                    RuleId::MadeNonDestructive,
                    "destructive".to_owned(),
                    "the tool is no longer destructive".to_owned(),
                ),
                _ => reasons.unproven("destructive", "`destructive` changed".to_owned()),
            },
            "input_schema" => match (a, b) {
                (Some(a), Some(b)) => {
                    let mut found = Reasons::default();
                    schema::compare(&mut found, Side::Input, a, b);
                    reasons
                        .0
                        .extend(found.0.into_iter().map(|r| hidden(r, new)));
                }
                _ => reasons.unproven("input", "the input schema appeared or vanished".to_owned()),
            },
            // What a hidden input means is read with the input schema (`hidden`): an input that
            // stops being hidden is compared there as the property it becomes again.
            "hidden_inputs" => {}
            "output_schema" => output(reasons, a, b),
            "requirements" => requirements(reasons, a, b),
            other => reasons.unproven(other, format!("`{other}` changed")),
        }
    }
}

/// A top-level input removed from the schema that the new definition hides behind a fixed value
/// is still accepted (and overridden): minor, not a removal.
fn hidden(reason: Reason, new: &Map<String, Value>) -> Reason {
    let Some(name) = reason.path.strip_prefix("input.") else {
        return reason;
    };
    let is_hidden = new
        .get("hidden_inputs")
        .and_then(Value::as_array)
        .is_some_and(|names| names.iter().any(|n| n.as_str() == Some(name)));
    if reason.rule != RuleId::InputRemoved || !is_hidden {
        return reason;
    }
    let message = format!("input `{name}` hidden behind a fixed value (a value sent is ignored)");
    Reason::new(RuleId::InputHidden, reason.path, message)
}

/// `null` (or nothing) is "returns no value"; anything else is a schema.
fn output(reasons: &mut Reasons, old: Option<&Value>, new: Option<&Value>) {
    let schema = |v: Option<&Value>| v.filter(|v| !v.is_null()).cloned();
    match (schema(old), schema(new)) {
        (Some(a), Some(b)) => schema::compare(reasons, Side::Output, &a, &b),
        (None, Some(_)) => reasons.push(
            RuleId::OutputKindChanged,
            "output".to_owned(),
            "the tool now returns a value (it returned nothing)".to_owned(),
        ),
        (Some(_), None) => reasons.push(
            RuleId::OutputKindChanged,
            "output".to_owned(),
            "the tool no longer returns a value".to_owned(),
        ),
        (None, None) => {}
    }
}

/// Requirements: what the caller must put in `context`. More is major, less is minor, any other
/// difference (a detail of an authorization, a field of a newer revision) is unproven.
fn requirements(reasons: &mut Reasons, old: Option<&Value>, new: Option<&Value>) {
    let empty = Map::new();
    let as_map = |v: Option<&Value>| match v {
        None | Some(Value::Null) => Some(empty.clone()),
        Some(Value::Object(map)) => Some(map.clone()),
        Some(_) => None,
    };
    let (Some(a), Some(b)) = (as_map(old), as_map(new)) else {
        reasons.unproven("requirements", "requirements changed".to_owned());
        return;
    };
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for key in keys {
        let (x, y) = (a.get(key), b.get(key));
        if x == y {
            continue;
        }
        match key.as_str() {
            "secrets" => secrets(reasons, x, y),
            "authorization" => authorizations(reasons, x, y),
            "user_id" => match (truthy(x), truthy(y)) {
                (Some(false), Some(true)) => reasons.push(
                    RuleId::RequirementAdded,
                    "requirements.user_id".to_owned(),
                    "`user_id` now required".to_owned(),
                ),
                (Some(true), Some(false)) => reasons.push(
                    RuleId::RequirementRemoved,
                    "requirements.user_id".to_owned(),
                    "`user_id` no longer required".to_owned(),
                ),
                _ => reasons.unproven("requirements.user_id", "`user_id` changed".to_owned()),
            },
            other => reasons.unproven(
                &format!("requirements.{other}"),
                format!("requirement `{other}` changed"),
            ),
        }
    }
}

/// An absent flag is `false`.
fn truthy(v: Option<&Value>) -> Option<bool> {
    match v {
        None | Some(Value::Null) => Some(false),
        Some(Value::Bool(b)) => Some(*b),
        Some(_) => None,
    }
}

/// A list of objects with a string `id`, keyed by it; `None` when it is not one (or repeats an
/// id, which would make "which one changed" a guess).
fn by_id(v: Option<&Value>) -> Option<BTreeMap<&str, &Value>> {
    let items = match v {
        None | Some(Value::Null) => return Some(BTreeMap::new()),
        Some(Value::Array(items)) => items,
        Some(_) => return None,
    };
    let mut map = BTreeMap::new();
    for item in items {
        let id = item.get("id")?.as_str()?;
        if map.insert(id, item).is_some() {
            return None;
        }
    }
    Some(map)
}

fn secrets(reasons: &mut Reasons, old: Option<&Value>, new: Option<&Value>) {
    let (Some(a), Some(b)) = (by_id(old), by_id(new)) else {
        reasons.unproven("requirements.secrets", "secrets changed".to_owned());
        return;
    };
    for id in b.keys().filter(|id| !a.contains_key(*id)) {
        reasons.push(
            RuleId::RequirementAdded,
            format!("requirements.secrets.{id}"),
            format!("secret `{id}` now required"),
        );
    }
    for id in a.keys().filter(|id| !b.contains_key(*id)) {
        reasons.push(
            RuleId::RequirementRemoved,
            format!("requirements.secrets.{id}"),
            format!("secret `{id}` no longer required"),
        );
    }
    for (id, x) in &a {
        if let Some(y) = b.get(id)
            && sorted(x) != sorted(y)
        {
            reasons.unproven(
                &format!("requirements.secrets.{id}"),
                format!("details of secret `{id}` changed"),
            );
        }
    }
}

fn authorizations(reasons: &mut Reasons, old: Option<&Value>, new: Option<&Value>) {
    let (Some(a), Some(b)) = (by_id(old), by_id(new)) else {
        reasons.unproven(
            "requirements.authorization",
            "authorizations changed".to_owned(),
        );
        return;
    };
    for id in b.keys().filter(|id| !a.contains_key(*id)) {
        reasons.push(
            RuleId::RequirementAdded,
            format!("requirements.authorization.{id}"),
            format!("authorization `{id}` now required"),
        );
    }
    for id in a.keys().filter(|id| !b.contains_key(*id)) {
        reasons.push(
            RuleId::RequirementRemoved,
            format!("requirements.authorization.{id}"),
            format!("authorization `{id}` no longer required"),
        );
    }
    for (id, x) in &a {
        if let Some(y) = b.get(id) {
            authorization(reasons, id, x, y);
        }
    }
}

/// One authorization present on both sides: scopes are a set (more is major, fewer minor); any
/// other detail that changed is unproven.
fn authorization(reasons: &mut Reasons, id: &str, old: &Value, new: &Value) {
    let path = format!("requirements.authorization.{id}");
    let (Some(a), Some(b)) = (scopes(old), scopes(new)) else {
        reasons.unproven(&path, format!("scopes of authorization `{id}` changed"));
        return;
    };
    for scope in b.difference(&a) {
        reasons.push(
            RuleId::RequirementAdded,
            path.clone(),
            format!("scope `{scope}` of authorization `{id}` now required"),
        );
    }
    for scope in a.difference(&b) {
        reasons.push(
            RuleId::RequirementRemoved,
            path.clone(),
            format!("scope `{scope}` of authorization `{id}` no longer required"),
        );
    }
    if without_scopes(old) != without_scopes(new) {
        reasons.unproven(
            &path,
            format!(
                "details of authorization `{id}` changed: {} → {}",
                show(&without_scopes(old)),
                show(&without_scopes(new))
            ),
        );
    }
}

/// The scopes of an authorization (none when it has no `oauth2`); `None` when unreadable.
fn scopes(authorization: &Value) -> Option<BTreeSet<&str>> {
    match authorization.get("oauth2").and_then(|o| o.get("scopes")) {
        None | Some(Value::Null) => Some(BTreeSet::new()),
        Some(Value::Array(items)) => items.iter().map(Value::as_str).collect(),
        Some(_) => None,
    }
}

/// The authorization with its scopes (and an `oauth2` left empty by removing them) taken out.
fn without_scopes(authorization: &Value) -> Value {
    let mut value = sorted(authorization);
    if let Some(map) = value.as_object_mut() {
        let drop_oauth2 = match map.get_mut("oauth2") {
            Some(Value::Object(oauth2)) => {
                oauth2.remove("scopes");
                oauth2.is_empty()
            }
            _ => false,
        };
        if drop_oauth2 {
            map.remove("oauth2");
        }
    }
    value
}
