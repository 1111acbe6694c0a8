//! Issue 8, defect 2: an MCP stdio child sees a minimal environment plus its source's `env:`,
//! never the bridge's secrets, even with `inherit_env: true`.

use std::collections::BTreeSet;

use super::*;
use otc_adapters::mcp::McpTransportConfig;
use otc_tests::bridge_process::spawn_bridge;

/// The `env` tool's answer: the child's variables.
async fn child_vars(adapter: &McpAdapter) -> serde_json::Map<String, Value> {
    let tools = adapter.list_tools().await.unwrap();
    let answer = tokio::time::timeout(
        WAIT,
        adapter.call(call(&unlisted(&tools, "env"), json!({}))),
    )
    .await
    .unwrap()
    .unwrap();
    answer["vars"].as_object().unwrap().clone()
}

fn env_config(inherit: bool) -> McpConfig {
    let mut config = demo_config();
    let McpTransportConfig::Stdio {
        env, inherit_env, ..
    } = &mut config.transport
    else {
        unreachable!()
    };
    env.insert("OTC_ISSUE8_ENTRY".to_owned(), "from env:".into());
    *inherit_env = inherit;
    config
}

#[tokio::test]
async fn issue_8_a_child_gets_a_minimal_environment_and_its_env_entries() {
    // Cargo (and nextest) give every test process these; they are not on the default list.
    assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some());
    let adapter = McpAdapter::build("demo", &env_config(false), &BuildContext::default())
        .await
        .unwrap();
    let vars = child_vars(&adapter).await;
    assert_eq!(vars["OTC_ISSUE8_ENTRY"], "from env:");
    assert!(vars.contains_key("PATH"), "{vars:?}");
    assert!(!vars.contains_key("CARGO_MANIFEST_DIR"), "{vars:?}");
    adapter.shutdown().await;
}

/// Issue 25, item 10: a child's `env` value may be read from the bridge's environment at
/// start-up (`{env: VAR}`, what `import` writes instead of a token), and that variable is then
/// one of the bridge's secrets.
#[tokio::test]
async fn an_env_value_read_from_the_environment_reaches_the_child() {
    assert!(std::env::var_os("CARGO_PKG_NAME").is_some());
    let mut config = env_config(false);
    let McpTransportConfig::Stdio { env, .. } = &mut config.transport else {
        unreachable!()
    };
    env.insert(
        "FROM_REFERENCE".to_owned(),
        otc_adapters::mcp::EnvValueConfig::Reference(otc_adapters::mcp::HeaderValueConfig::Env(
            "CARGO_PKG_NAME".to_owned(),
        )),
    );
    assert!(config.secret_env().contains("CARGO_PKG_NAME"));
    let adapter = McpAdapter::build("demo", &config, &BuildContext::default())
        .await
        .unwrap();
    let vars = child_vars(&adapter).await;
    assert_eq!(vars["FROM_REFERENCE"], env!("CARGO_PKG_NAME"));
    adapter.shutdown().await;

    env_unset_is_named().await;
}

async fn env_unset_is_named() {
    let mut config = env_config(false);
    let McpTransportConfig::Stdio { env, .. } = &mut config.transport else {
        unreachable!()
    };
    env.insert(
        "X".to_owned(),
        otc_adapters::mcp::EnvValueConfig::Reference(otc_adapters::mcp::HeaderValueConfig::Env(
            "OTC_TEST_NEVER_SET_VAR".to_owned(),
        )),
    );
    let error = McpAdapter::build("demo", &config, &BuildContext::default())
        .await
        .expect_err("an unset variable is a start-up error");
    assert!(
        error.to_string().contains("OTC_TEST_NEVER_SET_VAR"),
        "{error}"
    );
}

#[tokio::test]
async fn issue_8_inherit_env_passes_the_environment_but_never_the_secret_variables() {
    assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some());
    assert!(std::env::var_os("CARGO_PKG_NAME").is_some());
    let cx = BuildContext {
        secret_env: BTreeSet::from(["CARGO_PKG_NAME".to_owned()]),
        ..BuildContext::default()
    };
    let adapter = McpAdapter::build("demo", &env_config(true), &cx)
        .await
        .unwrap();
    let vars = child_vars(&adapter).await;
    assert_eq!(vars["OTC_ISSUE8_ENTRY"], "from env:");
    assert!(vars.contains_key("CARGO_MANIFEST_DIR"), "{vars:?}");
    assert!(!vars.contains_key("CARGO_PKG_NAME"), "{vars:?}");
    adapter.shutdown().await;
}

#[tokio::test]
async fn issue_8_the_bridges_secrets_do_not_reach_an_mcp_child() {
    let command = format!("{} --fault-tools", example_server_command());
    let (_bridge, url) = spawn_bridge(
        &["--mcp", &command],
        &[("OTC_ISSUE8_API_TOKEN", "hunter2"), ("OTC_JWT_SECRET", "k")],
    )
    .await;
    let body =
        json!({"request": {"call_id": "c1", "tool_id": "ExampleMcpServer.Env", "input": {}}});
    let response = reqwest::Client::new()
        .post(format!("{url}/tools/call"))
        .json(&body)
        .send()
        .await
        .unwrap();
    let answer: Value = response.json().await.unwrap();
    let vars = answer["result"]["value"]["vars"]
        .as_object()
        .unwrap_or_else(|| panic!("{answer}"));
    assert!(vars.contains_key("PATH"), "{vars:?}");
    assert!(!vars.contains_key("OTC_ISSUE8_API_TOKEN"), "{vars:?}");
    assert!(!vars.contains_key("OTC_JWT_SECRET"), "{vars:?}");
    assert!(!vars.values().any(|v| v == "hunter2"), "{vars:?}");
}

#[tokio::test]
async fn issue_8_inherit_env_never_passes_the_variables_the_bridge_reads_secrets_from() {
    // A real bridge with API-key auth read from OTC_ISSUE8_KEYS and a source that inherits the
    // environment: the child sees ordinary variables, never the variable holding the keys.
    let dir = otc_tests::scratch::dir("issue8-env");
    let config = dir.join("bridge.yaml");
    let command = format!("{} --fault-tools", example_server_command());
    std::fs::write(
        &config,
        format!(
            "auth:\n  api_keys:\n    env: OTC_ISSUE8_KEYS\nsources:\n  - type: mcp\n    transport:\n      type: stdio\n      command: {}\n      inherit_env: true\n",
            serde_json::to_string(&command).unwrap()
        ),
    )
    .unwrap();
    let key = "k".repeat(40);
    let (_bridge, url) = spawn_bridge(
        &["--config", config.to_str().unwrap()],
        &[
            ("OTC_ISSUE8_KEYS", key.as_str()),
            ("OTC_ISSUE8_PLAIN", "plain"),
        ],
    )
    .await;
    let body =
        json!({"request": {"call_id": "c1", "tool_id": "ExampleMcpServer.Env", "input": {}}});
    let answer: Value = reqwest::Client::new()
        .post(format!("{url}/tools/call"))
        .header("x-api-key", &key)
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let vars = answer["result"]["value"]["vars"]
        .as_object()
        .unwrap_or_else(|| panic!("{answer}"));
    assert_eq!(
        vars["OTC_ISSUE8_PLAIN"], "plain",
        "inherit_env passes the rest"
    );
    assert!(!vars.contains_key("OTC_ISSUE8_KEYS"), "{vars:?}");
    assert!(!vars.values().any(|v| *v == key), "{vars:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
