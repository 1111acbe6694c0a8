//! OpenTelemetry traces (issue 13): the real binary exports its spans over OTLP/HTTP to a
//! receiver on loopback, and the upstreams (an OpenAPI service on loopback and the example MCP
//! server) see the trace context of the bridge's upstream span.
//!
//! The receiver is a minimal OTLP/HTTP endpoint (`POST /v1/traces`) that decodes each
//! `ExportTraceServiceRequest` with the OpenTelemetry project's protobuf types
//! (`opentelemetry-proto`), as a collector does. Spans are read after SIGINT: the bridge must
//! flush its batch on shutdown, so no test waits for an export interval.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::routing::{get, post};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use prost::Message as _;
use serde_json::{Value, json};

use otc_tests::bridge_process::Running;
use otc_tests::http::get_json;

/// One exported span, the parts the tests read (ids in lowercase hex).
#[derive(Debug, Clone)]
struct Span {
    service: String,
    name: String,
    trace: String,
    id: String,
    parent: String,
    /// `SpanKind` as OTLP numbers it: 2 server, 3 client.
    kind: i32,
    attributes: BTreeMap<String, String>,
}

type Spans = Arc<Mutex<Vec<Span>>>;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn text(value: Option<&opentelemetry_proto::tonic::common::v1::AnyValue>) -> String {
    match value.and_then(|v| v.value.as_ref()) {
        Some(AnyValue::StringValue(s)) => s.clone(),
        Some(AnyValue::IntValue(n)) => n.to_string(),
        Some(AnyValue::BoolValue(b)) => b.to_string(),
        other => format!("{other:?}"),
    }
}

async fn export(State(spans): State<Spans>, body: Bytes) -> &'static str {
    let request = ExportTraceServiceRequest::decode(body).unwrap();
    let mut spans = spans.lock().unwrap();
    for resource in request.resource_spans {
        let service = resource
            .resource
            .iter()
            .flat_map(|r| &r.attributes)
            .find(|kv| kv.key == "service.name")
            .map(|kv| text(kv.value.as_ref()))
            .unwrap_or_default();
        for scope in resource.scope_spans {
            for span in scope.spans {
                spans.push(Span {
                    service: service.clone(),
                    name: span.name,
                    trace: hex(&span.trace_id),
                    id: hex(&span.span_id),
                    parent: hex(&span.parent_span_id),
                    kind: span.kind,
                    attributes: span
                        .attributes
                        .iter()
                        .map(|kv| (kv.key.clone(), text(kv.value.as_ref())))
                        .collect(),
                });
            }
        }
    }
    // An empty `ExportTraceServiceResponse` is zero bytes of protobuf.
    ""
}

/// Starts the OTLP receiver; returns its base URL (what `OTEL_EXPORTER_OTLP_ENDPOINT` names).
async fn receiver() -> (String, Spans) {
    let spans = Spans::default();
    let app = axum::Router::new()
        .route("/v1/traces", post(export))
        .with_state(spans.clone());
    (serve(app).await, spans)
}

async fn serve(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

/// An OpenAPI service with one operation that answers the trace headers it received.
async fn upstream() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let document = json!({
        "openapi": "3.0.3",
        "info": {"title": "Traced", "version": "1.0.0"},
        "servers": [{"url": base}],
        "paths": {"/headers": {"get": {
            "operationId": "headers",
            "summary": "The trace headers of this request.",
            "responses": {"200": {
                "description": "The headers",
                "content": {"application/json": {"schema": {"type": "object"}}}
            }}
        }}}
    });
    let app = axum::Router::new()
        .route(
            "/openapi.json",
            get(move || {
                let document = document.clone();
                async move { Json(document) }
            }),
        )
        .route(
            "/headers",
            get(|headers: HeaderMap| async move {
                let header = |name| headers.get(name).map(|v| v.to_str().unwrap().to_owned());
                Json(json!({
                    "traceparent": header("traceparent"),
                    "tracestate": header("tracestate"),
                }))
            }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

/// The bridge over the OpenAPI upstream and the example MCP server (with its `trace` tool).
async fn bridge(upstream: &str, env: &[(&str, &str)]) -> (Running, String) {
    let server = otc_fixtures::workspace_bin("example-mcp-server", "example-mcp-server");
    let mcp = format!("{} --fault-tools", server.display());
    let document = format!("{upstream}/openapi.json");
    let mut bridge = Running::spawn(
        &[
            "--listen",
            "127.0.0.1:0",
            "--openapi",
            &document,
            "--mcp",
            &mcp,
        ],
        env,
    );
    let url = bridge.url().await;
    (bridge, url)
}

/// The id of the one tool whose id starts with `prefix`.
async fn tool_id(url: &str, prefix: &str) -> String {
    let tools = get_json(&format!("{url}/tools")).await;
    let ids: Vec<String> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_owned())
        .collect();
    ids.iter()
        .find(|id| id.starts_with(prefix))
        .unwrap_or_else(|| panic!("no tool {prefix}… in {ids:?}"))
        .clone()
}

/// Calls `tool_id` with `headers`; returns the value.
async fn call(url: &str, body: Value, headers: &[(&str, &str)]) -> Value {
    let mut request = reqwest::Client::new()
        .post(format!("{url}/tools/call"))
        .json(&body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response: Value = request.send().await.unwrap().json().await.unwrap();
    assert_eq!(response["success"], true, "{response}");
    response["value"].clone()
}

const TRACE_A: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const TRACE_B: &str = "0af7651916cd43dd8448eb211c80319c";
const TRACE_C: &str = "5c0f1d4a8e2b3c7d9f1e2a3b4c5d6e7f";
const CALLER_SPAN: &str = "00f067aa0ba902b7";

/// The `otc.call` span of trace `trace` and its one `otc.upstream` child.
fn call_and_upstream(spans: &[Span], trace: &str) -> (Span, Span) {
    let of_trace: Vec<&Span> = spans.iter().filter(|s| s.trace == trace).collect();
    let [call, upstream] = of_trace.as_slice() else {
        panic!("expected otc.call and otc.upstream in trace {trace}, got {of_trace:#?}");
    };
    let (call, upstream) = if call.name == "otc.call" {
        (call, upstream)
    } else {
        (upstream, call)
    };
    assert_eq!(call.name, "otc.call");
    assert_eq!(upstream.name, "otc.upstream");
    assert_eq!(
        upstream.parent, call.id,
        "otc.upstream is the child of otc.call"
    );
    assert_eq!(
        (call.kind, upstream.kind),
        (2, 3),
        "server and client spans"
    );
    ((*call).clone(), (*upstream).clone())
}

#[tokio::test]
async fn calls_are_traced_over_otlp_and_the_context_reaches_upstreams() {
    let (endpoint, spans) = receiver().await;
    let upstream = upstream().await;
    let (bridge, url) = bridge(
        &upstream,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint),
            ("OTEL_SERVICE_NAME", "bridge-under-test"),
        ],
    )
    .await;
    let openapi_tool = tool_id(&url, "Traced.").await;
    let mcp_tool = tool_id(&url, "ExampleMcpServer.Trace").await;

    // OpenAPI, the caller's `traceparent` header (its `trace_id` is not W3C and is ignored).
    let seen_by_openapi = call(
        &url,
        json!({"tool_id": openapi_tool, "call_id": "call-a", "trace_id": "req-1"}),
        &[("traceparent", &format!("00-{TRACE_A}-{CALLER_SPAN}-01"))],
    )
    .await;
    // MCP, the header with a `tracestate`, which is passed on.
    let seen_by_mcp = call(
        &url,
        json!({"tool_id": mcp_tool}),
        &[
            ("traceparent", &format!("00-{TRACE_B}-{CALLER_SPAN}-01")),
            ("tracestate", "vendor=1"),
        ],
    )
    .await;
    // No header: the request's `trace_id`, a W3C traceparent, is the parent.
    let from_trace_id = call(
        &url,
        json!({"tool_id": openapi_tool, "trace_id": format!("00-{TRACE_C}-{CALLER_SPAN}-01")}),
        &[],
    )
    .await;
    bridge.interrupt().await;
    let spans = spans.lock().unwrap().clone();

    let (call_a, upstream_a) = call_and_upstream(&spans, TRACE_A);
    assert_eq!(
        call_a.parent, CALLER_SPAN,
        "the caller's span is the parent"
    );
    assert_eq!(call_a.service, "bridge-under-test");
    assert_eq!(call_a.attributes["otc.tool.id"], openapi_tool);
    assert_eq!(call_a.attributes["otc.tool.version"], "1.0.0");
    assert_eq!(call_a.attributes["otc.call_id"], "call-a");
    assert_eq!(call_a.attributes["otc.outcome"], "success");
    assert_eq!(upstream_a.attributes["otc.upstream.kind"], "openapi");
    assert_eq!(
        seen_by_openapi["traceparent"],
        format!("00-{TRACE_A}-{}-01", upstream_a.id),
        "the upstream's parent is the bridge's upstream span"
    );

    let (call_b, upstream_b) = call_and_upstream(&spans, TRACE_B);
    assert_eq!(call_b.parent, CALLER_SPAN);
    assert_eq!(call_b.attributes["otc.tool.id"], mcp_tool);
    assert!(!call_b.attributes["otc.call_id"].is_empty());
    assert_eq!(upstream_b.attributes["otc.upstream.kind"], "mcp");
    assert_eq!(
        seen_by_mcp["traceparent"],
        format!("00-{TRACE_B}-{}-01", upstream_b.id),
        "in `_meta`"
    );
    assert_eq!(seen_by_mcp["tracestate"], "vendor=1");

    let (call_c, upstream_c) = call_and_upstream(&spans, TRACE_C);
    assert_eq!(call_c.parent, CALLER_SPAN);
    assert_eq!(
        from_trace_id["traceparent"],
        format!("00-{TRACE_C}-{}-01", upstream_c.id)
    );
}

#[tokio::test]
async fn refusals_are_traced_without_an_upstream_span() {
    let (endpoint, spans) = receiver().await;
    let upstream = upstream().await;
    let (bridge, url) = bridge(&upstream, &[("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)]).await;
    let status = reqwest::Client::new()
        .post(format!("{url}/tools/call"))
        .header("traceparent", format!("00-{TRACE_A}-{CALLER_SPAN}-01"))
        .json(&json!({"tool_id": "Nope.Nothing"}))
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, 400);
    bridge.interrupt().await;
    let spans = spans.lock().unwrap().clone();
    let [call] = spans.as_slice() else {
        panic!("expected one span, got {spans:#?}");
    };
    assert_eq!(
        (call.name.as_str(), call.trace.as_str()),
        ("otc.call", TRACE_A)
    );
    assert_eq!(call.service, "otc-bridge", "the default service name");
    assert_eq!(call.attributes["otc.outcome"], "refused");
    assert_eq!(call.attributes["otc.refusal.status"], "400");
}

#[tokio::test]
async fn traces_off_export_nothing_and_send_no_trace_context() {
    let (endpoint, spans) = receiver().await;
    let upstream = upstream().await;
    // An endpoint, but the SDK switched off: as if no variable were set.
    let (bridge, url) = bridge(
        &upstream,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint),
            ("OTEL_SDK_DISABLED", "true"),
        ],
    )
    .await;
    let openapi_tool = tool_id(&url, "Traced.").await;
    let mcp_tool = tool_id(&url, "ExampleMcpServer.Trace").await;
    let traceparent = format!("00-{TRACE_A}-{CALLER_SPAN}-01");
    for tool in [openapi_tool, mcp_tool] {
        let seen = call(
            &url,
            json!({"tool_id": tool}),
            &[("traceparent", &traceparent)],
        )
        .await;
        assert_eq!(seen["traceparent"], Value::Null, "{tool}: {seen}");
    }
    bridge.interrupt().await;
    assert!(spans.lock().unwrap().is_empty());
}

/// Issue 25, item 8: caller text is cut before it is queued for export (a 400 KB `call_id`
/// would otherwise be held whole by a collector that is slow to take it), and a `tracestate`
/// outside W3C's characters (a CR/LF from MCP `_meta`) never reaches an upstream.
#[tokio::test]
async fn caller_text_in_spans_is_cut_and_a_tracestate_with_control_characters_is_dropped() {
    let (endpoint, spans) = receiver().await;
    let upstream = upstream().await;
    let (bridge, url) = bridge(&upstream, &[("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)]).await;
    let openapi_tool = tool_id(&url, "Traced.").await;
    let mcp_tool = tool_id(&url, "ExampleMcpServer.Trace").await;

    let long_id = "x".repeat(400 * 1024);
    call(
        &url,
        json!({"tool_id": openapi_tool, "call_id": long_id}),
        &[("traceparent", &format!("00-{TRACE_A}-{CALLER_SPAN}-01"))],
    )
    .await;

    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "call_tool",
        "arguments": {"path": mcp_tool, "arguments": {}},
        "_meta": {
            "traceparent": format!("00-{TRACE_B}-{CALLER_SPAN}-01"),
            "tracestate": "vendor=1\r\nx-injected: yes",
        },
    }});
    let reply = otc_tests::http::post_mcp(&url, &body).await;
    let seen = &reply["result"]["structuredContent"];
    assert_eq!(reply["result"]["isError"], false, "{reply}");
    assert!(
        seen["traceparent"]
            .as_str()
            .is_some_and(|t| t.contains(TRACE_B)),
        "the caller's traceparent still counts: {reply}"
    );
    assert!(
        seen["tracestate"].is_null(),
        "a tracestate with CR/LF reached the upstream: {reply}"
    );
    bridge.interrupt().await;

    let spans = spans.lock().unwrap().clone();
    let (call_a, _) = call_and_upstream(&spans, TRACE_A);
    let exported = &call_a.attributes["otc.call_id"];
    assert!(exported.len() < 200, "{} bytes exported", exported.len());
    assert!(
        exported.ends_with(&format!("({} bytes)", long_id.len())),
        "{exported}"
    );
}

#[tokio::test]
async fn a_cache_hit_is_traced_without_an_upstream_span_and_says_so() {
    let (endpoint, spans) = receiver().await;
    let upstream = upstream().await;
    let config = super::write_config(
        "traces",
        "cache",
        &format!(
            "sources:\n  - {{type: openapi, name: traced, spec: \"{upstream}/openapi.json\", cache: {{ttl_secs: 60}}}}\n"
        ),
    );
    let mut bridge = Running::spawn(
        &[
            "--listen",
            "127.0.0.1:0",
            "--config",
            config.to_str().unwrap(),
        ],
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)],
    );
    let url = bridge.url().await;
    let id = tool_id(&url, "Traced.").await;
    for trace in [TRACE_A, TRACE_B] {
        call(
            &url,
            json!({"tool_id": id, "input": {}}),
            &[("traceparent", &format!("00-{trace}-{CALLER_SPAN}-01"))],
        )
        .await;
    }
    bridge.interrupt().await;
    let spans = spans.lock().unwrap().clone();
    let (missed, _) = call_and_upstream(&spans, TRACE_A);
    assert_eq!(missed.attributes["otc.cache"], "miss");
    let hit: Vec<&Span> = spans.iter().filter(|s| s.trace == TRACE_B).collect();
    let [hit] = hit.as_slice() else {
        panic!("a hit is one span, without otc.upstream: {hit:#?}");
    };
    assert_eq!(hit.name, "otc.call");
    assert_eq!(hit.attributes["otc.cache"], "hit");
    assert_eq!(hit.attributes["otc.outcome"], "success");
}
