//! Parameter serialisation: an input value and its OpenAPI `style`/`explode` become the text of a
//! path segment, query pairs, a header value or cookie pairs.
//!
//! The rules are the table of OpenAPI 3.1 §4.8.12.4 ("Style Examples"). Where the standard leaves
//! a case undefined we pick the reading most servers accept and say so here:
//! - `spaceDelimited`/`pipeDelimited` with `explode: true` are sent like `form` (repeated names);
//! - `deepObject` nests (`f[a][b]=1`) and indexes arrays (`f[tags][0]=x`), like `qs`; the
//!   brackets are percent-encoded, as in the OpenAPI 3.1.1 examples;
//! - a value nested deeper than the style can express (an object inside an array) is sent as its
//!   JSON text;
//! - `null` is the empty string.
//!
//! Percent-encoding is RFC 3986: everything but the unreserved characters is encoded in names and
//! values, so no value can add a path segment or a query parameter; `allowReserved` keeps the
//! reserved set (but still encodes `#`, `%` and spaces, which would break the URL).
//!
//! Header values are sent as written, so they must be text a header can carry: visible ASCII,
//! space and tab ([`header_value`]). A value with other characters is refused, not encoded:
//! RFC 9110 gives non-ASCII bytes in a field no meaning (`obs-text`), RFC 8187 encoding applies
//! only to parameters of headers that define it, and percent-encoding would send a different
//! value than the caller gave, which the upstream would take literally. CR, LF and NUL are
//! refused the same way (the `http` crate refuses them too), so a value cannot add a header.

use std::borrow::Cow;
use std::fmt::Write as _;

use otc_mappings::openapi::{ParamPlan, ParamStyle};
use percent_encoding::{AsciiSet, CONTROLS, NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::header::HeaderValue;
use serde_json::Value;

/// Everything but RFC 3986 unreserved characters.
pub(crate) const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// `allowReserved`: the reserved set stays as is.
const RESERVED_ALLOWED: &AsciiSet = &COMPONENT
    .remove(b':')
    .remove(b'/')
    .remove(b'?')
    .remove(b'[')
    .remove(b']')
    .remove(b'@')
    .remove(b'!')
    .remove(b'$')
    .remove(b'&')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b'+')
    .remove(b',')
    .remove(b';')
    .remove(b'=');

/// Literal parts of a path template: only what a path cannot contain is encoded, so the
/// document's own `%xx`, `:` or `@` pass through.
pub(crate) const PATH_LITERAL: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}')
    .add(b'\\')
    .add(b'^')
    .add(b'|');

/// Cookie values (RFC 6265 cookie-octet): separators and quotes are encoded.
pub(crate) const COOKIE: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b',')
    .add(b';')
    .add(b'\\')
    .add(b'%');

/// `text` as a header value, or `None` when it holds anything but visible ASCII, space and tab.
/// `HeaderValue::from_str` alone would accept bytes above 0x7F and send UTF-8 as raw bytes.
pub(crate) fn header_value(text: &str) -> Option<HeaderValue> {
    let visible = text
        .bytes()
        .all(|b| b == b'\t' || (0x20..0x7f).contains(&b));
    visible.then(|| HeaderValue::from_str(text).ok()).flatten()
}

/// A value's text when it stands alone: strings as is, `null` empty, containers as JSON.
pub(crate) fn scalar(value: &Value) -> Cow<'_, str> {
    match value {
        Value::String(s) => Cow::Borrowed(s),
        Value::Null => Cow::Borrowed(""),
        Value::Bool(true) => Cow::Borrowed("true"),
        Value::Bool(false) => Cow::Borrowed("false"),
        Value::Number(n) => Cow::Owned(n.to_string()),
        Value::Array(_) | Value::Object(_) => Cow::Owned(value.to_string()),
    }
}

fn push_enc(out: &mut String, text: &str, set: &'static AsciiSet) {
    // `Display` of the encoder writes borrowed slices: no intermediate String.
    let _ = write!(out, "{}", utf8_percent_encode(text, set));
}

/// Appends the items of an array or the `k,v` / `k=v` pairs of an object, joined by `sep`.
fn push_joined(out: &mut String, value: &Value, sep: &str, kv_sep: &str, set: &'static AsciiSet) {
    match value {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(sep);
                }
                push_enc(out, &scalar(item), set);
            }
        }
        Value::Object(map) => {
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(sep);
                }
                push_enc(out, k, set);
                out.push_str(kv_sep);
                push_enc(out, &scalar(v), set);
            }
        }
        _ => push_enc(out, &scalar(value), set),
    }
}

/// Appends a path parameter's text (`simple`, `label` or `matrix`; others read as `simple`).
pub(crate) fn write_path(out: &mut String, param: &ParamPlan, value: &Value) {
    let name = param.name.as_str();
    let explode = param.explode;
    match param.style {
        ParamStyle::Label => {
            out.push('.');
            let sep = if explode { "." } else { "," };
            let kv = if explode { "=" } else { "," };
            push_joined(out, value, sep, kv, COMPONENT);
        }
        ParamStyle::Matrix => match value {
            Value::Array(items) if explode => {
                for item in items {
                    out.push(';');
                    push_enc(out, name, COMPONENT);
                    out.push('=');
                    push_enc(out, &scalar(item), COMPONENT);
                }
            }
            Value::Object(_) if explode => {
                out.push(';');
                push_joined(out, value, ";", "=", COMPONENT);
            }
            Value::Array(items) if items.is_empty() => {
                out.push(';');
                push_enc(out, name, COMPONENT);
            }
            _ => {
                out.push(';');
                push_enc(out, name, COMPONENT);
                out.push('=');
                push_joined(out, value, ",", ",", COMPONENT);
            }
        },
        _ => {
            let kv = if explode { "=" } else { "," };
            push_joined(out, value, ",", kv, COMPONENT);
        }
    }
}

/// Appends one `name=value` pair to a query string under construction.
pub(crate) fn push_pair(out: &mut String, name: &str, value: &str, set: &'static AsciiSet) {
    if !out.is_empty() {
        out.push('&');
    }
    push_enc(out, name, COMPONENT);
    out.push('=');
    push_enc(out, value, set);
}

/// Appends a query parameter's pairs (`form`, `spaceDelimited`, `pipeDelimited`, `deepObject`).
pub(crate) fn write_query(out: &mut String, param: &ParamPlan, value: &Value) {
    let set = if param.allow_reserved {
        RESERVED_ALLOWED
    } else {
        COMPONENT
    };
    let name = param.name.as_str();
    if param.style == ParamStyle::DeepObject && matches!(value, Value::Object(_) | Value::Array(_))
    {
        let mut prefix = String::with_capacity(name.len() + 16);
        prefix.push_str(name);
        write_deep(out, &mut prefix, value, set);
        return;
    }
    match value {
        Value::Array(items) if param.explode => {
            for item in items {
                push_pair(out, name, &scalar(item), set);
            }
        }
        Value::Object(map) if param.explode => {
            for (k, v) in map {
                push_pair(out, k, &scalar(v), set);
            }
        }
        Value::Array(_) | Value::Object(_) => {
            let sep = match param.style {
                ParamStyle::SpaceDelimited => "%20",
                ParamStyle::PipeDelimited => "|",
                _ => ",",
            };
            if !out.is_empty() {
                out.push('&');
            }
            push_enc(out, name, COMPONENT);
            out.push('=');
            push_joined(out, value, sep, sep, set);
        }
        _ => push_pair(out, name, &scalar(value), set),
    }
}

/// `deepObject`: `prefix[key]=value`, recursing into objects and arrays.
fn write_deep(out: &mut String, prefix: &mut String, value: &Value, set: &'static AsciiSet) {
    let descend = |out: &mut String, prefix: &mut String, key: &str, v: &Value| {
        let len = prefix.len();
        prefix.push('[');
        prefix.push_str(key);
        prefix.push(']');
        write_deep(out, prefix, v, set);
        prefix.truncate(len);
    };
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                descend(out, prefix, k, v);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                descend(out, prefix, &i.to_string(), v);
            }
        }
        _ => push_pair(out, prefix, &scalar(value), set),
    }
}

/// A header parameter's value (`simple`): not percent-encoded; the caller checks it is a valid
/// header value.
pub(crate) fn header_text(param: &ParamPlan, value: &Value) -> String {
    let mut out = String::new();
    let kv = if param.explode { '=' } else { ',' };
    match value {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&scalar(item));
            }
        }
        Value::Object(map) => {
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(k);
                out.push(kv);
                out.push_str(&scalar(v));
            }
        }
        _ => out.push_str(&scalar(value)),
    }
    out
}

/// Appends one `name=value` cookie pair to a `Cookie` header under construction.
pub(crate) fn push_cookie(out: &mut String, name: &str, value: &str) {
    if !out.is_empty() {
        out.push_str("; ");
    }
    push_enc(out, name, COOKIE);
    out.push('=');
    push_enc(out, value, COOKIE);
}

/// Appends a cookie parameter's pairs (`form`).
pub(crate) fn write_cookie(out: &mut String, param: &ParamPlan, value: &Value) {
    match value {
        Value::Array(items) if param.explode => {
            for item in items {
                push_cookie(out, &param.name, &scalar(item));
            }
        }
        Value::Object(map) if param.explode => {
            for (k, v) in map {
                push_cookie(out, k, &scalar(v));
            }
        }
        Value::Array(_) | Value::Object(_) => {
            if !out.is_empty() {
                out.push_str("; ");
            }
            push_enc(out, &param.name, COOKIE);
            out.push('=');
            push_joined(out, value, ",", ",", COOKIE);
        }
        _ => push_cookie(out, &param.name, &scalar(value)),
    }
}

#[cfg(test)]
mod tests {
    use otc_mappings::openapi::ParamLocation;
    use serde_json::json;

    use super::*;

    fn param(location: ParamLocation, style: ParamStyle, explode: bool) -> ParamPlan {
        ParamPlan {
            input: "color".into(),
            name: "color".into(),
            location,
            style,
            explode,
            allow_reserved: false,
            required: false,
            default: None,
        }
    }

    #[allow(clippy::needless_pass_by_value)]
    fn path(style: ParamStyle, explode: bool, value: Value) -> String {
        let mut out = String::new();
        write_path(
            &mut out,
            &param(ParamLocation::Path, style, explode),
            &value,
        );
        out
    }

    #[allow(clippy::needless_pass_by_value)]
    fn query(style: ParamStyle, explode: bool, value: Value) -> String {
        let mut out = String::new();
        write_query(
            &mut out,
            &param(ParamLocation::Query, style, explode),
            &value,
        );
        out
    }

    fn rgb() -> Value {
        json!({"R": 100, "G": 200, "B": 150})
    }

    fn colors() -> Value {
        json!(["blue", "black", "brown"])
    }

    /// The style table of the OpenAPI specification, row by row.
    #[test]
    fn path_styles_follow_the_specification_table() {
        use ParamStyle::{Label, Matrix, Simple};
        assert_eq!(path(Simple, false, json!("blue")), "blue");
        assert_eq!(path(Simple, false, colors()), "blue,black,brown");
        assert_eq!(path(Simple, false, rgb()), "R,100,G,200,B,150");
        assert_eq!(path(Simple, true, rgb()), "R=100,G=200,B=150");
        assert_eq!(path(Label, false, json!("blue")), ".blue");
        assert_eq!(path(Label, false, colors()), ".blue,black,brown");
        assert_eq!(path(Label, true, colors()), ".blue.black.brown");
        assert_eq!(path(Label, true, rgb()), ".R=100.G=200.B=150");
        assert_eq!(path(Matrix, false, json!("blue")), ";color=blue");
        assert_eq!(path(Matrix, false, colors()), ";color=blue,black,brown");
        assert_eq!(
            path(Matrix, true, colors()),
            ";color=blue;color=black;color=brown"
        );
        assert_eq!(path(Matrix, false, rgb()), ";color=R,100,G,200,B,150");
        assert_eq!(path(Matrix, true, rgb()), ";R=100;G=200;B=150");
    }

    #[test]
    fn query_styles_follow_the_specification_table() {
        use ParamStyle::{DeepObject, Form, PipeDelimited, SpaceDelimited};
        assert_eq!(query(Form, true, json!("blue")), "color=blue");
        assert_eq!(query(Form, false, colors()), "color=blue,black,brown");
        assert_eq!(
            query(Form, true, colors()),
            "color=blue&color=black&color=brown"
        );
        assert_eq!(query(Form, false, rgb()), "color=R,100,G,200,B,150");
        assert_eq!(query(Form, true, rgb()), "R=100&G=200&B=150");
        assert_eq!(
            query(SpaceDelimited, false, colors()),
            "color=blue%20black%20brown"
        );
        assert_eq!(
            query(PipeDelimited, false, colors()),
            "color=blue|black|brown"
        );
        assert_eq!(
            query(DeepObject, true, rgb()),
            "color%5BR%5D=100&color%5BG%5D=200&color%5BB%5D=150"
        );
        assert_eq!(
            query(DeepObject, true, json!({"a": {"b": [1, 2]}})),
            "color%5Ba%5D%5Bb%5D%5B0%5D=1&color%5Ba%5D%5Bb%5D%5B1%5D=2"
        );
    }

    #[test]
    fn values_cannot_escape_their_component() {
        use ParamStyle::{Form, Simple};
        assert_eq!(
            path(Simple, false, json!("../a b/?x#")),
            "..%2Fa%20b%2F%3Fx%23"
        );
        assert_eq!(query(Form, true, json!("a&b=c d")), "color=a%26b%3Dc%20d");
        let mut reserved = param(ParamLocation::Query, Form, true);
        reserved.allow_reserved = true;
        let mut out = String::new();
        write_query(&mut out, &reserved, &json!("a/b?c=d,e#f g"));
        assert_eq!(out, "color=a/b?c=d,e%23f%20g");
    }

    #[test]
    fn headers_and_cookies() {
        let header = param(ParamLocation::Header, ParamStyle::Simple, false);
        assert_eq!(header_text(&header, &colors()), "blue,black,brown");
        assert_eq!(header_text(&header, &json!(5)), "5");
        let mut out = String::new();
        let cookie = param(ParamLocation::Cookie, ParamStyle::Form, true);
        write_cookie(&mut out, &cookie, &json!("a b;c"));
        write_cookie(&mut out, &cookie, &json!(["x", "y"]));
        assert_eq!(out, "color=a%20b%3Bc; color=x; color=y");
    }
}
