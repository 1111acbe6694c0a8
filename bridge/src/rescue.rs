//! Rescue: THE one place where errors become wire shapes (DESIGN.md §3, STYLE.md §2.3).
//!
//! Two kinds of failure reach a caller. [`ApiError`]s happen before a tool is called (bad body,
//! unknown tool, missing context, invalid input) and become 400, 401 or 422 responses.
//! [`AdapterError`]s happen once a call went upstream and become a 200 `success: false` with a
//! [`ToolError`], whose retry hints are decided by the single table in [`tool_error`].
//!
//! Following dropshot's split, `message` is written for people and models and never carries
//! upstream internals or secrets; `developer_message` carries the cause chain for logs.

use std::fmt::Write as _;

use indexmap::IndexMap;
use otc_adapters::AdapterError;
use otc_mappings::otc::{
    MissingRequirements, ServerErrorResponse, ToolDefinition, ToolError, ToolIdError, ToolVersion,
    UnsupportedSchema, ValidationErrorResponse,
};
use serde_json::Value;

/// A request that fails before any tool is called.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApiError {
    /// Server authentication failed (401).
    #[error("{0}")]
    Unauthorized(String),
    /// The body is larger than the configured limit.
    #[error("request body is larger than the limit of {limit} bytes")]
    BodyTooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
    /// The body could not be read as JSON of the expected shape.
    #[error("malformed request body: {0}")]
    MalformedBody(String),
    /// Neither `request` (wrapped form) nor `tool_id` (flat form) is present.
    #[error("the body has neither 'request' nor 'tool_id'")]
    MissingRequest,
    /// `tool_id` is missing or empty.
    #[error("'tool_id' is required")]
    MissingToolId,
    /// `tool_id` is not a tool id.
    #[error(transparent)]
    BadToolId(#[from] ToolIdError),
    /// `$schema` or `OXP-Version` names a version we do not speak.
    #[error(transparent)]
    UnsupportedSchema(#[from] UnsupportedSchema),
    /// No tool has that name.
    #[error("tool '{id}' was not found")]
    UnknownTool {
        /// The id as requested.
        id: String,
        /// A served id that differs only in letter case, if any.
        suggestion: Option<String>,
    },
    /// The tool exists, but not in the requested version.
    #[error("tool '{id}' is not available in the requested version")]
    UnknownVersion {
        /// The id as requested.
        id: String,
        /// The versions served.
        available: Vec<ToolVersion>,
    },
    /// `context` lacks what the tool's `requirements` name.
    #[error("the call is missing context the tool requires")]
    MissingRequirements {
        /// The tool's id.
        tool: String,
        /// What is missing (boxed: it is large and rare).
        missing: Box<MissingRequirements>,
        /// Authorization ids required without a known challenge URL.
        authorization_ids: Vec<String>,
    },
    /// The upstream is known to be down; nothing was sent.
    #[error("{0}")]
    Unavailable(String),
    /// `input` does not match the tool's input schema (422).
    #[error("some input parameters are invalid")]
    InvalidInput {
        /// One message per top-level parameter.
        parameter_errors: IndexMap<String, Value>,
    },
}

/// The status and body an [`ApiError`] becomes (before dialect-specific wrapping).
#[derive(Debug)]
pub enum ErrorBody {
    /// 400 or 401 with a `ServerErrorResponse`.
    Server(u16, ServerErrorResponse),
    /// 422 with a `ValidationErrorResponse`.
    Validation(ValidationErrorResponse),
}

impl ApiError {
    /// The status code of this error.
    pub fn status(&self) -> u16 {
        match self {
            Self::Unauthorized(_) => 401,
            Self::InvalidInput { .. } => 422,
            _ => 400,
        }
    }

    /// The wire body. `with_challenges` is true in the OXP dialects, which define
    /// `missing_requirements`.
    pub fn into_body(self, with_challenges: bool) -> ErrorBody {
        let status = self.status();
        let server = |message: String, developer_message: Option<String>| {
            ErrorBody::Server(
                status,
                ServerErrorResponse {
                    message,
                    developer_message,
                    ..Default::default()
                },
            )
        };
        match self {
            Self::Unauthorized(reason) => server("Authentication required: send a valid bearer token or API key.".to_owned(), Some(reason)),
            Self::BodyTooLarge { limit } => server(
                format!("The request body is too large: the limit is {limit} bytes."),
                Some("raise limits.max_body_bytes (or --max-body-bytes) if larger inputs are expected".to_owned()),
            ),
            Self::MalformedBody(detail) => server(format!("The request body is not valid: {detail}"), None),
            Self::MissingRequest => server(
                "The body must be {\"request\": {\"tool_id\": …}} or a bare call request with 'tool_id'.".to_owned(),
                None,
            ),
            Self::MissingToolId => server("'tool_id' is required, e.g. \"Calculator.Add@1.0.0\".".to_owned(), None),
            Self::BadToolId(err) => server(capitalise(&err.to_string()), None),
            Self::UnsupportedSchema(err) => server(capitalise(&err.to_string()), None),
            Self::UnknownTool { id, suggestion } => {
                let mut message = format!("Tool '{id}' was not found.");
                if let Some(s) = suggestion {
                    let _ = write!(message, " Did you mean '{s}'?");
                }
                server(message, Some("GET /tools lists the tools this server offers".to_owned()))
            }
            Self::UnknownVersion { id, available } => {
                let list = available.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
                server(
                    format!("Tool '{id}' is not available in that version. Available versions: {list}."),
                    Some("'@x' means exactly x.0.0; omit the version for the latest".to_owned()),
                )
            }
            Self::MissingRequirements { tool, missing, authorization_ids } => {
                let mut parts = Vec::new();
                let mut auth: Vec<&str> = missing.authorization.iter().map(|c| c.id.as_str()).collect();
                auth.extend(authorization_ids.iter().map(String::as_str));
                if !auth.is_empty() {
                    parts.push(format!("authorization for {}", auth.join(", ")));
                }
                if !missing.secrets.is_empty() {
                    let ids: Vec<&str> = missing.secrets.iter().map(|s| s.id.as_str()).collect();
                    parts.push(format!("secret {}", ids.join(", ")));
                }
                if missing.user_id == Some(true) {
                    parts.push("a user_id".to_owned());
                }
                let message = format!("Tool '{tool}' requires {} in the call's context.", parts.join(" and "));
                let body = ServerErrorResponse {
                    message,
                    developer_message: Some(
                        "put tokens in context.authorization[{id, token}], secrets in context.secrets[{id, value}], and context.user_id".to_owned(),
                    ),
                    missing_requirements: with_challenges.then_some(*missing),
                    ..Default::default()
                };
                ErrorBody::Server(status, body)
            }
            Self::Unavailable(reason) => server(
                "The tool is temporarily unavailable; try again shortly.".to_owned(),
                Some(reason),
            ),
            Self::InvalidInput { parameter_errors } => ErrorBody::Validation(ValidationErrorResponse {
                message: "Some input parameters are invalid.".to_owned(),
                parameter_errors,
                ..Default::default()
            }),
        }
    }
}

fn capitalise(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => {
            let mut out: String = first.to_uppercase().collect();
            out.push_str(chars.as_str());
            if !out.ends_with('.') {
                out.push('.');
            }
            out
        }
        None => String::new(),
    }
}

/// The retry table (DESIGN.md §3): every upstream failure becomes a `ToolError`.
///
/// | failure | can_retry | extra |
/// |---|---|---|
/// | upstream 408/429/502/503/504, timeout, connection lost, unreachable, child exited | true | `retry_after_ms` from `Retry-After` |
/// | upstream 400/404/409/422, MCP invalid params, input that cannot be encoded | true | upstream's explanation in `additional_prompt_content` |
/// | upstream 401/403 | false | message names the credentials the tool uses |
/// | anything else (MCP `isError`, 5xx, protocol errors, oversized response) | false | |
pub fn tool_error(err: &AdapterError, tool: &ToolDefinition) -> ToolError {
    let developer_message = Some(cause_chain(err));
    let mut e = ToolError {
        developer_message,
        ..Default::default()
    };
    match err {
        AdapterError::Timeout { .. } => {
            e.message = "The tool did not answer in time.".to_owned();
            e.can_retry = true;
        }
        AdapterError::Unreachable { .. } => {
            e.message = "The service behind this tool cannot be reached right now.".to_owned();
            e.can_retry = true;
        }
        AdapterError::ConnectionLost { .. } | AdapterError::ChildExited { .. } => {
            e.message = "The connection to the tool was lost during the call.".to_owned();
            e.can_retry = true;
        }
        AdapterError::Unavailable { .. } => {
            e.message = "The tool is temporarily unavailable.".to_owned();
            e.can_retry = true;
        }
        AdapterError::UpstreamStatus {
            status,
            retry_after,
            body,
        } => {
            let reason = http_reason(*status);
            match status {
                408 | 429 | 502 | 503 | 504 => {
                    e.message = format!(
                        "The service behind this tool is busy or unavailable (HTTP {status} {reason})."
                    );
                    e.can_retry = true;
                    e.retry_after_ms =
                        retry_after.map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
                }
                400 | 404 | 409 | 422 => {
                    e.message =
                        format!("The service rejected the request (HTTP {status} {reason}).");
                    e.can_retry = true;
                    e.additional_prompt_content = Some(match body {
                        Some(body) => format!("The service said: {body}"),
                        None => format!(
                            "The service answered HTTP {status} {reason}; check the arguments."
                        ),
                    });
                }
                401 | 403 => {
                    let creds = credential_names(tool);
                    e.message = if creds.is_empty() {
                        format!(
                            "The service refused access (HTTP {status} {reason}); it needs credentials this tool does not declare."
                        )
                    } else {
                        format!(
                            "The service refused the credentials (HTTP {status} {reason}); check {creds} in the call's context."
                        )
                    };
                }
                _ => {
                    e.message =
                        format!("The service behind this tool failed (HTTP {status} {reason}).")
                }
            }
        }
        AdapterError::ToolFailed { message, .. } => e.message = message.clone(),
        AdapterError::InvalidArguments { message } => {
            e.message = "The tool rejected its arguments.".to_owned();
            e.can_retry = true;
            e.additional_prompt_content = Some(message.clone());
        }
        AdapterError::BadInput { message } => {
            e.message = "The input cannot be sent to the tool.".to_owned();
            e.can_retry = true;
            e.additional_prompt_content = Some(message.clone());
        }
        AdapterError::ResponseTooLarge { .. } => {
            e.message = "The tool's answer is too large to return.".to_owned()
        }
        AdapterError::Protocol { .. } | AdapterError::Setup { .. } => {
            e.message =
                "The tool failed because its service answered in an unexpected way.".to_owned();
        }
        _ => e.message = "The tool failed.".to_owned(),
    }
    e
}

fn credential_names(tool: &ToolDefinition) -> String {
    let Some(req) = &tool.requirements else {
        return String::new();
    };
    let mut names: Vec<String> = req
        .authorization
        .iter()
        .map(|a| format!("authorization '{}'", a.id))
        .collect();
    names.extend(req.secrets.iter().map(|s| format!("secret '{}'", s.id)));
    names.join(", ")
}

/// The error and all its sources, `: `-separated (as rmcp's ErrorChain and ripgrep's `{:#}`).
/// A source whose text its parent already quoted is not repeated.
pub fn cause_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut out = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            let _ = write!(out, ": {text}");
        }
        source = s.source();
    }
    out
}

fn http_reason(status: u16) -> &'static str {
    http::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use otc_mappings::otc::{ToolId, ToolVersion};
    use serde_json::json;

    use super::*;

    fn tool() -> ToolDefinition {
        ToolDefinition {
            id: ToolId::exact("Kit", "Tool", ToolVersion::new(1, 0, 0)),
            name: "Kit_Tool".to_owned(),
            description: "d".to_owned(),
            version: ToolVersion::new(1, 0, 0),
            input_schema: json!({}),
            output_schema: None,
            requirements: None,
        }
    }

    #[test]
    fn retry_table() {
        let status = |s, ra| AdapterError::UpstreamStatus {
            status: s,
            retry_after: ra,
            body: Some("bad id".to_owned()),
        };
        let e = tool_error(&status(429, Some(Duration::from_secs(2))), &tool());
        assert!(e.can_retry);
        assert_eq!(e.retry_after_ms, Some(2000));
        let e = tool_error(&status(404, None), &tool());
        assert!(e.can_retry);
        assert!(e.additional_prompt_content.unwrap().contains("bad id"));
        assert!(!tool_error(&status(401, None), &tool()).can_retry);
        assert!(!tool_error(&status(500, None), &tool()).can_retry);
        assert!(
            tool_error(
                &AdapterError::Timeout {
                    elapsed: Duration::from_secs(1)
                },
                &tool()
            )
            .can_retry
        );
        let failed = AdapterError::ToolFailed {
            message: "no such doorbell".to_owned(),
            details: None,
        };
        let e = tool_error(&failed, &tool());
        assert!(!e.can_retry);
        assert_eq!(e.message, "no such doorbell");
    }
}
