//! Newline-delimited JSON-RPC read under the size cap, for both ends of a stdio transport: the
//! bridge reading an MCP child's stdout ([`super::stdio`]) and `otc-bridge mcp` reading its
//! host's stdin. Each decides what an unreadable message becomes; what they share is reading.
//!
//! Lines are read with `fill_buf`/`consume` and never buffered past [`MAX_MESSAGE_BYTES`]; the
//! rest of an oversized line only runs through the [`TopLevel`] scanner. A line past
//! [`LONG`] is kept as the pieces it was read in ([`Frame::Long`]), not grown in one buffer:
//! a buffer that doubles holds its old and new copies at once (an 11 MB line grew from 8 to 16
//! MB, 24 MB live for a moment), and a reader that sets part of the line aside can free the
//! pieces it has read (`set_aside.rs`). A long line is also handed, as it arrives, to the
//! reader's [`Watch`]: `set_aside` finds the members it sets aside while the child is still
//! writing the rest, instead of scanning 11 MB after the last byte. All reading state lives
//! in the struct, because rmcp polls `receive` inside a `select!` and drops it whenever
//! something else is ready: a cancelled [`LineReader::next`] resumes where it stopped.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

use super::limits::{MAX_MESSAGE_BYTES, TopLevel};

/// A line at least this long is kept in pieces ([`Frame::Long`]).
const LONG: usize = super::limits::LARGE_MESSAGE;
/// The size of each piece of a long line (past its first).
const PIECE: usize = 64 * 1024;

/// What reads a long line while it is read: every byte of it from its start (after a byte
/// order mark), line end included, in order, as it arrives. `()` reads nothing.
pub trait Watch: Default {
    /// The next bytes of the line.
    fn feed(&mut self, bytes: &[u8]);
}

impl Watch for () {
    fn feed(&mut self, _: &[u8]) {}
}

/// One message's worth of input.
#[derive(Debug)]
pub enum Frame<W = ()> {
    /// A whole line within the cap, without its line end (`\n`, `\r\n`) or a leading byte order
    /// mark; never blank.
    Line(Vec<u8>),
    /// A line of 256 KiB or more (within the cap), as [`Frame::Line`] but in the pieces it was
    /// read in, with what its [`Watch`] made of it.
    Long(Pieces<W>),
    /// A line over [`MAX_MESSAGE_BYTES`], by what the scanner saw of it: given once per line,
    /// as soon as the reader's `enough` says so, else when the line ends.
    Oversized(TopLevel),
}

/// Lines of JSON-RPC from `R`, at most [`MAX_MESSAGE_BYTES`] each in memory.
#[derive(Debug)]
pub struct LineReader<R, W = ()> {
    read: R,
    /// The line read so far (at most the cap): up to [`LONG`] bytes here, the rest in `pieces`.
    line: Vec<u8>,
    /// The line read so far past its first [`LONG`] bytes (the first piece is `line`'s).
    pieces: Vec<Vec<u8>>,
    /// Bytes in `line` and `pieces`.
    len: usize,
    /// The current line is over the cap.
    oversized: Option<Oversized>,
    /// What watches the current line, once it is long.
    watch: W,
}

#[derive(Debug)]
enum Oversized {
    /// Its bytes go through the scanner until it is reported.
    Scanning(TopLevel),
    /// Reported already: the rest of the line is skipped.
    Reported,
}

impl<R: AsyncBufRead + Unpin, W: Watch> LineReader<R, W> {
    /// Lines of `read` (buffered: a `BufReader` sets how much is read at a time).
    pub fn new(read: R) -> Self {
        Self {
            read,
            line: Vec::new(),
            pieces: Vec::new(),
            len: 0,
            oversized: None,
            watch: W::default(),
        }
    }

    /// The next frame, or `None` at the end of input (a partial last line is no message).
    /// `enough` says when the scanner has seen enough of an oversized line to report it before
    /// its end (the client answers a response as soon as its `id` went by). Cancel-safe.
    pub async fn next(
        &mut self,
        enough: impl Fn(&TopLevel) -> bool,
    ) -> Option<std::io::Result<Frame<W>>> {
        loop {
            let (consumed, frame) = {
                let available = match self.read.fill_buf().await {
                    Ok(available) => available,
                    Err(error) => return Some(Err(error)),
                };
                if available.is_empty() {
                    return None;
                }
                let mut line = Reading {
                    line: &mut self.line,
                    pieces: &mut self.pieces,
                    len: &mut self.len,
                    oversized: &mut self.oversized,
                    watch: &mut self.watch,
                };
                Self::take(&mut line, available, &enough)
            };
            self.read.consume(consumed);
            if frame.is_some() {
                return frame.map(Ok);
            }
        }
    }

    /// Takes the next `\n`-terminated piece of `available` into the line (or through the scanner
    /// of an oversized line); returns how much it took and the frame it completed, if any.
    fn take(
        line: &mut Reading<'_, W>,
        available: &[u8],
        enough: &impl Fn(&TopLevel) -> bool,
    ) -> (usize, Option<Frame<W>>) {
        let newline = memchr::memchr(b'\n', available);
        let take = newline.map_or(available.len(), |i| i + 1);
        let chunk = &available[..take];
        let ended = newline.is_some();
        if line.oversized.is_none() && *line.len + chunk.len() > MAX_MESSAGE_BYTES {
            let mut scan = TopLevel::default();
            scan.feed(line.line);
            for piece in line.pieces.iter() {
                scan.feed(piece);
            }
            line.clear();
            *line.oversized = Some(Oversized::Scanning(scan));
        }
        match line.oversized {
            Some(Oversized::Scanning(scan)) => {
                scan.feed(chunk);
                if ended || enough(scan) {
                    let scan = std::mem::take(scan);
                    *line.oversized = (!ended).then_some(Oversized::Reported);
                    return (take, Some(Frame::Oversized(scan)));
                }
                (take, None)
            }
            Some(Oversized::Reported) => {
                if ended {
                    *line.oversized = None;
                }
                (take, None)
            }
            None => {
                line.push(chunk);
                if !ended {
                    return (take, None);
                }
                (take, line.finish())
            }
        }
    }
}

/// A [`LineReader`]'s line being read, borrowed field by field (`available` borrows the
/// reader).
struct Reading<'a, W> {
    line: &'a mut Vec<u8>,
    pieces: &'a mut Vec<Vec<u8>>,
    len: &'a mut usize,
    oversized: &'a mut Option<Oversized>,
    watch: &'a mut W,
}

impl<W: Watch> Reading<'_, W> {
    /// Appends `chunk`: to the line while it is short, then to pieces that are never grown
    /// past the size they were made with (so never copied). A long line's bytes go to the
    /// watch as they come.
    fn push(&mut self, chunk: &[u8]) {
        *self.len += chunk.len();
        if self.pieces.is_empty() && *self.len < LONG {
            self.line.extend_from_slice(chunk);
            return;
        }
        if self.pieces.is_empty() {
            // The byte order mark goes now, so that the watch counts from the message's start.
            if self.line.starts_with(BOM) {
                self.line.drain(..BOM.len());
            }
            self.watch.feed(self.line);
            self.pieces.push(std::mem::take(self.line));
        }
        self.watch.feed(chunk);
        match self.pieces.last_mut() {
            Some(last) if last.capacity() - last.len() >= chunk.len() => {
                last.extend_from_slice(chunk);
            }
            _ => {
                let mut piece = Vec::with_capacity(PIECE.max(chunk.len()));
                piece.extend_from_slice(chunk);
                self.pieces.push(piece);
            }
        }
    }

    /// The frame of the line read whole, if it is not blank; the reader is ready for the next.
    fn finish(&mut self) -> Option<Frame<W>> {
        *self.len = 0;
        if self.pieces.is_empty() {
            let text = trim(std::mem::take(self.line));
            return (!text.is_empty()).then_some(Frame::Line(text));
        }
        Some(Frame::Long(Pieces::trimmed(
            std::mem::take(self.pieces),
            std::mem::take(self.watch),
        )))
    }

    fn clear(&mut self) {
        *self.line = Vec::new();
        *self.pieces = Vec::new();
        *self.len = 0;
        *self.watch = W::default();
    }
}

/// A UTF-8 byte order mark, which a line may start with.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// A long line, in the pieces it was read in, without its line end and byte order mark.
#[derive(Debug)]
pub struct Pieces<W = ()> {
    pieces: Vec<Vec<u8>>,
    watch: W,
}

impl<W> Pieces<W> {
    /// `pieces` without the line end (the byte order mark went when the line became long).
    fn trimmed(mut pieces: Vec<Vec<u8>>, watch: W) -> Self {
        for end in [b'\n', b'\r'] {
            while pieces.last().is_some_and(Vec::is_empty) {
                pieces.pop();
            }
            if let Some(last) = pieces.last_mut()
                && last.last() == Some(&end)
            {
                last.pop();
            }
        }
        Self { pieces, watch }
    }

    /// The pieces, in order, and what the watch made of them.
    pub(crate) fn into_parts(self) -> (Vec<Vec<u8>>, W) {
        (self.pieces, self.watch)
    }

    /// The line in one buffer (of exactly its size).
    pub fn into_bytes(self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(self.pieces.iter().map(Vec::len).sum());
        for piece in self.pieces {
            bytes.extend_from_slice(&piece);
        }
        bytes
    }
}

impl<W: Watch> From<Vec<Vec<u8>>> for Pieces<W> {
    /// Pieces as they are (trimmed already), watched as if they had been read.
    fn from(pieces: Vec<Vec<u8>>) -> Self {
        let mut watch = W::default();
        for piece in &pieces {
            watch.feed(piece);
        }
        Self { pieces, watch }
    }
}

/// A line without its line end and byte order mark; empty when it was blank.
fn trim(mut line: Vec<u8>) -> Vec<u8> {
    for end in [b'\n', b'\r'] {
        if line.last() == Some(&end) {
            line.pop();
        }
    }
    if line.starts_with(BOM) {
        line.drain(..BOM.len());
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

    /// A watch that keeps every byte it is fed.
    #[derive(Debug, Default)]
    struct Record(Vec<u8>);

    impl Watch for Record {
        fn feed(&mut self, bytes: &[u8]) {
            self.0.extend_from_slice(bytes);
        }
    }

    async fn frames(input: &[u8], enough: impl Fn(&TopLevel) -> bool) -> Vec<Frame<Record>> {
        let mut reader = LineReader::new(tokio::io::BufReader::with_capacity(1024, input));
        let mut frames = Vec::new();
        while let Some(frame) = reader.next(&enough).await {
            frames.push(frame.unwrap());
        }
        frames
    }

    #[tokio::test]
    async fn a_long_line_comes_in_pieces_that_make_the_line() {
        let long: Vec<u8> = (0..LONG * 3).map(|i| b'a' + (i % 26) as u8).collect();
        let mut input = b"\xEF\xBB\xBF".to_vec();
        input.extend_from_slice(&long);
        input.extend_from_slice(b"\r\n{\"b\":2}\n");
        input.extend_from_slice(&long[..LONG]);
        input.push(b'\n');
        let got = frames(&input, |_| false).await;
        assert_eq!(got.len(), 3, "{got:?}");
        let mut got = got.into_iter();
        let Some(Frame::Long(first)) = got.next() else {
            panic!("a long frame first");
        };
        let (pieces, watched) = first.into_parts();
        assert!(pieces.len() > 1 && pieces.iter().all(|p| p.len() <= LONG));
        assert_eq!(Pieces::<()>::from(pieces).into_bytes(), long);
        // The watch saw the line as it came, from after the byte order mark to its end.
        assert_eq!(watched.0, [long.as_slice(), b"\r\n"].concat());
        assert!(matches!(got.next(), Some(Frame::Line(l)) if l == br#"{"b":2}"#));
        let Some(Frame::Long(last)) = got.next() else {
            panic!("a long frame last");
        };
        let (pieces, watched) = last.into_parts();
        assert_eq!(
            watched.0,
            [&long[..LONG], b"\n"].concat(),
            "a new watch per line"
        );
        assert_eq!(Pieces::<()>::from(pieces).into_bytes(), long[..LONG]);
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
