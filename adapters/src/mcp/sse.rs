//! The legacy HTTP+SSE transport (MCP 2024-11-05) as an rmcp [`Transport`], since rmcp 3.11 has
//! no client for it.
//!
//! The protocol: the client opens `GET <url>` as an event stream; the server's first event,
//! `endpoint`, names (relative to the stream URL) where the client `POST`s its JSON-RPC
//! messages; every server message (responses, notifications, server requests) then arrives on the
//! stream as a `message` event. A reader task parses the stream into a channel, and each `POST`
//! runs as its own future, so concurrent requests are not serialised.
//!
//! The stream is parsed here rather than by `sse-stream`, which buffers an event of any size
//! (issue 8, defect 10: one endless event grew the bridge by 300 MB). A line and an event's data
//! are each capped at [`MAX_MESSAGE_BYTES`]; past it the event is refused, its remaining bytes
//! only go through the id scanner, and a response gets a refusal for its id (see
//! [`super::limits`]), so the call fails at once and, once the event ends, the session goes on.
//!
//! The endpoint must have the stream's origin: configured headers (a token, say) are sent with
//! every `POST`, and must not go to a host the server names.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use std::collections::VecDeque;

use futures::StreamExt;
use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderMap, HeaderValue};
use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::auth::AuthClient;
use rmcp::transport::streamable_http_client::AuthRequiredError;
use tokio::sync::mpsc;
use url::Url;

use super::http::LimitedHttpClient;
use super::limits::{MAX_MESSAGE_BYTES, Refusal, TopLevel, refused, response_id};
use crate::AdapterError;

/// How many server messages may wait for rmcp to read them.
const INCOMING_BUFFER: usize = 1024;

/// A connected legacy SSE session.
#[derive(Debug)]
pub(crate) struct SseTransport {
    client: reqwest::Client,
    endpoint: Arc<Url>,
    headers: HeaderMap,
    auth: Option<SseAuth>,
    incoming: mpsc::Receiver<ServerJsonRpcMessage>,
    reader: tokio::task::JoinHandle<()>,
}

/// The bearer token a session sends.
#[derive(Clone)]
pub(crate) enum SseAuth {
    /// A caller's token, fixed for the session.
    Caller(String),
    /// The source's OAuth client: its current token, refreshed as needed.
    Source(AuthClient<LimitedHttpClient>),
}

impl std::fmt::Debug for SseAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Caller(_) => "Caller(..)",
            Self::Source(_) => "Source(..)",
        })
    }
}

impl SseAuth {
    /// The `Authorization` value to send now; `None` when there is no token yet.
    async fn header(&self) -> Result<Option<HeaderValue>, SseError> {
        let token = match self {
            Self::Caller(token) => token.clone(),
            // No token (never signed in, or not refreshable): the request goes without one and
            // the server's challenge says what it wants.
            Self::Source(client) => match client.get_access_token().await {
                Ok(token) => token,
                Err(_) => return Ok(None),
            },
        };
        let mut value =
            HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| SseError::Token)?;
        value.set_sensitive(true);
        Ok(Some(value))
    }
}

/// Why the stream did not open.
#[derive(Debug)]
pub(crate) enum Opening {
    /// The server wants (other) authorization: its `WWW-Authenticate` challenge (401 or 403).
    Challenge(String),
    /// Anything else.
    Failed(AdapterError),
}

impl From<AdapterError> for Opening {
    fn from(error: AdapterError) -> Self {
        Self::Failed(error)
    }
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
    /// The endpoint refused the token (401, or 403 for lack of scope). rmcp's own error is the
    /// source, so `ServiceError::auth_challenge` finds the challenge as it does over
    /// streamable HTTP, and the token is replaced the same way.
    #[error("the message endpoint refused the authorization")]
    Unauthorized(#[source] AuthRequiredError),
    /// The token cannot be sent as a header.
    #[error("the token is not a valid header value")]
    Token,
}

impl SseTransport {
    /// Opens the event stream and waits for the `endpoint` event.
    pub(crate) async fn connect(
        url: &str,
        headers: HeaderMap,
        auth: Option<SseAuth>,
    ) -> Result<Self, Opening> {
        let url = Url::parse(url)
            .map_err(|e| AdapterError::setup(format!("the SSE URL `{url}` is not a URL: {e}")))?;
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| AdapterError::Setup {
                message: "cannot build the HTTP client".to_owned(),
                source: Some(Box::new(e)),
            })?;
        let mut request = client
            .get(url.clone())
            .headers(headers.clone())
            .header(ACCEPT, "text/event-stream");
        if let Some(auth) = &auth {
            let value = auth
                .header()
                .await
                .map_err(|e| AdapterError::setup(e.to_string()))?;
            if let Some(value) = value {
                request = request.header(AUTHORIZATION, value);
            }
        }
        let response = request
            .send()
            .await
            .map_err(|e| AdapterError::Unreachable {
                message: format!("GET {url} failed"),
                source: Some(Box::new(e)),
            })?;
        let status = response.status();
        if let Some(challenge) = challenge(&response) {
            return Err(Opening::Challenge(challenge));
        }
        if !status.is_success() {
            return Err(AdapterError::Unreachable {
                message: format!("GET {url} answered HTTP {}", status.as_u16()),
                source: None,
            }
            .into());
        }
        let mut bytes = response.bytes_stream();
        let mut decoder = SseDecoder::default();
        let mut items = VecDeque::new();
        let endpoint = loop {
            match items.pop_front() {
                Some(SseItem::Event {
                    name: Some(name),
                    data,
                }) if name == "endpoint" => {
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
                        }
                        .into());
                    }
                    break endpoint;
                }
                Some(_) => {}
                None => match bytes.next().await {
                    Some(Ok(chunk)) => decoder.feed(&chunk, &mut items),
                    Some(Err(e)) => {
                        return Err(AdapterError::Protocol {
                            message: format!("the SSE stream broke: {e}"),
                            source: None,
                        }
                        .into());
                    }
                    None => {
                        return Err(AdapterError::ConnectionLost {
                            message: "the SSE stream ended before it named its endpoint".to_owned(),
                        }
                        .into());
                    }
                },
            }
        };
        let (tx, incoming) = mpsc::channel(INCOMING_BUFFER);
        let reader = tokio::spawn(async move {
            loop {
                while let Some(item) = items.pop_front() {
                    let Some(message) = deliverable(item) else {
                        continue;
                    };
                    if tx.send(message).await.is_err() {
                        return;
                    }
                }
                match bytes.next().await {
                    Some(Ok(chunk)) => decoder.feed(&chunk, &mut items),
                    // A broken or ended stream ends the session; rmcp sees the channel close.
                    _ => return,
                }
            }
        });
        Ok(Self {
            client,
            endpoint: Arc::new(endpoint),
            headers,
            auth,
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
        let auth = self.auth.clone();
        async move {
            // Each POST carries the current token (refreshed or replaced since the stream
            // opened), as rmcp's streamable HTTP client does.
            let request = match &auth {
                Some(auth) => match auth.header().await? {
                    Some(value) => request.header(AUTHORIZATION, value),
                    None => request,
                },
                None => request,
            };
            let response = request.send().await?;
            let status = response.status();
            if let Some(challenge) = challenge(&response) {
                return Err(SseError::Unauthorized(AuthRequiredError::new(challenge)));
            }
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

/// The `WWW-Authenticate` challenge of a 401, or of a 403 (more scopes), when there is one.
fn challenge(response: &reqwest::Response) -> Option<String> {
    if !matches!(response.status().as_u16(), 401 | 403) {
        return None;
    }
    let header = response.headers().get(reqwest::header::WWW_AUTHENTICATE)?;
    header.to_str().ok().map(str::to_owned)
}

/// What a decoded SSE item means for rmcp: a server message, a refusal standing for one, or
/// nothing (other event types, unreadable messages nobody waits for).
fn deliverable(item: SseItem) -> Option<ServerJsonRpcMessage> {
    match item {
        SseItem::Refused(message) => Some(*message),
        SseItem::Event { name, data } => {
            if !matches!(name.as_deref(), None | Some("message")) {
                return None;
            }
            // A large structured result is set aside as its text first (`set_aside`).
            let data = match super::set_aside::rewrite(data.as_bytes()) {
                Some(rewritten) => {
                    drop(data);
                    String::from_utf8(rewritten).ok()?
                }
                None => data,
            };
            match serde_json::from_str::<ServerJsonRpcMessage>(&data) {
                Ok(message) => Some(message),
                Err(error) => match response_id(data.as_bytes()) {
                    Some(id) => refused(&id, Refusal::Malformed),
                    None => {
                        tracing::warn!(%error, "Ignoring an SSE message that is not JSON-RPC.");
                        None
                    }
                },
            }
        }
    }
}

/// One decoded piece of the event stream.
#[derive(Debug)]
enum SseItem {
    /// A whole event with data.
    Event {
        /// Its `event:` field.
        name: Option<String>,
        /// Its `data:` lines, joined with `\n`.
        data: String,
    },
    /// An event over the cap that was a response: the refusal for its id.
    Refused(Box<ServerJsonRpcMessage>),
}

/// An incremental, bounded parser of `text/event-stream` (the WHATWG rules for lines, `data`
/// and `event`; `id`, `retry` and comments are ignored: the legacy transport never resumes).
#[derive(Debug, Default)]
struct SseDecoder {
    /// The line read so far, at most the cap.
    line: Vec<u8>,
    /// The last line ended with `\r`: a `\n` right after it ends nothing.
    after_cr: bool,
    name: Option<String>,
    data: Vec<u8>,
    has_data: bool,
    /// The current event is over the cap.
    over: Option<OverCap>,
}

#[derive(Debug, Default)]
struct OverCap {
    scan: TopLevel,
    answered: bool,
    /// Bytes in the current line (only whether it is empty matters).
    line_len: usize,
}

impl SseDecoder {
    /// Parses `chunk`, appending what it completes to `out`.
    fn feed(&mut self, mut chunk: &[u8], out: &mut VecDeque<SseItem>) {
        while !chunk.is_empty() {
            if self.after_cr && chunk[0] == b'\n' {
                self.after_cr = false;
                chunk = &chunk[1..];
                continue;
            }
            self.after_cr = false;
            let end = chunk.iter().position(|b| *b == b'\n' || *b == b'\r');
            let segment = &chunk[..end.unwrap_or(chunk.len())];
            self.segment(segment, out);
            match end {
                Some(i) => {
                    self.after_cr = chunk[i] == b'\r';
                    self.end_line(out);
                    chunk = &chunk[i + 1..];
                }
                None => chunk = &[],
            }
        }
    }

    /// Part of a line, without its terminator.
    fn segment(&mut self, segment: &[u8], out: &mut VecDeque<SseItem>) {
        if self.over.is_none() && self.line.len() + segment.len() > MAX_MESSAGE_BYTES {
            let mut over = OverCap::default();
            over.scan.feed(&self.data);
            over.scan.feed(strip_field(&self.line));
            over.line_len = self.line.len();
            self.line = Vec::new();
            self.data = Vec::new();
            self.over = Some(over);
        }
        match self.over.as_mut() {
            Some(over) => {
                over.scan.feed(segment);
                over.line_len += segment.len();
                Self::answer_early(over, out);
            }
            None => self.line.extend_from_slice(segment),
        }
    }

    fn answer_early(over: &mut OverCap, out: &mut VecDeque<SseItem>) {
        if !over.answered
            && let Some(id) = over.scan.response_id()
        {
            over.answered = true;
            out.extend(refused(&id, Refusal::TooLarge).map(|m| SseItem::Refused(Box::new(m))));
        }
    }

    fn end_line(&mut self, out: &mut VecDeque<SseItem>) {
        if let Some(over) = self.over.as_mut() {
            if over.line_len > 0 {
                over.line_len = 0;
                return;
            }
            // A blank line: the refused event is over.
            if !over.answered {
                tracing::warn!(
                    limit = MAX_MESSAGE_BYTES,
                    "Dropping an SSE event over the size limit that is not a response."
                );
            }
            self.over = None;
            self.name = None;
            self.has_data = false;
            return;
        }
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            if self.has_data {
                out.push_back(SseItem::Event {
                    name: self.name.take(),
                    data: String::from_utf8_lossy(&self.data).into_owned(),
                });
            }
            self.name = None;
            self.data.clear();
            self.has_data = false;
            return;
        }
        let (field, value) = match line.iter().position(|b| *b == b':') {
            Some(i) => (&line[..i], &line[i + 1..]),
            None => (&line[..], &[][..]),
        };
        let value = value.strip_prefix(b" ").unwrap_or(value);
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.has_data = true;
                self.data.extend_from_slice(value);
                if self.data.len() > MAX_MESSAGE_BYTES {
                    let mut over = OverCap::default();
                    over.scan.feed(&self.data);
                    self.data = Vec::new();
                    Self::answer_early(&mut over, out);
                    self.over = Some(over);
                }
            }
            b"event" => self.name = Some(String::from_utf8_lossy(value).into_owned()),
            _ => {}
        }
    }
}

/// The value of a `data:` line (what the scanner should see), or the whole line.
fn strip_field(line: &[u8]) -> &[u8] {
    match line.strip_prefix(b"data:") {
        Some(value) => value.strip_prefix(b" ").unwrap_or(value),
        None => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(chunks: &[&[u8]]) -> Vec<SseItem> {
        let mut decoder = SseDecoder::default();
        let mut out = VecDeque::new();
        for chunk in chunks {
            decoder.feed(chunk, &mut out);
        }
        out.into()
    }

    #[test]
    fn events_follow_the_line_rules() {
        let items = decode(&[
            b"event: endpoint\r\ndata: /m?s=1\r",
            b"\n\r\n: c\n",
            b"data: a\ndata: b\n\n",
        ]);
        let events: Vec<(Option<String>, String)> = items
            .into_iter()
            .map(|i| match i {
                SseItem::Event { name, data } => (name, data),
                SseItem::Refused(_) => panic!("refused"),
            })
            .collect();
        assert_eq!(
            events,
            [
                (Some("endpoint".to_owned()), "/m?s=1".to_owned()),
                (None, "a\nb".to_owned())
            ]
        );
    }

    #[test]
    fn issue_8_an_event_over_the_cap_is_refused_without_being_kept() {
        let mut decoder = SseDecoder::default();
        let mut out = VecDeque::new();
        decoder.feed(
            br#"data: {"jsonrpc":"2.0","id":9,"result":{"t":""#,
            &mut out,
        );
        let block = vec![b'x'; 1024 * 1024];
        for _ in 0..20 {
            decoder.feed(&block, &mut out);
            assert!(decoder.line.len() <= MAX_MESSAGE_BYTES);
            assert!(decoder.data.len() <= MAX_MESSAGE_BYTES);
        }
        assert!(matches!(out.pop_front(), Some(SseItem::Refused(_))));
        decoder.feed(b"\"}}\n\ndata: {}\n\n", &mut out);
        assert!(
            matches!(out.pop_front(), Some(SseItem::Event { .. })),
            "the stream goes on"
        );
    }
}
