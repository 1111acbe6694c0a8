//! Per-operation work done once, at build time: the base URL resolved, the path template split,
//! header names and media types parsed. A call then only fills in values.
//!
//! A plan that cannot be compiled (a path placeholder without a parameter, a header name that is
//! not a valid HTTP token, a security scheme whose credential could never be placed) makes its
//! tool unusable; the adapter drops that tool with a diagnostic that says what to fix, rather
//! than failing every call to it with an error the caller cannot act on.

use std::sync::Arc;

use otc_mappings::openapi::{CredentialPlacement, ParamLocation, RequestPlan};
use percent_encoding::utf8_percent_encode;
use reqwest::Method;
use reqwest::header::{HeaderName, HeaderValue};
use url::Url;

use super::style::PATH_LITERAL;
use crate::AdapterError;

/// One piece of a path template.
#[derive(Debug)]
pub(crate) enum PathPart {
    /// Text of the template, already encoded.
    Literal(String),
    /// The parameter at this index of `plan.params`.
    Param(usize),
}

/// A request plan with everything that does not depend on the call worked out.
#[derive(Debug)]
pub(crate) struct CompiledPlan {
    /// The plan as mapped.
    pub(crate) plan: Arc<RequestPlan>,
    /// The HTTP method.
    pub(crate) method: Method,
    /// The base URL, without a trailing `/`.
    pub(crate) base: String,
    /// The base URL's origin: the only one calls may reach.
    pub(crate) origin: url::Origin,
    /// The path template, split.
    pub(crate) path: Vec<PathPart>,
    /// For each parameter (same index as `plan.params`), its header name when it is a header.
    pub(crate) header_names: Vec<Option<HeaderName>>,
    /// `Accept`, from the plan's success media types.
    pub(crate) accept: Option<HeaderValue>,
    /// `Content-Type` of the body, when there is one (multipart sets its own).
    pub(crate) content_type: Option<HeaderValue>,
}

/// Why an operation's request plan cannot be sent. From [`CompiledPlan::new`] it drops the tool
/// with a `Skipped` diagnostic; from [`BaseResolver::resolve`](super::BaseResolver) (a server
/// URL that cannot be used) it fails the build, and `base_url` is what to set. The text says
/// what to fix in the document or the config.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CompileError {
    #[error("'{0}' is not an HTTP method")]
    Method(String),
    #[error("header parameter '{0}' is not a valid name")]
    HeaderName(String),
    /// A security scheme's `name` that cannot be an HTTP header name.
    #[error(
        "security scheme '{scheme}' puts its credential in the header '{}', which is not a valid \
         HTTP header name: fix the scheme's `name` in the document",
        name.escape_debug()
    )]
    CredentialHeader { scheme: String, name: String },
    /// An `http` security scheme whose `scheme` is not an RFC 9110 token.
    #[error(
        "security scheme '{scheme}' names the HTTP authentication scheme '{}', which is not \
         a valid scheme word: fix the scheme's `scheme` in the document",
        word.escape_debug()
    )]
    SchemeWord { scheme: String, word: String },
    #[error("response media types '{0}' are not a valid Accept")]
    Accept(String),
    #[error("'{0}' is not a valid media type")]
    MediaType(String),
    #[error("unclosed '{{' in path '{0}'")]
    UnclosedBrace(String),
    #[error("path placeholder '{{{0}}}' has no path parameter")]
    NoPathParam(String),
    /// `base_url`, or a server URL, that is not an absolute http(s) URL.
    #[error("'{0}' is not an http(s) URL")]
    NotHttp(Url),
    // The server URL errors below name the operation: they fail the whole build, so the message
    // must say which operation's server is at fault.
    #[error("{operation}: '{url}' is not an http(s) URL: set base_url")]
    ServerNotHttp { operation: String, url: Url },
    #[error("{operation}: server URL '{server}' cannot be resolved: {source}")]
    ServerUnjoinable {
        operation: String,
        server: String,
        #[source]
        source: url::ParseError,
    },
    /// A relative server URL (`server`, `None` when the document gives none) and nothing to
    /// resolve it against.
    #[error(
        "{operation}: the document gives no absolute server URL{} and was not loaded from a \
         URL: set base_url",
        server.as_deref().map(|s| format!(" (only '{s}')")).unwrap_or_default()
    )]
    NoServerUrl {
        operation: String,
        server: Option<String>,
    },
    #[error("{operation}: server URL '{server}' is invalid ({source}): set base_url")]
    ServerInvalid {
        operation: String,
        server: String,
        #[source]
        source: url::ParseError,
    },
}

/// The message is the error's text. It is not also kept as the source: the message already says
/// all of it, and the binary prints errors with their sources (`{:#}`), so it would read twice.
impl From<CompileError> for AdapterError {
    fn from(error: CompileError) -> Self {
        Self::setup(error.to_string())
    }
}

impl CompiledPlan {
    /// Compiles `plan` to be sent to `base`. The error says why the operation cannot be served.
    pub(crate) fn new(plan: Arc<RequestPlan>, base: &Url) -> Result<Self, CompileError> {
        let method = Method::from_bytes(plan.method.as_bytes())
            .map_err(|_| CompileError::Method(plan.method.clone()))?;
        let path = split_path(&plan)?;
        let header_names = plan
            .params
            .iter()
            .map(|p| match p.location {
                ParamLocation::Header => HeaderName::from_bytes(p.name.as_bytes())
                    .map(Some)
                    .map_err(|_| CompileError::HeaderName(p.name.clone())),
                _ => Ok(None),
            })
            .collect::<Result<Vec<_>, _>>()?;
        check_credentials(&plan)?;
        let accept = if plan.accept.is_empty() {
            None
        } else {
            let joined = plan.accept.join(", ");
            Some(HeaderValue::from_str(&joined).map_err(|_| CompileError::Accept(joined))?)
        };
        let content_type = match &plan.body {
            Some(body) => Some(
                HeaderValue::from_str(&body.media_type)
                    .map_err(|_| CompileError::MediaType(body.media_type.clone()))?,
            ),
            None => None,
        };
        let base_text = base.as_str().trim_end_matches('/').to_owned();
        Ok(Self {
            method,
            base: base_text,
            origin: base.origin(),
            path,
            header_names,
            accept,
            content_type,
            plan,
        })
    }
}

/// Every credential of every alternative can be placed: a header name is a valid HTTP token, an
/// `Authorization` scheme word is a token (RFC 9110 §11.1).
fn check_credentials(plan: &RequestPlan) -> Result<(), CompileError> {
    for usage in plan.security.iter().flatten() {
        match &usage.placement {
            CredentialPlacement::Header { name }
                if HeaderName::from_bytes(name.as_bytes()).is_err() =>
            {
                return Err(CompileError::CredentialHeader {
                    scheme: usage.scheme.clone(),
                    name: name.clone(),
                });
            }
            CredentialPlacement::Scheme { scheme } if !is_token(scheme) => {
                return Err(CompileError::SchemeWord {
                    scheme: usage.scheme.clone(),
                    word: scheme.clone(),
                });
            }
            _ => {}
        }
    }
    Ok(())
}

/// An RFC 9110 token: one or more `tchar`s.
fn is_token(text: &str) -> bool {
    !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Splits `/pets/{petId}/photos` into literals and parameter references.
fn split_path(plan: &RequestPlan) -> Result<Vec<PathPart>, CompileError> {
    let mut parts = Vec::new();
    let mut rest = plan.path.as_str();
    if !rest.starts_with('/') {
        parts.push(PathPart::Literal("/".to_owned()));
    }
    while let Some(open) = rest.find('{') {
        let (literal, tail) = rest.split_at(open);
        let Some(close) = tail.find('}') else {
            return Err(CompileError::UnclosedBrace(plan.path.clone()));
        };
        let name = &tail[1..close];
        if !literal.is_empty() {
            parts.push(PathPart::Literal(
                utf8_percent_encode(literal, PATH_LITERAL).to_string(),
            ));
        }
        let index = plan
            .params
            .iter()
            .position(|p| p.location == ParamLocation::Path && p.name == name)
            .ok_or_else(|| CompileError::NoPathParam(name.to_owned()))?;
        parts.push(PathPart::Param(index));
        rest = &tail[close + 1..];
    }
    if !rest.is_empty() {
        parts.push(PathPart::Literal(
            utf8_percent_encode(rest, PATH_LITERAL).to_string(),
        ));
    }
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use otc_mappings::openapi::{ParamPlan, ParamStyle};

    use super::*;

    fn plan(path: &str) -> Arc<RequestPlan> {
        Arc::new(RequestPlan {
            operation: format!("GET {path}"),
            method: "GET".into(),
            path: path.into(),
            server_url: None,
            params: vec![ParamPlan {
                input: "id".into(),
                name: "id".into(),
                location: ParamLocation::Path,
                style: ParamStyle::Simple,
                explode: false,
                allow_reserved: false,
                required: true,
                default: None,
            }],
            body: None,
            security: Vec::new(),
            accept: vec!["application/json".into()],
            operation_id: None,
            tags: Vec::new(),
        })
    }

    #[test]
    fn path_template_is_split() {
        let base = Url::parse("http://h/v1/").unwrap();
        let compiled = CompiledPlan::new(plan("/a b/{id}/c"), &base).unwrap();
        assert_eq!(compiled.base, "http://h/v1");
        let text: Vec<String> = compiled
            .path
            .iter()
            .map(|p| match p {
                PathPart::Literal(s) => s.clone(),
                PathPart::Param(i) => format!("<{i}>"),
            })
            .collect();
        assert_eq!(text, ["/a%20b/", "<0>", "/c"]);
    }

    #[test]
    fn unknown_placeholder_is_reported() {
        let base = Url::parse("http://h").unwrap();
        let err = CompiledPlan::new(plan("/x/{other}"), &base)
            .unwrap_err()
            .to_string();
        assert_eq!(err, "path placeholder '{other}' has no path parameter");
    }
}
