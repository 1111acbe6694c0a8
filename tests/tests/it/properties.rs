//! Property tests of the edge (issue 8): whatever a caller sends to `POST /tools/call` or
//! `GET /tools` — arbitrary bytes, arbitrary JSON, near-valid envelopes in every dialect, odd
//! headers — the router never panics and answers in one of the standard's shapes.
//!
//! And of what the bridge reads from disk (issue 25): whatever a file holds — arbitrary bytes,
//! YAML and JSON built from the tokens that make structure, deep nesting, alias expansion — the
//! one reader and the one parser never panic, never hang, and what they accept stays within the
//! bounds (nesting depth, the alias budget).
//!
//! The number of cases is bounded for the test command (`PROPTEST_CASES` raises it;
//! `bench/properties.sh` runs a long session).

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use otc_bridge::{AppState, ServerSettings, SharedCatalog, app};
use otc_tests::tools::fixture_adapter;
use proptest::prelude::*;
use serde_json::{Value, json};
use tower::ServiceExt as _;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(192),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn state() -> AppState {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let adapters: Vec<Arc<dyn otc_adapters::Adapter>> = vec![Arc::new(fixture_adapter())];
    let (catalog, _) = runtime.block_on(otc_bridge::load_catalog(&adapters));
    AppState::new(SharedCatalog::new(catalog), ServerSettings::default(), None)
}

/// Sends one request and checks the answer's shape; returns the status.
fn exchange(state: &AppState, request: Request<Body>) -> Result<u16, TestCaseError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (status, bytes) = runtime.block_on(async {
        let response = app(state.clone()).oneshot(request).await.unwrap();
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        (status, bytes)
    });
    let allowed = [200, 400, 401, 403, 404, 405, 415, 422];
    prop_assert!(
        allowed.contains(&status.as_u16()),
        "unexpected status {status}"
    );
    if status == StatusCode::METHOD_NOT_ALLOWED {
        return Ok(405);
    }
    let body: Value = serde_json::from_slice(&bytes)
        .map_err(|e| TestCaseError::fail(format!("{status}: body is not JSON: {e}")))?;
    // Wrapped dialects put the call result under `result`.
    let inner = body.get("result").unwrap_or(&body);
    match status.as_u16() {
        200 if inner.get("call_id").is_some() => {
            prop_assert!(inner["success"].is_boolean(), "{body}");
            if inner["success"] == false {
                prop_assert!(inner["error"]["message"].is_string(), "{body}");
            }
        }
        200 => prop_assert!(
            body.get("tools").or_else(|| body.get("items")).is_some(),
            "{body}"
        ),
        422 => prop_assert!(body["parameter_errors"].is_object(), "{body}"),
        _ => prop_assert!(body["message"].is_string(), "{body}"),
    }
    Ok(status.as_u16())
}

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        ".{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
            prop::collection::btree_map(".{0,8}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn tool_id() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("Calculator.Add".to_owned()),
        Just("Calculator.Add@1".to_owned()),
        Just("Calculator.Add@2.0.1".to_owned()),
        Just("System.Echo".to_owned()),
        Just("System.Fail".to_owned()),
        Just("SMS.Send".to_owned()),
        "[A-Za-z0-9_.@-]{0,24}",
        ".{0,24}",
    ]
}

fn schema() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        Just(None),
        Just(Some(json!("otc://1.0"))),
        Just(Some(json!("urn:oxp:1.0"))),
        Just(Some(json!("urn:oxp:2.0"))),
        Just(Some(json!(
            "https://github.com/ArcadeAI/OpenToolCalling/specification/http/1.0/openapi.json"
        ))),
        any_json().prop_map(Some),
    ]
}

/// Envelopes close to valid ones, so the strategy reaches the deep parts of the pipeline.
fn envelope() -> impl Strategy<Value = Value> {
    (
        schema(),
        tool_id(),
        any_json(),
        prop::option::of(any_json()),
        any::<bool>(),
    )
        .prop_map(|(schema, tool_id, input, context, flat)| {
            let request =
                json!({"tool_id": tool_id, "input": input, "context": context, "call_id": "c"});
            let mut body = if flat {
                request
            } else {
                json!({"request": request})
            };
            if let Some(schema) = schema {
                body["$schema"] = schema;
            }
            body
        })
}

fn content_type() -> impl Strategy<Value = Option<&'static str>> {
    prop_oneof![
        4 => Just(Some("application/json")),
        1 => Just(Some("application/problem+json; charset=utf-8")),
        1 => Just(Some("text/plain")),
        1 => Just(None),
    ]
}

fn oxp_version() -> impl Strategy<Value = Option<&'static str>> {
    prop_oneof![
        4 => Just(None),
        1 => Just(Some("1.0")),
        1 => Just(Some("2.0")),
        1 => Just(Some("garbage")),
    ]
}

fn post(
    body: Vec<u8>,
    content_type: Option<&str>,
    oxp_version: Option<&str>,
    path: &str,
) -> Request<Body> {
    let mut request = Request::post(path);
    if let Some(ct) = content_type {
        request = request.header("content-type", ct);
    }
    if let Some(v) = oxp_version {
        request = request.header("oxp-version", v);
    }
    request.body(Body::from(body)).unwrap()
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn issue_8_arbitrary_bytes_never_panic(
        body in prop::collection::vec(any::<u8>(), 0..256),
        ct in content_type(),
        version in oxp_version(),
    ) {
        let state = state();
        exchange(&state, post(body, ct, version, "/tools/call"))?;
    }

    #[test]
    fn issue_8_arbitrary_json_and_envelopes_get_standard_shapes(
        body in prop_oneof![any_json(), envelope()],
        ct in content_type(),
        version in oxp_version(),
        path in prop_oneof![Just("/tools/call"), Just("/call"), Just("/tools")],
    ) {
        let state = state();
        let bytes = serde_json::to_vec(&body).unwrap();
        let request = if path == "/tools" {
            let mut r = Request::get(path);
            if let Some(v) = version {
                r = r.header("oxp-version", v);
            }
            r.body(Body::from(bytes)).unwrap()
        } else {
            post(bytes, ct, version, path)
        };
        exchange(&state, request)?;
    }
}

/// YAML and JSON made of the tokens that build structure (and break it).
fn structured_text() -> impl Strategy<Value = Vec<u8>> {
    let token = prop::sample::select(vec![
        "[",
        "]",
        "{",
        "}",
        ",",
        "- ",
        "? ",
        ": ",
        "\n",
        "  ",
        "&a ",
        "*a",
        "\"",
        "'",
        "|\n",
        ">-\n",
        "# c\n",
        "// c\n",
        "x",
        "1",
        "<<: ",
        "!t ",
        "---\n",
        "\\",
        "\r",
        "\t",
        "mcpServers: ",
        "sources: ",
        "lockfile: ",
        "{\"tools\": ",
        "\u{feff}",
    ]);
    prop::collection::vec(token, 0..400).prop_map(|tokens| tokens.concat().into_bytes())
}

/// Nesting around the parsers' own limit (128) and the scan's (150), in each shape.
fn nested_text() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::sample::select(vec!["[", "{a: ", "- ", "{\"a\": ", "? "]),
        0usize..400,
        any::<bool>(),
    )
        .prop_map(|(open, levels, indented)| {
            let mut text = String::from("sources:\n");
            for level in 0..levels {
                if indented && open == "- " {
                    text.push_str(&format!("{}- \n", " ".repeat(level)));
                } else {
                    text.push_str(open);
                }
            }
            text.push('x');
            text.into_bytes()
        })
}

/// An anchor of `items` items replayed `aliases` times (up to 640,000 nodes, past the budget).
fn aliases_text() -> impl Strategy<Value = Vec<u8>> {
    (0usize..800, 0usize..800).prop_map(|(items, aliases)| {
        format!(
            "sources:\n  - &a [{}]\n  - [{}]\n",
            vec!["x"; items].join(","),
            vec!["*a"; aliases].join(",")
        )
        .into_bytes()
    })
}

/// How many nodes, and how deep, a value is.
fn size_and_depth(value: &Value) -> (usize, usize) {
    let children: Vec<&Value> = match value {
        Value::Array(items) => items.iter().collect(),
        Value::Object(map) => map.values().collect(),
        _ => return (1, 1),
    };
    children.into_iter().fold((1, 1), |(size, depth), child| {
        let (s, d) = size_and_depth(child);
        (size + s, depth.max(d + 1))
    })
}

/// Reads `bytes` as every kind of file the bridge reads, on a thread under a deadline (a hang
/// fails the case instead of the run).
fn read_as_every_file(bytes: &[u8]) -> Result<(), TestCaseError> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static CASE: AtomicUsize = AtomicUsize::new(0);
    static DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    let dir = DIR.get_or_init(|| otc_tests::scratch::dir("issue25-props"));
    let path = dir.join(format!(
        "case-{}.yaml",
        CASE.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&path, bytes).unwrap();
    let (done, finished) = std::sync::mpsc::channel();
    let reading = path.clone();
    std::thread::spawn(move || {
        let checked = (|| -> Result<(), String> {
            let text =
                match otc_adapters::file::read_text(&reading, otc_adapters::file::MAX_CONFIG_BYTES)
                {
                    Ok(text) => text,
                    // Not UTF-8: nothing else reads it.
                    Err(otc_adapters::file::FileError::NotText) => return Ok(()),
                    Err(other) => return Err(format!("a regular file was not read: {other}")),
                };
            if let Ok(value) = otc_mappings::text::parse_value(&text) {
                let (size, depth) = size_and_depth(&value);
                if size > text.len() + 200_000 {
                    return Err(format!("{size} nodes from {} bytes", text.len()));
                }
                if depth > otc_mappings::text::MAX_DEPTH {
                    return Err(format!("{depth} levels deep"));
                }
            }
            let _ = otc_bridge::FileConfig::load(&reading);
            let _ = otc_bridge::Lockfile::load(&reading);
            let _ = otc_bridge::host_import::read(&text, &reading);
            Ok(())
        })();
        let _ = done.send(checked);
    });
    let outcome = finished.recv_timeout(std::time::Duration::from_secs(60));
    let _ = std::fs::remove_file(&path);
    match outcome {
        Ok(Ok(())) => Ok(()),
        Ok(Err(unbounded)) => Err(TestCaseError::fail(unbounded)),
        // The sender was dropped: the thread panicked.
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            Err(TestCaseError::fail("reading the file panicked"))
        }
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Err(TestCaseError::fail(
            "reading the file did not end within 60 s",
        )),
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn issue_25_any_file_is_read_without_panic_and_within_bounds(
        bytes in prop_oneof![
            prop::collection::vec(any::<u8>(), 0..2048),
            structured_text(),
            nested_text(),
            aliases_text(),
        ],
    ) {
        read_as_every_file(&bytes)?;
    }
}
