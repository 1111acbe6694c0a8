//! The audit trail (issue 26, item 4) through the real binary: one line per decided call, named
//! by caller and rule, never a key; rotated by size; `otc-bridge audit verify` accepts the trail
//! as written and names the line where one was changed, removed or inserted, across rotations;
//! with a key, a line forged with a recomputed plain hash is caught too.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::example_with_keys;
use otc_tests::bridge_process::{Running, run};

const CI_KEY: &str = "audit-ci-key-0123456789";
const OPS_KEY: &str = "audit-ops-key-0123456789";
const AUDIT_KEY: &str = "the-audit-trail-key";

fn dir(name: &str) -> PathBuf {
    otc_tests::scratch::dir(&format!("audit-{name}"))
}

/// Runs a bridge with the trail in `dir` (small files, so it rotates), makes calls as two
/// callers, and stops it; returns the trail's files, oldest first.
async fn write_trail(dir: &Path, keyed: bool) -> Vec<PathBuf> {
    let key = if keyed {
        "\n  key_env: AUDIT_TRAIL_KEY"
    } else {
        ""
    };
    let config = dir.join("bridge.yaml");
    std::fs::write(
        &config,
        format!(
            r#"{keys}
policies:
  - {{name: ops-all, effect: allow, groups: [ops]}}
  - name: ci-echo
    effect: allow
    groups: [ci]
    tools: ["ExampleMcpServer.Echo"]
    when: 'input.message != "forbidden"'
    reason: not that word
audit:
  file: "{trail}"
  max_bytes: 4096
  keep: 20
  inputs: true{key}
"#,
            keys = example_with_keys(&[
                ("ci-bot", "AUDIT_CI_KEY", "ci"),
                ("ops", "AUDIT_OPS_KEY", "ops")
            ]),
            trail = dir.join("audit.jsonl").display(),
        ),
    )
    .unwrap();
    let mut bridge = Running::serving(
        &config,
        &[
            ("AUDIT_CI_KEY", CI_KEY),
            ("AUDIT_OPS_KEY", OPS_KEY),
            ("AUDIT_TRAIL_KEY", AUDIT_KEY),
        ],
    );
    let url = bridge.url().await;
    let http = reqwest::Client::new();
    let call = |key: &'static str, tool: &'static str, input: Value| {
        let http = http.clone();
        let url = url.clone();
        async move {
            http.post(format!("{url}/tools/call"))
                .header("x-api-key", key)
                .json(&json!({"tool_id": tool, "input": input}))
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }
    };
    for i in 0..12 {
        let message = format!("hello {i}");
        assert_eq!(
            call(CI_KEY, "ExampleMcpServer.Echo", json!({"message": message})).await,
            200
        );
        assert_eq!(
            call(OPS_KEY, "ExampleMcpServer.Divide", json!({"a": i, "b": 2})).await,
            200
        );
    }
    // Refused by the condition; hidden; and an input holding a secret of the bridge's.
    assert_eq!(
        call(
            CI_KEY,
            "ExampleMcpServer.Echo",
            json!({"message": "forbidden"})
        )
        .await,
        403
    );
    assert_eq!(
        call(CI_KEY, "ExampleMcpServer.Divide", json!({"a": 1, "b": 2})).await,
        400
    );
    assert_eq!(
        call(
            CI_KEY,
            "ExampleMcpServer.Echo",
            json!({"message": format!("my key is {OPS_KEY}")})
        )
        .await,
        200
    );
    bridge.interrupt().await;
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("audit.jsonl")
        })
        .collect();
    // Oldest first: the highest number, …, `.1`, then the current file.
    let number = |p: &PathBuf| {
        p.extension()
            .and_then(|e| e.to_str())
            .and_then(|e| e.parse::<u32>().ok())
            .unwrap_or(0)
    };
    files.sort_by_key(|p| std::cmp::Reverse(number(p)));
    files
}

fn verify(files: &[PathBuf]) -> (i32, String) {
    let mut args = vec!["audit", "verify"];
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    args.extend(names.iter().map(String::as_str));
    let (code, stdout, stderr) = run(&args);
    (code, format!("{stdout}{stderr}"))
}

/// `files` copied into `into`, with `edit` applied to the lines of the file at `index`.
fn tampered(
    files: &[PathBuf],
    into: &Path,
    index: usize,
    edit: impl Fn(&mut Vec<String>),
) -> Vec<PathBuf> {
    std::fs::create_dir_all(into).unwrap();
    files
        .iter()
        .enumerate()
        .map(|(i, file)| {
            let copy = into.join(file.file_name().unwrap());
            let mut lines: Vec<String> = std::fs::read_to_string(file)
                .unwrap()
                .lines()
                .map(str::to_owned)
                .collect();
            if i == index {
                edit(&mut lines);
            }
            std::fs::write(&copy, lines.join("\n") + "\n").unwrap();
            copy
        })
        .collect()
}

#[tokio::test]
async fn every_decided_call_is_one_chained_line_and_verify_finds_each_kind_of_tampering() {
    let dir = dir("plain");
    let files = write_trail(&dir, false).await;
    assert!(files.len() >= 3, "the trail did not rotate: {files:?}");
    let (code, out) = verify(&files);
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("ok: "), "{out}");

    let text: String = files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect();
    assert!(
        !text.contains(CI_KEY) && !text.contains(OPS_KEY),
        "a key is in the trail"
    );
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|l: &Value| l.get("caller").is_some())
        .collect();
    assert_eq!(lines.len(), 27, "one line per decided call");
    let refused = lines
        .iter()
        .find(|l| l["status"] == json!(403))
        .expect("the refused call");
    assert_eq!(refused["caller"], json!("ci-bot"));
    assert_eq!(refused["decision"], json!("refuse"));
    assert_eq!(refused["rule"], json!("ci-echo"));
    assert_eq!(refused["outcome"], json!("refused"));
    assert!(
        refused.get("upstream").is_none(),
        "refused before the upstream: {refused}"
    );
    let hidden = lines.iter().find(|l| l["status"] == json!(400)).unwrap();
    assert_eq!(hidden["requested"], json!("ExampleMcpServer.Divide"));
    assert!(hidden.get("tool").is_none(), "{hidden}");
    let divided = lines.iter().find(|l| l["caller"] == json!("ops")).unwrap();
    assert_eq!(divided["decision"], json!("allow"));
    assert_eq!(divided["rule"], json!("ops-all"));
    assert_eq!(divided["outcome"], json!("success"));
    assert_eq!(divided["upstream"], json!("ok"), "{divided}");
    assert!(divided["call_id"].is_string() && divided["bytes_in"].as_u64() > Some(0));
    assert!(divided["time"].as_str().unwrap().ends_with('Z'));
    let secret = lines.last().unwrap();
    assert_eq!(secret["input"]["message"], json!("my key is <redacted>"));

    // A line changed: caught at that line.
    let middle = files.len() / 2;
    let changed = tampered(&files, &dir.join("changed"), middle, |lines| {
        lines[2] = lines[2].replace("\"ms\":", "\"ms\":9");
    });
    let (code, out) = verify(&changed);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!(
            "{}:3: this line was changed",
            changed[middle].display()
        )),
        "{out}"
    );
    // A line removed: caught at the line after it.
    let removed = tampered(&files, &dir.join("removed"), middle, |lines| {
        lines.remove(2);
    });
    let (code, out) = verify(&removed);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!(
            "{}:3: lines were removed",
            removed[middle].display()
        )),
        "{out}"
    );
    // A line copied in from elsewhere: caught at that line.
    let inserted = tampered(&files, &dir.join("inserted"), middle, |lines| {
        let copy = lines[1].clone();
        lines.insert(3, copy);
    });
    let (code, out) = verify(&inserted);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!(
            "{}:4: this line was inserted",
            inserted[middle].display()
        )),
        "{out}"
    );
    // A whole rotated file missing: caught at the first line after the gap.
    let mut gap = files.clone();
    gap.remove(middle);
    let (code, out) = verify(&gap);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!("{}:1: lines were removed", gap[middle].display())),
        "{out}"
    );
}

#[tokio::test]
async fn a_keyed_trail_refuses_a_line_forged_without_the_key() {
    let dir = dir("keyed");
    let files = write_trail(&dir, true).await;
    let (code, out) = run_verify_with_key(&files, AUDIT_KEY);
    assert_eq!(code, 0, "{out}");
    let (code, out) = run_verify_with_key(&files, "another-key");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains(":1: this line was changed"), "{out}");
}

fn run_verify_with_key(files: &[PathBuf], key: &str) -> (i32, String) {
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let mut command = std::process::Command::new(otc_tests::bridge_process::bridge_bin());
    command
        .args(["audit", "verify"])
        .args(&names)
        .args(["--key-env", "AUDIT_TRAIL_KEY_FOR_VERIFY"])
        .env("AUDIT_TRAIL_KEY_FOR_VERIFY", key);
    let out = command.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// The log records an OTLP receiver got: (event name, body).
type Records = std::sync::Arc<std::sync::Mutex<Vec<(String, String)>>>;

async fn export_logs(
    axum::extract::State(records): axum::extract::State<Records>,
    body: axum::body::Bytes,
) -> &'static str {
    use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
    use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
    use prost::Message as _;
    let request = ExportLogsServiceRequest::decode(body).unwrap();
    let mut records = records.lock().unwrap();
    for resource in request.resource_logs {
        for scope in resource.scope_logs {
            for record in scope.log_records {
                let body = match record.body.and_then(|b| b.value) {
                    Some(AnyValue::StringValue(s)) => s,
                    other => format!("{other:?}"),
                };
                records.push((record.event_name, body));
            }
        }
    }
    // An empty `ExportLogsServiceResponse` is zero bytes of protobuf.
    ""
}

#[tokio::test]
async fn the_trail_goes_to_otlp_as_log_records_that_verify_as_a_chain() {
    let dir = dir("otlp");
    let records = Records::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let app = axum::Router::new()
        .route("/v1/logs", axum::routing::post(export_logs))
        .with_state(records.clone());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let config = dir.join("bridge.yaml");
    std::fs::write(
        &config,
        format!(
            r#"{keys}
policies:
  - {{name: ci-echo, effect: allow, groups: [ci], tools: ["ExampleMcpServer.Echo"]}}
rate_limits:
  rules:
    - {{name: two-echoes, tools: ["ExampleMcpServer.Echo"], rate: 2/minute}}
audit:
  otlp: true
"#,
            keys = example_with_keys(&[("ci-bot", "AUDIT_CI_KEY", "ci")]),
        ),
    )
    .unwrap();
    let args = [
        "--listen",
        "127.0.0.1:0",
        "--config",
        config.to_str().unwrap(),
        "--log-level",
        "warn",
    ];
    let mut bridge = Running::spawn(
        &args,
        &[
            ("AUDIT_CI_KEY", CI_KEY),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        ],
    );
    let url = bridge.url().await;
    let http = reqwest::Client::new();
    for (tool, input, status) in [
        ("ExampleMcpServer.Echo", json!({"message": "hi"}), 200),
        ("ExampleMcpServer.Divide", json!({"a": 1, "b": 2}), 400),
        ("ExampleMcpServer.Echo", json!({"message": "again"}), 200),
        (
            "ExampleMcpServer.Echo",
            json!({"message": "once more"}),
            429,
        ),
    ] {
        let answer = http
            .post(format!("{url}/tools/call"))
            .header("x-api-key", CI_KEY)
            .json(&json!({"tool_id": tool, "input": input}))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status().as_u16(), status, "{tool}");
    }
    // Shutdown exports what is queued: no waiting for the batch interval.
    bridge.interrupt().await;
    let records = records.lock().unwrap().clone();
    assert_eq!(
        records.len(),
        5,
        "the header and one record per call: {records:#?}"
    );
    assert!(records.iter().all(|(event, _)| event == "otc.audit"));
    let lines: Vec<Value> = records
        .iter()
        .map(|(_, body)| serde_json::from_str(body).unwrap())
        .collect();
    assert_eq!(lines[0]["audit"], "otc-bridge");
    assert_eq!(lines[1]["caller"], "ci-bot");
    assert_eq!(lines[2]["requested"], "ExampleMcpServer.Divide");
    assert!(
        lines[2].get("tool").is_none(),
        "hidden is missing: {}",
        lines[2]
    );
    assert!(lines[3].get("limited").is_none(), "{}", lines[3]);
    // The limit that refused a call, and the wait it asked for.
    assert_eq!(lines[4]["status"], 429);
    assert_eq!(lines[4]["decision"], "allow");
    assert_eq!(lines[4]["limited"]["rule"], "two-echoes");
    assert!(lines[4]["limited"]["retry_after_ms"].as_u64().unwrap() > 1000);
    assert!(records.iter().all(|(_, body)| !body.contains(CI_KEY)));
    // The bodies are the trail itself: written to a file, they verify as a chain.
    let file = dir.join("from-otlp.jsonl");
    let text: String = records
        .iter()
        .map(|(_, body)| format!("{body}\n"))
        .collect();
    std::fs::write(&file, &text).unwrap();
    let (code, out) = verify(std::slice::from_ref(&file));
    assert_eq!(code, 0, "{out}");
    let edited = dir.join("edited.jsonl");
    std::fs::write(&edited, text.replacen("ci-bot", "ci-bog", 1)).unwrap();
    assert_ne!(verify(std::slice::from_ref(&edited)).0, 0);

    // Without an endpoint the bridge refuses to start, naming what to set.
    std::fs::write(&config, "audit:\n  otlp: true\n").unwrap();
    let (code, _, stderr) = run(&args);
    assert_ne!(code, 0);
    assert!(stderr.contains("OTEL_EXPORTER_OTLP_ENDPOINT"), "{stderr}");
}
