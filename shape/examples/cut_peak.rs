//! Time and peak memory of the path a 5 MB answer takes to an MCP host with a 64 KiB budget
//! (issue 27: < 20 ms and < 3× the answer's size at the peak): from the answer's bytes as they
//! arrive to what is served (the cut, as text and as `structuredContent`) and what
//! `read_result` keeps. Both paths the bridge has, in the same run, step for step as the bridge
//! takes them:
//!
//! - **value** (every call before issue 27's raw path, and still any call whose answer is
//!   projected or cached): the bytes parsed into a `serde_json::Value` (`value_of` in
//!   `adapters/src/openapi/response.rs`), measured, cut (`budget::cut`), and serialized whole
//!   into a `String` that is kept (`within` in `bridge/src/server/mcp/meta.rs`);
//! - **text** (an MCP call with a budget, when nothing needs the value parsed): the bytes
//!   checked to be one JSON value and kept in their own allocation as a `RawValue`
//!   (`unparsed_of`), cut from the text (`budget::cut_json`), and that same text kept
//!   (`within_json`).
//!
//! The peak counts the bytes live at once (`peak_alloc`), from the moment the answer's bytes
//! are there until what is served and kept is built; the answer's own bytes count (1× is the
//! floor).
//!
//! Run: `cargo run --release -p otc-shape --example cut_peak`.
#![allow(clippy::unwrap_used, clippy::print_stdout)] // A measuring script: loud is the point.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Instant;

use otc_shape::budget::{Cut, cut, cut_json, serialized_len};
use peak_alloc::PeakAlloc;
use serde_json::value::RawValue;
use serde_json::{Value, json};

#[global_allocator]
static ALLOCATOR: PeakAlloc = PeakAlloc;

const BUDGET: usize = 64 * 1024;

fn pull(i: usize) -> Value {
    json!({
        "url": format!("https://api.github.com/repos/acme/widgets/pulls/{i}"),
        "id": 1_000_000 + i, "number": i, "state": "open", "locked": false,
        "title": format!("Fix the widget frobnicator, part {i}"),
        "user": {"login": format!("user{i}"), "id": i, "type": "User", "site_admin": false},
        "body": "This pull request fixes the frobnicator. ".repeat(10),
        "labels": [{"id": 1, "name": "bug", "color": "d73a4a", "default": true}],
        "head": {"ref": "fix", "sha": "0123456789abcdef0123456789abcdef01234567"},
        "draft": false, "merged_at": null, "assignees": []
    })
}

/// What the MCP edge serves of a cut (the text and `structuredContent`), and what it keeps.
struct Outcome {
    served: (String, Value),
    kept: Arc<String>,
    ms: Vec<(&'static str, f64)>,
}

/// The value path: parse, measure, cut, serialize whole.
fn by_value(bytes: Vec<u8>) -> Outcome {
    let mut ms = Vec::new();
    let mut lap = Instant::now();
    let mut step = |name, ms: &mut Vec<_>| {
        ms.push((name, lap.elapsed().as_secs_f64() * 1000.0));
        lap = Instant::now();
    };
    let value: Value = serde_json::from_slice(&bytes).unwrap();
    // The upstream's bytes are gone once parsed.
    drop(bytes);
    step("parsed", &mut ms);
    let total_bytes = serialized_len(&value);
    assert!(total_bytes > BUDGET);
    let cut = cut(&value, BUDGET);
    step("cut", &mut ms);
    let mut whole = String::with_capacity(total_bytes);
    let _ = write!(whole, "{value}");
    drop(value);
    step("serialized whole", &mut ms);
    let kept = Arc::new(whole);
    let served = served(cut);
    step("served", &mut ms);
    Outcome { served, kept, ms }
}

/// The text path: check, cut from the text, keep the text.
fn by_text(bytes: Vec<u8>) -> Outcome {
    let mut ms = Vec::new();
    let mut lap = Instant::now();
    let mut step = |name, ms: &mut Vec<_>| {
        ms.push((name, lap.elapsed().as_secs_f64() * 1000.0));
        lap = Instant::now();
    };
    let mut text = String::from_utf8(bytes).unwrap();
    text.truncate(text.trim_end().len());
    let json = RawValue::from_string(text).unwrap();
    step("checked", &mut ms);
    let cut = cut_json(&json, BUDGET);
    assert!(cut.cut);
    step("cut", &mut ms);
    let whole: Box<str> = json.into();
    let kept = Arc::new(whole.into_string());
    let served = served(cut);
    step("served", &mut ms);
    Outcome { served, kept, ms }
}

/// The cut's text and `structuredContent`, as `cut_result` builds them.
fn served(cut: Cut) -> (String, Value) {
    let text = cut.value.to_string();
    assert!(text.len() <= BUDGET);
    let mut structured = serde_json::Map::new();
    structured.insert("value".to_owned(), cut.value);
    structured.insert("truncated".to_owned(), json!({"items": cut.omitted.items}));
    (text, Value::Object(structured))
}

fn main() {
    let mut items = Vec::new();
    let mut size = 0;
    while size < 5_000_000 {
        items.push(pull(items.len()));
        size += items.last().map_or(0, |v| v.to_string().len() + 1);
    }
    let count = items.len();
    let answer = Value::Array(items).to_string();
    let size = answer.len();
    let times = |bytes: usize| bytes as f64 / size as f64;
    println!(
        "A {:.2} MB answer ({count} pull requests) cut to {BUDGET} bytes:",
        size as f64 / 1e6,
    );
    let mut served = Vec::new();
    for round in 0..3 {
        for (name, path) in [
            ("value", by_value as fn(Vec<u8>) -> Outcome),
            ("text ", by_text),
        ] {
            // The answer's bytes as they arrive (a buffer of their exact size).
            let bytes = answer.as_bytes().to_vec();
            let base = ALLOCATOR.current_usage() - bytes.len();
            ALLOCATOR.reset_peak_usage();
            let started = Instant::now();
            let outcome = path(bytes);
            let total_ms = started.elapsed().as_secs_f64() * 1000.0;
            let peak = ALLOCATOR.peak_usage().saturating_sub(base);
            let after = ALLOCATOR.current_usage().saturating_sub(base);
            let steps: Vec<String> = outcome
                .ms
                .iter()
                .map(|(step, ms)| format!("{step} {ms:.1}"))
                .collect();
            println!(
                "round {round}, {name}: {total_ms:5.1} ms ({} ms); peak {:.2}× the answer; after: {:.2}× (kept {:.2}×, served {} bytes)",
                steps.join(", "),
                times(peak),
                times(after),
                times(outcome.kept.len()),
                outcome.served.0.len(),
            );
            served.push(outcome.served);
            assert_eq!(outcome.kept.as_str(), answer, "the whole answer is kept");
        }
    }
    assert!(
        served.windows(2).all(|pair| pair[0] == pair[1]),
        "both paths serve the same cut"
    );
}
