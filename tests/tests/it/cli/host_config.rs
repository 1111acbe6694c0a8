//! Issue 13: the bridge started on the configuration file people already have. A Claude
//! Desktop `claude_desktop_config.json` with three servers (two child processes and one over
//! streamable HTTP) is served unchanged with `--config`, and `otc-bridge import` turns it into
//! YAML that serves the same.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::{Child, Command};

use otc_tests::bridge_process::{Running, run};
use otc_tests::http::{call_tool, get_json};

/// The example MCP server over streamable HTTP on loopback: the child and its URL.
async fn example_http(bin: &PathBuf) -> (Child, String) {
    let mut child = Command::new(bin)
        .args(["--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let url = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .expect("the example server printed no URL within 30 s")
        .unwrap()
        .expect("the example server exited before printing its URL");
    (child, url)
}

fn temp_dir() -> PathBuf {
    otc_tests::scratch::dir("bridge-host-config")
}

/// The Claude Desktop file: `example` (the example server, a child), `second` (the npm
/// `server-everything` when the corpus is installed, else a second example server: each key is
/// its own toolkit, so the same server twice does not collide) and `remote` (over HTTP).
fn claude_desktop_config(example: &str, remote_url: &str) -> (Value, &'static str) {
    let (second, echo) = match otc_fixtures::corpus_dir() {
        Some(corpus) => {
            let bin = corpus.join("mcp/everything/node_modules/.bin/mcp-server-everything");
            assert!(
                bin.is_file(),
                "{} is missing: run scripts/install-mcp-servers.sh",
                bin.display()
            );
            (
                json!({"command": bin, "args": ["stdio"], "env": {"OTC_TEST": "1"}}),
                "Echo: hi",
            )
        }
        None => (json!({"command": example, "args": []}), "hi"),
    };
    let config = json!({
        "mcpServers": {
            "example": {"command": example, "args": []},
            "second": second,
            "remote": {"url": remote_url, "alwaysAllow": ["echo"]}
        },
        "globalShortcut": "Alt+Space"
    });
    (config, echo)
}

/// Serves `config_path`; checks the three sources are ready under their keys and that an echo
/// of each answers through `POST /tools/call`. Returns the bridge's log.
async fn serves_three_sources(
    config_path: &str,
    second_echo: &str,
    env: &[(&str, &str)],
) -> String {
    let log_path = temp_dir().join(format!(
        "{}.log",
        PathBuf::from(config_path)
            .file_name()
            .unwrap()
            .to_string_lossy()
    ));
    let log = std::fs::File::create(&log_path).unwrap();
    let mut bridge = Running::spawn_with_stderr(
        &["--config", config_path, "--listen", "127.0.0.1:0"],
        env,
        log,
    );
    let url = bridge.url().await;
    let health = get_json(&format!("{url}/health")).await;
    assert_eq!(health["status"], "ready", "{health}");
    let mut names: Vec<&str> = health["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            assert_eq!(s["status"]["state"], "ready", "{health}");
            s["name"].as_str().unwrap()
        })
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["example", "remote", "second"], "{health}");
    let tools: Value = reqwest::get(format!("{url}/tools"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let http = reqwest::Client::new();
    for (toolkit, expected) in [("Example", "hi"), ("Second", second_echo), ("Remote", "hi")] {
        let id = tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["id"].as_str())
            .find(|id| id.starts_with(&format!("{toolkit}.Echo@")))
            .unwrap_or_else(|| panic!("no {toolkit}.Echo in {tools}"))
            .to_owned();
        let answer = call_tool(
            &http,
            &url,
            &json!({"tool_id": id, "input": {"message": "hi"}}),
        )
        .await;
        assert_eq!(answer["success"], true, "{id}: {answer}");
        assert!(
            answer["value"].to_string().contains(expected),
            "{id}: {answer}"
        );
    }
    bridge.interrupt().await;
    std::fs::read_to_string(&log_path).unwrap()
}

#[tokio::test]
async fn issue_13_a_claude_desktop_config_starts_the_bridge_unchanged() {
    let example = otc_fixtures::workspace_bin("example-mcp-server", "example-mcp-server");
    let (_remote, remote_url) = example_http(&example).await;
    let (config, second_echo) = claude_desktop_config(example.to_str().unwrap(), &remote_url);
    let json_path = temp_dir().join("claude_desktop_config.json");
    std::fs::write(&json_path, serde_json::to_string_pretty(&config).unwrap()).unwrap();
    let json_path = json_path.to_str().unwrap();

    let log = serves_three_sources(json_path, second_echo, &[]).await;
    // What was not read is said once, naming the server and the field.
    for warning in [
        "server `remote`: `alwaysAllow` ignored",
        "top-level `globalShortcut` ignored",
    ] {
        assert_eq!(log.matches(warning).count(), 1, "{warning} in:\n{log}");
    }

    // `import` prints the native YAML, which serves the same.
    let (code, yaml, stderr) = run(&["import", json_path]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        yaml.starts_with("# otc-bridge configuration imported from"),
        "{yaml}"
    );
    assert!(
        yaml.contains("#   server `remote`: `alwaysAllow` ignored"),
        "{yaml}"
    );
    assert!(stderr.contains("`alwaysAllow` ignored"), "{stderr}");
    // The value the host file held for the child's `env` is not written: the YAML reads it
    // from a variable, which `import` names, and which serving it then needs.
    let yaml_path = temp_dir().join("otc-bridge.yaml");
    std::fs::write(&yaml_path, &yaml).unwrap();
    let mut env = Vec::new();
    if otc_fixtures::corpus_dir().is_some() {
        assert!(
            stderr.contains("OTC_TEST: server `second`, env.OTC_TEST"),
            "{stderr}"
        );
        assert!(
            yaml.contains("OTC_TEST:\n") && yaml.contains("env: OTC_TEST"),
            "{yaml}"
        );
        env.push(("OTC_TEST", "1"));
    }
    serves_three_sources(yaml_path.to_str().unwrap(), second_echo, &env).await;
}

#[test]
fn import_refuses_a_file_that_is_not_a_host_config() {
    let path = temp_dir().join("native.yaml");
    std::fs::write(&path, "listen: 127.0.0.1:0\n").unwrap();
    let (code, stdout, stderr) = run(&["import", path.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(stdout.is_empty(), "{stdout}");
    assert!(stderr.contains("not an MCP host configuration"), "{stderr}");
    let path = temp_dir().join("bad.json");
    std::fs::write(
        &path,
        r#"{"mcpServers": {"gh": {"url": "https://x", "headers": {"A": "${input:pat}"}}}}"#,
    )
    .unwrap();
    let (code, _, stderr) = run(&["import", path.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("server `gh`") && stderr.contains("input"),
        "{stderr}"
    );
}
