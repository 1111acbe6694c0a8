//! Issue 25 (items 4 and 5): every file the bridge reads goes through one reader (regular files
//! only, a size limit) and every text through one parser (nesting refused before parsing, the YAML
//! alias budget): configurations, host files for `import`, lockfiles, `diff` sides, OpenAPI
//! documents. Each hostile file is refused with a message saying what is wrong with it, by the
//! real binary under a memory limit and a deadline, so a regression fails instead of hanging or
//! exhausting the machine. How fast, and in how little memory: `bench/bombs.sh`.

use std::path::PathBuf;

use otc_tests::bridge_process::run_bounded;

/// A fresh directory for one test's files.
struct Sandbox(PathBuf);

impl Sandbox {
    fn new(name: &str) -> Self {
        Self(otc_tests::scratch::dir(&format!("issue25-{name}")))
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

/// 5,000 aliases of a 5,000-item anchor in the configuration's `sources` (which keeps whatever
/// it holds): 70 KB of text, 25 million nodes replayed.
fn alias_bomb() -> String {
    format!(
        "sources:\n  - &a [{}]\n  - [{}]\n",
        vec!["abcdefghij"; 5_000].join(","),
        vec!["*a"; 5_000].join(",")
    )
}

/// Nesting in every shape the scan reads: flow (JSON and YAML), compact block sequences, and
/// indentation.
const LEVELS: usize = 10_000;

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

#[tokio::test]
async fn issue_25_a_yaml_alias_bomb_is_refused_by_check_diff_and_import() {
    let dir = Sandbox::new("aliases");
    let ok = dir.file("ok.json", EMPTY_EXPORT);
    let bomb = dir.file("bomb.yaml", &alias_bomb());
    refused(
        &[
            vec!["check", "--config", &bomb],
            vec!["diff", &bomb, &ok],
            vec!["import", &bomb],
            vec!["--config", &bomb, "--listen", "127.0.0.1:0"],
        ],
        &bomb,
        "its YAML aliases expand to more than",
    )
    .await;
}

#[tokio::test]
async fn issue_25_deep_nesting_is_refused_before_parsing_in_every_file() {
    let dir = Sandbox::new("deep");
    let ok = dir.file("ok.json", EMPTY_EXPORT);
    let flow = format!("sources: {}{}\n", "[".repeat(LEVELS), "]".repeat(LEVELS));
    let block = format!("sources:\n{}x\n", "- ".repeat(LEVELS));
    let indented: String = (0..LEVELS / 10)
        .map(|level| format!("{}k{level}:\n", " ".repeat(level)))
        .collect();
    let json = format!(
        "{{\"mcpServers\": {}{}}}\n",
        "[".repeat(LEVELS),
        "]".repeat(LEVELS)
    );
    let document = format!(
        "openapi: 3.0.0\ninfo: {{title: Deep, version: '1'}}\npaths: {{}}\nx-deep:\n{}x\n",
        "- ".repeat(LEVELS)
    );
    let too_deep = "nests more than 150 levels deep";
    for (name, text, commands) in [
        (
            "flow.yaml",
            flow,
            vec![vec!["check", "--config"], vec!["diff"]],
        ),
        ("block.yaml", block, vec![vec!["check", "--config"]]),
        ("indented.yaml", indented, vec![vec!["check", "--config"]]),
        (
            "host.json",
            json.clone(),
            vec![vec!["import"], vec!["check", "--config"]],
        ),
        ("lock.json", json, vec![vec!["lock", "--lock"]]),
        (
            "api.yaml",
            document,
            vec![vec!["check", "--openapi"], vec!["diff"]],
        ),
    ] {
        let path = dir.file(name, &text);
        let commands: Vec<Vec<&str>> = commands
            .into_iter()
            .map(|mut args| {
                args.push(&path);
                if args[0] == "diff" {
                    args.push(&ok);
                }
                args
            })
            .collect();
        refused(&commands, &path, too_deep).await;
    }
}
