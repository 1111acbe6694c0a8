//! Byte budgets: a result cut to fit a number of bytes, still valid JSON, saying what it left out;
//! and the full text read in pages.
//!
//! MCP hosts put a tool's result into a model's context, where every byte costs; the bridge cuts
//! a result that is too large with [`cut`] and lets the caller read the rest with [`page`]
//! (DESIGN.md §15). A cut value must stay valid JSON of the same overall shape, so a client that
//! parses it still can, and it must say what is missing, so a model does not take a prefix for the
//! whole.
//!
//! # What a cut value looks like
//!
//! Sizes are those of the compact serialization (`serde_json::to_string`), counted exactly,
//! escapes included. A value whose serialization fits is returned unchanged. Otherwise, walking
//! from the root:
//!
//! - an **array** keeps its first items, then ends with one marker element
//!   `{"…": "12 more items"}` when items were left out;
//! - an **object** keeps its first members in order, then ends with one marker member
//!   `"…": "3 more members"` (the key is `…`, U+2026; lengthened to `……` and so on if the object
//!   already has such a key);
//! - a **string** keeps a prefix, cut on a UTF-8 character boundary, followed by
//!   `… [N more bytes]`, where N counts the bytes (of the unescaped text) left out;
//! - the first item or member that does not fit whole is itself cut, recursively, when enough of
//!   the budget is left for that to say something ([`MIN_NESTED`] bytes); otherwise it is left out
//!   with the ones after it.
//!
//! The result is deterministic. Its compact serialization is at most `max_bytes` long for every
//! budget of at least [`MIN_BUDGET`] bytes; smaller budgets are raised to it, because a marker
//! needs that much room to be written at all.
//!
//! # Cost
//!
//! Nothing is serialized. Sizes are computed by walks that stop as soon as the running size passes
//! the room left, so a 5 MB value cut to 64 KiB is walked about as far as its first 64 KiB (times
//! the depth of the path being cut), and only the kept parts are cloned: the memory used is about
//! the size of the result.
//!
//! A value that is still the upstream's JSON text is cut from its text by [`cut_json`], to the
//! same result, without parsing more than the parts it keeps (`budget/json.rs` says how).

use std::fmt::{self, Write as _};

use serde_json::{Map, Value};
use thiserror::Error;

mod json;

pub use json::cut_json;

/// The smallest budget [`cut`] works to; smaller ones are raised to it. It holds any number and
/// any marker.
pub const MIN_BUDGET: usize = 64;

/// The least room for which a value that does not fit whole is cut rather than left out.
pub const MIN_NESTED: usize = 48;

/// The marker key used for left-out items and members (U+2026 HORIZONTAL ELLIPSIS).
pub const MARKER: &str = "…";

/// A value cut to a byte budget.
#[derive(Debug, Clone, PartialEq)]
pub struct Cut {
    /// The value, whole or cut.
    pub value: Value,
    /// Whether anything was left out.
    pub cut: bool,
    /// What was left out.
    pub omitted: Omitted,
}

/// What a cut left out, added up over the whole value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Omitted {
    /// Array items left out (each counted once, whatever it held).
    pub items: usize,
    /// Object members left out.
    pub members: usize,
    /// Bytes of string text left out (of the unescaped text).
    pub string_bytes: usize,
}

impl Omitted {
    /// Whether nothing was left out.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// `value` if its compact serialization is at most `max_bytes` long, else a cut of it that is (see
/// the module documentation for what a cut looks like and for budgets under [`MIN_BUDGET`]).
pub fn cut(value: &Value, max_bytes: usize) -> Cut {
    let budget = max_bytes.max(MIN_BUDGET);
    if fits(value, budget) {
        return Cut {
            value: value.clone(),
            cut: false,
            omitted: Omitted::default(),
        };
    }
    let mut omitted = Omitted::default();
    // With at least MIN_BUDGET bytes, every kind of value can be written in some cut form; the
    // fallback only keeps the function total.
    let value = fit(value, budget, &mut omitted).unwrap_or(Value::Null);
    Cut {
        value,
        cut: true,
        omitted,
    }
}

/// The exact length of `value`'s compact serialization.
pub fn serialized_len(value: &Value) -> usize {
    let mut size = 0;
    // usize::MAX is never passed: the walk adds up every node.
    walk_len(value, usize::MAX, &mut size);
    size
}

/// Whether `value`'s compact serialization is at most `room` bytes long; walks no further than
/// needed to tell.
fn fits(value: &Value, room: usize) -> bool {
    let mut size = 0;
    walk_len(value, room, &mut size)
}

/// Adds `value`'s serialized length to `size`; returns false (and stops) as soon as `size`
/// passes `room`.
fn walk_len(value: &Value, room: usize, size: &mut usize) -> bool {
    *size = size.saturating_add(match value {
        Value::Null => 4,
        Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(n) => number_len(n),
        Value::String(s) => string_len(s),
        Value::Array(items) => 2 + items.len().saturating_sub(1),
        // Braces, a colon for each member and commas between them.
        Value::Object(members) => 2 + members.len() + members.len().saturating_sub(1),
    });
    if *size > room {
        return false;
    }
    match value {
        Value::Array(items) => items.iter().all(|item| walk_len(item, room, size)),
        Value::Object(members) => members.iter().all(|(key, value)| {
            *size = size.saturating_add(string_len(key));
            *size <= room && walk_len(value, room, size)
        }),
        _ => true,
    }
}

/// The length of a number as serde_json writes it (its `Display` is the same text).
fn number_len(n: &serde_json::Number) -> usize {
    let mut counter = Counter(0);
    // Writing into a counter cannot fail.
    let _ = write!(counter, "{n}");
    counter.0
}

/// Counts the bytes written to it.
struct Counter(usize);

impl fmt::Write for Counter {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0 += s.len();
        Ok(())
    }
}

/// The length of `s` written as a JSON string, quotes included, escaped as serde_json escapes.
fn string_len(s: &str) -> usize {
    2 + s.bytes().map(escaped_byte_len).sum::<usize>()
}

/// serde_json escapes `"`, `\` and the control characters below 0x20 (the common ones as `\n`,
/// the rest as `\u00XX`); every other byte, UTF-8 continuation bytes included, is written as is.
fn escaped_byte_len(b: u8) -> usize {
    match b {
        b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
        0x00..=0x1f => 6,
        _ => 1,
    }
}

/// A form of `value` whose serialization is at most `room` bytes, or `None` when not even a
/// marker fits.
fn fit(value: &Value, room: usize, omitted: &mut Omitted) -> Option<Value> {
    if fits(value, room) {
        return Some(value.clone());
    }
    match value {
        Value::String(s) => cut_string(s, room, omitted).map(Value::String),
        Value::Array(items) => cut_array(items, room, omitted).map(Value::Array),
        Value::Object(members) => cut_object(members, room, omitted).map(Value::Object),
        // A scalar other than a string cannot be shortened.
        Value::Null | Value::Bool(_) | Value::Number(_) => None,
    }
}

fn string_marker(more: usize) -> String {
    format!("{MARKER} [{more} more bytes]")
}

fn items_marker(more: usize) -> Value {
    let mut marker = Map::new();
    marker.insert(
        MARKER.to_owned(),
        Value::String(format!("{more} more items")),
    );
    Value::Object(marker)
}

fn members_marker(more: usize) -> Value {
    Value::String(format!("{more} more members"))
}

/// A prefix of `s` followed by `… [N more bytes]`, written in at most `room` bytes.
fn cut_string(s: &str, room: usize, omitted: &mut Omitted) -> Option<String> {
    // Room for the marker with as many digits as the longest N could have.
    let marker_room = string_len(&string_marker(s.len())) - 2;
    let mut left = room.checked_sub(2 + marker_room)?;
    let mut end = 0;
    for (at, c) in s.char_indices() {
        let mut buf = [0; 4];
        let len: usize = c.encode_utf8(&mut buf).bytes().map(escaped_byte_len).sum();
        if len > left {
            break;
        }
        left -= len;
        end = at + c.len_utf8();
    }
    let more = s.len() - end;
    omitted.string_bytes += more;
    let mut out = String::with_capacity(end + marker_room);
    out.push_str(&s[..end]);
    out.push_str(&string_marker(more));
    Some(out)
}

/// The first items of `items` that fit in `room` with the marker, the first one that does not
/// fit cut when there is room for it.
fn cut_array(items: &[Value], room: usize, omitted: &mut Omitted) -> Option<Vec<Value>> {
    let marker_room = 1 + serialized_len(&items_marker(items.len()));
    // `[` and `]`, and the marker with its comma.
    let mut left = room.checked_sub(2 + marker_room)?;
    let mut kept = Vec::new();
    for item in items {
        let comma = usize::from(!kept.is_empty());
        let Some(item_room) = left.checked_sub(comma) else {
            break;
        };
        if fits(item, item_room) {
            let len = serialized_len(item);
            left = item_room - len;
            kept.push(item.clone());
            continue;
        }
        if item_room >= MIN_NESTED
            && let Some(cut) = fit(item, item_room, omitted)
        {
            kept.push(cut);
        }
        break;
    }
    let more = items.len() - kept.len();
    if more > 0 {
        omitted.items += more;
        kept.push(items_marker(more));
    }
    Some(kept)
}

/// The first members of `members` that fit in `room` with the marker, the value of the first
/// one that does not fit cut when there is room for it.
fn cut_object(
    members: &Map<String, Value>,
    room: usize,
    omitted: &mut Omitted,
) -> Option<Map<String, Value>> {
    let mut marker_key = MARKER.to_owned();
    while members.contains_key(&marker_key) {
        marker_key.push_str(MARKER);
    }
    // `,"…":"N more members"`
    let marker_room =
        1 + string_len(&marker_key) + 1 + serialized_len(&members_marker(members.len()));
    let mut left = room.checked_sub(2 + marker_room)?;
    let mut kept = Map::new();
    for (key, value) in members {
        let comma = usize::from(!kept.is_empty());
        let Some(value_room) = left.checked_sub(comma + string_len(key) + 1) else {
            break;
        };
        if fits(value, value_room) {
            left = value_room - serialized_len(value);
            kept.insert(key.clone(), value.clone());
            continue;
        }
        if value_room >= MIN_NESTED
            && let Some(cut) = fit(value, value_room, omitted)
        {
            kept.insert(key.clone(), cut);
        }
        break;
    }
    let more = members.len() - kept.len();
    if more > 0 {
        omitted.members += more;
        kept.insert(marker_key, members_marker(more));
    }
    Some(kept)
}

/// One page of a serialized result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page<'a> {
    /// The page's text: at most `max_bytes` bytes, ending on a character boundary.
    pub text: &'a str,
    /// Where the next page starts, or `None` when this page is the last.
    pub next_offset: Option<usize>,
}

/// Why a page cannot be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum PageError {
    /// The offset is past the end of the text.
    #[error("offset {offset} is past the end of the text ({len} bytes)")]
    PastEnd {
        /// The offset asked for.
        offset: usize,
        /// The text's length in bytes.
        len: usize,
    },
    /// The offset falls inside a UTF-8 character.
    #[error("offset {offset} is not on a character boundary")]
    NotOnBoundary {
        /// The offset asked for.
        offset: usize,
    },
    /// The page size cannot hold the character at the offset (a UTF-8 character takes up to
    /// four bytes).
    #[error("a page of {max_bytes} bytes cannot hold the character at offset {offset}")]
    PageTooSmall {
        /// The offset asked for.
        offset: usize,
        /// The page size asked for.
        max_bytes: usize,
    },
}

/// The page of `text` starting at byte `offset`, at most `max_bytes` long and ending on a
/// character boundary. `offset` equal to the text's length gives an empty last page.
pub fn page(text: &str, offset: usize, max_bytes: usize) -> Result<Page<'_>, PageError> {
    let len = text.len();
    if offset > len {
        return Err(PageError::PastEnd { offset, len });
    }
    if !text.is_char_boundary(offset) {
        return Err(PageError::NotOnBoundary { offset });
    }
    if offset == len {
        return Ok(Page {
            text: "",
            next_offset: None,
        });
    }
    let mut end = offset.saturating_add(max_bytes).min(len);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    if end == offset {
        return Err(PageError::PageTooSmall { offset, max_bytes });
    }
    Ok(Page {
        text: &text[offset..end],
        next_offset: (end < len).then_some(end),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn len(value: &Value) -> usize {
        serde_json::to_string(value).unwrap().len()
    }

    #[test]
    fn serialized_len_matches_serde_json() {
        for value in [
            json!(null),
            json!(true),
            json!(false),
            json!(-12.5e-300),
            json!(u64::MAX),
            json!(i64::MIN),
            json!(0.1),
            json!("plain"),
            json!("quote \" backslash \\ newline \n tab \t nul \u{0} bell \u{7} é 🦀 \u{7f}"),
            json!([]),
            json!({}),
            json!([1, [2, [3, {}]], {"a": {"b": []}}]),
            json!({"k\"ey": "v", "é": [null, false]}),
        ] {
            assert_eq!(serialized_len(&value), len(&value), "{value}");
        }
    }

    #[test]
    fn a_value_that_fits_is_returned_unchanged() {
        let value = json!({"a": [1, 2, 3], "b": "text"});
        let result = cut(&value, len(&value));
        assert_eq!(result.value, value);
        assert!(!result.cut);
        assert!(result.omitted.is_empty());
    }

    #[test]
    fn a_long_array_keeps_its_first_items_and_says_how_many_are_left_out() {
        let value = Value::Array((0..100).map(|i| json!(i)).collect());
        let result = cut(&value, 100);
        assert!(result.cut);
        let items = result.value.as_array().unwrap();
        let marker = items.last().unwrap();
        let kept = items.len() - 1;
        assert_eq!(items[..kept], value.as_array().unwrap()[..kept]);
        assert_eq!(
            marker,
            &json!({"…": format!("{} more items", 100 - kept)}),
            "{}",
            result.value
        );
        assert_eq!(result.omitted.items, 100 - kept);
        assert!(len(&result.value) <= 100);
    }

    #[test]
    fn a_long_string_keeps_a_prefix_cut_on_a_char_boundary() {
        let text = "é".repeat(1000);
        let result = cut(&json!(text), 80);
        let s = result.value.as_str().unwrap();
        let prefix = s.split(MARKER).next().unwrap();
        assert!(text.starts_with(prefix));
        assert!(s.ends_with(&format!("[{} more bytes]", text.len() - prefix.len())));
        assert_eq!(result.omitted.string_bytes, text.len() - prefix.len());
        assert!(len(&result.value) <= 80);
    }

    #[test]
    fn an_object_drops_trailing_members_with_a_marker_member() {
        let value = json!({"a": 1, "b": "x".repeat(40), "c": 3, "d": 4});
        let result = cut(&value, 64);
        let members = result.value.as_object().unwrap();
        assert_eq!(members["a"], json!(1));
        let marker = members.get(MARKER).unwrap().as_str().unwrap();
        assert!(marker.ends_with("more members"), "{marker}");
        assert!(len(&result.value) <= 64, "{}", result.value);
    }

    #[test]
    fn the_marker_key_does_not_overwrite_a_member() {
        let mut members = Map::new();
        members.insert(MARKER.to_owned(), json!("mine"));
        for i in 0..50 {
            members.insert(format!("k{i}"), json!(i));
        }
        let result = cut(&Value::Object(members), 100);
        let out = result.value.as_object().unwrap();
        assert_eq!(out[MARKER], json!("mine"));
        assert!(out.contains_key("……"), "{}", result.value);
    }

    #[test]
    fn nested_values_are_cut_where_they_overflow() {
        let value = json!({"items": [{"title": "a".repeat(500)}, {"title": "b"}]});
        let result = cut(&value, 200);
        let first = &result.value["items"][0]["title"];
        assert!(first.as_str().unwrap().starts_with("aaa"));
        assert!(len(&result.value) <= 200, "{}", result.value);
        assert_eq!(result.omitted.items, 1);
    }

    #[test]
    fn tiny_budgets_are_raised_to_the_minimum() {
        let value = Value::Array((0..100).map(|i| json!(i)).collect());
        let result = cut(&value, 1);
        assert!(len(&result.value) <= MIN_BUDGET);
        assert!(result.cut);
    }

    #[test]
    fn pages_cover_the_text_and_end_on_char_boundaries() {
        let text = "aé🦀b".repeat(10);
        let mut offset = Some(0);
        let mut read = String::new();
        while let Some(at) = offset {
            let p = page(&text, at, 5).unwrap();
            assert!(p.text.len() <= 5 && !p.text.is_empty());
            read.push_str(p.text);
            offset = p.next_offset;
        }
        assert_eq!(read, text);
    }

    #[test]
    fn page_errors_name_the_problem() {
        assert_eq!(
            page("abc", 4, 10),
            Err(PageError::PastEnd { offset: 4, len: 3 })
        );
        assert_eq!(
            page("é", 1, 10),
            Err(PageError::NotOnBoundary { offset: 1 })
        );
        assert_eq!(
            page("🦀", 0, 3),
            Err(PageError::PageTooSmall {
                offset: 0,
                max_bytes: 3
            })
        );
        assert_eq!(
            page("abc", 3, 10),
            Ok(Page {
                text: "",
                next_offset: None
            })
        );
    }
}
