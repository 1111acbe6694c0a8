//! Real MCP upstreams for the tests: the workspace's `example-mcp-server` (as a stdio child, over
//! streamable HTTP and over legacy SSE on loopback) and third-party servers installed by
//! `scripts/install-mcp-servers.sh` into `$OTC_CORPUS_DIR/mcp`.
//!
//! The example server is a binary of another workspace package, so `CARGO_BIN_EXE_*` does not
//! reach it; [`otc_fixtures::workspace_bin`] builds it once per test process.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

const BIN: &str = "example-mcp-server";

/// The path of the example server binary, built (or brought up to date) once per test process
/// with `cargo build -p example-mcp-server`, so a stale binary is never tested.
pub fn example_server_bin() -> PathBuf {
    otc_fixtures::workspace_bin(BIN, BIN)
}

/// The pids of a process's children (all its threads' children, from `/proc`).
pub fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|list| {
            list.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// The example server's stdio command line, as `--mcp` takes it (quoted for `shlex`).
pub fn example_server_command() -> String {
    let bin = example_server_bin();
    shell_quote(&bin.to_string_lossy())
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// A server process listening on loopback; killed when dropped.
#[derive(Debug)]
pub struct HttpUpstream {
    /// Where it listens (`…/mcp` or `…/sse`).
    pub url: String,
    child: Child,
}

impl HttpUpstream {
    /// The server's pid.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }
}

/// Starts the example server with `--http` (streamable HTTP) or `--sse` (legacy) on
/// `127.0.0.1:0` and reads the URL it prints.
pub async fn spawn_example_http(flag: &str) -> HttpUpstream {
    spawn_example_http_with(flag, &[]).await
}

/// [`spawn_example_http`] with more of the example server's options (`--era legacy`, …).
pub async fn spawn_example_http_with(flag: &str, options: &[&str]) -> HttpUpstream {
    let mut child = Command::new(example_server_bin())
        .args([flag, "127.0.0.1:0"])
        .args(options)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("cannot start the example MCP server");
    let stdout = child.stdout.take().expect("stdout is piped");
    let mut lines = BufReader::new(stdout).lines();
    let url = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .expect("the example server did not print its URL in time")
        .expect("cannot read the example server's stdout")
        .expect("the example server exited before printing its URL");
    HttpUpstream { url, child }
}

/// Whether a process exists (and is not a zombie waiting to be reaped).
pub fn pid_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // Field 3 is the state; after the `(comm)` field, which may hold spaces.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// Waits until the process is gone; false if it is still alive after `timeout`.
pub async fn wait_pid_gone(pid: u32, timeout: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + timeout;
    while pid_alive(pid) {
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        // Polling /proc is the only portable way to watch a process we do not own.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    true
}

/// The installed `@modelcontextprotocol/server-everything` launcher, when the corpus is
/// installed (`None` and a note otherwise; a failure under CI, see [`otc_fixtures::corpus_dir`]).
pub fn everything_bin() -> Option<PathBuf> {
    let dir = otc_fixtures::corpus_dir()?;
    let bin = dir.join("mcp/everything/node_modules/.bin/mcp-server-everything");
    assert!(
        bin.is_file(),
        "{} is missing: run scripts/install-mcp-servers.sh",
        bin.display()
    );
    Some(bin)
}
