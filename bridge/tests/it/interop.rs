//! Interop with the standard's own Python client, the PyPI package `oxp`, installed by
//! `scripts/install-python-client.sh` into `$OTC_CORPUS_DIR/venv`: it lists tools and calls a
//! successful, an invalid and a failing tool through the running binary (OXP dialect).

use std::path::PathBuf;

use crate::binary::{Running, repo_root};

fn python() -> Option<PathBuf> {
    let dir = otc_fixtures::corpus_dir()?;
    let python = dir.join("venv/bin/python");
    assert!(
        python.is_file(),
        "{} is missing: run scripts/install-python-client.sh",
        python.display()
    );
    Some(python)
}

#[tokio::test]
async fn the_oxp_python_client_works_against_the_bridge() {
    let Some(python) = python() else { return };
    let mut demo = Running::spawn(
        &["demo", "--listen", "127.0.0.1:0", "--dialect", "oxp"],
        &[],
    );
    let url = demo.url().await;
    let script = repo_root().join("tests/interop/oxp_client.py");
    let out = tokio::process::Command::new(python)
        .arg(script)
        .arg(&url)
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "oxp client failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("oxp interop: ok"), "{stdout}");
    demo.interrupt().await;
}
