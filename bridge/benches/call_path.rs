//! Per-call overhead of the server with the in-memory test adapter: body parse, dialect
//! detection, id resolution, requirements and input validation, the (instant) adapter call,
//! and response serialisation — everything the bridge adds, without a network.
//!
//! The same call with the tool transformed (an argument renamed, one fixed) and its result
//! projected with jq, against the plain call in the same run (issue 27: < 10 µs added).
//!
//! A cache hit (the calculator's answers kept: `cache: {ttl_secs}`), from memory and, when
//! `BENCH_REDIS_URL` names a Redis, from Redis (issue 27: < 100 µs and < 400 µs at the median).
//!
//! Run: `cargo bench -p otc-bridge --bench call_path`
//! (`BENCH_REDIS_URL=redis://127.0.0.1:6379 …` for the Redis case).
#![allow(clippy::unwrap_used)] // A benchmark fixture: failing loudly is the point.

use std::sync::Arc;

use axum::body::{Body, to_bytes};
use axum::http::Request;
use criterion::{Criterion, criterion_group, criterion_main};
use otc_adapters::fake::FakeAdapter;
use otc_bridge::{
    AppState, CacheStoreConfig, Catalog, ResultCache, ServerSettings, SharedCatalog, SourceOptions,
    SourceTools, app,
};
use tower::ServiceExt;

#[path = "support/calculator.rs"]
mod support;
use support::calculator;

/// The bridge's router over the calculator, its source compiled with `options` (YAML).
fn router(runtime: &tokio::runtime::Runtime, options: &str) -> axum::Router {
    router_with(runtime, calculator(), options, ServerSettings::default())
}

/// [`router`] over `adapter`, with `settings`.
fn router_with(
    runtime: &tokio::runtime::Runtime,
    adapter: FakeAdapter,
    options: &str,
    settings: ServerSettings,
) -> axum::Router {
    runtime.block_on(async {
        let adapter: Arc<dyn otc_adapters::Adapter> = Arc::new(adapter);
        let mapped = adapter.list_tools().await.unwrap();
        let options: SourceOptions = serde_yaml::from_str(options).unwrap();
        let policy = Arc::new(options.compile("bench").unwrap());
        let mut diagnostics = Vec::new();
        let source = SourceTools::compile(adapter, policy, mapped.tools, &mut diagnostics);
        app(AppState::new(
            SharedCatalog::new(Catalog::new(vec![source])),
            settings,
            None,
        ))
    })
}

/// One `POST /tools/call` of `body`: a 200 whose body holds `expected`.
async fn call(router: &axum::Router, body: &'static str, expected: &str) -> bytes::Bytes {
    let request = Request::post("/tools/call")
        .header("content-type", "application/json")
        .body(Body::from(body))
        .unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), 200);
    let bytes = to_bytes(response.into_body(), usize::MAX).await.unwrap();
    assert!(
        bytes
            .windows(expected.len())
            .any(|w| w == expected.as_bytes()),
        "{}",
        String::from_utf8_lossy(&bytes)
    );
    bytes
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let router = router(&runtime, "{}");
    let body = r#"{"$schema":"otc://1.0","request":{"call_id":"123e4567-e89b-12d3-a456-426614174000","tool_id":"Calculator.Add@1.0.0","input":{"a":10,"b":5}}}"#;
    c.bench_function("call Calculator.Add (success)", |b| {
        b.iter(|| runtime.block_on(call(&router, body, "15")))
    });
    let invalid = r#"{"request":{"tool_id":"Calculator.Add","input":{"a":"ten"}}}"#;
    c.bench_function("call Calculator.Add (422)", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let request = Request::post("/tools/call")
                    .body(Body::from(invalid))
                    .unwrap();
                let response = router.clone().oneshot(request).await.unwrap();
                to_bytes(response.into_body(), usize::MAX).await.unwrap()
            })
        });
    });
    c.bench_function("list tools", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let response = router
                    .clone()
                    .oneshot(Request::get("/tools").body(Body::empty()).unwrap())
                    .await
                    .unwrap();
                to_bytes(response.into_body(), usize::MAX).await.unwrap()
            })
        });
    });
}

/// The same call, transformed and projected: `a` renamed `x`, `b` fixed, the sum projected
/// into an object.
fn shaped(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let plain = router(&runtime, "{}");
    let shaped = router(
        &runtime,
        "overrides: {Add: {arguments: {a: {rename: x}, b: {fixed: 5}}, results: {jq: '{sum: .}'}}}",
    );
    let plain_body = r#"{"request":{"tool_id":"Calculator.Add","input":{"a":10,"b":5}}}"#;
    let shaped_body = r#"{"request":{"tool_id":"Calculator.Add","input":{"x":10}}}"#;
    c.bench_function("call Calculator.Add, plain", |b| {
        b.iter(|| runtime.block_on(call(&plain, plain_body, "15")))
    });
    c.bench_function(
        "call Calculator.Add, transformed and projected with jq",
        |b| b.iter(|| runtime.block_on(call(&shaped, shaped_body, r#"{"sum":15"#))),
    );
}

/// A call answered from the cache, against the plain call in the same run.
fn cached(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let body = r#"{"request":{"tool_id":"Calculator.Add","input":{"a":10,"b":5}}}"#;
    let plain = router(&runtime, "{}");
    c.bench_function("call Calculator.Add, uncached", |b| {
        b.iter(|| runtime.block_on(call(&plain, body, "15")))
    });
    let config = CacheStoreConfig::default();
    let mut stores = vec![("memory", ResultCache::in_memory(&config))];
    match std::env::var("BENCH_REDIS_URL") {
        Ok(url) => stores.push((
            "Redis",
            runtime
                .block_on(ResultCache::in_redis(&url, &config))
                .unwrap(),
        )),
        Err(_) => eprintln!("BENCH_REDIS_URL is not set: the Redis case is not measured"),
    }
    for (name, store) in stores {
        let settings = ServerSettings {
            cache: Some(Arc::new(store)),
            ..ServerSettings::default()
        };
        // Read-only, so that its answers are kept; its counter tells that they were.
        let calculator = calculator().read_only();
        let router = router_with(
            &runtime,
            calculator.clone(),
            "cache: {ttl_secs: 3600}",
            settings,
        );
        c.bench_function(&format!("call Calculator.Add, a cache hit ({name})"), |b| {
            b.iter(|| runtime.block_on(call(&router, body, "15")))
        });
        assert!(
            calculator.calls_started() <= 1,
            "every call but the first is a hit"
        );
    }
}

criterion_group!(benches, bench, shaped, cached);
criterion_main!(benches);
