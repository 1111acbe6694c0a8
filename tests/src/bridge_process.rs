//! The real `otc-bridge` binary as a child process: started with its stdout read line by line
//! ([`Running`], [`spawn_bridge`]) and stopped with SIGINT like a person pressing Ctrl-C, or run
//! to completion ([`run`], [`run_bounded`]). The working directory is the repository root, so
//! paths in arguments read as the README writes them.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStdout, Command};

/// The `otc-bridge` binary, built (or brought up to date) once per test process with
/// [`otc_fixtures::workspace_bin`], so a stale binary is never tested (`CARGO_BIN_EXE_*` only
/// reaches the binaries of the package under test).
pub fn bridge_bin() -> PathBuf {
    otc_fixtures::workspace_bin("otc-bridge", "otc-bridge")
}

/// The repository root (README paths are relative to it).
pub fn repo_root() -> PathBuf {
    otc_fixtures::workspace_root().to_owned()
}

/// A running `otc-bridge` process. Killed when dropped.
#[derive(Debug)]
pub struct Running {
    /// The process.
    pub child: Child,
    /// Its stdout, not yet read.
    pub lines: Lines<BufReader<ChildStdout>>,
    /// The stdout lines read so far.
    pub seen: Vec<String>,
}

impl Running {
    /// Starts the binary with `args` and extra environment `env`; its log (stderr) goes to the
    /// test's.
    pub fn spawn(args: &[&str], env: &[(&str, &str)]) -> Self {
        Self::spawn_with_stderr(args, env, Stdio::inherit())
    }

    /// The bridge serving the configuration file `config` on a free loopback port, logging at
    /// `warn`, with extra environment `env` (the keys the file names).
    pub fn serving(config: &std::path::Path, env: &[(&str, &str)]) -> Self {
        let config = config.to_str().expect("a UTF-8 path");
        Self::spawn(
            &[
                "--listen",
                "127.0.0.1:0",
                "--config",
                config,
                "--log-level",
                "warn",
            ],
            env,
        )
    }

    /// As [`Self::spawn`], under [`MEMORY_LIMIT_KB`] of address space: a bridge that reads
    /// without bound dies of it here instead of exhausting the machine.
    pub fn spawn_bounded(args: &[&str]) -> Self {
        let mut command = bounded(args);
        command
            .current_dir(repo_root())
            .stdin(Stdio::null())
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
    pub fn spawn_with_stderr(
        args: &[&str],
        env: &[(&str, &str)],
        stderr: impl Into<Stdio>,
    ) -> Self {
        let mut command = Command::new(bridge_bin());
        command
            .args(args)
            .current_dir(repo_root())
            .stdin(Stdio::null())
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

    /// Sends it SIGHUP (reload), as `kill -HUP` does.
    pub fn hangup(&self) {
        let pid = self.child.id().unwrap().to_string();
        assert!(
            std::process::Command::new("kill")
                .args(["-HUP", &pid])
                .status()
                .unwrap()
                .success()
        );
    }

    /// Reads stdout until a line contains `needle`; returns that line.
    pub async fn wait_for(&mut self, needle: &str) -> String {
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
    pub async fn url(&mut self) -> String {
        let line = self.wait_for("listening on").await;
        let start = line.find("http://").unwrap();
        line[start..].split_whitespace().next().unwrap().to_owned()
    }

    /// The process, with the rest of its stdout drained in the background (so it never blocks
    /// on a full pipe).
    pub fn into_child(self) -> Child {
        let mut lines = self.lines;
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        self.child
    }

    /// Sends SIGINT and waits for a clean exit.
    pub async fn interrupt(mut self) {
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
pub fn run(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(bridge_bin())
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
pub const MEMORY_LIMIT_KB: u64 = 1024 * 1024;

/// The binary with `args`, run by `sh` under [`MEMORY_LIMIT_KB`] (`exec`: the pid is the bridge's).
fn bounded(args: &[&str]) -> Command {
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(format!("ulimit -v {MEMORY_LIMIT_KB} && exec \"$0\" \"$@\""))
        .arg(bridge_bin())
        .args(args);
    command
}

/// Runs the binary to completion under [`MEMORY_LIMIT_KB`] and a 60 s deadline (a hang fails the
/// test instead of holding it): (exit code, stdout, stderr).
pub async fn run_bounded(args: &[&str]) -> (i32, String, String) {
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

/// The binary started with `--listen 127.0.0.1:0`, `args` and extra environment `env`, its log
/// discarded: the process (killed when dropped) and the URL it listens on.
pub async fn spawn_bridge(args: &[&str], env: &[(&str, &str)]) -> (Child, String) {
    let mut all = vec!["--listen", "127.0.0.1:0"];
    all.extend_from_slice(args);
    let mut bridge = Running::spawn_with_stderr(&all, env, Stdio::null());
    let url = bridge.url().await;
    (bridge.into_child(), url)
}
