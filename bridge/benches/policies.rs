//! What a policy decision costs (issue 26: < 5 µs at p50 with 100 rules, 10 of them with CEL
//! conditions), and the call path with those policies on against off.
//!
//! The rules are the worst case of their count: the 90 plain ones name other callers, groups and
//! toolkits (each is checked and passed over), the 10 conditional ones apply to the tool and
//! their conditions are evaluated and do not hold, and only the last rule allows.
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

fn catalog() -> Catalog {
    let version = ToolVersion::new(1, 0, 0);
    let add = ToolDefinition {
        id: ToolId::exact("Calculator", "Add", version),
        name: "Calculator_Add".to_owned(),
        description: "Adds two numbers.".to_owned(),
        version,
        input_schema: json!({
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"]
        })
        .into(),
        output_schema: None,
        requirements: None,
    };
    let adapter = FakeAdapter::new("bench").tool(add, |call| {
        let n = |k| {
            call.input
                .get(k)
                .and_then(Value::as_f64)
                .unwrap_or_default()
        };
        Ok(json!(n("a") + n("b")))
    });
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
    c.bench_function("see a tool: 100 rules", |b| {
        b.iter(|| policies.sees(&caller, entry));
    });
}

fn call_path(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let key = "bench-key-0123456789".to_owned();
    let router = |policies: Policies| {
        let settings = ServerSettings {
            policies: Arc::new(policies),
            ..ServerSettings::default()
        };
        let auth = Authenticator::new(None, &[], Vec::new()).with_key(
            Some("bench-bot".to_owned()),
            key.clone(),
            vec!["bench".to_owned()],
        );
        app(AppState::new(
            SharedCatalog::new(catalog()),
            settings,
            Some(auth),
        ))
    };
    let body = r#"{"request":{"tool_id":"Calculator.Add@1.0.0","input":{"a":10,"b":5}}}"#;
    for (name, router) in [
        ("call with policies off", router(Policies::default())),
        ("call with 100 policies", router(hundred_rules())),
    ] {
        c.bench_function(name, |b| {
            b.iter(|| {
                runtime.block_on(async {
                    let request = Request::post("/tools/call")
                        .header("content-type", "application/json")
                        .header("x-api-key", &key)
                        .body(Body::from(body))
                        .unwrap();
                    let response = router.clone().oneshot(request).await.unwrap();
                    assert_eq!(response.status(), 200);
                    to_bytes(response.into_body(), usize::MAX).await.unwrap()
                })
            });
        });
    }
}

criterion_group!(benches, decision, call_path);
criterion_main!(benches);
