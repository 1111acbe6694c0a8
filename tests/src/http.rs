//! HTTP on loopback as the tests speak it: a free port, and the few requests every kind of test
//! sends to a bridge (`GET` as JSON, `POST /tools/call`, one MCP message to `POST /mcp`).

/// A port free on loopback now (bound and released): for a server that must be told its port up
/// front, or, left unused, an address where nothing listens ("connection refused").
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .unwrap()
}

/// `GET url`, as JSON.
pub async fn get_json(url: &str) -> serde_json::Value {
    reqwest::get(url).await.unwrap().json().await.unwrap()
}

/// `POST {url}/tools/call` with `body` through `http` (a test that needs its connection kept
/// passes its own client); the answer's JSON.
pub async fn call_tool(
    http: &reqwest::Client,
    url: &str,
    body: &serde_json::Value,
) -> serde_json::Value {
    post_call(http, url, body).await.1
}

/// `POST {url}/tools/call` with `body` through `http`: the answer's status and JSON.
pub async fn post_call(
    http: &reqwest::Client,
    url: &str,
    body: &serde_json::Value,
) -> (u16, serde_json::Value) {
    let response = http
        .post(format!("{url}/tools/call"))
        .json(body)
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

/// One JSON-RPC message posted to `{url}/mcp` as an MCP host posts it; the reply (the first
/// JSON line, so an event stream's `data:` works as well as a JSON body).
pub async fn post_mcp(url: &str, body: &serde_json::Value) -> serde_json::Value {
    let text = reqwest::Client::new()
        .post(format!("{url}/mcp"))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .json(body)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let json = &text[text.find('{').unwrap()..];
    serde_json::from_str(json.lines().next().unwrap()).unwrap()
}
