//! `otc-bridge mcp`'s transport: newline-delimited JSON-RPC on stdin/stdout, in place of rmcp's
//! `stdio()`, whose codec drops a line it cannot read (not JSON, nested too deep, over 16 MiB)
//! and leaves the host waiting for an answer forever. Here every such line is answered with a
//! JSON-RPC error ([`rpc::malformed`], [`rpc::too_large`]) for its `id` when that can be read,
//! else `null`, and the session goes on (issue 25, item 12).
//!
//! Lines are read by the adapters' [`LineReader`], the one the bridge uses on its MCP children's
//! stdout: never more than [`MAX_MESSAGE_BYTES`] in memory, cancel-safe. Stdout has one writer,
//! a task fed by a queue, so rmcp's messages and these errors never interleave; rmcp's sends
//! wait until their line is written, and a full queue stops reading (the host is not reading).

use std::future::Future;

use otc_adapters::mcp::{Frame, LineReader, MAX_MESSAGE_BYTES, TopLevel};
use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::rpc;

/// Lines waiting for the writer.
const QUEUE: usize = 64;

/// One line for stdout, and who waits for it to be written.
struct Line {
    bytes: Vec<u8>,
    written: Option<oneshot::Sender<std::io::Result<()>>>,
}

/// The host's stdin and stdout as an rmcp transport.
pub(super) struct StdioServer<R> {
    read: LineReader<BufReader<R>>,
    /// The writer's queue; `None` once closed.
    write: Option<mpsc::Sender<Line>>,
    /// The error answering a line rmcp never saw, until the queue takes it.
    pending: Option<Vec<u8>>,
}

impl<R> std::fmt::Debug for StdioServer<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdioServer")
            .field("closed", &self.write.is_none())
            .field("pending", &self.pending.is_some())
            .finish_non_exhaustive()
    }
}

impl<R: AsyncRead + Unpin + Send + 'static> StdioServer<R> {
    /// A transport over `read` and `write`, and the writer task, which ends once the transport
    /// and every send in flight are gone and all they queued is written: await it before exit.
    pub(super) fn new(
        read: R,
        write: impl AsyncWrite + Unpin + Send + 'static,
    ) -> (Self, JoinHandle<()>) {
        let (queue, lines) = mpsc::channel(QUEUE);
        let writer = tokio::spawn(write_lines(write, lines));
        let transport = Self {
            read: LineReader::new(BufReader::new(read)),
            write: Some(queue),
            pending: None,
        };
        (transport, writer)
    }

    /// Hands the pending error to the writer. Cancel-safe: the error stays pending until the
    /// queue has room for it.
    async fn flush_pending(&mut self) {
        if self.pending.is_none() {
            return;
        }
        let reserved = match &self.write {
            Some(queue) => queue.reserve().await.ok(),
            None => None,
        };
        let bytes = self.pending.take();
        if let (Some(permit), Some(bytes)) = (reserved, bytes) {
            permit.send(Line {
                bytes,
                written: None,
            });
        }
    }
}

/// Writes each queued line whole, in order, until the queue's senders are all gone or stdout
/// fails (the host went away: nothing more can be said to it).
async fn write_lines(mut out: impl AsyncWrite + Unpin, mut lines: mpsc::Receiver<Line>) {
    while let Some(line) = lines.recv().await {
        let written = async {
            out.write_all(&line.bytes).await?;
            out.flush().await
        }
        .await;
        let failed = written.is_err();
        match (line.written, written) {
            (Some(waiting), written) => {
                // The send that waited may have been dropped; the line is written all the same.
                let _ = waiting.send(written);
            }
            (None, Err(error)) => tracing::warn!(%error, "Cannot write to the MCP host."),
            (None, Ok(())) => {}
        }
        if failed {
            return;
        }
    }
}

/// A JSON-RPC error as a line.
fn line(error: &Value) -> Vec<u8> {
    let mut bytes = error.to_string().into_bytes();
    bytes.push(b'\n');
    bytes
}

fn closed() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::BrokenPipe, "stdout is closed")
}

impl<R: AsyncRead + Unpin + Send + 'static> Transport<RoleServer> for StdioServer<R> {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let queue = self.write.clone();
        async move {
            let mut bytes = serde_json::to_vec(&item)?;
            bytes.push(b'\n');
            let (written, done) = oneshot::channel();
            let line = Line {
                bytes,
                written: Some(written),
            };
            queue
                .ok_or_else(closed)?
                .send(line)
                .await
                .map_err(|_| closed())?;
            done.await.map_err(|_| closed())?
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            self.flush_pending().await;
            let text = match self.read.next(|_| false).await? {
                Err(error) => {
                    tracing::warn!(%error, "Cannot read from the MCP host.");
                    return None;
                }
                Ok(Frame::Line(text)) => Ok(text),
                // A host's long request (large arguments) is read as any other.
                Ok(Frame::Long(line)) => Ok(line.into_bytes()),
                Ok(Frame::Oversized(scan)) => Err(scan),
            };
            let error = match text {
                Ok(text) => match serde_json::from_slice(&text) {
                    Ok(message) => return Some(message),
                    Err(_) => {
                        let mut scan = TopLevel::default();
                        scan.feed(&text);
                        // An answer from the host is never answered (JSON-RPC).
                        (!scan.is_response()).then(|| rpc::malformed(&text))
                    }
                },
                Err(scan) => (!scan.is_response())
                    .then(|| rpc::too_large(scan.id().as_ref(), MAX_MESSAGE_BYTES)),
            };
            match error {
                Some(error) => {
                    tracing::debug!(%error, "Answering a message from the MCP host that cannot be read.");
                    self.pending = Some(line(&error));
                }
                None => {
                    tracing::debug!("Ignoring an answer from the MCP host that cannot be read.")
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.flush_pending().await;
        // The writer ends once this and the sends in flight are gone.
        drop(self.write.take());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt as _;

    use super::*;

    #[tokio::test]
    async fn issue_25_an_unreadable_request_is_answered_an_unreadable_answer_is_not() {
        let answer = r#"{"jsonrpc":"2.0","id":99,"error":{"code":"not a number"}}"#;
        assert!(serde_json::from_str::<ClientJsonRpcMessage>(answer).is_err());
        let input = format!(
            "{answer}\n{{\"id\":1}}\n{}\n",
            r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#
        );
        let (out, mut host) = tokio::io::duplex(4096);
        let (mut transport, writer) = StdioServer::new(std::io::Cursor::new(input), out);
        let ping = transport.receive().await;
        assert!(
            matches!(ping, Some(ClientJsonRpcMessage::Request(_))),
            "{ping:?}"
        );
        assert!(transport.receive().await.is_none());
        transport.close().await.unwrap();
        drop(transport);
        writer.await.unwrap();
        let mut written = String::new();
        host.read_to_string(&mut written).await.unwrap();
        let lines: Vec<Value> = written
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 1, "{written}");
        assert_eq!(lines[0]["id"], 1);
        assert_eq!(lines[0]["error"]["code"], -32600);
    }
}
