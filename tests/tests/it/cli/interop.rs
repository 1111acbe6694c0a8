//! Interop with the standard's own Python client, the PyPI package `oxp`, installed by
//! `scripts/install-python-client.sh` into `$OTC_CORPUS_DIR/venv`: it lists tools and calls a
//! successful, an invalid and a failing tool through the running binary (OXP dialect).

use std::path::PathBuf;

use otc_tests::bridge_process::{Running, bridge_bin, repo_root};

fn python() -> Option<PathBuf> {
    let dir = otc_fixtures::corpus_dir()?;
    let python = dir.join("venv/bin/python");
    assert!(
        python.is_file(),
        "{} is missing: run scripts/install-python-client.sh",
        python.display()
    );
    Some(python)
}

/// Runs `command` to the end and returns its stdout; fails the test, with both outputs, unless
/// it succeeded.
async fn succeeded(mut command: tokio::process::Command, what: &str) -> String {
    let out = command.output().await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{what} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[tokio::test]
async fn the_oxp_python_client_works_against_the_bridge() {
    let Some(python) = python() else { return };
    let mut demo = Running::spawn(
        &["demo", "--listen", "127.0.0.1:0", "--dialect", "oxp"],
        &[],
    );
    let url = demo.url().await;
    let mut client = tokio::process::Command::new(python);
    client
        .arg(repo_root().join("tests/interop/oxp_client.py"))
        .arg(&url);
    let stdout = succeeded(client, "oxp client").await;
    assert!(stdout.contains("oxp interop: ok"), "{stdout}");
    demo.interrupt().await;
}

/// The official MCP conformance suite (npm `@modelcontextprotocol/conformance`, run on the Node 22
/// that `scripts/install-mcp-conformance.sh` installs) against `POST /mcp` of the demo bridge.
#[tokio::test]
async fn the_official_mcp_conformance_suite_passes_against_post_mcp() {
    let Some(corpus) = otc_fixtures::corpus_dir() else {
        return;
    };
    let mut demo = Running::spawn(&["demo", "--listen", "127.0.0.1:0"], &[]);
    let url = demo.url().await;
    let mut suite = tokio::process::Command::new(repo_root().join("scripts/mcp-conformance.sh"));
    suite
        .arg(format!("{url}/mcp"))
        .env("OTC_CORPUS_DIR", &corpus);
    let stdout = succeeded(suite, "conformance").await;
    for scenario in [
        "server-initialize",
        "ping",
        "tools-list",
        "dns-rebinding-protection",
    ] {
        assert!(stdout.contains(&format!("PASS {scenario}")), "{stdout}");
    }
    assert!(stdout.contains("4 passed, 0 failed"), "{stdout}");
    demo.interrupt().await;
}

/// The conformance suite's client scenarios, with the bridge as the MCP client: the suite's test
/// server (and, for auth/*, its authorization server), `otc-bridge login` played by the script
/// as a user would, `otc-bridge --config` in front of the server, and OTC calls through it
/// (`scripts/mcp-conformance.sh --client`, see scripts/mcp-conformance/client.py).
#[tokio::test]
async fn the_official_mcp_conformance_client_scenarios_pass_through_the_bridge() {
    let Some(corpus) = otc_fixtures::corpus_dir() else {
        return;
    };
    let mut suite = tokio::process::Command::new(repo_root().join("scripts/mcp-conformance.sh"));
    // The bridge under test is the workspace's build (otc_fixtures::workspace_bin): left to
    // itself, the script would build `-p otc-bridge` with other features and replace it.
    suite
        .arg("--client")
        .env("OTC_CORPUS_DIR", &corpus)
        .env("OTC_BRIDGE", bridge_bin());
    let stdout = succeeded(suite, "conformance (client scenarios)").await;
    for scenario in [
        "initialize",
        "tools_call",
        "sse-retry",
        "auth/metadata-default",
        "auth/metadata-var1",
        "auth/metadata-var2",
        "auth/metadata-var3",
        "auth/basic-cimd",
        "auth/scope-from-www-authenticate",
        "auth/scope-from-scopes-supported",
        "auth/scope-omitted-when-undefined",
        "auth/scope-step-up",
        "auth/scope-retry-limit",
        "auth/token-endpoint-auth-basic",
        "auth/token-endpoint-auth-post",
        "auth/token-endpoint-auth-none",
        "auth/pre-registration",
        "auth/2025-03-26-oauth-endpoint-fallback",
        "auth/client-credentials-basic",
        "auth/client-credentials-jwt",
    ] {
        assert!(stdout.contains(&format!("PASS {scenario}")), "{stdout}");
    }
    assert!(stdout.contains("20 passed, 0 failed"), "{stdout}");
}

/// Runs `tests/interop/mcp_client.py` (the official Python MCP SDK) with `args` and `script`,
/// and returns its JSON lines.
async fn python_mcp(
    python: &std::path::Path,
    args: &[&str],
    script: &serde_json::Value,
) -> Vec<serde_json::Value> {
    let mut client = tokio::process::Command::new(python);
    client
        .arg(repo_root().join("tests/interop/mcp_client.py"))
        .args(args)
        .arg(script.to_string());
    succeeded(client, "mcp client")
        .await
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

/// What the Python SDK must see from the demo catalog, whichever way it came in.
fn check_python_session(lines: &[serde_json::Value]) {
    use serde_json::json;
    assert_eq!(lines[0]["op"], "initialize", "{lines:?}");
    assert_eq!(lines[0]["serverInfo"]["name"], "otc-bridge");
    let names: Vec<&str> = lines[1]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["search_tools", "read_tool", "call_tool"]);
    let found = &lines[2]["structuredContent"];
    assert_eq!(
        found["results"][0]["path"], "DemoTools.WordCount@1.0.0",
        "{found}"
    );
    assert_eq!(found["results"][0]["destructive"], false);
    let read = &lines[3]["structuredContent"];
    assert_eq!(read["inputSchema"]["required"], json!(["text"]), "{read}");
    let counted = &lines[4];
    assert_eq!(counted["isError"], false, "{counted}");
    assert_eq!(counted["structuredContent"]["words"], 3, "{counted}");
    let invalid = &lines[5];
    assert_eq!(invalid["isError"], true, "{invalid}");
    let text = invalid["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("Error: Invalid arguments:") && text.contains("- text:"),
        "{text}"
    );
    let missing = &lines[6];
    assert_eq!(missing["isError"], true, "{missing}");
    let text = missing["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("Error: Tool not found: DemoTools.Nope"),
        "{text}"
    );
}

fn python_script() -> serde_json::Value {
    serde_json::json!([
        {"op": "list_tools", "all": true},
        {"op": "call_tool", "name": "search_tools", "arguments": {"query": "count the words of a text"}},
        {"op": "call_tool", "name": "read_tool", "arguments": {"path": "DemoTools.WordCount"}},
        {"op": "call_tool", "name": "call_tool", "arguments": {"path": "DemoTools.WordCount", "arguments": {"text": "a b a"}}},
        {"op": "call_tool", "name": "call_tool", "arguments": {"path": "DemoTools.WordCount", "arguments": {}}},
        {"op": "call_tool", "name": "call_tool", "arguments": {"path": "DemoTools.Nope"}},
    ])
}

#[tokio::test]
async fn the_python_mcp_sdk_uses_the_catalog_over_http_in_both_eras() {
    let Some(python) = python() else { return };
    let mut demo = Running::spawn(&["demo", "--listen", "127.0.0.1:0"], &[]);
    let url = format!("{}/mcp", demo.url().await);
    for mode in ["legacy", "auto"] {
        let lines = python_mcp(&python, &["--mode", mode, "http", &url], &python_script()).await;
        check_python_session(&lines);
    }
    demo.interrupt().await;
}

#[tokio::test]
async fn the_python_mcp_sdk_spawns_otc_bridge_mcp_over_stdio() {
    let Some(python) = python() else { return };
    let bridge = otc_tests::bridge_process::bridge_bin();
    let bridge = bridge.to_str().unwrap();
    let upstream = format!("'{bridge}' demo-mcp-server");
    let lines = python_mcp(
        &python,
        &[
            "stdio",
            bridge,
            "mcp",
            "--mcp",
            &upstream,
            "--log-level",
            "warn",
            "--",
        ],
        &python_script(),
    )
    .await;
    check_python_session(&lines);
}
