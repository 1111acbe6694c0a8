//! YAML text → JSON value, with the alias budget.

use serde_json::{Map, Value};

use crate::error::MappingError;

/// How many nodes YAML aliases may add beyond what the text itself can hold (one node per byte,
/// which no alias-free document reaches). serde_yaml 0.9 bounds nesting depth (128) and the number
/// of alias jumps (100 per event), not the nodes each jump replays: 20,000 aliases of one
/// 20,000-item anchor (293 KB) replay 400 million nodes. The tree is built node by node with the
/// count checked at each, so such a document is refused before much is allocated.
const MAX_ALIAS_NODES: usize = 200_000;

/// Builds the JSON value straight from the YAML events: no intermediate `serde_yaml::Value` tree
/// (which doubled the peak memory of loading a YAML document), and integers beyond 64 bits (which
/// `serde_yaml::Value` refuses: OpenAI's description has `minimum: -9223372036854776000`) become
/// floats as they would in JSON.
pub(super) fn parse_yaml(text: &str) -> Result<Value, MappingError> {
    let limit = text.len().saturating_add(MAX_ALIAS_NODES);
    let mut count = 0usize;
    serde::de::DeserializeSeed::deserialize(
        JsonFromYaml {
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
    })
}

/// Deserializes one YAML node (aliases replayed) into JSON, counting nodes and failing as soon as
/// the count passes `limit`. YAML allows keys that JSON does not (`200:` is an integer key); they
/// become strings. Tags are dropped, non-finite floats become `null`, and `<<: *anchor` merge keys
/// (hand-written documents use them) are applied: explicit keys win, then earlier merged mappings.
struct JsonFromYaml<'c> {
    count: &'c mut usize,
    limit: usize,
}

impl JsonFromYaml<'_> {
    fn tick<E: serde::de::Error>(&mut self) -> Result<(), E> {
        *self.count += 1;
        if *self.count > self.limit {
            return Err(E::custom("alias expansion limit reached"));
        }
        Ok(())
    }

    fn again(&mut self) -> JsonFromYaml<'_> {
        JsonFromYaml {
            count: self.count,
            limit: self.limit,
        }
    }

    fn leaf<E: serde::de::Error>(mut self, value: Value) -> Result<Value, E> {
        self.tick()?;
        Ok(value)
    }
}

fn float(f: f64) -> Value {
    serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
}

fn json_key(key: Value) -> String {
    match key {
        Value::String(s) => s,
        other => other.to_string(),
    }
}

/// Applies one `<<` value: a mapping, or a sequence of mappings, whose keys are added where absent.
fn merge<E: serde::de::Error>(into: &mut Map<String, Value>, merged: Value) -> Result<(), E> {
    let mappings = match merged {
        Value::Array(items) => items,
        single => vec![single],
    };
    for mapping in mappings {
        let Value::Object(entries) = mapping else {
            return Err(E::custom(
                "expected a mapping or a list of mappings for merging (`<<`)",
            ));
        };
        for (key, value) in entries {
            into.entry(key).or_insert(value);
        }
    }
    Ok(())
}

impl<'de> serde::de::DeserializeSeed<'de> for JsonFromYaml<'_> {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for JsonFromYaml<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E: serde::de::Error>(self, b: bool) -> Result<Value, E> {
        self.leaf(Value::Bool(b))
    }
    fn visit_i64<E: serde::de::Error>(self, i: i64) -> Result<Value, E> {
        self.leaf(Value::from(i))
    }
    fn visit_u64<E: serde::de::Error>(self, u: u64) -> Result<Value, E> {
        self.leaf(Value::from(u))
    }
    fn visit_i128<E: serde::de::Error>(self, i: i128) -> Result<Value, E> {
        let value = i64::try_from(i).map_or_else(|_| float(i as f64), Value::from);
        self.leaf(value)
    }
    fn visit_u128<E: serde::de::Error>(self, u: u128) -> Result<Value, E> {
        let value = u64::try_from(u).map_or_else(|_| float(u as f64), Value::from);
        self.leaf(value)
    }
    fn visit_f64<E: serde::de::Error>(self, f: f64) -> Result<Value, E> {
        self.leaf(float(f))
    }
    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Value, E> {
        self.leaf(Value::String(s.to_owned()))
    }
    fn visit_string<E: serde::de::Error>(self, s: String) -> Result<Value, E> {
        self.leaf(Value::String(s))
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Value, E> {
        self.leaf(Value::Null)
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<Value, E> {
        self.leaf(Value::Null)
    }
    fn visit_some<D: serde::Deserializer<'de>>(mut self, d: D) -> Result<Value, D::Error> {
        self.tick()?;
        serde::de::DeserializeSeed::deserialize(self, d)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(mut self, mut seq: A) -> Result<Value, A::Error> {
        self.tick()?;
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(item) = seq.next_element_seed(self.again())? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(mut self, mut map: A) -> Result<Value, A::Error> {
        self.tick()?;
        let mut out = Map::new();
        let mut merges = Vec::new();
        while let Some(key) = map.next_key_seed(self.again())? {
            let key = json_key(key);
            let value = map.next_value_seed(self.again())?;
            if key == "<<" {
                merges.push(value);
            } else {
                out.insert(key, value);
            }
        }
        for merged in merges {
            merge(&mut out, merged)?;
        }
        Ok(Value::Object(out))
    }
    fn visit_enum<A: serde::de::EnumAccess<'de>>(mut self, data: A) -> Result<Value, A::Error> {
        // A tagged value (`!tag value`): the tag is the variant, the value its content.
        self.tick()?;
        let (_, variant) = data.variant_seed(std::marker::PhantomData::<serde::de::IgnoredAny>)?;
        serde::de::VariantAccess::newtype_variant_seed(variant, self.again())
    }
}
