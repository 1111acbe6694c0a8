//! The stdio transport (newline-delimited JSON-RPC on the child's stdin/stdout) as an rmcp
//! [`Transport`], in place of rmcp's `(stdout, stdin)` transport, which silently drops a line
//! over 16 MiB or one it cannot parse. Here such a line, when it is a response, becomes a refusal
//! for its id (see [`super::limits`]), so the call fails at once and the session goes on.
//!
//! Lines are read with `fill_buf`/`consume` and never buffered past
//! [`MAX_MESSAGE_BYTES`](super::limits::MAX_MESSAGE_BYTES); the rest of an oversized line only
//! runs through the id scanner. All reading state lives in the struct, because rmcp polls
//! `receive` inside a `select!` and drops it whenever something else is ready: a cancelled read
//! resumes where it stopped.

use std::future::Future;
use std::sync::Arc;

use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::Mutex;

use super::limits::{MAX_MESSAGE_BYTES, Refusal, TopLevel, refused, response_id};

/// Bytes read from the child at a time.
const READ_BUFFER: usize = 64 * 1024;

/// A child's stdin/stdout as a JSON-RPC transport with a size cap.
#[derive(Debug)]
pub(crate) struct StdioTransport {
    read: BufReader<ChildStdout>,
    write: Arc<Mutex<Option<ChildStdin>>>,
    /// The line read so far (at most the cap).
    line: Vec<u8>,
    /// The current line is over the cap: its bytes only go through `scan`.
    oversized: Option<Oversized>,
}

#[derive(Debug, Default)]
struct Oversized {
    scan: TopLevel,
    /// A refusal was delivered already for this line.
    answered: bool,
}

impl StdioTransport {
    pub(crate) fn new(stdout: ChildStdout, stdin: ChildStdin) -> Self {
        Self {
            read: BufReader::with_capacity(READ_BUFFER, stdout),
            write: Arc::new(Mutex::new(Some(stdin))),
            line: Vec::new(),
            oversized: None,
        }
    }

    /// Takes the next `\n`-terminated piece of `available` into `line` (or through the scanner of
    /// an oversized line); returns how much it took, a message to deliver if any, and whether the
    /// line ended. Fields, not `self`: `available` borrows the reader.
    fn take(
        line: &mut Vec<u8>,
        oversized: &mut Option<Oversized>,
        available: &[u8],
    ) -> (usize, Option<ServerJsonRpcMessage>, bool) {
        let newline = available.iter().position(|b| *b == b'\n');
        let take = newline.map_or(available.len(), |i| i + 1);
        let chunk = &available[..take];
        let ended = newline.is_some();
        if oversized.is_none() && line.len() + chunk.len() > MAX_MESSAGE_BYTES {
            let mut started = Oversized::default();
            started.scan.feed(line);
            *line = Vec::new();
            *oversized = Some(started);
        }
        if let Some(current) = oversized.as_mut() {
            current.scan.feed(chunk);
            let mut message = None;
            if !current.answered
                && let Some(id) = current.scan.response_id()
            {
                // Known as soon as the id and `result` went by: no need to wait for the end.
                current.answered = true;
                message = refused(&id, Refusal::TooLarge);
            }
            if ended {
                if !current.answered {
                    tracing::warn!(
                        limit = MAX_MESSAGE_BYTES,
                        "Dropping an MCP message over the size limit that is not a response."
                    );
                }
                *oversized = None;
            }
            return (take, message, ended);
        }
        line.extend_from_slice(chunk);
        (take, None, ended)
    }

    /// The message in the complete line `self.line`, or the refusal standing for it.
    fn parse_line(&mut self) -> Option<ServerJsonRpcMessage> {
        let line = std::mem::take(&mut self.line);
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
        if text.iter().all(u8::is_ascii_whitespace) {
            return None;
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
            let mut bytes = serde_json::to_vec(&item)?;
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
            let (consumed, message, ended) = {
                let available = match self.read.fill_buf().await {
                    Ok(available) => available,
                    Err(error) => {
                        tracing::warn!(%error, "Cannot read from the MCP server.");
                        return None;
                    }
                };
                if available.is_empty() {
                    // End of output; a partial last line is no message.
                    return None;
                }
                Self::take(&mut self.line, &mut self.oversized, available)
            };
            self.read.consume(consumed);
            if message.is_some() {
                return message;
            }
            if ended
                && !self.line.is_empty()
                && let Some(message) = self.parse_line()
            {
                return Some(message);
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // Dropping stdin is the end of input the server waits for.
        drop(self.write.lock().await.take());
        Ok(())
    }
}
