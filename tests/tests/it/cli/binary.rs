//! Running the real binary: a child process whose stdout is read line by line, stopped with
//! SIGINT like a person pressing Ctrl-C.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStdout, Command};

/// The `otc-bridge` binary, built fresh once per test process (`CARGO_BIN_EXE_*` only reaches
/// the binaries of the package under test).
pub(crate) fn bin() -> PathBuf {
    otc_tests::upstream_mcp::bridge_bin()
}

/// The repository root (README paths are relative to it).
pub(crate) fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

/// Where the README and `examples/config/bridge.yaml` say the example MCP server is, relative
/// to the repository root.
const EXAMPLE_SERVER: &str = "target/debug/example-mcp-server";

/// The example MCP server, built (or brought up to date) once per test process, so a stale
/// binary is never tested; returns [`EXAMPLE_SERVER`], which names the binary just built.
pub(crate) fn example_server() -> &'static str {
    let built = otc_fixtures::workspace_bin("example-mcp-server", "example-mcp-server");
    assert_eq!(
        built,
        repo_root().join(EXAMPLE_SERVER),
        "the README's commands name {EXAMPLE_SERVER}: run the tests with the default target directory"
    );
    EXAMPLE_SERVER
}

/// A running `otc-bridge` process.
pub(crate) struct Running {
    pub(crate) child: Child,
    pub(crate) lines: Lines<BufReader<ChildStdout>>,
    pub(crate) seen: Vec<String>,
}

impl Running {
    pub(crate) fn spawn(args: &[&str], env: &[(&str, &str)]) -> Self {
        Self::spawn_with_stderr(args, env, Stdio::inherit())
    }

    /// As [`Self::spawn`], under [`MEMORY_LIMIT_KB`] of address space: a bridge that reads
    /// without bound dies of it here instead of exhausting the machine.
    pub(crate) fn spawn_bounded(args: &[&str]) -> Self {
        let mut command = bounded(args);
        command
            .current_dir(repo_root())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        let mut child = command.spawn().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Self {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// As [`Self::spawn`], with the log (stderr) sent to `stderr`: a test that reads it.
    pub(crate) fn spawn_with_stderr(
        args: &[&str],
        env: &[(&str, &str)],
        stderr: impl Into<Stdio>,
    ) -> Self {
        let mut command = Command::new(bin());
        command
            .args(args)
            .current_dir(repo_root())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .kill_on_drop(true);
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = command.spawn().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Self {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Reads stdout until a line contains `needle`; returns that line.
    pub(crate) async fn wait_for(&mut self, needle: &str) -> String {
        let read = async {
            while let Some(line) = self.lines.next_line().await.unwrap() {
                self.seen.push(line.clone());
                if line.contains(needle) {
                    return line;
                }
            }
            panic!(
                "stdout ended before {needle:?}; saw:\n{}",
                self.seen.join("\n")
            );
        };
        tokio::time::timeout(Duration::from_secs(60), read)
            .await
            .unwrap_or_else(|_| panic!("no {needle:?} within 60 s"))
    }

    /// The URL from the `listening on http://…` line.
    pub(crate) async fn url(&mut self) -> String {
        let line = self.wait_for("listening on").await;
        let start = line.find("http://").unwrap();
        line[start..].split_whitespace().next().unwrap().to_owned()
    }

    /// Sends SIGINT and waits for a clean exit.
    pub(crate) async fn interrupt(mut self) {
        let pid = self.child.id().unwrap();
        let status = std::process::Command::new("kill")
            .args(["-INT", &pid.to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let exit = tokio::time::timeout(Duration::from_secs(30), self.child.wait())
            .await
            .unwrap()
            .unwrap();
        assert!(exit.success(), "exit status {exit}");
    }
}

/// Runs the binary to completion: (exit code, stdout, stderr).
pub(crate) fn run(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(bin())
        .args(args)
        .current_dir(repo_root())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The address space a bounded run may use: ample for any command on sane input (the bridge
/// serving the demo uses a fraction), a few times what an unbounded read of a hostile file gets
/// to before it fails.
pub(crate) const MEMORY_LIMIT_KB: u64 = 1024 * 1024;

/// The binary with `args`, run by `sh` under [`MEMORY_LIMIT_KB`] (`exec`: the pid is the bridge's).
fn bounded(args: &[&str]) -> Command {
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(format!("ulimit -v {MEMORY_LIMIT_KB} && exec \"$0\" \"$@\""))
        .arg(bin())
        .args(args);
    command
}

/// Runs the binary to completion under [`MEMORY_LIMIT_KB`] and a 60 s deadline (a hang fails the
/// test instead of holding it): (exit code, stdout, stderr).
pub(crate) async fn run_bounded(args: &[&str]) -> (i32, String, String) {
    let mut command = bounded(args);
    command.current_dir(repo_root()).kill_on_drop(true);
    let out = tokio::time::timeout(Duration::from_secs(60), command.output())
        .await
        .unwrap_or_else(|_| panic!("otc-bridge {args:?} did not finish within 60 s"))
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A port free on loopback now (for a server that must be told its port up front).
pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .unwrap()
}

/// `GET url`, as JSON.
pub(crate) async fn get_json(url: &str) -> serde_json::Value {
    reqwest::get(url).await.unwrap().json().await.unwrap()
}

/// `POST {url}/tools/call` with `body` through `http` (a test that needs its connection kept
/// passes its own client); the answer's JSON.
pub(crate) async fn call_tool(
    http: &reqwest::Client,
    url: &str,
    body: &serde_json::Value,
) -> serde_json::Value {
    http.post(format!("{url}/tools/call"))
        .json(body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// One JSON-RPC message posted to `{url}/mcp` as an MCP host posts it; the reply (the first
/// JSON line, so an event stream's `data:` works as well as a JSON body).
pub(crate) async fn post_mcp(url: &str, body: &serde_json::Value) -> serde_json::Value {
    let text = reqwest::Client::new()
        .post(format!("{url}/mcp"))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .json(body)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let json = &text[text.find('{').unwrap()..];
    serde_json::from_str(json.lines().next().unwrap()).unwrap()
}
