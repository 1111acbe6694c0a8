//! What an MCP host gets for a message the bridge cannot take (issue 25, item 12): a JSON-RPC
//! error in the protocol's shape, over `POST /mcp` and over `otc-bridge mcp`'s stdio, never
//! plain text and never silence.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::process::Command;

use otc_tests::bridge_process::{Running, bridge_bin};
use otc_tests::http::call_tool;

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

/// `otc-bridge mcp` over the bridge's own demo MCP server.
fn stdio_bridge() -> tokio::process::Child {
    let upstream = format!("'{}' demo-mcp-server", bridge_bin().display());
    Command::new(bridge_bin())
        .args(["mcp", "--mcp", &upstream, "--log-level", "warn"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

#[tokio::test]
async fn issue_25_stdio_answers_every_line_it_cannot_take_and_goes_on() {
    let mut child = stdio_bridge();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let nameless = json!({"jsonrpc": "2.0", "id": 11, "method": "tools/call",
        "params": {"arguments": {}}});
    let ping = json!({"jsonrpc": "2.0", "id": 12, "method": "ping"});
    let lines = [
        "not json".to_owned(),
        "[1,2,3]".to_owned(),
        r#"{"id":5,"hello":"world"}"#.to_owned(),
        deep(6),
        // Over 16 MiB: refused by its length, the id read from its head.
        huge(8, 17 * 1024 * 1024),
        // An answer that cannot be read is not answered: JSON-RPC never answers an answer.
        r#"{"jsonrpc":"2.0","id":99,"error":{"code":"not a number"}}"#.to_owned(),
        initialize(9).to_string(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        nameless.to_string(),
        ping.to_string(),
    ];
    // Written while the answers are read: the large line fills the pipe.
    let writer = tokio::spawn(async move {
        for line in lines {
            stdin.write_all(line.as_bytes()).await.unwrap();
            stdin.write_all(b"\n").await.unwrap();
        }
        stdin.flush().await.unwrap();
        stdin
    });
    let mut replies = Vec::new();
    let read = async {
        // Bad lines are answered in order, as they are read; requests may be answered in any.
        let mut waiting = vec![json!(11), json!(12)];
        while let Some(line) = stdout.next_line().await.unwrap() {
            let reply: Value = serde_json::from_str(&line).unwrap();
            waiting.retain(|id| *id != reply["id"]);
            replies.push(line);
            if waiting.is_empty() {
                break;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(120), read)
        .await
        .unwrap_or_else(|_| panic!("the bridge went silent; answered so far: {replies:?}"));
    assert_eq!(replies.len(), 8, "{replies:#?}");
    error_of(&replies[0], -32700, &Value::Null);
    error_of(&replies[1], -32600, &Value::Null);
    error_of(&replies[2], -32600, &json!(5));
    let message = error_of(&replies[3], -32700, &json!(6));
    assert!(message.contains("recursion limit"), "{message}");
    let message = error_of(&replies[4], -32600, &json!(8));
    assert!(message.contains("16777216 bytes"), "{message}");
    let initialized: Value = serde_json::from_str(&replies[5]).unwrap();
    assert_eq!(initialized["id"], 9);
    assert_eq!(initialized["result"]["serverInfo"]["name"], "otc-bridge");
    let last: Vec<Value> = replies[6..]
        .iter()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let nameless = last.iter().find(|reply| reply["id"] == 11).unwrap();
    let message = error_of(&nameless.to_string(), -32602, &json!(11));
    assert!(message.contains("name"), "{message}");
    let pong = last.iter().find(|reply| reply["id"] == 12).unwrap();
    assert_eq!(pong["result"], json!({}));

    // Closing stdin ends the session cleanly.
    drop(writer.await.unwrap());
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "{status}");
}

/// Issue 25, item 13: an MCP answer refused for its size reaches the caller as a clear error
/// and leaves a line in the log naming the source and the limit.
#[tokio::test]
async fn an_oversized_mcp_answer_is_logged_with_its_source() {
    let server = otc_fixtures::workspace_bin("example-mcp-server", "example-mcp-server");
    let command = format!("{} --fault-tools", server.display());
    let log_path = otc_tests::scratch::file("oversize", "bridge.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let mut bridge =
        Running::spawn_with_stderr(&["--listen", "127.0.0.1:0", "--mcp", &command], &[], log);
    let url = bridge.url().await;
    let body = json!({"tool_id": "ExampleMcpServer.Huge", "input": {"bytes": 20_000_000}});
    let answer = call_tool(&reqwest::Client::new(), &url, &body).await;
    assert_eq!(answer["success"], false, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("too large"),
        "{answer}"
    );
    bridge.interrupt().await;
    let log = std::fs::read_to_string(&log_path).unwrap();
    let line = log
        .lines()
        .find(|l| l.contains("An MCP answer larger than the limit was refused"))
        .unwrap_or_else(|| panic!("no log line:\n{log}"));
    assert!(
        line.contains("example-mcp-server") && line.contains("16777216"),
        "{line}"
    );
    let _ = std::fs::remove_file(log_path);
}
