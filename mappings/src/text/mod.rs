//! Text → JSON value: JSON or YAML, for the document and for every document its `$ref`s name.
//!
//! Its own module because two steps read text: loading the document (`load`) and bundling the
//! documents its references name (`refs`). Neither imports the other for it. It is also the one
//! place that knows the YAML parser (serde_yaml 0.9 is deprecated upstream; swapping it touches
//! only this file), and the place that bounds YAML alias expansion.

mod yaml;

use serde_json::Value;

use crate::error::MappingError;
use yaml::parse_yaml;

/// Parses JSON or YAML text into a JSON value. The one place that knows the YAML parser
/// (serde_yaml 0.9 is deprecated upstream; swapping it touches only this function).
pub(crate) fn parse_text(text: &str) -> Result<Value, MappingError> {
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        match serde_json::from_str::<Value>(trimmed) {
            Ok(value) => return Ok(value),
            // JSON is (nearly) YAML: a "JSON" document with a trailing comma or a comment may
            // still read as YAML. Report the JSON error when YAML fails as well.
            Err(json_err) => {
                return parse_yaml(trimmed).map_err(|_| MappingError::Parse {
                    format: "JSON",
                    message: json_err.to_string(),
                });
            }
        }
    }
    parse_yaml(trimmed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_beyond_64_bits_become_floats() {
        // OpenAI's description: `seed.minimum: -9223372036854776000` (i64::MIN, rounded).
        let v =
            parse_text("minimum: -9223372036854776000\nmaximum: 18446744073709551616\n").unwrap();
        assert_eq!(v["minimum"], serde_json::json!(-9.223372036854776e18));
        assert_eq!(v["maximum"], serde_json::json!(1.8446744073709552e19));
        let v = parse_text("a: -9223372036854775808\nb: 18446744073709551615\n").unwrap();
        assert_eq!(v["a"], serde_json::json!(i64::MIN));
        assert_eq!(v["b"], serde_json::json!(u64::MAX));
    }

    #[test]
    fn yaml_keys_tags_and_merge_keys_become_json() {
        let v = parse_text(
            "base: &base {a: 1, b: 2}\nother: &other {b: 3, c: 4}\n\
             m:\n  <<: [*base, *other]\n  a: 0\n200: ok\ntrue: yes\nt: !custom {x: 1}\n\
             n: .nan\n",
        )
        .unwrap();
        assert_eq!(v["m"], serde_json::json!({"a": 0, "b": 2, "c": 4}));
        assert_eq!(v["200"], "ok");
        assert_eq!(v["true"], "yes");
        assert_eq!(v["t"], serde_json::json!({"x": 1}));
        assert_eq!(v["n"], Value::Null);
        assert!(matches!(
            parse_text("m:\n  <<: 3\n"),
            Err(MappingError::Parse { .. })
        ));
    }

    #[test]
    fn garbage_is_a_parse_error() {
        assert!(matches!(
            parse_text("{\"a\": "),
            Err(MappingError::Parse { .. })
        ));
        assert!(matches!(
            parse_text("a: [b"),
            Err(MappingError::Parse { .. })
        ));
    }
}
