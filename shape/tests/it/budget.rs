//! Properties of `budget::cut`: any value, any budget from the minimum up, gives valid JSON within
//! the budget; a value that fits comes back unchanged. `budget::cut_json` cuts a value's text to
//! the same result, however the text is written.

use otc_shape::budget::{MIN_BUDGET, cut, cut_json, page};
use proptest::prelude::*;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        // Escapes, multi-byte characters and long runs.
        "[a-z\"\\\\\n\u{0}-\u{1f}é🦀]{0,200}".prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 200, 12, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..12).prop_map(Value::Array),
            prop::collection::vec(("[a-z\"é]{0,12}", inner), 0..12)
                .prop_map(|members| Value::Object(members.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn a_cut_is_valid_json_within_the_budget(value in json_value(), budget in MIN_BUDGET..2000usize) {
        let result = cut(&value, budget);
        let text = serde_json::to_string(&result.value).unwrap();
        prop_assert!(text.len() <= budget, "{} > {budget}: {text}", text.len());
        // Valid JSON (serde_json parses floats without an exact round trip, so only parse).
        prop_assert!(serde_json::from_str::<Value>(&text).is_ok());
        let whole = serde_json::to_string(&value).unwrap();
        if whole.len() <= budget {
            prop_assert!(!result.cut);
            prop_assert_eq!(&result.value, &value);
        } else {
            prop_assert!(result.cut);
            prop_assert!(!result.omitted.is_empty() || result.value != value);
        }
        // Deterministic.
        prop_assert_eq!(cut(&value, budget), result);
    }

    /// Issue 27: the cut of an upstream's text, compact or pretty, is the cut of its parsed
    /// value (what the text parses to: serde_json reads floats without an exact round trip).
    #[test]
    fn a_text_is_cut_as_its_parsed_value_is(value in json_value(), budget in 0..2000usize, pretty in any::<bool>()) {
        let text = if pretty {
            serde_json::to_string_pretty(&value).unwrap()
        } else {
            serde_json::to_string(&value).unwrap()
        };
        let parsed: Value = serde_json::from_str(&text).unwrap();
        let raw = RawValue::from_string(text).unwrap();
        prop_assert_eq!(cut_json(&raw, budget), cut(&parsed, budget));
    }

    #[test]
    fn pages_read_back_the_whole_text(value in json_value(), size in 4..300usize) {
        let text = serde_json::to_string(&value).unwrap();
        let mut read = String::new();
        let mut offset = Some(0);
        while let Some(at) = offset {
            let p = page(&text, at, size).unwrap();
            prop_assert!(p.text.len() <= size);
            read.push_str(p.text);
            offset = p.next_offset;
        }
        prop_assert_eq!(read, text);
    }
}

#[test]
fn a_large_value_is_cut_quickly_to_64_kib() {
    let item = serde_json::json!({"number": 1, "title": "a title", "body": "x".repeat(400),
        "user": {"login": "octocat", "id": 1}, "labels": ["bug", "help wanted"]});
    let value = Value::Array(std::iter::repeat_n(item, 10_000).collect());
    let result = cut(&value, 64 * 1024);
    let text = serde_json::to_string(&result.value).unwrap();
    assert!(text.len() <= 64 * 1024);
    assert!(result.omitted.items > 9_000);
    let raw = RawValue::from_string(serde_json::to_string(&value).unwrap()).unwrap();
    assert_eq!(cut_json(&raw, 64 * 1024), result);
}

/// An upstream's answer nested far deeper than serde_json's limit (which a `RawValue` accepts)
/// is cut above that depth, on a thread's ordinary stack, not followed down until it overflows.
/// 200,000 levels are past what any recursion fits in the thread's 1 MiB: a frame is at least
/// 16 bytes (a return address and a saved frame pointer), 3.2 MB for them all. (A million
/// levels proved no more and took half a minute of the debug test run.)
#[test]
fn a_text_nested_200_000_deep_is_cut_without_overflowing_the_stack() {
    let depth = 200_000;
    let text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let raw: Box<serde_json::value::RawValue> = serde_json::from_str(&text).unwrap();
    let cut = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || otc_shape::budget::cut_json(&raw, 65_536))
        .unwrap()
        .join()
        .unwrap();
    assert!(cut.cut);
    let served = serde_json::to_string(&cut.value).unwrap();
    assert!(served.len() <= 65_536, "{}", served.len());
}
