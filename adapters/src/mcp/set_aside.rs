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
//! event streams of streamable HTTP. A streamable HTTP answer sent as one JSON body is parsed
//! by rmcp's own client before the bridge sees it, and stays parsed.

use std::sync::{LazyLock, Mutex};

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

/// A message at least this large is looked at; a smaller one is parsed as it is.
pub(crate) const LARGE: usize = 256 * 1024;
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
    let marker =
        RawValue::from_string(serde_json::to_string(&serde_json::json!({MARKER: key})).ok()?)
            .ok()?;
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
