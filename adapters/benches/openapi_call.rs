//! Per-call forwarding overhead of the OpenAPI adapter: the same GET with a path and a query
//! parameter and a small JSON answer, sent (a) directly with a reqwest client and (b) through
//! `OpenApiAdapter::call` (input → request from the compiled plan → send → JSON value), both
//! over loopback to an axum upstream in the same process. The difference of the medians is
//! what the adapter adds.
//!
//! Run: `cargo bench -p otc-adapters --bench openapi_call` (or `bench/openapi/run.sh`).
#![allow(clippy::unwrap_used)] // a benchmark: any failure should stop it loudly

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, Query};
use axum::routing::get;
use criterion::{Criterion, criterion_group, criterion_main};
use otc_adapters::openapi::{OpenApiAdapter, OpenApiConfig};
use otc_adapters::{Adapter, BuildContext, ToolCall};
use otc_mappings::openapi::{ParamLocation, ParamPlan, ParamStyle, RequestPlan};
use otc_mappings::otc::{CallContext, ToolDefinition, ToolId, ToolVersion};
use otc_mappings::{Mapped, MappedTool, Target};
use serde_json::{Map, Value, json};

#[derive(serde::Deserialize)]
struct Q {
    q: String,
}

async fn item(Path(id): Path<u64>, Query(q): Query<Q>) -> axum::Json<Value> {
    axum::Json(json!({"id": id, "q": q.q, "tags": ["a", "b"]}))
}

fn param(name: &str, location: ParamLocation, style: ParamStyle) -> ParamPlan {
    ParamPlan {
        input: name.to_owned(),
        name: name.to_owned(),
        location,
        style,
        explode: style == ParamStyle::Form,
        allow_reserved: false,
        required: true,
        default: None,
    }
}

fn tool() -> MappedTool {
    let version = ToolVersion::new(1, 0, 0);
    MappedTool {
        definition: std::sync::Arc::new(ToolDefinition {
            id: ToolId::exact("Bench", "GetItem", version),
            name: "Bench_GetItem".to_owned(),
            description: "Gets an item.".to_owned(),
            version,
            input_schema: json!({"type": "object"}).into(),
            output_schema: None,
            requirements: None,
        }),
        destructive: false,
        label: None,
        target: Target::Http(Arc::new(RequestPlan {
            operation: "GET /items/{id}".to_owned(),
            method: "GET".to_owned(),
            path: "/items/{id}".to_owned(),
            server_url: None,
            params: vec![
                param("id", ParamLocation::Path, ParamStyle::Simple),
                param("q", ParamLocation::Query, ParamStyle::Form),
            ],
            body: None,
            security: Vec::new(),
            accept: vec!["application/json".to_owned()],
            operation_id: None,
            tags: Vec::new(),
        })),
        hidden_inputs: Vec::new(),
    }
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let base = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = Router::new().route("/items/{id}", get(item));
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        format!("http://{addr}")
    });

    let mut config = OpenApiConfig::new("(built from a plan)");
    config.base_url = Some(base.clone());
    let mapped = Mapped {
        tools: vec![tool()],
        diagnostics: Vec::new(),
    };
    let adapter =
        OpenApiAdapter::from_mapped("bench", &config, mapped, None, &BuildContext::default())
            .unwrap();
    let tool = Arc::new(
        runtime
            .block_on(adapter.list_tools())
            .unwrap()
            .tools
            .remove(0),
    );
    let input: Map<String, Value> = json!({"id": 42, "q": "hello world"})
        .as_object()
        .unwrap()
        .clone();

    let direct = reqwest::Client::new();
    let url = format!("{base}/items/42?q=hello%20world");
    c.bench_function("direct reqwest GET + JSON", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let response = direct
                    .get(&url)
                    .header("accept", "application/json")
                    .send()
                    .await
                    .unwrap();
                let bytes = response.bytes().await.unwrap();
                serde_json::from_slice::<Value>(&bytes).unwrap()
            })
        });
    });
    c.bench_function("OpenApiAdapter::call", |b| {
        b.iter(|| {
            runtime
                .block_on(adapter.call(ToolCall {
                    tool: Arc::clone(&tool),
                    input: input.clone(),
                    context: CallContext::default(),
                    call_id: "bench".to_owned(),
                    trace_id: None,
                    trace_context: None,
                }))
                .unwrap()
        });
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
