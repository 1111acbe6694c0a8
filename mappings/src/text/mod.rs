//! Text → values: JSON or YAML, read under the bounds every text is read under, whoever wrote it.
//!
//! The one place that knows the parsers (serde_yaml 0.9 is deprecated upstream; swapping it
//! touches only this module), and so the one place that bounds what a hostile text can make them
//! do. Two steps read OpenAPI text (loading the document, bundling the documents its `$ref`s name)
//! and the bridge reads its configuration, host files, lockfiles and `diff` sides: all of them
//! parse here. Every parse is bounded the same way:
//! - **depth**: a scan of the bytes refuses nesting past [`MAX_DEPTH`] before a parser builds
//!   anything (`depth`);
//! - **aliases**: a YAML text may expand to its own size plus 200,000 nodes, counted node by node
//!   while they are replayed (`yaml`).
//!
//! The size of a text is bounded by whoever read it (a file: `otc_adapters::file`; an HTTP body:
//! the OpenAPI loader).

mod depth;
mod yaml;

use serde_json::Value;

use crate::error::MappingError;
pub use depth::MAX_DEPTH;

/// Why a text was not read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TextError {
    /// It nests deeper than [`MAX_DEPTH`]; found by the scan, before parsing.
    #[error(
        "it nests more than {limit} levels deep (at line {line}); text nested this deeply is \
         refused before it is parsed"
    )]
    TooDeep {
        /// [`MAX_DEPTH`].
        limit: usize,
        /// The first line past it, from 1.
        line: usize,
    },
    /// Its YAML aliases expand to more nodes than the budget.
    #[error(
        "its YAML aliases expand to more than {limit} nodes (the text is {bytes} bytes); an alias \
         expansion this large is refused"
    )]
    Aliases {
        /// The budget: the text's size plus 200,000.
        limit: usize,
        /// The text's size.
        bytes: usize,
    },
    /// The parser refused it.
    #[error("{message}")]
    Parse {
        /// `JSON` or `YAML`.
        format: &'static str,
        /// The parser's message, with line and column (and key path, for a typed parse).
        message: String,
    },
}

/// How deep `text` nests, as the depth scan counts (about one level more than a parser would
/// build); `TooDeep` past [`MAX_DEPTH`].
pub fn nesting_depth(text: &str) -> Result<usize, TextError> {
    depth::measure(text, MAX_DEPTH).map_err(|too_deep| TextError::TooDeep {
        limit: MAX_DEPTH,
        line: too_deep.line,
    })
}

/// Parses JSON or YAML text into a JSON value: JSON when it looks like JSON (then YAML, which
/// reads JSON with a trailing comma or a comment), else YAML.
pub fn parse_value(text: &str) -> Result<Value, TextError> {
    // JSON that serde_json reads needs no depth scan: serde_json refuses more than 128 levels,
    // and the scan counts a JSON text (one BOM and JSON's blanks before it, as here) as its
    // brackets plus one, so it would pass. The scan is a pass over every byte: on 300
    // documents it was a twentieth of start-up. Any other text, and JSON that does not read,
    // takes the path below, scan first, as before.
    let json = text
        .strip_prefix('\u{feff}')
        .unwrap_or(text)
        .trim_start_matches([' ', '\t', '\n', '\r']);
    if json.starts_with(['{', '['])
        && let Ok(value) = serde_json::from_str::<Value>(json)
    {
        return Ok(value);
    }
    nesting_depth(text)?;
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        return match serde_json::from_str::<Value>(trimmed) {
            Ok(value) => Ok(value),
            // JSON is (nearly) YAML: a "JSON" document with a trailing comma or a comment may
            // still read as YAML. Report the JSON error when YAML fails as well.
            Err(json_err) => yaml::parse_yaml(trimmed).map_err(|yaml_err| match yaml_err {
                TextError::Parse { .. } => TextError::Parse {
                    format: "JSON",
                    message: json_err.to_string(),
                },
                refused => refused,
            }),
        };
    }
    yaml::parse_yaml(trimmed)
}

/// Parses YAML text into `T` (a configuration): serde_yaml's messages, which name the key path,
/// line and column, under the depth and alias bounds.
pub fn parse_yaml<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, TextError> {
    nesting_depth(text)?;
    yaml::parse_typed(text)
}

/// Parses JSON text into `T` (a lockfile) under the depth bound.
pub fn parse_json<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, TextError> {
    nesting_depth(text)?;
    serde_json::from_str(text).map_err(|e| TextError::Parse {
        format: "JSON",
        message: e.to_string(),
    })
}

/// An `io::Write` that only counts what is written to it: a text's size without holding it
/// (the audit trail's byte counts, the evaluation's `GET /tools` size).
#[derive(Debug, Default, Clone, Copy)]
pub struct ByteCount(pub usize);

impl std::io::Write for ByteCount {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0 += bytes.len();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The length of `value`'s compact JSON, counted as it is written, never held (0 when it cannot
/// be written). A 5 MB answer counted this way costs no copy of it.
pub fn json_len(value: &impl serde::Serialize) -> usize {
    let mut count = ByteCount::default();
    serde_json::to_writer(&mut count, value).map_or(0, |()| count.0)
}

/// [`parse_value`], for the mapper: a text that cannot be read is an unusable document.
pub(crate) fn parse_text(text: &str) -> Result<Value, MappingError> {
    parse_value(text).map_err(|e| match e {
        TextError::Parse { format, message } => MappingError::Parse { format, message },
        refused => MappingError::Invalid(refused.to_string()),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn json_len_is_the_length_of_the_compact_json() {
        for value in [
            serde_json::json!({"a": [1, 2.5, null], "b": "é \"quoted\" \n", "": {}}),
            serde_json::json!("🦀"),
            serde_json::json!([]),
        ] {
            assert_eq!(
                super::json_len(&value),
                serde_json::to_vec(&value).unwrap().len()
            );
        }
    }

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
    fn issue_25_collections_as_keys_are_refused() {
        // Each level of key-in-a-key would double the escapes of the one below.
        let text = format!("a:\n{}x\n", "? ".repeat(60));
        let err = parse_text(&text).unwrap_err();
        assert!(err.to_string().contains("as a key"), "{err}");
        assert!(parse_text("? [a, b]\n: c\n").is_err());
        assert_eq!(parse_text("1: a\nnull: b\n").unwrap()["null"], "b");
    }

    /// JSON that serde_json reads skips the scan (issue 23); what it does not read is scanned
    /// and refused as before, so the answers are the scan's.
    #[test]
    fn issue_23_json_skips_the_depth_scan_with_the_same_answers() {
        for depth in [1, 127] {
            let json = format!("\u{feff} \r\n\t{}1{}", "[".repeat(depth), "]".repeat(depth));
            let scanned = nesting_depth(&json).unwrap();
            assert_eq!(scanned, depth + 1);
            assert!(scanned < MAX_DEPTH);
            assert!(parse_value(&json).is_ok());
        }
        let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        assert!(matches!(
            parse_value(&deep),
            Err(TextError::TooDeep {
                limit: MAX_DEPTH,
                ..
            })
        ));
        let past_the_parser = format!("{}1{}", "[".repeat(140), "]".repeat(140));
        assert!(matches!(
            parse_value(&past_the_parser),
            Err(TextError::Parse { format: "JSON", .. })
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
