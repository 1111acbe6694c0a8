//! Newline-delimited JSON-RPC read under the size cap, for both ends of a stdio transport: the
//! bridge reading an MCP child's stdout ([`super::stdio`]) and `otc-bridge mcp` reading its
//! host's stdin. Each decides what an unreadable message becomes; what they share is reading.
//!
//! Lines are read with `fill_buf`/`consume` and never buffered past [`MAX_MESSAGE_BYTES`]; the
//! rest of an oversized line only runs through the [`TopLevel`] scanner. All reading state lives
//! in the struct, because rmcp polls `receive` inside a `select!` and drops it whenever
//! something else is ready: a cancelled [`LineReader::next`] resumes where it stopped.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

use super::limits::{MAX_MESSAGE_BYTES, TopLevel};

/// One message's worth of input.
#[derive(Debug)]
pub enum Frame {
    /// A whole line within the cap, without its line end (`\n`, `\r\n`) or a leading byte order
    /// mark; never blank.
    Line(Vec<u8>),
    /// A line over [`MAX_MESSAGE_BYTES`], by what the scanner saw of it: given once per line,
    /// as soon as the reader's `enough` says so, else when the line ends.
    Oversized(TopLevel),
}

/// Lines of JSON-RPC from `R`, at most [`MAX_MESSAGE_BYTES`] each in memory.
#[derive(Debug)]
pub struct LineReader<R> {
    read: R,
    /// The line read so far (at most the cap).
    line: Vec<u8>,
    /// The current line is over the cap.
    oversized: Option<Oversized>,
}

#[derive(Debug)]
enum Oversized {
    /// Its bytes go through the scanner until it is reported.
    Scanning(TopLevel),
    /// Reported already: the rest of the line is skipped.
    Reported,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    /// Lines of `read` (buffered: a `BufReader` sets how much is read at a time).
    pub fn new(read: R) -> Self {
        Self {
            read,
            line: Vec::new(),
            oversized: None,
        }
    }

    /// The next frame, or `None` at the end of input (a partial last line is no message).
    /// `enough` says when the scanner has seen enough of an oversized line to report it before
    /// its end (the client answers a response as soon as its `id` went by). Cancel-safe.
    pub async fn next(
        &mut self,
        enough: impl Fn(&TopLevel) -> bool,
    ) -> Option<std::io::Result<Frame>> {
        loop {
            let (consumed, frame) = {
                let available = match self.read.fill_buf().await {
                    Ok(available) => available,
                    Err(error) => return Some(Err(error)),
                };
                if available.is_empty() {
                    return None;
                }
                Self::take(&mut self.line, &mut self.oversized, available, &enough)
            };
            self.read.consume(consumed);
            if frame.is_some() {
                return frame.map(Ok);
            }
        }
    }

    /// Takes the next `\n`-terminated piece of `available` into `line` (or through the scanner
    /// of an oversized line); returns how much it took and the frame it completed, if any.
    /// Fields, not `self`: `available` borrows the reader.
    fn take(
        line: &mut Vec<u8>,
        oversized: &mut Option<Oversized>,
        available: &[u8],
        enough: &impl Fn(&TopLevel) -> bool,
    ) -> (usize, Option<Frame>) {
        let newline = available.iter().position(|b| *b == b'\n');
        let take = newline.map_or(available.len(), |i| i + 1);
        let chunk = &available[..take];
        let ended = newline.is_some();
        if oversized.is_none() && line.len() + chunk.len() > MAX_MESSAGE_BYTES {
            let mut scan = TopLevel::default();
            scan.feed(line);
            *line = Vec::new();
            *oversized = Some(Oversized::Scanning(scan));
        }
        match oversized {
            Some(Oversized::Scanning(scan)) => {
                scan.feed(chunk);
                if ended || enough(scan) {
                    let scan = std::mem::take(scan);
                    *oversized = (!ended).then_some(Oversized::Reported);
                    return (take, Some(Frame::Oversized(scan)));
                }
                (take, None)
            }
            Some(Oversized::Reported) => {
                if ended {
                    *oversized = None;
                }
                (take, None)
            }
            None => {
                line.extend_from_slice(chunk);
                if !ended {
                    return (take, None);
                }
                let text = trim(std::mem::take(line));
                (take, (!text.is_empty()).then_some(Frame::Line(text)))
            }
        }
    }
}

/// A line without its line end and byte order mark; empty when it was blank.
fn trim(mut line: Vec<u8>) -> Vec<u8> {
    for end in [b'\n', b'\r'] {
        if line.last() == Some(&end) {
            line.pop();
        }
    }
    if line.starts_with(b"\xEF\xBB\xBF") {
        line.drain(..3);
    }
    if line.iter().all(u8::is_ascii_whitespace) {
        return Vec::new();
    }
    line
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    async fn frames(input: &[u8], enough: impl Fn(&TopLevel) -> bool) -> Vec<Frame> {
        let mut reader = LineReader::new(tokio::io::BufReader::with_capacity(1024, input));
        let mut frames = Vec::new();
        while let Some(frame) = reader.next(&enough).await {
            frames.push(frame.unwrap());
        }
        frames
    }

    #[tokio::test]
    async fn lines_are_trimmed_blank_ones_skipped_and_an_oversized_one_reported_once() {
        let mut input = b"\xEF\xBB\xBF{\"a\":1}\r\n  \n".to_vec();
        input.extend_from_slice(br#"{"jsonrpc":"2.0","id":4,"method":"x","params":""#);
        input.extend(std::iter::repeat_n(b'a', MAX_MESSAGE_BYTES));
        input.extend_from_slice(b"\"}\n{\"b\":2}\npartial");
        let got = frames(&input, |_| false).await;
        assert_eq!(got.len(), 3, "{got:?}");
        assert!(matches!(&got[0], Frame::Line(l) if l == br#"{"a":1}"#));
        assert!(matches!(&got[1], Frame::Oversized(scan) if scan.id() == Some(json!(4))));
        assert!(matches!(&got[2], Frame::Line(l) if l == br#"{"b":2}"#));
        // Reported early, the rest of the line is skipped: still one frame for it.
        let got = frames(&input, |scan| scan.id().is_some()).await;
        assert_eq!(got.len(), 3, "{got:?}");
    }
}
