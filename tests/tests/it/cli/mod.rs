//! Tests of the `otc-bridge` binary as a user runs it: the demo as printed, every command of the
//! README, and the messages of bad configurations.

mod audit;
mod cache;
mod config;
mod demo;
mod host_config;
mod hostile_files;
mod idempotency;
mod interop;
mod limits;
mod mcp_errors;
mod metrics;
mod per_caller;
mod policies;
mod readme;
mod reload;
mod search;
mod shaping;
mod traces;
mod web;

use otc_tests::bridge_process::repo_root;

/// Writes `text` to a configuration file `{name}.yaml` in a fresh directory named after the test
/// module (`prefix`), so no two tests share one.
fn write_config(prefix: &str, name: &str, text: &str) -> std::path::PathBuf {
    let path = otc_tests::scratch::file(prefix, &format!("{name}.yaml"));
    std::fs::write(&path, text).unwrap();
    path
}

/// One `tools/call` on `POST /mcp` as the caller of API key `key`, with `headers` besides: the
/// JSON-RPC `result`.
async fn mcp_call(
    url: &str,
    key: &str,
    tool: &str,
    arguments: serde_json::Value,
    headers: &[(&str, &str)],
) -> serde_json::Value {
    let mut request = reqwest::Client::new()
        .post(format!("{url}/mcp"))
        .header("x-api-key", key)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let text = request
        .json(
            &serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": tool, "arguments": arguments}}),
        )
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let reply: serde_json::Value = serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap();
    reply["result"].clone()
}

/// Where the README and `examples/config/bridge.yaml` say the example MCP server is, relative
/// to the repository root.
const EXAMPLE_SERVER: &str = "target/debug/example-mcp-server";

/// A configuration's first lines: the example MCP server as its one source, and named API keys
/// `(name, environment variable, group)`; the rest of the configuration follows it.
fn example_with_keys(keys: &[(&str, &str, &str)]) -> String {
    let mut yaml = format!(
        "sources:\n  - {{type: mcp, name: example, transport: {{type: stdio, command: \"{}\"}}}}\nauth:\n  api_keys:\n",
        example_server()
    );
    for (name, env, group) in keys {
        yaml.push_str(&format!(
            "    - {{name: {name}, key: {{env: {env}}}, groups: [{group}]}}\n"
        ));
    }
    yaml
}

/// The example MCP server, built (or brought up to date) once per test process, so a stale
/// binary is never tested; returns [`EXAMPLE_SERVER`], which names the binary just built.
fn example_server() -> &'static str {
    let built = otc_tests::upstream_mcp::example_server_bin();
    assert_eq!(
        built,
        repo_root().join(EXAMPLE_SERVER),
        "the README's commands name {EXAMPLE_SERVER}: run the tests with the default target directory"
    );
    EXAMPLE_SERVER
}
