//! One call's HTTP request: the compiled plan, filled in from the call's input and context.
//!
//! Omitted inputs take their declared defaults; path and query text come from [`super::style`];
//! credentials come from the bridge's own configuration first (a configured scheme satisfies the
//! requirement), then from the call's `context`, and are placed as the scheme says. The values
//! sent are remembered so that an upstream echoing them in an error body cannot leak them.

use std::borrow::Cow;
use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use otc_mappings::openapi::{CredentialPlacement, CredentialSource, CredentialUse, ParamLocation};
use otc_mappings::otc::CallContext;
use reqwest::RequestBuilder;
use reqwest::header::{ACCEPT, AUTHORIZATION, COOKIE, HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value};
use url::Url;

use super::body;
use super::client::CallClient;
use super::compile::{CompileError, CompiledPlan, PathPart};
use super::config::Secret;
use super::scrub::{Forms, Scrubber};
use super::style::{self, COMPONENT, header_value};
use crate::{AdapterError, TraceContext};

/// The credential values one request carried (borrowed), and whether each was HTTP Basic.
/// The forms they were sent in are only worked out when an error body has to be scrubbed.
#[derive(Default)]
pub(crate) struct Sent<'a>(Vec<(&'a str, bool)>);

impl Sent<'_> {
    /// The scrubber for every form of every credential sent.
    pub(crate) fn scrubber(&self) -> Scrubber {
        let mut forms = Forms::default();
        for &(secret, basic) in &self.0 {
            if basic {
                forms.add_basic(secret);
            } else {
                forms.add(secret);
            }
        }
        forms.build()
    }
}

/// Builds the request for one call.
pub(crate) fn prepare<'a>(
    client: &CallClient,
    compiled: &CompiledPlan,
    input: &Map<String, Value>,
    context: &'a CallContext,
    bridge: &'a BTreeMap<String, Secret>,
    trace_id: Option<&str>,
    trace_context: Option<&TraceContext>,
) -> Result<(RequestBuilder, Sent<'a>), AdapterError> {
    let plan = &*compiled.plan;
    let value_of = |index: usize| {
        let param = &plan.params[index];
        input.get(&param.input).or(param.default.as_ref())
    };

    let mut url = String::with_capacity(compiled.base.len() + plan.path.len() + 64);
    url.push_str(&compiled.base);
    for part in &compiled.path {
        match part {
            PathPart::Literal(text) => url.push_str(text),
            PathPart::Param(index) => {
                let Some(value) = value_of(*index) else {
                    return Err(AdapterError::BadInput {
                        message: format!(
                            "the path parameter '{}' is required",
                            plan.params[*index].input
                        ),
                    });
                };
                style::write_path(&mut url, &plan.params[*index], value);
            }
        }
    }

    // `.` and `..` are unreserved, so they are not encoded, and URL parsing would resolve them:
    // a value of `..` would reach another endpoint. Such a value cannot be sent as a segment.
    if url[compiled.base.len()..]
        .split('/')
        .any(|segment| segment == "." || segment == "..")
    {
        return Err(AdapterError::BadInput {
            message: "a path parameter cannot be '.' or '..'".to_owned(),
        });
    }

    let mut query = String::new();
    let mut cookies = String::new();
    let mut headers = HeaderMap::new();
    for (index, param) in plan.params.iter().enumerate() {
        let Some(value) = value_of(index) else {
            continue;
        };
        match param.location {
            ParamLocation::Path => {}
            ParamLocation::Query => style::write_query(&mut query, param, value),
            ParamLocation::Cookie => style::write_cookie(&mut cookies, param, value),
            ParamLocation::Header => {
                if let Some(name) = &compiled.header_names[index] {
                    let text = style::header_text(param, value);
                    let value = header_value(&text).ok_or_else(|| AdapterError::BadInput {
                        message: format!(
                            "the header parameter '{}' can only hold visible ASCII characters \
                             (no control characters, no line breaks, no non-ASCII text)",
                            param.input
                        ),
                    })?;
                    headers.append(name.clone(), value);
                }
            }
        }
    }

    let mut sent = Sent::default();
    for (usage, secret) in select_credentials(&plan.security, context, bridge)? {
        place(
            usage,
            secret,
            &mut query,
            &mut cookies,
            &mut headers,
            &mut sent,
        )?;
    }

    if !query.is_empty() {
        url.push('?');
        url.push_str(&query);
    }
    let url = Url::parse(&url).map_err(|e| AdapterError::BadInput {
        message: format!("the input makes an invalid URL: {e}"),
    })?;
    // Values are percent-encoded, so this holds by construction; checked anyway because it is
    // the promise that only the configured upstream is ever contacted.
    if url.origin() != compiled.origin {
        return Err(AdapterError::BadInput {
            message: "the input would send the request to another host".to_owned(),
        });
    }

    if !cookies.is_empty() {
        // Names and values are percent-encoded, so this holds by construction.
        let value = header_value(&cookies).ok_or_else(|| AdapterError::BadInput {
            message: "a cookie value holds characters a header cannot carry".to_owned(),
        })?;
        headers.insert(COOKIE, value);
    }
    if let Some(accept) = &compiled.accept {
        headers.insert(ACCEPT, accept.clone());
    }
    if let Some((name, value)) = trace_id.and_then(trace_header) {
        headers.insert(name, value);
    }
    // The bridge's upstream span, when traces are on: it replaces a `traceparent` copied from
    // `trace_id`, so the upstream's span is the child of the bridge's, not of the caller's.
    if let Some(context) = trace_context {
        if let Some(value) = header_value(&context.traceparent) {
            headers.insert(HeaderName::from_static("traceparent"), value);
        }
        if let Some(value) = context.tracestate.as_deref().and_then(header_value) {
            headers.insert(HeaderName::from_static("tracestate"), value);
        }
    }

    let request = client
        .request(compiled.method.clone(), url)
        .headers(headers);
    let request = body::attach(request, compiled, input)?;
    Ok((request, sent))
}

/// Picks the first alternative whose every credential is available, preferring one that sends
/// something over the empty alternative (optional security), so a caller's key is used.
fn select_credentials<'p, 'a>(
    security: &'p [Vec<CredentialUse>],
    context: &'a CallContext,
    bridge: &'a BTreeMap<String, Secret>,
) -> Result<Vec<(&'p CredentialUse, &'a str)>, AdapterError> {
    if security.is_empty() {
        return Ok(Vec::new());
    }
    let lookup = |usage: &CredentialUse| -> Option<&'a str> {
        if let Some(secret) = bridge.get(&usage.scheme) {
            return Some(secret.expose());
        }
        match usage.source {
            CredentialSource::Authorization => context.token(&usage.requirement_id),
            CredentialSource::Secret => context.secret(&usage.requirement_id),
            CredentialSource::Bridge => None,
        }
    };
    let mut missing = None;
    for alternative in security.iter().filter(|a| !a.is_empty()) {
        let found: Option<Vec<_>> = alternative
            .iter()
            .map(|usage| lookup(usage).map(|value| (usage, value)))
            .collect();
        match found {
            Some(found) => return Ok(found),
            None if missing.is_none() => {
                missing = alternative.iter().find(|u| lookup(u).is_none());
            }
            None => {}
        }
    }
    if security.iter().any(Vec::is_empty) {
        return Ok(Vec::new());
    }
    let message = match missing {
        Some(usage) => format!(
            "the credential '{}' (security scheme '{}') is missing from context",
            usage.requirement_id, usage.scheme
        ),
        None => "no credentials are available for this operation".to_owned(),
    };
    Err(AdapterError::BadInput { message })
}

fn place<'a>(
    usage: &CredentialUse,
    secret: &'a str,
    query: &mut String,
    cookies: &mut String,
    headers: &mut HeaderMap,
    sent: &mut Sent<'a>,
) -> Result<(), AdapterError> {
    let invalid = || AdapterError::BadInput {
        message: format!(
            "the credential '{}' can only hold visible ASCII characters",
            usage.requirement_id
        ),
    };
    sent.0.push((
        secret,
        matches!(usage.placement, CredentialPlacement::Basic),
    ));
    match &usage.placement {
        CredentialPlacement::Bearer => {
            let token = strip_scheme(secret, "Bearer");
            let mut value = header_value(&format!("Bearer {token}")).ok_or_else(invalid)?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        CredentialPlacement::Basic => {
            let given = strip_scheme(secret, "Basic");
            // `user:password` is encoded here; a value without ':' is already base64 (the
            // base64 alphabet has no ':').
            let encoded = if given.contains(':') {
                Cow::Owned(STANDARD.encode(given))
            } else {
                Cow::Borrowed(given)
            };
            let mut value = header_value(&format!("Basic {encoded}")).ok_or_else(invalid)?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        CredentialPlacement::Scheme { scheme } => {
            let token = strip_scheme(secret, scheme);
            let mut value = header_value(&format!("{scheme} {token}")).ok_or_else(invalid)?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        CredentialPlacement::Header { name } => {
            // Checked when the plan is compiled (the operation is skipped); reached only by a
            // plan built by hand. A fault of the document, not of the call: `Setup`.
            let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                CompileError::CredentialHeader {
                    scheme: usage.scheme.clone(),
                    name: name.clone(),
                }
            })?;
            let mut value = header_value(secret).ok_or_else(invalid)?;
            value.set_sensitive(true);
            headers.insert(name, value);
        }
        CredentialPlacement::Query { name } => {
            style::push_pair(query, name, secret, COMPONENT);
        }
        CredentialPlacement::Cookie { name } => style::push_cookie(cookies, name, secret),
    }
    Ok(())
}

/// `Bearer abc` given where `abc` is expected: the scheme word is not doubled.
fn strip_scheme<'a>(value: &'a str, scheme: &str) -> &'a str {
    let n = scheme.len();
    match (value.get(..n), value.get(n..n + 1)) {
        (Some(head), Some(" ")) if head.eq_ignore_ascii_case(scheme) => value[n + 1..].trim_start(),
        _ => value,
    }
}

/// `traceparent` when the id is a valid W3C trace context, else `X-Trace-Id`.
fn trace_header(trace_id: &str) -> Option<(HeaderName, HeaderValue)> {
    let value = header_value(trace_id)?;
    let name = if is_traceparent(trace_id) {
        HeaderName::from_static("traceparent")
    } else {
        HeaderName::from_static("x-trace-id")
    };
    Some((name, value))
}

/// `00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`, ids not all zero, version not `ff`.
fn is_traceparent(text: &str) -> bool {
    let parts: Vec<&str> = text.split('-').collect();
    let hex = |s: &str, len: usize| {
        s.len() == len
            && s.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    match parts.as_slice() {
        [version, trace, parent, flags] => {
            hex(version, 2)
                && *version != "ff"
                && hex(trace, 32)
                && trace.bytes().any(|b| b != b'0')
                && hex(parent, 16)
                && parent.bytes().any(|b| b != b'0')
                && hex(flags, 2)
                && (*version != "00" || text.len() == 55)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(scheme: &str, source: CredentialSource) -> CredentialUse {
        CredentialUse {
            scheme: scheme.into(),
            requirement_id: format!("{scheme}_id"),
            source,
            placement: CredentialPlacement::Bearer,
        }
    }

    fn context(secrets: &[(&str, &str)]) -> CallContext {
        let mut context = CallContext::default();
        for (id, value) in secrets {
            context.secrets.push(otc_mappings::otc::ToolSecret {
                id: (*id).into(),
                value: (*value).into(),
                extra: Map::new(),
            });
        }
        context
    }

    #[test]
    fn credentials_pick_the_first_complete_alternative() {
        let security = vec![
            vec![
                usage("a", CredentialSource::Secret),
                usage("b", CredentialSource::Secret),
            ],
            vec![usage("c", CredentialSource::Secret)],
        ];
        let bridge = BTreeMap::new();
        let given = context(&[("a_id", "1"), ("c_id", "3")]);
        let picked = select_credentials(&security, &given, &bridge).unwrap();
        assert_eq!(picked.len(), 1);
        assert_eq!((picked[0].0.scheme.as_str(), picked[0].1), ("c", "3"));

        let none = context(&[]);
        let err = select_credentials(&security, &none, &bridge).unwrap_err();
        assert!(err.to_string().contains("a_id"), "{err}");
    }

    #[test]
    fn bridge_credentials_win_and_optional_security_sends_nothing_when_absent() {
        let security = vec![vec![], vec![usage("k", CredentialSource::Bridge)]];
        let none = context(&[]);
        let empty = BTreeMap::new();
        assert!(
            select_credentials(&security, &none, &empty)
                .unwrap()
                .is_empty()
        );
        let bridge = BTreeMap::from([("k".to_owned(), Secret::new("from-env"))]);
        let picked = select_credentials(&security, &none, &bridge).unwrap();
        assert_eq!(picked[0].1, "from-env");
    }

    #[test]
    fn traceparent_is_recognised() {
        assert!(is_traceparent(
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        ));
        assert!(!is_traceparent(
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01"
        ));
        assert!(!is_traceparent(
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"
        ));
        assert!(!is_traceparent("abc-123"));
        let (name, _) = trace_header("abc-123").unwrap();
        assert_eq!(name, "x-trace-id");
    }

    #[test]
    fn scheme_words_are_not_doubled() {
        assert_eq!(strip_scheme("Bearer abc", "Bearer"), "abc");
        assert_eq!(strip_scheme("bearer  abc", "Bearer"), "abc");
        assert_eq!(strip_scheme("abc", "Bearer"), "abc");
        assert_eq!(strip_scheme("Bearerabc", "Bearer"), "Bearerabc");
    }

    #[test]
    fn sent_credentials_are_scrubbed_in_their_sent_forms() {
        let sent = Sent(vec![("s3cret", false), ("u:pw0rd", true)]);
        let text = "bad key s3cret (dTpwdzByZA==, pw0rd)";
        assert_eq!(
            sent.scrubber().scrub_str(text),
            "bad key [redacted] ([redacted], [redacted])"
        );
    }
}
