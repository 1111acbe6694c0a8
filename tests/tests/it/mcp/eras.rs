//! Both MCP eras (issue 12, DESIGN §10), against servers built on rmcp's server role: `--era
//! modern` answers only 2026-07-28 (`server/discover`, `_meta` required on every request,
//! `initialize` refused), `dual` both (rmcp's default), `legacy` only the handshake
//! (`server/discover` is an unknown method). Each over stdio and streamable HTTP, through the real
//! bridge: listed, called, and the era in `/health`; and a stateless list's `ttlMs` re-lists.

use std::time::{Duration, Instant};

use otc_tests::upstream_mcp::{HttpUpstream, example_server_command, spawn_example_http_with};
use serde_json::{Value, json};

use otc_tests::bridge_process::spawn_bridge;
use otc_tests::http::{get_json, post_call};

use super::WAIT;

/// The bridge's `--mcp`/`--mcp-url` flag for the example server with `options`, over stdio or
/// streamable HTTP (the HTTP server is kept alive by the returned handle).
async fn source(http: bool, options: &[&str]) -> ([String; 2], Option<HttpUpstream>) {
    if http {
        let upstream = spawn_example_http_with("--http", options).await;
        (["--mcp-url".into(), upstream.url.clone()], Some(upstream))
    } else {
        let command = format!("{} {}", example_server_command(), options.join(" "));
        (["--mcp".into(), command], None)
    }
}

async fn call(bridge: &str, tool: &str, input: Value) -> (u16, Value) {
    // Each call its own id: a call_id is an idempotency key, and a reused one is refused.
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let call_id = format!(
        "c{}",
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let body = json!({"$schema": "otc://1.0", "request": {"call_id": call_id, "tool_id": tool, "input": input}});
    post_call(&reqwest::Client::new(), bridge, &body).await
}

async fn tool_ids(bridge: &str) -> Vec<String> {
    let list = get_json(&format!("{bridge}/tools")).await;
    list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn each_era_over_each_transport_is_listed_called_and_shown_in_health() {
    let cases = [
        ("modern", "2026-07-28", "stateless"),
        ("dual", "2026-07-28", "stateless"),
        ("legacy", "2025-11-25", "session"),
    ];
    for (era, version, lifecycle) in cases {
        for http in [false, true] {
            let at = format!("--era {era} over {}", if http { "HTTP" } else { "stdio" });
            let (flag, _upstream) = source(http, &["--era", era]).await;
            let (_bridge, url) = spawn_bridge(&[&flag[0], &flag[1]], &[]).await;
            let health = get_json(&format!("{url}/health")).await;
            assert_eq!(health["status"], "ready", "{at}: {health}");
            assert_eq!(
                health["sources"][0]["mcp"],
                json!({"version": version, "era": lifecycle}),
                "{at}: {health}"
            );
            assert_eq!(tool_ids(&url).await.len(), 9, "{at}");
            let (status, body) = call(&url, "ExampleMcpServer.Echo", json!({"message": era})).await;
            assert_eq!(
                (status, &body["result"]["value"]),
                (200, &json!(era)),
                "{at}: {body}"
            );
            // A tool error passes through in both eras.
            let (status, body) =
                call(&url, "ExampleMcpServer.Divide", json!({"a": 1, "b": 0})).await;
            assert_eq!(
                (status, &body["result"]["success"]),
                (200, &json!(false)),
                "{at}: {body}"
            );
        }
    }
}

#[tokio::test]
async fn check_names_the_era_each_server_speaks() {
    for (era, expected) in [
        ("modern", "speaks MCP 2026-07-28 (stateless)"),
        ("legacy", "speaks MCP 2025-11-25 (session)"),
    ] {
        let command = format!("{} --era {era}", example_server_command());
        let output = tokio::process::Command::new(otc_tests::bridge_process::bridge_bin())
            .args(["check", "--mcp", &command])
            .output()
            .await
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{stdout}");
        assert!(stdout.contains(expected), "{era}: {stdout}");
    }
}

/// The tool `extra` is listed by the bridge within `within`.
async fn listed_within(bridge: &str, within: Duration) -> bool {
    let until = Instant::now() + within;
    while Instant::now() < until {
        if tool_ids(bridge)
            .await
            .iter()
            .any(|id| id.starts_with("ExampleMcpServer.Extra@"))
        {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

#[tokio::test]
async fn a_stateless_list_is_relisted_when_its_ttl_runs_out() {
    // Both servers change their list without saying so (`--silent-changes`); only the stateless
    // one's list carries `ttlMs`, so only it is re-listed.
    let (modern, _a) = source(
        true,
        &[
            "--era",
            "modern",
            "--list-ttl-ms",
            "1500",
            "--silent-changes",
        ],
    )
    .await;
    let (legacy, _b) = source(true, &["--era", "legacy", "--silent-changes"]).await;
    let (_bridge_m, modern_url) = spawn_bridge(&[&modern[0], &modern[1]], &[]).await;
    let (_bridge_l, legacy_url) = spawn_bridge(&[&legacy[0], &legacy[1]], &[]).await;
    for url in [&modern_url, &legacy_url] {
        let (status, body) = call(url, "ExampleMcpServer.ToggleExtra", json!({})).await;
        assert_eq!(status, 200, "{body}");
    }
    let started = Instant::now();
    assert!(
        listed_within(&modern_url, WAIT).await,
        "the stateless source was not re-listed after its ttlMs"
    );
    // As long again for the other: without a cache hint or a notification, nothing re-lists it.
    assert!(
        !listed_within(&legacy_url, started.elapsed() + Duration::from_secs(1)).await,
        "the session source was re-listed without a reason"
    );
}

#[tokio::test]
async fn a_stateless_server_over_http_announces_changes_through_its_subscription() {
    let (flag, _upstream) = source(true, &["--era", "modern"]).await;
    let (_bridge, url) = spawn_bridge(&[&flag[0], &flag[1]], &[]).await;
    let (status, body) = call(&url, "ExampleMcpServer.ToggleExtra", json!({})).await;
    assert_eq!(status, 200, "{body}");
    assert!(
        listed_within(&url, WAIT).await,
        "list_changed on subscriptions/listen did not re-list"
    );
}

#[tokio::test]
async fn input_required_is_the_tools_error_naming_what_the_server_asked() {
    for http in [false, true] {
        let (flag, _upstream) = source(http, &["--era", "modern", "--fault-tools"]).await;
        let (_bridge, url) = spawn_bridge(&[&flag[0], &flag[1]], &[]).await;
        let (status, body) = call(&url, "ExampleMcpServer.Ask", json!({})).await;
        assert_eq!(
            (status, &body["result"]["success"]),
            (200, &json!(false)),
            "{body}"
        );
        let message = body["result"]["error"]["message"].as_str().unwrap_or("");
        assert!(
            message.contains("needs input that an OTC call cannot give")
                && message.contains("What is your name?"),
            "{body}"
        );
        // The opaque request state is the server's, not the caller's.
        assert!(!body.to_string().contains("asked"), "{body}");
    }
}
