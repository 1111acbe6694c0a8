//! What an MCP host gets for a message the bridge cannot take (issue 25, item 12): a JSON-RPC
//! error in the protocol's shape, over `POST /mcp` and over `otc-bridge mcp`'s stdio, never
//! plain text and never silence.

use serde_json::{Value, json};

use crate::binary::Running;

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
