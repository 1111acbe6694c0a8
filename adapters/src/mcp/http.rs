//! The HTTP client under rmcp's streamable HTTP transport: reqwest, as rmcp's own, plus the
//! refusals of [`super::limits`] (issue 8, defect 9).
//!
//! rmcp caps a JSON answer and an SSE event at 16 MiB, but treats a breach (and a JSON answer it
//! cannot parse) as a failed transport: the session closes and the call is reported as a lost
//! connection, retryable. This wrapper sees each `POST` with the id of the request it carries, so
//! it can answer such a failure with a refusal for that id instead: the call fails at once, not
//! retryable, and the session goes on. An event over the cap on a request's own stream is taken
//! as that request's answer (rmcp keeps nothing of it to tell otherwise). The standalone `GET`
//! stream carries no request id; its failures stay rmcp's (the session reconnects).
//!
//! Redirects are not followed: rmcp's default client follows only same-origin 307/308, through a
//! private policy we cannot reuse, and an MCP endpoint that redirects is rare enough to be told.

use std::collections::HashMap;
use std::sync::Arc;

use futures::StreamExt;
use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use serde_json::Value;
use sse_stream::Sse;

use super::limits::{Refusal, refused, response_id};
use super::set_aside;
use super::tool_call;
use crate::AdapterError;

/// reqwest, answering refused answers with refusals.
#[derive(Debug, Clone)]
pub(crate) struct LimitedHttpClient {
    inner: reqwest::Client,
}

impl LimitedHttpClient {
    pub(crate) fn new() -> Result<Self, AdapterError> {
        let inner = reqwest::Client::builder()
            // As rmcp's default: pooled connections whose last body was not read stall.
            .pool_max_idle_per_host(0)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| AdapterError::Setup {
                message: "cannot build the HTTP client".to_owned(),
                source: Some(Box::new(e)),
            })?;
        Ok(Self { inner })
    }
}

type Post = Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>>;

/// The refusal for request `id` as a JSON answer.
fn refusal(id: &Value, why: Refusal) -> Option<StreamableHttpPostResponse> {
    refused(id, why).map(|message| StreamableHttpPostResponse::Json(message, None))
}

/// Replaces what rmcp would take as a broken transport with a refusal for request `id`.
fn refuse_failures(id: &Value, response: Post) -> Post {
    match response {
        Err(StreamableHttpError::ResponseBodyTooLarge { max_size }) => {
            refusal(id, Refusal::TooLarge)
                .ok_or(StreamableHttpError::ResponseBodyTooLarge { max_size })
        }
        // rmcp's words for a JSON answer that is not a JSON-RPC message.
        Err(StreamableHttpError::UnexpectedServerResponse(message))
            if message.starts_with("could not parse JSON response") =>
        {
            refusal(id, Refusal::Malformed)
                .ok_or(StreamableHttpError::UnexpectedServerResponse(message))
        }
        Ok(StreamableHttpPostResponse::Sse(events, session)) => Ok(
            StreamableHttpPostResponse::Sse(refuse_events(events, id.clone()), session),
        ),
        other => other,
    }
}

/// A message event carrying `message`.
fn event(message: &ServerJsonRpcMessage) -> Option<Sse> {
    Some(Sse {
        event: Some("message".to_owned()),
        data: Some(serde_json::to_string(message).ok()?),
        id: None,
        retry: None,
    })
}

/// The request's event stream, with an event over the cap or one that cannot be read turned
/// into a refusal for the request.
fn refuse_events(
    events: BoxStream<'static, Result<Sse, SseError>>,
    id: Value,
) -> BoxStream<'static, Result<Sse, SseError>> {
    events
        .map(move |item| match item {
            Err(error) if error.to_string().contains("exceeded the maximum size") => {
                refused(&id, Refusal::TooLarge)
                    .and_then(|message| event(&message))
                    .ok_or(error)
            }
            Ok(mut sse) => {
                // A large structured result is set aside as its text before rmcp parses the
                // event (`set_aside`).
                if let Some(rewritten) = sse
                    .data
                    .as_deref()
                    .and_then(|data| set_aside::rewrite(data.as_bytes()))
                    .and_then(|bytes| String::from_utf8(bytes).ok())
                {
                    sse.data = Some(rewritten);
                }
                let Some(data) = sse.data.as_deref() else {
                    return Ok(sse);
                };
                // A tool call's answer is checked the cheap way (`tool_call`), which reads
                // only what rmcp reads too.
                if tool_call::read(data.as_bytes()).is_some()
                    || serde_json::from_str::<ServerJsonRpcMessage>(data).is_ok()
                {
                    return Ok(sse);
                }
                match response_id(data.as_bytes())
                    .and_then(|id| refused(&id, Refusal::Malformed))
                    .and_then(|message| event(&message))
                {
                    Some(refusal) => Ok(Sse {
                        id: sse.id,
                        ..refusal
                    }),
                    None => Ok(sse),
                }
            }
            other => other,
        })
        .boxed()
}

impl StreamableHttpClient for LimitedHttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Post {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Post {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Post {
        let id = match &message {
            ClientJsonRpcMessage::Request(request) => serde_json::to_value(&request.id).ok(),
            _ => None,
        };
        let response = self
            .inner
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await;
        match id {
            Some(id) => refuse_failures(&id, response),
            None => response,
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        self.inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        self.inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}
