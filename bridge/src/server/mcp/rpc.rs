//! JSON-RPC errors in the protocol's shapes for what rmcp could not read or type (issue 25,
//! item 12), on both ways in.
//!
//! - A message that is no JSON, or JSON but no JSON-RPC message, or over the size limit, is one
//!   rmcp refuses in plain text (HTTP) or drops (its stdio): [`malformed`] and [`too_large`] are
//!   the errors answering it instead, for its `id` when that can be read, else `null`.
//! - rmcp parses a request's params together with its method; when they do not parse it hands
//!   the request over as a custom one, whose default answer is `-32601 Method not found`: wrong
//!   for a `tools/call` without a `name`. [`unparsed`] tells the two apart.

use otc_adapters::mcp::TopLevel;
use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequest, CancelTaskRequest, CompleteRequest, ConstString, CustomRequest,
    DiscoverRequest, ErrorCode, GetPromptRequest, GetSkillRequest, GetTaskRequest,
    InitializeRequest, ListPromptsRequest, ListResourceTemplatesRequest, ListResourcesRequest,
    ListSkillsRequest, ListToolsRequest, PingRequest, ReadResourceDirectoryRequest,
    ReadResourceRequest, Request, RequestNoParam, RequestOptionalParam, SubscriptionsListenRequest,
    UpdateTaskRequest,
};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

/// The error answering `message`, which did not parse as a JSON-RPC message: `-32700 Parse
/// error` when it is no JSON (or nested too deep to read), `-32600 Invalid Request` when it is
/// JSON of another shape.
pub(crate) fn malformed(message: &[u8]) -> Value {
    match serde_json::from_slice::<Value>(message) {
        Ok(value) => {
            let id = value
                .get("id")
                .filter(|id| id.is_number() || id.is_string());
            let problem = match &value {
                Value::Object(fields) if fields.get("jsonrpc") != Some(&json!("2.0")) => {
                    "`jsonrpc` must be \"2.0\""
                }
                Value::Object(_) => {
                    "not a request, notification or response of the protocol (check `method` and \
                     `id`)"
                }
                Value::Array(_) => {
                    "a batch (a JSON array) is not accepted: send one message at a time"
                }
                _ => "a message is a JSON object",
            };
            error(
                id,
                ErrorCode::INVALID_REQUEST,
                &format!("Invalid Request: {problem}."),
            )
        }
        Err(parse) => {
            // The id may still be readable: in a message nested too deep, or cut short.
            let mut scan = TopLevel::default();
            scan.feed(message);
            error(
                scan.id().as_ref(),
                ErrorCode::PARSE_ERROR,
                &format!("Parse error: {parse}."),
            )
        }
    }
}

/// The error answering a message over `limit` bytes, for `id` when it was read.
pub(crate) fn too_large(id: Option<&Value>, limit: usize) -> Value {
    error(
        id,
        ErrorCode::INVALID_REQUEST,
        &format!("Invalid Request: the message is larger than the limit of {limit} bytes."),
    )
}

/// The error answering a message that could not be read at all (`why`).
pub(crate) fn unreadable(why: &str) -> Value {
    error(
        None,
        ErrorCode::PARSE_ERROR,
        &format!("Parse error: {why}."),
    )
}

/// A JSON-RPC error response; `id` `None` is `null`, as JSON-RPC wants when the id is unknown.
fn error(id: Option<&Value>, code: ErrorCode, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code.0, "message": message}})
}

/// The answer to a request rmcp could not type: `-32602 Invalid params` saying what is wrong
/// when the protocol defines its method, `-32601 Method not found` otherwise.
pub(crate) fn unparsed(request: &CustomRequest) -> ErrorData {
    let method = request.method.as_str();
    match params_error(method, request.params.as_ref()) {
        Some(problem) => {
            ErrorData::invalid_params(format!("Invalid params for {method}: {problem}."), None)
        }
        None => ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: {}", crate::rescue::echo(method)),
            None,
        ),
    }
}

/// The method name of one of rmcp's typed requests.
trait Typed: DeserializeOwned {
    const METHOD: &'static str;
}

impl<M: ConstString + DeserializeOwned, P: DeserializeOwned> Typed for Request<M, P> {
    const METHOD: &'static str = M::VALUE;
}

impl<M: ConstString + DeserializeOwned, P: DeserializeOwned> Typed for RequestOptionalParam<M, P> {
    const METHOD: &'static str = M::VALUE;
}

impl<M: ConstString + DeserializeOwned> Typed for RequestNoParam<M> {
    const METHOD: &'static str = M::VALUE;
}

/// What is wrong with `params` when `method` is a request the protocol defines (the variants
/// of rmcp's `ClientRequest`, the custom one aside); `None` for any other method.
#[expect(
    deprecated,
    reason = "logging and resources/subscribe are deprecated, yet still methods rmcp serves"
)]
fn params_error(method: &str, params: Option<&Value>) -> Option<String> {
    macro_rules! defined {
        ($($request:ty),+ $(,)?) => {
            $(if method == <$request as Typed>::METHOD {
                return Some(why_not::<$request>(method, params));
            })+
        };
    }
    defined!(
        PingRequest,
        InitializeRequest,
        DiscoverRequest,
        CompleteRequest,
        rmcp::model::SetLevelRequest,
        GetPromptRequest,
        ListPromptsRequest,
        ListResourcesRequest,
        ListResourceTemplatesRequest,
        ReadResourceRequest,
        SubscriptionsListenRequest,
        rmcp::model::SubscribeRequest,
        rmcp::model::UnsubscribeRequest,
        CallToolRequest,
        ListToolsRequest,
        GetTaskRequest,
        UpdateTaskRequest,
        CancelTaskRequest,
        ListSkillsRequest,
        GetSkillRequest,
        ReadResourceDirectoryRequest,
    );
    None
}

/// Why `params` are not those of `T`, in serde's words (`missing field `name``). Only called
/// for a request rmcp already failed to type, so the second parse costs nothing on a good one.
fn why_not<T: Typed>(method: &str, params: Option<&Value>) -> String {
    let mut request = Map::new();
    request.insert("method".to_owned(), Value::from(method));
    if let Some(params) = params {
        request.insert("params".to_owned(), params.clone());
    }
    match serde_json::from_value::<T>(Value::Object(request)) {
        Err(error) => error.to_string(),
        // Typed alone they parse: what failed was the message around them.
        Ok(_) => "they do not fit the request".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn custom(method: &str, params: Value) -> CustomRequest {
        CustomRequest::new(method, Some(params))
    }

    #[test]
    fn issue_25_malformed_messages_are_told_apart_and_keep_their_id() {
        let cases: [(&[u8], i32, Value); 6] = [
            (b"not json", -32700, Value::Null),
            (br#"{"id": 4, "method": "ping""#, -32700, json!(4)),
            (br#"{"id": "a", "hello": 1}"#, -32600, json!("a")),
            (
                br#"{"jsonrpc": "2.0", "id": {}, "method": 1}"#,
                -32600,
                Value::Null,
            ),
            (b"[1, 2]", -32600, Value::Null),
            (b"42", -32600, Value::Null),
        ];
        for (message, code, id) in cases {
            let error = malformed(message);
            assert_eq!(error["error"]["code"], code, "{error}");
            assert_eq!(error["id"], id, "{error}");
            assert_eq!(error["jsonrpc"], "2.0");
        }
        let deep = format!(r#"{{"id":9,"params":{}}}"#, "[".repeat(1000));
        let error = malformed(deep.as_bytes());
        assert_eq!(
            (error["error"]["code"].clone(), error["id"].clone()),
            (json!(-32700), json!(9))
        );
        assert!(
            error["error"]["message"]
                .as_str()
                .unwrap()
                .contains("recursion limit")
        );
    }

    #[test]
    fn issue_25_a_defined_method_with_bad_params_is_invalid_params() {
        let error = unparsed(&custom("tools/call", json!({"arguments": {}})));
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        assert!(
            error.message.contains("missing field `name`"),
            "{}",
            error.message
        );
        let error = unparsed(&custom("resources/read", json!({"uri": 3})));
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        let error = unparsed(&custom("tools/frobnicate", json!({})));
        assert_eq!(error.code, ErrorCode::METHOD_NOT_FOUND);
        assert_eq!(error.message, "Method not found: tools/frobnicate");
    }
}
