//! The MCP adapter against real servers: the workspace's example server as a stdio child, over
//! streamable HTTP and over legacy SSE on loopback, and `@modelcontextprotocol/server-everything`
//! from the installed corpus. Covers listing, values, errors, concurrency, `list_changed`, crash,
//! hang, cancellation, restart and orphan cases. This file: helpers, listing and calls over stdio,
//! and the third-party server; `supervision`: crash, hang, restart, orphans; `transports`: HTTP,
//! SSE, and the whole bridge in front of an MCP server; `environment`: what a child may see;
//! `limits`: oversized and malformed answers; `resources`: resources and prompts as tools.

mod environment;
mod eras;
mod limits;
mod resources;
mod supervision;
mod transports;

use std::sync::Arc;
use std::time::Duration;

use otc_adapters::mcp::{McpAdapter, McpConfig};
use otc_adapters::{Adapter, AdapterError, BuildContext, SourceState, ToolCall};
use otc_mappings::otc::CallContext;
use otc_mappings::{Mapped, MappedTool, schema};
use otc_tests::upstream_mcp::{
    everything_bin, example_server_command, spawn_example_http, wait_pid_gone,
};
use serde_json::{Value, json};

/// Upper bound for anything a test waits on; never a synchronisation delay.
const WAIT: Duration = Duration::from_secs(20);

fn quick(mut config: McpConfig) -> McpConfig {
    config.restart.initial_backoff_ms = 20;
    config.restart.max_backoff_ms = 200;
    config.restart.shutdown_grace_ms = 500;
    config
}

async fn stdio_adapter(config: McpConfig) -> Arc<McpAdapter> {
    McpAdapter::build("demo", &config, &BuildContext::default())
        .await
        .unwrap()
}

fn demo_config() -> McpConfig {
    quick(McpConfig::stdio(&example_server_command()))
}

fn tool(tools: &Mapped<MappedTool>, upstream: &str) -> Arc<MappedTool> {
    let found = tools
        .tools
        .iter()
        .find(|t| matches!(&t.target, otc_mappings::Target::Named { name } if name == upstream));
    Arc::new(
        found
            .unwrap_or_else(|| panic!("no tool {upstream}"))
            .clone(),
    )
}

fn call(tool: &Arc<MappedTool>, input: Value) -> ToolCall {
    let Value::Object(input) = input else {
        panic!("input must be an object")
    };
    ToolCall {
        tool: tool.clone(),
        input,
        context: CallContext::default(),
        call_id: "test".to_owned(),
        trace_id: None,
        trace_context: None,
    }
}

async fn invoke(
    adapter: &McpAdapter,
    tools: &Mapped<MappedTool>,
    name: &str,
    input: Value,
) -> Result<Value, AdapterError> {
    tokio::time::timeout(WAIT, adapter.call(call(&tool(tools, name), input)))
        .await
        .expect("call did not finish")
}

/// Asserts every property at every depth has a non-empty description.
fn assert_described(schema: &Value, at: &str) {
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            let d = prop
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("");
            assert!(!d.trim().is_empty(), "{at}/{name} has no description");
            assert_described(prop, &format!("{at}/{name}"));
        }
    }
    if let Some(items) = schema.get("items") {
        assert_described(items, &format!("{at}/items"));
    }
}

/// A tool the server serves but does not list (the fault tools without `--fault-tools`).
fn unlisted(tools: &Mapped<MappedTool>, upstream: &str) -> Arc<MappedTool> {
    let mut t = (*tool(tools, "echo")).clone();
    t.target = otc_mappings::Target::Named {
        name: upstream.to_owned(),
    };
    Arc::new(t)
}

async fn wait_for_new_child(adapter: &McpAdapter, old: u32) -> u32 {
    let mut states = adapter.state_changes();
    tokio::time::timeout(WAIT, async {
        loop {
            if let Some(pid) = adapter.child_pid().filter(|p| *p != old) {
                return pid;
            }
            states.changed().await.unwrap();
        }
    })
    .await
    .expect("the child was not restarted")
}

#[tokio::test]
async fn stdio_listing_inlines_defs_keeps_enums_and_describes_properties() {
    let adapter = stdio_adapter(demo_config()).await;
    let tools = adapter.list_tools().await.unwrap();
    // Nine tools over three pages: the client followed nextCursor.
    assert_eq!(tools.tools.len(), 9, "{:?}", tools.diagnostics);
    assert!(tools.diagnostics.is_empty(), "{:?}", tools.diagnostics);
    let order = &tool(&tools, "create_order").definition;
    assert_eq!(order.id.to_string(), "ExampleMcpServer.CreateOrder@2.1.0");
    let input = order.input_schema.to_value();
    assert!(!schema::has_refs(&input), "{input}");
    let props = &input["properties"];
    assert_eq!(props["priority"]["enum"], json!(["low", "normal", "high"]));
    assert_eq!(
        props["customer"]["properties"]["address"]["properties"]["country"]["enum"],
        json!(["FR", "DE", "US"])
    );
    assert_eq!(
        props["items"]["items"]["properties"]["size"]["enum"],
        json!(["S", "M", "L"])
    );
    for t in &tools.tools {
        assert_described(&t.definition.input_schema.to_value(), &t.definition.name);
    }
    assert_eq!(
        order.output_schema.as_ref().unwrap().to_value()["required"],
        json!(["order_id", "total_quantity", "priority"])
    );
    let echo = &tool(&tools, "echo").definition;
    assert_eq!(
        echo.description,
        "Returns the message unchanged.\n\nTitle: Echo\nHints: [read-only] [idempotent] [closed-world]"
    );
    assert_eq!(
        *tool(&tools, "divide")
            .definition
            .output_schema
            .as_ref()
            .unwrap(),
        json!({})
    );
    insta::assert_json_snapshot!("example_mcp_server_tools", tools);
    adapter.shutdown().await;
}

#[tokio::test]
async fn stdio_calls_convert_values_and_classify_errors() {
    let adapter = stdio_adapter(demo_config()).await;
    let tools = adapter.list_tools().await.unwrap();
    let echoed = invoke(&adapter, &tools, "echo", json!({"message": "hi"})).await;
    assert_eq!(echoed.unwrap(), json!("hi"));
    let order = json!({
        "customer": {"name": "Ada", "address": {"street": "1 rue X", "country": "FR"}},
        "items": [{"sku": "a", "quantity": 2}, {"sku": "b", "quantity": 3, "size": "M"}],
        "priority": "high"
    });
    let placed = invoke(&adapter, &tools, "create_order", order)
        .await
        .unwrap();
    assert_eq!(
        placed,
        json!({"order_id": "order-3-5", "total_quantity": 5, "priority": "high"})
    );
    let picture = invoke(&adapter, &tools, "picture", json!({}))
        .await
        .unwrap();
    assert_eq!(
        picture[0],
        json!({"type": "text", "text": "a transparent pixel"})
    );
    assert_eq!(picture[1]["type"], "image");
    assert_eq!(picture[1]["mimeType"], "image/png");
    match invoke(&adapter, &tools, "divide", json!({"a": 1, "b": 0})).await {
        Err(AdapterError::ToolFailed { message, details }) => {
            assert_eq!(message, "cannot divide by zero");
            assert_eq!(details.unwrap()["isError"], true);
        }
        other => panic!("expected a tool failure, got {other:?}"),
    }
    match invoke(&adapter, &tools, "echo", json!({})).await {
        Err(AdapterError::InvalidArguments { message }) => assert!(message.contains("message")),
        other => panic!("expected invalid arguments, got {other:?}"),
    }
    adapter.shutdown().await;
}

#[tokio::test]
async fn concurrent_calls_multiplex_over_one_session() {
    let adapter = stdio_adapter(demo_config()).await;
    let tools = adapter.list_tools().await.unwrap();
    let pid = adapter.child_pid();
    let calls = (0..20).map(|i| {
        let adapter = adapter.clone();
        let tools = tools.clone();
        async move {
            let slept = invoke(&adapter, &tools, "slow", json!({"ms": 100 + i})).await;
            assert_eq!(slept.unwrap(), json!(format!("slept {} ms", 100 + i)));
        }
    });
    futures::future::join_all(calls).await;
    let stats = invoke(&adapter, &tools, "stats", json!({})).await.unwrap();
    // Twenty slow calls plus this one, all in the one server process.
    assert_eq!(stats["calls"], 21);
    assert_eq!(adapter.child_pid(), pid);
    adapter.shutdown().await;
}

#[tokio::test]
async fn list_changed_ticks_the_catalog_and_a_relist_sees_the_change() {
    let adapter = stdio_adapter(demo_config()).await;
    let tools = adapter.list_tools().await.unwrap();
    let mut changes = adapter.catalog_changes().unwrap();
    changes.borrow_and_update();
    invoke(&adapter, &tools, "toggle_extra", json!({}))
        .await
        .unwrap();
    tokio::time::timeout(WAIT, changes.changed())
        .await
        .unwrap()
        .unwrap();
    let relisted = adapter.list_tools().await.unwrap();
    assert_eq!(relisted.tools.len(), tools.tools.len() + 1);
    assert_eq!(
        invoke(&adapter, &relisted, "extra", json!({}))
            .await
            .unwrap(),
        json!("extra")
    );
    adapter.shutdown().await;
}

#[tokio::test]
async fn server_everything_is_listed_and_its_echo_called() {
    let Some(bin) = everything_bin() else { return };
    let command = format!("'{}' stdio", bin.display());
    let adapter = McpAdapter::build(
        "everything",
        &quick(McpConfig::stdio(&command)),
        &BuildContext::default(),
    )
    .await
    .unwrap();
    let tools = adapter.list_tools().await.unwrap();
    let echo = tool(&tools, "echo");
    assert_eq!(
        echo.definition.id.to_string(),
        "McpServersEverything.Echo@2.0.0"
    );
    for t in &tools.tools {
        let input = t.definition.input_schema.to_value();
        assert!(!schema::has_refs(&input));
        assert_described(&input, &t.definition.name);
    }
    let echoed = invoke(&adapter, &tools, "echo", json!({"message": "hi"}))
        .await
        .unwrap();
    assert_eq!(echoed, json!("Echo: hi"));
    let sum = invoke(&adapter, &tools, "get-sum", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert_eq!(sum, json!("The sum of 2 and 3 is 5."));
    otc_tests::conformance::assert_definitions_conform_to_the_spec(&tools);
    insta::assert_json_snapshot!("server_everything_tools", tools);
    let pid = adapter.child_pid().unwrap();
    adapter.shutdown().await;
    assert!(wait_pid_gone(pid, WAIT).await);
}
