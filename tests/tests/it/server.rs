//! Server behaviour over loopback: health, list, call, version resolution, the error classes
//! of DESIGN.md §3 and the dialects of §2. Every body is checked against the official schema of
//! its dialect when `OTC_SPEC_DIR` is set.

use std::sync::Arc;
use std::time::Duration;

use otc_adapters::fake::FakeAdapter;
use otc_adapters::{Adapter, SourceState};
use otc_bridge::ServerSettings;
use otc_mappings::otc::Dialect;
use otc_tests::bridge::TestBridge;
use otc_tests::spec::SpecDocument;
use otc_tests::tools::{definition, fixture_adapter};
use serde_json::{Value, json};

struct Answer {
    status: u16,
    headers: reqwest::header::HeaderMap,
    body: Value,
}

async fn bridge() -> TestBridge {
    TestBridge::start(
        vec![Arc::new(fixture_adapter())],
        ServerSettings::default(),
        None,
    )
    .await
}

async fn post(
    bridge: &TestBridge,
    path: &str,
    headers: &[(&str, &str)],
    body: impl Into<reqwest::Body>,
) -> Answer {
    let mut req = reqwest::Client::new()
        .post(bridge.at(path))
        .header("content-type", "application/json");
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    answer(req.body(body).send().await.unwrap()).await
}

async fn get(bridge: &TestBridge, path: &str, headers: &[(&str, &str)]) -> Answer {
    let mut req = reqwest::Client::new().get(bridge.at(path));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    answer(req.send().await.unwrap()).await
}

async fn answer(response: reqwest::Response) -> Answer {
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let bytes = response.bytes().await.unwrap();
    let body = serde_json::from_slice(&bytes)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&bytes)));
    Answer {
        status,
        headers,
        body,
    }
}

/// Calls in the wrapped OTC form and checks the answer against the dialect's schema.
async fn call(bridge: &TestBridge, schema: &str, request: Value) -> Answer {
    let dialect = Dialect::from_schema(schema).unwrap();
    let a = post(
        bridge,
        "/tools/call",
        &[],
        json!({"$schema": schema, "request": request}).to_string(),
    )
    .await;
    conform(dialect, "/tools/call", &a);
    a
}

async fn call_otc(bridge: &TestBridge, request: Value) -> Answer {
    call(bridge, "otc://1.0", request).await
}

fn conform(dialect: Dialect, path: &str, a: &Answer) {
    if let Some(spec) = SpecDocument::load(dialect) {
        let method = if path == "/tools" { "get" } else { "post" };
        spec.check_response(method, path, a.status, &a.body);
    }
}

#[tokio::test]
async fn health_is_200_when_ready_and_503_otherwise_without_auth() {
    let fake = fixture_adapter();
    let handle = fake.clone();
    let auth = otc_bridge::Authenticator::new(Some(b"secret"), &[], vec![]);
    let b = TestBridge::start(vec![Arc::new(fake)], ServerSettings::default(), Some(auth)).await;
    let a = get(&b, "/health", &[]).await;
    assert_eq!(a.status, 200);
    assert_eq!(a.body["status"], "ready");
    handle.set_state(SourceState::Restarting {
        reason: "child exited".to_owned(),
    });
    let a = get(&b, "/health", &[]).await;
    assert_eq!(a.status, 503);
    assert_eq!(a.body["sources"][0]["status"]["state"], "restarting");
    let a = get(&b, "/health", &[("OXP-Version", "1.0")]).await;
    assert_eq!(a.headers["oxp-version"], "1.0");
}

#[tokio::test]
async fn empty_list_has_an_empty_array_in_every_dialect() {
    let b = TestBridge::start(
        vec![Arc::new(FakeAdapter::new("empty"))],
        ServerSettings::default(),
        None,
    )
    .await;
    let a = get(&b, "/tools", &[]).await;
    assert_eq!(a.status, 200);
    assert_eq!(a.body, json!({"$schema": "otc://1.0", "tools": []}));
    conform(Dialect::Otc, "/tools", &a);
    let a = get(&b, "/tools", &[("OXP-Version", "1.0")]).await;
    assert_eq!(a.body, json!({"items": []}));
    conform(Dialect::OxpFlat, "/tools", &a);
}

#[tokio::test]
async fn list_shows_every_version_in_the_requested_dialect() {
    let b = bridge().await;
    let a = get(&b, "/tools", &[]).await;
    conform(Dialect::Otc, "/tools", &a);
    let ids: Vec<&str> = a.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    for id in [
        "Calculator.Add@1.0.0",
        "Calculator.Add@1.5.0",
        "Calculator.Add@2.0.1",
    ] {
        assert!(ids.contains(&id), "{ids:?}");
    }
    assert!(
        a.body["tools"][0]["input_schema"]["parameters"].is_object(),
        "OTC wraps the input schema"
    );

    // OXP main: a `$schema` in a body on GET.
    let a = answer(
        reqwest::Client::new()
            .get(b.at("/tools"))
            .body(r#"{"$schema":"urn:oxp:1.0"}"#)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(a.body["$schema"], "urn:oxp:1.0");
    assert!(
        a.body["items"][0]["input_schema"]["type"].is_string(),
        "OXP's input schema is flat"
    );
    conform(Dialect::OxpMain, "/tools", &a);

    let a = get(&b, "/tools", &[("OXP-Version", "1.0")]).await;
    assert_eq!(a.headers["oxp-version"], "1.0");
    assert!(a.body.get("$schema").is_none());
    conform(Dialect::OxpFlat, "/tools", &a);
}

#[tokio::test]
async fn version_resolution_follows_the_standard() {
    let b = bridge().await;
    let value = |a: &Answer| a.body["result"]["value"].clone();
    let input = json!({"a": 2, "b": 3});
    assert_eq!(
        value(
            &call_otc(
                &b,
                json!({"tool_id": "Calculator.Add@1.0.0", "input": input})
            )
            .await
        ),
        json!(5.0)
    );
    assert_eq!(
        value(
            &call_otc(
                &b,
                json!({"tool_id": "Calculator.Add@1.5.0", "input": input})
            )
            .await
        ),
        "1.5.0"
    );
    assert_eq!(
        value(&call_otc(&b, json!({"tool_id": "Calculator.Add@1", "input": input})).await),
        json!(5.0),
        "@1 is exactly 1.0.0"
    );
    assert_eq!(
        value(&call_otc(&b, json!({"tool_id": "Calculator.Add", "input": input})).await),
        "2.0.1",
        "no version is the latest"
    );
    let a = call_otc(&b, json!({"tool_id": "Calculator.Add@2", "input": input})).await;
    assert_eq!(a.status, 400, "@2 means 2.0.0, which is not served");
    assert!(
        a.body["message"].as_str().unwrap().contains("2.0.1"),
        "{}",
        a.body
    );
    let a = call_otc(
        &b,
        json!({"tool_id": "Calculator.Add@3.0.0", "input": input}),
    )
    .await;
    assert_eq!(a.status, 400);
}

#[tokio::test]
async fn success_echoes_call_id_or_generates_one_with_a_duration() {
    let b = bridge().await;
    let a = call_otc(
        &b,
        json!({"tool_id": "Calculator.Add@1.0.0", "call_id": "abc-1", "input": {"a": 1, "b": 2}}),
    )
    .await;
    assert_eq!(a.status, 200);
    assert_eq!(a.body["$schema"], "otc://1.0");
    assert_eq!(a.body["result"]["call_id"], "abc-1");
    assert_eq!(a.body["result"]["success"], true);
    assert!(a.body["result"]["duration"].as_f64().unwrap() >= 0.0);
    let a = call_otc(
        &b,
        json!({"tool_id": "Calculator.Add@1.0.0", "input": {"a": 1, "b": 2}}),
    )
    .await;
    let generated = a.body["result"]["call_id"].as_str().unwrap();
    assert_eq!(generated.len(), 36, "a UUID: {generated}");
    // A tool that returns nothing (output_schema null) answers `value: null`.
    let a = call_otc(
        &b,
        json!({"tool_id": "Doorbell.Ring", "input": {"doorbell_id": "doorbell1"}}),
    )
    .await;
    assert_eq!(a.body["result"]["value"], Value::Null);
}

#[tokio::test]
async fn unknown_tools_and_bad_ids_are_400() {
    let b = bridge().await;
    let a = call_otc(&b, json!({"tool_id": "Calculator.Subtract"})).await;
    assert_eq!(a.status, 400);
    assert!(
        a.body["message"]
            .as_str()
            .unwrap()
            .contains("Calculator.Subtract")
    );
    let a = call_otc(&b, json!({"tool_id": "calculator.add"})).await;
    assert!(
        a.body["message"]
            .as_str()
            .unwrap()
            .contains("Did you mean 'Calculator.Add'"),
        "{}",
        a.body
    );
    for bad in [
        "Calculator",
        "Calculator.Add@latest",
        "Calculator.Add@1.0",
        "Calc-ulator.Add",
    ] {
        let a = call_otc(&b, json!({"tool_id": bad})).await;
        assert_eq!(a.status, 400, "{bad}");
        assert!(
            a.body["message"].as_str().unwrap().contains(bad),
            "{bad}: {}",
            a.body
        );
    }
}

#[tokio::test]
async fn malformed_bodies_are_400_with_a_reason() {
    let b = bridge().await;
    let a = post(&b, "/tools/call", &[], "{not json").await;
    assert_eq!(a.status, 400);
    assert!(
        a.body["message"].as_str().unwrap().contains("line 1"),
        "{}",
        a.body
    );
    conform(Dialect::Otc, "/tools/call", &a);
    let a = post(&b, "/tools/call", &[], r#"{"$schema":"otc://1.0"}"#).await;
    assert_eq!(a.status, 400, "missing request");
    let a = call_otc(&b, json!({"input": {}})).await;
    assert_eq!(a.status, 400, "missing tool_id");
    assert!(a.body["message"].as_str().unwrap().contains("tool_id"));
    let a = post(
        &b,
        "/tools/call",
        &[],
        r#"{"request":{"tool_id":"Calculator.Add","context":{"secrets":"nope"}}}"#,
    )
    .await;
    assert_eq!(a.status, 400, "wrong type inside request");
    let a = post(&b, "/tools/call", &[], "[]").await;
    assert_eq!(a.status, 400);
    let a = post(&b, "/tools/call", &[], "").await;
    assert_eq!(a.status, 400);
}

#[tokio::test]
async fn another_major_version_is_400() {
    let b = bridge().await;
    for schema in [
        "otc://2.0",
        "urn:oxp:2.0",
        "https://github.com/OpenToolCalling/Specification/tree/main/spec/http/2.0/openapi.json",
    ] {
        let body = json!({"$schema": schema, "request": {"tool_id": "Calculator.Add", "input": {"a": 1, "b": 1}}});
        let a = post(&b, "/tools/call", &[], body.to_string()).await;
        assert_eq!(a.status, 400, "{schema}");
        assert!(
            a.body["message"]
                .as_str()
                .unwrap()
                .to_lowercase()
                .contains("unsupported protocol version"),
            "{}",
            a.body
        );
    }
    let a = post(
        &b,
        "/tools/call",
        &[("OXP-Version", "2.0")],
        json!({"tool_id": "Calculator.Add"}).to_string(),
    )
    .await;
    assert_eq!(a.status, 400);
    assert_eq!(a.headers["oxp-version"], "1.0");
}

#[tokio::test]
async fn bodies_over_the_limit_are_400_not_a_dropped_connection() {
    let settings = ServerSettings {
        max_body_bytes: 1024,
        ..ServerSettings::default()
    };
    let b = TestBridge::start(vec![Arc::new(fixture_adapter())], settings, None).await;
    let big =
        json!({"request": {"tool_id": "System.Echo@1.0.0", "input": {"x": "y".repeat(4096)}}})
            .to_string();
    let a = post(&b, "/tools/call", &[], big.clone()).await;
    assert_eq!(a.status, 400);
    assert!(
        a.body["message"].as_str().unwrap().contains("1024 bytes"),
        "{}",
        a.body
    );
    conform(Dialect::Otc, "/tools/call", &a);
    // Without a Content-Length (chunked), the limit still holds.
    let stream = futures_stream(big.as_bytes());
    let a = post(&b, "/tools/call", &[], reqwest::Body::wrap_stream(stream)).await;
    assert_eq!(a.status, 400);
}

fn futures_stream(
    bytes: &[u8],
) -> impl futures::Stream<Item = Result<Vec<u8>, std::io::Error>> + Send + 'static {
    futures::stream::iter(
        bytes
            .chunks(512)
            .map(|c| Ok(c.to_vec()))
            .collect::<Vec<_>>(),
    )
}

#[tokio::test]
async fn invalid_input_is_422_with_parameter_errors() {
    let b = bridge().await;
    for schema in ["otc://1.0", "urn:oxp:1.0"] {
        let a = call(
            &b,
            schema,
            json!({"tool_id": "Calculator.Add@1.0.0", "input": {"a": "ten"}}),
        )
        .await;
        assert_eq!(a.status, 422);
        assert_eq!(a.body["$schema"], schema);
        let errors = a.body["parameter_errors"].as_object().unwrap();
        assert!(
            errors["a"].as_str().unwrap().contains("number"),
            "{errors:?}"
        );
        assert_eq!(errors["b"], "is required");
    }
    let a = call_otc(
        &b,
        json!({"tool_id": "Calculator.Add@1.0.0", "input": [1, 2]}),
    )
    .await;
    assert_eq!(a.status, 422);
    assert!(a.body["parameter_errors"]["input"].is_string());
}

#[tokio::test]
async fn tool_failures_are_200_with_retry_hints() {
    let b = bridge().await;
    let a = call_otc(
        &b,
        json!({"tool_id": "Doorbell.Ring", "call_id": "c1", "input": {"doorbell_id": "nope"}}),
    )
    .await;
    assert_eq!(a.status, 200);
    let r = &a.body["result"];
    assert_eq!(r["success"], false);
    assert_eq!(r["call_id"], "c1");
    assert_eq!(r["error"]["can_retry"], true);
    assert_eq!(r["error"]["retry_after_ms"], 1500);
    assert!(r.get("value").is_none());
    let a = call_otc(&b, json!({"tool_id": "System.Fail"})).await;
    let e = &a.body["result"]["error"];
    assert_eq!(e["message"], "Doorbell ID not found");
    assert_eq!(e["can_retry"], false);
    assert!(
        e["developer_message"]
            .as_str()
            .unwrap()
            .contains("Doorbell ID not found")
    );
}

#[tokio::test]
async fn calls_past_the_timeout_fail_as_retryable_tool_errors() {
    let settings = ServerSettings {
        call_timeout: Duration::from_millis(200),
        ..ServerSettings::default()
    };
    let b = TestBridge::start(vec![Arc::new(fixture_adapter())], settings, None).await;
    let a = call_otc(&b, json!({"tool_id": "System.Sleep"})).await;
    assert_eq!(a.status, 200);
    assert_eq!(a.body["result"]["error"]["can_retry"], true);
    assert!(
        a.body["result"]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("in time")
    );
}

#[tokio::test]
async fn calls_to_a_source_known_down_are_400_temporarily_unavailable() {
    let fake = fixture_adapter();
    let handle = fake.clone();
    let b = TestBridge::start(vec![Arc::new(fake)], ServerSettings::default(), None).await;
    handle.set_state(SourceState::Restarting {
        reason: "child exited".to_owned(),
    });
    let a = call_otc(&b, json!({"tool_id": "System.Echo"})).await;
    assert_eq!(a.status, 400);
    assert!(
        a.body["message"]
            .as_str()
            .unwrap()
            .contains("temporarily unavailable")
    );
}

#[tokio::test]
async fn missing_context_requirements_are_400() {
    let b = bridge().await;
    // OXP: with missing_requirements.
    let a = call(
        &b,
        "urn:oxp:1.0",
        json!({"tool_id": "Gmail.GetEmails", "input": {}}),
    )
    .await;
    assert_eq!(a.status, 400);
    let missing = &a.body["missing_requirements"];
    assert_eq!(missing["authorization"][0]["id"], "google");
    assert_eq!(
        missing["authorization"][0]["url"],
        "https://accounts.example.com/o/oauth2/auth"
    );
    assert_eq!(missing["user_id"], true);
    let a = call(
        &b,
        "urn:oxp:1.0",
        json!({"tool_id": "SMS.Send", "input": {"to": "+1"}}),
    )
    .await;
    assert_eq!(a.status, 400);
    assert_eq!(
        a.body["missing_requirements"]["secrets"][0]["id"],
        "twilio_key"
    );
    assert!(a.body["message"].as_str().unwrap().contains("twilio_key"));
    // OTC 1.0 has no missing_requirements: the message says it.
    let a = call_otc(&b, json!({"tool_id": "SMS.Send", "input": {"to": "+1"}})).await;
    assert_eq!(a.status, 400);
    assert!(a.body.get("missing_requirements").is_none());
    // Provided: the call goes through and the adapter sees the context.
    let ctx = json!({"authorization": [{"id": "google", "token": "t0k"}], "user_id": "u1"});
    let a = call_otc(
        &b,
        json!({"tool_id": "Gmail.GetEmails", "input": {}, "context": ctx}),
    )
    .await;
    assert_eq!(a.body["result"]["value"]["token_seen"], true);
    assert_eq!(a.body["result"]["value"]["user"], "u1");
    let ctx = json!({"secrets": [{"id": "twilio_key", "value": "s3cret"}]});
    let a = call_otc(
        &b,
        json!({"tool_id": "SMS.Send", "input": {"to": "+1"}, "context": ctx}),
    )
    .await;
    assert_eq!(a.body["result"]["value"]["secret_seen"], true);
}

#[tokio::test]
async fn every_dialect_is_detected_and_answered_in_kind() {
    let b = bridge().await;
    let input = json!({"a": 1, "b": 2});
    // OXP flat: a bare body; answered bare with the OXP-Version header.
    let a = post(
        &b,
        "/tools/call",
        &[],
        json!({"tool_id": "Calculator.Add@1.0.0", "input": input}).to_string(),
    )
    .await;
    assert_eq!(a.status, 200);
    assert_eq!(a.body["success"], true);
    assert_eq!(a.headers["oxp-version"], "1.0");
    conform(Dialect::OxpFlat, "/tools/call", &a);
    // The header alone marks the flat dialect too, also on errors.
    let a = post(
        &b,
        "/tools/call",
        &[("OXP-Version", "1.0")],
        json!({"tool_id": "Nope.Nope"}).to_string(),
    )
    .await;
    assert_eq!(a.status, 400);
    assert_eq!(a.headers["oxp-version"], "1.0");
    assert!(a.body.get("$schema").is_none());
    conform(Dialect::OxpFlat, "/tools/call", &a);
    let a = post(
        &b,
        "/tools/call",
        &[],
        json!({"tool_id": "Calculator.Add@1.0.0", "input": {"a": "x"}}).to_string(),
    )
    .await;
    assert_eq!(a.status, 422);
    conform(Dialect::OxpFlat, "/tools/call", &a);
    // RFC draft: accepted (execution_id too), answered as OTC 1.0, and `/call` is an alias.
    let rfc =
        "https://github.com/ArcadeAI/OpenToolCalling/tree/main/specification/http/1.0/openapi.json";
    let body = json!({"$schema": rfc, "request": {"execution_id": "e1", "tool_id": "Calculator.Add@1.0.0", "input": input}});
    let a = post(&b, "/call", &[], body.to_string()).await;
    assert_eq!(a.status, 200);
    assert_eq!(a.body["$schema"], "otc://1.0");
    assert_eq!(a.body["result"]["call_id"], "e1");
    conform(Dialect::Otc, "/tools/call", &a);
    // No $schema: the server's default (OTC).
    let a = post(
        &b,
        "/tools/call",
        &[],
        json!({"request": {"tool_id": "Calculator.Add@1.0.0", "input": input}}).to_string(),
    )
    .await;
    assert_eq!(a.body["$schema"], "otc://1.0");
    // OXP main, with the server default set to OXP.
    let settings = ServerSettings {
        default_dialect: Dialect::OxpMain,
        ..ServerSettings::default()
    };
    let b = TestBridge::start(vec![Arc::new(fixture_adapter())], settings, None).await;
    let a = post(
        &b,
        "/tools/call",
        &[],
        json!({"request": {"tool_id": "Calculator.Add@1.0.0", "input": input}}).to_string(),
    )
    .await;
    assert_eq!(a.body["$schema"], "urn:oxp:1.0");
    conform(Dialect::OxpMain, "/tools/call", &a);
    let a = get(&b, "/tools", &[]).await;
    assert!(a.body["items"].is_array());
}

#[tokio::test]
async fn unknown_paths_are_json_404() {
    let b = bridge().await;
    let a = get(&b, "/nope", &[]).await;
    assert_eq!(a.status, 404);
    assert!(a.body["message"].as_str().unwrap().contains("/tools/call"));
}

#[tokio::test]
async fn graceful_shutdown_lets_in_flight_calls_finish() {
    let fake = FakeAdapter::new("slow").slow_tool(
        otc_tests::tools::definition("Slow", "Op", (1, 0, 0), json!({"type": "object"})),
        Duration::from_millis(300),
        |_| Ok(json!("done")),
    );
    let b = TestBridge::start(
        vec![Arc::new(fake.clone()) as Arc<dyn Adapter>],
        ServerSettings::default(),
        None,
    )
    .await;
    let url = b.at("/tools/call");
    let in_flight = tokio::spawn(async move {
        reqwest::Client::new()
            .post(url)
            .header("content-type", "application/json")
            .body(r#"{"request":{"tool_id":"Slow.Op"}}"#)
            .send()
            .await
            .unwrap()
            .json::<Value>()
            .await
            .unwrap()
    });
    // Wait until the call is in the tool (not merely sent), then stop the server.
    tokio::time::timeout(Duration::from_secs(10), async {
        while fake.calls_started() == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .unwrap();
    b.stop().await;
    let body = tokio::time::timeout(Duration::from_secs(5), in_flight)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(body["result"]["value"], "done");
}

#[tokio::test]
async fn issue_9_a_large_list_is_streamed_and_a_client_leaving_mid_list_stops_it() {
    use futures::StreamExt as _;

    // 3,000 tools of about 1 KB each: a list of several MB, many chunks.
    let mut adapter = FakeAdapter::new("many");
    for n in 0..3000 {
        let mut tool = definition(
            "Many",
            &format!("Tool{n}"),
            (1, 0, 0),
            json!({"type": "object"}),
        );
        tool.description = format!("Tool {n}. {}", "A long description. ".repeat(50));
        adapter = adapter.tool(tool, |_| Ok(json!(null)));
    }
    let b = TestBridge::start(vec![Arc::new(adapter)], ServerSettings::default(), None).await;

    let list = reqwest::Client::new()
        .get(b.at("/tools"))
        .send()
        .await
        .unwrap();
    assert_eq!(list.status(), 200);
    assert!(
        list.headers().get("content-length").is_none(),
        "streamed, not written whole first"
    );
    let mut chunks = 0;
    let mut body = Vec::new();
    let mut stream = list.bytes_stream();
    while let Some(chunk) = stream.next().await {
        body.extend_from_slice(&chunk.unwrap());
        chunks += 1;
    }
    let list: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(list["tools"].as_array().unwrap().len(), 3000);
    assert!(
        body.len() > 3_000_000 && chunks > 1,
        "{} bytes in {chunks} chunk(s)",
        body.len()
    );

    // Clients that read a little and leave: the writers stop, and the server goes on answering.
    for _ in 0..8 {
        let list = reqwest::Client::new()
            .get(b.at("/tools"))
            .send()
            .await
            .unwrap();
        let mut stream = list.bytes_stream();
        let _ = stream.next().await;
    }
    let health = reqwest::get(b.at("/health")).await.unwrap();
    assert_eq!(health.status(), 200);
    b.stop().await;
}

#[tokio::test]
async fn issue_9_the_list_is_gzip_compressed_when_the_client_accepts_it() {
    use std::io::Read as _;

    let b = bridge().await;
    for (headers, key) in [(&[][..], "tools"), (&[("OXP-Version", "1.0")][..], "items")] {
        let plain = reqwest::Client::new()
            .get(b.at("/tools"))
            .headers(header_map(headers))
            .send()
            .await
            .unwrap();
        assert_eq!(plain.headers()["vary"], "accept-encoding");
        assert!(plain.headers().get("content-encoding").is_none());
        let plain = plain.bytes().await.unwrap();

        let mut accepting = header_map(headers);
        accepting.insert("accept-encoding", "br;q=1, gzip;q=0.8".parse().unwrap());
        let compressed = reqwest::Client::new()
            .get(b.at("/tools"))
            .headers(accepting)
            .send()
            .await
            .unwrap();
        assert_eq!(compressed.headers()["content-encoding"], "gzip");
        assert_eq!(compressed.headers()["vary"], "accept-encoding");
        let gzipped = compressed.bytes().await.unwrap();
        let mut unzipped = Vec::new();
        flate2::read::GzDecoder::new(&gzipped[..])
            .read_to_end(&mut unzipped)
            .unwrap();
        assert_eq!(unzipped, plain, "the gzip body is the same list");
        let list: Value = serde_json::from_slice(&unzipped).unwrap();
        assert!(!list[key].as_array().unwrap().is_empty());

        // `gzip;q=0` refuses it.
        let mut refusing = header_map(headers);
        refusing.insert("accept-encoding", "gzip;q=0, identity".parse().unwrap());
        let a = reqwest::Client::new()
            .get(b.at("/tools"))
            .headers(refusing)
            .send()
            .await
            .unwrap();
        assert!(a.headers().get("content-encoding").is_none());
        assert_eq!(a.bytes().await.unwrap(), plain);
    }
}

fn header_map(headers: &[(&str, &str)]) -> reqwest::header::HeaderMap {
    headers
        .iter()
        .map(|(k, v)| {
            (
                reqwest::header::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            )
        })
        .collect()
}

/// Validators are compiled on a tool's first call: a schema that does not compile is found
/// then, and refused as the operator's fault (400, not retryable), not as the caller's.
#[tokio::test]
async fn issue_9_a_tool_whose_schema_does_not_compile_is_refused_at_its_call() {
    let broken = otc_tests::tools::definition(
        "Broken",
        "Match",
        (1, 0, 0),
        json!({"type": "object", "properties": {"x": {"type": "string", "pattern": "(unclosed"}}}),
    );
    let adapter = FakeAdapter::new("broken").tool(broken, |_| Ok(json!("called")));
    let b = TestBridge::start(vec![Arc::new(adapter)], ServerSettings::default(), None).await;
    let a = call_otc(&b, json!({"tool_id": "Broken.Match", "input": {"x": "y"}})).await;
    assert_eq!(a.status, 400, "{}", a.body);
    let message = a.body["message"].as_str().unwrap();
    assert!(message.contains("retrying will not help"), "{message}");
    let developer = a.body["developer_message"].as_str().unwrap();
    assert!(
        developer.contains("input schema of Broken.Match@1.0.0 is not a valid JSON Schema"),
        "{developer}"
    );
}
