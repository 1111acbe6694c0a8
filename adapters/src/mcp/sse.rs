//! The legacy HTTP+SSE transport (MCP 2024-11-05) as an rmcp [`Transport`], since rmcp 3.11 has
//! no client for it.
//!
//! The protocol: the client opens `GET <url>` as an event stream; the server's first event,
//! `endpoint`, names (relative to the stream URL) where the client `POST`s its JSON-RPC
//! messages; every server message (responses, notifications, server requests) then arrives on the
//! stream as a `message` event. A reader task parses the stream into a channel, and each `POST`
//! runs as its own future, so concurrent requests are not serialised.
//!
//! The endpoint must have the stream's origin: configured headers (a token, say) are sent with
//! every `POST`, and must not go to a host the server names.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use reqwest::header::{ACCEPT, HeaderMap};
use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use sse_stream::SseStream;
use tokio::sync::mpsc;
use url::Url;

use crate::AdapterError;

/// How many server messages may wait for rmcp to read them.
const INCOMING_BUFFER: usize = 1024;

/// A connected legacy SSE session.
#[derive(Debug)]
pub(crate) struct SseTransport {
    client: reqwest::Client,
    endpoint: Arc<Url>,
    headers: HeaderMap,
    incoming: mpsc::Receiver<ServerJsonRpcMessage>,
    reader: tokio::task::JoinHandle<()>,
}

/// A message that could not be delivered.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SseError {
    /// The `POST` failed (connection refused, reset…).
    #[error("cannot POST to the message endpoint: {0}")]
    Http(#[from] reqwest::Error),
    /// The endpoint answered something other than 2xx.
    #[error("the message endpoint answered HTTP {0}")]
    Status(u16),
}

impl SseTransport {
    /// Opens the event stream and waits for the `endpoint` event.
    pub(crate) async fn connect(url: &str, headers: HeaderMap) -> Result<Self, AdapterError> {
        let url = Url::parse(url)
            .map_err(|e| AdapterError::setup(format!("the SSE URL `{url}` is not a URL: {e}")))?;
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| AdapterError::Setup {
                message: "cannot build the HTTP client".to_owned(),
                source: Some(Box::new(e)),
            })?;
        let response = client
            .get(url.clone())
            .headers(headers.clone())
            .header(ACCEPT, "text/event-stream")
            .send()
            .await
            .map_err(|e| AdapterError::Unreachable {
                message: format!("GET {url} failed"),
                source: Some(Box::new(e)),
            })?;
        if !response.status().is_success() {
            return Err(AdapterError::Unreachable {
                message: format!("GET {url} answered HTTP {}", response.status().as_u16()),
                source: None,
            });
        }
        let mut events = SseStream::from_bytes_stream(response.bytes_stream());
        let endpoint = loop {
            match events.next().await {
                Some(Ok(event)) if event.event.as_deref() == Some("endpoint") => {
                    let data = event.data.unwrap_or_default();
                    let endpoint = url.join(data.trim()).map_err(|e| AdapterError::Protocol {
                        message: format!("the SSE endpoint event `{data}` is not a URL: {e}"),
                        source: None,
                    })?;
                    if endpoint.origin() != url.origin() {
                        return Err(AdapterError::Protocol {
                            message: format!(
                                "the SSE endpoint `{endpoint}` is not on the stream's origin"
                            ),
                            source: None,
                        });
                    }
                    break endpoint;
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => {
                    return Err(AdapterError::Protocol {
                        message: format!("the SSE stream is malformed: {e}"),
                        source: None,
                    });
                }
                None => {
                    return Err(AdapterError::ConnectionLost {
                        message: "the SSE stream ended before it named its endpoint".to_owned(),
                    });
                }
            }
        };
        let (tx, incoming) = mpsc::channel(INCOMING_BUFFER);
        let reader = tokio::spawn(async move {
            while let Some(event) = events.next().await {
                let Ok(event) = event else {
                    // A broken stream ends the session; rmcp sees the channel close.
                    break;
                };
                if !matches!(event.event.as_deref(), None | Some("message")) {
                    continue;
                }
                let Some(data) = event.data else { continue };
                match serde_json::from_str::<ServerJsonRpcMessage>(&data) {
                    Ok(message) => {
                        if tx.send(message).await.is_err() {
                            break;
                        }
                    }
                    Err(error) => {
                        tracing::warn!(%error, "Ignoring an SSE message that is not JSON-RPC.");
                    }
                }
            }
        });
        Ok(Self {
            client,
            endpoint: Arc::new(endpoint),
            headers,
            incoming,
            reader,
        })
    }
}

impl Transport<RoleClient> for SseTransport {
    type Error = SseError;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let request = self
            .client
            .post(self.endpoint.as_str())
            .headers(self.headers.clone())
            .json(&item);
        async move {
            let response = request.send().await?;
            let status = response.status();
            if !status.is_success() {
                return Err(SseError::Status(status.as_u16()));
            }
            Ok(())
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<ServerJsonRpcMessage>> + Send {
        self.incoming.recv()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.reader.abort();
        std::future::ready(Ok(()))
    }
}

impl Drop for SseTransport {
    fn drop(&mut self) {
        self.reader.abort();
    }
}
