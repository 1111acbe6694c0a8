//! What an MCP answer may be, and what happens to one that is not (issue 8, defects 9 and 10).
//!
//! Every transport caps one incoming message at [`MAX_MESSAGE_BYTES`] and never buffers past it.
//! rmcp's own stdio reader has the same cap, but it *drops* an oversized or unparseable line
//! (too deep for serde's 128 levels, say) and logs it: the call that waited for it then waits
//! out the bridge's timeout and is reported as retryable, which it is not. So our transports read
//! the lines themselves and, when a message cannot be delivered, look for its JSON-RPC `id` with
//! [`TopLevel`], a scanner that walks the bytes without building anything (so it works on the
//! part of a 300 MB line it never keeps, and on nesting of any depth). When the message is a
//! response, rmcp is handed a synthesized JSON-RPC error for that id instead ([`refused`]), so
//! the call fails at once; [`classify`] turns it into [`AdapterError::ResponseTooLarge`] or
//! [`AdapterError::Protocol`], both not retryable. The session stays up. A message that cannot
//! be attributed (no `id`, or a request or notification from the server) is logged and dropped,
//! as before: nobody waits for it.

use rmcp::model as mcp;
use serde_json::{Value, json};

use super::nesting::Nesting;
use crate::AdapterError;

/// The largest message accepted from an MCP server, on every transport: rmcp's own stdio and
/// streamable HTTP limits (16 MiB), so an answer acceptable on one is acceptable on all. The
/// bridge's own stdio edge (`otc-bridge mcp`) takes requests up to the same size.
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// A message at least this large is handled apart: a line this long is kept in the pieces it
/// was read in (`lines.rs`), and a response this large is looked at for a `structuredContent`
/// to set aside (`set_aside.rs`).
pub(crate) const LARGE_MESSAGE: usize = 256 * 1024;

/// The JSON-RPC error code of a synthesized refusal (server-defined range); the marker in `data`
/// is what identifies it.
const REFUSED_CODE: i32 = -32099;
/// The key in a synthesized error's `data`.
const MARKER: &str = "otc_bridge_refused";

/// Why an answer was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Larger than [`MAX_MESSAGE_BYTES`].
    TooLarge,
    /// Not a JSON-RPC message we can read (nested too deep, invalid JSON, wrong shape).
    Malformed,
}

/// A JSON-RPC error response for `id`, standing for an answer the transport refused.
pub(crate) fn refused(id: &Value, why: Refusal) -> Option<mcp::ServerJsonRpcMessage> {
    let (kind, message) = match why {
        Refusal::TooLarge => (
            "too_large",
            format!("the answer is larger than {MAX_MESSAGE_BYTES} bytes"),
        ),
        Refusal::Malformed => (
            "malformed",
            "the answer is not valid JSON-RPC (nested too deep, or not JSON)".to_owned(),
        ),
    };
    let error = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": REFUSED_CODE, "message": message, "data": {MARKER: kind}},
    });
    serde_json::from_value(error).ok()
}

/// The refusal a JSON-RPC error stands for, if it is one of ours.
pub(crate) fn classify(error: &mcp::ErrorData) -> Option<AdapterError> {
    if error.code.0 != REFUSED_CODE {
        return None;
    }
    match error.data.as_ref()?.get(MARKER)?.as_str()? {
        "too_large" => Some(AdapterError::ResponseTooLarge {
            limit_bytes: MAX_MESSAGE_BYTES as u64,
        }),
        "malformed" => Some(AdapterError::Protocol {
            message: "the tool's answer is malformed: not valid JSON-RPC, or nested deeper than \
                      128 levels"
                .to_owned(),
            source: None,
        }),
        _ => None,
    }
}

/// Scans a JSON object for its top-level `id` and whether it is a response, without keeping
/// more than a few bytes, so it can run over a message that is never buffered: the top level
/// byte by byte, what is nested below it only for where it ends (a lean skip shared with the
/// scanner that sets large answers aside).
#[derive(Debug, Default)]
pub struct TopLevel {
    nesting: Nesting,
    /// The next string at depth 1 is a key.
    expect_key: bool,
    /// The depth-1 key being read (cut at a few bytes: only short keys matter).
    key: Option<Vec<u8>>,
    last_key: Vec<u8>,
    /// The raw value of `id` being read.
    value: Option<Vec<u8>>,
    id: Option<Vec<u8>>,
    saw_result: bool,
    saw_method: bool,
}

/// Keys and `id` values longer than this are not ours to read.
const MAX_CAPTURE: usize = 256;

impl TopLevel {
    /// Feeds the next bytes of the message.
    pub fn feed(&mut self, bytes: &[u8]) {
        let mut at = 0;
        while at < bytes.len() {
            // Nothing below the top level is read: only where it ends.
            if self.nesting.depth >= 2 {
                at += self.nesting.skip_deeper(1, &bytes[at..]);
                continue;
            }
            self.byte(bytes[at]);
            at += 1;
        }
    }

    fn push(buf: &mut Option<Vec<u8>>, b: u8) {
        if let Some(buf) = buf
            && buf.len() < MAX_CAPTURE
        {
            buf.push(b);
        }
    }

    fn byte(&mut self, b: u8) {
        let capturing = self.nesting.depth == 1 && self.value.is_some();
        if self.nesting.in_string {
            if capturing {
                Self::push(&mut self.value, b);
            }
            if !self.nesting.string_byte(b) {
                Self::push(&mut self.key, b);
            } else if let Some(key) = self.key.take() {
                self.last_key = key;
            }
            return;
        }
        match b {
            b'"' => {
                self.nesting.in_string = true;
                if capturing {
                    Self::push(&mut self.value, b);
                } else if self.nesting.depth == 1 && self.expect_key {
                    self.key = Some(Vec::new());
                    self.expect_key = false;
                }
            }
            b'{' | b'[' => {
                if capturing {
                    Self::push(&mut self.value, b);
                }
                self.nesting.depth = self.nesting.depth.saturating_add(1);
                if self.nesting.depth == 1 && b == b'{' {
                    self.expect_key = true;
                }
            }
            b'}' | b']' => {
                if self.nesting.depth == 1 {
                    self.finish_value();
                } else if capturing {
                    Self::push(&mut self.value, b);
                }
                self.nesting.depth = self.nesting.depth.saturating_sub(1);
            }
            b',' if self.nesting.depth == 1 => {
                self.finish_value();
                self.expect_key = true;
            }
            b':' if self.nesting.depth == 1 && self.value.is_none() => {
                match self.last_key.as_slice() {
                    b"id" => self.value = Some(Vec::new()),
                    b"result" | b"error" => self.saw_result = true,
                    b"method" => self.saw_method = true,
                    _ => {}
                }
            }
            _ if capturing => Self::push(&mut self.value, b),
            _ => {}
        }
    }

    fn finish_value(&mut self) {
        if let Some(value) = self.value.take() {
            self.id = Some(value);
        }
    }

    /// The top-level `id` seen so far, once read whole, when it can be a JSON-RPC id (a number
    /// or a string): whatever the message is, and even when the rest of it is no JSON.
    pub fn id(&self) -> Option<Value> {
        let id: Value = serde_json::from_slice(self.id.as_deref()?).ok()?;
        (id.is_number() || id.is_string()).then_some(id)
    }

    /// Whether the message seen so far is a response: `result` or `error` at its top level, no
    /// `method`.
    pub fn is_response(&self) -> bool {
        self.saw_result && !self.saw_method
    }

    /// The `id` of the response seen so far, if it is one and its `id` has been read whole.
    pub(crate) fn response_id(&self) -> Option<Value> {
        self.is_response().then(|| self.id()).flatten()
    }
}

/// The `id` of a complete message that is a response, found without parsing it as a whole.
pub(crate) fn response_id(message: &[u8]) -> Option<Value> {
    let mut scan = TopLevel::default();
    scan.feed(message);
    scan.response_id()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_8_the_id_of_a_response_is_found_without_parsing_it() {
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":7,"result":{}1{}}}"#,
            "[".repeat(500),
            "]".repeat(500)
        );
        assert_eq!(response_id(deep.as_bytes()), Some(json!(7)));
        let late = r#"{"result":{"id":1,"s":"\"id\":2"},"jsonrpc":"2.0","id":"a\"b"}"#;
        assert_eq!(response_id(late.as_bytes()), Some(json!("a\"b")));
        let request = r#"{"jsonrpc":"2.0","id":3,"method":"roots/list","params":{}}"#;
        assert_eq!(response_id(request.as_bytes()), None);
        let mut scan = TopLevel::default();
        scan.feed(request.as_bytes());
        assert_eq!(scan.id(), Some(json!(3)));
        assert_eq!(response_id(b"not json at all"), None);
        // The head of an endless answer is enough once the id and `result` have been seen.
        let mut scan = TopLevel::default();
        scan.feed(br#"{"jsonrpc":"2.0","id":12,"result":{"content":[{"text":"xxxx"#);
        assert_eq!(scan.response_id(), Some(json!(12)));
    }

    #[test]
    fn issue_8_a_refusal_round_trips_to_its_error() {
        for (why, large) in [(Refusal::TooLarge, true), (Refusal::Malformed, false)] {
            let Some(mcp::ServerJsonRpcMessage::Error(error)) = refused(&json!(4), why) else {
                panic!("not an error response")
            };
            match classify(&error.error) {
                Some(AdapterError::ResponseTooLarge { limit_bytes }) if large => {
                    assert_eq!(limit_bytes, MAX_MESSAGE_BYTES as u64);
                }
                Some(AdapterError::Protocol { .. }) if !large => {}
                other => panic!("{other:?}"),
            }
        }
        assert!(classify(&mcp::ErrorData::internal_error("x", None)).is_none());
    }
}
