//! Reload without a restart (issue 13): `--watch` and SIGHUP apply the difference in sources
//! while calls run. Unchanged MCP sources keep their child (same pid) and lose no call; removed
//! ones stop (their child exits) once their calls are done; a broken configuration, or a new
//! source that cannot start, changes nothing. A hostile configuration (an alias bomb, a FIFO,
//! `/dev/zero`, deep nesting) changes nothing either, and the bridge answers throughout; a reload
//! asked for while the bridge starts runs once it serves (issue 25).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use super::example_server;
use otc_tests::bridge_process::{Running, bridge_bin, repo_root};
use otc_tests::http::get_json;

/// A source named `name` (toolkit `Name`): the example server as a child whose environment says
/// which source it is, so its pid can be found.
fn source(name: &str, extra: &str) -> String {
    let command = repo_root().join(example_server());
    let toolkit = {
        let mut chars = name.chars();
        chars.next().map_or_else(String::new, |c| {
            c.to_ascii_uppercase().to_string() + chars.as_str()
        })
    };
    format!(
        "  - type: mcp\n    name: {name}\n    toolkit: {toolkit}\n    transport:\n      type: stdio\n      command: {}\n      env: {{RELOAD_TEST_SOURCE: {name}}}\n{extra}",
        command.display()
    )
}

fn write(path: &Path, sources: &[String]) {
    let text = format!("sources:\n{}", sources.concat());
    // Written whole and renamed over, as editors do.
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// The pid of the child serving source `name`, if one runs.
fn child_pid(bridge_pid: u32, name: &str) -> Option<u32> {
    child_pids(bridge_pid, name).first().copied()
}

/// The children serving source `name` (more than one while a replaced one drains).
fn child_pids(bridge_pid: u32, name: &str) -> Vec<u32> {
    // Children of every thread: tokio spawns children from its worker threads.
    let tasks = std::fs::read_dir(format!("/proc/{bridge_pid}/task"))
        .map(|dir| {
            dir.filter_map(Result::ok)
                .map(|e| e.path())
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let mut children: Vec<u32> = tasks
        .iter()
        .filter_map(|task| std::fs::read_to_string(task.join("children")).ok())
        .flat_map(|list| {
            list.split_whitespace()
                .filter_map(|pid| pid.parse::<u32>().ok())
                .collect::<Vec<_>>()
        })
        .collect();
    children.sort_unstable();
    children
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|env| {
                env.split(|b| *b == 0)
                    .any(|var| var == format!("RELOAD_TEST_SOURCE={name}").as_bytes())
            })
        })
        .collect()
}

async fn tool_ids(url: &str) -> Vec<String> {
    let tools = get_json(&format!("{url}/tools")).await;
    tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_owned())
        .collect()
}

async fn call(http: &reqwest::Client, url: &str, tool: &str, input: Value) -> (u16, Value) {
    let response = http
        .post(format!("{url}/tools/call"))
        .json(&json!({"tool_id": tool, "input": input}))
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

#[tokio::test]
async fn watched_config_changes_apply_the_difference_under_load() {
    let dir = otc_tests::scratch::dir("bridge-reload");
    let config = dir.join("bridge.yaml");
    write(
        &config,
        &[source("one", ""), source("two", ""), source("three", "")],
    );
    let mut bridge = Running::spawn(
        &[
            "--config",
            config.to_str().unwrap(),
            "--watch",
            "--listen",
            "127.0.0.1:0",
        ],
        &[],
    );
    let url = bridge.url().await;
    let pid = bridge.child.id().unwrap();
    let one = child_pid(pid, "one").expect("source one's child");
    let two = child_pid(pid, "two").expect("source two's child");
    let three = child_pid(pid, "three").expect("source three's child");

    // Load on the source that does not change: 8 callers until the end (bounded, loopback).
    let http = reqwest::Client::new();
    let stop = Arc::new(AtomicBool::new(false));
    let (ok, failed) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let load: Vec<_> = (0..8)
        .map(|_| {
            let (http, url, stop) = (http.clone(), url.clone(), Arc::clone(&stop));
            let (ok, failed) = (Arc::clone(&ok), Arc::clone(&failed));
            tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    let (status, body) =
                        call(&http, &url, "One.Echo", json!({"message": "x"})).await;
                    if status == 200 && body["success"] == true {
                        ok.fetch_add(1, Ordering::Relaxed);
                    } else {
                        failed.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    // A call in flight on a source about to be removed finishes.
    let in_flight = {
        let (http, url) = (http.clone(), url.clone());
        tokio::spawn(async move { call(&http, &url, "Two.Slow", json!({"ms": 1500})).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;

    // one unchanged, two removed, three changed, four added.
    write(
        &config,
        &[
            source("one", ""),
            source("three", "    exclude: [crash]\n"),
            source("four", ""),
        ],
    );
    let line = bridge.wait_for("reloaded").await;
    assert!(
        line.contains("added [four], changed [three], removed [two], unchanged [one]"),
        "{line}"
    );
    let ids = tool_ids(&url).await;
    assert!(ids.iter().any(|id| id.starts_with("Four.")), "{ids:?}");
    assert!(!ids.iter().any(|id| id.starts_with("Two.")), "{ids:?}");
    assert!(!ids.contains(&"Three.Crash@2.1.0".to_owned()), "{ids:?}");
    assert!(ids.contains(&"Three.Echo@2.1.0".to_owned()), "{ids:?}");
    assert_eq!(
        child_pid(pid, "one"),
        Some(one),
        "the unchanged source was restarted"
    );
    // The changed source's old child is stopped once its calls are done; a new one serves.
    let replaced = async {
        loop {
            let threes = child_pids(pid, "three");
            if threes.len() == 1 && threes[0] != three {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(15), replaced)
        .await
        .expect("the changed source's old child still runs");
    let (status, body) = in_flight.await.unwrap();
    assert_eq!((status, &body["success"]), (200, &json!(true)), "{body}");
    // Once its call is done, the removed source's child is stopped.
    let gone = async {
        while child_pid(pid, "two") == Some(two) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(15), gone)
        .await
        .expect("the removed source's child still runs");

    // A configuration that does not parse changes nothing.
    std::fs::write(&config, "sources: [this is not: valid").unwrap();
    let line = bridge.wait_for("reload failed").await;
    assert!(line.contains("previous configuration"), "{line}");
    // Nor does one whose new source cannot start.
    write(
        &config,
        &[
            source("one", ""),
            source("three", "    exclude: [crash]\n"),
            source("four", ""),
            "  - type: mcp\n    name: broken\n    transport: {type: stdio, command: /no/such/mcp-server}\n".to_owned(),
        ],
    );
    let line = bridge.wait_for("reload failed").await;
    assert!(
        line.contains("broken") && line.contains("nothing changed"),
        "{line}"
    );
    assert_eq!(tool_ids(&url).await, ids);
    assert_eq!(child_pid(pid, "one"), Some(one));

    stop.store(true, Ordering::Relaxed);
    for task in load {
        task.await.unwrap();
    }
    assert_eq!(
        failed.load(Ordering::Relaxed),
        0,
        "calls to the unchanged source failed"
    );
    assert!(ok.load(Ordering::Relaxed) > 50, "the load did not run");
    bridge.interrupt().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn sighup_reloads_the_config_file() {
    let dir = otc_tests::scratch::dir("bridge-sighup");
    let config = dir.join("bridge.yaml");
    write(&config, &[source("one", "")]);
    let mut bridge = Running::spawn(
        &[
            "--config",
            config.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
        ],
        &[],
    );
    let url = bridge.url().await;
    write(&config, &[source("one", ""), source("two", "")]);
    // Without --watch, nothing happens until the signal.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!tool_ids(&url).await.iter().any(|id| id.starts_with("Two.")));
    bridge.hangup();
    let line = bridge.wait_for("reloaded").await;
    assert!(line.contains("added [two]"), "{line}");
    assert!(tool_ids(&url).await.iter().any(|id| id.starts_with("Two.")));
    bridge.interrupt().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// What replaces a configuration file under a running bridge.
enum Hostile<'t> {
    Text(&'t str),
    Fifo,
    DevZero,
}

impl Hostile<'_> {
    fn put(&self, config: &Path) {
        match self {
            // Written whole and renamed over, as editors do.
            Self::Text(text) => {
                let tmp = config.with_extension("tmp");
                std::fs::write(&tmp, text).unwrap();
                std::fs::rename(&tmp, config).unwrap();
            }
            Self::Fifo => {
                std::fs::remove_file(config).unwrap();
                let made = std::process::Command::new("mkfifo")
                    .arg(config)
                    .status()
                    .unwrap();
                assert!(made.success());
            }
            Self::DevZero => {
                std::fs::remove_file(config).unwrap();
                std::os::unix::fs::symlink("/dev/zero", config).unwrap();
            }
        }
    }
}

#[tokio::test]
async fn issue_25_a_hostile_config_swapped_in_changes_nothing_and_the_bridge_answers() {
    let dir = otc_tests::scratch::dir("bridge-issue25-reload");
    let config = dir.join("bridge.yaml");
    let notes = "sources:\n  - type: openapi\n    name: notes\n    spec: bridge/src/demo/openapi.yaml\n    base_url: http://127.0.0.1:9/\n";
    std::fs::write(&config, notes).unwrap();
    // Bounded: a bridge that reads the bomb without bound dies of it.
    let mut bridge = Running::spawn_bounded(&[
        "--config",
        config.to_str().unwrap(),
        "--listen",
        "127.0.0.1:0",
    ]);
    let url = bridge.url().await;
    let served = tool_ids(&url).await;
    assert!(!served.is_empty());

    let bomb = format!(
        "sources:\n  - &a [{}]\n  - [{}]\n",
        vec!["abcdefghij"; 5_000].join(","),
        vec!["*a"; 5_000].join(",")
    );
    let deep = format!("sources: {}{}\n", "[".repeat(10_000), "]".repeat(10_000));
    for (expected, hostile) in [
        ("its YAML aliases expand", Hostile::Text(&bomb)),
        ("nests more than 150 levels", Hostile::Text(&deep)),
        ("it is a FIFO", Hostile::Fifo),
        ("it is a character device", Hostile::DevZero),
    ] {
        hostile.put(&config);
        bridge.hangup();
        let line = bridge.wait_for("reload failed").await;
        assert!(
            line.contains(expected) && line.contains("still serving the previous"),
            "{line}"
        );
        let health = reqwest::get(format!("{url}/health")).await.unwrap();
        assert_eq!(health.status(), 200);
        assert_eq!(tool_ids(&url).await, served);
    }
    // And a sane file reloads as ever.
    std::fs::remove_file(&config).unwrap();
    std::fs::write(&config, "sources: []\n").unwrap();
    bridge.hangup();
    let line = bridge.wait_for("reloaded").await;
    assert!(line.contains("removed [notes]"), "{line}");
    bridge.interrupt().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn issue_25_sighup_while_starting_does_not_stop_the_bridge_and_reloads_once_serving() {
    let dir = otc_tests::scratch::dir("bridge-issue25-start");
    let config = dir.join("bridge.yaml");
    // A source slow to start: the demo's MCP server (in the binary itself), two seconds late.
    std::fs::write(
        &config,
        format!(
            "sources:\n  - type: mcp\n    name: slow\n    transport:\n      type: stdio\n      command: sh\n      args: [-c, 'sleep 2; exec \"$0\" demo-mcp-server', {}]\n",
            bridge_bin().display()
        ),
    )
    .unwrap();
    let mut bridge = Running::spawn(
        &[
            "--config",
            config.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
        ],
        &[],
    );
    bridge.wait_for("loading slow").await;
    bridge.hangup();
    let url = bridge.url().await;
    let line = bridge.wait_for("reloaded").await;
    assert!(line.contains("unchanged [slow]"), "{line}");
    assert!(!tool_ids(&url).await.is_empty());
    bridge.interrupt().await;
    let _ = std::fs::remove_dir_all(&dir);
}
