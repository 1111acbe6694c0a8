//! Configuration files and start-up failures: one clear message naming what to fix, and nothing
//! half-started.

use super::example_server;
use otc_tests::bridge_process::{Running, repo_root, run};

fn write(name: &str, text: &str) -> String {
    let path = otc_tests::scratch::file("bridge-config", name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

#[tokio::test]
async fn the_example_config_starts_with_every_key() {
    example_server(); // examples/config/bridge.yaml names it by its path
    let path = repo_root().join("examples/config/bridge.yaml");
    let env = [
        ("DEMO_NOTES_KEY", "demo-key"),
        ("OTC_JWT_SECRET", "0123456789abcdef0123456789abcdef"),
        ("OTC_API_KEYS", "k1,k2"),
    ];
    let mut server = Running::spawn(
        &[
            "--config",
            path.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
        ],
        &env,
    );
    let url = server.url().await;
    assert_eq!(
        reqwest::get(format!("{url}/health"))
            .await
            .unwrap()
            .status(),
        200
    );
    // auth is on: /tools needs a key.
    assert_eq!(
        reqwest::get(format!("{url}/tools")).await.unwrap().status(),
        401
    );
    let tools: serde_json::Value = reqwest::Client::new()
        .get(format!("{url}/tools"))
        .header("X-API-Key", "k2")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let ids: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert!(
        ids.contains(&"Notes.CreateNote@1.0.0") && ids.iter().any(|i| i.starts_with("Example.")),
        "{ids:?}"
    );
    server.interrupt().await;
}

#[test]
fn bad_configs_name_what_to_fix() {
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "unknown-key.yaml",
            "listen: 127.0.0.1:0\nlimits:\n  max_body: 1\n",
            &["max_body", "line 3"],
        ),
        (
            "wrong-type.yaml",
            "limits:\n  call_timeout_secs: soon\n",
            &["call_timeout_secs"],
        ),
        (
            "bad-source.yaml",
            "sources:\n  - type: openapi\n    spec: x.yaml\n    colour: red\n",
            &["sources[0]", "colour"],
        ),
        (
            "no-type.yaml",
            "sources:\n  - spec: x.yaml\n",
            &["sources[0]", "type"],
        ),
        (
            // Issue 25, item 9: the bridge's own API key header is never forwarded upstream.
            "api-key-context-header.yaml",
            "auth:\n  api_keys:\n    env: OTC_TEST_KEYS\nsources:\n  - type: openapi\n    spec: x.yaml\n    context_headers: {key: OTC-API-Key}\n",
            &["context_headers.key", "otc-api-key", "own API key"],
        ),
        (
            "missing-env.yaml",
            "auth:\n  jwt:\n    secret_env: OTC_TEST_UNSET_SECRET_VAR\n",
            &["OTC_TEST_UNSET_SECRET_VAR"],
        ),
    ];
    for (name, text, needles) in cases {
        let path = write(name, text);
        let (code, _, stderr) = run(&["--config", &path, "--listen", "127.0.0.1:0"]);
        assert_eq!(code, 2, "{name}: {stderr}");
        for needle in *needles {
            assert!(
                stderr.contains(needle),
                "{name}: {needle:?} not in {stderr}"
            );
        }
        assert_eq!(
            stderr.lines().filter(|l| l.starts_with("error:")).count(),
            1,
            "{name}: one message: {stderr}"
        );
    }
    let (code, _, stderr) = run(&["--config", "/no/such/file.yaml"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("/no/such/file.yaml"), "{stderr}");
}

#[test]
fn sources_that_cannot_start_are_clear_errors() {
    let (code, _, stderr) = run(&[
        "--listen",
        "127.0.0.1:0",
        "--mcp",
        "no-such-mcp-command --flag",
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("no-such-mcp-command"), "{stderr}");
    let (code, _, stderr) = run(&[
        "--listen",
        "127.0.0.1:0",
        "--openapi",
        "http://127.0.0.1:9/openapi.json",
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("127.0.0.1:9"), "{stderr}");
    let (code, _, stderr) = run(&["--listen", "127.0.0.1:0", "--toolkit", "X"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("must follow"), "{stderr}");
}

#[tokio::test]
async fn nothing_starts_half_configured_unless_asked() {
    let example_server = example_server();
    let args = [
        "--listen",
        "127.0.0.1:0",
        "--mcp",
        example_server,
        "--openapi",
        "/no/such/doc.yaml",
    ];
    let (code, stdout, stderr) = run(&args);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("/no/such/doc.yaml") && stderr.contains("--allow-partial"),
        "{stderr}"
    );
    assert!(!stdout.contains("listening"), "{stdout}");
    // Asked for: the source that started is served, and the failure was reported.
    let mut with_flag = args.to_vec();
    with_flag.push("--allow-partial");
    let log_path = otc_tests::scratch::file("half", "bridge.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let mut server = Running::spawn_with_stderr(&with_flag, &[], log);
    let url = server.url().await;
    let tools: serde_json::Value = reqwest::get(format!("{url}/tools"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(!tools["tools"].as_array().unwrap().is_empty());
    // Issue 8: the failed source does not vanish from /health, which is not "ready".
    let health = reqwest::get(format!("{url}/health")).await.unwrap();
    assert_eq!(health.status(), 503);
    let health: serde_json::Value = health.json().await.unwrap();
    let failed: Vec<&serde_json::Value> = health["sources"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["status"]["state"] == "failed")
        .collect();
    assert_eq!(failed.len(), 1, "{health}");
    assert!(
        !health.to_string().contains("/no/such/doc.yaml"),
        "anonymous /health gives states only: {health}"
    );
    server.interrupt().await;
    // The failure is logged once, as it happens; a probe's 503 is its answer, not an error.
    let log = std::fs::read_to_string(&log_path).unwrap();
    let _ = std::fs::remove_file(&log_path);
    assert!(log.contains("/no/such/doc.yaml"), "{log}");
    assert!(
        !log.lines()
            .any(|l| l.contains("ERROR") && l.contains("/health")),
        "{log}"
    );
}
