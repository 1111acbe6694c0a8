//! Supervision of stdio MCP children: crash, hang, restart, cancellation, shutdown, orphans.

use super::*;
use otc_tests::bridge_process::spawn_bridge;
use otc_tests::upstream_mcp::children;

#[tokio::test]
async fn a_crash_mid_call_is_a_child_exit_then_the_server_restarts() {
    let adapter = stdio_adapter(demo_config()).await;
    let tools = adapter.list_tools().await.unwrap();
    let first = adapter.child_pid().unwrap();
    let mut changes = adapter.catalog_changes().unwrap();
    changes.borrow_and_update();
    match invoke(&adapter, &tools, "crash", json!({"code": 3})).await {
        Err(AdapterError::ChildExited { code }) => assert_eq!(code, Some(3)),
        other => panic!("expected the child to exit, got {other:?}"),
    }
    let second = wait_for_new_child(&adapter, first).await;
    assert!(
        wait_pid_gone(first, WAIT).await,
        "the crashed child is gone"
    );
    // The catalog ticks after a restart so the bridge re-lists.
    tokio::time::timeout(WAIT, changes.changed())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(adapter.state(), SourceState::Ready);
    let echoed = invoke(&adapter, &tools, "echo", json!({"message": "back"})).await;
    assert_eq!(echoed.unwrap(), json!("back"));
    adapter.shutdown().await;
    assert!(wait_pid_gone(second, WAIT).await);
}

#[tokio::test]
async fn calls_during_a_restart_are_refused_at_once() {
    let mut config = demo_config();
    config.restart.initial_backoff_ms = 600_000;
    config.restart.max_backoff_ms = 600_000;
    let adapter = stdio_adapter(config).await;
    let tools = adapter.list_tools().await.unwrap();
    let _ = invoke(&adapter, &tools, "crash", json!({})).await;
    let mut states = adapter.state_changes();
    tokio::time::timeout(
        WAIT,
        states.wait_for(|s| matches!(s, SourceState::Restarting { .. })),
    )
    .await
    .unwrap()
    .unwrap();
    match invoke(&adapter, &tools, "echo", json!({"message": "x"})).await {
        Err(AdapterError::Unavailable {
            source_name,
            reason,
        }) => {
            assert_eq!(source_name, "demo");
            assert!(reason.contains("restarting"), "{reason}");
        }
        other => panic!("expected unavailable, got {other:?}"),
    }
    // Shutdown does not wait for the ten-minute backoff.
    tokio::time::timeout(WAIT, adapter.shutdown())
        .await
        .unwrap();
}

#[tokio::test]
async fn an_abandoned_call_is_cancelled_upstream() {
    let adapter = stdio_adapter(demo_config()).await;
    let tools = adapter.list_tools().await.unwrap();
    let slow = adapter.call(call(&tool(&tools, "slow"), json!({"ms": 600_000})));
    // The bridge's per-call timeout, as the bridge applies it: the future is dropped.
    assert!(
        tokio::time::timeout(Duration::from_millis(200), slow)
            .await
            .is_err()
    );
    let stats = invoke(&adapter, &tools, "stats", json!({"wait_for_cancelled": 1})).await;
    assert_eq!(
        stats.unwrap()["cancelled"],
        1,
        "notifications/cancelled reached the server"
    );
    adapter.shutdown().await;
}

#[tokio::test]
async fn a_hung_server_is_restarted() {
    let mut config = demo_config();
    config.ping_interval_secs = 1;
    config.ping_timeout_secs = 1;
    let adapter = stdio_adapter(config).await;
    let first = adapter.child_pid().unwrap();
    // A stopped process answers nothing: the ping times out.
    let stopped = std::process::Command::new("kill")
        .args(["-STOP", &first.to_string()])
        .status()
        .unwrap();
    assert!(stopped.success());
    let second = wait_for_new_child(&adapter, first).await;
    assert!(
        wait_pid_gone(first, WAIT).await,
        "the hung child was killed"
    );
    adapter.shutdown().await;
    assert!(wait_pid_gone(second, WAIT).await);
}

#[tokio::test]
async fn shutdown_kills_the_child() {
    let adapter = stdio_adapter(demo_config()).await;
    let pid = adapter.child_pid().unwrap();
    adapter.shutdown().await;
    assert!(
        wait_pid_gone(pid, WAIT).await,
        "child {pid} outlived shutdown"
    );
    assert!(matches!(adapter.state(), SourceState::Failed { .. }));
    assert!(matches!(
        adapter.list_tools().await,
        Err(AdapterError::Unavailable { .. })
    ));
}

#[tokio::test]
async fn a_command_that_cannot_be_spawned_is_a_setup_error_naming_it() {
    let config = McpConfig::stdio("/nonexistent/bin/mcp-server --flag");
    match McpAdapter::build("missing", &config, &BuildContext::default()).await {
        Err(AdapterError::Setup { message, .. }) => {
            assert!(message.contains("/nonexistent/bin/mcp-server"), "{message}");
            assert!(message.contains("not found"), "{message}");
        }
        other => panic!("expected a setup error, got {other:?}"),
    }
    let config = McpConfig::stdio("node 'unbalanced");
    assert!(matches!(
        McpAdapter::build("bad", &config, &BuildContext::default()).await,
        Err(AdapterError::Setup { .. })
    ));
}

/// A process's command name (`/proc/PID/comm`, at most 15 bytes).
fn comm(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .unwrap_or_default()
        .trim()
        .to_owned()
}

#[tokio::test]
async fn issue_8_a_sigkilled_bridge_leaves_no_child_grandchild_or_watchdog() {
    // The worst case: a server that ignores end of input and has a child of its own.
    let command = format!("{} --ignore-eof --grandchild", example_server_command());
    let (mut bridge, _url) = spawn_bridge(&["--mcp", &command], &[]).await;
    let pid = bridge.id().unwrap();
    // The bridge listens only once its source is up, so its children exist; the grandchild may
    // still be starting: watching another process's children has no notification, poll /proc.
    let (server, grandchild, watchdog) = tokio::time::timeout(WAIT, async {
        loop {
            let ours = children(pid);
            let server = ours
                .iter()
                .copied()
                .find(|p| comm(*p).starts_with("example-mcp"));
            let watchdog = server.and_then(|s| watchdog_of(pid, s));
            let grandchild = server.and_then(|s| children(s).first().copied());
            if let (Some(s), Some(g), Some(w)) = (server, grandchild, watchdog) {
                return (s, g, w);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the bridge's MCP child, its grandchild and the watchdog did not all appear");
    // SIGKILL: no code of the bridge runs.
    bridge.start_kill().unwrap();
    bridge.wait().await.unwrap();
    for (what, pid) in [
        ("MCP child", server),
        ("grandchild", grandchild),
        ("watchdog", watchdog),
    ] {
        assert!(
            wait_pid_gone(pid, WAIT).await,
            "{what} {pid} outlived the bridge"
        );
    }
}

/// The watchdog of process group `pgid` among `parent`'s children: it has the group id as its
/// last argument.
fn watchdog_of(parent: u32, pgid: u32) -> Option<u32> {
    children(parent).into_iter().find(|p| {
        let cmdline = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
        let last = cmdline.split(|b| *b == 0).rfind(|a| !a.is_empty());
        comm(*p) == "sh" && last == Some(pgid.to_string().as_bytes())
    })
}

#[tokio::test]
async fn issue_8_a_stopped_source_leaves_no_watchdog_behind() {
    let adapter = stdio_adapter(demo_config()).await;
    let server = adapter.child_pid().unwrap();
    let watchdog = watchdog_of(std::process::id(), server).expect("no watchdog was started");
    adapter.shutdown().await;
    assert!(wait_pid_gone(server, WAIT).await);
    assert!(
        wait_pid_gone(watchdog, WAIT).await,
        "the watchdog outlived its source"
    );
}
