//! Rescue: THE one place where errors become what a caller is told (DESIGN.md §3, STYLE.md §2.3).
//!
//! Every failure a caller can see is decided here, in two tables:
//!
//! - [`ApiError`] → [`Refusal`]: the call was **refused before anything was sent upstream** (bad
//!   body, unknown tool, missing context, invalid input, a source that is down or misconfigured,
//!   an unknown path). One match ([`Refusal::from`]) gives each its status (400, 401, 403, 404,
//!   415, 422), words, log line and headers; the edges only render the [`Refusal`]: the OTC edge
//!   as the dialect's `ServerErrorResponse` or `ValidationErrorResponse`, the MCP edge as a tool
//!   result with `isError: true`.
//! - [`rescue`]: an [`AdapterError`] from the adapter is sorted into "refused before the call"
//!   (an `ApiError` again: the source was known down, or its configuration cannot work) or "failed
//!   in the tool" (a 200 `success: false` with a [`ToolError`] whose retry hints come from the
//!   retry table in [`tool_error`]). Nothing else in the bridge decides either.
//!
//! Following dropshot's split, `message` is written for people and models. Nothing a client sees
//! carries configuration (command lines, file paths, upstream URLs with keys), secrets or Rust
//! `Debug` output: `developer_message` holds only the top-level description of what happened,
//! and the full cause chain goes to the log ([`Refusal::log`], [`cause_chain`]), written once per
//! request by the server's logging middleware.

use std::fmt::Write as _;

use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use indexmap::IndexMap;
use otc_adapters::AdapterError;
use otc_mappings::otc::{
    MissingRequirements, ToolDefinition, ToolError, ToolIdError, ToolVersion, UnsupportedSchema,
};
use serde_json::Value;

/// The longest caller-supplied text (a tool id, a parse error) echoed back in an answer; longer
/// ones are cut. A 100 KB `tool_id` must not come back as a 100 KB error.
const MAX_ECHO_CHARS: usize = 128;

/// A request that is refused before any tool is called.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum ApiError {
    /// Server authentication failed (401).
    #[error("not authenticated: {0}")]
    Unauthorized(String),
    /// The request came from a web page the operator did not allow, or named another host while
    /// the bridge listens on loopback (403).
    #[error("forbidden: {0}")]
    Forbidden(String),
    /// A policy refuses this call of a tool the caller may see (403). `reason` is the deciding
    /// rule's `reason` from the configuration (never its expression); `rule` names the rule for
    /// the log.
    #[error("refused by policy {rule}")]
    NotPermitted {
        /// What the caller is told, when the rule says.
        reason: Option<String>,
        /// The rule's name or position, or `no rule allows it`.
        rule: String,
    },
    /// A rate limit or concurrency cap is reached (429, retryable after `wait`). `rule` names
    /// it for the log; empty when the limit store could not be asked (`on_store_error: refuse`).
    #[error("limited by rate limit {rule} for {wait:?}")]
    RateLimited {
        /// The limit's name or position.
        rule: String,
        /// How long until the call would pass.
        wait: std::time::Duration,
    },
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
    /// No endpoint has the request's path (404).
    #[error("no endpoint has this path")]
    NoSuchEndpoint,
}

/// What a caller is told about a refusal, decided once for every edge (dropshot's `HttpError`
/// is the model): the status, the words for people and models, the words for developers, what
/// only the log may see, the headers, and the details an edge may render in its own shape.
///
/// Built from an [`ApiError`] in one match ([`Refusal::from`]); the OTC edge renders it as a
/// `ServerErrorResponse` or `ValidationErrorResponse` (`server::Reply::error`), the MCP edge as
/// a tool result with `isError: true` (`server::mcp`). Neither looks at the error again.
#[derive(Debug)]
pub(crate) struct Refusal {
    /// The HTTP status (400, 401, 403, 404, 415 or 422).
    pub status: StatusCode,
    /// For people and models: what went wrong and what to do. Safe to show: no configuration,
    /// no secrets, caller-supplied text cut to [`MAX_ECHO_CHARS`].
    pub message: String,
    /// For the caller's developers: how to fix the request. Never a cause chain.
    pub developer_message: Option<String>,
    /// For the log only: what the caller is not told (why authentication failed, why a source
    /// is down). `None` when the status says it all.
    pub log: Option<String>,
    /// Headers the answer carries (`WWW-Authenticate`, `Accept`).
    pub headers: HeaderMap,
    /// Whether the same call may succeed later (a source restarting) or with corrected input;
    /// the MCP edge's `can_retry`.
    pub can_retry: bool,
    /// The details an edge renders in its own shape.
    pub extra: Extra,
}

/// The details of a [`Refusal`] beyond its words, which each edge renders its own way.
#[derive(Debug, Default)]
#[non_exhaustive]
pub(crate) enum Extra {
    /// Nothing beyond the words.
    #[default]
    None,
    /// The call names no tool (no id, not an id, or an unknown one); MCP offers the closest.
    NoSuchTool {
        /// A served id that differs only in letter case, if any.
        suggestion: Option<String>,
    },
    /// The tool exists, but not in the version asked for.
    Versions {
        /// The versions served.
        available: Vec<String>,
        /// What changed upstream, when the version asked for is a locked one; a sentence.
        changed: Option<String>,
    },
    /// `context` lacks what the tool requires.
    Missing {
        /// What is missing, as the OXP dialects' `missing_requirements`.
        missing: Box<MissingRequirements>,
        /// Every missing id (authorizations, secrets, `user_id`), for hosts without context.
        ids: Vec<String>,
    },
    /// `input` fails the tool's input schema: one message per top-level parameter.
    ParameterErrors(IndexMap<String, Value>),
    /// The call may be made again after this long (the standard's `retry_after_ms`).
    RetryAfter {
        /// Milliseconds.
        ms: u64,
    },
}

impl Refusal {
    /// A refusal with `status` and `message`, and nothing else yet.
    fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            developer_message: None,
            log: None,
            headers: HeaderMap::new(),
            can_retry: false,
            extra: Extra::None,
        }
    }

    /// A 400 with `message`: the standard's "refused before the tool is called".
    fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    fn developer(mut self, developer_message: impl Into<String>) -> Self {
        self.developer_message = Some(developer_message.into());
        self
    }

    fn log(mut self, log: String) -> Self {
        self.log = Some(log);
        self
    }

    fn header(mut self, name: HeaderName, value: &'static str) -> Self {
        self.headers.insert(name, HeaderValue::from_static(value));
        self
    }

    fn retry(mut self) -> Self {
        self.can_retry = true;
        self
    }

    fn extra(mut self, extra: Extra) -> Self {
        self.extra = extra;
        self
    }
}

impl From<ApiError> for Refusal {
    /// THE table: every refusal's status, words, log line and headers.
    fn from(err: ApiError) -> Self {
        // Bound by reference where the log needs the whole error's text.
        match err {
            ApiError::Unauthorized(ref reason) => Refusal::new(
                StatusCode::UNAUTHORIZED,
                "Authentication required: send a valid bearer token or API key.",
            )
            .developer(reason.clone())
            .log(err.to_string())
            .header(header::WWW_AUTHENTICATE, "Bearer"),
            ApiError::Forbidden(ref reason) => {
                Refusal::new(StatusCode::FORBIDDEN, format!("Forbidden: {reason}."))
                    .log(err.to_string())
            }
            ApiError::NotPermitted { ref reason, .. } => Refusal::new(
                StatusCode::FORBIDDEN,
                match reason {
                    Some(reason) => format!("This call is not permitted: {reason}"),
                    None => "This call is not permitted for this caller.".to_owned(),
                },
            )
            .log(err.to_string()),
            ApiError::RateLimited { ref rule, wait } => {
                let ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX).max(1);
                let message = if rule.is_empty() {
                    format!("The rate limit cannot be checked right now; try again in {ms} ms.")
                } else {
                    format!("Too many calls: a rate limit is reached; try again in {ms} ms.")
                };
                let mut refusal = Refusal::new(StatusCode::TOO_MANY_REQUESTS, message)
                    .log(err.to_string())
                    .retry()
                    .extra(Extra::RetryAfter { ms });
                // Whole seconds, rounded up (RFC 9110 §10.2.3).
                let seconds = ms.div_ceil(1000).to_string();
                if let Ok(value) = HeaderValue::from_str(&seconds) {
                    refusal.headers.insert(header::RETRY_AFTER, value);
                }
                refusal
            }
            ApiError::UnsupportedMediaType => Refusal::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "The request body must be JSON: send it with 'Content-Type: application/json'.",
            )
            .header(header::ACCEPT, "application/json"),
            ApiError::BodyTooLarge { limit } => Refusal::bad_request(format!(
                "The request body is too large: the limit is {limit} bytes."
            ))
            .developer(
                "raise limits.max_body_bytes (or --max-body-bytes) if larger inputs are expected",
            ),
            ApiError::BodyUnreadable(_) => Refusal::bad_request(
                "The request body could not be read: the client stopped sending it or took too long.",
            )
            .log(err.to_string()),
            ApiError::MalformedBody(detail) => {
                Refusal::bad_request(format!("The request body is not valid: {}", echo(&detail)))
            }
            ApiError::MissingRequest => Refusal::bad_request(
                "The body must be {\"request\": {\"tool_id\": …}} or a bare call request with 'tool_id'.",
            ),
            ApiError::MissingToolId => {
                Refusal::bad_request("'tool_id' is required, e.g. \"Calculator.Add@1.0.0\".")
                    .extra(Extra::NoSuchTool { suggestion: None })
            }
            ApiError::BadToolId(err) => {
                Refusal::bad_request(capitalise(&echo(&err.to_string())))
                    .extra(Extra::NoSuchTool { suggestion: None })
            }
            ApiError::UnsupportedSchema(err) => {
                Refusal::bad_request(capitalise(&echo(&err.to_string())))
            }
            ApiError::UnknownTool { id, suggestion } => {
                let mut message = format!("Tool '{}' was not found.", echo(&id));
                if let Some(s) = &suggestion {
                    let _ = write!(message, " Did you mean '{s}'?");
                }
                Refusal::bad_request(message)
                    .developer("GET /tools lists the tools this server offers")
                    .extra(Extra::NoSuchTool { suggestion })
            }
            ApiError::UnknownVersion {
                id,
                available,
                changed,
            } => {
                let available: Vec<String> = available.iter().map(ToString::to_string).collect();
                let changed = changed.as_deref().map(capitalise);
                let mut message = format!(
                    "Tool '{}' is not available in that version. Available versions: {}.",
                    echo(&id),
                    available.join(", ")
                );
                if let Some(changed) = &changed {
                    let _ = write!(message, " {changed}");
                }
                Refusal::bad_request(message)
                    .developer("'@x' means exactly x.0.0; omit the version for the latest")
                    .extra(Extra::Versions { available, changed })
            }
            ApiError::Refused { message } => Refusal::bad_request(capitalise(&message))
                .developer("the bridge serves locked tools only as they were reviewed"),
            ApiError::MissingRequirements {
                tool,
                missing,
                authorization_ids,
                refused,
            } => {
                let mut ids: Vec<String> =
                    missing.authorization.iter().map(|c| c.id.clone()).collect();
                ids.extend(authorization_ids);
                let mut parts = Vec::new();
                if !ids.is_empty() {
                    parts.push(format!("authorization for {}", ids.join(", ")));
                }
                let secrets: Vec<String> = missing.secrets.iter().map(|s| s.id.clone()).collect();
                if !secrets.is_empty() {
                    parts.push(format!("secret {}", secrets.join(", ")));
                }
                ids.extend(secrets);
                if missing.user_id == Some(true) {
                    parts.push("a user_id".to_owned());
                    ids.push("user_id".to_owned());
                }
                let mut message = format!(
                    "Tool '{tool}' requires {} in the call's context.",
                    parts.join(" and ")
                );
                if let Some(why) = refused {
                    let _ = write!(
                        message,
                        " The token given was not accepted: {why}; sign in again at the challenge's url."
                    );
                }
                Refusal::bad_request(message)
                    .developer("put tokens in context.authorization[{id, token}], secrets in context.secrets[{id, value}], and context.user_id")
                    .extra(Extra::Missing { missing, ids })
            }
            ApiError::CallIdReused { call_id } => Refusal::bad_request(format!(
                "call_id '{}' was already used for a call with another tool or input; a new call needs a new call_id.",
                echo(&call_id)
            ))
            .developer("call_id is the call's idempotency key: a repeat with the same tool and input returns the first call's response"),
            ApiError::StateUnavailable { .. } => Refusal::bad_request(
                "The call cannot be checked for duplicates right now; try again shortly.",
            )
            .developer("the idempotency store is unreachable and `idempotency.on_store_error` is `refuse`; the server log says why")
            .log(err.to_string())
            .retry(),
            ApiError::Unavailable {
                ref source_name, ..
            } => Refusal::bad_request("The tool is temporarily unavailable; try again shortly.")
                .developer(format!(
                    "source '{source_name}' is not ready (restarting or down); the server log says why"
                ))
                .log(err.to_string())
                .retry(),
            ApiError::Misconfigured {
                ref source_name,
                ref detail,
            } => Refusal::bad_request(
                "The server is not configured correctly for this tool; retrying will not help until its operator fixes the configuration.",
            )
            .developer(format!("source '{source_name}': {detail}"))
            .log(err.to_string()),
            ApiError::InvalidInput { parameter_errors } => Refusal::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "Some input parameters are invalid.",
            )
            .retry()
            .extra(Extra::ParameterErrors(parameter_errors)),
            ApiError::NoSuchEndpoint => Refusal::new(
                StatusCode::NOT_FOUND,
                "Not found. Endpoints: GET /health, GET /tools, POST /tools/call, POST /mcp.",
            ),
        }
    }
}

/// Caller-supplied text as it may be echoed: at most [`MAX_ECHO_CHARS`] characters.
pub(crate) fn echo(text: &str) -> String {
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
pub(crate) enum Rescued {
    /// Nothing was sent upstream: the call is answered with this error (400).
    Refused(ApiError),
    /// The call failed in the tool: 200 with `success: false` and this error.
    Failed(ToolError),
}

/// Sorts an adapter failure into "refused before the call" or "failed in the tool"
/// (DESIGN.md §3). `source_name` names the tool's source for the log.
pub(crate) fn rescue(err: &AdapterError, tool: &ToolDefinition, source_name: &str) -> Rescued {
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
/// (`Unavailable`, `Setup`) never reach this table: `rescue` refuses them.
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
pub(crate) fn cause_chain(err: &(dyn std::error::Error + 'static)) -> String {
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
        let refusal = Refusal::from(err);
        assert_eq!(refusal.status, StatusCode::BAD_REQUEST);
        assert!(!refusal.can_retry);
        assert!(
            refusal.message.contains("retrying will not help"),
            "{refusal:?}"
        );
        assert!(!refusal.message.contains("try again"), "{refusal:?}");
        assert!(
            refusal
                .developer_message
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
        let refusal = Refusal::from(err);
        assert!(refusal.log.as_deref().unwrap().contains("hunter2"));
        let shown = [refusal.message, refusal.developer_message.unwrap()].join(" ");
        assert!(
            !shown.contains("hunter2") && !shown.contains("/etc/x"),
            "{shown}"
        );
    }

    #[test]
    fn issue_8_long_ids_are_not_echoed_in_full() {
        let id = "A".repeat(100_000);
        let refusal = Refusal::from(ApiError::UnknownTool {
            id,
            suggestion: None,
        });
        assert!(refusal.message.len() < 300, "{}", refusal.message.len());
    }
}
