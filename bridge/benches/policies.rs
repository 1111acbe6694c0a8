//! What a policy decision costs (issue 26: < 5 µs at p50 with 100 rules, 10 of them with CEL
//! conditions), and the call path with those policies on against off.
//!
//! The rules are the worst case of their count: the 90 plain ones name other callers, groups and
//! toolkits (each is checked and passed over), the 10 conditional ones apply to the tool and
//! their conditions are evaluated and do not hold, and only the last rule allows.
//!
//! The call path is also measured under the README's five example rules (one condition, which
//! holds), as a configuration is usually written.
//!
//! Also `search_tools` over 10,000 tools for a caller who sees a tenth of them, against one who
//! sees them all (issue 26: within 10 %).
//!
//! Run: `cargo bench -p otc-bridge --bench policies`.
#![allow(clippy::unwrap_used)] // A benchmark fixture: failing loudly is the point.

use std::fmt::Write as _;
use std::sync::Arc;

use axum::body::{Body, to_bytes};
use axum::http::Request;
use criterion::{Criterion, criterion_group, criterion_main};
use otc_adapters::fake::FakeAdapter;
use otc_bridge::{
    AppState, Authenticator, Caller, Catalog, Policies, PolicyConfig, ServerSettings,
    SharedCatalog, SourceTools, app,
};
use otc_mappings::otc::{ToolDefinition, ToolId, ToolVersion};
use serde_json::{Map, Value, json};
use tower::ServiceExt;

#[path = "support/calculator.rs"]
mod support;
use support::calculator;

/// 100 rules: 90 that do not apply, 10 conditions that are evaluated and fail, one allow.
fn hundred_rules() -> Policies {
    let mut yaml = String::new();
    for i in 0..90 {
        let _ = match i % 3 {
            0 => writeln!(yaml, "- {{effect: allow, callers: [\"agent-{i}-*\"]}}"),
            1 => writeln!(
                yaml,
                "- {{effect: deny, groups: [team{i}], toolkits: [Kit{i}]}}"
            ),
            _ => writeln!(yaml, "- {{effect: allow, tools: [\"Other{i}.*@^2\"]}}"),
        };
    }
    for i in 0..10 {
        let _ = writeln!(
            yaml,
            "- {{effect: allow, tools: [\"Calculator.*\"], when: 'input.a > {} && caller.name != \"x\"', reason: too small}}",
            1000 + i
        );
    }
    yaml.push_str("- {effect: allow, groups: [bench], tools: [\"Calculator.Add@^1\"]}\n");
    let configs: Vec<PolicyConfig> = serde_yaml::from_str(&yaml).unwrap();
    assert_eq!(configs.len(), 101);
    Policies::compile(&configs, None).unwrap()
}

/// The README's example policies (`examples/config/policies.yaml`) over the calculator: the
/// call is allowed by the fourth rule, once its CEL condition is evaluated and holds.
fn five_rules() -> Policies {
    let configs: Vec<PolicyConfig> = serde_yaml::from_str(
        r#"
- { name: ops-everything, effect: allow, groups: [ops] }
- { name: nothing-destructive, effect: deny, destructive: true }
- { name: bench-echo, effect: allow, groups: [bench], tools: ["Other.Echo@>=1"] }
- name: bench-sums
  effect: allow
  groups: [bench]
  tools: ["Calculator.*"]
  when: '!has(input.a) || input.a < 1000'
  reason: sums stay small
- { name: readers, effect: allow, claims: { scope: "tools:read" } }
"#,
    )
    .unwrap();
    Policies::compile(&configs, None).unwrap()
}

fn catalog() -> Catalog {
    // An addition changes nothing (and so passes the README's `nothing-destructive`).
    let adapter = calculator().read_only();
    let adapter: Arc<dyn otc_adapters::Adapter> = Arc::new(adapter);
    let mapped = futures::executor::block_on(adapter.list_tools()).unwrap();
    let source = SourceTools::compile(adapter, Arc::default(), mapped.tools, &mut Vec::new());
    Catalog::new(vec![source])
}

fn decision(c: &mut Criterion) {
    let policies = hundred_rules();
    let catalog = catalog();
    let entry = &catalog.entries()[0];
    let caller = Caller::named("bench-bot").with_groups(["bench"]);
    let input: Map<String, Value> = json!({"a": 10, "b": 5}).as_object().cloned().unwrap();
    assert!(matches!(
        policies.decide(&caller, entry, &input),
        otc_bridge::Verdict::Allowed(Some(100))
    ));
    c.bench_function(
        "decide a call: 100 rules, 10 CEL conditions evaluated",
        |b| {
            b.iter(|| policies.decide(&caller, entry, &input));
        },
    );
    let five = five_rules();
    // Also a call as agents make them: a dozen arguments, of which the condition reads one.
    let wide: Map<String, Value> = json!({
        "a": 10, "b": 5, "owner": "acme", "repo": "bridge", "state": "open", "per_page": 30,
        "page": 2, "sort": "created", "direction": "desc", "labels": ["bug", "p1"],
        "since": "2026-01-01T00:00:00Z", "draft": false
    })
    .as_object()
    .cloned()
    .unwrap();
    for (name, input) in [
        (
            "decide a call: the README's 5 rules, 1 CEL condition",
            &input,
        ),
        (
            "decide a call: the README's 5 rules, 1 CEL condition, 12 arguments",
            &wide,
        ),
    ] {
        assert_eq!(
            five.decide(&caller, entry, input),
            otc_bridge::Verdict::Allowed(Some(3))
        );
        c.bench_function(name, |b| {
            b.iter(|| five.decide(&caller, entry, input));
        });
    }
    c.bench_function("see a tool: 100 rules", |b| {
        b.iter(|| policies.sees(&caller, entry));
    });
}

const BENCH_KEY: &str = "bench-key-0123456789";

/// The bridge's router over `catalog` with `settings`, one API key (`bench-bot`, group `bench`).
fn router(catalog: SharedCatalog, settings: ServerSettings) -> axum::Router {
    let auth = Authenticator::new(None, &[], Vec::new()).with_key(
        Some("bench-bot".to_owned()),
        BENCH_KEY.to_owned(),
        vec!["bench".to_owned()],
    );
    app(AppState::new(catalog, settings, Some(auth)))
}

/// Benchmarks one `POST /tools/call` of `Calculator.Add` through `router`, answered 200.
fn bench_call(
    c: &mut Criterion,
    runtime: &tokio::runtime::Runtime,
    name: &str,
    router: &axum::Router,
) {
    c.bench_function(name, |b| {
        b.iter(|| runtime.block_on(add(router)));
    });
}

/// One `POST /tools/call` of `Calculator.Add` through `router`, answered 200.
async fn add(router: &axum::Router) -> axum::body::Bytes {
    let body = r#"{"request":{"tool_id":"Calculator.Add@1.0.0","input":{"a":10,"b":5}}}"#;
    let request = Request::post("/tools/call")
        .header("content-type", "application/json")
        .header("x-api-key", BENCH_KEY)
        .body(Body::from(body))
        .unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), 200);
    to_bytes(response.into_body(), usize::MAX).await.unwrap()
}

/// The router over the calculator under `policies`.
fn with_policies(policies: Policies) -> axum::Router {
    let settings = ServerSettings {
        policies: Arc::new(policies),
        ..ServerSettings::default()
    };
    router(SharedCatalog::new(catalog()), settings)
}

fn call_path(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for (name, router) in [
        ("call with policies off", with_policies(Policies::default())),
        (
            "call with the README's 5 policies",
            with_policies(five_rules()),
        ),
        ("call with 100 policies", with_policies(hundred_rules())),
    ] {
        bench_call(c, &runtime, name, &router);
    }
}

/// What the README's five policies add to a call, as the ratio of the two routers' times measured
/// in alternation (criterion's two figures above are taken a few seconds apart, and on a shared
/// machine those seconds differ by more than the 10 % issue 26 allows): 201 rounds of 1,000
/// calls on each, the order swapped every round; the median and quartiles of the rounds'
/// ratios. Printed, not a criterion figure; runs with no filter or one naming it
/// (`cargo bench -p otc-bridge --bench policies -- alternated`).
#[allow(clippy::print_stdout)] // The figure is the point; criterion prints its own alike.
fn alternated_overhead(_: &mut Criterion) {
    // Many short rounds: a slow second on a shared machine then moves a few rounds' ratios,
    // not the median (41 rounds of 2,000 calls gave medians from +5 % to +14 % in one hour).
    const ROUNDS: usize = 201;
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    if !filters.is_empty() && !filters.iter().any(|f| f.contains("alternated")) {
        return;
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (off, on) = (
        with_policies(Policies::default()),
        with_policies(five_rules()),
    );
    let calls = |router: &axum::Router, n: usize| {
        let started = std::time::Instant::now();
        for _ in 0..n {
            runtime.block_on(add(router));
        }
        started.elapsed().as_secs_f64()
    };
    calls(&off, 20_000);
    calls(&on, 20_000);
    let mut ratios: Vec<f64> = (0..ROUNDS)
        .map(|round| {
            let (off, on) = if round % 2 == 0 {
                let off = calls(&off, 1_000);
                (off, calls(&on, 1_000))
            } else {
                let on = calls(&on, 1_000);
                (calls(&off, 1_000), on)
            };
            on / off
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    let at = |q: usize| (ratios[q] - 1.0) * 100.0;
    println!(
        "the README's 5 policies on a call, alternated with none: {:+.1} % (median of {ROUNDS} rounds; quartiles {:+.1} % .. {:+.1} %)",
        at(ROUNDS / 2),
        at(ROUNDS / 4),
        at(3 * ROUNDS / 4)
    );
}

/// 10,000 tools in 100 toolkits, from a small vocabulary, so a query reaches thousands of them.
fn big_catalog() -> Catalog {
    const OBJECTS: [&str; 10] = [
        "Issue",
        "Invoice",
        "Repository",
        "Customer",
        "Order",
        "File",
        "Message",
        "Ticket",
        "Payment",
        "Report",
    ];
    const ACTIONS: [&str; 10] = [
        "List", "Get", "Create", "Update", "Delete", "Search", "Archive", "Export", "Import",
        "Share",
    ];
    let mut adapter = FakeAdapter::new("big");
    for kit in 0..100 {
        for (o, object) in OBJECTS.iter().enumerate() {
            for (a, action) in ACTIONS.iter().enumerate() {
                let version = ToolVersion::new(1, 0, 0);
                let tool = format!("{action}{object}{o}{a}");
                let definition = ToolDefinition {
                    id: ToolId::exact(format!("Kit{kit}"), tool.clone(), version),
                    name: format!("Kit{kit}_{tool}"),
                    description: format!(
                        "{action} the {object} records of workspace {kit}, with filters and paging."
                    ),
                    version,
                    input_schema:
                        json!({"type": "object", "properties": {"id": {"type": "string"}}}).into(),
                    output_schema: None,
                    requirements: None,
                };
                adapter = adapter.tool(definition, |_| Ok(json!(null)));
            }
        }
    }
    let adapter: Arc<dyn otc_adapters::Adapter> = Arc::new(adapter);
    let mapped = futures::executor::block_on(adapter.list_tools()).unwrap();
    let source = SourceTools::compile(adapter, Arc::default(), mapped.tools, &mut Vec::new());
    Catalog::new(vec![source])
}

/// `search_tools` on `POST /mcp` over 10,000 tools: a caller who sees everything (no policies)
/// against one whose policies let it see a tenth of them (10 toolkits of 100).
fn restricted_search(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // Ten toolkits of the hundred.
    let kits: Vec<String> = (0..10).map(|k| format!("Kit{}", k * 10)).collect();
    let a_tenth: Vec<PolicyConfig> = serde_yaml::from_str(&format!(
        "- {{effect: allow, groups: [bench], toolkits: [{}]}}",
        kits.join(", ")
    ))
    .unwrap();
    let catalog = SharedCatalog::new(big_catalog());
    let with = |policies: Policies| {
        let settings = ServerSettings {
            policies: Arc::new(policies),
            ..ServerSettings::default()
        };
        router(catalog.clone(), settings)
    };
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "search_tools", "arguments": {"query": "export the invoice records", "limit": 10}}})
    .to_string();
    for (name, router) in [
        (
            "search_tools over 10,000 tools, every tool visible",
            with(Policies::default()),
        ),
        (
            "search_tools over 10,000 tools, a tenth visible",
            with(Policies::compile(&a_tenth, None).unwrap()),
        ),
    ] {
        c.bench_function(name, |b| {
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
                    let status = response.status();
                    let bytes = to_bytes(response.into_body(), usize::MAX).await.unwrap();
                    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&bytes));
                    assert!(bytes.windows(6).any(|w| w == b"Export"), "no result");
                    bytes
                })
            });
        });
    }
}

/// A `redis-server` from the project's install (scripts/install-redis.sh, under
/// `$OTC_CORPUS_DIR`) on a free loopback port, or `None` when it is not installed.
fn redis_server() -> Option<(std::process::Child, String)> {
    let server = std::path::PathBuf::from(std::env::var_os("OTC_CORPUS_DIR")?)
        .join("redis/bin/redis-server");
    if !server.is_file() {
        return None;
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .ok()?
        .local_addr()
        .ok()?
        .port();
    let child = std::process::Command::new(server)
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .ok()?;
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Some((child, format!("redis://127.0.0.1:{port}")));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    None
}

/// A call under a per-caller rate limit it never reaches: counted in memory, or in a real
/// Redis on loopback (one Lua script per call) as replicas share it, against no limit at all.
fn limited_call_path(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let config: otc_bridge::RateLimitsConfig = serde_json::from_value(json!({
        "rules": [{"name": "per-caller", "rate": "1000000/second", "per": "caller"}]
    }))
    .unwrap();
    let with = |limits: otc_bridge::Limits| {
        let settings = ServerSettings {
            limits: Arc::new(limits),
            ..ServerSettings::default()
        };
        router(SharedCatalog::new(catalog()), settings)
    };
    let mut routers = vec![
        (
            "call with no rate limit",
            with(otc_bridge::Limits::compile(&Default::default(), None, None).unwrap()),
        ),
        (
            "call with a rate limit in memory",
            with(otc_bridge::Limits::compile(&config, None, None).unwrap()),
        ),
    ];
    let redis = redis_server();
    match &redis {
        Some((_, url)) => {
            let connection = runtime.block_on(async {
                redis::Client::open(url.as_str())
                    .unwrap()
                    .get_connection_manager()
                    .await
                    .unwrap()
            });
            // What any command costs on this machine's loopback: the floor under the shared
            // limit's figure.
            let mut ping = connection.clone();
            c.bench_function("redis PING round trip (the floor)", |b| {
                b.iter(|| {
                    runtime.block_on(async {
                        redis::cmd("PING")
                            .query_async::<String>(&mut ping)
                            .await
                            .unwrap()
                    })
                });
            });
            routers.push((
                "call with a rate limit shared through Redis",
                with(otc_bridge::Limits::compile(&config, None, Some(connection)).unwrap()),
            ));
        }
        None => eprintln!(
            "redis-server is not installed under $OTC_CORPUS_DIR (scripts/install-redis.sh): \
             the Redis case is not measured"
        ),
    }
    for (name, router) in routers {
        bench_call(c, &runtime, name, &router);
    }
    if let Some((mut child, _)) = redis {
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// The same call with the audit trail on (a hash-chained file in a temporary directory)
/// against off, in the same run (issue 26: < 3 % fewer calls/s at c=64 on the MCP echo
/// benchmark, where the bridge spends about 50 µs of CPU per call: about 1.5 µs here).
fn audited_call_path(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = std::env::temp_dir().join(format!("otc-bench-audit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config: otc_bridge::AuditConfig =
        serde_json::from_value(json!({"file": dir.join("trail.jsonl")})).unwrap();
    let trail = Arc::new(otc_bridge::AuditTrail::open(&config, Vec::new()).unwrap());
    let mut audited = ServerSettings::default();
    audited.telemetry.audit = Some(Arc::clone(&trail));
    for (name, settings) in [
        ("call with the audit trail off", ServerSettings::default()),
        ("call with the audit trail on", audited),
    ] {
        bench_call(
            c,
            &runtime,
            name,
            &router(SharedCatalog::new(catalog()), settings),
        );
    }
    trail.close();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(
    benches,
    decision,
    call_path,
    alternated_overhead,
    restricted_search,
    limited_call_path,
    audited_call_path
);
criterion_main!(benches);
