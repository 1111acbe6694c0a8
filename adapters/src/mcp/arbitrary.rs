//! Proptest strategies for what an MCP server writes, shared by the property tests of the
//! modules that read it (`convert`, `tool_call`).

use proptest::prelude::*;
use serde_json::{Value, json};

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
