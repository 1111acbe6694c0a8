//! Spawning and stopping an MCP server child process, so that no child outlives its session.
//!
//! The child is spawned without a shell, in a **new process group** whose id is its pid, with
//! piped stdin/stdout (the JSON-RPC transport) and stderr (forwarded to the log, prefixed with
//! the source name and rate-limited). A watcher task owns the process and:
//!
//! - reports its exit status on a `watch` channel (so a call that lost its transport can tell a
//!   crash with an exit code from a dropped connection);
//! - on [`ChildProcess::stop`] sends `SIGTERM` to the whole group, waits a grace period, then
//!   `SIGKILL`s the group; dropping the [`ChildProcess`] handle kills the group at once;
//! - after the leader exited, kills what is left of the group (a wrapper like `npx` leaves its
//!   real server behind otherwise);
//! - holds a guard that kills the group when the task itself is dropped (runtime shutdown).
//!
//! Remaining gap: if the bridge is killed with `SIGKILL` (or crashes without unwinding), nothing
//! in the bridge runs. Linux's `PR_SET_PDEATHSIG` would cover that, but it has to be set between
//! `fork` and `exec`, which needs `unsafe` (forbidden in this workspace). What remains is the MCP
//! stdio contract: the child's stdin closes when the bridge dies, and a conforming server exits on
//! end of input (the example server and the reference servers do).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::sync::{oneshot, watch};

use crate::AdapterError;

/// The longest stderr line logged; longer ones are cut.
const MAX_STDERR_LINE: usize = 4096;

/// What to run.
#[derive(Debug, Clone)]
pub(crate) struct ChildSpec {
    /// The source name, for log lines.
    pub source: String,
    /// Program and arguments, already split.
    pub argv: Vec<String>,
    /// Extra environment.
    pub env: BTreeMap<String, String>,
    /// Working directory.
    pub cwd: Option<PathBuf>,
    /// Log at most this many stderr lines per second.
    pub stderr_lines_per_sec: u32,
}

/// A running child and the means to stop it. Dropping it kills the process group.
#[derive(Debug)]
pub(crate) struct ChildProcess {
    pid: u32,
    exit: watch::Receiver<Option<ExitStatus>>,
    stop: Option<oneshot::Sender<Duration>>,
}

impl ChildProcess {
    /// Spawns the child; returns it with its stdout (read side) and stdin (write side).
    pub(crate) fn spawn(spec: &ChildSpec) -> Result<(Self, ChildStdout, ChildStdin), AdapterError> {
        let (program, args) = spec
            .argv
            .split_first()
            .ok_or_else(|| AdapterError::setup("the MCP command is empty"))?;
        let mut command = Command::new(program);
        command
            .args(args)
            .envs(&spec.env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        if let Some(cwd) = &spec.cwd {
            command.current_dir(cwd);
        }
        let mut child = command.spawn().map_err(|e| AdapterError::Setup {
            message: format!(
                "cannot start the MCP server `{}`: {}",
                spec.argv.join(" "),
                spawn_reason(&e, program)
            ),
            source: Some(Box::new(e)),
        })?;
        let (Some(pid), Some(stdin), Some(stdout), Some(stderr)) = (
            child.id(),
            child.stdin.take(),
            child.stdout.take(),
            child.stderr.take(),
        ) else {
            return Err(AdapterError::setup(format!(
                "the MCP server `{program}` exited before it could be connected"
            )));
        };
        tokio::spawn(forward_stderr(
            spec.source.clone(),
            stderr,
            spec.stderr_lines_per_sec,
        ));
        let (exit_tx, exit) = watch::channel(None);
        let (stop, stop_rx) = oneshot::channel();
        tokio::spawn(watch_child(child, pid, stop_rx, exit_tx));
        Ok((
            Self {
                pid,
                exit,
                stop: Some(stop),
            },
            stdout,
            stdin,
        ))
    }

    /// The child's pid (also its process group id).
    pub(crate) fn pid(&self) -> u32 {
        self.pid
    }

    /// A receiver that holds the exit status once the child exited.
    pub(crate) fn exit(&self) -> watch::Receiver<Option<ExitStatus>> {
        self.exit.clone()
    }

    /// Stops the group: `SIGTERM`, then `SIGKILL` after `grace`; returns once the leader exited.
    pub(crate) async fn stop(mut self, grace: Duration) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(grace);
        }
        let mut exit = self.exit.clone();
        let _ = exit.wait_for(Option::is_some).await;
    }
}

/// Why a spawn failed, in words that name the fix.
fn spawn_reason(error: &std::io::Error, program: &str) -> String {
    match error.kind() {
        std::io::ErrorKind::NotFound => format!("`{program}` was not found (check PATH)"),
        std::io::ErrorKind::PermissionDenied => format!("`{program}` is not executable"),
        _ => error.to_string(),
    }
}

/// Kills the group when dropped, so the group dies with the task that owns it.
struct GroupGuard(Pid);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        // ESRCH (group already gone) is the normal case.
        let _ = killpg(self.0, Signal::SIGKILL);
    }
}

async fn watch_child(
    mut child: Child,
    pid: u32,
    mut stop: oneshot::Receiver<Duration>,
    exit: watch::Sender<Option<ExitStatus>>,
) {
    let Ok(raw) = i32::try_from(pid) else { return };
    let group = GroupGuard(Pid::from_raw(raw));
    let status = tokio::select! {
        status = child.wait() => status,
        request = &mut stop => {
            // A dropped handle (Err) means "kill now"; a stop request gets its grace period.
            match request {
                Ok(grace) if !grace.is_zero() => {
                    let _ = killpg(group.0, Signal::SIGTERM);
                    match tokio::time::timeout(grace, child.wait()).await {
                        Ok(status) => status,
                        Err(_) => {
                            let _ = killpg(group.0, Signal::SIGKILL);
                            child.wait().await
                        }
                    }
                }
                _ => {
                    let _ = killpg(group.0, Signal::SIGKILL);
                    child.wait().await
                }
            }
        }
    };
    drop(group);
    match status {
        Ok(status) => {
            exit.send_replace(Some(status));
        }
        Err(error) => {
            tracing::warn!(pid, %error, "Cannot wait for the MCP server process.");
            exit.send_replace(Some(ExitStatus::default()));
        }
    }
}

/// Logs the child's stderr line by line, at most `per_sec` lines per second; lines over the
/// budget are counted and the count is logged when the next second starts.
async fn forward_stderr(source: String, stderr: ChildStderr, per_sec: u32) {
    let mut reader = BufReader::new(stderr);
    let mut buf = Vec::new();
    let mut window = Instant::now();
    let mut logged = 0u32;
    let mut dropped = 0u64;
    // Bytes, not `lines()`: a line that is not UTF-8 must not stop the reading (a child whose
    // stderr pipe fills up blocks).
    while matches!(reader.read_until(b'\n', &mut buf).await, Ok(n) if n > 0) {
        let line = String::from_utf8_lossy(&buf).trim_end().to_owned();
        buf.clear();
        if window.elapsed() >= Duration::from_secs(1) {
            if dropped > 0 {
                tracing::warn!(upstream = %source, dropped, "[{source}] stderr: {dropped} lines not logged (rate limit)");
            }
            window = Instant::now();
            logged = 0;
            dropped = 0;
        }
        if logged >= per_sec {
            dropped += 1;
            continue;
        }
        logged += 1;
        let line = cut(&line, MAX_STDERR_LINE);
        tracing::info!(upstream = %source, "[{source}] {line}");
    }
    if dropped > 0 {
        tracing::warn!(upstream = %source, dropped, "[{source}] stderr: {dropped} lines not logged (rate limit)");
    }
}

fn cut(line: &str, max: usize) -> &str {
    if line.len() <= max {
        return line;
    }
    let mut end = max;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    &line[..end]
}
