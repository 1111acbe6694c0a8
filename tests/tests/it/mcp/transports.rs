//! Streamable HTTP and legacy SSE upstreams, and the bridge's HTTP server in front of an MCP source.

use super::*;
use otc_bridge::ServerSettings;
use otc_tests::bridge::TestBridge;

#[tokio::test]
async fn streamable_http_lists_calls_and_follows_list_changes() {
    let upstream = spawn_example_http("--http").await;
    let adapter = McpAdapter::build(
        "demo-http",
        &quick(McpConfig::streamable_http(&upstream.url)),
        &BuildContext::default(),
    )
    .await
    .unwrap();
    let tools = adapter.list_tools().await.unwrap();
    assert_eq!(tools.tools.len(), 9);
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
    assert_eq!(adapter.list_tools().await.unwrap().tools.len(), 10);
    adapter.shutdown().await;
}

#[tokio::test]
async fn legacy_sse_lists_and_calls() {
    let upstream = spawn_example_http("--sse").await;
    let adapter = McpAdapter::build(
        "demo-sse",
        &quick(McpConfig::sse(&upstream.url)),
        &BuildContext::default(),
    )
    .await
    .unwrap();
    let tools = adapter.list_tools().await.unwrap();
    assert_eq!(tools.tools.len(), 9);
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
