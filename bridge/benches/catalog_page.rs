//! The catalog page over 10,000 tools (issue 28: `GET /` rendered in < 50 ms and < 300 KB): the
//! first page of the catalog, a toolkit's page, the same for a caller who sees a tenth of the
//! tools, a search (against `search_tools` for the same words), and a tool's page; through the
//! router, as a request is served.
//!
//! Run: `cargo bench -p otc-bridge --bench catalog_page`. The size of each page is printed once.
#![allow(clippy::unwrap_used)] // A benchmark fixture: failing loudly is the point.

use std::sync::Arc;

use axum::body::{Body, to_bytes};
use axum::http::Request;
use criterion::{Criterion, criterion_group, criterion_main};
use otc_adapters::fake::FakeAdapter;
use otc_bridge::{
    AppState, Authenticator, Catalog, Policies, PolicyConfig, ServerSettings, SharedCatalog,
    SourceTools, app,
};
use otc_mappings::otc::{ToolDefinition, ToolId, ToolVersion};
use serde_json::json;
use tower::ServiceExt;

const BENCH_KEY: &str = "bench-key-0123456789";

/// 10,000 tools in 100 toolkits, each with a description of a few sentences and an input schema
/// of five parameters (one nested), as an imported REST API's tools are.
fn big_catalog() -> Catalog {
    let mut adapter = FakeAdapter::new("big");
    for kit in 0..100 {
        for i in 0..100 {
            let version = ToolVersion::new(1, 0, 0);
            let tool = format!("Operation{i}");
            let definition = ToolDefinition {
                id: ToolId::exact(format!("Kit{kit}"), tool.clone(), version),
                name: format!("Kit{kit}_{tool}"),
                description: format!(
                    "Lists the records of kind {i} in workspace {kit}, with filters and paging. \
                     Returns at most `per_page` records, newest first. Needs read access to \
                     the workspace; see the API's documentation for the fields of a record."
                ),
                version,
                input_schema: json!({
                    "type": "object",
                    "properties": {
                        "workspace": {"type": "string", "description": "The workspace's id."},
                        "state": {"type": "string", "enum": ["open", "closed", "all"], "default": "open"},
                        "per_page": {"type": "integer", "minimum": 1, "maximum": 100, "default": 30},
                        "page": {"type": "integer", "minimum": 1},
                        "filter": {"type": "object", "properties": {
                            "author": {"type": "string"}, "labels": {"type": "array", "items": {"type": "string"}}
                        }}
                    },
                    "required": ["workspace"]
                })
                .into(),
                output_schema: None,
                requirements: None,
            };
            adapter = adapter.tool(definition, |_| Ok(json!(null)));
        }
    }
    let adapter: Arc<dyn otc_adapters::Adapter> = Arc::new(adapter);
    let mapped = futures::executor::block_on(adapter.list_tools()).unwrap();
    let source = SourceTools::compile(adapter, Arc::default(), mapped.tools, &mut Vec::new());
    Catalog::new(vec![source])
}

fn router(catalog: SharedCatalog, policies: Policies) -> axum::Router {
    let auth = Authenticator::new(None, &[], Vec::new()).with_key(
        Some("bench-bot".to_owned()),
        BENCH_KEY.to_owned(),
        vec!["bench".to_owned()],
    );
    let settings = ServerSettings {
        policies: Arc::new(policies),
        ..ServerSettings::default()
    };
    app(AppState::new(catalog, settings, Some(auth)))
}

fn pages(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let catalog = SharedCatalog::new(big_catalog());
    let kits: Vec<String> = (0..10).map(|k| format!("Kit{}", k * 10)).collect();
    let a_tenth: Vec<PolicyConfig> = serde_yaml::from_str(&format!(
        "- {{effect: allow, groups: [bench], toolkits: [{}]}}",
        kits.join(", ")
    ))
    .unwrap();
    let everything = router(catalog.clone(), Policies::default());
    let restricted = router(catalog, Policies::compile(&a_tenth, None).unwrap());
    let get = |router: &axum::Router, path: &str| {
        runtime.block_on(async {
            let request = Request::get(path)
                .header("x-api-key", BENCH_KEY)
                .body(Body::empty())
                .unwrap();
            let response = router.clone().oneshot(request).await.unwrap();
            let status = response.status();
            let bytes = to_bytes(response.into_body(), usize::MAX).await.unwrap();
            assert_eq!(status, 200, "{path}: {}", String::from_utf8_lossy(&bytes));
            bytes
        })
    };
    for (name, router, path) in [
        ("GET / over 10,000 tools", &everything, "/"),
        (
            "GET /?toolkit=Kit50 over 10,000 tools",
            &everything,
            "/?toolkit=Kit50",
        ),
        (
            "GET /?page=100 over 10,000 tools",
            &everything,
            "/?page=100",
        ),
        ("GET / over 10,000 tools, a tenth visible", &restricted, "/"),
        (
            "GET /ui/search over 10,000 tools",
            &everything,
            "/ui/search?q=list+closed+records+of+a+workspace",
        ),
        (
            "GET /ui/tools/{id} over 10,000 tools",
            &everything,
            "/ui/tools/Kit42.Operation7",
        ),
    ] {
        let size = get(router, path).len();
        eprintln!("{name}: {size} bytes");
        c.bench_function(name, |b| b.iter(|| get(router, path)));
    }
}

/// The page's search against `search_tools` on `POST /mcp` for the same words: the page should
/// answer within the MCP search's time (the same index and rankers, plus the HTML).
fn search_against_search_tools(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let router = router(SharedCatalog::new(big_catalog()), Policies::default());
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "search_tools", "arguments": {"query": "list closed records of a workspace", "limit": 50}}})
    .to_string();
    c.bench_function(
        "search_tools (POST /mcp, limit 50) over 10,000 tools",
        |b| {
            b.iter(|| {
                runtime.block_on(async {
                    let request = Request::post("/mcp")
                        .header("host", "localhost")
                        .header("content-type", "application/json")
                        .header("accept", "application/json, text/event-stream")
                        .header("mcp-protocol-version", "2025-06-18")
                        .header("x-api-key", BENCH_KEY)
                        .body(Body::from(body.clone()))
                        .unwrap();
                    let response = router.clone().oneshot(request).await.unwrap();
                    assert_eq!(response.status(), 200);
                    to_bytes(response.into_body(), usize::MAX).await.unwrap()
                })
            });
        },
    );
}

criterion_group!(benches, pages, search_against_search_tools);
criterion_main!(benches);
