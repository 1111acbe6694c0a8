//! The base URL of an operation: the first of its `servers` (operation, then path item, then
//! document), with server variables replaced by their defaults, and a relative URL resolved
//! against the document's own URL when it was fetched over http(s). Relative URLs of a document
//! read from a file stay relative; the adapter needs a configured base URL for those.

use serde_json::Value;

use crate::openapi::refs::resolve_uri;

/// The base URL without a trailing `/`; `None` when the document names no usable server.
pub(crate) fn server_url(servers: Option<&Value>, base_uri: Option<&str>) -> Option<String> {
    let server = servers?.as_array()?.first()?;
    let template = server.get("url")?.as_str()?.trim();
    let url = substitute(template, server.get("variables"));
    let remote_base = base_uri.filter(|b| b.starts_with("http://") || b.starts_with("https://"));
    let url = if url.contains("://") {
        url
    } else if let Some(base) = remote_base {
        resolve_uri(Some(base), &url).unwrap_or(url)
    } else {
        url
    };
    let url = url.trim_end_matches('/');
    (!url.is_empty()).then(|| url.to_owned())
}

/// Replaces `{name}` by the variable's `default` (else its first `enum` value); an unknown
/// variable is left in place, so the adapter's error names it.
fn substitute(template: &str, variables: Option<&Value>) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let name = &after[..end];
        let var = variables.and_then(|v| v.get(name));
        let value = var
            .and_then(|v| v.get("default"))
            .or_else(|| var?.get("enum")?.get(0))
            .and_then(|d| match d {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            });
        match value {
            Some(v) => out.push_str(&v),
            None => {
                out.push('{');
                out.push_str(name);
                out.push('}');
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn variables_take_defaults_and_relative_urls_resolve() {
        let servers = json!([{"url": "https://{region}.api.io:{port}/v1/", "variables": {
            "region": {"default": "eu", "enum": ["eu", "us"]}, "port": {"enum": ["8443"]}}}]);
        assert_eq!(
            server_url(Some(&servers), None).as_deref(),
            Some("https://eu.api.io:8443/v1")
        );
        let rel = json!([{"url": "/api/v3"}]);
        assert_eq!(
            server_url(Some(&rel), Some("https://x.io/docs/openapi.json")).as_deref(),
            Some("https://x.io/api/v3")
        );
        assert_eq!(
            server_url(Some(&rel), Some("specs/openapi.json")).as_deref(),
            Some("/api/v3")
        );
        assert_eq!(server_url(None, None), None);
    }
}
