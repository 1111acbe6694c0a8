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
//! **The bridge dies without running any code** (`SIGKILL`, a crash, `std::process::exit`;
//! issue 8, defect 11). Nothing in the bridge runs then, and ending the child's stdin is not
//! enough: a server may ignore end of input, and its own children (`npx` → `node`) never see it.
//! So each child gets a **watchdog**: a `/bin/sh` running a fixed two-line script, in its own
//! process group, whose stdin is a pipe only the bridge holds. The kernel closes that pipe
//! whenever the bridge dies, however it dies; the watchdog's `read` then returns and it sends
//! `SIGKILL` to the child's whole process group. On a normal stop the bridge kills the watchdog
//! itself. We chose this over `PR_SET_PDEATHSIG`, which needs `unsafe` in `pre_exec`, fires when
//! the *thread* that spawned the child ends (tokio's threads come and go), and reaches the child
//! only, not its children.
//!
//! Remaining gaps, on purpose: a grandchild that leaves the process group (`setsid`,
//! `setpgid`, a daemonising server) escapes, as it escapes `killpg` everywhere (only a cgroup
//! would hold it); if `/bin/sh` is missing (a distroless image) the child runs without a
//! watchdog and a warning is logged; between spawning the child and its watchdog there is a
//! window of a few microseconds.
//!
//! **Environment** (issue 8, defect 2): the child starts from an empty environment, gets the
//! variables in [`PASSED_ENV`] from the bridge's, then the source's `env:`. With `inherit_env`
//! it gets the bridge's whole environment instead; in both cases never a variable named in
//! [`ChildSpec::secret_env`].

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::sync::{oneshot, watch};

use crate::AdapterError;

/// The longest stderr line logged; longer ones are cut.
const MAX_STDERR_LINE: usize = 4096;

/// What a child gets from the bridge's environment by default, each with why it is there. A name
/// ending in `*` is a prefix. None of these holds a credential by convention; proxy variables
/// (`HTTPS_PROXY=http://user:password@…`) are left out for that reason: give them in `env:`.
pub(crate) const PASSED_ENV: &[(&str, &str)] = &[
    (
        "PATH",
        "finding programs: `npx`, `uvx`, `node` and whatever they start",
    ),
    (
        "HOME",
        "per-user configuration and caches (npm's, uv's, pip's)",
    ),
    (
        "USER",
        "who runs the server; tools read it instead of asking the system",
    ),
    ("LOGNAME", "the same, under its POSIX name"),
    (
        "LANG",
        "the locale: encoding of arguments, file names and output",
    ),
    ("LC_*", "the locale's categories (LC_ALL, LC_CTYPE, …)"),
    ("TZ", "the time zone of the server's time stamps"),
    (
        "TERM",
        "some command-line programs refuse to start without it",
    ),
    ("TMPDIR", "where temporary files go"),
    (
        "SHELL",
        "servers that run commands through the user's shell",
    ),
    (
        "XDG_*",
        "base directories of configuration, caches, data and runtime files",
    ),
];

/// Whether `name` is in [`PASSED_ENV`].
fn passed_by_default(name: &str) -> bool {
    PASSED_ENV
        .iter()
        .any(|(pattern, _)| match pattern.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => name == *pattern,
        })
}

/// The child's whole environment: from `bridge` (the bridge's own variables), those allowed by
/// [`PASSED_ENV`] (or all with `inherit`), never one named in `secret`, then `extra` (`env:`).
fn child_env(
    bridge: impl IntoIterator<Item = (OsString, OsString)>,
    inherit: bool,
    secret: &BTreeSet<String>,
    extra: &BTreeMap<String, String>,
) -> BTreeMap<OsString, OsString> {
    let mut env: BTreeMap<OsString, OsString> = bridge
        .into_iter()
        .filter(|(name, _)| {
            // A name that is not UTF-8 is nothing we configured or allow-listed.
            name.to_str()
                .is_some_and(|name| !secret.contains(name) && (inherit || passed_by_default(name)))
        })
        .collect();
    env.extend(
        extra
            .iter()
            .map(|(name, value)| (OsString::from(name), OsString::from(value))),
    );
    env
}

/// The watchdog's script: wait for end of input (the bridge died or let go), then kill the
/// group named by `$1`. `read` and `kill` are shell builtins, so it needs no `PATH`.
const WATCHDOG_SCRIPT: &str = r#"read -r _; kill -s KILL -- "-$1""#;

/// How many bytes the pipe of a child's stdout holds (Linux's default: 64 KiB). A large answer
/// (an 11 MB structured result) crossed a 64 KiB pipe in about 170 turns of the child writing
/// until the pipe is full and the bridge reading it empty, each a pair of wake-ups; with
/// 256 KiB, `cargo run --release -p otc-bridge --example mcp_cut_peak` went from typically 24-29
/// to 19-24 ms per call.
#[cfg(target_os = "linux")]
const STDOUT_PIPE_BYTES: i32 = 256 * 1024;

/// How many children's pipes are wide at once, at most: 16 MiB in all, a quarter of a user's
/// default allowance for pipes (64 MiB). Past the allowance the kernel gives every new pipe of
/// that user a page or two, the bridge's and other programs' alike; a bridge with more stdio
/// servers than this gives the others the default.
#[cfg(target_os = "linux")]
const WIDE_PIPES: usize = 64;

/// Children whose stdout pipe is wide now.
#[cfg(target_os = "linux")]
static WIDE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// One of the [`WIDE_PIPES`], held by its child for as long as the child runs.
#[derive(Debug)]
struct WidePipe;

impl Drop for WidePipe {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        WIDE.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Gives the child's stdout pipe [`STDOUT_PIPE_BYTES`] while fewer than [`WIDE_PIPES`] are, and
/// the system allows it; otherwise the pipe keeps its default, which only costs time.
fn widen(stdout: &tokio::process::ChildStdout) -> Option<WidePipe> {
    #[cfg(target_os = "linux")]
    {
        use std::sync::atomic::Ordering;
        if WIDE.fetch_add(1, Ordering::Relaxed) >= WIDE_PIPES {
            WIDE.fetch_sub(1, Ordering::Relaxed);
            return None;
        }
        let wide = WidePipe;
        match nix::fcntl::fcntl(
            stdout,
            nix::fcntl::FcntlArg::F_SETPIPE_SZ(STDOUT_PIPE_BYTES),
        ) {
            Ok(_) => Some(wide),
            Err(error) => {
                tracing::debug!(%error, "Cannot widen the pipe of an MCP server's stdout; it keeps its size.");
                None
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = stdout;
        None
    }
}

/// Starts the watchdog of process group `pgid` (see the module docs), or says why it cannot.
fn spawn_watchdog(pgid: u32) -> std::io::Result<Child> {
    Command::new("/bin/sh")
        .args([
            "-c",
            WATCHDOG_SCRIPT,
            "otc-bridge-watchdog",
            &pgid.to_string(),
        ])
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // Its own group: a terminal's Ctrl-C must not take it away before the bridge's
        // orderly shutdown, nor may the child's group kill include it.
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
}

/// What to run.
#[derive(Debug, Clone)]
pub(crate) struct ChildSpec {
    /// The source name, for log lines.
    pub source: String,
    /// Program and arguments, already split.
    pub argv: Vec<String>,
    /// Extra environment (`env:`).
    pub env: BTreeMap<String, String>,
    /// Pass the bridge's whole environment (less `secret_env`) instead of [`PASSED_ENV`].
    pub inherit_env: bool,
    /// Variables the bridge reads secrets from; never passed.
    pub secret_env: BTreeSet<String>,
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
    /// Its stdout pipe's place among the wide ones, when it has one.
    _wide_pipe: Option<WidePipe>,
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
            .env_clear()
            .envs(child_env(
                std::env::vars_os(),
                spec.inherit_env,
                &spec.secret_env,
                &spec.env,
            ))
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
        let wide_pipe = widen(&stdout);
        let watchdog = match spawn_watchdog(pid) {
            Ok(watchdog) => Some(watchdog),
            Err(error) => {
                tracing::warn!(upstream = %spec.source, %error, "Cannot start the watchdog of the MCP server: it may outlive a killed bridge.");
                None
            }
        };
        tokio::spawn(forward_stderr(
            spec.source.clone(),
            stderr,
            spec.stderr_lines_per_sec,
        ));
        let (exit_tx, exit) = watch::channel(None);
        let (stop, stop_rx) = oneshot::channel();
        tokio::spawn(watch_child(child, watchdog, pid, stop_rx, exit_tx));
        Ok((
            Self {
                pid,
                exit,
                stop: Some(stop),
                _wide_pipe: wide_pipe,
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
    watchdog: Option<Child>,
    pid: u32,
    mut stop: oneshot::Receiver<Duration>,
    exit: watch::Sender<Option<ExitStatus>>,
) {
    let Ok(raw) = i32::try_from(pid) else { return };
    let group = GroupGuard(Pid::from_raw(raw));
    // Dropped (so killed: `kill_on_drop`) with this task, after the group; never earlier, since
    // its end of input is what tells it to kill the group.
    let mut watchdog = watchdog;
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
    if let Some(watchdog) = watchdog.as_mut() {
        // The group is gone; the watchdog must not live on to kill a reused group id.
        let _ = watchdog.kill().await;
    }
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
    // At most MAX_STDERR_LINE bytes of a line are kept: the rest of a longer one is skipped, so
    // a child writing one endless line costs no memory (the same reason as the message cap).
    let mut eof = false;
    while !eof
        && matches!(
            (&mut reader).take(MAX_STDERR_LINE as u64).read_until(b'\n', &mut buf).await,
            Ok(n) if n > 0
        )
    {
        if !buf.ends_with(b"\n") {
            eof = !skip_line(&mut reader).await;
        }
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

/// Skips the rest of the current line; false at end of input.
async fn skip_line(reader: &mut BufReader<ChildStderr>) -> bool {
    loop {
        let (consumed, found) = match reader.fill_buf().await {
            Ok([]) | Err(_) => return false,
            Ok(available) => match available.iter().position(|b| *b == b'\n') {
                Some(i) => (i + 1, true),
                None => (available.len(), false),
            },
        };
        reader.consume(consumed);
        if found {
            return true;
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(n, v)| (OsString::from(n), OsString::from(v)))
            .collect()
    }

    /// A child's answers cross a pipe wider than the default (see [`STDOUT_PIPE_BYTES`]), but
    /// only [`WIDE_PIPES`] children's at once: the next gets the default, until one of them ends.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_childs_stdout_pipe_is_widened_up_to_a_bound() {
        let spec = ChildSpec {
            source: "pipe".to_owned(),
            argv: vec!["sleep".to_owned(), "30".to_owned()],
            env: BTreeMap::new(),
            inherit_env: false,
            secret_env: BTreeSet::new(),
            cwd: None,
            stderr_lines_per_sec: 10,
        };
        let size = |stdout: &ChildStdout| {
            nix::fcntl::fcntl(stdout, nix::fcntl::FcntlArg::F_GETPIPE_SZ).unwrap()
        };
        let mut wide = Vec::new();
        for _ in 0..WIDE_PIPES {
            let (child, stdout, _stdin) = ChildProcess::spawn(&spec).unwrap();
            assert_eq!(size(&stdout), STDOUT_PIPE_BYTES);
            wide.push(child);
        }
        let (_narrow, stdout, _stdin) = ChildProcess::spawn(&spec).unwrap();
        assert!(size(&stdout) < STDOUT_PIPE_BYTES);
        drop(wide.pop());
        let (_again, stdout, _stdin) = ChildProcess::spawn(&spec).unwrap();
        assert_eq!(size(&stdout), STDOUT_PIPE_BYTES);
    }

    #[test]
    fn issue_8_child_env_is_minimal_and_never_has_secrets() {
        let bridge = vars(&[
            ("PATH", "/bin"),
            ("LC_ALL", "C.UTF-8"),
            ("OTC_JWT_SECRET", "k"),
            ("GITHUB_TOKEN", "t"),
            ("EDITOR", "vi"),
        ]);
        let secret = BTreeSet::from(["OTC_JWT_SECRET".to_owned(), "LC_ALL".to_owned()]);
        let extra = BTreeMap::from([("LOG".to_owned(), "debug".to_owned())]);
        let names = |env: BTreeMap<OsString, OsString>| -> Vec<String> {
            env.into_keys().map(|k| k.into_string().unwrap()).collect()
        };
        assert_eq!(
            names(child_env(bridge.clone(), false, &BTreeSet::new(), &extra)),
            ["LC_ALL", "LOG", "PATH"]
        );
        assert_eq!(
            names(child_env(bridge.clone(), false, &secret, &extra)),
            ["LOG", "PATH"]
        );
        assert_eq!(
            names(child_env(bridge, true, &secret, &extra)),
            ["EDITOR", "GITHUB_TOKEN", "LOG", "PATH"]
        );
    }
}
