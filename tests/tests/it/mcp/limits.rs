//! Issue 8, defects 9 and 10: an answer over 16 MiB, or nested deeper than serde's 128 levels,
//! fails its call at once with a non-retryable error, on every transport, and the session goes
//! on; a legacy SSE event is refused once past the cap, even one that never ends.

use std::convert::Infallible;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::routing::{get, post};
use futures::StreamExt;
use futures::channel::mpsc;

use super::*;

/// Calls the fault tools `huge` (17 MiB) and `deep` (200 levels), then `echo`, on one session.
async fn assert_refused_then_healthy(adapter: &McpAdapter) {
    let tools = adapter.list_tools().await.unwrap();
    let pid = adapter.child_pid();
    let fault = |name: &str| {
        let call = call(&unlisted(&tools, name), json!({}));
        // WAIT is an upper bound on a hang, not a timing assertion: before the fix these calls
        // never returned.
        async move {
            tokio::time::timeout(WAIT, adapter.call(call))
                .await
                .expect("the refused answer was dropped: the call hung")
        }
    };
    match fault("huge").await {
        Err(AdapterError::ResponseTooLarge { limit_bytes }) => {
            assert_eq!(limit_bytes, 16 * 1024 * 1024);
        }
        other => panic!("expected ResponseTooLarge, got {other:?}"),
    }
    match fault("deep").await {
        Err(AdapterError::Protocol { message, .. }) => {
            assert!(message.contains("malformed"), "{message}");
        }
        other => panic!("expected a protocol error, got {other:?}"),
    }
    let echoed = invoke(adapter, &tools, "echo", json!({"message": "still here"})).await;
    assert_eq!(echoed.unwrap(), json!("still here"));
    assert_eq!(adapter.child_pid(), pid, "the session was not restarted");
    assert_eq!(adapter.state(), SourceState::Ready);
}

#[tokio::test]
async fn issue_8_oversized_and_too_deep_answers_fail_at_once_over_stdio() {
    let adapter = stdio_adapter(demo_config()).await;
    assert_refused_then_healthy(&adapter).await;
    adapter.shutdown().await;
}

#[tokio::test]
async fn issue_8_oversized_and_too_deep_answers_fail_at_once_over_streamable_http() {
    let upstream = spawn_example_http("--http").await;
    let config = quick(McpConfig::streamable_http(&upstream.url));
    let adapter = McpAdapter::build("demo-http", &config, &BuildContext::default())
        .await
        .unwrap();
    assert_refused_then_healthy(&adapter).await;
    adapter.shutdown().await;
}

#[tokio::test]
async fn issue_8_oversized_and_too_deep_answers_fail_at_once_over_legacy_sse() {
    let upstream = spawn_example_http("--sse").await;
    let config = quick(McpConfig::sse(&upstream.url));
    let adapter = McpAdapter::build("demo-sse", &config, &BuildContext::default())
        .await
        .unwrap();
    assert_refused_then_healthy(&adapter).await;
    adapter.shutdown().await;
}

/// A legacy SSE server whose answer to `tools/call` is one event that does not end: 48 MiB of
/// one text (bounded, so the test stops by itself), three times the cap.
#[derive(Clone)]
struct Endless {
    events: mpsc::UnboundedSender<Bytes>,
}

const ENDLESS_BYTES: usize = 48 * 1024 * 1024;

async fn endless_message(State(server): State<Endless>, body: String) -> &'static str {
    let request: Value = serde_json::from_str(&body).unwrap();
    let id = request["id"].clone();
    let answer = |result: Value| {
        let message = json!({"jsonrpc": "2.0", "id": id, "result": result});
        Bytes::from(format!("event: message\ndata: {message}\n\n"))
    };
    let send = |bytes: Bytes| {
        let _ = server.events.unbounded_send(bytes);
    };
    match request["method"].as_str() {
        Some("initialize") => send(answer(json!({
            "protocolVersion": "2024-11-05",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "endless", "version": "1.0.0"}
        }))),
        Some("tools/list") => send(answer(json!({
            "tools": [{"name": "endless", "inputSchema": {"type": "object"}}]
        }))),
        Some("tools/call") => {
            let head = json!({"jsonrpc": "2.0", "id": id}).to_string();
            let head = head.trim_end_matches('}');
            send(Bytes::from(format!(
                "event: message\ndata: {head},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\""
            )));
            let chunk = Bytes::from(vec![b'x'; 1024 * 1024]);
            for _ in 0..ENDLESS_BYTES / chunk.len() {
                send(chunk.clone());
            }
        }
        _ => {}
    }
    "accepted"
}

#[tokio::test]
async fn issue_8_an_endless_sse_event_is_refused_past_the_cap() {
    let (events, stream) = mpsc::unbounded::<Bytes>();
    let stream = Arc::new(std::sync::Mutex::new(Some(stream)));
    let open = move || {
        let stream = stream.lock().unwrap().take().expect("one session only");
        let first = Bytes::from_static(b"event: endpoint\ndata: /message\n\n");
        let body = futures::stream::iter([first])
            .chain(stream)
            .map(Ok::<_, Infallible>);
        async move { Body::from_stream(body) }
    };
    let app = axum::Router::new()
        .route("/sse", get(open))
        .route("/message", post(endless_message))
        .with_state(Endless { events });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/sse", listener.local_addr().unwrap());
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    let adapter = McpAdapter::build(
        "endless",
        &quick(McpConfig::sse(&url)),
        &BuildContext::default(),
    )
    .await
    .unwrap();
    let tools = adapter.list_tools().await.unwrap();
    match invoke(&adapter, &tools, "endless", json!({})).await {
        Err(AdapterError::ResponseTooLarge { .. }) => {}
        other => panic!("expected the event to be refused, got {other:?}"),
    }
    adapter.shutdown().await;
    server.abort();
}
