//! What an MCP call returned, as a tool value or an [`AdapterError`] (DESIGN.md §3 and §4).
//!
//! - A result is the tool's value: `structuredContent` when present; otherwise a single text block
//!   is the string; otherwise (several blocks, images, audio, embedded resources, links, or none)
//!   the list of content blocks as MCP's JSON.
//! - `isError: true` is [`AdapterError::ToolFailed`]: the text blocks are the message (the tool
//!   wrote them for the model), the whole result goes to `details`.
//! - A JSON-RPC error is [`AdapterError::InvalidArguments`] for invalid-params (the model can
//!   correct itself) and [`AdapterError::Protocol`] otherwise. A closed transport is decided by
//!   the caller, which knows whether a child exited.

use rmcp::ServiceError;
use rmcp::model as mcp;
use serde_json::Value;

use crate::AdapterError;

/// The tool's value, or its reported failure.
pub(crate) fn call_result(result: mcp::CallToolResult) -> Result<Value, AdapterError> {
    if result.is_error == Some(true) {
        let text = texts(&result.content);
        let message = if text.trim().is_empty() {
            "the tool reported an error without a message".to_owned()
        } else {
            text
        };
        let details = serde_json::to_value(&result).ok();
        return Err(AdapterError::ToolFailed { message, details });
    }
    if let Some(structured) = result.structured_content {
        return Ok(structured);
    }
    if let [mcp::ContentBlock::Text(text)] = result.content.as_slice() {
        return Ok(Value::String(text.text.clone()));
    }
    serde_json::to_value(&result.content)
        .map_err(|e| AdapterError::protocol("the tool's content cannot be written as JSON", e))
}

/// The text blocks of a result, one per line.
fn texts(content: &[mcp::ContentBlock]) -> String {
    content
        .iter()
        .filter_map(mcp::ContentBlock::as_text)
        .map(|t| t.text.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// How a failed request is classified, before the caller decides what a lost transport means.
#[derive(Debug)]
pub(crate) enum Failure {
    /// Classified already.
    Error(AdapterError),
    /// The transport or session went away; the caller turns this into `ChildExited` or
    /// `ConnectionLost`.
    Lost(String),
}

/// Classifies an rmcp error.
pub(crate) fn service_error(error: ServiceError) -> Failure {
    match error {
        ServiceError::McpError(data) if data.code == mcp::ErrorCode::INVALID_PARAMS => {
            Failure::Error(AdapterError::InvalidArguments {
                message: data.message.into_owned(),
            })
        }
        ServiceError::McpError(data) => Failure::Error(AdapterError::Protocol {
            message: format!("the server answered JSON-RPC error {}", data.code.0),
            source: Some(Box::new(ServiceError::McpError(data))),
        }),
        ServiceError::TransportClosed => Failure::Lost("the transport closed".to_owned()),
        ServiceError::TransportSend(e) => Failure::Lost(format!("cannot send the request: {e}")),
        ServiceError::Cancelled { reason } => Failure::Lost(format!(
            "the session ended ({})",
            reason.as_deref().unwrap_or("no reason given")
        )),
        ServiceError::Timeout { timeout } => {
            Failure::Error(AdapterError::Timeout { elapsed: timeout })
        }
        other => Failure::Error(AdapterError::protocol(
            "the server's answer does not fit the request",
            other,
        )),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn result(value: Value) -> mcp::CallToolResult {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn values_follow_design_section_4() {
        let structured = result(json!({
            "content": [{"type": "text", "text": "{\"t\":1}"}],
            "structuredContent": {"t": 1}
        }));
        assert_eq!(call_result(structured).unwrap(), json!({"t": 1}));
        let text = result(json!({"content": [{"type": "text", "text": "hi"}]}));
        assert_eq!(call_result(text).unwrap(), json!("hi"));
        let mixed = result(json!({"content": [
            {"type": "text", "text": "a"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "file:///x", "text": "x"}}
        ]}));
        let value = call_result(mixed).unwrap();
        assert_eq!(value[1]["type"], "image");
        assert_eq!(value[1]["mimeType"], "image/png");
        assert_eq!(value[2]["resource"]["uri"], "file:///x");
        assert_eq!(
            call_result(result(json!({"content": []}))).unwrap(),
            json!([])
        );
    }

    #[test]
    fn is_error_is_a_tool_failure_with_the_text() {
        let failed =
            result(json!({"content": [{"type": "text", "text": "no such city"}], "isError": true}));
        let Err(AdapterError::ToolFailed { message, details }) = call_result(failed) else {
            panic!("not a tool failure")
        };
        assert_eq!(message, "no such city");
        assert_eq!(details.unwrap()["isError"], true);
    }

    #[test]
    fn invalid_params_is_an_argument_error() {
        let error = ServiceError::McpError(mcp::ErrorData::invalid_params("x must be set", None));
        assert!(matches!(
            service_error(error),
            Failure::Error(AdapterError::InvalidArguments { message }) if message == "x must be set"
        ));
        let error = ServiceError::McpError(mcp::ErrorData::internal_error("boom", None));
        assert!(matches!(
            service_error(error),
            Failure::Error(AdapterError::Protocol { .. })
        ));
        assert!(matches!(
            service_error(ServiceError::TransportClosed),
            Failure::Lost(_)
        ));
    }
}
