//! Supervision of stdio MCP children: crash, hang, restart, cancellation, shutdown, orphans.

use super::*;
use otc_tests::upstream_mcp::{bridge_bin, children};

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
    match McpAdapter::build("missing", &config).await {
        Err(AdapterError::Setup { message, .. }) => {
            assert!(message.contains("/nonexistent/bin/mcp-server"), "{message}");
            assert!(message.contains("not found"), "{message}");
        }
        other => panic!("expected a setup error, got {other:?}"),
    }
    let config = McpConfig::stdio("node 'unbalanced");
    assert!(matches!(
        McpAdapter::build("bad", &config).await,
        Err(AdapterError::Setup { .. })
    ));
}

#[tokio::test]
async fn a_killed_bridge_leaves_no_mcp_child_behind() {
    let mut bridge = tokio::process::Command::new(bridge_bin())
        .args([
            "--listen",
            "127.0.0.1:0",
            "--mcp",
            &example_server_command(),
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = bridge.id().unwrap();
    let child = tokio::time::timeout(WAIT, async {
        loop {
            if let Some(child) = children(pid).first() {
                return *child;
            }
            // Watching another process's children has no notification; poll /proc.
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the bridge did not start its MCP child");
    // SIGKILL: no code of the bridge runs; the child sees its stdin close and exits.
    bridge.start_kill().unwrap();
    bridge.wait().await.unwrap();
    assert!(
        wait_pid_gone(child, WAIT).await,
        "MCP child {child} outlived the bridge"
    );
}
