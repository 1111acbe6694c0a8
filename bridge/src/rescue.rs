//! Rescue: THE one place where errors become wire shapes (DESIGN.md §3, STYLE.md §2.3).
//!
//! Every failure a caller can see is decided here, in two tables:
//!
//! - [`ApiError`]: the call was **refused before anything was sent upstream** (bad body, unknown
//!   tool, missing context, invalid input, a source that is down or misconfigured). Each variant
//!   carries its status (400, 401, 403, 415, 422) and headers ([`ApiError::status`],
//!   [`ApiError::headers`]) and becomes the dialect's `ServerErrorResponse` or
//!   `ValidationErrorResponse` ([`ApiError::into_body`]).
//! - [`rescue`]: an [`AdapterError`] from the adapter is sorted into "refused before the call"
//!   (an `ApiError` again: the source was known down, or its configuration cannot work) or "failed
//!   in the tool" (a 200 `success: false` with a [`ToolError`] whose retry hints come from the
//!   retry table in [`tool_error`]). Nothing else in the bridge decides either.
//!
//! Following dropshot's split, `message` is written for people and models. Nothing a client sees
//! carries configuration (command lines, file paths, upstream URLs with keys), secrets or Rust
//! `Debug` output: `developer_message` holds only the top-level description of what happened,
//! and the full cause chain goes to the log ([`ApiError::log_detail`], [`cause_chain`]), written
//! once per request by the server's logging middleware.

use std::fmt::Write as _;

use axum::http::{HeaderName, HeaderValue, header};
use indexmap::IndexMap;
use otc_adapters::AdapterError;
use otc_mappings::otc::{
    MissingRequirements, ServerErrorResponse, ToolDefinition, ToolError, ToolIdError, ToolVersion,
    UnsupportedSchema, ValidationErrorResponse,
};
use serde_json::Value;

/// The longest caller-supplied text (a tool id, a parse error) echoed back in an answer; longer
/// ones are cut. A 100 KB `tool_id` must not come back as a 100 KB error.
const MAX_ECHO_CHARS: usize = 128;

/// A request that is refused before any tool is called.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApiError {
    /// Server authentication failed (401).
    #[error("not authenticated: {0}")]
    Unauthorized(String),
    /// The request came from a web page the operator did not allow, or named another host while
    /// the bridge listens on loopback (403).
    #[error("forbidden: {0}")]
    Forbidden(String),
    /// The body is not declared as JSON (415).
    #[error("the request body is not declared as JSON")]
    UnsupportedMediaType,
    /// The body is larger than the configured limit.
    #[error("request body is larger than the limit of {limit} bytes")]
    BodyTooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
    /// The body could not be read (the client stopped sending, or took too long).
    #[error("the request body could not be read: {0}")]
    BodyUnreadable(String),
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
        /// When the version asked for is a locked one that changed upstream: what changed.
        changed: Option<String>,
    },
    /// The tool changed upstream since it was locked (or is not in the lock) and its source
    /// refuses changes until the lock is updated.
    #[error("{message}")]
    Refused {
        /// What changed and what to do.
        message: String,
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
        /// Why a token that was given is not enough (the upstream refused it).
        refused: Option<String>,
    },
    /// The call's `call_id` (its idempotency key) was used by the same caller for another tool
    /// or input within the window; nothing was sent.
    #[error("call_id {call_id:?} was already used for another tool or input")]
    CallIdReused {
        /// The call id, as given.
        call_id: String,
    },
    /// The shared idempotency store (Redis) cannot be reached, and the bridge is configured to
    /// refuse rather than risk running a call twice. Worth retrying shortly.
    #[error("the idempotency store is unavailable: {reason}")]
    StateUnavailable {
        /// Why, for the log only.
        reason: String,
    },
    /// The tool's source is known to be down (restarting, failed); nothing was sent. Worth
    /// retrying shortly.
    #[error("source '{source_name}' is unavailable: {reason}")]
    Unavailable {
        /// The source.
        source_name: String,
        /// Why, for the log only: it may name a command line or a path.
        reason: String,
    },
    /// The bridge's configuration for this tool cannot work (found at call time: e.g. a
    /// credential that can never be placed). Not worth retrying: the operator must fix it.
    #[error("source '{source_name}' is misconfigured: {detail}")]
    Misconfigured {
        /// The source.
        source_name: String,
        /// What to fix, as the adapter described it (its top-level message: no cause chain).
        detail: String,
    },
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
    /// 400, 401, 403 or 415 with a `ServerErrorResponse`.
    Server(u16, ServerErrorResponse),
    /// 422 with a `ValidationErrorResponse`.
    Validation(ValidationErrorResponse),
}

impl ApiError {
    /// The status code of this error.
    pub fn status(&self) -> u16 {
        match self {
            Self::Unauthorized(_) => 401,
            Self::Forbidden(_) => 403,
            Self::UnsupportedMediaType => 415,
            Self::InvalidInput { .. } => 422,
            _ => 400,
        }
    }

    /// The headers this error adds to its response.
    pub fn headers(&self) -> Vec<(HeaderName, HeaderValue)> {
        match self {
            Self::Unauthorized(_) => {
                vec![(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"))]
            }
            Self::UnsupportedMediaType => {
                vec![(header::ACCEPT, HeaderValue::from_static("application/json"))]
            }
            _ => Vec::new(),
        }
    }

    /// What the log should say about this error beyond its status: the reasons a client is not
    /// told (why authentication failed, why a source is down). `None` when the status says it all.
    pub fn log_detail(&self) -> Option<String> {
        match self {
            Self::Unauthorized(_)
            | Self::Forbidden(_)
            | Self::BodyUnreadable(_)
            | Self::Unavailable { .. }
            | Self::StateUnavailable { .. }
            | Self::Misconfigured { .. } => Some(self.to_string()),
            _ => None,
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
            Self::Forbidden(reason) => server(format!("Forbidden: {reason}."), None),
            Self::UnsupportedMediaType => server(
                "The request body must be JSON: send it with 'Content-Type: application/json'.".to_owned(),
                None,
            ),
            Self::BodyTooLarge { limit } => server(
                format!("The request body is too large: the limit is {limit} bytes."),
                Some("raise limits.max_body_bytes (or --max-body-bytes) if larger inputs are expected".to_owned()),
            ),
            Self::BodyUnreadable(_) => server(
                "The request body could not be read: the client stopped sending it or took too long.".to_owned(),
                None,
            ),
            Self::MalformedBody(detail) => server(format!("The request body is not valid: {}", echo(&detail)), None),
            Self::MissingRequest => server(
                "The body must be {\"request\": {\"tool_id\": …}} or a bare call request with 'tool_id'.".to_owned(),
                None,
            ),
            Self::MissingToolId => server("'tool_id' is required, e.g. \"Calculator.Add@1.0.0\".".to_owned(), None),
            Self::BadToolId(err) => server(capitalise(&echo(&err.to_string())), None),
            Self::UnsupportedSchema(err) => server(capitalise(&echo(&err.to_string())), None),
            Self::UnknownTool { id, suggestion } => {
                let mut message = format!("Tool '{}' was not found.", echo(&id));
                if let Some(s) = suggestion {
                    let _ = write!(message, " Did you mean '{s}'?");
                }
                server(message, Some("GET /tools lists the tools this server offers".to_owned()))
            }
            Self::UnknownVersion { id, available, changed } => {
                let list = available.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
                let mut message = format!("Tool '{}' is not available in that version. Available versions: {list}.", echo(&id));
                if let Some(changed) = changed {
                    let _ = write!(message, " {}", capitalise(&changed));
                }
                server(message, Some("'@x' means exactly x.0.0; omit the version for the latest".to_owned()))
            }
            Self::Refused { message } => server(
                capitalise(&message),
                Some("the bridge serves locked tools only as they were reviewed".to_owned()),
            ),
            Self::MissingRequirements { tool, missing, authorization_ids, refused } => {
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
                let mut message = format!("Tool '{tool}' requires {} in the call's context.", parts.join(" and "));
                if let Some(why) = refused {
                    message.push_str(&format!(" The token given was not accepted: {why}; sign in again at the challenge's url."));
                }
                let body = ServerErrorResponse {
                    message,
                    developer_message: Some(
                        "put tokens in context.authorization[{id, token}], secrets in context.secrets[{id, value}], and context.user_id".to_owned(),
                    ),
                    // OTC 1.0 defines no `missing_requirements`, but its error body is open: a
                    // challenge is the only way its caller can go on, so it is sent there too.
                    missing_requirements: (with_challenges || !missing.authorization.is_empty())
                        .then_some(*missing),
                    ..Default::default()
                };
                ErrorBody::Server(status, body)
            }
            Self::CallIdReused { call_id } => server(
                format!(
                    "call_id '{}' was already used for a call with another tool or input; a new call needs a new call_id.",
                    echo(&call_id)
                ),
                Some("call_id is the call's idempotency key: a repeat with the same tool and input returns the first call's response".to_owned()),
            ),
            Self::StateUnavailable { .. } => server(
                "The call cannot be checked for duplicates right now; try again shortly.".to_owned(),
                Some("the idempotency store is unreachable and `idempotency.on_store_error` is `refuse`; the server log says why".to_owned()),
            ),
            Self::Unavailable { source_name, .. } => server(
                "The tool is temporarily unavailable; try again shortly.".to_owned(),
                Some(format!("source '{source_name}' is not ready (restarting or down); the server log says why")),
            ),
            Self::Misconfigured { source_name, detail } => server(
                "The server is not configured correctly for this tool; retrying will not help until its operator fixes the configuration.".to_owned(),
                Some(format!("source '{source_name}': {detail}")),
            ),
            Self::InvalidInput { parameter_errors } => ErrorBody::Validation(ValidationErrorResponse {
                message: "Some input parameters are invalid.".to_owned(),
                parameter_errors,
                ..Default::default()
            }),
        }
    }
}

/// Caller-supplied text as it may be echoed: at most [`MAX_ECHO_CHARS`] characters.
pub fn echo(text: &str) -> String {
    match text.char_indices().nth(MAX_ECHO_CHARS) {
        None => text.to_owned(),
        Some((cut, _)) => format!("{}… ({} bytes)", &text[..cut], text.len()),
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

/// What became of a call the adapter could not complete.
#[derive(Debug)]
pub enum Rescued {
    /// Nothing was sent upstream: the call is answered with this error (400).
    Refused(ApiError),
    /// The call failed in the tool: 200 with `success: false` and this error.
    Failed(ToolError),
}

/// Sorts an adapter failure into "refused before the call" or "failed in the tool"
/// (DESIGN.md §3). `source_name` names the tool's source for the log.
pub fn rescue(err: &AdapterError, tool: &ToolDefinition, source_name: &str) -> Rescued {
    match err {
        AdapterError::Unavailable { reason, .. } => Rescued::Refused(ApiError::Unavailable {
            source_name: source_name.to_owned(),
            reason: reason.clone(),
        }),
        AdapterError::Setup { message, .. } => Rescued::Refused(ApiError::Misconfigured {
            source_name: source_name.to_owned(),
            detail: message.clone(),
        }),
        // No token, or one the upstream refused: the standard's challenge (400), so the caller
        // can have its user sign in and call again.
        AdapterError::AuthorizationRequired { challenge, reason } => {
            Rescued::Refused(ApiError::MissingRequirements {
                tool: tool.id.to_string(),
                missing: Box::new(MissingRequirements {
                    authorization: vec![(**challenge).clone()],
                    ..Default::default()
                }),
                authorization_ids: Vec::new(),
                refused: Some(reason.clone()),
            })
        }
        _ => Rescued::Failed(tool_error(err, tool)),
    }
}

/// The retry table (DESIGN.md §3): every upstream failure after the call was sent becomes a
/// `ToolError`.
///
/// | failure | can_retry | extra |
/// |---|---|---|
/// | upstream 408/429/502/503/504, timeout, connection lost, unreachable, child exited | true | `retry_after_ms` from `Retry-After` |
/// | upstream 400/404/409/422, MCP invalid params, input that cannot be encoded | true | upstream's explanation in `additional_prompt_content` |
/// | upstream 401/403 | false | message names the credentials the tool uses |
/// | anything else (MCP `isError`, 5xx, protocol errors, oversized or malformed answer) | false | |
///
/// `developer_message` is the failure's own description, never its cause chain (which may
/// quote library internals); the chain goes to the log. Failures before the call
/// (`Unavailable`, `Setup`) never reach this table: [`rescue`] refuses them.
pub fn tool_error(err: &AdapterError, tool: &ToolDefinition) -> ToolError {
    let mut e = ToolError {
        developer_message: Some(err.to_string()),
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
        AdapterError::Protocol { .. } => {
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

/// The error and all its sources, `: `-separated (as rmcp's ErrorChain and ripgrep's `{:#}`),
/// for logs only. A source whose text its parent already quoted is not repeated.
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

/// A failed call as an MCP host sees it (DESIGN.md §8): a tool result with `isError: true`, a
/// text that starts with `Error: ` for the model to read and correct itself by, and the
/// standard's `ToolError` (retry hints included) for programs, as `structuredContent.error`.
/// JSON-RPC errors are kept for protocol faults; no failure of a call is one.
#[derive(Debug, Clone, PartialEq)]
pub struct McpFailure {
    /// The text block, starting with `Error: `.
    pub text: String,
    /// The `ToolError`, with the refusal's details (`parameter_errors`, `missing`) beside it.
    pub error: ToolError,
}

impl McpFailure {
    /// A failure in the tool (a 200 `success: false` on the OTC side): its message, and what
    /// the upstream said, unchanged, on the next line.
    pub fn from_tool_error(error: ToolError) -> Self {
        let mut text = format!("Error: {}", error.message);
        if let Some(more) = &error.additional_prompt_content {
            let _ = write!(text, "\n{more}");
        }
        Self { text, error }
    }
}

impl ApiError {
    /// This refusal as an MCP tool result's failure. `path` is the tool path as the host gave
    /// it; `closest` the served paths nearest to it, offered when it names no tool.
    pub fn into_mcp(self, path: &str, closest: &[String]) -> McpFailure {
        let mut error = ToolError::default();
        let text = match self {
            Self::UnknownTool { .. } | Self::MissingToolId | Self::BadToolId(_) => {
                let mut text = format!("Error: Tool not found: {}", echo(path));
                if !closest.is_empty() {
                    let _ = write!(text, "\nClosest tools: {}", closest.join(", "));
                    error.extra.insert("closest".to_owned(), closest.into());
                }
                text.push_str("\nUse search_tools to find a tool, then call it by its path.");
                text
            }
            Self::UnknownVersion {
                available, changed, ..
            } => {
                let list: Vec<String> = available.iter().map(ToString::to_string).collect();
                error
                    .extra
                    .insert("versions".to_owned(), list.clone().into());
                let mut text = format!(
                    "Error: Tool not found: {} (served versions: {}; '@x' means exactly x.0.0, no version means the latest)",
                    echo(path),
                    list.join(", ")
                );
                if let Some(changed) = changed {
                    let _ = write!(text, "\n{}", capitalise(&changed));
                }
                text
            }
            Self::MissingRequirements {
                missing,
                authorization_ids,
                ..
            } => {
                let mut ids: Vec<String> =
                    missing.authorization.iter().map(|c| c.id.clone()).collect();
                ids.extend(authorization_ids);
                ids.extend(missing.secrets.iter().map(|s| s.id.clone()));
                if missing.user_id == Some(true) {
                    ids.push("user_id".to_owned());
                }
                let quoted: Vec<String> = ids.iter().map(|id| format!("\"{id}\"")).collect();
                error.extra.insert("missing".to_owned(), ids.into());
                format!(
                    "Error: No credentials for {}. MCP calls carry no context: configure the credential on the bridge for this tool's source, or have the MCP host send it in an HTTP header named in that source's `context_headers` (e.g. `context_headers: {{GITHUB_TOKEN: X-GitHub-Token}}`).",
                    quoted.join(", ")
                )
            }
            Self::InvalidInput { parameter_errors } => {
                error.can_retry = true;
                let mut text = "Error: Invalid arguments:".to_owned();
                for (name, reason) in &parameter_errors {
                    let reason = match reason {
                        Value::String(s) => s.clone(),
                        Value::Array(items) => items
                            .iter()
                            .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_owned))
                            .collect::<Vec<_>>()
                            .join("; "),
                        other => other.to_string(),
                    };
                    let _ = write!(text, "\n- {name}: {reason}");
                }
                text.push_str("\nUse read_tool to see the input schema.");
                let names: Vec<&str> = parameter_errors.keys().map(String::as_str).collect();
                error.message = format!("Invalid arguments: {}.", names.join(", "));
                error.extra.insert(
                    "parameter_errors".to_owned(),
                    Value::Object(parameter_errors.into_iter().collect()),
                );
                text
            }
            Self::Unavailable { .. } | Self::StateUnavailable { .. } => {
                error.can_retry = true;
                "Error: The tool is temporarily unavailable; try again shortly.".to_owned()
            }
            other => {
                let message = match other.into_body(false) {
                    ErrorBody::Server(_, body) => body.message,
                    ErrorBody::Validation(body) => body.message,
                };
                format!("Error: {message}")
            }
        };
        if error.message.is_empty() {
            error.message = text
                .strip_prefix("Error: ")
                .unwrap_or(&text)
                .lines()
                .next()
                .unwrap_or_default()
                .to_owned();
        }
        McpFailure { text, error }
    }
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
            input_schema: json!({}).into(),
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

    #[test]
    fn issue_8_configuration_faults_are_refused_as_not_retryable() {
        let setup = AdapterError::setup("security scheme 'k' names an invalid header 'a b'");
        let Rescued::Refused(err) = rescue(&setup, &tool(), "pets") else {
            panic!("a configuration fault is refused before the call");
        };
        let ErrorBody::Server(400, body) = err.into_body(false) else {
            panic!("400");
        };
        assert!(body.message.contains("retrying will not help"), "{body:?}");
        assert!(!body.message.contains("try again"), "{body:?}");
        assert!(
            body.developer_message
                .unwrap()
                .contains("invalid header 'a b'")
        );
    }

    #[test]
    fn issue_8_unavailable_reasons_stay_in_the_log() {
        let down = AdapterError::Unavailable {
            source_name: "srv".to_owned(),
            reason: "restart failed: cannot start `srv --token hunter2` at /etc/x".to_owned(),
        };
        let Rescued::Refused(err) = rescue(&down, &tool(), "srv") else {
            panic!("refused");
        };
        assert!(err.log_detail().unwrap().contains("hunter2"));
        let ErrorBody::Server(_, body) = err.into_body(false) else {
            panic!("400");
        };
        let text = serde_json::to_string(&body).unwrap();
        assert!(
            !text.contains("hunter2") && !text.contains("/etc/x"),
            "{text}"
        );
    }

    #[test]
    fn issue_8_long_ids_are_not_echoed_in_full() {
        let id = "A".repeat(100_000);
        let ErrorBody::Server(_, body) = ApiError::UnknownTool {
            id,
            suggestion: None,
        }
        .into_body(false) else {
            panic!("400");
        };
        assert!(body.message.len() < 300, "{}", body.message.len());
    }
}
