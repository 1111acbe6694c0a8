//! `otc-bridge demo`: starts with no network, and the three printed `curl` commands work as printed.

use serde_json::Value;

use otc_tests::bridge_process::Running;

#[tokio::test]
async fn demo_serves_and_its_printed_commands_work() {
    let mut demo = Running::spawn(&["demo", "--listen", "127.0.0.1:0"], &[]);
    let url = demo.url().await;
    let mut commands = Vec::new();
    while commands.len() < 3 {
        let line = demo.wait_for("curl ").await;
        commands.push(line.trim().to_owned());
    }
    let run = |cmd: &str| {
        let out = std::process::Command::new("sh")
            .args(["-c", cmd])
            .output()
            .unwrap();
        assert!(out.status.success(), "{cmd}");
        serde_json::from_slice::<Value>(&out.stdout).unwrap_or_else(|e| panic!("{cmd}: {e}"))
    };
    let list = run(&commands[0]);
    let ids: Vec<&str> = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert!(ids.iter().any(|id| id.starts_with("DemoNotes.")), "{ids:?}");
    assert!(ids.iter().any(|id| id.starts_with("DemoTools.")), "{ids:?}");
    let ok = run(&commands[1]);
    assert_eq!(ok["result"]["success"], true, "{ok}");
    let invalid = run(&commands[2]);
    assert!(invalid["parameter_errors"].is_object(), "{invalid}");
    // The MCP source is a real child process; it is gone once the demo stops.
    let health: Value = reqwest::get(format!("{url}/health"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(health["status"], "ready", "{health}");
    let pid = demo.child.id().unwrap();
    let children =
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
    demo.interrupt().await;
    for child in children.split_whitespace() {
        let gone = (0..100).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(50));
            !std::path::Path::new(&format!("/proc/{child}")).exists()
                || std::fs::read_to_string(format!("/proc/{child}/stat"))
                    .is_ok_and(|s| s.contains(") Z "))
        });
        assert!(gone, "child {child} outlived the demo");
    }
}

/// Nobody reads the bridge's stdout any more (`otc-bridge … | head -1`, a supervisor that
/// stopped reading): its status lines must not take it down. Ctrl-C still stops it cleanly,
/// with its "shutting down" line written into the closed pipe.
#[tokio::test]
async fn a_closed_stdout_does_not_stop_the_bridge() {
    let mut running = Running::spawn(&["demo", "--listen", "127.0.0.1:0"], &[]);
    let url = running.url().await;
    let Running {
        mut child, lines, ..
    } = running;
    drop(lines);
    let health = reqwest::get(format!("{url}/health")).await.unwrap();
    assert_eq!(health.status(), 200);
    let pid = child.id().unwrap().to_string();
    let sent = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap();
    assert!(sent.success());
    let exit = tokio::time::timeout(std::time::Duration::from_secs(30), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(exit.success(), "exit status {exit}");
}

/// Issue 25, item 13: under a 1,024-descriptor limit (as many container runtimes set it), idle
/// clients cannot take every descriptor: the default connection cap is derived from the limit,
/// so a call on a connection already open still gets its upstream connection.
#[tokio::test]
async fn idle_connections_leave_descriptors_for_calls_under_a_low_limit() {
    let mut command = tokio::process::Command::new("prlimit");
    command
        .args(["--nofile=1024:1024", "--"])
        .arg(otc_tests::bridge_process::bridge_bin())
        .args(["demo", "--listen", "127.0.0.1:0"])
        .current_dir(otc_tests::bridge_process::repo_root())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().expect("prlimit (util-linux)");
    let lines =
        tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(child.stdout.take().unwrap()));
    let mut demo = Running {
        child,
        lines,
        seen: Vec::new(),
    };
    let url = demo.url().await;
    // One keep-alive connection, accepted before the crowd.
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(1)
        .build()
        .unwrap();
    assert_eq!(
        http.get(format!("{url}/health"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    let addr = url.trim_start_matches("http://").to_owned();
    let mut idle = Vec::new();
    for _ in 0..1100 {
        match tokio::time::timeout(
            std::time::Duration::from_secs(2),
            tokio::net::TcpStream::connect(&addr),
        )
        .await
        {
            Ok(Ok(stream)) => idle.push(stream),
            _ => break,
        }
    }
    // Let the bridge accept what it will.
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let body = serde_json::json!({"tool_id": "DemoNotes.ListNotes", "input": {}});
    let answer = otc_tests::http::call_tool(&http, &url, &body).await;
    assert_eq!(answer["success"], true, "{answer}");
    drop(idle);
    demo.interrupt().await;
}
