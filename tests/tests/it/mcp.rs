//! The MCP adapter against real servers: the workspace's example server as a stdio child, over
//! streamable HTTP and over legacy SSE on loopback, and `@modelcontextprotocol/server-everything`
//! from the installed corpus. Covers listing, values, errors, concurrency, `list_changed`, crash,
//! hang, cancellation, restart and orphan cases.

use std::sync::Arc;
use std::time::Duration;

use otc_adapters::mcp::{McpAdapter, McpConfig};
use otc_adapters::{Adapter, AdapterError, SourceState, ToolCall};
use otc_bridge::ServerSettings;
use otc_mappings::otc::{CallContext, Dialect, SchemaForm, WireTool};
use otc_mappings::{Mapped, MappedTool, schema};
use otc_tests::bridge::TestBridge;
use otc_tests::spec::SpecDocument;
use otc_tests::upstream_mcp::{
    bridge_bin, children, everything_bin, example_server_command, spawn_example_http, wait_pid_gone,
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
    McpAdapter::build("demo", &config).await.unwrap()
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

/// Validates every definition against the `ToolDefinition` schema of OTC 1.0 (wrapped input
/// schema) and OXP 1.0 (flat), when the spec is available (`OTC_SPEC_DIR`).
fn assert_conform_to_the_spec(tools: &Mapped<MappedTool>) {
    for (dialect, form) in [
        (Dialect::Otc, SchemaForm::Wrapped),
        (Dialect::OxpMain, SchemaForm::Flat),
    ] {
        let Some(spec) = SpecDocument::load(dialect) else {
            return;
        };
        let validator = spec.component("ToolDefinition");
        for t in &tools.tools {
            let wire = serde_json::to_value(WireTool {
                tool: &t.definition,
                form,
            })
            .unwrap();
            let errors: Vec<String> = validator
                .iter_errors(&wire)
                .map(|e| e.to_string())
                .collect();
            assert!(
                errors.is_empty(),
                "{} ({dialect:?}): {errors:?}",
                t.definition.id
            );
        }
    }
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
    // Eight tools over three pages: the client followed nextCursor.
    assert_eq!(tools.tools.len(), 8, "{:?}", tools.diagnostics);
    assert!(tools.diagnostics.is_empty(), "{:?}", tools.diagnostics);
    let order = &tool(&tools, "create_order").definition;
    assert_eq!(order.id.to_string(), "ExampleMcpServer.CreateOrder@2.1.0");
    assert!(
        !schema::has_refs(&order.input_schema),
        "{}",
        order.input_schema
    );
    let props = &order.input_schema["properties"];
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
        assert_described(&t.definition.input_schema, &t.definition.name);
    }
    assert_eq!(
        order.output_schema.as_ref().unwrap()["required"],
        json!(["order_id", "total_quantity", "priority"])
    );
    let echo = &tool(&tools, "echo").definition;
    assert_eq!(
        echo.description,
        "Returns the message unchanged.\n\nTitle: Echo\nHints: [read-only] [idempotent] [closed-world]"
    );
    assert_eq!(
        tool(&tools, "divide").definition.output_schema,
        Some(json!({}))
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
    assert_eq!(relisted.tools.len(), 9);
    assert_eq!(
        invoke(&adapter, &relisted, "extra", json!({}))
            .await
            .unwrap(),
        json!("extra")
    );
    adapter.shutdown().await;
}

#[tokio::test]
async fn a_crash_mid_call_is_a_child_exit_then_the_server_restarts() {
    let adapter = stdio_adapter(demo_config()).await;
    let tools = adapter.list_tools().await.unwrap();
    let first = adapter.child_pid().unwrap();
    let mut changes = adapter.catalog_changes().unwrap();
    changes.borrow_and_update();
    match invoke(&adapter, &tools, "crash", json!({"code": 3})).await {
        Err(AdapterError::ChildExited { code }) => assert_eq!(code, Some(3)),
        other => panic!("expected the child to exit, got {other:?}"),
    }
    let second = wait_for_new_child(&adapter, first).await;
    assert!(
        wait_pid_gone(first, WAIT).await,
        "the crashed child is gone"
    );
    // The catalog ticks after a restart so the bridge re-lists.
    tokio::time::timeout(WAIT, changes.changed())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(adapter.state(), SourceState::Ready);
    let echoed = invoke(&adapter, &tools, "echo", json!({"message": "back"})).await;
    assert_eq!(echoed.unwrap(), json!("back"));
    adapter.shutdown().await;
    assert!(wait_pid_gone(second, WAIT).await);
}

#[tokio::test]
async fn calls_during_a_restart_are_refused_at_once() {
    let mut config = demo_config();
    config.restart.initial_backoff_ms = 600_000;
    config.restart.max_backoff_ms = 600_000;
    let adapter = stdio_adapter(config).await;
    let tools = adapter.list_tools().await.unwrap();
    let _ = invoke(&adapter, &tools, "crash", json!({})).await;
    let mut states = adapter.state_changes();
    tokio::time::timeout(
        WAIT,
        states.wait_for(|s| matches!(s, SourceState::Restarting { .. })),
    )
    .await
    .unwrap()
    .unwrap();
    match invoke(&adapter, &tools, "echo", json!({"message": "x"})).await {
        Err(AdapterError::Unavailable {
            source_name,
            reason,
        }) => {
            assert_eq!(source_name, "demo");
            assert!(reason.contains("restarting"), "{reason}");
        }
        other => panic!("expected unavailable, got {other:?}"),
    }
    // Shutdown does not wait for the ten-minute backoff.
    tokio::time::timeout(WAIT, adapter.shutdown())
        .await
        .unwrap();
}

#[tokio::test]
async fn an_abandoned_call_is_cancelled_upstream() {
    let adapter = stdio_adapter(demo_config()).await;
    let tools = adapter.list_tools().await.unwrap();
    let slow = adapter.call(call(&tool(&tools, "slow"), json!({"ms": 600_000})));
    // The bridge's per-call timeout, as the bridge applies it: the future is dropped.
    assert!(
        tokio::time::timeout(Duration::from_millis(200), slow)
            .await
            .is_err()
    );
    let stats = invoke(&adapter, &tools, "stats", json!({"wait_for_cancelled": 1})).await;
    assert_eq!(
        stats.unwrap()["cancelled"],
        1,
        "notifications/cancelled reached the server"
    );
    adapter.shutdown().await;
}

#[tokio::test]
async fn a_hung_server_is_restarted() {
    let mut config = demo_config();
    config.ping_interval_secs = 1;
    config.ping_timeout_secs = 1;
    let adapter = stdio_adapter(config).await;
    let first = adapter.child_pid().unwrap();
    // A stopped process answers nothing: the ping times out.
    let stopped = std::process::Command::new("kill")
        .args(["-STOP", &first.to_string()])
        .status()
        .unwrap();
    assert!(stopped.success());
    let second = wait_for_new_child(&adapter, first).await;
    assert!(
        wait_pid_gone(first, WAIT).await,
        "the hung child was killed"
    );
    adapter.shutdown().await;
    assert!(wait_pid_gone(second, WAIT).await);
}

#[tokio::test]
async fn shutdown_kills_the_child() {
    let adapter = stdio_adapter(demo_config()).await;
    let pid = adapter.child_pid().unwrap();
    adapter.shutdown().await;
    assert!(
        wait_pid_gone(pid, WAIT).await,
        "child {pid} outlived shutdown"
    );
    assert!(matches!(adapter.state(), SourceState::Failed { .. }));
    assert!(matches!(
        adapter.list_tools().await,
        Err(AdapterError::Unavailable { .. })
    ));
}

#[tokio::test]
async fn a_command_that_cannot_be_spawned_is_a_setup_error_naming_it() {
    let config = McpConfig::stdio("/nonexistent/bin/mcp-server --flag");
    match McpAdapter::build("missing", &config).await {
        Err(AdapterError::Setup { message, .. }) => {
            assert!(message.contains("/nonexistent/bin/mcp-server"), "{message}");
            assert!(message.contains("not found"), "{message}");
        }
        other => panic!("expected a setup error, got {other:?}"),
    }
    let config = McpConfig::stdio("node 'unbalanced");
    assert!(matches!(
        McpAdapter::build("bad", &config).await,
        Err(AdapterError::Setup { .. })
    ));
}

#[tokio::test]
async fn streamable_http_lists_calls_and_follows_list_changes() {
    let upstream = spawn_example_http("--http").await;
    let adapter = McpAdapter::build(
        "demo-http",
        &quick(McpConfig::streamable_http(&upstream.url)),
    )
    .await
    .unwrap();
    let tools = adapter.list_tools().await.unwrap();
    assert_eq!(tools.tools.len(), 8);
    assert_eq!(adapter.child_pid(), None);
    let echoed = invoke(&adapter, &tools, "echo", json!({"message": "over http"})).await;
    assert_eq!(echoed.unwrap(), json!("over http"));
    let calls = (0..20).map(|_| invoke(&adapter, &tools, "slow", json!({"ms": 50})));
    for result in futures::future::join_all(calls).await {
        assert_eq!(result.unwrap(), json!("slept 50 ms"));
    }
    assert!(matches!(
        invoke(&adapter, &tools, "divide", json!({"a": 1, "b": 0})).await,
        Err(AdapterError::ToolFailed { .. })
    ));
    let mut changes = adapter.catalog_changes().unwrap();
    changes.borrow_and_update();
    invoke(&adapter, &tools, "toggle_extra", json!({}))
        .await
        .unwrap();
    tokio::time::timeout(WAIT, changes.changed())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(adapter.list_tools().await.unwrap().tools.len(), 9);
    adapter.shutdown().await;
}

#[tokio::test]
async fn legacy_sse_lists_and_calls() {
    let upstream = spawn_example_http("--sse").await;
    let adapter = McpAdapter::build("demo-sse", &quick(McpConfig::sse(&upstream.url)))
        .await
        .unwrap();
    let tools = adapter.list_tools().await.unwrap();
    assert_eq!(tools.tools.len(), 8);
    let echoed = invoke(&adapter, &tools, "echo", json!({"message": "over sse"})).await;
    assert_eq!(echoed.unwrap(), json!("over sse"));
    let calls = (0..10).map(|_| invoke(&adapter, &tools, "slow", json!({"ms": 50})));
    for result in futures::future::join_all(calls).await {
        assert_eq!(result.unwrap(), json!("slept 50 ms"));
    }
    assert!(matches!(
        invoke(&adapter, &tools, "echo", json!({"wrong": 1})).await,
        Err(AdapterError::InvalidArguments { .. })
    ));
    adapter.shutdown().await;
}

#[tokio::test]
async fn server_everything_is_listed_and_its_echo_called() {
    let Some(bin) = everything_bin() else { return };
    let command = format!("'{}' stdio", bin.display());
    let adapter = McpAdapter::build("everything", &quick(McpConfig::stdio(&command)))
        .await
        .unwrap();
    let tools = adapter.list_tools().await.unwrap();
    let echo = tool(&tools, "echo");
    assert_eq!(
        echo.definition.id.to_string(),
        "McpServersEverything.Echo@2.0.0"
    );
    for t in &tools.tools {
        assert!(!schema::has_refs(&t.definition.input_schema));
        assert_described(&t.definition.input_schema, &t.definition.name);
    }
    let echoed = invoke(&adapter, &tools, "echo", json!({"message": "hi"}))
        .await
        .unwrap();
    assert_eq!(echoed, json!("Echo: hi"));
    let sum = invoke(&adapter, &tools, "get-sum", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert_eq!(sum, json!("The sum of 2 and 3 is 5."));
    assert_conform_to_the_spec(&tools);
    insta::assert_json_snapshot!("server_everything_tools", tools);
    let pid = adapter.child_pid().unwrap();
    adapter.shutdown().await;
    assert!(wait_pid_gone(pid, WAIT).await);
}

#[tokio::test]
async fn through_the_bridge_mcp_outcomes_take_the_standard_shapes() {
    let mut config = demo_config();
    // A crash leaves the source restarting long enough to see the 400.
    config.restart.initial_backoff_ms = 600_000;
    config.restart.max_backoff_ms = 600_000;
    let adapter = stdio_adapter(config).await;
    let bridge = TestBridge::start(vec![adapter.clone()], ServerSettings::default(), None).await;
    let http = reqwest::Client::new();
    let post = |tool: &str, input: Value| {
        let body = json!({"$schema": "otc://1.0", "request": {"call_id": "c1", "tool_id": tool, "input": input}});
        let request = http.post(bridge.at("/tools/call")).json(&body);
        async move {
            let response = request.send().await.unwrap();
            let status = response.status().as_u16();
            (status, response.json::<Value>().await.unwrap())
        }
    };
    let (status, body) = post("ExampleMcpServer.Echo", json!({"message": "hi"})).await;
    assert_eq!(
        (status, &body["result"]["value"]),
        (200, &json!("hi")),
        "{body}"
    );
    let (status, body) = post("ExampleMcpServer.Divide", json!({"a": 1, "b": 0})).await;
    assert_eq!(status, 200);
    assert_eq!(body["result"]["success"], false);
    assert_eq!(body["result"]["error"]["can_retry"], false);
    assert!(
        body["result"]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("divide by zero")
    );
    let (status, body) = post("ExampleMcpServer.Crash", json!({})).await;
    assert_eq!(status, 200);
    assert_eq!(body["result"]["success"], false);
    assert_eq!(body["result"]["error"]["can_retry"], true, "{body}");
    let mut states = adapter.state_changes();
    tokio::time::timeout(WAIT, states.wait_for(|s| !s.is_ready()))
        .await
        .unwrap()
        .unwrap();
    let (status, body) = post("ExampleMcpServer.Echo", json!({"message": "hi"})).await;
    assert_eq!(status, 400, "{body}");
    bridge.stop().await;
    adapter.shutdown().await;
}

#[tokio::test]
async fn a_killed_bridge_leaves_no_mcp_child_behind() {
    let mut bridge = tokio::process::Command::new(bridge_bin())
        .args([
            "--listen",
            "127.0.0.1:0",
            "--mcp",
            &example_server_command(),
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = bridge.id().unwrap();
    let child = tokio::time::timeout(WAIT, async {
        loop {
            if let Some(child) = children(pid).first() {
                return *child;
            }
            // Watching another process's children has no notification; poll /proc.
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the bridge did not start its MCP child");
    // SIGKILL: no code of the bridge runs; the child sees its stdin close and exits.
    bridge.start_kill().unwrap();
    bridge.wait().await.unwrap();
    assert!(
        wait_pid_gone(child, WAIT).await,
        "MCP child {child} outlived the bridge"
    );
}
