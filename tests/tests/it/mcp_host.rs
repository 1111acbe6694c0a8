//! The bridge as an MCP server for hosts (DESIGN.md §8): the real `otc-bridge` binary in front of
//! a real MCP child (the workspace's example server) and a real HTTP upstream, reached by rmcp's
//! client over streamable HTTP (`POST /mcp`, both protocol eras) and over stdio
//! (`otc-bridge mcp`, a real child process).

use std::time::Duration;

use otc_tests::bridge_process::{bridge_bin, spawn_bridge};
use otc_tests::upstream_http::{Upstream, document_path};
use otc_tests::upstream_mcp::example_server_bin;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    ProtocolVersion, ServerNotification, SubscriptionFilter,
};
use rmcp::service::{NotificationContext, RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt as _, ServiceExt as _};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(20);
const API_KEY: &str = "bridge-key-never-forwarded";

/// A config file with the example MCP server and the HTTP upstream, whose `headerKey`
/// requirement is met by the MCP request's `X-Upstream-Key` header.
fn config(upstream: &Upstream) -> std::path::PathBuf {
    let path = otc_tests::scratch::file("mcp-host", "bridge.yaml");
    let yaml = json!({
        "sources": [
            {"type": "mcp", "name": "example",
             "transport": {"type": "stdio", "command": example_server_bin()}},
            {"type": "openapi", "name": "upstream", "spec": document_path(),
             "base_url": upstream.url(),
             "context_headers": {"headerKey": "X-Upstream-Key"}},
        ]
    });
    std::fs::write(&path, yaml.to_string()).unwrap();
    path
}

/// The bridge on loopback with API-key authentication, and its `/mcp` URL.
async fn bridge(upstream: &Upstream) -> (tokio::process::Child, String) {
    let config = config(upstream);
    let (child, url) = spawn_bridge(
        &[
            "--config",
            config.to_str().unwrap(),
            "--api-keys-env",
            "OTC_TEST_KEYS",
        ],
        &[("OTC_TEST_KEYS", API_KEY)],
    )
    .await;
    (child, format!("{url}/mcp"))
}

fn http(
    url: &str,
    headers: &[(&'static str, &str)],
) -> StreamableHttpClientTransport<reqwest::Client> {
    let custom = [("x-api-key", API_KEY)]
        .iter()
        .chain(headers)
        .map(|(k, v)| {
            (
                reqwest::header::HeaderName::from_static(k),
                reqwest::header::HeaderValue::from_str(v).unwrap(),
            )
        })
        .collect();
    StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url.to_owned()).custom_headers(custom),
    )
}

async fn call(
    client: &RunningService<RoleClient, impl rmcp::Service<RoleClient>>,
    tool: &str,
    arguments: Value,
) -> CallToolResult {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object")
    };
    tokio::time::timeout(
        WAIT,
        client.call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments)),
    )
    .await
    .expect("the call did not finish")
    .unwrap_or_else(|e| panic!("{tool}: a JSON-RPC error instead of a result: {e}"))
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

fn structured(result: &CallToolResult) -> &Value {
    result
        .structured_content
        .as_ref()
        .expect("structuredContent")
}

/// Asserts a failure result: `isError`, a text starting `Error: ` and containing `needle`.
fn assert_failure(result: &CallToolResult, needle: &str) {
    let text = text(result);
    assert_eq!(result.is_error, Some(true), "{text}");
    assert!(text.starts_with("Error: "), "{text}");
    assert!(text.contains(needle), "{needle:?} not in {text:?}");
    assert!(
        structured(result)["error"]["message"].is_string(),
        "{result:?}"
    );
}

/// What every client must see, in either protocol era.
async fn meta_tools_work(client: &RunningService<RoleClient, impl rmcp::Service<RoleClient>>) {
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["search_tools", "read_tool", "call_tool"]);

    let found = call(client, "search_tools", json!({"query": "divide a by b"})).await;
    assert_eq!(found.is_error, Some(false), "{}", text(&found));
    let results = structured(&found)["results"].as_array().unwrap().clone();
    assert_eq!(
        results[0]["path"], "ExampleMcpServer.Divide@2.1.0",
        "{results:?}"
    );
    for key in [
        "path",
        "name",
        "summary",
        "score",
        "destructive",
        "requires",
    ] {
        assert!(results[0].get(key).is_some(), "{key} missing: {results:?}");
    }
    assert!(
        text(&found).starts_with("ExampleMcpServer.Divide@2.1.0 — "),
        "{}",
        text(&found)
    );

    let read = call(
        client,
        "read_tool",
        json!({"path": "ExampleMcpServer.CreateOrder"}),
    )
    .await;
    let read = structured(&read).clone();
    assert_eq!(read["path"], "ExampleMcpServer.CreateOrder@2.1.0");
    assert_eq!(read["version"], "2.1.0");
    assert_eq!(read["versions"], json!(["2.1.0"]));
    assert_eq!(read["inputSchema"]["type"], "object");
    assert!(read["outputSchema"].is_object(), "{read}");
    for key in ["description", "destructive", "requirements"] {
        assert!(read.get(key).is_some(), "{key} missing: {read}");
    }

    let echoed = call(
        client,
        "call_tool",
        json!({"path": "ExampleMcpServer.Echo@2.1.0", "arguments": {"message": "hi"}}),
    )
    .await;
    assert_eq!(echoed.is_error, Some(false));
    assert_eq!(text(&echoed), "hi");
}

#[tokio::test]
async fn initialize_era_client_finds_reads_and_calls_over_http() {
    let upstream = Upstream::start().await;
    let (_bridge, url) = bridge(&upstream).await;
    let client = ().serve(http(&url, &[])).await.unwrap();
    let info = client.peer().peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "otc-bridge");
    assert_eq!(info.protocol_version, ProtocolVersion::V_2025_11_25);
    meta_tools_work(&client).await;
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn stateless_2026_client_discovers_and_calls_over_http() {
    let upstream = Upstream::start().await;
    let (_bridge, url) = bridge(&upstream).await;
    let client = ()
        .serve_with_lifecycle(
            http(&url, &[]),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .unwrap();
    let info = client.peer().peer_info().unwrap();
    assert_eq!(info.protocol_version, ProtocolVersion::V_2026_07_28);
    meta_tools_work(&client).await;
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn every_failure_is_an_error_result_that_says_what_to_fix() {
    let upstream = Upstream::start().await;
    let (_bridge, url) = bridge(&upstream).await;
    let client = ().serve(http(&url, &[])).await.unwrap();

    // A path that names no tool: the closest paths are offered.
    let missing = call(
        &client,
        "call_tool",
        json!({"path": "ExampleMcpServer.Divid"}),
    )
    .await;
    assert_failure(&missing, "Tool not found: ExampleMcpServer.Divid");
    let closest = &structured(&missing)["error"]["closest"];
    assert!(
        closest
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p == "ExampleMcpServer.Divide@2.1.0"),
        "{closest}"
    );
    let read = call(&client, "read_tool", json!({"path": "Nope.Nothing"})).await;
    assert_failure(&read, "Tool not found: Nope.Nothing");
    let version = call(
        &client,
        "call_tool",
        json!({"path": "ExampleMcpServer.Echo@9"}),
    )
    .await;
    assert_failure(&version, "2.1.0");

    // Each invalid argument is named with its reason; nothing reached the upstream.
    let invalid = call(
        &client,
        "call_tool",
        json!({"path": "ExampleMcpServer.Divide", "arguments": {"a": "one"}}),
    )
    .await;
    assert_failure(&invalid, "- a: ");
    assert_failure(&invalid, "- b: ");
    assert_eq!(structured(&invalid)["error"]["can_retry"], true);
    let errors = &structured(&invalid)["error"]["parameter_errors"];
    assert!(
        errors["a"].is_string() && errors["b"].is_string(),
        "{errors}"
    );

    // The upstream's own message, unchanged.
    let divided = call(
        &client,
        "call_tool",
        json!({"path": "ExampleMcpServer.Divide", "arguments": {"a": 1, "b": 0}}),
    )
    .await;
    assert_failure(&divided, "cannot divide by zero");

    // A requirement nobody meets: which one, and how to configure it.
    let hits = upstream.hits();
    let no_key = call(
        &client,
        "call_tool",
        json!({"path": "Upstream.Status", "arguments": {"code": 503}}),
    )
    .await;
    assert_failure(&no_key, "No credentials for \"headerKey\"");
    assert_failure(&no_key, "context_headers");
    assert_eq!(upstream.hits(), hits, "nothing was sent upstream");

    // Meta-tool arguments of the wrong shape are results too.
    let bad = call(&client, "search_tools", json!({"limit": 5})).await;
    assert_failure(&bad, "query");
    let unknown = call(&client, "no_such_tool", json!({})).await;
    assert_failure(&unknown, "Tool not found: no_such_tool");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn mapped_headers_meet_requirements_and_retry_hints_reach_the_host() {
    let upstream = Upstream::start().await;
    let (_bridge, url) = bridge(&upstream).await;
    let client = ().serve(http(&url, &[("x-upstream-key", "upstream-secret")])).await.unwrap();

    let echoed = call(
        &client,
        "call_tool",
        json!({"path": "Upstream.SecureHeader"}),
    )
    .await;
    assert_eq!(echoed.is_error, Some(false), "{}", text(&echoed));
    let seen = upstream.last_headers();
    assert_eq!(seen.get("x-api-key").unwrap(), "upstream-secret");
    // The MCP request's own credential is the bridge's, never the upstream's.
    for (name, value) in &seen {
        assert!(
            !value.to_str().unwrap_or_default().contains(API_KEY),
            "{name} carries the bridge's key"
        );
    }

    let busy = call(
        &client,
        "call_tool",
        json!({"path": "Upstream.Status", "arguments": {"code": 503, "retry_after": "2"}}),
    )
    .await;
    assert_failure(&busy, "503");
    let error = &structured(&busy)["error"];
    assert_eq!(error["can_retry"], true, "{error}");
    assert_eq!(error["retry_after_ms"], 2000, "{error}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn mcp_requests_are_authenticated_and_guarded_like_the_otc_routes() {
    let upstream = Upstream::start().await;
    let (_bridge, url) = bridge(&upstream).await;
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    let post = |key: Option<&str>, extra: Option<(&str, &str)>| {
        let mut request = reqwest::Client::new()
            .post(&url)
            .header("accept", "application/json, text/event-stream")
            .json(&initialize);
        if let Some(key) = key {
            request = request.header("x-api-key", key);
        }
        if let Some((name, value)) = extra {
            request = request.header(name, value);
        }
        request.send()
    };
    assert_eq!(post(None, None).await.unwrap().status(), 401);
    assert_eq!(post(Some("wrong"), None).await.unwrap().status(), 401);
    assert_eq!(post(Some(API_KEY), None).await.unwrap().status(), 200);
    let foreign_origin = post(Some(API_KEY), Some(("origin", "https://evil.example")));
    assert_eq!(foreign_origin.await.unwrap().status(), 403);
    let rebound_host = post(Some(API_KEY), Some(("host", "evil.example")));
    assert_eq!(rebound_host.await.unwrap().status(), 403);
}

/// Counts `notifications/tools/list_changed`.
#[derive(Clone, Default)]
struct Listener(std::sync::Arc<tokio::sync::Notify>);

impl ClientHandler for Listener {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.0.notify_one();
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("test", "1"),
        )
    }
}

#[tokio::test]
async fn stdio_in_all_mode_lists_every_tool_and_announces_changes() {
    let command = format!("'{}'", example_server_bin().display());
    let mut bridge = tokio::process::Command::new(bridge_bin());
    bridge
        .args([
            "mcp",
            "--mcp",
            &command,
            "--mcp-expose",
            "all",
            "--log-level",
            "warn",
        ])
        .stderr(std::process::Stdio::null());
    let listener = Listener::default();
    let client = listener
        .clone()
        .serve(TokioChildProcess::new(bridge).unwrap())
        .await
        .unwrap();
    let names = |tools: &[rmcp::model::Tool]| -> Vec<String> {
        tools.iter().map(|t| t.name.to_string()).collect()
    };
    let tools = client.list_all_tools().await.unwrap();
    let listed = names(&tools);
    assert_eq!(listed[..3], ["search_tools", "read_tool", "call_tool"]);
    assert!(
        listed.contains(&"ExampleMcpServer_Echo".to_owned()),
        "{listed:?}"
    );
    assert!(
        !listed.contains(&"ExampleMcpServer_Extra".to_owned()),
        "{listed:?}"
    );
    // Annotations follow `destructive`: the example's echo says it is read-only.
    let echo = tools
        .iter()
        .find(|t| t.name == "ExampleMcpServer_Echo")
        .unwrap();
    assert_eq!(
        echo.annotations.as_ref().unwrap().read_only_hint,
        Some(true)
    );

    let echoed = call(
        &client,
        "ExampleMcpServer_Echo",
        json!({"message": "direct"}),
    )
    .await;
    assert_eq!(text(&echoed), "direct");
    // The upstream adds a tool and says so; the bridge relists and tells its host.
    call(&client, "ExampleMcpServer_ToggleExtra", json!({})).await;
    tokio::time::timeout(WAIT, listener.0.notified())
        .await
        .expect("no tools/list_changed from the bridge");
    let listed = names(&client.list_all_tools().await.unwrap());
    assert!(
        listed.contains(&"ExampleMcpServer_Extra".to_owned()),
        "{listed:?}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn stateless_2026_client_in_all_mode_hears_list_changed_on_its_subscription() {
    let upstream = Upstream::start().await;
    let config = config(&upstream);
    let (_bridge, url) = spawn_bridge(
        &[
            "--config",
            config.to_str().unwrap(),
            "--api-keys-env",
            "OTC_TEST_KEYS",
            "--mcp-expose",
            "all",
        ],
        &[("OTC_TEST_KEYS", API_KEY)],
    )
    .await;
    let client = ()
        .serve_with_lifecycle(
            http(&format!("{url}/mcp"), &[]),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .unwrap();
    let mut subscription = client
        .peer()
        .listen(SubscriptionFilter::builder().tools_list_changed().build())
        .await
        .expect("subscriptions/listen acknowledged");
    assert_eq!(subscription.acknowledged().tools_list_changed, Some(true));
    let before = client.list_all_tools().await.unwrap();
    assert!(!before.iter().any(|t| t.name == "ExampleMcpServer_Extra"));

    // The upstream adds a tool; the bridge relists and tells the subscription.
    call(&client, "ExampleMcpServer_ToggleExtra", json!({})).await;
    let notification = tokio::time::timeout(WAIT, subscription.next())
        .await
        .expect("no notification on the subscription")
        .unwrap();
    assert!(
        matches!(
            notification,
            Some(ServerNotification::ToolListChangedNotification(_))
        ),
        "{notification:?}"
    );
    let after = client.list_all_tools().await.unwrap();
    assert!(after.iter().any(|t| t.name == "ExampleMcpServer_Extra"));
    client.cancel().await.unwrap();
}
