//! What an MCP host gets for a message the bridge cannot take (issue 25, item 12): a JSON-RPC
//! error in the protocol's shape, over `POST /mcp` and over `otc-bridge mcp`'s stdio, never
//! plain text and never silence.

use serde_json::{Value, json};

use crate::binary::Running;

/// Nesting far past serde's 128 levels.
const DEEP: usize = 100_000;

/// A message with `id` whose params nest [`DEEP`] levels.
fn deep(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"x","arguments":{{"a":{}1{}}}}}}}"#,
        "[".repeat(DEEP),
        "]".repeat(DEEP)
    )
}

/// A `tools/call` of `bytes` bytes or more with `id` first.
fn huge(id: u64, bytes: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"x","arguments":{{"s":"{}"}}}}}}"#,
        "a".repeat(bytes)
    )
}

fn initialize(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}})
}

/// Posts `body` to `url` as an MCP host would (JSON, both media types accepted).
async fn post(url: &str, body: impl Into<reqwest::Body>) -> (u16, String, String) {
    let response = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2025-11-25")
        .body(body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, content_type, response.text().await.unwrap())
}

/// Checks that `text` is a JSON-RPC error with `code` for `id`; returns its message.
#[track_caller]
fn error_of(text: &str, code: i64, id: &Value) -> String {
    let reply: Value = serde_json::from_str(text).unwrap_or_else(|e| {
        panic!(
            "not a JSON-RPC message ({e}): {}",
            &text[..text.len().min(300)]
        )
    });
    assert_eq!(reply["jsonrpc"], "2.0", "{reply}");
    assert_eq!(&reply["id"], id, "{reply}");
    assert!(reply.get("result").is_none(), "{reply}");
    assert_eq!(reply["error"]["code"], code, "{reply}");
    reply["error"]["message"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn issue_25_malformed_posts_to_mcp_get_json_rpc_errors() {
    let mut demo = Running::spawn(&["demo", "--listen", "127.0.0.1:0"], &[]);
    let url = format!("{}/mcp", demo.url().await);

    // Not JSON: Parse error, no id to answer.
    let (status, content_type, text) = post(&url, "{not json").await;
    assert_eq!(
        (status, content_type.as_str()),
        (400, "application/json"),
        "{text}"
    );
    error_of(&text, -32700, &Value::Null);

    // JSON, but no JSON-RPC message: Invalid Request, for the id when there is one.
    let (status, _, text) = post(&url, r#"{"id":7,"hello":"world"}"#).await;
    assert_eq!(status, 400, "{text}");
    error_of(&text, -32600, &json!(7));
    let (status, _, text) = post(&url, "[1,2,3]").await;
    assert_eq!(status, 400, "{text}");
    error_of(&text, -32600, &Value::Null);

    // Nested too deep to parse: its id is still found.
    let (status, _, text) = post(&url, deep(3)).await;
    assert_eq!(status, 400, "{text}");
    let message = error_of(&text, -32700, &json!(3));
    assert!(message.contains("recursion limit"), "{message}");

    // Over the body limit (1 MiB by default): still JSON-RPC, status 413.
    let (status, _, text) = post(&url, huge(4, 2 * 1024 * 1024)).await;
    assert_eq!(status, 413, "{text}");
    let message = error_of(&text, -32600, &Value::Null);
    assert!(message.contains("1048576 bytes"), "{message}");

    // A request of another media type is still refused by HTTP's own code.
    let response = reqwest::Client::new()
        .post(&url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "text/plain")
        .body(initialize(1).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 415);

    // And a good request is answered as before.
    let (status, _, text) = post(&url, initialize(5).to_string()).await;
    assert_eq!(status, 200, "{text}");
    let reply: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(reply["id"], 5);
    assert_eq!(reply["result"]["serverInfo"]["name"], "otc-bridge");
    demo.interrupt().await;
}

#[tokio::test]
async fn issue_25_tools_call_without_a_name_is_invalid_params() {
    let mut demo = Running::spawn(&["demo", "--listen", "127.0.0.1:0"], &[]);
    let url = format!("{}/mcp", demo.url().await);
    let nameless = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"arguments": {}}});
    let (status, _, text) = post(&url, nameless.to_string()).await;
    assert_eq!(status, 200, "{text}");
    let message = error_of(&text, -32602, &json!(1));
    assert!(
        message.contains("tools/call") && message.contains("name"),
        "{message}"
    );

    // A method nobody defines is still Method not found.
    let unknown = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/frobnicate", "params": {}});
    let (_, _, text) = post(&url, unknown.to_string()).await;
    error_of(&text, -32601, &json!(2));
    demo.interrupt().await;
}

#[tokio::test]
async fn issue_25_search_tools_cuts_a_long_toolkit_when_echoing_it() {
    let mut demo = Running::spawn(&["demo", "--listen", "127.0.0.1:0"], &[]);
    let url = format!("{}/mcp", demo.url().await);
    let toolkit = "k".repeat(100_000);
    let search = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "search_tools", "arguments": {"query": "pets", "toolkit": toolkit}}});
    let (status, _, text) = post(&url, search.to_string()).await;
    assert_eq!(status, 200);
    let reply: Value = serde_json::from_str(&text).unwrap();
    let said = reply["result"]["content"][0]["text"].as_str().unwrap();
    let head = &said[..said.len().min(300)];
    assert!(said.starts_with("No tool matches"), "{head}");
    assert!(said.contains("(100000 bytes)"), "{head}");
    assert!(
        text.len() < 2_000,
        "the toolkit is echoed whole: {} bytes",
        text.len()
    );
    demo.interrupt().await;
}
