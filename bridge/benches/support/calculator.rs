//! The benchmarks' one tool: `Calculator.Add@1.0.0`, answered at once by the in-memory adapter
//! (shared by `call_path` and `policies` with `#[path]`, as each bench is its own crate).

use otc_adapters::fake::FakeAdapter;
use otc_mappings::otc::{ToolDefinition, ToolId, ToolVersion};
use serde_json::{Value, json};

/// A source named `bench` serving `Calculator.Add@1.0.0`, which adds `a` and `b`.
pub(crate) fn calculator() -> FakeAdapter {
    let version = ToolVersion::new(1, 0, 0);
    let add = ToolDefinition {
        id: ToolId::exact("Calculator", "Add", version),
        name: "Calculator_Add".to_owned(),
        description: "Adds two numbers.".to_owned(),
        version,
        input_schema: json!({
            "type": "object",
            "properties": {
                "a": {"type": "number", "description": "First."},
                "b": {"type": "number", "description": "Second."}
            },
            "required": ["a", "b"]
        })
        .into(),
        output_schema: Some(json!({"type": "number"}).into()),
        requirements: None,
    };
    FakeAdapter::new("bench").tool(add, |call| {
        let n = |k| {
            call.input
                .get(k)
                .and_then(Value::as_f64)
                .unwrap_or_default()
        };
        Ok(json!(n("a") + n("b")))
    })
}
