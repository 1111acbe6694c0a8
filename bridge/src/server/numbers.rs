//! Numbers that would not survive parsing (issue 8, defect 13).
//!
//! serde_json (without `arbitrary_precision`, which rmcp's untagged enums cannot live with)
//! holds a number as `u64`, `i64` or `f64`. An integer past 64 bits becomes the nearest double
//! (2^64+1 → 1.8446744073709552e19) and a decimal past a double's range underflows to 0.0
//! (`1e-400`): forwarding those would send the tool a different number than the caller wrote.
//! Such numbers are refused with a 422 naming the parameter.
//!
//! Only a parsed input holding a float can have lost anything (integers that fit are exact), so
//! the raw body is read a second time only then, with struson, which hands out each number's
//! literal text.

use indexmap::IndexMap;
use serde_json::Value;
use struson::reader::{JsonReader, JsonStreamReader, ReaderSettings, ValueType};

/// The longest literal quoted back in an error.
const MAX_QUOTED: usize = 40;

/// Whether `value` holds a number that serde_json stored as a float.
pub(super) fn has_float(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.is_f64(),
        Value::Array(items) => items.iter().any(has_float),
        Value::Object(map) => map.values().any(has_float),
        _ => false,
    }
}

/// The call's input parameters holding a number that cannot be represented exactly, with a
/// message each. `flat` is true when the input is at `/input`, false when at `/request/input`.
pub(super) fn inexact(body: &[u8], flat: bool) -> IndexMap<String, Value> {
    let prefix: &[&str] = if flat {
        &["input"]
    } else {
        &["request", "input"]
    };
    // struson's own number restriction would refuse exactly the literals we want to read.
    let settings = ReaderSettings {
        restrict_number_values: false,
        track_path: false,
        ..ReaderSettings::default()
    };
    let mut reader = JsonStreamReader::new_custom(body, settings);
    let mut path = Vec::new();
    let mut found = IndexMap::new();
    // The body already parsed as JSON; a reader error here (e.g. a literal longer than struson
    // accepts) is reported for the parameter it occurred in.
    if let Err(err) = walk(&mut reader, &mut path, prefix, &mut found)
        && let Some(param) = parameter(&path, prefix)
    {
        found
            .entry(param)
            .or_insert_with(|| Value::String(format!("cannot be read: {err}")));
    }
    found
}

fn walk(
    reader: &mut JsonStreamReader<&[u8]>,
    path: &mut Vec<String>,
    prefix: &[&str],
    found: &mut IndexMap<String, Value>,
) -> Result<(), struson::reader::ReaderError> {
    match reader.peek()? {
        ValueType::Object => {
            reader.begin_object()?;
            while reader.has_next()? {
                path.push(reader.next_name_owned()?);
                walk(reader, path, prefix, found)?;
                path.pop();
            }
            reader.end_object()
        }
        ValueType::Array => {
            reader.begin_array()?;
            let mut index = 0usize;
            while reader.has_next()? {
                path.push(index.to_string());
                walk(reader, path, prefix, found)?;
                path.pop();
                index += 1;
            }
            reader.end_array()
        }
        ValueType::Number => {
            let literal = reader.next_number_as_str()?;
            if let Some(why) = inexact_reason(literal)
                && let Some(param) = parameter(path, prefix)
            {
                let shown = if literal.len() > MAX_QUOTED {
                    format!("{}…", &literal[..MAX_QUOTED])
                } else {
                    literal.to_owned()
                };
                found.entry(param).or_insert_with(|| {
                    Value::String(format!(
                        "the number {shown} cannot be represented exactly: {why}; send it as a string if the tool accepts one"
                    ))
                });
            }
            Ok(())
        }
        ValueType::String | ValueType::Boolean | ValueType::Null => reader.skip_value(),
    }
}

/// The top-level input parameter `path` is in, when it is inside the input.
fn parameter(path: &[String], prefix: &[&str]) -> Option<String> {
    let inside = path.len() > prefix.len() && path.iter().zip(prefix).all(|(a, b)| a == b);
    inside.then(|| path[prefix.len()].clone())
}

/// Why a JSON number literal does not survive as `u64`/`i64`/`f64`, or `None` when it does
/// (up to a double's usual rounding of decimals, which is what JSON numbers mean).
fn inexact_reason(literal: &str) -> Option<&'static str> {
    let integer = !literal.contains(['.', 'e', 'E']);
    if integer {
        return (literal.parse::<u64>().is_err() && literal.parse::<i64>().is_err())
            .then_some("integers must fit in 64 bits");
    }
    let value: f64 = literal.parse().ok()?;
    if value.is_infinite() {
        return Some("it is beyond the range of a double");
    }
    let mantissa = literal.split(['e', 'E']).next().unwrap_or(literal);
    let nonzero = mantissa.bytes().any(|b| (b'1'..=b'9').contains(&b));
    (value == 0.0 && nonzero).then_some("it is too small for a double and would become 0")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_8_literals_that_do_not_survive() {
        assert_eq!(inexact_reason("18446744073709551615"), None);
        assert_eq!(inexact_reason("-9223372036854775808"), None);
        assert!(inexact_reason("18446744073709551617").is_some());
        assert!(inexact_reason("-9223372036854775809").is_some());
        assert!(inexact_reason("1e-400").is_some());
        assert_eq!(inexact_reason("0.0e-400"), None);
        assert_eq!(inexact_reason("0.1"), None);
        assert_eq!(inexact_reason("1e300"), None);
        assert!(inexact_reason("1e400").is_some());
    }

    #[test]
    fn issue_8_inexact_numbers_are_named_by_parameter() {
        let body = br#"{"request":{"tool_id":"A.B","context":{"n":1e-400},"input":{"a":1.5,"b":{"c":[18446744073709551617]},"d":"1e-400"}}}"#;
        let found = inexact(body, false);
        assert_eq!(found.keys().collect::<Vec<_>>(), ["b"]);
        let body = br#"{"tool_id":"A.B","input":{"x":1e-400}}"#;
        assert!(inexact(body, true).contains_key("x"));
    }
}
