//! Every `otc-bridge` command in the README's `sh` blocks runs as written (from the repository
//! root, after `cargo build --workspace`). Servers are started on a free port, checked through
//! `/health`, and stopped with Ctrl-C; one-shot commands must exit 0.

use serde_json::Value;

use super::example_server;
use otc_tests::bridge_process::{Running, bridge_bin, repo_root, run};

fn readme_commands() -> Vec<Vec<String>> {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let mut in_sh = false;
    let mut commands = Vec::new();
    for line in readme.lines() {
        if line.starts_with("```") {
            in_sh = line == "```sh";
            continue;
        }
        if !in_sh {
            continue;
        }
        let command = line.split(" #").next().unwrap_or(line).trim();
        if let Some(rest) = command.strip_prefix("target/debug/otc-bridge ") {
            commands.push(shlex::split(rest).unwrap());
        }
    }
    commands
}

#[tokio::test]
async fn every_readme_command_works() {
    example_server(); // the README names it by its path
    let commands = readme_commands();
    assert!(commands.len() >= 5, "{commands:?}");
    for args in commands {
        let subcommand = args.first().map(String::as_str);
        if matches!(subcommand, Some("tools" | "check" | "export" | "policy")) {
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            let (code, stdout, stderr) = run(&refs);
            assert_eq!(
                code, 0,
                "otc-bridge {args:?}\nstdout: {stdout}\nstderr: {stderr}"
            );
            if subcommand == Some("tools") {
                let body: Value = serde_json::from_str(&stdout).unwrap();
                assert!(!body["tools"].as_array().unwrap().is_empty());
            }
            continue;
        }
        let mut refs: Vec<&str> = args.iter().map(String::as_str).collect();
        refs.extend(["--listen", "127.0.0.1:0"]);
        let mut server = Running::spawn(&refs, &[]);
        let url = server.url().await;
        let health = reqwest::get(format!("{url}/health")).await.unwrap();
        assert_eq!(health.status(), 200, "{} {args:?}", bridge_bin().display());
        let tools: Value = reqwest::get(format!("{url}/tools"))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert!(!tools["tools"].as_array().unwrap().is_empty(), "{args:?}");
        server.interrupt().await;
    }
}

#[test]
fn export_is_deterministic() {
    let example_server = example_server();
    let dir = tempdir();
    let a = dir.join("a.json");
    let b = dir.join("b.json");
    for out in [&a, &b] {
        let (code, _, stderr) = run(&[
            "export",
            "--openapi",
            "bridge/src/demo/openapi.yaml",
            "--mcp",
            example_server,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{stderr}");
    }
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    let split = dir.join("split");
    let (code, stdout, _) = run(&[
        "export",
        "--openapi",
        "bridge/src/demo/openapi.yaml",
        "--dialect",
        "oxp",
        "--split",
        "--out",
        split.to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    assert!(stdout.contains("DemoNotes.json"), "{stdout}");
    let body: Value =
        serde_json::from_slice(&std::fs::read(split.join("DemoNotes.json")).unwrap()).unwrap();
    assert_eq!(body["$schema"], "urn:oxp:1.0");
    assert!(body["items"].is_array());
}

fn tempdir() -> std::path::PathBuf {
    otc_tests::scratch::dir("bridge-test")
}
