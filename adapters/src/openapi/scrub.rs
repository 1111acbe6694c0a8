//! Credentials removed from what the upstream says back: the one place that decides what a
//! secret looks like on the way out.
//!
//! An upstream may echo a credential it was sent, and what it echoes ends up in front of the
//! model (an error body becomes `additional_prompt_content`, a value becomes the tool's result).
//! It rarely echoes the bytes exactly as sent: JSON writes `/` as `\/` or any character as
//! `\uXXXX`, a cookie or query value arrives percent-encoded (in either hex case), a Basic
//! credential is sent as base64 and may be echoed decoded, or just its password. So scrubbing
//! works on two sides:
//! - every *form* the bridge sent is registered ([`Forms`]): the raw value, the token after a
//!   scheme word, base64 of `user:password` (or the decoded pair when the base64 was given),
//!   the bare user and password, the percent-encoded forms used for query and cookie values,
//!   `application/x-www-form-urlencoded`, and the JSON-escaped form;
//! - every string is also looked at *decoded*: a JSON body is parsed and each string (keys too)
//!   scrubbed before it is serialised again; text with `\` escapes or `%XX` sequences is
//!   decoded, and when the decoded text holds a credential, the decoded text is what is kept,
//!   scrubbed.
//!
//! All forms are matched in one pass with an Aho-Corasick automaton (leftmost-longest, so
//! `Bearer abc` is replaced whole rather than around `abc`; ASCII case-insensitive, so `%2f`
//! matches `%2F`). A match becomes `[redacted]`. Over-redaction (a short password equal to a
//! common word) is accepted: the safe side of this trade is losing a word of an error message.
//!
//! Who is protected from what (module docs of `super` say where each is applied):
//! - error bodies are scrubbed of every credential the request carried, the caller's too: an
//!   error body is prompt material, and the model is not necessarily the caller;
//! - success values are scrubbed of the credentials the *bridge* holds (config `credentials:`),
//!   which the caller must never learn. Credentials the caller supplied in `context` may come
//!   back to that same caller in a value (they are theirs, and an API that returns them, such as
//!   a token-introspection call, would otherwise be broken). Binary values are scrubbed on their
//!   raw bytes before base64: a bridge credential inside them is replaced, which corrupts the
//!   file, and is the lesser harm.
//!
//! This defends against an upstream that echoes carelessly, not against a hostile one: an
//! upstream holds the credential it was sent and can always disguise it past any scrubber
//! (reverse it, encrypt it). Which upstreams get which credentials is the operator's choice.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::fmt;

use aho_corasick::{AhoCorasick, MatchKind};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use percent_encoding::{percent_decode_str, utf8_percent_encode};
use serde_json::{Map, Value};

use super::style::{COMPONENT, COOKIE};

/// What a credential is replaced with.
pub(crate) const REDACTED: &str = "[redacted]";

/// The forms of the credentials to scrub, collected before the matcher is built.
#[derive(Default)]
pub(crate) struct Forms(BTreeSet<String>);

/// Holds credentials: `Debug` shows how many forms, never what they are.
impl fmt::Debug for Forms {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Forms({} redacted)", self.0.len())
    }
}

impl Forms {
    /// Registers a token, key or bearer credential (the raw value and, when it starts with a
    /// scheme word such as `Bearer `, the token after it).
    pub(crate) fn add(&mut self, raw: &str) {
        self.encoded(raw);
        if let Some((_, token)) = raw.split_once(' ') {
            self.encoded(token.trim_start());
        }
    }

    /// Registers an HTTP Basic credential given as `user:password` or as its base64 form
    /// (optionally after `Basic `): both forms, and the user and the password alone.
    pub(crate) fn add_basic(&mut self, raw: &str) {
        self.add(raw);
        let given = match raw.split_once(' ') {
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("basic") => rest.trim_start(),
            _ => raw,
        };
        let pair = if given.contains(':') {
            self.encoded(&STANDARD.encode(given));
            Cow::Borrowed(given)
        } else {
            match STANDARD
                .decode(given)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
            {
                Some(decoded) => {
                    self.encoded(&decoded);
                    Cow::Owned(decoded)
                }
                None => return,
            }
        };
        if let Some((user, password)) = pair.split_once(':') {
            self.encoded(user);
            self.encoded(password);
        }
    }

    /// `form` and every encoding the bridge (or an upstream quoting it) may have written it in.
    fn encoded(&mut self, form: &str) {
        if form.is_empty() {
            return;
        }
        self.0.insert(form.to_owned());
        self.0
            .insert(utf8_percent_encode(form, COMPONENT).to_string());
        self.0.insert(utf8_percent_encode(form, COOKIE).to_string());
        self.0
            .insert(url::form_urlencoded::byte_serialize(form.as_bytes()).collect());
        if let Ok(quoted) = serde_json::to_string(form) {
            let escaped = &quoted[1..quoted.len() - 1];
            self.0.insert(escaped.replace('/', "\\/"));
            self.0.insert(escaped.to_owned());
        }
    }

    /// The matcher for everything registered.
    pub(crate) fn build(self) -> Scrubber {
        if self.0.is_empty() {
            return Scrubber { matcher: None };
        }
        // Building fails only past the automaton's size limits, which a few credentials cannot
        // reach; should it happen, everything is redacted rather than nothing.
        let matcher = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .ascii_case_insensitive(true)
            .build(&self.0)
            .ok();
        Scrubber {
            matcher: Some(matcher),
        }
    }
}

/// Replaces registered credentials in strings, values and bytes.
#[derive(Default)]
pub(crate) struct Scrubber {
    /// `None`: nothing to scrub. `Some(None)`: the automaton could not be built, so every
    /// string is redacted whole.
    matcher: Option<Option<AhoCorasick>>,
}

/// The automaton's `Debug` would print its patterns, which are credentials.
impl fmt::Debug for Scrubber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.is_empty() {
            "Scrubber(empty)"
        } else {
            "Scrubber(<redacted>)"
        })
    }
}

impl Scrubber {
    /// Whether there is nothing to scrub (so callers can skip walking a value).
    pub(crate) fn is_empty(&self) -> bool {
        self.matcher.is_none()
    }

    /// `text` with every credential, in any registered form and after decoding JSON escapes or
    /// percent-encoding, replaced.
    pub(crate) fn scrub_str<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let Some(matcher) = &self.matcher else {
            return Cow::Borrowed(text);
        };
        let Some(matcher) = matcher else {
            // Owned, so callers see a change: a borrowed answer reads as "left as it was", and
            // `scrub_value` would then leave the credential in place.
            return Cow::Owned(REDACTED.to_owned());
        };
        let mut out = replace(matcher, Cow::Borrowed(text));
        if out.contains('\\')
            && let Some(decoded) = unescape_json(&out)
            && matcher.is_match(&decoded)
        {
            out = replace(matcher, Cow::Owned(decoded));
        }
        if out.contains('%') {
            let decoded = percent_decode_str(&out).decode_utf8_lossy();
            if matcher.is_match(decoded.as_ref()) {
                let decoded = decoded.into_owned();
                out = replace(matcher, Cow::Owned(decoded));
            }
        }
        out
    }

    /// Scrubs every string of `value`, object keys included; true when something was replaced.
    pub(crate) fn scrub_value(&self, value: &mut Value) -> bool {
        if self.is_empty() {
            return false;
        }
        match value {
            Value::String(text) => match self.scrub_str(text) {
                Cow::Owned(clean) => {
                    *text = clean;
                    true
                }
                Cow::Borrowed(_) => false,
            },
            Value::Array(items) => items
                .iter_mut()
                .fold(false, |changed, v| self.scrub_value(v) | changed),
            Value::Object(map) => {
                let dirty = map
                    .keys()
                    .any(|k| matches!(self.scrub_str(k), Cow::Owned(_)));
                if dirty {
                    let old = std::mem::take(map);
                    *map = old
                        .into_iter()
                        .map(|(k, v)| (self.scrub_str(&k).into_owned(), v))
                        .collect::<Map<_, _>>();
                }
                map.values_mut()
                    .fold(dirty, |changed, v| self.scrub_value(v) | changed)
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => false,
        }
    }

    /// Whether [`Scrubber::scrub_value`] would leave the value `json` holds unchanged, told from
    /// its text without parsing it into a value: every string and key is looked at as
    /// `scrub_value` looks at it, and the walk stops at the first that would change. False too
    /// for a text serde_json cannot parse (only one nested deeper than its limit, in a text
    /// already checked to be JSON), which must then go the way of a value.
    pub(crate) fn leaves_json_alone(&self, json: &str) -> bool {
        match &self.matcher {
            None => return true,
            // No automaton: whatever a value would get, it gets as a value.
            Some(None) => return false,
            // Settled in one pass over the bytes when the text has no escape and no `%`: each
            // string then reads as it is written, nothing in it decodes to anything else, and a
            // credential in one would be a match in the text.
            Some(Some(matcher)) if !json.contains(['\\', '%']) && !matcher.is_match(json) => {
                return true;
            }
            Some(Some(_)) => {}
        }
        let mut deserializer = serde_json::Deserializer::from_str(json);
        serde::Deserializer::deserialize_any(&mut deserializer, Unchanged(self)).is_ok()
    }

    /// Raw bytes (a binary body) with every registered form replaced.
    pub(crate) fn scrub_bytes<'b>(&self, bytes: &'b [u8]) -> Cow<'b, [u8]> {
        match &self.matcher {
            None => Cow::Borrowed(bytes),
            Some(None) => Cow::Borrowed(REDACTED.as_bytes()),
            Some(Some(matcher)) if matcher.is_match(bytes) => {
                let mut out = Vec::with_capacity(bytes.len());
                matcher.replace_all_with_bytes(bytes, &mut out, |_, _, dst| {
                    dst.extend_from_slice(REDACTED.as_bytes());
                    true
                });
                Cow::Owned(out)
            }
            Some(Some(_)) => Cow::Borrowed(bytes),
        }
    }

    /// An error body as text: a JSON body is parsed, scrubbed string by string and, when a
    /// credential was found, serialised again (so escapes cannot hide a credential; a clean body
    /// is kept as written); anything else is scrubbed as text.
    pub(crate) fn scrub_body(&self, bytes: &[u8]) -> String {
        if self.is_empty() {
            return String::from_utf8_lossy(bytes).into_owned();
        }
        if let Ok(mut value) = serde_json::from_slice::<Value>(bytes) {
            if self.scrub_value(&mut value) {
                return value.to_string();
            }
            return String::from_utf8_lossy(bytes).into_owned();
        }
        self.scrub_str(&String::from_utf8_lossy(bytes)).into_owned()
    }
}

/// Walks a JSON text, failing at the first string or key the scrubber would change.
#[derive(Clone, Copy)]
struct Unchanged<'s>(&'s Scrubber);

impl<'de> serde::de::DeserializeSeed<'de> for Unchanged<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Unchanged<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<(), E> {
        match self.0.scrub_str(v) {
            Cow::Borrowed(_) => Ok(()),
            Cow::Owned(_) => Err(E::custom("holds a credential")),
        }
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(self)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_key_seed(self)?.is_some() {
            map.next_value_seed(self)?;
        }
        Ok(())
    }
}

fn replace<'t>(matcher: &AhoCorasick, text: Cow<'t, str>) -> Cow<'t, str> {
    if !matcher.is_match(text.as_ref()) {
        return text;
    }
    let mut out = String::with_capacity(text.len());
    matcher.replace_all_with(&text, &mut out, |_, _, dst| {
        dst.push_str(REDACTED);
        true
    });
    Cow::Owned(out)
}

/// Decodes JSON string escapes (`\/`, `\"`, `\uXXXX` with surrogate pairs, ...) found anywhere
/// in `text`, which need not be JSON. `None` when there is nothing to decode; an escape that is
/// not valid is kept as written.
fn unescape_json(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut rest = text;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let (decoded, used) = match tail.as_bytes().get(1) {
            Some(b'/') => ('/', 2),
            Some(b'\\') => ('\\', 2),
            Some(b'"') => ('"', 2),
            Some(b'b') => ('\u{8}', 2),
            Some(b'f') => ('\u{c}', 2),
            Some(b'n') => ('\n', 2),
            Some(b'r') => ('\r', 2),
            Some(b't') => ('\t', 2),
            Some(b'u') => unicode_escape(tail).unwrap_or(('\\', 1)),
            _ => ('\\', 1),
        };
        changed |= used > 1;
        out.push(decoded);
        rest = &tail[used..];
    }
    out.push_str(rest);
    changed.then_some(out)
}

/// `\uXXXX` (or a surrogate pair `\uD83D\uDE00`) at the start of `text`: the character and the
/// bytes it took.
fn unicode_escape(text: &str) -> Option<(char, usize)> {
    let unit = |at: usize| -> Option<u32> {
        let digits = text.get(at..at + 6)?.strip_prefix("\\u")?;
        u32::from_str_radix(digits, 16).ok()
    };
    let first = unit(0)?;
    if (0xD800..0xDC00).contains(&first) {
        let second = unit(6).filter(|s| (0xDC00..0xE000).contains(s))?;
        let code = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
        return char::from_u32(code).map(|c| (c, 12));
    }
    char::from_u32(first).map(|c| (c, 6))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn scrubber(tokens: &[&str], basics: &[&str]) -> Scrubber {
        let mut forms = Forms::default();
        tokens.iter().for_each(|t| forms.add(t));
        basics.iter().for_each(|b| forms.add_basic(b));
        forms.build()
    }

    #[test]
    fn every_sent_form_is_replaced() {
        let s = scrubber(&["Bearer a/b c;d"], &["alice:pa ss"]);
        for leaked in [
            "a/b c;d",
            "a%2Fb%20c%3Bd",
            "a%2fb%20c%3bd",
            "a/b%20c%3Bd",
            "a%2Fb+c%3Bd",
            "YWxpY2U6cGEgc3M=",
            "pa ss",
            "alice:pa ss",
        ] {
            let text = format!("x {leaked} y");
            assert_eq!(s.scrub_str(&text), "x [redacted] y", "{leaked}");
        }
    }

    /// Should the automaton ever fail to build, every string is redacted, in values too.
    #[test]
    fn without_an_automaton_everything_is_redacted() {
        let s = Scrubber {
            matcher: Some(None),
        };
        let mut value = json!({"items": ["hunter2", 1]});
        assert!(s.scrub_value(&mut value));
        // Keys too: every key becomes the same word, so only one member is left.
        assert_eq!(value, json!({REDACTED: [REDACTED, 1]}), "{value}");
        assert!(!s.leaves_json_alone(r#"{"a": "hunter2"}"#));
    }

    #[test]
    fn a_base64_basic_credential_registers_the_decoded_pair() {
        let s = scrubber(&[], &["Basic YWxpY2U6aHVudGVyMg=="]);
        assert_eq!(s.scrub_str("hunter2"), REDACTED);
        assert_eq!(s.scrub_str("YWxpY2U6aHVudGVyMg=="), REDACTED);
    }

    #[test]
    fn escapes_do_not_hide_a_credential() {
        let s = scrubber(&["s3cr/et"], &[]);
        let body = br#"{"echo": "s3cr\/et", "again": "\u0073\u0033cr/et", "s3cr/et": 1}"#;
        let clean = s.scrub_body(body);
        assert!(!clean.contains("s3cr"), "{clean}");
        assert_eq!(
            serde_json::from_str::<Value>(&clean).unwrap(),
            json!({"echo": REDACTED, "again": REDACTED, REDACTED: 1})
        );
        // Not JSON (cut short): the escapes are decoded in the text.
        let clean = s.scrub_body(br#"error: {"echo": "\u0073\u0033cr\/et", "#);
        assert!(!clean.contains("cr"), "{clean}");
        assert!(clean.contains(REDACTED), "{clean}");
    }

    #[test]
    fn bytes_values_and_nothing_to_scrub() {
        let s = scrubber(&["k3y"], &[]);
        assert_eq!(
            s.scrub_bytes(b"\x00k3y\x01").as_ref(),
            b"\x00[redacted]\x01"
        );
        let mut value = json!({"a": ["x k3y", 1, {"b": "K3Y"}]});
        s.scrub_value(&mut value);
        assert_eq!(
            value,
            json!({"a": ["x [redacted]", 1, {"b": "[redacted]"}]})
        );
        let clean = br#"{"n": 123456789012345678901234567890, "s": "a\/b"}"#;
        assert_eq!(
            s.scrub_body(clean).as_bytes(),
            clean,
            "a clean body is kept as written"
        );
        let none = Forms::default().build();
        assert!(none.is_empty());
        assert_eq!(none.scrub_body(b"{\"a\": \"\\/\"}"), "{\"a\": \"\\/\"}");
    }

    #[test]
    fn debug_shows_no_credential() {
        let mut forms = Forms::default();
        forms.add("hunter2");
        let shown = format!("{forms:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        let shown = format!("{:?}", forms.build());
        assert!(!shown.contains("hunter2"), "{shown}");
    }

    #[test]
    fn broken_escapes_are_kept() {
        assert_eq!(unescape_json(r"a\u12"), None);
        assert_eq!(unescape_json(r"\uD83D\uDE00\/").as_deref(), Some("😀/"));
        assert_eq!(unescape_json(r"\uD83Dx\/").as_deref(), Some(r"\uD83Dx/"));
    }
}
