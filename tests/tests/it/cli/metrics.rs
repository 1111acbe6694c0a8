//! `GET /metrics` after a mix of calls, read by the official Prometheus client's text-format
//! parser (PyPI `prometheus-client`, in the venv of scripts/install-python-client.sh).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::example_server;
use otc_tests::bridge_process::Running;

/// Parses `text` with `prometheus_client.parser`; returns `name{labels}` → value per sample.
async fn parse(python: &std::path::Path, text: &str) -> BTreeMap<String, f64> {
    use tokio::io::AsyncWriteExt as _;
    let script = r#"
import json, sys
from prometheus_client.parser import text_string_to_metric_families
out = {}
for family in text_string_to_metric_families(sys.stdin.read()):
    for s in family.samples:
        labels = ",".join(f'{k}="{v}"' for k, v in sorted(s.labels.items()))
        out[f"{s.name}{{{labels}}}"] = s.value
print(json.dumps(out))
"#;
    let mut child = tokio::process::Command::new(python)
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(text.as_bytes()).await.unwrap();
    drop(stdin);
    let out = child.wait_with_output().await.unwrap();
    assert!(
        out.status.success(),
        "the Prometheus parser refused /metrics: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test]
async fn metrics_count_calls_by_outcome_and_parse_as_prometheus_text() {
    let Some(corpus) = otc_fixtures::corpus_dir() else {
        return;
    };
    let python = corpus.join("venv/bin/python");
    assert!(python.is_file(), "run scripts/install-python-client.sh");
    let mut bridge = Running::spawn(
        &[
            "--listen",
            "127.0.0.1:0",
            "--mcp",
            example_server(),
            "--api-keys-env",
            "METRICS_TEST_KEYS",
        ],
        &[("METRICS_TEST_KEYS", "k1")],
    );
    let url = bridge.url().await;
    let http = reqwest::Client::new();
    let call = |body: Value, key: Option<&'static str>| {
        let mut request = http.post(format!("{url}/tools/call")).json(&body);
        if let Some(key) = key {
            request = request.header("x-api-key", key);
        }
        async move { request.send().await.unwrap().status().as_u16() }
    };
    let echo = json!({"tool_id": "ExampleMcpServer.Echo", "input": {"message": "hi"}});
    for _ in 0..3 {
        assert_eq!(call(echo.clone(), Some("k1")).await, 200);
    }
    let divide_by_zero = json!({"tool_id": "ExampleMcpServer.Divide", "input": {"a": 1, "b": 0}});
    assert_eq!(call(divide_by_zero, Some("k1")).await, 200);
    let invalid = json!({"tool_id": "ExampleMcpServer.Echo", "input": {"message": 7}});
    assert_eq!(call(invalid, Some("k1")).await, 422);
    let unknown = json!({"tool_id": "ExampleMcpServer.Nope", "input": {}});
    assert_eq!(call(unknown, Some("k1")).await, 400);
    assert_eq!(call(echo.clone(), None).await, 401);
    let listed = http
        .get(format!("{url}/tools"))
        .header("x-api-key", "k1")
        .send()
        .await
        .unwrap();
    assert_eq!(listed.status(), 200);

    // Behind server authentication, as every route but /health.
    let refused = http.get(format!("{url}/metrics")).send().await.unwrap();
    assert_eq!(refused.status(), 401);
    let response = http
        .get(format!("{url}/metrics"))
        .header("x-api-key", "k1")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain; version=0.0.4")
    );
    let text = response.text().await.unwrap();
    let samples = parse(&python, &text).await;
    let get = |key: &str| {
        *samples
            .get(key)
            .unwrap_or_else(|| panic!("no sample {key} in:\n{text}"))
    };
    let source = "example-mcp-server";
    let calls = |tool: &str, outcome: &str, source: &str| {
        let toolkit = tool.split_once('.').map_or("", |(toolkit, _)| toolkit);
        format!(
            r#"otc_bridge_calls_total{{outcome="{outcome}",source="{source}",tool="{tool}",toolkit="{toolkit}"}}"#
        )
    };
    assert_eq!(
        get(&calls("ExampleMcpServer.Echo@2.1.0", "success", source)),
        3.0
    );
    assert_eq!(
        get(&calls(
            "ExampleMcpServer.Divide@2.1.0",
            "tool_error",
            source
        )),
        1.0
    );
    assert_eq!(
        get(&calls("ExampleMcpServer.Echo@2.1.0", "422", source)),
        1.0
    );
    assert_eq!(get(&calls("", "400", "")), 1.0);
    assert_eq!(get(&calls("", "401", "")), 1.0);
    // Every call that got an answer is in the latency histogram; four reached the upstream.
    let duration = format!(
        r#"otc_bridge_call_duration_seconds_count{{source="{source}",toolkit="ExampleMcpServer"}}"#
    );
    assert_eq!(get(&duration), 5.0);
    let upstream = format!(r#"otc_bridge_upstream_duration_seconds_count{{source="{source}"}}"#);
    assert_eq!(get(&upstream), 4.0);
    assert_eq!(
        get(&format!(
            r#"otc_bridge_calls_in_flight{{source="{source}"}}"#
        )),
        0.0
    );
    assert_eq!(
        get(&format!(r#"otc_bridge_source_up{{source="{source}"}}"#)),
        1.0
    );
    assert_eq!(
        get(&format!(r#"otc_bridge_catalog_tools{{source="{source}"}}"#)),
        9.0
    );
    assert_eq!(
        get(&format!(
            r#"otc_bridge_source_restarts_total{{source="{source}"}}"#
        )),
        0.0
    );
    assert_eq!(get(r#"otc_bridge_list_requests_total{edge="otc"}"#), 1.0);

    // A crashed child is restarted, and counted.
    let crash = json!({"tool_id": "ExampleMcpServer.Crash", "input": {}});
    assert_eq!(call(crash, Some("k1")).await, 200);
    let restarts = format!(r#"otc_bridge_source_restarts_total{{source="{source}"}}"#);
    let restarted = async {
        loop {
            let text = http
                .get(format!("{url}/metrics"))
                .header("x-api-key", "k1")
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            if parse(&python, &text).await.get(&restarts) == Some(&1.0) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(20), restarted)
        .await
        .expect("the restart was not counted");
    bridge.interrupt().await;
}
