//! Time and peak memory of cutting a 5 MB answer to a 64 KiB budget, as the MCP edge does it
//! (issue 27: < 20 ms and < 3× the answer's size at the peak): the answer's JSON is parsed into a
//! value (what the upstream's answer becomes), serialized whole (what `read_result` keeps), and
//! cut. Measured on a thread of its own, whose allocations jemalloc counts from zero
//! (`thread.peak`).
//!
//! Run: `cargo run --release -p otc-shape --example cut_peak`.
#![allow(clippy::unwrap_used, clippy::print_stdout)] // A measuring script: loud is the point.

use std::time::Instant;

use otc_shape::budget::cut;
use serde_json::{Value, json};
use tikv_jemalloc_ctl::{Access as _, AsName as _};

#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

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

fn peak() -> u64 {
    b"thread.peak.read\0".name().read().unwrap()
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
        let (parsed_peak, parse_ms, cut_peak, cut_ms) = std::thread::spawn(move || {
            let started = Instant::now();
            let value: Value = serde_json::from_str(&text).unwrap();
            let parse_ms = started.elapsed().as_secs_f64() * 1000.0;
            // The upstream's bytes are gone once parsed.
            drop(text);
            let parsed_peak = peak();
            let started = Instant::now();
            let whole = value.to_string();
            let cut = cut(&value, 64 * 1024);
            let cut_ms = started.elapsed().as_secs_f64() * 1000.0;
            let cut_peak = peak();
            assert!(cut.value.to_string().len() <= 64 * 1024);
            drop((whole, value));
            (parsed_peak, parse_ms, cut_peak, cut_ms)
        })
        .join()
        .unwrap();
        let mb = |bytes: u64| bytes as f64 / 1e6;
        println!(
            "round {round}: answer {:.2} MB; parsed in {parse_ms:.1} ms, peak {:.2} MB ({:.2}× the answer); serialized whole and cut to 64 KiB in {cut_ms:.1} ms, peak {:.2} MB ({:.2}×; the cut's own share {:.2}×)",
            mb(size as u64),
            mb(parsed_peak),
            parsed_peak as f64 / size as f64,
            mb(cut_peak),
            cut_peak as f64 / size as f64,
            (cut_peak - parsed_peak) as f64 / size as f64,
        );
    }
}
