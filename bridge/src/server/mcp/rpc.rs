//! JSON-RPC errors in the protocol's shapes for what rmcp could not type (issue 25, item 12).
//!
//! rmcp parses a request's params together with its method; when they do not parse it hands the
//! request over as a custom one, whose default answer is `-32601 Method not found`: wrong for a
//! `tools/call` without a `name`. [`unparsed`] tells the two apart.

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
use serde_json::{Map, Value};

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
