//! The HTTP edge against hostile callers (issue 8): web pages (415, Origin, Host), disclosure in
//! `/health` and 400s, numbers that would change in transit, echoed ids, forged log lines,
//! configuration faults at call time, and concurrent catalog refreshes. Requests go through the
//! real router (`app(state).oneshot`), as a server would hand them over.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use otc_adapters::fake::FakeAdapter;
use otc_adapters::{Adapter, AdapterError, SourceState, ToolCall};
use otc_bridge::{AppState, Authenticator, ServerSettings, SharedCatalog, app};
use otc_mappings::{Mapped, MappedTool, Target};
use otc_tests::tools::{definition, fixture_adapter};
use serde_json::{Value, json};
use tokio::sync::watch;
use tower::ServiceExt as _;

const LISTEN: &str = "127.0.0.1:8080";

async fn state_with(adapters: Vec<Arc<dyn Adapter>>, settings: ServerSettings) -> AppState {
    let (catalog, _) = otc_bridge::load_catalog(&adapters).await;
    AppState::new(SharedCatalog::new(catalog), settings, None)
}

fn loopback_settings() -> ServerSettings {
    ServerSettings {
        listen: Some(LISTEN.parse().unwrap()),
        allowed_origins: vec!["https://app.example.com".to_owned()],
        ..Default::default()
    }
}

async fn fixture_state() -> AppState {
    state_with(vec![Arc::new(fixture_adapter())], loopback_settings()).await
}

struct Answer {
    status: StatusCode,
    headers: axum::http::HeaderMap,
    body: Value,
}

async fn send(state: &AppState, request: Request<Body>) -> Answer {
    let response = app(state.clone()).oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    let body = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes).unwrap()
    };
    Answer {
        status,
        headers,
        body,
    }
}

fn call() -> axum::http::request::Builder {
    Request::post("/tools/call")
        .header("host", LISTEN)
        .header("content-type", "application/json")
}

fn add_call() -> &'static str {
    r#"{"request":{"tool_id":"Calculator.Add@1.0.0","input":{"a":1,"b":2}}}"#
}

#[tokio::test]
async fn issue_8_bodies_not_declared_json_are_415() {
    let state = fixture_state().await;
    for content_type in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        None,
    ] {
        let mut request = Request::post("/tools/call").header("host", LISTEN);
        if let Some(ct) = content_type {
            request = request.header("content-type", ct);
        }
        let a = send(&state, request.body(Body::from(add_call())).unwrap()).await;
        assert_eq!(a.status, 415, "{content_type:?}: {}", a.body);
        assert!(a.body["message"].as_str().unwrap().contains("JSON"));
    }
    for ok in [
        "application/json",
        "application/json; charset=utf-8",
        "application/otc+json",
    ] {
        let request = Request::post("/tools/call")
            .header("host", LISTEN)
            .header("content-type", ok);
        let a = send(&state, request.body(Body::from(add_call())).unwrap()).await;
        assert_eq!(a.status, 200, "{ok}: {}", a.body);
    }
}

#[tokio::test]
async fn issue_8_cross_site_origins_are_403_and_allowed_ones_get_cors() {
    let state = fixture_state().await;
    let with_origin = |origin: &str| {
        call()
            .header("origin", origin)
            .body(Body::from(add_call()))
            .unwrap()
    };
    let a = send(&state, with_origin("https://evil.example")).await;
    assert_eq!(a.status, 403, "{}", a.body);
    assert!(a.body["message"].is_string());
    let a = send(&state, with_origin("null")).await;
    assert_eq!(a.status, 403);
    // The bridge's own origin (a page it serves one day) and an allowed one pass.
    let a = send(&state, with_origin("http://127.0.0.1:8080")).await;
    assert_eq!(a.status, 200, "{}", a.body);
    let a = send(&state, with_origin("https://app.example.com")).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(
        a.headers["access-control-allow-origin"],
        "https://app.example.com"
    );
    // The browser's preflight for a JSON POST from the allowed origin is answered.
    let preflight = Request::options("/tools/call")
        .header("host", LISTEN)
        .header("origin", "https://app.example.com")
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "content-type")
        .body(Body::empty())
        .unwrap();
    let a = send(&state, preflight).await;
    assert!(a.status.is_success(), "{}", a.status);
    assert_eq!(
        a.headers["access-control-allow-origin"],
        "https://app.example.com"
    );
}

#[tokio::test]
async fn issue_8_foreign_host_on_loopback_is_403() {
    let state = fixture_state().await;
    // A DNS-rebinding page: same-origin to itself, but its Host names the attacker's domain.
    let request = Request::post("/tools/call")
        .header("host", "rebind.evil.example:8080")
        .header("origin", "http://rebind.evil.example:8080")
        .header("content-type", "application/json")
        .body(Body::from(add_call()))
        .unwrap();
    let a = send(&state, request).await;
    assert_eq!(a.status, 403, "{}", a.body);
    let request = Request::get("/tools")
        .header("host", "rebind.evil.example:8080")
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&state, request).await.status, 403);
    let request = Request::get("/tools")
        .header("host", "localhost:8080")
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&state, request).await.status, 200);
}

fn restarting(fake: &FakeAdapter) {
    fake.set_state(SourceState::Restarting {
        reason: "restart failed: cannot start `srv --token hunter2` in /home/op/secret-dir"
            .to_owned(),
    });
}

#[tokio::test]
async fn issue_8_health_and_400s_do_not_disclose_reasons_to_anonymous_callers() {
    let fake = fixture_adapter();
    restarting(&fake);
    let state = state_with(vec![Arc::new(fake.clone())], loopback_settings()).await;
    let health = Request::get("/health")
        .header("host", LISTEN)
        .body(Body::empty())
        .unwrap();
    let a = send(&state, health).await;
    assert_eq!(a.status, 503);
    assert_eq!(a.body["sources"][0]["status"]["state"], "restarting");
    let text = a.body.to_string();
    assert!(
        !text.contains("hunter2") && !text.contains("secret-dir"),
        "{text}"
    );

    let a = send(&state, call().body(Body::from(add_call())).unwrap()).await;
    assert_eq!(a.status, 400);
    let text = a.body.to_string();
    assert!(text.contains("temporarily unavailable"), "{text}");
    assert!(
        !text.contains("hunter2") && !text.contains("secret-dir"),
        "{text}"
    );
    assert!(!text.contains("Restarting {"), "no Debug output: {text}");

    // A caller that authenticates is trusted with the reason.
    let auth = Authenticator::new(None, &[], vec!["k".repeat(40)]);
    let (catalog, _) = otc_bridge::load_catalog(&[Arc::new(fake) as Arc<dyn Adapter>]).await;
    let state = AppState::new(SharedCatalog::new(catalog), loopback_settings(), Some(auth));
    let health = |key: &str| {
        Request::get("/health")
            .header("host", LISTEN)
            .header("x-api-key", key)
            .body(Body::empty())
            .unwrap()
    };
    let a = send(&state, health(&"k".repeat(40))).await;
    assert!(a.body.to_string().contains("hunter2"));
    let a = send(&state, health("wrong")).await;
    assert!(!a.body.to_string().contains("hunter2"));
}

#[tokio::test]
async fn issue_8_numbers_that_cannot_be_kept_exact_are_422() {
    let state = fixture_state().await;
    for (input, param) in [
        (r#"{"a":18446744073709551617,"b":1}"#, "a"),
        (r#"{"a":1,"b":1e-400}"#, "b"),
        (
            r#"{"a":-9223372036854775809.0e0,"b":[1,{"deep":123456789012345678901234567890}]}"#,
            "b",
        ),
    ] {
        let body = format!(r#"{{"request":{{"tool_id":"Calculator.Add@1.0.0","input":{input}}}}}"#);
        let a = send(&state, call().body(Body::from(body.clone())).unwrap()).await;
        assert_eq!(a.status, 422, "{input}: {}", a.body);
        let message = a.body["parameter_errors"][param].as_str().unwrap();
        assert!(
            message.contains("cannot be represented exactly"),
            "{message}"
        );
    }
    // Ordinary decimals and 64-bit integers go through unchanged.
    let body = r#"{"tool_id":"System.Echo","input":{"big":18446744073709551615,"neg":-9223372036854775808,"x":0.1}}"#;
    let a = send(&state, call().body(Body::from(body)).unwrap()).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(
        a.body["value"]["big"],
        json!(18_446_744_073_709_551_615_u64)
    );
    assert_eq!(a.body["value"]["x"], json!(0.1));
}

#[tokio::test]
async fn issue_8_a_huge_tool_id_is_not_echoed_in_full() {
    let state = fixture_state().await;
    let body = format!(r#"{{"tool_id":"Kit.{}"}}"#, "A".repeat(100_000));
    let a = send(&state, call().body(Body::from(body.clone())).unwrap()).await;
    assert_eq!(a.status, 400);
    let text = a.body.to_string();
    assert!(text.len() < 1_000, "{} bytes", text.len());
}

#[tokio::test]
async fn issue_8_a_configuration_fault_at_call_time_is_not_retry_later() {
    let fake = FakeAdapter::new("pets").tool(
        definition("Pets", "List", (1, 0, 0), json!({"type": "object"})),
        |_| {
            Err(AdapterError::setup(
                "security scheme 'key' names an invalid header 'X Key'",
            ))
        },
    );
    let state = state_with(vec![Arc::new(fake)], loopback_settings()).await;
    let body = r#"{"request":{"tool_id":"Pets.List"}}"#;
    let a = send(&state, call().body(Body::from(body)).unwrap()).await;
    assert_eq!(a.status, 400, "{}", a.body);
    let message = a.body["message"].as_str().unwrap();
    assert!(message.contains("retrying will not help"), "{message}");
    assert!(!message.contains("try again"), "{message}");
    assert!(
        a.body["developer_message"]
            .as_str()
            .unwrap()
            .contains("invalid header 'X Key'")
    );
}

/// A `Write` that appends to a shared buffer, for capturing log output.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn issue_8_caller_fields_cannot_forge_log_lines() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let state = fixture_state().await;
    let forged = "x\n2026-01-01T00:00:00Z  INFO forged: admin logged in";
    for body in [
        json!({"request": {"tool_id": "System.Fail", "call_id": forged}}),
        json!({"request": {"tool_id": format!("Nope.{forged}")}}),
    ] {
        let body = body.to_string();
        send(&state, call().body(Body::from(body.clone())).unwrap()).await;
    }
    let log = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    assert!(log.contains("Tool call failed."), "{log}");
    assert!(
        log.lines().any(|line| line.contains("Tool call failed.")
            && line.contains(r#"tool="System.Fail""#)
            && line.contains(r#"path="/tools/call""#)),
        "the line names the method, path and tool:\n{log}"
    );
    assert!(
        !log.lines()
            .any(|line| line.starts_with("2026-01-01T00:00:00Z")),
        "a caller-supplied newline started a log line:\n{log}"
    );
    assert!(log.contains(r"x\n2026"), "the newline is escaped:\n{log}");
}

/// An adapter whose tool list changes on demand: each `bump` replaces its one tool with a new
/// version and ticks the change channel.
#[derive(Debug)]
struct Changing {
    name: String,
    version: Mutex<u64>,
    changes: watch::Sender<u64>,
}

impl Changing {
    fn new(name: &str) -> Arc<Self> {
        Arc::new(Self {
            name: name.to_owned(),
            version: Mutex::new(1),
            changes: watch::channel(0).0,
        })
    }

    fn bump(&self) {
        *self.version.lock().unwrap() += 1;
        self.changes.send_modify(|n| *n += 1);
    }
}

#[async_trait::async_trait]
impl Adapter for Changing {
    fn name(&self) -> &str {
        &self.name
    }

    async fn list_tools(&self) -> Result<Mapped<MappedTool>, AdapterError> {
        let version = *self.version.lock().unwrap();
        // Listing takes a moment, as a real re-list does: refreshes overlap.
        tokio::task::yield_now().await;
        let definition = definition(
            &self.name,
            "Tool",
            (version, 0, 0),
            json!({"type": "object"}),
        );
        Ok(Mapped {
            tools: vec![MappedTool {
                target: Target::Named {
                    name: "tool".to_owned(),
                },
                definition: std::sync::Arc::new(definition),
                destructive: true,
                label: None,
                hidden_inputs: Vec::new(),
            }],
            diagnostics: Vec::new(),
        })
    }

    async fn call(&self, _call: ToolCall) -> Result<Value, AdapterError> {
        Ok(Value::Null)
    }

    fn catalog_changes(&self) -> Option<watch::Receiver<u64>> {
        Some(self.changes.subscribe())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn issue_8_concurrent_refreshes_keep_every_sources_tools() {
    let sources: Vec<Arc<Changing>> = (0..8).map(|i| Changing::new(&format!("Kit{i}"))).collect();
    let adapters: Vec<Arc<dyn Adapter>> = sources
        .iter()
        .map(|s| Arc::clone(s) as Arc<dyn Adapter>)
        .collect();
    let (catalog, _) = otc_bridge::load_catalog(&adapters).await;
    let catalog = SharedCatalog::new(catalog);
    otc_bridge::spawn_refreshers(&catalog);
    const ROUNDS: u64 = 30;
    for _ in 1..ROUNDS {
        for source in &sources {
            source.bump();
        }
        tokio::task::yield_now().await;
    }
    // Every source's last list must end up served, whatever order the refreshes ran in.
    let settled = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let current = catalog.current();
            let latest = current
                .definitions()
                .filter(|d| d.version.major == ROUNDS)
                .count();
            if latest == sources.len() && current.len() == sources.len() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    let current = catalog.current();
    let ids: Vec<String> = current.definitions().map(|d| d.id.to_string()).collect();
    assert!(settled.is_ok(), "some source's refresh was lost: {ids:?}");
}
