//! Time and peak memory of a 5 MB answer served to an MCP host with a 64 KiB budget, through the
//! whole bridge in one process (issue 27: < 20 ms and < 3× the answer's size at the peak).
//!
//! An upstream on loopback answers `GET /pulls` with 5 MB of JSON (written from one buffer that
//! exists before the call, so the upstream allocates nothing while it answers); the bridge's
//! router takes `tools/call` of `call_tool` on `POST /mcp` with `mcp.max_result_bytes: 65536`,
//! calls the upstream through the OpenAPI adapter, cuts the answer, keeps it for
//! `read_result`, and answers. The peak counts the bytes live at once in the process
//! (`peakmem_alloc`) above what was live before the call; the answer's bytes count (1× is the
//! floor), and so does the JSON-RPC answer the host is sent. The allocator is the binary's,
//! jemalloc, tuned as a serving bridge tunes it (`src/alloc.rs`): freed pages are kept a second,
//! so one call's buffers are reused by the next, as they are in the bridge. (The system's
//! allocator, which this example used until issue 27's last change, gave the MCP cases other
//! times: the same or within 2 ms either way, run by run.) Then `read_result` reads the kept
//! answer back to its end, which must be the upstream's answer.
//!
//! The same for an MCP source over stdio, twice. First this program itself as the server
//! (`MCP_CUT_PEAK_SERVE`): it writes the same pull requests as `structuredContent`, repeated as
//! text the way rmcp writes a structured result (an 11 MB message), from one buffer made before
//! the first call, so that the time is the bridge's as it is for the OpenAPI upstream. Then
//! the example MCP server (`--fault-tools`), which builds and writes its answer per call: its
//! `huge` tool answers 5 MB of `structuredContent` (and, as rmcp writes a structured result, the
//! same text again in a text block). Either way the bridge's stdio transport sets the structured
//! text aside before rmcp parses the message (`adapters/src/mcp/set_aside.rs`). The server is
//! another process, so its memory is not counted.
//!
//! Run: `cargo build --release -p example-mcp-server && cargo run --release -p otc-bridge --example
//! mcp_cut_peak [openapi] [prebuilt] [server]` (the cases named, or all; `MCP_CUT_PEAK_ROUNDS=N`
//! for more than five rounds each).
#![allow(clippy::unwrap_used, clippy::print_stdout)] // A measuring script: loud is the point.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::time::Instant;

use axum::body::{Body, to_bytes};
use axum::http::Request;
use cap::Cap;
use otc_adapters::BuildContext;
use otc_adapters::mcp::{McpAdapter, McpConfig};
use otc_adapters::openapi::{OpenApiAdapter, OpenApiConfig};
use otc_bridge::{
    AppState, Catalog, ServerSettings, SharedCatalog, SourceOptions, SourceTools, app,
};
use peakmem_alloc::{PeakMemAlloc, PeakMemAllocTrait};
use serde_json::{Value, json};
use tower::ServiceExt;

/// The binary's allocator (`src/alloc.rs`), counted: the bytes live at their peak since a reset,
/// and the bytes live now (`ALLOCATOR.allocated()`).
static PEAK: PeakMemAlloc<tikv_jemallocator::Jemalloc> =
    PeakMemAlloc::new(tikv_jemallocator::Jemalloc);
#[global_allocator]
static ALLOCATOR: Cap<&PeakMemAlloc<tikv_jemallocator::Jemalloc>> = Cap::new(&PEAK, usize::MAX);

const BUDGET: usize = 64 * 1024;

fn pull(i: usize) -> Value {
    json!({
        "url": format!("https://api.github.com/repos/acme/widgets/pulls/{i}"),
        "id": 1_000_000 + i, "number": i, "state": "open", "locked": false,
        "title": format!("Fix the widget frobnicator, part {i}"),
        "user": {"login": format!("user{i}"), "id": i, "type": "User", "site_admin": false},
        "body": "This pull request fixes the frobnicator. ".repeat(10),
        "labels": [{"id": 1, "name": "bug", "color": "d73a4a", "default": true}],
        "head": {"ref": "fix", "sha": "0123456789abcdef0123456789abcdef01234567"},
        "draft": false, "merged_at": null, "assignees": []
    })
}

/// Answers every request on every connection with `answer`, from a thread that allocates
/// nothing per answer (its reader's buffer aside): what the upstream does is not the bridge's.
fn upstream(answer: &'static [u8]) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let mut stream = stream.unwrap();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::with_capacity(1024);
                loop {
                    // The request's head, up to its empty line (a GET has no body).
                    loop {
                        line.clear();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        if line == "\r\n" {
                            break;
                        }
                    }
                    let head = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                        answer.len()
                    );
                    if stream.write_all(head.as_bytes()).is_err()
                        || stream.write_all(answer).is_err()
                    {
                        return;
                    }
                }
            });
        }
    });
    url
}

/// `POST path` of `body` (JSON) through `router` with `headers` besides, answered 200: the
/// answer's body.
async fn post(
    router: &axum::Router,
    path: &str,
    headers: &[(&str, &str)],
    body: &Value,
) -> axum::body::Bytes {
    let mut request = Request::post(path)
        .header("host", "127.0.0.1")
        .header("content-type", "application/json");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request.body(Body::from(body.to_string())).unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), 200);
    to_bytes(response.into_body(), usize::MAX).await.unwrap()
}

/// One JSON-RPC `tools/call` on `POST /mcp`: its `result`, and the answer's size in bytes.
async fn mcp_call(router: &axum::Router, tool: &str, arguments: Value) -> (Value, usize) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": tool, "arguments": arguments}});
    let headers = [
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2025-06-18"),
    ];
    let bytes = post(router, "/mcp", &headers, &body).await;
    let reply: Value = serde_json::from_slice(&bytes).unwrap();
    (reply["result"].clone(), bytes.len())
}

/// About 5 MB of pull requests, as one JSON array.
fn pulls() -> String {
    let mut items = Vec::new();
    let mut size = 0;
    while size < 5_000_000 {
        items.push(pull(items.len()));
        size += items.last().map_or(0, |v| v.to_string().len() + 1);
    }
    Value::Array(items).to_string()
}

/// The environment variable that makes this program the MCP server of the prebuilt case.
const SERVE_PREBUILT: &str = "MCP_CUT_PEAK_SERVE";

fn main() {
    if std::env::var_os(SERVE_PREBUILT).is_some() {
        serve_prebuilt();
        return;
    }
    let answer: &'static str = pulls().leak();
    let url = upstream(answer.as_bytes());

    let document = std::env::temp_dir().join(format!("mcp-cut-peak-{}.yaml", std::process::id()));
    std::fs::write(
        &document,
        "openapi: 3.0.3\ninfo: {title: Widgets, version: 1.0.0}\npaths:\n  /pulls:\n    get:\n      operationId: listPulls\n      responses:\n        '200':\n          description: The pull requests.\n          content:\n            application/json:\n              schema: {type: array, items: {type: object}}\n",
    )
    .unwrap();
    serving_allocator();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // `mcp_cut_peak [openapi] [prebuilt] [server]` runs only the cases named (all by default).
    let cases: Vec<String> = std::env::args().skip(1).collect();
    let runs = |case: &str| cases.is_empty() || cases.iter().any(|c| c == case);
    runtime.block_on(async {
        if runs("openapi") {
            openapi(&document, url, answer).await;
        }
        if runs("prebuilt") {
            mcp_prebuilt(answer).await;
        }
        if runs("server") {
            mcp().await;
        }
    });
    let _ = std::fs::remove_file(document);
}

/// jemalloc as `src/alloc.rs` tunes it for a serving bridge: freed pages kept one second (dirty
/// decay), returned with `MADV_DONTNEED` (muzzy decay 0) by jemalloc's own thread.
fn serving_allocator() {
    use tikv_jemalloc_ctl::{Access, AsName};
    let _ = tikv_jemalloc_ctl::background_thread::write(true);
    let arenas = tikv_jemalloc_ctl::arenas::narenas::read().unwrap_or(0);
    let mut settings = vec![
        ("arenas.dirty_decay_ms\0".to_owned(), 1000_isize),
        ("arenas.muzzy_decay_ms\0".to_owned(), 0),
    ];
    for arena in 0..arenas {
        settings.push((format!("arena.{arena}.dirty_decay_ms\0"), 1000));
        settings.push((format!("arena.{arena}.muzzy_decay_ms\0"), 0));
    }
    for (name, value) in settings {
        let _ = name.as_bytes().name().write(value);
    }
}

/// The router over `adapter`'s tools with the budget, and the first tool's id.
async fn router(name: &str, adapter: Arc<dyn otc_adapters::Adapter>) -> (axum::Router, String) {
    let mapped = adapter.list_tools().await.unwrap();
    let tool = mapped
        .tools
        .iter()
        .find(|t| t.definition.id.tool == "Huge" || mapped.tools.len() == 1)
        .unwrap();
    let path = tool.definition.id.to_string();
    let options: SourceOptions = serde_yaml::from_str("{}").unwrap();
    let policy = Arc::new(options.compile(name).unwrap());
    let source = SourceTools::compile(adapter, policy, mapped.tools, &mut Vec::new());
    let settings = ServerSettings {
        mcp_max_result_bytes: Some(BUDGET),
        ..ServerSettings::default()
    };
    let router = app(AppState::new(
        SharedCatalog::new(Catalog::new(vec![source])),
        settings,
        None,
    ));
    (router, path)
}

/// Rounds (five, or `MCP_CUT_PEAK_ROUNDS`) of `call_tool` of `path` with `arguments`, whose whole
/// answer is `answer` (read back through `read_result` in the first round and compared).
async fn rounds(router: &axum::Router, path: &str, arguments: Value, answer: &str) {
    let size = answer.len();
    let times = |bytes: usize| bytes as f64 / size as f64;
    println!(
        "A {:.2} MB answer to {path}, called through POST /mcp with a {BUDGET}-byte budget:",
        size as f64 / 1e6
    );
    let count = std::env::var("MCP_CUT_PEAK_ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(5);
    for round in 0..count {
        let base = ALLOCATOR.allocated();
        PEAK.reset_peak_memory();
        let started = Instant::now();
        let (result, sent) = mcp_call(
            router,
            "call_tool",
            json!({"path": path, "arguments": arguments}),
        )
        .await;
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        let peak = PEAK.get_peak_memory();
        let after = ALLOCATOR.allocated().saturating_sub(base);
        let truncated = &result["structuredContent"]["truncated"];
        let handle = truncated["handle"].as_str().unwrap().to_owned();
        println!(
            "round {round}: {ms:5.1} ms; peak {:.2}× the answer; after: {:.2}× (what is kept); {sent} bytes sent, {} items left out",
            times(peak),
            times(after),
            truncated["omitted"]["items"],
        );
        if round == 0 {
            // The kept answer, read back to its end, is the upstream's.
            let mut read = String::new();
            let mut offset = Some(0);
            while let Some(at) = offset {
                let (page, _) = mcp_call(
                    router,
                    "read_result",
                    json!({"handle": handle, "offset": at}),
                )
                .await;
                read.push_str(page["content"][0]["text"].as_str().unwrap());
                offset = page["structuredContent"]["next_offset"].as_u64();
            }
            assert_eq!(read, answer, "read_result reads the upstream's answer");
        }
    }
}

/// An OpenAPI source whose upstream on loopback answers `answer`.
async fn openapi(document: &std::path::Path, url: String, answer: &str) {
    let mut config = OpenApiConfig::new(document.display().to_string());
    config.base_url = Some(url);
    let adapter: Arc<dyn otc_adapters::Adapter> = Arc::new(
        OpenApiAdapter::build("widgets", &config, &BuildContext::default())
            .await
            .unwrap(),
    );
    let (router, path) = router("widgets", adapter).await;
    rounds(&router, &path, json!({}), answer).await;
}

/// The example MCP server over stdio, answering 5 MB of `structuredContent`.
async fn mcp() {
    let server = std::env::current_exe()
        .unwrap()
        .parent()
        .and_then(std::path::Path::parent)
        .unwrap()
        .join("example-mcp-server");
    assert!(
        server.is_file(),
        "{} is missing: cargo build --release -p example-mcp-server",
        server.display()
    );
    let config: McpConfig = serde_yaml::from_str(&format!(
        "{{transport: {{type: stdio, command: \"{}\", args: [--fault-tools]}}, toolkit: Example}}",
        server.display()
    ))
    .unwrap();
    let adapter: Arc<dyn otc_adapters::Adapter> =
        McpAdapter::build("example", &config, &BuildContext::default())
            .await
            .unwrap();
    let arguments = json!({"bytes": 5_000_000, "structured": true});
    let (router, path) = router("example", adapter).await;
    // The whole answer, as OTC serves it (no budget there): what read_result must read back.
    let body = json!({"tool_id": path, "input": arguments});
    let bytes = post(&router, "/tools/call", &[], &body).await;
    let whole = serde_json::from_slice::<Value>(&bytes).unwrap()["value"].to_string();
    drop(bytes);
    rounds(&router, &path, arguments, &whole).await;
}

/// This program as a minimal MCP server over stdio, for the prebuilt case: one tool, `huge`,
/// whose answer (`{"items": [the pull requests]}` as `structuredContent`, its text repeated in a
/// text block, as rmcp writes a structured result) is one buffer made before the first call and
/// written as it is: what the server does is not the bridge's, as with the OpenAPI upstream.
fn serve_prebuilt() {
    let structured = format!("{{\"items\":{}}}", pulls());
    let result = json!({
        "content": [{"type": "text", "text": structured}],
        "isError": false,
    });
    // The structured value is spliced in as text: parsing 5 MB to build the buffer is not needed.
    let result = result.to_string();
    let answer = format!(
        "{},\"structuredContent\":{structured}}}}}\n",
        &result[..result.len() - 1]
    );
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { return };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let (Some(method), Some(id)) = (message["method"].as_str(), message.get("id")) else {
            continue; // a notification
        };
        let reply = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result});
        let written = match method {
            "tools/call" => write!(
                stdout,
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{answer}"
            ),
            "initialize" => writeln!(
                stdout,
                "{}",
                reply(json!({
                    "protocolVersion": message["params"]["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "prebuilt", "version": "1.0.0"},
                }))
            ),
            "tools/list" => writeln!(
                stdout,
                "{}",
                reply(json!({"tools": [{
                    "name": "huge",
                    "description": "About 5 MB of pull requests, prebuilt.",
                    "inputSchema": {"type": "object"},
                }]}))
            ),
            // `server/discover` among them: this server is of the handshake era.
            _ => writeln!(
                stdout,
                "{}",
                json!({"jsonrpc": "2.0", "id": id,
                       "error": {"code": -32601, "message": "Method not found"}})
            ),
        };
        if written.and_then(|()| stdout.flush()).is_err() {
            return;
        }
    }
}

/// This program as an MCP server over stdio ([`serve_prebuilt`]), answering 5 MB of
/// `structuredContent` from one buffer: the bridge's own time for an MCP source.
async fn mcp_prebuilt(answer: &str) {
    let config: McpConfig = serde_yaml::from_str(&format!(
        "{{transport: {{type: stdio, command: \"{}\", env: {{{SERVE_PREBUILT}: \"1\"}}}}, toolkit: Prebuilt}}",
        std::env::current_exe().unwrap().display()
    ))
    .unwrap();
    let adapter: Arc<dyn otc_adapters::Adapter> =
        McpAdapter::build("prebuilt", &config, &BuildContext::default())
            .await
            .unwrap();
    let (router, path) = router("prebuilt", adapter).await;
    rounds(
        &router,
        &path,
        json!({}),
        &format!("{{\"items\":{answer}}}"),
    )
    .await;
}
