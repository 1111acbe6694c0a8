//! Issue 25 (item 4): every file the bridge reads goes through one reader (regular files only, a
//! size limit): configurations, host files for `import`, lockfiles, `diff` sides, OpenAPI
//! documents. Each hostile file is refused with a message saying what is wrong with it, by the
//! real binary under a memory limit and a deadline, so a regression fails instead of hanging or
//! exhausting the machine. How fast, and in how little memory: `bench/bombs.sh`.

use std::path::PathBuf;

use crate::binary::run_bounded;

/// A fresh directory for one test's files.
struct Sandbox(PathBuf);

impl Sandbox {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("otc-issue25-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    fn file(&self, name: &str, text: &str) -> String {
        let path = self.0.join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    }

    /// A FIFO nobody writes: opening it for reading blocks until someone does.
    fn fifo(&self, name: &str) -> String {
        let path = self.0.join(name);
        let made = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(made.success());
        path.display().to_string()
    }

    fn link(&self, name: &str, target: &str) -> String {
        let path = self.0.join(name);
        std::os::unix::fs::symlink(target, &path).unwrap();
        path.display().to_string()
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs each command and checks it fails saying `expected` (and naming the file).
async fn refused(commands: &[Vec<&str>], file: &str, expected: &str) {
    for args in commands {
        let (code, out, err) = run_bounded(args).await;
        // `check` reports a source that failed on stdout, other commands on stderr.
        let said = format!("{out}{err}");
        assert_ne!(code, 0, "{args:?} succeeded:\n{said}");
        assert!(
            said.contains(expected) && said.contains(file),
            "{args:?} (exit {code}) did not say {expected:?} about {file}:\n{said}"
        );
    }
}

/// An export of no tools: the sane other side of a `diff`.
const EMPTY_EXPORT: &str = "{\"tools\": []}\n";

#[tokio::test]
async fn issue_25_a_fifo_is_refused_at_once_as_config_host_file_lockfile_and_diff_side() {
    let dir = Sandbox::new("fifo");
    let fifo = dir.fifo("pipe.yaml");
    let ok = dir.file("ok.json", EMPTY_EXPORT);
    refused(
        &[
            vec!["check", "--config", &fifo],
            vec!["import", &fifo],
            vec!["lock", "--lock", &fifo],
            vec!["diff", &fifo, &ok],
            vec!["diff", &ok, &fifo],
            vec!["--lock", &fifo, "--listen", "127.0.0.1:0"],
            vec!["check", "--openapi", &fifo],
        ],
        &fifo,
        "not a regular file (it is a FIFO)",
    )
    .await;
}

#[tokio::test]
async fn issue_25_dev_zero_is_refused_as_diff_side_and_behind_a_symlinked_config() {
    let dir = Sandbox::new("zero");
    let ok = dir.file("ok.json", EMPTY_EXPORT);
    let zero = dir.link("zero.yaml", "/dev/zero");
    let device = "not a regular file (it is a character device)";
    refused(&[vec!["diff", "/dev/zero", &ok]], "/dev/zero", device).await;
    refused(
        &[
            vec!["diff", &ok, &zero],
            vec!["check", "--config", &zero],
            vec!["import", &zero],
            vec!["lock", "--lock", &zero],
        ],
        &zero,
        device,
    )
    .await;
    // What counts is where a link leads: a link to a regular file is read.
    let host = dir.file(
        "host.json",
        r#"{"mcpServers": {"x": {"command": "x-server"}}}"#,
    );
    let link = dir.link("link.json", &host);
    let (code, out, err) = run_bounded(&["import", &link]).await;
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("x-server"), "{out}");
}
