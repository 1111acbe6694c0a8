//! What an MCP call returned, as a tool value or an [`AdapterError`] (DESIGN.md §3 and §4).
//!
//! - A result is the tool's value: `structuredContent` when present; otherwise a single text block
//!   is the string; otherwise (several blocks, images, audio, embedded resources, links, or none)
//!   the list of content blocks as MCP's JSON.
//! - `isError: true` is [`AdapterError::ToolFailed`]: the text blocks are the message (the tool
//!   wrote them for the model), the whole result goes to `details`.
//! - A JSON-RPC error is [`AdapterError::InvalidArguments`] for invalid-params and
//!   resource-not-found (the model can correct itself) and [`AdapterError::Protocol`] otherwise; one the transport synthesized for
//!   an answer it refused is [`AdapterError::ResponseTooLarge`] or a `Protocol` error saying so.
//!   A closed transport is decided by the caller, which knows whether a child exited.

use rmcp::ServiceError;
use rmcp::model as mcp;
use serde_json::Value;

use crate::{AdapterError, ToolValue};

/// The tool's value, or its reported failure.
/// A `tools/call` answer of either era. A 2026-07-28 server may answer `resultType:
/// "input_required"` (it wants the client to elicit from a user, sample a model or list roots,
/// then call again) or `"task"`. An OTC call has no user or model to ask and no task to poll, so
/// both are the tool's error, naming what the server wanted; its elicitation message and URL are
/// passed on unchanged, its opaque request state is not.
pub(crate) fn call_response(response: mcp::CallToolResponse) -> Result<ToolValue, AdapterError> {
    match response {
        mcp::CallToolResponse::Complete(result) => call_value(result),
        mcp::CallToolResponse::InputRequired(asked) => Err(input_required(&asked)),
        mcp::CallToolResponse::Task(_) => Err(AdapterError::ToolFailed {
            message: "the MCP server answered with a task to poll (resultType \"task\"), \
                      which the bridge does not follow"
                .to_owned(),
            details: None,
        }),
        _ => Err(AdapterError::ToolFailed {
            message: "the MCP server answered with a result type the bridge does not know"
                .to_owned(),
            details: None,
        }),
    }
}

/// An `input_required` answer (to `tools/call`, `resources/read` or `prompts/get`) as the
/// tool's error, naming what the server wanted.
pub(crate) fn input_required(asked: &mcp::InputRequiredResult) -> AdapterError {
    let wanted: Vec<String> = asked
        .input_requests
        .iter()
        .flatten()
        .map(|(_, request)| describe_input_request(request))
        .collect();
    let wanted = if wanted.is_empty() {
        "more input".to_owned()
    } else {
        wanted.join("; ")
    };
    AdapterError::ToolFailed {
        message: format!("the MCP server needs input that an OTC call cannot give: {wanted}"),
        details: None,
    }
}

/// What one `input_required` request asks for, in words.
fn describe_input_request(request: &mcp::InputRequest) -> String {
    let value = serde_json::to_value(request).unwrap_or(Value::Null);
    let params = &value["params"];
    let text = |key: &str| params.get(key).and_then(Value::as_str);
    match value.get("method").and_then(Value::as_str) {
        Some("elicitation/create") => match (text("message"), text("url")) {
            (Some(message), Some(url)) => format!("a user's answer ({message}; at {url})"),
            (Some(message), None) => format!("a user's answer ({message})"),
            (None, Some(url)) => format!("a user's visit to {url}"),
            (None, None) => "a user's answer".to_owned(),
        },
        Some("sampling/createMessage") => "a completion from the client's model".to_owned(),
        Some("roots/list") => "the client's roots".to_owned(),
        Some(other) => format!("an answer to {other}"),
        None => "more input".to_owned(),
    }
}

/// The tool's value, parsed: [`call_value`] with a text set aside parsed back.
#[cfg(test)]
pub(crate) fn call_result(result: mcp::CallToolResult) -> Result<Value, AdapterError> {
    call_value(result).and_then(parsed)
}

/// `value` parsed, when it is still its JSON text.
pub(crate) fn parsed(value: ToolValue) -> Result<Value, AdapterError> {
    match value {
        ToolValue::Parsed(value) => Ok(value),
        ToolValue::Json(text) => serde_json::from_str(text.get())
            .map_err(|e| AdapterError::protocol("the tool's structured content cannot be read", e)),
    }
}

/// The tool's value, or its reported failure. A `structuredContent` the transport set aside
/// ([`super::set_aside`]) is its JSON text; a single text block is moved, not copied.
pub(crate) fn call_value(result: mcp::CallToolResult) -> Result<ToolValue, AdapterError> {
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
        return Ok(match super::set_aside::take(&structured) {
            Some(text) => ToolValue::Json(text),
            None => ToolValue::Parsed(structured),
        });
    }
    let mut content = result.content;
    if let [mcp::ContentBlock::Text(_)] = content.as_slice()
        && let Some(mcp::ContentBlock::Text(text)) = content.pop()
    {
        return Ok(ToolValue::Parsed(Value::String(text.text)));
    }
    serde_json::to_value(&content)
        .map(ToolValue::Parsed)
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
    if let ServiceError::McpError(data) = &error
        && let Some(refused) = super::limits::classify(data)
    {
        return Failure::Error(refused);
    }
    match error {
        // A resource the server does not have is, like invalid params, something the caller
        // can correct (another URI).
        ServiceError::McpError(data)
            if data.code == mcp::ErrorCode::INVALID_PARAMS
                || data.code == mcp::ErrorCode::RESOURCE_NOT_FOUND =>
        {
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

    mod properties {
        //! Issue 8: arbitrary results never panic and always take the shapes of the module docs.

        use proptest::prelude::*;
        use serde_json::{Value, json};

        use super::*;

        fn text() -> impl Strategy<Value = String> {
            prop_oneof![Just(String::new()), Just("  ".to_owned()), any::<String>()]
        }

        fn json_value() -> impl Strategy<Value = Value> {
            crate::mcp::arbitrary::json_value(text, text)
        }

        /// One MCP content block of any kind, as a server would write it.
        fn block() -> impl Strategy<Value = Value> {
            crate::mcp::arbitrary::content_block(text)
        }

        fn call_tool_result() -> impl Strategy<Value = Value> {
            (
                prop::collection::vec(block(), 0..5),
                prop::option::of(json_value()),
                prop::option::of(any::<bool>()),
            )
                .prop_map(|(content, structured, is_error)| {
                    let mut result = json!({ "content": content });
                    if let Some(structured) = structured {
                        result["structuredContent"] = structured;
                    }
                    if let Some(is_error) = is_error {
                        result["isError"] = Value::Bool(is_error);
                    }
                    result
                })
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]

            #[test]
            fn issue_8_call_results_take_the_documented_shapes(raw in call_tool_result()) {
                // A shape rmcp refuses never reaches the conversion; everything else must convert.
                let Ok(parsed) = serde_json::from_value::<mcp::CallToolResult>(raw.clone()) else {
                    return Err(TestCaseError::reject("not a CallToolResult for rmcp"));
                };
                let content = raw["content"].as_array().cloned().unwrap_or_default();
                let texts: Vec<&str> = content
                    .iter()
                    .filter(|b| b["type"] == "text")
                    .filter_map(|b| b["text"].as_str())
                    .collect();
                match (raw["isError"] == true, call_result(parsed)) {
                    (true, Err(AdapterError::ToolFailed { message, details })) => {
                        let joined = texts.join("\n");
                        if joined.trim().is_empty() {
                            prop_assert_eq!(message, "the tool reported an error without a message");
                        } else {
                            prop_assert_eq!(message, joined);
                        }
                        prop_assert_eq!(&details.unwrap()["isError"], &json!(true));
                    }
                    (false, Ok(value)) => match raw.get("structuredContent") {
                        Some(structured) => prop_assert_eq!(&value, structured),
                        None if content.len() == 1 && content[0]["type"] == "text" => {
                            prop_assert_eq!(&value, &content[0]["text"]);
                        }
                        None => {
                            let blocks = value.as_array().expect("a list of content blocks");
                            prop_assert_eq!(blocks.len(), content.len());
                            for (block, sent) in blocks.iter().zip(&content) {
                                prop_assert_eq!(&block["type"], &sent["type"]);
                            }
                        }
                    },
                    (is_error, other) => {
                        prop_assert!(false, "isError {} gave {:?}", is_error, other);
                    }
                }
            }

            #[test]
            fn issue_8_json_rpc_errors_are_classified(code in any::<i32>(), message in text()) {
                let error = ServiceError::McpError(mcp::ErrorData::new(
                    mcp::ErrorCode(code),
                    message.clone(),
                    None,
                ));
                match service_error(error) {
                    Failure::Error(AdapterError::InvalidArguments { message: m }) => {
                        prop_assert!(
                            code == mcp::ErrorCode::INVALID_PARAMS.0
                                || code == mcp::ErrorCode::RESOURCE_NOT_FOUND.0
                        );
                        prop_assert_eq!(m, message);
                    }
                    Failure::Error(AdapterError::Protocol { .. }) => {
                        prop_assert_ne!(code, mcp::ErrorCode::INVALID_PARAMS.0);
                        prop_assert_ne!(code, mcp::ErrorCode::RESOURCE_NOT_FOUND.0);
                    }
                    other => prop_assert!(false, "{:?}", other),
                }
            }
        }
    }
}
