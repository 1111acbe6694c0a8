//! The catalog page in a real browser (issue 28): `tests/browser/catalog_page.py` drives Debian's
//! headless Chromium with Playwright for Python, both installed by `scripts/install-browser.sh`
//! (with npm `axe-core`), against the demo (`otc-bridge demo`, the binary as a user runs it) and a
//! bridge with an API key whose catalog holds a tool with a hostile description and a tool whose
//! schema uses the keywords the page's validator must word as the server does.
//!
//! Skipped, like the other tests of installed tools, when `OTC_CORPUS_DIR` is not set; when it is,
//! a missing browser fails the test with the command that installs it.

use std::path::PathBuf;
use std::sync::Arc;

use otc_adapters::fake::FakeAdapter;
use otc_bridge::{Authenticator, ServerSettings};
use otc_tests::bridge::TestBridge;
use otc_tests::bridge_process::{Running, repo_root};
use otc_tests::tools::definition;
use serde_json::json;

const KEY: &str = "browser-test-key-0123456789";

/// The venv's python, axe-core's script and the browser, once installed.
fn installed() -> Option<(PathBuf, PathBuf)> {
    let corpus = otc_fixtures::corpus_dir()?;
    let python = corpus.join("browser-venv/bin/python");
    let axe = corpus.join("browser/node_modules/axe-core/axe.min.js");
    let chromium = std::env::var_os("OTC_CHROMIUM")
        .map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from);
    for needed in [&python, &axe, &chromium] {
        assert!(
            needed.is_file(),
            "{} is missing: run scripts/install-browser.sh",
            needed.display()
        );
    }
    Some((python, axe))
}

/// `Shapes.Plan`'s input: `$ref` into its own `$defs`, `oneOf`, `anyOf`, `allOf`, `multipleOf`,
/// `uniqueItems` and a nested closed object, which the page validates before sending (the script
/// compares its messages with the server's for the same inputs).
fn shapes_schema() -> serde_json::Value {
    json!({
        "type": "object",
        "$defs": {"size": {"type": "integer", "minimum": 1, "multipleOf": 2}},
        "properties": {
            "width": {"$ref": "#/$defs/size"},
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
            "shape": {"oneOf": [
                {"type": "string", "enum": ["square", "circle"]},
                {"type": "object", "properties": {"sides": {"$ref": "#/$defs/size"}}, "required": ["sides"]}
            ]},
            "colour": {"anyOf": [{"type": "string", "pattern": "^#[0-9a-f]{6}$"}, {"type": "null"}]},
            "step": {"type": "number", "multipleOf": 0.25},
            "range": {"allOf": [
                {"type": "object"},
                {"properties": {"low": {"type": "integer"}}, "required": ["low"]}
            ]},
            "layer": {"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 0}]},
            "owner": {
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"],
                "additionalProperties": false
            }
        },
        "required": ["width"],
        "additionalProperties": false
    })
}

#[tokio::test]
async fn the_catalog_page_works_in_a_real_browser() {
    let Some((python, axe)) = installed() else {
        return;
    };
    let mut demo = Running::spawn(&["demo", "--listen", "127.0.0.1:0"], &[]);
    let demo_url = demo.url().await;
    let mut hostile = definition(
        "Hostile",
        "Describe",
        (1, 0, 0),
        json!({"type": "object", "properties": {"text": {"type": "string", "description": "<img src=x onerror=\"window.__pwned=true;alert(5)\">"}}}),
    );
    hostile.description = "Describes. <script>window.__pwned=true;alert(1)</script> Click <a href=\"javascript:alert(2)\">here</a> or javascript:alert(3) <img src=x onerror=\"window.__pwned=true;alert(4)\">".to_owned();
    let shapes = definition("Shapes", "Plan", (1, 0, 0), shapes_schema());
    let adapter = FakeAdapter::new("hostile")
        .tool(hostile, |_| Ok(json!({"ok": true})))
        .tool(shapes, |_| Ok(json!({"planned": true})));
    let keyed = TestBridge::start(
        vec![Arc::new(adapter)],
        ServerSettings::default(),
        Some(Authenticator::new(None, &[], vec![KEY.to_owned()])),
    )
    .await;
    // Screenshots for the README when asked for (OTC_SCREENSHOTS=docs/screenshots).
    let shots = std::env::var("OTC_SCREENSHOTS").ok();
    let mut command = tokio::process::Command::new(python);
    command
        .arg(repo_root().join("tests/browser/catalog_page.py"))
        .arg(&demo_url)
        .arg(&keyed.url)
        .arg(KEY)
        .arg(&axe);
    if let Some(shots) = &shots {
        command.arg(repo_root().join(shots));
    }
    let run = tokio::time::timeout(std::time::Duration::from_secs(240), command.output())
        .await
        .expect("the browser test did not finish in 4 minutes")
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success() && stdout.contains("browser: ok"),
        "the browser test failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    // What was checked, for the test's log.
    eprintln!("{stdout}");
    demo.interrupt().await;
}
