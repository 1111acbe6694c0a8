//! JSON Pointers (RFC 6901) and the URI fragments that carry them (RFC 3986): the one place that
//! escapes a reference token and the one place that percent-decodes a fragment.
//!
//! A `$ref` is a URI reference, so its fragment (`#/definitions/a%20b`) is percent-encoded, while
//! a JSON Pointer only escapes `~` and `/` (as `~0` and `~1`). Unescaping `~0`/`~1` is left to
//! `serde_json::Value::pointer`, which does it while it walks, so nothing here repeats it.

use std::borrow::Cow;

use serde_json::Value;

/// One key as a pointer's reference token: `~` → `~0`, `/` → `~1`.
pub(crate) fn escape(token: &str) -> Cow<'_, str> {
    if token.contains(['~', '/']) {
        Cow::Owned(token.replace('~', "~0").replace('/', "~1"))
    } else {
        Cow::Borrowed(token)
    }
}

/// The part of `document` a URI fragment (without its `#`) names: empty is the whole document,
/// otherwise a percent-encoded JSON Pointer. `None` when there is no such part; never a panic,
/// whatever the fragment holds (a malformed `%` escape is decoded lossily).
pub(crate) fn resolve_fragment<'v>(document: &'v Value, fragment: &str) -> Option<&'v Value> {
    if fragment.is_empty() {
        return Some(document);
    }
    if fragment.contains('%') {
        let decoded = percent_encoding::percent_decode_str(fragment).decode_utf8_lossy();
        return document.pointer(&decoded);
    }
    document.pointer(fragment)
}

/// The value a local reference (`#/a/b`, URI-fragment encoded) points to.
pub fn local_target<'v>(root: &'v Value, reference: &str) -> Option<&'v Value> {
    resolve_fragment(root, reference.strip_prefix('#')?)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn tokens_escape_tilde_before_slash() {
        assert_eq!(escape("/pets/{id}"), "~1pets~1{id}");
        assert_eq!(escape("a~/b"), "a~0~1b");
        assert!(matches!(escape("plain"), Cow::Borrowed("plain")));
        let root = json!({"paths": {"/a~b": 1}});
        let pointer = format!("/paths/{}", escape("/a~b"));
        assert_eq!(root.pointer(&pointer), Some(&json!(1)));
    }

    #[test]
    fn percent_encoded_pointers_resolve_and_never_panic() {
        let root = json!({"definitions": {"a b": {"type": "string"}}});
        assert_eq!(
            local_target(&root, "#/definitions/a%20b"),
            Some(&json!({"type": "string"}))
        );
        assert_eq!(local_target(&root, "#"), Some(&root));
        assert_eq!(local_target(&root, "/definitions"), None);
        assert_eq!(local_target(&root, "#/definitions/%é%"), None);
        assert_eq!(local_target(&root, "#/%"), None);
        assert_eq!(
            resolve_fragment(&root, "/definitions/a b"),
            Some(&json!({"type": "string"}))
        );
    }
}
