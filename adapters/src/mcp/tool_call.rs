//! A tool call on the wire, the short way: the request written and its answer read directly,
//! where rmcp goes through `serde_json::Value` and untagged enums.
//!
//! **The answer.** rmcp reads a server's message through two untagged enums: the JSON-RPC
//! envelope (request, response, notification and error, each tried in turn behind a flattened
//! shape check) and `ServerResult`, whose twenty variants are tried in order, `CallToolResult`
//! the sixteenth. Every variant that fails builds a formatted serde error on its way out, so
//! reading the answer to an `echo` cost about 47,000 instructions: 29 % of all the bridge did for
//! the call (callgrind of `bench/mcp/run.sh`'s load). [`read`] takes the common case in one pass:
//! a message of exactly `jsonrpc`, `id` and a `result` whose keys are all `CallToolResult`'s own.
//! Every variant before `CallToolResult` requires a key outside those five, so rmcp's own
//! reading ends in the same value; a differential test holds the two to the same answers.
//! Anything else, including a result `CallToolResult` refuses, is left to rmcp. The stdio
//! transport reads its messages here first; the streamable HTTP transport checks here first that
//! an event is one rmcp can read.
//!
//! **The request.** rmcp writes a request's `params` by converting them to a `Value` first (to
//! merge the `_meta` kept in the request's extensions), copying the arguments. [`write`] merges
//! `_meta` itself and writes the rest of a `tools/call` straight from its fields: the same JSON
//! rmcp writes, byte for byte unless the params carry a `_meta` of their own (then rmcp's members
//! after `_meta` come in the order its swap-remove left them; a differential test again).

use rmcp::model::{
    CallToolResult, ClientJsonRpcMessage, ClientRequest, JsonObject, JsonRpcMessage,
    JsonRpcRequest, JsonRpcResponse, JsonRpcVersion2_0, MetaObject, RequestId, RequestMetaObject,
    ServerJsonRpcMessage, ServerResult,
};
use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// A response and nothing else: any other key, or a missing one, is rmcp's to read.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Response<'a> {
    jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    #[serde(borrow)]
    result: &'a RawValue,
}

/// The keys a `CallToolResult` has, and no other (their values are read by rmcp's type).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // Only which keys are present matters.
struct OwnKeys {
    content: Option<IgnoredAny>,
    #[serde(rename = "structuredContent")]
    structured_content: Option<IgnoredAny>,
    #[serde(rename = "isError")]
    is_error: Option<IgnoredAny>,
    #[serde(rename = "_meta")]
    meta: Option<IgnoredAny>,
    #[serde(rename = "resultType")]
    result_type: Option<IgnoredAny>,
}

/// The message in `text` when it is a tool call's answer that only `CallToolResult` reads;
/// `None` for anything else.
pub(crate) fn read(text: &[u8]) -> Option<ServerJsonRpcMessage> {
    let response: Response<'_> = serde_json::from_slice(text).ok()?;
    let result = response.result.get();
    serde_json::from_str::<OwnKeys>(result).ok()?;
    let result: CallToolResult = serde_json::from_str(result).ok()?;
    Some(JsonRpcMessage::Response(JsonRpcResponse {
        jsonrpc: response.jsonrpc,
        id: response.id,
        result: ServerResult::CallToolResult(result),
    }))
}

/// The line (without its end) for `message` when it is a `tools/call` request, as rmcp writes
/// it; `None` for anything else, left as it was. rmcp keeps most of a request's `_meta` in its
/// extensions (the progress token it sets on every request, the client's context), and merges
/// them into `params._meta` as it writes: the params' own `_meta` first, the extensions' over
/// it. Here the params' `_meta` is taken out of `message` for that merge, so the rest of the
/// params is written as it is, without a copy.
pub(crate) fn write(message: &mut ClientJsonRpcMessage) -> Option<serde_json::Result<Vec<u8>>> {
    let JsonRpcMessage::Request(JsonRpcRequest {
        jsonrpc,
        id,
        request: ClientRequest::CallToolRequest(request),
    }) = message
    else {
        return None;
    };
    // rmcp's order: the legacy map, the typed one over it; the params' own under both.
    let extensions = &request.extensions;
    let legacy = extensions.get::<MetaObject>().map(|meta| &meta.0);
    let typed = extensions.get::<RequestMetaObject>().map(|meta| &meta.0.0);
    let meta = match (
        request.params.meta.take().map(|meta| meta.0.0),
        legacy,
        typed,
    ) {
        (None, None, None) => None,
        (own, legacy, typed) => {
            let mut meta = own.unwrap_or_default();
            for layer in [legacy, typed].into_iter().flatten() {
                meta.extend(
                    layer
                        .iter()
                        .map(|(key, value)| (key.clone(), value.clone())),
                );
            }
            Some(meta)
        }
    };
    /// `params` with the merged `_meta` first.
    #[derive(Serialize)]
    struct Params<'a, P> {
        #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
        meta: Option<&'a JsonObject>,
        #[serde(flatten)]
        rest: &'a P,
    }
    /// The request's members in rmcp's order.
    #[derive(Serialize)]
    struct Line<'a, M, P> {
        jsonrpc: &'a JsonRpcVersion2_0,
        id: &'a RequestId,
        method: &'a M,
        params: Params<'a, P>,
    }
    Some(serde_json::to_vec(&Line {
        jsonrpc,
        id,
        method: &request.method,
        params: Params {
            meta: meta.as_ref(),
            rest: &request.params,
        },
    }))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::*;

    /// What rmcp reads from `text`.
    fn rmcp_reads(text: &[u8]) -> Option<ServerJsonRpcMessage> {
        serde_json::from_slice(text).ok()
    }

    /// The id and result of a tool answer (rmcp's messages do not compare).
    fn answer(message: Option<ServerJsonRpcMessage>) -> Option<(RequestId, CallToolResult)> {
        match message? {
            JsonRpcMessage::Response(JsonRpcResponse {
                id,
                result: ServerResult::CallToolResult(result),
                ..
            }) => Some((id, result)),
            _ => None,
        }
    }

    #[test]
    fn a_tool_answer_is_read_as_rmcp_reads_it() {
        for text in [
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"Echo: hi"}]}}"#,
            r#"{"result":{"content":[],"isError":true},"id":"a-1","jsonrpc":"2.0"}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"structuredContent":null}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"a":[1,2.5,"\u00e9"]},"_meta":{"k":1}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}],"resultType":"complete"}}"#,
        ] {
            let read = answer(read(text.as_bytes()));
            assert!(read.is_some(), "{text}");
            assert_eq!(read, answer(rmcp_reads(text.as_bytes())), "{text}");
        }
    }

    /// A `tools/call` request as the adapter makes one, with the `_meta` rmcp keeps in its
    /// extensions (`typed`, and the legacy map) as it sends it.
    fn request(
        id: RequestId,
        name: String,
        arguments: Option<serde_json::Map<String, Value>>,
        traceparent: Option<String>,
        typed: Option<JsonObject>,
        legacy: Option<JsonObject>,
    ) -> ClientJsonRpcMessage {
        use rmcp::model::{CallToolRequest, CallToolRequestParams, RequestParamsMeta as _};
        let mut params = CallToolRequestParams::new(name);
        if let Some(arguments) = arguments {
            params = params.with_arguments(arguments);
        }
        if let Some(traceparent) = traceparent {
            params.set_traceparent(&traceparent);
        }
        let mut call = CallToolRequest::new(params);
        if let Some(typed) = typed {
            call.extensions.insert(RequestMetaObject(MetaObject(typed)));
        }
        if let Some(legacy) = legacy {
            call.extensions.insert(MetaObject(legacy));
        }
        JsonRpcMessage::request(ClientRequest::CallToolRequest(call), id)
    }

    #[test]
    fn a_request_is_written_with_the_progress_token_rmcp_keeps_aside() {
        let typed = json!({"progressToken": 3}).as_object().cloned();
        let mut message = request(
            RequestId::Number(7),
            "echo".to_owned(),
            json!({"message": "hi"}).as_object().cloned(),
            None,
            typed,
            None,
        );
        let rmcp_writes = serde_json::to_string(&message).unwrap();
        let written = write(&mut message).unwrap().unwrap();
        assert_eq!(
            String::from_utf8(written).unwrap(),
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"progressToken":3},"name":"echo","arguments":{"message":"hi"}}}"#
        );
        assert_eq!(
            rmcp_writes,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"progressToken":3},"name":"echo","arguments":{"message":"hi"}}}"#
        );
    }

    #[test]
    fn other_requests_are_left_to_rmcp() {
        let mut ping = ClientJsonRpcMessage::request(
            ClientRequest::PingRequest(Default::default()),
            RequestId::Number(2),
        );
        assert!(write(&mut ping).is_none());
    }

    #[test]
    fn anything_else_is_left_to_rmcp() {
        for text in [
            // Another result type, or a tool answer rmcp reads as something else.
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"task":{"taskId":"t"}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"resultType":"input_required"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"_meta":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":[]}"#,
            // Not only a response, or not one.
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]},"error":{"code":1,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]},"extra":1}"#,
            r#"{"jsonrpc":"1.0","id":1,"result":{"content":[]}}"#,
            r#"{"jsonrpc":"2.0","result":{"content":[]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":"text"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"content":[]}}"#,
            "not json",
        ] {
            assert!(read(text.as_bytes()).is_none(), "{text}");
        }
    }

    fn text() -> impl Strategy<Value = String> {
        prop_oneof!["[a-z]{0,6}", "\\PC{0,6}", Just("\"\\\n".to_owned())]
    }

    /// Keys of `text`, and now and then a key of another result type.
    fn key() -> impl Strategy<Value = String> {
        prop_oneof![text(), Just("content".to_owned()), Just("task".to_owned())]
    }

    fn json_value() -> impl Strategy<Value = Value> {
        crate::mcp::arbitrary::json_value(text, key)
    }

    /// A JSON object, with keys `_meta` maps share now and then.
    fn object() -> impl Strategy<Value = JsonObject> {
        prop::collection::btree_map(
            prop_oneof![
                text(),
                Just("progressToken".to_owned()),
                Just("traceparent".to_owned())
            ],
            json_value(),
            0..4,
        )
        .prop_map(|m| m.into_iter().collect())
    }

    /// A content block as a server writes it, sometimes one rmcp refuses (one time in six).
    fn block() -> impl Strategy<Value = Value> {
        prop_oneof![
            5 => crate::mcp::arbitrary::content_block(text),
            1 => json_value(),
        ]
    }

    /// A result object: some of `CallToolResult`'s keys, with values of any type, and now and
    /// then a key of another result type.
    fn result() -> impl Strategy<Value = Value> {
        let keys = (
            prop::option::of(prop_oneof![
                prop::collection::vec(block(), 0..4).prop_map(Value::Array),
                json_value()
            ]),
            prop::option::of(json_value()),
            prop::option::of(prop_oneof![
                any::<bool>().prop_map(Value::Bool),
                json_value()
            ]),
            prop::option::of(json_value()),
            prop::option::of(prop_oneof![
                Just(json!("complete")),
                Just(json!("input_required")),
                json_value()
            ]),
            prop::option::of((
                prop_oneof![
                    Just("task"),
                    Just("tools"),
                    Just("action"),
                    Just("completion"),
                    Just("contents"),
                    Just("messages")
                ],
                json_value(),
            )),
        );
        keys.prop_map(
            |(content, structured, is_error, meta, result_type, other)| {
                let mut result = serde_json::Map::new();
                let named = [
                    ("content", content),
                    ("structuredContent", structured),
                    ("isError", is_error),
                    ("_meta", meta),
                    ("resultType", result_type),
                ];
                for (key, value) in named {
                    if let Some(value) = value {
                        result.insert(key.to_owned(), value);
                    }
                }
                if let Some((key, value)) = other {
                    result.insert(key.to_owned(), value);
                }
                Value::Object(result)
            },
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        #[test]
        fn issue_23_a_request_is_written_as_rmcp_writes_it(
            id in prop_oneof![
                any::<i64>().prop_map(RequestId::Number),
                text().prop_map(|t| RequestId::String(t.into())),
            ],
            name in text(),
            arguments in prop::option::of(object()),
            traceparent in prop::option::of(text()),
            typed in prop::option::of(object()),
            legacy in prop::option::of(object()),
        ) {
            let own_meta = traceparent.is_some();
            let mut message = request(id, name, arguments, traceparent, typed, legacy);
            let rmcp_writes = serde_json::to_string(&message).unwrap();
            let written = write(&mut message).expect("a tools/call").unwrap();
            let written = String::from_utf8(written).unwrap();
            // The same members with the same values. Byte for byte unless the params have a
            // `_meta` of their own: then rmcp's members after `_meta` come in the order its
            // swap-remove of `_meta` left.
            prop_assert_eq!(
                serde_json::from_str::<Value>(&written).unwrap(),
                serde_json::from_str::<Value>(&rmcp_writes).unwrap()
            );
            if !own_meta {
                prop_assert_eq!(written, rmcp_writes);
            }
        }

        #[test]
        fn issue_23_what_is_read_here_is_what_rmcp_reads(result in result(), id in prop_oneof![
            any::<i64>().prop_map(Value::from),
            text().prop_map(Value::String),
        ]) {
            let text = serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "result": result}))
                .unwrap();
            if let Some(message) = read(&text) {
                let read = answer(Some(message));
                prop_assert!(read.is_some());
                prop_assert_eq!(read, answer(rmcp_reads(&text)));
            } else if let Some(ServerJsonRpcMessage::Response(response)) = rmcp_reads(&text) {
                // What is left to rmcp is not a tool answer made of `CallToolResult`'s keys.
                let own = serde_json::from_value::<OwnKeys>(result.clone()).is_ok();
                let tool_answer = matches!(response.result, ServerResult::CallToolResult(_));
                prop_assert!(!(own && tool_answer), "{}", result);
            }
        }
    }
}
