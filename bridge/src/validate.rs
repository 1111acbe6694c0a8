//! Input validation: the tool's precompiled validator, and its errors turned into the
//! `parameter_errors` map of a 422, keyed by top-level parameter with one readable message each.

use indexmap::IndexMap;
use serde_json::Value;

/// At most this many errors are reported; the rest are summarised. An input can be made to
/// produce thousands of errors, and the response must stay small.
const MAX_ERRORS: usize = 20;

/// Validates `input`; `Ok` when valid, else the `parameter_errors` map.
pub fn check(
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
