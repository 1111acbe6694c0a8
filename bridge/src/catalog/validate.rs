//! Input validation: each tool's validator, compiled on its first call and kept in a bounded
//! cache ([`Validators`]), and its errors turned into the `parameter_errors` map of a 422, keyed
//! by top-level parameter with one readable message each.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use indexmap::IndexMap;
use otc_mappings::otc::Schema;
use quick_cache::Weighter;
use serde_json::Value;

/// How much schema text the validators kept may have been compiled from. A compiled validator
/// takes about ten times its schema's text (GitHub's 1,223 input schemas: 1.1 MB of text, 11 MB
/// of validators), so this keeps at most about 40 MB of validators: every tool of most APIs, the
/// tools actually called of the largest catalogs.
const CACHE_SCHEMA_BYTES: u64 = 4 << 20;

/// An input schema that is not a valid JSON Schema, in the validator's words (boxed: the
/// validator's error is large, and a `Result` carrying it would be too).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InvalidSchema(Box<jsonschema::ValidationError<'static>>);

/// Compiles an input schema with the options translation checked its patterns against.
pub(crate) fn compile(schema: &Schema) -> Result<jsonschema::Validator, InvalidSchema> {
    otc_mappings::schema::validator_options()
        .build(&schema.to_value())
        .map_err(|err| InvalidSchema(Box::new(err)))
}

/// Validator keys: unique for the life of the process, so a cached validator can never be
/// found under a key that a later schema reuses (an address could be).
static NEXT_KEY: AtomicU64 = AtomicU64::new(0);

/// A key in the validator cache no other schema has.
pub(crate) fn new_key() -> u64 {
    NEXT_KEY.fetch_add(1, Ordering::Relaxed)
}

/// Compiled validators by entry key, least recently used first out once their schemas pass
/// [`CACHE_SCHEMA_BYTES`].
#[derive(Debug)]
pub(crate) struct Validators {
    cache: quick_cache::sync::Cache<u64, Compiled, BySchemaText>,
}

/// A cached validator and the length of the schema text it was compiled from (its weight).
#[derive(Debug, Clone)]
struct Compiled {
    validator: Arc<jsonschema::Validator>,
    schema_bytes: u64,
}

#[derive(Debug, Clone, Copy)]
struct BySchemaText;

impl Weighter<u64, Compiled> for BySchemaText {
    fn weight(&self, _key: &u64, compiled: &Compiled) -> u64 {
        compiled.schema_bytes.max(1)
    }
}

impl Default for Validators {
    fn default() -> Self {
        Self::with_capacity(CACHE_SCHEMA_BYTES)
    }
}

impl Validators {
    /// A cache that keeps validators compiled from at most `schema_bytes` of schema text.
    pub(crate) fn with_capacity(schema_bytes: u64) -> Self {
        // quick_cache sizes its table from an item estimate: one per 2 KB of schema text.
        let items = usize::try_from(schema_bytes / 2048)
            .unwrap_or(usize::MAX)
            .max(16);
        Self {
            cache: quick_cache::sync::Cache::with_weighter(items, schema_bytes, BySchemaText),
        }
    }

    /// The validator of the entry `key`, whose input schema is `schema`: from the cache, or
    /// compiled now. Two first calls at once may both compile; the result is the same.
    pub(crate) fn get(
        &self,
        key: u64,
        schema: &Schema,
    ) -> Result<Arc<jsonschema::Validator>, InvalidSchema> {
        if let Some(compiled) = self.cache.get(&key) {
            return Ok(compiled.validator);
        }
        let validator = Arc::new(compile(schema)?);
        self.cache.insert(
            key,
            Compiled {
                validator: Arc::clone(&validator),
                schema_bytes: schema.len() as u64,
            },
        );
        Ok(validator)
    }
}

/// At most this many errors are reported; the rest are summarised. An input can be made to
/// produce thousands of errors, and the response must stay small.
const MAX_ERRORS: usize = 20;

/// Validates `input`; `Ok` when valid, else the `parameter_errors` map.
pub(crate) fn check(
    validator: &jsonschema::Validator,
    input: &Value,
) -> Result<(), IndexMap<String, Value>> {
    if validator.is_valid(input) {
        return Ok(());
    }
    let mut errors: IndexMap<String, Vec<String>> = IndexMap::new();
    for (n, error) in validator.iter_errors(input).enumerate() {
        if n == MAX_ERRORS {
            errors
                .entry("input".to_owned())
                .or_default()
                .push("more errors were not reported".to_owned());
            break;
        }
        let path = error.instance_path().as_str();
        let (param, rest) = split_pointer(path);
        match (param, error.kind()) {
            (None, jsonschema::error::ValidationErrorKind::Required { property }) => {
                let name = property
                    .as_str()
                    .map_or_else(|| property.to_string(), str::to_owned);
                errors
                    .entry(name)
                    .or_default()
                    .push("is required".to_owned());
            }
            (None, jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected }) => {
                for name in unexpected {
                    errors
                        .entry(name.clone())
                        .or_default()
                        .push("is not a parameter of this tool".to_owned());
                }
            }
            (None, _) => errors
                .entry("input".to_owned())
                .or_default()
                .push(error.to_string()),
            (Some(param), _) => {
                let message = if rest.is_empty() {
                    error.to_string()
                } else {
                    format!("at {rest}: {error}")
                };
                errors.entry(param).or_default().push(message);
            }
        }
    }
    Err(errors
        .into_iter()
        .map(|(k, v)| (k, Value::String(v.join("; "))))
        .collect())
}

/// `/b/c/0` → (`b`, `/c/0`), unescaping the first segment (`~1` → `/`, `~0` → `~`).
fn split_pointer(path: &str) -> (Option<String>, &str) {
    let Some(rest) = path.strip_prefix('/') else {
        return (None, "");
    };
    let (first, tail) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    (Some(first.replace("~1", "/").replace("~0", "~")), tail)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn errors_are_keyed_by_top_level_parameter() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": "number"},
                "b": {"type": "object", "properties": {"c": {"type": "string"}}},
                "x/y": {"type": "integer"},
                "d": {"type": "integer"}
            },
            "required": ["a", "d"],
            "additionalProperties": false
        });
        let v = jsonschema::validator_for(&schema).unwrap();
        assert!(check(&v, &json!({"a": 1, "d": "two"})).is_err());
        let errors = check(&v, &json!({"a": "x", "b": {"c": 5}, "x/y": 1.5, "z": 1})).unwrap_err();
        assert!(
            errors["a"].as_str().unwrap().contains("number"),
            "{errors:?}"
        );
        assert!(
            errors["b"].as_str().unwrap().starts_with("at /c:"),
            "{errors:?}"
        );
        assert!(errors.contains_key("x/y"));
        assert_eq!(errors["d"], "is required");
        assert_eq!(errors["z"], "is not a parameter of this tool");
        assert!(check(&v, &json!({"a": 1, "d": 1})).is_ok());
    }
}
