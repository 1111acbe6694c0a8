//! References: following `$ref` chains for non-schema objects (parameters, request bodies,
//! responses, security schemes, path items), and bundling external documents into the root.
//!
//! **Why bundle.** `crate::schema::Inliner` resolves local references (`#/…`) only. Rather than
//! teach every reader about other files, every external reference (`pet.yaml#/Pet`,
//! `https://…/common.json#/Error`) is fetched once through the caller's [`RefFetcher`], the part it
//! names is copied under `/x-otc-bundled/<n>` of the root, and the reference is rewritten to point
//! there. References inside the copied part are rewritten the same way, relative to the document
//! they came from (a local `#/a` in `pet.yaml` means `pet.yaml#/a`). After bundling, the document
//! is self-contained and everything downstream handles local references only.
//!
//! Nothing here does I/O: the fetcher does. Remote (`http(s)`) documents are fetched only when the
//! options allow it. A reference that cannot be fetched is left as it is; whoever reads it later
//! reports it (an unresolvable schema becomes `{}`, an unresolvable parameter skips its operation).

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::error::{Diagnostic, Severity};
use crate::openapi::text::parse_text;
use crate::pointer::{self, local_target};
use crate::schema::walk;

/// Supplies the text of external documents; the mapper stays I/O-free. `uri` is already resolved
/// to an absolute file path or URL against [`MapOptions::base_uri`](crate::openapi::MapOptions::base_uri).
pub trait RefFetcher {
    /// The text of the document at `uri`, or why it cannot be had.
    fn fetch(&self, uri: &str) -> Result<String, String>;
}

/// A fetcher for documents without external refs (every fetch fails with a clear message).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoFetch;

impl RefFetcher for NoFetch {
    fn fetch(&self, uri: &str) -> Result<String, String> {
        Err(format!(
            "external documents are not available here (no fetcher configured for '{uri}')"
        ))
    }
}

/// How many `$ref` hops a chain may take before it is considered circular.
const MAX_CHAIN: usize = 32;

/// The root key external parts are copied under.
pub(crate) const BUNDLE_KEY: &str = "x-otc-bundled";

/// Follows `value`'s `$ref` chain (local references only) to the object it names.
pub(crate) fn chase<'v>(root: &'v Value, value: &'v Value) -> Result<&'v Value, String> {
    let mut current = value;
    for _ in 0..MAX_CHAIN {
        let Some(reference) = current.get("$ref") else {
            return Ok(current);
        };
        let Some(reference) = reference.as_str() else {
            return Err("'$ref' is not a string".to_owned());
        };
        current = local_target(root, reference)
            .ok_or_else(|| format!("reference '{reference}' cannot be resolved"))?;
    }
    Err("reference chain is too long or circular".to_owned())
}

/// Copies every externally referenced part into the root and rewrites the references (see the
/// module doc). `base` is where the root came from.
pub(crate) fn bundle(
    root: &mut Value,
    base: Option<&str>,
    allow_remote: bool,
    fetcher: &dyn RefFetcher,
    diagnostics: &mut Vec<Diagnostic>,
) {
    if !has_external_refs(root) {
        return;
    }
    let mut bundler = Bundler {
        root_uri: base.map(str::to_owned),
        allow_remote,
        fetcher,
        docs: HashMap::new(),
        keys: HashMap::new(),
        parts: Vec::new(),
        diagnostics,
    };
    bundler.rewrite(root, base, false);
    let parts = std::mem::take(&mut bundler.parts);
    if let Value::Object(map) = root {
        let bundled: Map<String, Value> = parts.into_iter().collect();
        map.insert(BUNDLE_KEY.to_owned(), Value::Object(bundled));
    }
}

fn has_external_refs(value: &Value) -> bool {
    match value {
        Value::Object(map) => {
            map.get("$ref")
                .and_then(Value::as_str)
                .is_some_and(|r| !r.starts_with('#'))
                || walk::subschemas(map).any(has_external_refs)
        }
        Value::Array(items) => items.iter().any(has_external_refs),
        _ => false,
    }
}

struct Bundler<'a> {
    root_uri: Option<String>,
    allow_remote: bool,
    fetcher: &'a dyn RefFetcher,
    /// Fetched and parsed documents by absolute URI; `None` when fetching or parsing failed.
    docs: HashMap<String, Option<Value>>,
    /// `(uri, fragment)` → the local reference that now stands for it.
    keys: HashMap<(String, String), String>,
    /// Bundled parts, in the order they were first referenced.
    parts: Vec<(String, Value)>,
    diagnostics: &'a mut Vec<Diagnostic>,
}

impl Bundler<'_> {
    /// Rewrites references in `value`, which comes from the document at `base`. In an external
    /// document (`external`), local references are relative to that document, so they are
    /// rewritten too.
    fn rewrite(&mut self, value: &mut Value, base: Option<&str>, external: bool) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(reference)) = map.get("$ref") {
                    let reference = reference.clone();
                    if let Some(local) = self.localise(&reference, base, external) {
                        map.insert("$ref".to_owned(), Value::String(local));
                    }
                }
                // Data (`const`, `default`, `example(s)`, `enum`) is never rewritten.
                for child in walk::subschemas_mut(map) {
                    self.rewrite(child, base, external);
                }
            }
            Value::Array(items) => {
                for item in items {
                    self.rewrite(item, base, external);
                }
            }
            _ => {}
        }
    }

    /// The local reference that replaces `reference`, or `None` to leave it as it is.
    fn localise(&mut self, reference: &str, base: Option<&str>, external: bool) -> Option<String> {
        let (uri_part, fragment) = match reference.split_once('#') {
            Some((u, f)) => (u, f),
            None => (reference, ""),
        };
        if uri_part.is_empty() && !external {
            return None;
        }
        let uri = if uri_part.is_empty() {
            base?.to_owned()
        } else {
            match resolve_uri(base, uri_part) {
                Some(uri) => uri,
                None => {
                    self.warn(
                        reference,
                        "relative reference, but the document's location is unknown",
                    );
                    return None;
                }
            }
        };
        // A reference back into the root document is local to it.
        if self.root_uri.as_deref() == Some(uri.as_str()) {
            return Some(format!("#{fragment}"));
        }
        let key = (uri.clone(), fragment.to_owned());
        if let Some(local) = self.keys.get(&key) {
            return Some(local.clone());
        }
        if is_remote(&uri) && !self.allow_remote {
            self.warn(
                reference,
                "remote references are not followed unless allowed",
            );
            return None;
        }
        let target = self.load(&uri, reference)?;
        let Some(part) = pointer::resolve_fragment(&target, fragment).cloned() else {
            self.warn(reference, "the referenced document has no such part");
            return None;
        };
        let name = format!("b{}", self.keys.len());
        let local = format!("#/{BUNDLE_KEY}/{name}");
        // Registered before its own references are rewritten, so cycles end here.
        self.keys.insert(key, local.clone());
        let index = self.parts.len();
        self.parts.push((name, Value::Null));
        let mut part = part;
        self.rewrite(&mut part, Some(&uri), true);
        self.parts[index].1 = part;
        Some(local)
    }

    fn load(&mut self, uri: &str, reference: &str) -> Option<Value> {
        if !self.docs.contains_key(uri) {
            let loaded = match self.fetcher.fetch(uri) {
                Ok(text) => match parse_text(&text) {
                    Ok(doc) => Some(doc),
                    Err(e) => {
                        self.warn(
                            reference,
                            &format!("the referenced document is unusable: {e}"),
                        );
                        None
                    }
                },
                Err(e) => {
                    self.warn(reference, &format!("cannot fetch '{uri}': {e}"));
                    None
                }
            };
            self.docs.insert(uri.to_owned(), loaded);
        }
        // Cloned because the bundled part is rewritten; documents are small next to the root.
        self.docs.get(uri).cloned().flatten()
    }

    fn warn(&mut self, reference: &str, why: &str) {
        self.diagnostics.push(Diagnostic::new(
            Severity::Warning,
            None,
            Some(reference.to_owned()),
            format!("external reference not bundled: {why}"),
        ));
    }
}

fn is_remote(uri: &str) -> bool {
    uri.starts_with("http://") || uri.starts_with("https://")
}

/// Resolves `reference` (a URL or a relative path) against `base` (a URL or a file path).
/// `None` when a relative reference has no base.
pub(crate) fn resolve_uri(base: Option<&str>, reference: &str) -> Option<String> {
    if url::Url::parse(reference).is_ok_and(|u| u.scheme().len() > 1) {
        return Some(reference.to_owned());
    }
    let base = base?;
    if is_remote(base) || base.starts_with("file:") {
        return url::Url::parse(base)
            .ok()?
            .join(reference)
            .ok()
            .map(String::from);
    }
    if reference.starts_with('/') {
        return Some(normalize_path(reference));
    }
    let dir = match base.rfind('/') {
        Some(i) => &base[..=i],
        None => "",
    };
    Some(normalize_path(&format!("{dir}{reference}")))
}

/// Removes `.` and `..` segments lexically (no file system access).
fn normalize_path(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|p| *p != "..") {
                    parts.pop();
                } else if !absolute {
                    parts.push("..");
                }
            }
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    if absolute {
        format!("/{joined}")
    } else {
        joined
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn uris_resolve_against_files_and_urls() {
        assert_eq!(
            resolve_uri(Some("/a/b/api.yaml"), "../c/pet.yaml").as_deref(),
            Some("/a/c/pet.yaml")
        );
        assert_eq!(
            resolve_uri(Some("specs/api.yaml"), "pet.yaml").as_deref(),
            Some("specs/pet.yaml")
        );
        assert_eq!(
            resolve_uri(Some("https://x.io/v1/api.json"), "common.json").as_deref(),
            Some("https://x.io/v1/common.json")
        );
        assert_eq!(resolve_uri(None, "pet.yaml"), None);
        assert_eq!(
            resolve_uri(None, "https://x.io/a.json").as_deref(),
            Some("https://x.io/a.json")
        );
    }

    /// Serves one document, `/specs/common.json`.
    struct Common;

    impl RefFetcher for Common {
        fn fetch(&self, uri: &str) -> Result<String, String> {
            assert_eq!(uri, "/specs/common.json");
            Ok(r#"{"Pet": {"type": "object"}}"#.to_owned())
        }
    }

    #[test]
    fn bundling_rewrites_schemas_and_leaves_data_alone() {
        let external = json!({"$ref": "common.json#/Pet"});
        let mut root = json!({
            "dependentSchemas": {"default": external},
            "const": external,
            "examples": [external],
        });
        let mut diagnostics = Vec::new();
        bundle(
            &mut root,
            Some("/specs/api.json"),
            false,
            &Common,
            &mut diagnostics,
        );
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let local = json!({"$ref": "#/x-otc-bundled/b0"});
        assert_eq!(root["dependentSchemas"]["default"], local);
        assert_eq!(root["const"], external);
        assert_eq!(root["examples"][0], external);
        assert_eq!(root[BUNDLE_KEY]["b0"], json!({"type": "object"}));
    }

    #[test]
    fn chains_are_followed_and_cycles_stop() {
        let root = json!({"a": {"$ref": "#/b"}, "b": {"$ref": "#/c"}, "c": {"x": 1}, "d": {"$ref": "#/d"}});
        assert_eq!(chase(&root, &root["a"]).unwrap(), &json!({"x": 1}));
        assert!(chase(&root, &root["d"]).is_err());
        assert!(chase(&root, &json!({"$ref": "#/zz"})).is_err());
    }
}
