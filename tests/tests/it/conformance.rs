//! Every adapter through [`assert_adapter_conforms`]: the OpenAPI adapter against the loopback
//! upstream of `otc_tests::upstream_http`, and the MCP adapter against the workspace's example
//! server as a stdio child, over streamable HTTP and over legacy SSE, in each era it can speak
//! (`--era modern`: 2026-07-28 only; `dual`: both, where the adapter picks 2026-07-28; `legacy`:
//! the `initialize` handshake only). Real processes and sockets; the era each case negotiated is
//! checked, so a case cannot quietly test another one.

use std::sync::Arc;

use futures::FutureExt as _;
use otc_adapters::mcp::{McpAdapter, McpConfig};
use otc_adapters::openapi::{OpenApiAdapter, OpenApiConfig};
use otc_adapters::{Adapter, BuildContext, McpEra};
use otc_mappings::otc::{CallContext, ToolSecret};
use otc_tests::conformance::{Class, Exercise, Expect, Probe, assert_adapter_conforms};
use otc_tests::upstream_http::{self, Upstream};
use otc_tests::upstream_mcp::{example_server_command, spawn_example_http_with};
use serde_json::{Map, json};

#[tokio::test]
async fn the_openapi_adapter_conforms() {
    let upstream = Upstream::start().await;
    let mut config = OpenApiConfig::new(upstream_http::document_path().display().to_string());
    config.base_url = Some(upstream.url());
    // Longer than the harness waits before it drops a slow call, so that is a cancellation.
    config.timeout_ms = 2_000;
    config.max_response_bytes = 4096;
    let adapter = Arc::new(
        OpenApiAdapter::build("upstream", &config, &otc_adapters::BuildContext::default())
            .await
            .unwrap(),
    );
    // `GET /status/{code}` takes an API key.
    let key = CallContext {
        secrets: vec![ToolSecret {
            id: "headerKey".into(),
            value: "k".into(),
            extra: Map::new(),
        }],
        ..CallContext::default()
    };
    let status = |code: u16, expect: Expect| {
        Probe::new("GET /status/{code}", json!({"code": code}), expect).with_context(key.clone())
    };
    let exercise = Exercise {
        success: Probe::new("GET /text", json!({}), Expect::Value(json!("hello, world"))),
        refused: status(503, Expect::retryable(Class::UpstreamStatus(503))),
        bad_input: Probe::new(
            "GET /echo/path/simple/{ids}/{id}",
            json!({"ids": ["a"], "id": ".."}),
            Expect::retryable(Class::BadInput),
        ),
        unknown_tool: Expect::retryable(Class::UpstreamStatus(404)),
        more_failures: vec![
            status(403, Expect::final_failure(Class::UpstreamStatus(403))),
            status(500, Expect::final_failure(Class::UpstreamStatus(500))),
            status(429, Expect::retryable(Class::UpstreamStatus(429))),
            status(422, Expect::retryable(Class::UpstreamStatus(422))),
            Probe::new("GET /slow", json!({}), Expect::retryable(Class::Timeout)),
            Probe::new(
                "GET /invalid-json",
                json!({}),
                Expect::final_failure(Class::Protocol),
            ),
            Probe::new(
                "GET /big",
                json!({"bytes": 10_000}),
                Expect::final_failure(Class::ResponseTooLarge),
            ),
        ],
        slow: Probe::new("GET /slow", json!({}), Expect::Value(json!(null))),
        saw_cancellation: None,
        lose_upstream: Box::new(move || async move { drop(upstream) }.boxed()),
    };
    assert_adapter_conforms(adapter, exercise).await;
}

/// How the example server is reached.
#[derive(Debug, Clone, Copy)]
enum Transport {
    Stdio,
    StreamableHttp,
    Sse,
}

/// Runs the example server in `era` over `transport`, checks that the adapter negotiated
/// `expected`, and runs the exercise.
async fn mcp_conforms(transport: Transport, era: &str, expected: McpEra) {
    let options = ["--era", era];
    let (config, upstream) = match transport {
        Transport::Stdio => {
            let command = format!("{} {}", example_server_command(), options.join(" "));
            (McpConfig::stdio(&command), None)
        }
        Transport::StreamableHttp => {
            let upstream = spawn_example_http_with("--http", &options).await;
            (McpConfig::streamable_http(&upstream.url), Some(upstream))
        }
        Transport::Sse => {
            let upstream = spawn_example_http_with("--sse", &options).await;
            (McpConfig::sse(&upstream.url), Some(upstream))
        }
    };
    let mut config = config;
    config.restart.initial_backoff_ms = 20;
    config.restart.max_backoff_ms = 200;
    config.restart.shutdown_grace_ms = 500;
    // Finding (issue 23, 2.7): a session over streamable HTTP (`--era legacy`) does not see its
    // server die with a call in flight; that call waits until the next ping fails (30 s + 10 s
    // by default; the stdio child, SSE and the stateless era fail it at once). Pinging every
    // second keeps the harness's bound (the call in flight fails, retryably, within 20 s) while
    // the adapter is fixed; the case still fails if the loss is never noticed.
    config.ping_interval_secs = 1;
    config.ping_timeout_secs = 1;
    let name = format!("example-{transport:?}-{era}");
    let adapter = McpAdapter::build(&name, &config, &BuildContext::default())
        .await
        .unwrap();
    let protocol = adapter.mcp_protocol().unwrap();
    assert_eq!(protocol.era, expected, "{name}: {protocol}");

    let lose_upstream = {
        let adapter = Arc::clone(&adapter);
        Box::new(move || {
            async move {
                match upstream {
                    // Its process is killed (`kill_on_drop`).
                    Some(upstream) => drop(upstream),
                    None => {
                        let pid = adapter.child_pid().unwrap();
                        let killed = std::process::Command::new("kill")
                            .args(["-KILL", &pid.to_string()])
                            .status()
                            .unwrap();
                        assert!(killed.success());
                    }
                }
            }
            .boxed()
        })
    };
    let exercise = Exercise {
        success: Probe::new("echo", json!({"message": era}), Expect::Value(json!(era))),
        refused: Probe::new(
            "divide",
            json!({"a": 1, "b": 0}),
            Expect::final_failure(Class::ToolFailed),
        ),
        bad_input: Probe::new(
            "echo",
            json!({"wrong": 1}),
            Expect::retryable(Class::InvalidArguments),
        ),
        unknown_tool: Expect::retryable(Class::InvalidArguments),
        more_failures: Vec::new(),
        slow: Probe::new("slow", json!({"ms": 600_000}), Expect::Value(json!(null))),
        saw_cancellation: Some(Probe::new(
            "stats",
            json!({"wait_for_cancelled": 1}),
            Expect::Value(json!({"cancelled": 1})),
        )),
        lose_upstream,
    };
    assert_adapter_conforms(adapter, exercise).await;
}

#[tokio::test]
async fn the_mcp_adapter_conforms_over_stdio_to_a_stateless_server() {
    mcp_conforms(Transport::Stdio, "modern", McpEra::Stateless).await;
}

#[tokio::test]
async fn the_mcp_adapter_conforms_over_stdio_to_a_dual_era_server() {
    mcp_conforms(Transport::Stdio, "dual", McpEra::Stateless).await;
}

#[tokio::test]
async fn the_mcp_adapter_conforms_over_stdio_to_a_session_server() {
    mcp_conforms(Transport::Stdio, "legacy", McpEra::Session).await;
}

#[tokio::test]
async fn the_mcp_adapter_conforms_over_streamable_http_to_a_stateless_server() {
    mcp_conforms(Transport::StreamableHttp, "modern", McpEra::Stateless).await;
}

#[tokio::test]
async fn the_mcp_adapter_conforms_over_streamable_http_to_a_dual_era_server() {
    mcp_conforms(Transport::StreamableHttp, "dual", McpEra::Stateless).await;
}

#[tokio::test]
async fn the_mcp_adapter_conforms_over_streamable_http_to_a_session_server() {
    mcp_conforms(Transport::StreamableHttp, "legacy", McpEra::Session).await;
}

#[tokio::test]
async fn the_mcp_adapter_conforms_over_legacy_sse() {
    mcp_conforms(Transport::Sse, "legacy", McpEra::Session).await;
}
