//! YAML text → JSON value, and the alias budget every YAML text is read under.

use serde_json::{Map, Value};

use super::TextError;

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
pub(super) fn parse_yaml(text: &str) -> Result<Value, TextError> {
    let limit = budget(text);
    let mut count = 0usize;
    serde::de::DeserializeSeed::deserialize(
        JsonFromYaml {
            count: &mut count,
            limit,
        },
        serde_yaml::Deserializer::from_str(text),
    )
    .map_err(|e| refusal(text, count, limit, &e))
}

/// Parses `text` into `T` with serde_yaml itself (its messages name the key path, line and
/// column), after a first pass has counted the nodes its aliases replay without keeping any:
/// serde_yaml counts alias jumps, not what each replays, and a typed parse keeps it all.
pub(super) fn parse_typed<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, TextError> {
    let limit = budget(text);
    let mut count = 0usize;
    serde::de::DeserializeSeed::deserialize(
        CountNodes {
            count: &mut count,
            limit,
        },
        serde_yaml::Deserializer::from_str(text),
    )
    .map_err(|e| refusal(text, count, limit, &e))?;
    serde_yaml::from_str(text).map_err(|e| TextError::Parse {
        format: "YAML",
        message: e.to_string(),
    })
}

/// How many nodes `text` may expand to.
fn budget(text: &str) -> usize {
    text.len().saturating_add(MAX_ALIAS_NODES)
}

/// The error of a pass that stopped at node `count`: the budget's, or the parser's own.
fn refusal(text: &str, count: usize, limit: usize, e: &serde_yaml::Error) -> TextError {
    if count > limit {
        TextError::Aliases {
            limit,
            bytes: text.len(),
        }
    } else {
        TextError::Parse {
            format: "YAML",
            message: e.to_string(),
        }
    }
}

/// Visits every node of a YAML document (aliases replayed), keeping nothing, failing as soon as
/// the count passes `limit`.
struct CountNodes<'c> {
    count: &'c mut usize,
    limit: usize,
}

impl CountNodes<'_> {
    fn tick<E: serde::de::Error>(&mut self) -> Result<(), E> {
        *self.count += 1;
        if *self.count > self.limit {
            return Err(E::custom("alias expansion limit reached"));
        }
        Ok(())
    }

    fn again(&mut self) -> CountNodes<'_> {
        CountNodes {
            count: self.count,
            limit: self.limit,
        }
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for CountNodes<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for CountNodes<'_> {
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
        self.tick()?;
        let (_, variant) = data.variant_seed(std::marker::PhantomData::<serde::de::IgnoredAny>)?;
        serde::de::VariantAccess::newtype_variant_seed(variant, self.again())
    }
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

/// A YAML key as a JSON key: a scalar's text. A mapping or a sequence as a key (`? [a, b]`) has
/// no JSON form and is refused: written as text, a key holding a key holding a key... doubles its
/// escapes at each level (`? ? ? … x`, 30 levels: 2^30 bytes; found by the file property test of
/// issue 25).
fn json_key<E: serde::de::Error>(key: Value) -> Result<String, E> {
    match key {
        Value::String(s) => Ok(s),
        Value::Array(_) | Value::Object(_) => Err(E::custom(
            "a mapping or a sequence as a key (`? …`) has no JSON form",
        )),
        scalar => Ok(scalar.to_string()),
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
            let key = json_key(key)?;
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
