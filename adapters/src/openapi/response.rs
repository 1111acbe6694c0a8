//! Upstream answers and failures, turned into a tool value or an [`AdapterError`].
//!
//! Values (DESIGN.md §4, "Values"):
//! - an empty body (204, or zero bytes) is `null`;
//! - JSON (`application/json`, `*/*+json`) is the parsed value; JSON that does not parse is a
//!   `Protocol` error, not a panic and not a string;
//! - text (`text/*`, XML, YAML) is a string (invalid UTF-8 replaced);
//! - anything else is `{"media_type": "<Content-Type as sent>", "base64": "<standard base64>"}`;
//! - no `Content-Type`: JSON if it parses, else text if it is UTF-8, else binary.
//!
//! A call that only passes the value on ([`read_unparsed`]) keeps a JSON body as its text,
//! checked and scrubbed but never parsed into a `Value` (issue 27: several times the text's size).
//!
//! Bodies are streamed and counted: past `max_response_bytes` the call fails with
//! `ResponseTooLarge` without reading further. Failures are classified by what happened
//! (timeout, refused, TLS, lost mid-way). Before anything leaves this module, an error body is
//! scrubbed of every credential the request carried, and a value of the credentials the bridge
//! holds ([`super::scrub`] says which, and how).

use std::error::Error as StdError;
use std::io;
use std::time::{Duration, SystemTime};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use reqwest::Response;
use reqwest::header::{CONTENT_TYPE, LOCATION, RETRY_AFTER};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::request::Sent;
use super::scrub::Scrubber;
use crate::{AdapterError, ToolValue};

/// How much of an error body is kept for the caller.
const ERROR_BODY_KEEP: usize = 2048;
/// How much of an error body is read (a little more than is kept, so a secret cut at the
/// boundary is still recognised and scrubbed).
const ERROR_BODY_READ: u64 = 16 * 1024;

/// Turns a response into the tool's value, or an `UpstreamStatus` error for non-2xx. `bridge`
/// scrubs the credentials the bridge holds from a value; `sent` those the request carried from
/// an error body.
pub(crate) async fn read(
    response: Response,
    limit: u64,
    sent: &Sent<'_>,
    bridge: &Scrubber,
    timeout: Duration,
) -> Result<Value, AdapterError> {
    let (bytes, content_type) = body(response, limit, sent, timeout).await?;
    value_of(&bytes, content_type.as_deref(), bridge)
}

/// [`read`], but a JSON body is kept as its text ([`unparsed_of`]).
pub(crate) async fn read_unparsed(
    response: Response,
    limit: u64,
    sent: &Sent<'_>,
    bridge: &Scrubber,
    timeout: Duration,
) -> Result<ToolValue, AdapterError> {
    let (bytes, content_type) = body(response, limit, sent, timeout).await?;
    unparsed_of(bytes, content_type.as_deref(), bridge)
}

/// A 2xx response's body and `Content-Type`, or the error of any other.
async fn body(
    mut response: Response,
    limit: u64,
    sent: &Sent<'_>,
    timeout: Duration,
) -> Result<(Vec<u8>, Option<String>), AdapterError> {
    let status = response.status();
    if !status.is_success() {
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        let body = if status.is_redirection() {
            // Only reached when the redirect was not followed: another origin, or none given.
            let target = response
                .headers()
                .get(LOCATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|l| response.url().join(l).ok())
                .map(|u| u.origin().ascii_serialization())
                .unwrap_or_else(|| "an unknown location".to_owned());
            Some(format!(
                "the upstream redirected to {target}; redirects are only followed within the upstream's own origin"
            ))
        } else {
            // A body that breaks off still leaves the status to report.
            let bytes = collect(&mut response, ERROR_BODY_READ.min(limit), true, timeout)
                .await
                .unwrap_or_default();
            error_text(&bytes, sent)
        };
        return Err(AdapterError::UpstreamStatus {
            status: status.as_u16(),
            retry_after,
            body,
        });
    }

    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let bytes = collect(&mut response, limit, false, timeout).await?;
    Ok((bytes, content_type))
}

/// Reads the body, at most `limit` bytes: past it, `truncate` keeps what was read, otherwise the
/// call fails.
async fn collect(
    response: &mut Response,
    limit: u64,
    truncate: bool,
    timeout: Duration,
) -> Result<Vec<u8>, AdapterError> {
    let too_large = AdapterError::ResponseTooLarge { limit_bytes: limit };
    let declared = response.content_length();
    if !truncate && declared.is_some_and(|n| n > limit) {
        return Err(too_large);
    }
    // A declared length within the limit is reserved whole: a body grown by doubling from a
    // smaller start held up to twice its size, and while it grew (a reallocation copies) about
    // three times (issue 27). A length that overstates the body costs little: pages reserved
    // and never written are not memory the process holds.
    let capacity = declared.unwrap_or(0).min(limit);
    let mut body = Vec::with_capacity(usize::try_from(capacity).unwrap_or(0));
    while let Some(chunk) = response.chunk().await.map_err(|e| classify(e, timeout))? {
        let room = usize::try_from(limit)
            .unwrap_or(usize::MAX)
            .saturating_sub(body.len());
        if chunk.len() > room {
            if truncate {
                body.extend_from_slice(&chunk[..room]);
                break;
            }
            return Err(too_large);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The value of a 2xx body of `content_type`, with every string (or, for binary, the bytes)
/// scrubbed by `scrubber`.
pub(crate) fn value_of(
    bytes: &[u8],
    content_type: Option<&str>,
    scrubber: &Scrubber,
) -> Result<Value, AdapterError> {
    if bytes.is_empty() {
        return Ok(Value::Null);
    }
    let mut binary_seen = false;
    let mut binary = |media_type: &str, bytes: &[u8]| {
        binary_seen = true;
        binary(media_type, &scrubber.scrub_bytes(bytes))
    };
    let mut value = parse_value(bytes, content_type, &mut binary)?;
    // A binary value was scrubbed on its bytes; its base64 text is left alone.
    if !binary_seen {
        scrubber.scrub_value(&mut value);
    }
    Ok(value)
}

/// [`value_of`], except that a JSON body is kept as its text when scrubbing would not change it
/// (the usual case: the bridge's credentials are rarely echoed): checked to be one JSON value,
/// in the body's own allocation, never parsed into a `Value`. Anything else (text, binary, a
/// body that is not JSON, one that scrubbing changes) is [`value_of`]'s value.
pub(crate) fn unparsed_of(
    bytes: Vec<u8>,
    content_type: Option<&str>,
    scrubber: &Scrubber,
) -> Result<ToolValue, AdapterError> {
    let json = match content_type {
        Some(content_type) => is_json(&essence(content_type)),
        // Without a type, JSON if it parses (checked below, before the text is given up).
        None => true,
    };
    if bytes.is_empty() || !json {
        return value_of(&bytes, content_type, scrubber).map(ToolValue::Parsed);
    }
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(not_utf8) => {
            return value_of(not_utf8.as_bytes(), content_type, scrubber).map(ToolValue::Parsed);
        }
    };
    // An untyped body that is not JSON is text or binary: checked on the borrowed text, so that
    // it is still there for `value_of`; a typed one is checked once, by `from_string`.
    if content_type.is_none() && serde_json::from_str::<&RawValue>(&text).is_err() {
        return value_of(text.as_bytes(), content_type, scrubber).map(ToolValue::Parsed);
    }
    if !scrubber.leaves_json_alone(&text) {
        return value_of(text.as_bytes(), content_type, scrubber).map(ToolValue::Parsed);
    }
    // Trimmed in place (a body often ends with a newline): `from_string` then keeps the text in
    // its allocation (shrunk to its length) instead of copying it.
    let mut text = text;
    text.truncate(text.trim_end().len());
    let leading = text.len() - text.trim_start().len();
    text.drain(..leading);
    RawValue::from_string(text)
        .map(ToolValue::Json)
        .map_err(|e| AdapterError::protocol("the upstream sent a JSON body that does not parse", e))
}

/// A `Content-Type`'s media type, lowercased, without parameters.
fn essence(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// Whether a media type (its [`essence`]) is JSON.
fn is_json(essence: &str) -> bool {
    essence == "application/json" || essence.ends_with("+json") || essence == "text/json"
}

fn parse_value(
    bytes: &[u8],
    content_type: Option<&str>,
    binary: &mut impl FnMut(&str, &[u8]) -> Value,
) -> Result<Value, AdapterError> {
    let Some(content_type) = content_type else {
        if let Ok(value) = serde_json::from_slice(bytes) {
            return Ok(value);
        }
        return Ok(match std::str::from_utf8(bytes) {
            Ok(text) => Value::String(text.to_owned()),
            Err(_) => binary("application/octet-stream", bytes),
        });
    };
    let essence = essence(content_type);
    if is_json(&essence) {
        serde_json::from_slice(bytes).map_err(|e| {
            AdapterError::protocol("the upstream sent a JSON body that does not parse", e)
        })
    } else if is_text(&essence) {
        Ok(Value::String(String::from_utf8_lossy(bytes).into_owned()))
    } else {
        Ok(binary(content_type.trim(), bytes))
    }
}

fn is_text(essence: &str) -> bool {
    essence.starts_with("text/")
        || essence.ends_with("+xml")
        || matches!(
            essence,
            "application/xml"
                | "application/yaml"
                | "application/x-yaml"
                | "application/javascript"
                | "application/x-www-form-urlencoded"
        )
}

fn binary(media_type: &str, bytes: &[u8]) -> Value {
    json!({ "media_type": media_type, "base64": STANDARD.encode(bytes) })
}

/// An error body for the caller: UTF-8 (lossy), credentials scrubbed, trimmed to about 2 KB.
fn error_text(bytes: &[u8], sent: &Sent<'_>) -> Option<String> {
    let text = sent.scrubber().scrub_body(bytes);
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return None;
    }
    if trimmed.len() <= ERROR_BODY_KEEP {
        return Some(trimmed.to_owned());
    }
    let mut cut = ERROR_BODY_KEEP;
    while !trimmed.is_char_boundary(cut) {
        cut -= 1;
    }
    Some(format!("{}…", &trimmed[..cut]))
}

/// `Retry-After`: delay-seconds or an HTTP-date (a date in the past is zero).
pub(crate) fn parse_retry_after(text: &str) -> Option<Duration> {
    let text = text.trim();
    if let Ok(seconds) = text.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = httpdate::parse_http_date(text).ok()?;
    Some(
        at.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

/// Classifies a transport failure by what happened. The URL is dropped from the error: it may
/// carry an API key in its query.
pub(crate) fn classify(error: reqwest::Error, timeout: Duration) -> AdapterError {
    let error = error.without_url();
    if error.is_timeout() {
        return AdapterError::Timeout { elapsed: timeout };
    }
    if error.is_connect() {
        let message = match tls_cause(&error) {
            Some(tls) => format!("TLS handshake failed: {tls}"),
            None => root_cause(&error),
        };
        return AdapterError::Unreachable {
            message,
            source: Some(Box::new(error)),
        };
    }
    if error.is_redirect() {
        return AdapterError::Protocol {
            message: "the upstream redirected too many times".to_owned(),
            source: Some(Box::new(error)),
        };
    }
    if error.is_builder() {
        return AdapterError::BadInput {
            message: format!("the request cannot be built: {}", root_cause(&error)),
        };
    }
    AdapterError::ConnectionLost {
        message: root_cause(&error),
    }
}

/// A rustls error anywhere in the chain (hyper-rustls wraps it in an `io::Error`).
fn tls_cause(error: &(dyn StdError + 'static)) -> Option<String> {
    let mut current = Some(error);
    while let Some(err) = current {
        if let Some(tls) = err.downcast_ref::<rustls::Error>() {
            return Some(tls.to_string());
        }
        // `io::Error::source` skips the error it wraps, so step into it explicitly.
        current = match err.downcast_ref::<io::Error>().and_then(|io| io.get_ref()) {
            Some(inner) => Some(inner as &(dyn StdError + 'static)),
            None => err.source(),
        };
    }
    None
}

/// The innermost cause's message (`Connection refused (os error 111)`), which says the most.
fn root_cause(error: &(dyn StdError + 'static)) -> String {
    let mut current = error;
    while let Some(next) = current.source() {
        current = next;
    }
    current.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_in_both_forms() {
        assert_eq!(parse_retry_after("120"), Some(Duration::from_secs(120)));
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"),
            Some(Duration::ZERO)
        );
        let future = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(3600));
        let wait = parse_retry_after(&future).unwrap();
        assert!(wait > Duration::from_secs(3000) && wait <= Duration::from_secs(3600));
        assert_eq!(parse_retry_after("soon"), None);
    }

    #[test]
    fn values_by_media_type() {
        let none = Scrubber::default();
        assert_eq!(
            value_of(b"", Some("application/json"), &none).unwrap(),
            Value::Null
        );
        assert_eq!(
            value_of(b"{\"a\":1}", Some("application/problem+json"), &none).unwrap(),
            json!({"a": 1})
        );
        assert_eq!(
            value_of(b"hi", Some("text/plain; charset=utf-8"), &none).unwrap(),
            json!("hi")
        );
        assert_eq!(
            value_of(&[0, 1], Some("image/png"), &none).unwrap(),
            json!({"media_type": "image/png", "base64": "AAE="})
        );
        assert_eq!(value_of(b"[1]", None, &none).unwrap(), json!([1]));
        assert!(matches!(
            value_of(b"{oops", Some("application/json"), &none),
            Err(AdapterError::Protocol { .. })
        ));
    }

    fn unparsed(body: &str, content_type: Option<&str>, scrubber: &Scrubber) -> ToolValue {
        unparsed_of(body.as_bytes().to_vec(), content_type, scrubber).unwrap()
    }

    /// Issue 27: a JSON body stays its text (trimmed), anything else is `value_of`'s value.
    #[test]
    fn a_json_body_stays_text_and_anything_else_is_a_value() {
        let none = Scrubber::default();
        let text = "{\"a\": [1, 2.50, \"\\u00e9\"]}";
        for (body, content_type) in [
            (format!("{text}\n"), Some("application/json; charset=utf-8")),
            (format!(" \t{text}"), Some("application/vnd.github+json")),
            (text.to_owned(), None),
        ] {
            match unparsed(&body, content_type, &none) {
                ToolValue::Json(json) => assert_eq!(json.get(), text),
                ToolValue::Parsed(value) => panic!("{body:?} became {value}"),
            }
        }
        for (body, content_type, value) in [
            ("", Some("application/json"), Value::Null),
            ("hi", Some("text/plain"), json!("hi")),
            ("not json", None, json!("not json")),
            ("{\"a\":1}", Some("text/plain"), json!("{\"a\":1}")),
        ] {
            match unparsed(body, content_type, &none) {
                ToolValue::Parsed(parsed) => assert_eq!(parsed, value, "{body:?}"),
                ToolValue::Json(json) => panic!("{body:?} stayed text: {json}"),
            }
        }
        assert!(matches!(
            unparsed_of(b"{oops".to_vec(), Some("application/json"), &none),
            Err(AdapterError::Protocol { .. })
        ));
        assert!(matches!(
            unparsed_of(b"[1] [2]".to_vec(), Some("application/json"), &none),
            Err(AdapterError::Protocol { .. })
        ));
        // Not UTF-8: as a value would be (text for a text type, an error for JSON).
        assert!(unparsed_of(vec![b'"', 0xff, b'"'], Some("application/json"), &none).is_err());
    }

    /// A body that echoes a credential the bridge holds is scrubbed as a value; a clean one stays
    /// text even when the bridge holds credentials.
    #[test]
    fn a_json_body_echoing_a_bridge_credential_is_scrubbed_as_a_value() {
        let mut forms = super::super::scrub::Forms::default();
        forms.add("Bearer s3cr3t-token");
        let scrubber = forms.build();
        // Clean, with and without escapes or `%` (decided by one pass over the bytes, or by
        // a walk over its strings).
        for clean in [
            "{\"login\": \"octocat\", \"n\": [1, 2]}",
            "{\"body\": \"a\\r\\nb\", \"url\": \"/search?q=a%20b\"}",
        ] {
            assert!(matches!(
                unparsed(clean, Some("application/json"), &scrubber),
                ToolValue::Json(json) if json.get() == clean
            ));
        }
        for echoed in [
            "{\"auth\": \"s3cr3t-token\"}",
            // Escaped, and as a key.
            "{\"a\": [\"\\u0073\\u0033cr3t-token\"]}",
            "{\"s3cr3t-token\": 1}",
            // Percent-encoded, in a text without escapes.
            "{\"q\": \"s3cr3t%2Dtoken\"}",
        ] {
            let ToolValue::Parsed(value) = unparsed(echoed, Some("application/json"), &scrubber)
            else {
                panic!("{echoed} stayed text");
            };
            assert_eq!(value, value_of(echoed.as_bytes(), None, &scrubber).unwrap());
            assert!(!value.to_string().contains("s3cr3t"), "{value}");
        }
    }

    #[test]
    fn error_bodies_are_trimmed_on_a_char_boundary() {
        let long = "é".repeat(3000);
        let text = error_text(long.as_bytes(), &Sent::default()).unwrap();
        assert!(text.len() <= ERROR_BODY_KEEP + '…'.len_utf8());
        assert!(text.ends_with('…'));
        assert_eq!(error_text(b"  ", &Sent::default()), None);
    }
}
