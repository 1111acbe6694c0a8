//! Text → JSON value: JSON or YAML, for the document and for every document its `$ref`s name.
//!
//! Its own module because two steps read text: loading the document (`load`) and bundling the
//! documents its references name (`refs`). Neither imports the other for it. It is also the one
//! place that knows the YAML parser (serde_yaml 0.9 is deprecated upstream; swapping it touches
//! only this file), and the place that bounds YAML alias expansion.

use serde_json::{Map, Value};

use crate::error::MappingError;

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

/// How many nodes YAML aliases may add beyond what the text itself can hold (one node per byte,
/// which no alias-free document reaches). serde_yaml 0.9 bounds nesting depth (128) and the number
/// of alias jumps (100 per event), not the nodes each jump replays: 20,000 aliases of one
/// 20,000-item anchor (293 KB) replay 400 million nodes. Counting first, without building anything,
/// refuses such a document before anything is allocated.
const MAX_ALIAS_NODES: usize = 200_000;

fn parse_yaml(text: &str) -> Result<Value, MappingError> {
    let limit = text.len().saturating_add(MAX_ALIAS_NODES);
    let mut count = 0usize;
    serde::de::DeserializeSeed::deserialize(
        NodeCounter {
            count: &mut count,
            limit,
        },
        serde_yaml::Deserializer::from_str(text),
    )
    .map_err(|e| {
        if count > limit {
            MappingError::Invalid(format!(
                "its YAML aliases expand to more than {limit} nodes (the text is {} bytes); \
                 an alias expansion this large is refused",
                text.len()
            ))
        } else {
            MappingError::Parse {
                format: "YAML",
                message: e.to_string(),
            }
        }
    })?;
    let mut yaml: serde_yaml::Value =
        serde_yaml::from_str(text).map_err(|e| MappingError::Parse {
            format: "YAML",
            message: e.to_string(),
        })?;
    // `<<: *anchor` merge keys appear in hand-written documents.
    yaml.apply_merge().map_err(|e| MappingError::Parse {
        format: "YAML",
        message: e.to_string(),
    })?;
    Ok(yaml_to_json(yaml))
}

/// YAML allows keys that JSON does not (`200:` is an integer key); they become strings.
/// Tags are dropped, non-finite floats become `null`.
fn yaml_to_json(yaml: serde_yaml::Value) -> Value {
    match yaml {
        serde_yaml::Value::Null => Value::Null,
        serde_yaml::Value::Bool(b) => Value::Bool(b),
        serde_yaml::Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                n.as_f64()
                    .and_then(serde_json::Number::from_f64)
                    .map_or(Value::Null, Value::Number)
            }
        }
        serde_yaml::Value::String(s) => Value::String(s),
        serde_yaml::Value::Sequence(items) => {
            Value::Array(items.into_iter().map(yaml_to_json).collect())
        }
        serde_yaml::Value::Mapping(mapping) => {
            let mut out = Map::with_capacity(mapping.len());
            for (key, value) in mapping {
                out.insert(yaml_key(key), yaml_to_json(value));
            }
            Value::Object(out)
        }
        serde_yaml::Value::Tagged(tagged) => yaml_to_json(tagged.value),
    }
}

fn yaml_key(key: serde_yaml::Value) -> String {
    match key {
        serde_yaml::Value::String(s) => s,
        serde_yaml::Value::Null => "null".to_owned(),
        serde_yaml::Value::Bool(b) => b.to_string(),
        serde_yaml::Value::Number(n) => n.to_string(),
        other => match yaml_to_json(other) {
            Value::String(s) => s,
            v => v.to_string(),
        },
    }
}

/// Counts the nodes a YAML document expands to (aliases replayed), building nothing, and fails as
/// soon as the count passes `limit`.
struct NodeCounter<'c> {
    count: &'c mut usize,
    limit: usize,
}

impl NodeCounter<'_> {
    fn tick<E: serde::de::Error>(&mut self) -> Result<(), E> {
        *self.count += 1;
        if *self.count > self.limit {
            return Err(E::custom("alias expansion limit reached"));
        }
        Ok(())
    }

    fn again(&mut self) -> NodeCounter<'_> {
        NodeCounter {
            count: self.count,
            limit: self.limit,
        }
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for NodeCounter<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for NodeCounter<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E: serde::de::Error>(mut self, _: bool) -> Result<(), E> {
        self.tick()
    }
    fn visit_i64<E: serde::de::Error>(mut self, _: i64) -> Result<(), E> {
        self.tick()
    }
    fn visit_u64<E: serde::de::Error>(mut self, _: u64) -> Result<(), E> {
        self.tick()
    }
    fn visit_i128<E: serde::de::Error>(mut self, _: i128) -> Result<(), E> {
        self.tick()
    }
    fn visit_u128<E: serde::de::Error>(mut self, _: u128) -> Result<(), E> {
        self.tick()
    }
    fn visit_f64<E: serde::de::Error>(mut self, _: f64) -> Result<(), E> {
        self.tick()
    }
    fn visit_str<E: serde::de::Error>(mut self, _: &str) -> Result<(), E> {
        self.tick()
    }
    fn visit_unit<E: serde::de::Error>(mut self) -> Result<(), E> {
        self.tick()
    }
    fn visit_none<E: serde::de::Error>(mut self) -> Result<(), E> {
        self.tick()
    }
    fn visit_some<D: serde::Deserializer<'de>>(mut self, d: D) -> Result<(), D::Error> {
        self.tick()?;
        serde::de::DeserializeSeed::deserialize(self, d)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        self.tick()?;
        while seq.next_element_seed(self.again())?.is_some() {}
        Ok(())
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        self.tick()?;
        while map.next_key_seed(self.again())?.is_some() {
            map.next_value_seed(self.again())?;
        }
        Ok(())
    }
    fn visit_enum<A: serde::de::EnumAccess<'de>>(mut self, data: A) -> Result<(), A::Error> {
        // A tagged value (`!tag value`): the tag is the variant, the value its content.
        self.tick()?;
        let (_, variant) = data.variant_seed(std::marker::PhantomData::<serde::de::IgnoredAny>)?;
        serde::de::VariantAccess::newtype_variant_seed(variant, self.again())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
