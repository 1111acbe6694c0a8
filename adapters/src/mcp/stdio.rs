//! The stdio transport (newline-delimited JSON-RPC on the child's stdin/stdout) as an rmcp
//! [`Transport`], in place of rmcp's `(stdout, stdin)` transport, which silently drops a line
//! over 16 MiB or one it cannot parse. Here such a line, when it is a response, becomes a refusal
//! for its id (see [`super::limits`]), so the call fails at once and the session goes on.
//!
//! Lines are read by [`LineReader`] (bounded, cancel-safe: rmcp polls `receive` inside a
//! `select!` and drops it whenever something else is ready).

use std::future::Future;
use std::sync::Arc;

use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::Mutex;

use super::limits::{MAX_MESSAGE_BYTES, Refusal, refused, response_id};
use super::lines::{Frame, LineReader, Pieces};
use super::set_aside::{self, Finder};
use super::tool_call;

/// Bytes read from the child at a time.
const READ_BUFFER: usize = 64 * 1024;

/// A child's stdin/stdout as a JSON-RPC transport with a size cap.
#[derive(Debug)]
pub(crate) struct StdioTransport {
    read: LineReader<BufReader<ChildStdout>, Finder>,
    write: Arc<Mutex<Option<ChildStdin>>>,
}

impl StdioTransport {
    pub(crate) fn new(stdout: ChildStdout, stdin: ChildStdin) -> Self {
        Self {
            read: LineReader::new(BufReader::with_capacity(READ_BUFFER, stdout)),
            write: Arc::new(Mutex::new(Some(stdin))),
        }
    }

    /// The message in a complete line, or the refusal standing for it. A large structured
    /// result is set aside as its text first ([`set_aside`]), and the line is dropped before
    /// rmcp parses what is left.
    fn parse_line(line: Vec<u8>) -> Option<ServerJsonRpcMessage> {
        let text = match set_aside::rewrite(&line) {
            Some(rewritten) => {
                drop(line);
                rewritten
            }
            None => line,
        };
        Self::parse(&text)
    }

    /// As [`StdioTransport::parse_line`], for a long line read in pieces: the structured text is
    /// set aside from the pieces, which are freed as it is copied out.
    fn parse_long(line: Pieces<Finder>) -> Option<ServerJsonRpcMessage> {
        match set_aside::rewrite_pieces(line) {
            Ok(rewritten) | Err(rewritten) => Self::parse(&rewritten),
        }
    }

    /// The message in `text`, or the refusal standing for it. A tool call's answer is read
    /// straight into its type ([`tool_call`]), everything else by rmcp.
    fn parse(text: &[u8]) -> Option<ServerJsonRpcMessage> {
        if let Some(message) = tool_call::read(text) {
            return Some(message);
        }
        match serde_json::from_slice::<ServerJsonRpcMessage>(text) {
            Ok(message) => Some(message),
            Err(error) => match response_id(text) {
                Some(id) => refused(&id, Refusal::Malformed),
                None => {
                    // Nobody waits for it (a notification, garbage): rmcp drops these too.
                    tracing::debug!(%error, "Ignoring an MCP message that cannot be read.");
                    None
                }
            },
        }
    }
}

impl Transport<RoleClient> for StdioTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = self.write.clone();
        async move {
            // A tool call is written the short way ([`tool_call::write`]).
            let mut item = item;
            let mut bytes = match tool_call::write(&mut item) {
                Some(line) => line?,
                None => serde_json::to_vec(&item)?,
            };
            bytes.push(b'\n');
            let mut write = write.lock().await;
            let stdin = write.as_mut().ok_or_else(|| {
                std::io::Error::new(std::io::ErrorKind::NotConnected, "the transport is closed")
            })?;
            stdin.write_all(&bytes).await?;
            stdin.flush().await
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            // An oversized answer is known as soon as its id and `result` went by: no need to
            // wait for its end.
            match self.read.next(|scan| scan.response_id().is_some()).await? {
                Err(error) => {
                    tracing::warn!(%error, "Cannot read from the MCP server.");
                    return None;
                }
                Ok(Frame::Line(text)) => {
                    if let Some(message) = Self::parse_line(text) {
                        return Some(message);
                    }
                }
                Ok(Frame::Long(line)) => {
                    if let Some(message) = Self::parse_long(line) {
                        return Some(message);
                    }
                }
                Ok(Frame::Oversized(scan)) => match scan.response_id() {
                    Some(id) => return refused(&id, Refusal::TooLarge),
                    None => tracing::warn!(
                        limit = MAX_MESSAGE_BYTES,
                        "Dropping an MCP message over the size limit that is not a response."
                    ),
                },
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // Dropping stdin is the end of input the server waits for.
        drop(self.write.lock().await.take());
        Ok(())
    }
}
