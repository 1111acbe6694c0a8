//! Time and peak memory of cutting a 5 MB answer to a 64 KiB budget, as the MCP edge does it
//! (issue 27: < 20 ms and < 3× the answer's size at the peak): the answer's JSON is parsed into a
//! value (what the upstream's answer becomes), serialized whole (what `read_result` keeps), and
//! cut. The peak counts the bytes live at once (`peak_alloc`), from the moment the answer's
//! bytes arrive.
//!
//! Run: `cargo run --release -p otc-shape --example cut_peak`.
#![allow(clippy::unwrap_used, clippy::print_stdout)] // A measuring script: loud is the point.

use std::fmt::Write as _;
use std::time::Instant;

use otc_shape::budget::cut;
use peak_alloc::PeakAlloc;
use serde_json::{Value, json};

#[global_allocator]
static ALLOCATOR: PeakAlloc = PeakAlloc;

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

/// The most bytes live at once since the last reset, less `base` (what was live before).
fn peak(base: usize) -> u64 {
    (ALLOCATOR.peak_usage().saturating_sub(base)) as u64
}

fn main() {
    let mut items = Vec::new();
    let mut size = 0;
    while size < 5_000_000 {
        items.push(pull(items.len()));
        size += items.last().map_or(0, |v| v.to_string().len() + 1);
    }
    let text = Value::Array(items).to_string();
    let size = text.len();
    for round in 0..3 {
        let text = text.clone();
        // Only the answer's bytes (and what was live before) count from here.
        let base = ALLOCATOR.current_usage() - text.len();
        ALLOCATOR.reset_peak_usage();
        let (parsed_peak, parse_ms, live, serialize_ms, cut_peak, cut_ms) = {
            let started = Instant::now();
            let value: Value = serde_json::from_str(&text).unwrap();
            let parse_ms = started.elapsed().as_secs_f64() * 1000.0;
            // The upstream's bytes are gone once parsed.
            drop(text);
            let parsed_peak = peak(base);
            let live = ALLOCATOR.current_usage().saturating_sub(base) as u64;
            let started = Instant::now();
            // As the MCP edge does it: into a buffer of the exact size.
            let mut whole = String::with_capacity(otc_shape::budget::serialized_len(&value));
            let _ = write!(whole, "{value}");
            let serialize_ms = started.elapsed().as_secs_f64() * 1000.0;
            let started = Instant::now();
            let cut = cut(&value, 64 * 1024);
            let cut_ms = started.elapsed().as_secs_f64() * 1000.0;
            let cut_peak = peak(base);
            assert!(cut.value.to_string().len() <= 64 * 1024);
            drop((whole, value));
            (parsed_peak, parse_ms, live, serialize_ms, cut_peak, cut_ms)
        };
        let times = |bytes: u64| bytes as f64 / size as f64;
        println!(
            "round {round}: a {:.2} MB answer; parsed in {parse_ms:.1} ms (peak {:.2}×, the value {:.2}× the answer); serialized whole (kept for read_result) in {serialize_ms:.1} ms; cut to 64 KiB in {cut_ms:.1} ms; peak of it all {:.2}×, {:.2}× above the value",
            size as f64 / 1e6,
            times(parsed_peak),
            times(live),
            times(cut_peak),
            times(cut_peak.saturating_sub(live)),
        );
    }
}
