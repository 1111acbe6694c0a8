//! Proptest strategies for what an MCP server writes, shared by the property tests of the
//! modules that read and write it (`convert`, `tool_call`).

use proptest::prelude::*;
use serde_json::{Value, json};

/// Any JSON value a few levels deep (`structuredContent`, arguments), its strings drawn from
/// `text` and its object keys from `key`.
pub(super) fn json_value<S, K>(text: fn() -> S, key: fn() -> K) -> impl Strategy<Value = Value>
where
    S: Strategy<Value = String> + 'static,
    K: Strategy<Value = String> + 'static,
{
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 4, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(key(), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// One MCP content block of each documented kind, as a server would write it, its strings drawn
/// from `text`.
pub(super) fn content_block<S>(text: fn() -> S) -> impl Strategy<Value = Value>
where
    S: Strategy<Value = String>,
{
    prop_oneof![
        text().prop_map(|t| json!({"type": "text", "text": t})),
        (text(), text()).prop_map(|(d, m)| json!({"type": "image", "data": d, "mimeType": m})),
        (text(), text()).prop_map(|(d, m)| json!({"type": "audio", "data": d, "mimeType": m})),
        (text(), text())
            .prop_map(|(u, t)| json!({"type": "resource", "resource": {"uri": u, "text": t}})),
        (text(), text()).prop_map(|(u, n)| json!({"type": "resource_link", "uri": u, "name": n})),
    ]
}
