//! A large `structuredContent` kept as its JSON text, out of rmcp's parse (issue 27).
//!
//! rmcp parses every message into its model, where `structuredContent` is a `serde_json::Value`:
//! several times the size of its text. An answer the bridge only passes on, or cuts to an MCP
//! host's byte budget, never needs that tree. So before a transport hands a message to rmcp,
//! [`rewrite`] looks at a response over [`LARGE`] bytes: when its result has
//! `structuredContent` (and is not an error, whose whole result is reported), that value's text
//! is kept here under a random key and the message goes on with a marker in its place, and with
//! `content` emptied, since the bridge reads a result's text blocks only when it has no
//! structured content (`convert.rs`) and a server's text block usually repeats it whole. The
//! conversion then [`take`]s the text back by the marker.
//!
//! The keys are random UUIDs that never leave the process, so a server cannot name another
//! answer's text by sending a marker of its own: an unknown key is left as the value it is.
//! What is kept is bounded in entries and bytes; an answer nobody takes (its call was cancelled
//! while it travelled) is dropped when newer ones need the room.
//!
//! The transports whose messages the bridge reads itself use it: stdio, legacy SSE, and the
//! event streams of streamable HTTP. On stdio a long line arrives in the pieces it was read in,
//! and [`rewrite_pieces`] sets the text aside from them (where the members are was found by
//! [`Finder`] while the line was read), freeing each piece once it is copied out: a
//! 5 MB structured answer (an 11 MB message, the text block repeating it) peaked at 5.05× its
//! size through a doubling line buffer and a copy, and now at 2.14× (`mcp_cut_peak`). A streamable HTTP answer sent as one JSON body is parsed
//! by rmcp's own client before the bridge sees it, and stays parsed.

use std::sync::{LazyLock, Mutex};

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use super::lines::{Pieces, Watch};
use super::nesting::Nesting;

/// A message at least this large is looked at; a smaller one is parsed as it is.
const LARGE: usize = super::limits::LARGE_MESSAGE;
/// At most this many texts are kept at once.
const MAX_ENTRIES: usize = 64;
/// At most this many bytes of text are kept at once (four answers at the size cap).
const MAX_BYTES: usize = 4 * super::limits::MAX_MESSAGE_BYTES;
/// The one key of the object standing for a text kept here.
const MARKER: &str = "otc-bridge/set-aside";

/// The texts set aside, oldest first, and their total size.
#[derive(Default)]
struct Kept {
    texts: IndexMap<String, Box<RawValue>>,
    bytes: usize,
}

static KEPT: LazyLock<Mutex<Kept>> = LazyLock::new(Mutex::default);

fn kept() -> std::sync::MutexGuard<'static, Kept> {
    KEPT.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A JSON-RPC response, read without copying: each member stays its text.
#[derive(Deserialize, Serialize)]
struct Response<'a> {
    #[serde(borrow)]
    jsonrpc: &'a RawValue,
    #[serde(borrow)]
    id: &'a RawValue,
    #[serde(borrow)]
    result: IndexMap<std::borrow::Cow<'a, str>, &'a RawValue>,
}

/// `message` with a large `structuredContent` set aside, or `None` when it stays as it is.
pub(crate) fn rewrite(message: &[u8]) -> Option<Vec<u8>> {
    if message.len() < LARGE {
        return None;
    }
    let mut response: Response<'_> = serde_json::from_slice(message).ok()?;
    if response
        .result
        .get("isError")
        .is_some_and(|e| e.get() == "true")
    {
        return None;
    }
    let structured = *response.result.get("structuredContent")?;
    let key = uuid::Uuid::new_v4().to_string();
    let marker = RawValue::from_string(marker(&key)?).ok()?;
    let empty = RawValue::from_string("[]".to_owned()).ok()?;
    let text: Box<RawValue> = structured.to_owned();
    response.result.insert("structuredContent".into(), &marker);
    if response.result.contains_key("content") {
        response.result.insert("content".into(), &empty);
    }
    let rewritten = serde_json::to_vec(&response).ok()?;
    keep(key, text);
    Some(rewritten)
}

/// As [`rewrite`], for a line read in pieces ([`super::lines::Pieces`]), which it frees as it
/// goes: the message is never in one buffer, and the pieces before `structuredContent` (a text
/// block that repeats it, typically) are freed before its text is copied out, so the most held
/// at once is the message (in its pieces) or the text and the rest of the message, not both
/// and a copy. `Err` gives the line back, whole, when nothing is set aside.
pub(crate) fn rewrite_pieces(line: Pieces<Finder>) -> Result<Vec<u8>, Vec<u8>> {
    let (pieces, finder) = line.into_parts();
    let Some(members) = finder.members() else {
        return Err(concat(pieces));
    };
    let Some(structured) = members.structured.clone() else {
        return Err(concat(pieces));
    };
    if members.is_error(&pieces) {
        return Err(concat(pieces));
    }
    // The message without the two members' values, with what stands for them in their place.
    let key = uuid::Uuid::new_v4().to_string();
    let Some(marker) = marker(&key) else {
        return Err(concat(pieces));
    };
    let mut cuts = vec![(structured.clone(), marker.as_bytes())];
    if let Some(content) = members.content.clone() {
        cuts.push((content, b"[]".as_slice()));
    }
    cuts.sort_by_key(|(range, _)| range.start);
    let mut small = Vec::new();
    let mut text = Vec::new();
    let mut offset = 0;
    for piece in pieces {
        let range = offset..offset + piece.len();
        offset = range.end;
        let mut at = range.start;
        while at < range.end {
            let slice = |to: usize| &piece[at - range.start..to - range.start];
            match cuts.iter().find(|(cut, _)| cut.contains(&at)) {
                Some((cut, stand_in)) => {
                    let to = cut.end.min(range.end);
                    if at == cut.start {
                        small.extend_from_slice(stand_in);
                    }
                    if *cut == structured {
                        if text.capacity() == 0 {
                            text.reserve_exact(structured.len());
                        }
                        text.extend_from_slice(slice(to));
                    }
                    at = to;
                }
                None => {
                    let to = cuts
                        .iter()
                        .map(|(cut, _)| cut.start)
                        .filter(|&start| start > at)
                        .fold(range.end, usize::min);
                    small.extend_from_slice(slice(to));
                    at = to;
                }
            }
        }
        // `piece` is dropped here: what was read is freed as the copy goes.
    }
    let Ok(text) = String::from_utf8(text) else {
        return Err(small);
    };
    match RawValue::from_string(text) {
        Ok(text) => {
            keep(key, text);
            Ok(small)
        }
        // Not JSON after all: the message goes on as rmcp would have read it (and refused it).
        Err(_) => Err(small),
    }
}

/// The object standing for the text kept under `key`.
fn marker(key: &str) -> Option<String> {
    serde_json::to_string(&serde_json::json!({MARKER: key})).ok()
}

fn concat(pieces: Vec<Vec<u8>>) -> Vec<u8> {
    Pieces::<()>::from(pieces).into_bytes()
}

/// Where the members of a response's `result` that [`rewrite_pieces`] sets aside are, by byte
/// offset in the whole message; found by [`Finder`].
#[derive(Debug, Default, Clone)]
struct Members {
    content: Option<std::ops::Range<usize>>,
    structured: Option<std::ops::Range<usize>>,
    is_error: Option<std::ops::Range<usize>>,
}

/// Finds a long line's [`Members`] as it is read (the stdio transport's line [`Watch`]), by a
/// scan of its structure (strings, escapes, nesting) that copies nothing. Reading the line took
/// the child about as long as this scan takes; scanned after its last byte, the two added up.
#[derive(Debug, Default)]
pub(crate) struct Finder {
    scan: Scan,
    /// Bytes fed so far.
    offset: usize,
    /// The line is not a JSON object with an object `result` that names each member once.
    lost: bool,
}

impl Watch for Finder {
    fn feed(&mut self, piece: &[u8]) {
        if !self.lost && self.step(piece).is_none() {
            self.lost = true;
        }
        self.offset += piece.len();
    }
}

impl Finder {
    /// The members found, once the whole line was fed; `None` when the line is not a JSON
    /// object with an object `result`, or names a member twice.
    fn members(self) -> Option<Members> {
        let scan = self.scan;
        (!self.lost && scan.nesting.depth == 0 && scan.result_done).then_some(scan.members)
    }

    fn step(&mut self, piece: &[u8]) -> Option<()> {
        let (scan, offset) = (&mut self.scan, self.offset);
        let mut at = 0;
        while at < piece.len() {
            // Inside a value deeper than the members looked for only brackets and strings
            // matter: read by a lean loop instead of the whole state machine (most of a
            // message is such values).
            if scan.deep() {
                at += scan.skip_deep(offset + at, &piece[at..]);
                continue;
            }
            // Inside a string value only its closing quote and escapes matter: jump to the
            // next (most of a message is string text, and byte by byte made this scan a
            // third slower than the whole parse it replaces).
            if scan.nesting.in_string && !scan.nesting.escaped && scan.key.is_none() {
                let skip = memchr::memchr2(b'"', b'\\', &piece[at..]).unwrap_or(piece.len() - at);
                at += skip;
                scan.skipped(offset + at);
                if at == piece.len() {
                    break;
                }
            }
            scan.byte(offset + at, piece[at])?;
            at += 1;
        }
        Some(())
    }
}

impl Members {
    fn is_error(&self, pieces: &[Vec<u8>]) -> bool {
        let Some(range) = &self.is_error else {
            return false;
        };
        // The value's bytes, sliced from the pieces it spans (a few bytes: the whole message
        // is not walked again).
        let mut value = Vec::new();
        let mut offset = 0;
        for piece in pieces {
            let start = range.start.clamp(offset, offset + piece.len());
            let end = range.end.clamp(offset, offset + piece.len());
            value.extend_from_slice(&piece[start - offset..end - offset]);
            offset += piece.len();
        }
        value == b"true"
    }
}

/// The state of a [`Finder`]'s scan.
#[derive(Debug, Default)]
struct Scan {
    nesting: Nesting,
    /// The next string opened at this depth is a key (depth 1, or 2 inside `result`).
    expect_key: bool,
    /// A key being read, and the last key read.
    key: Option<Vec<u8>>,
    last_key: Vec<u8>,
    /// Waiting for a member's value to start (after its `:`).
    value_next: bool,
    /// The object at depth 2 is `result`'s value.
    in_result: bool,
    result_done: bool,
    /// The `result` member being read: its key and where its value starts.
    member: Option<(Vec<u8>, usize)>,
    /// The offset after the last byte of `result`'s members that is not white space.
    end: usize,
    members: Members,
}

/// Keys longer than this are none of the keys looked for.
const MAX_KEY: usize = 32;

impl Scan {
    fn byte(&mut self, at: usize, byte: u8) -> Option<()> {
        let mine = self.nesting.depth == 1 || (self.nesting.depth == 2 && self.in_result);
        if self.nesting.in_string {
            if self.nesting.string_byte(byte)
                && let Some(key) = self.key.take()
            {
                self.last_key = key;
                return Some(());
            }
            if let Some(key) = &mut self.key
                && key.len() <= MAX_KEY
            {
                key.push(byte);
            }
            if self.in_result && self.nesting.depth >= 2 {
                self.end = at + 1;
            }
            return Some(());
        }
        if byte.is_ascii_whitespace() {
            return Some(());
        }
        if self.in_result
            && self.nesting.depth >= 2
            && !(self.nesting.depth == 2 && matches!(byte, b',' | b'}'))
        {
            self.end = at + 1;
        }
        if self.value_next && mine {
            self.value_next = false;
            if self.nesting.depth == 2 {
                self.member = Some((std::mem::take(&mut self.last_key), at));
            } else if self.last_key == b"result" {
                if byte != b'{' || self.result_done {
                    return None;
                }
                self.in_result = true;
            }
        }
        match byte {
            b'"' => {
                self.nesting.in_string = true;
                if self.expect_key && mine {
                    self.expect_key = false;
                    self.key = Some(Vec::new());
                }
            }
            b':' if mine => self.value_next = true,
            b'{' | b'[' => {
                self.nesting.depth += 1;
                self.expect_key = byte == b'{'
                    && (self.nesting.depth == 1 || (self.nesting.depth == 2 && self.in_result));
            }
            b',' if mine => {
                if self.nesting.depth == 2 {
                    self.close_member()?;
                }
                self.expect_key = true;
            }
            b'}' | b']' => {
                if self.nesting.depth == 2 && self.in_result {
                    self.close_member()?;
                    self.in_result = false;
                    self.result_done = true;
                }
                self.nesting.depth = self.nesting.depth.checked_sub(1)?;
            }
            _ => {}
        }
        Some(())
    }

    /// The depth of the members looked for: `result`'s inside it, the message's outside.
    fn watched(&self) -> usize {
        if self.in_result { 2 } else { 1 }
    }

    /// Whether the scan is inside a value none of whose members is looked for.
    fn deep(&self) -> bool {
        self.nesting.depth > self.watched()
    }

    /// Reads `bytes`, which start at offset `at` inside a [`Scan::deep`] value, until that
    /// value closes (or they run out); returns how many bytes it read.
    fn skip_deep(&mut self, at: usize, bytes: &[u8]) -> usize {
        let read = self.nesting.skip_deeper(self.watched(), bytes);
        if !self.deep() && self.in_result {
            self.end = at + read;
        }
        read
    }

    /// The string's text up to `to` went by unread.
    fn skipped(&mut self, to: usize) {
        if self.in_result && self.nesting.depth >= 2 && to > 0 {
            self.end = self.end.max(to);
        }
    }

    /// Ends the `result` member being read; `None` when it repeats one looked for.
    fn close_member(&mut self) -> Option<()> {
        let Some((key, start)) = self.member.take() else {
            return Some(());
        };
        let slot = match key.as_slice() {
            b"content" => &mut self.members.content,
            b"structuredContent" => &mut self.members.structured,
            b"isError" => &mut self.members.is_error,
            _ => return Some(()),
        };
        if slot.is_some() {
            return None;
        }
        *slot = Some(start..self.end.max(start));
        Some(())
    }
}

/// Keeps `text` under `key`, dropping the oldest texts past the bounds.
fn keep(key: String, text: Box<RawValue>) {
    let mut kept = kept();
    kept.bytes += text.get().len();
    kept.texts.insert(key, text);
    while kept.texts.len() > MAX_ENTRIES || (kept.bytes > MAX_BYTES && kept.texts.len() > 1) {
        if let Some((_, dropped)) = kept.texts.shift_remove_index(0) {
            kept.bytes -= dropped.get().len();
        }
    }
}

/// The text `value` stands for, when it is a marker of a text still kept; taken out.
pub(crate) fn take(value: &Value) -> Option<Box<RawValue>> {
    let object = value.as_object()?;
    if object.len() != 1 {
        return None;
    }
    let key = object.get(MARKER)?.as_str()?;
    let mut kept = kept();
    let text = kept.texts.shift_remove(key)?;
    kept.bytes -= text.get().len();
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The texts kept are one process-wide table: tests that fill it run one at a time.
    static SERIAL: Mutex<()> = Mutex::new(());

    fn large_result(result: &Value) -> Vec<u8> {
        serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 7, "result": result})).unwrap()
    }

    #[test]
    fn a_large_structured_content_is_kept_as_its_text_and_taken_back_once() {
        let _serial = SERIAL
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let items: Vec<Value> = (0..20_000).map(|i| json!({"n": i, "s": "é\"x"})).collect();
        let structured = json!({"items": items});
        let text = serde_json::to_string(&structured).unwrap();
        let message = large_result(&json!({
            "content": [{"type": "text", "text": text}],
            "structuredContent": structured,
        }));
        let rewritten = rewrite(&message).expect("set aside");
        assert!(
            rewritten.len() < 200,
            "{}",
            String::from_utf8_lossy(&rewritten)
        );
        let parsed: Value = serde_json::from_slice(&rewritten).unwrap();
        assert_eq!(parsed["id"], 7);
        assert_eq!(parsed["result"]["content"], json!([]));
        let marker = &parsed["result"]["structuredContent"];
        let kept = take(marker).expect("kept");
        assert_eq!(
            serde_json::from_str::<Value>(kept.get()).unwrap(),
            structured
        );
        assert!(take(marker).is_none(), "taken once");
    }

    /// `message` cut into pieces of `size` bytes, as a line reader keeps a long line.
    fn pieces(message: &[u8], size: usize) -> Pieces<Finder> {
        Pieces::from(message.chunks(size).map(<[u8]>::to_vec).collect::<Vec<_>>())
    }

    /// The message `rewrite` or `rewrite_pieces` made, as JSON, with the text kept for its
    /// marker taken back in its place.
    fn taken_back(rewritten: &[u8]) -> Value {
        let mut message: Value = serde_json::from_slice(rewritten).unwrap();
        if let Some(text) = take(&message["result"]["structuredContent"]) {
            message["result"]["structuredContent"] = serde_json::from_str(text.get()).unwrap();
        }
        message
    }

    #[test]
    fn a_message_in_pieces_is_set_aside_as_a_whole_one_is() {
        let _serial = SERIAL
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // Strings that look like structure: quotes, escapes, brackets, keys, commas.
        let tricky = r#"a "quoted" \ back\slash, {"structuredContent": [1]}, ] } é é"#;
        let items: Vec<Value> = (0..4_000)
            .map(
                |i| json!({"n": i, "s": tricky, "nested": {"a": [i, {"b": null}], "content": "x"}}),
            )
            .collect();
        let structured = json!({"items": items});
        let text = serde_json::to_string(&structured).unwrap();
        let results = [
            json!({"content": [{"type": "text", "text": text}], "structuredContent": structured}),
            json!({"structuredContent": structured, "_meta": {"k": "v"}, "content": [{"type": "text", "text": tricky}]}),
            json!({"isError": false, "structuredContent": structured}),
        ];
        for result in &results {
            let message = large_result(result);
            // With spaces where JSON allows them, too.
            let spaced = String::from_utf8(message.clone())
                .unwrap()
                .replacen("{\"jsonrpc\"", "{ \"jsonrpc\" ", 1)
                .replacen("\"result\":", "\"result\" :\t", 1)
                .into_bytes();
            // A member of the message besides `result` that holds look-alikes of what is
            // looked for, nested, before and after it.
            let decoy = r#""_meta": {"result": {"structuredContent": [{"content": "\\\""}]}}"#;
            let decoyed = String::from_utf8(message.clone())
                .unwrap()
                .replacen("{\"jsonrpc\"", &format!("{{{decoy}, \"jsonrpc\""), 1)
                .replacen(
                    "\"id\":7",
                    &format!("\"id\":7, {}", decoy.replace("_meta", "_after")),
                    1,
                )
                .into_bytes();
            for message in [&message, &spaced, &decoyed] {
                let whole = taken_back(&rewrite(message).expect("set aside"));
                for size in [1, 7, 4096, LARGE, message.len()] {
                    let rewritten = rewrite_pieces(pieces(message, size)).expect("set aside");
                    assert!(
                        rewritten.len() < 400,
                        "{}",
                        String::from_utf8_lossy(&rewritten)
                    );
                    // (The whole-message rewrite keeps only the members JSON-RPC defines.)
                    let back = taken_back(&rewritten);
                    assert_eq!(back["result"], whole["result"], "pieces of {size}");
                    assert_eq!(back["id"], whole["id"], "pieces of {size}");
                }
            }
        }
    }

    #[test]
    fn a_message_in_pieces_that_sets_nothing_aside_is_given_back_whole() {
        let _serial = SERIAL
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let big = "x".repeat(LARGE);
        for message in [
            large_result(&json!({"isError": true, "structuredContent": {"t": big}})),
            large_result(&json!({"content": [{"type": "text", "text": big}]})),
            serde_json::to_vec(&json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"structuredContent": {"t": big}}})).unwrap(),
            // A member named twice, and a message that is not JSON.
            format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"structuredContent":{{"t":"{big}"}},"structuredContent":1}}}}"#).into_bytes(),
            format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"structuredContent":{{"t":"{big}"}}"#).into_bytes(),
        ] {
            for size in [3, 4096] {
                assert_eq!(rewrite_pieces(pieces(&message, size)), Err(message.clone()));
            }
        }
    }

    #[test]
    fn small_errors_and_forged_markers_are_left_alone() {
        let _serial = SERIAL
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let small = large_result(&json!({"structuredContent": {"a": 1}}));
        assert!(rewrite(&small).is_none());
        let big = "x".repeat(LARGE);
        let failed = large_result(&json!({"isError": true, "structuredContent": {"t": big}}));
        assert!(rewrite(&failed).is_none());
        let text_only = large_result(&json!({"content": [{"type": "text", "text": big}]}));
        assert!(rewrite(&text_only).is_none());
        let forged = json!({MARKER: uuid::Uuid::new_v4().to_string()});
        assert!(take(&forged).is_none());
        assert!(take(&json!({MARKER: "x", "other": 1})).is_none());
    }

    #[test]
    fn what_is_kept_is_bounded() {
        let _serial = SERIAL
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let keys: Vec<String> = (0..MAX_ENTRIES + 5)
            .map(|_| uuid::Uuid::new_v4().to_string())
            .collect();
        for key in &keys {
            keep(key.clone(), RawValue::from_string("{}".to_owned()).unwrap());
        }
        let marker = |key: &String| json!({MARKER: key});
        assert!(take(&marker(&keys[0])).is_none(), "the oldest was dropped");
        assert!(take(&marker(keys.last().unwrap())).is_some());
        assert!(kept().texts.len() <= MAX_ENTRIES);
    }
}
