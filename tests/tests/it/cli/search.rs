//! Semantic tool search (issue 24) against the real model from its registry packages
//! (`scripts/install-search-model.sh`, under `$OTC_CORPUS_DIR/models`), in both its forms (int8
//! ONNX through onnxruntime, f32 through candle): a request phrased without the tool's words
//! finds it, a request asking two things gets a tool for each, one only close by meaning gets
//! tools marked unsure, a product the catalog lacks gets nothing; vectors are cached across
//! restarts and redone for a tool that changed; without a model search is lexical and `/health`
//! says so; a broken model directory (or a missing onnxruntime library) is a start-up error
//! naming it, or a warning with `optional: true`.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};

use otc_tests::bridge_process::{Running, run};
use otc_tests::http::get_json;

/// A small API whose operations share few words with the requests below.
const API: &str = r#"openapi: 3.0.3
info: {title: Errands, version: 1.0.0}
servers: [{url: 'http://127.0.0.1:9/'}]
paths:
  /forecast:
    get:
      operationId: getForecast
      summary: Weather forecast
      description: Returns the weather forecast (temperature, precipitation, wind) for a city over the next days.
      parameters: [{name: city, in: query, required: true, schema: {type: string}}]
      responses: {'200': {description: ok}}
  /translations:
    post:
      operationId: translateText
      summary: Translate text
      description: Translates a text into another language.
      requestBody: {content: {application/json: {schema: {type: object, properties: {text: {type: string}, target: {type: string}}}}}}
      responses: {'200': {description: ok}}
  /invoices:
    post:
      operationId: createInvoice
      summary: Create an invoice
      description: Creates an invoice for a customer, with its lines and currency.
      requestBody: {content: {application/json: {schema: {type: object, properties: {customer: {type: string}, amount: {type: number}}}}}}
      responses: {'200': {description: ok}}
  /notes/{id}:
    delete:
      operationId: deleteNote
      summary: Delete a note
      description: Deletes a note for good.
      parameters: [{name: id, in: path, required: true, schema: {type: integer}}]
      responses: {'204': {description: deleted}}
  /contacts:
    get:
      operationId: listContacts
      summary: List contacts
      description: Lists the people in the address book, with their e-mail addresses and phone numbers.
      responses: {'200': {description: ok}}
"#;

/// `text` without its terminal colour codes (`ESC [ … m`).
fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn scratch(name: &str) -> PathBuf {
    otc_tests::scratch::dir(&format!("bridge-search-{name}"))
}

/// `search_tools` through `POST /mcp`: its `structuredContent`.
async fn search(url: &str, query: &str) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "search_tools", "arguments": {"query": query, "limit": 5}}});
    let reply = otc_tests::http::post_mcp(url, &body).await;
    reply["result"]["structuredContent"].clone()
}

fn paths(found: &Value) -> Vec<String> {
    found["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["path"]
                .as_str()
                .unwrap()
                .split('@')
                .next()
                .unwrap()
                .to_owned()
        })
        .collect()
}

/// Waits until `/health` says search is semantic.
async fn semantic(url: &str) -> Value {
    for _ in 0..600 {
        let health = get_json(&format!("{url}/health")).await;
        if health["search"]["mode"] == "semantic" {
            return health;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("search never became semantic");
}

fn spawn(api: &Path, model: &Path, cache: &Path, log: &Path) -> Running {
    let log = std::fs::File::create(log).unwrap();
    let args = [
        "--listen",
        "127.0.0.1:0",
        "--openapi",
        api.to_str().unwrap(),
        "--search-model",
        model.to_str().unwrap(),
    ];
    Running::spawn_with_stderr(
        &args,
        &[
            ("XDG_CACHE_HOME", cache.to_str().unwrap()),
            ("RUST_LOG", "info"),
        ],
        Stdio::from(log),
    )
}

#[tokio::test]
async fn semantic_search_finds_by_meaning_covers_each_part_and_refuses_absent_products() {
    let Some(models) = otc_fixtures::search_model_dirs() else {
        return;
    };
    // Both runtimes answer the same: int8 ONNX through onnxruntime, f32 through candle.
    for model in models {
        finds_by_meaning(&model).await;
    }
}

async fn finds_by_meaning(model: &Path) {
    let name = model.file_name().unwrap().to_string_lossy();
    let dir = scratch(&format!("meaning-{name}"));
    let api = dir.join("errands.yaml");
    std::fs::write(&api, API).unwrap();
    let mut bridge = spawn(&api, model, &dir.join("cache"), &dir.join("log"));
    let url = bridge.url().await;
    let health = semantic(&url).await;
    assert_eq!(health["search"]["embedded"], 5, "{health}");

    // No word of the request is in the tool (rain, tomorrow; weather, forecast, city).
    let found = search(&url, "will it rain tomorrow?").await;
    assert_eq!(
        paths(&found).first().map(String::as_str),
        Some("Errands.GetForecast"),
        "{found}"
    );

    // Two things at once: a tool for each part, each result naming the part it serves.
    let found = search(
        &url,
        "render this sentence in japanese, and also charge our client for the consulting work",
    )
    .await;
    let got = paths(&found);
    assert!(got.contains(&"Errands.TranslateText".to_owned()), "{found}");
    assert!(got.contains(&"Errands.CreateInvoice".to_owned()), "{found}");
    assert_eq!(found["parts"].as_array().map(Vec::len), Some(2), "{found}");
    for result in found["results"].as_array().unwrap() {
        assert!(result["part"].is_string(), "{found}");
    }

    // A sure answer carries no mark; one only close by meaning (no word of the request in a
    // tool, the closest cosine under the sure bars) says so on every result.
    let found = search(&url, "will it rain tomorrow?").await;
    assert!(
        found["results"].as_array().unwrap()[0]
            .get("sure")
            .is_none(),
        "{found}"
    );
    let found = search(&url, "remind me about the meeting").await;
    let results = found["results"].as_array().unwrap();
    assert!(!results.is_empty(), "{found}");
    assert!(results.iter().all(|r| r["sure"] == false), "{found}");

    // A product the catalog does not serve: nothing, however close the words.
    let found = search(&url, "ship my parcel overnight with FedEx").await;
    assert_eq!(paths(&found), Vec::<String>::new(), "{found}");
    bridge.interrupt().await;
}

#[tokio::test]
async fn vectors_are_reused_after_a_restart_and_redone_for_a_changed_tool() {
    let Some([model, _]) = otc_fixtures::search_model_dirs() else {
        return;
    };
    let dir = scratch("cache");
    let api = dir.join("errands.yaml");
    std::fs::write(&api, API).unwrap();
    let cache = dir.join("cache");
    let ready_line = |log: &Path| -> String {
        plain(&std::fs::read_to_string(log).unwrap())
            .lines()
            .find(|l| l.contains("Semantic search ready"))
            .unwrap_or_default()
            .to_owned()
    };
    let mut runs = Vec::new();
    for (round, description) in [
        "Deletes a note for good.",
        "Deletes a note for good.",
        "Removes a note and its attachments for good.",
    ]
    .iter()
    .enumerate()
    {
        std::fs::write(&api, API.replace("Deletes a note for good.", description)).unwrap();
        let log = dir.join(format!("log{round}"));
        let mut bridge = spawn(&api, &model, &cache, &log);
        let url = bridge.url().await;
        semantic(&url).await;
        bridge.interrupt().await;
        runs.push(ready_line(&log));
    }
    assert!(
        runs[0].contains("cached=0") && runs[0].contains("embedded=5"),
        "{runs:?}"
    );
    assert!(
        runs[1].contains("cached=5") && runs[1].contains("embedded=0"),
        "{runs:?}"
    );
    assert!(
        runs[2].contains("cached=4") && runs[2].contains("embedded=1"),
        "{runs:?}"
    );
    let files: Vec<_> = std::fs::read_dir(cache.join("otc-bridge"))
        .unwrap()
        .collect();
    assert_eq!(
        files.len(),
        1,
        "one cache file per model, no temporary left"
    );
}

#[tokio::test]
async fn without_a_model_search_is_lexical_and_health_says_so() {
    let dir = scratch("lexical");
    let api = dir.join("errands.yaml");
    std::fs::write(&api, API).unwrap();
    let mut bridge = Running::spawn(
        &[
            "--listen",
            "127.0.0.1:0",
            "--openapi",
            api.to_str().unwrap(),
        ],
        &[],
    );
    let url = bridge.url().await;
    let health = get_json(&format!("{url}/health")).await;
    assert_eq!(health["search"], json!({"mode": "lexical"}), "{health}");
    let found = search(&url, "create an invoice for ACME").await;
    assert_eq!(
        paths(&found).first().map(String::as_str),
        Some("Errands.CreateInvoice"),
        "{found}"
    );
    bridge.interrupt().await;
}

#[tokio::test]
async fn a_missing_or_broken_model_is_a_start_up_error_naming_it_unless_optional() {
    let dir = scratch("broken");
    let api = dir.join("errands.yaml");
    std::fs::write(&api, API).unwrap();
    let missing = dir.join("no-such-model");
    let broken = dir.join("broken-model");
    std::fs::create_dir_all(&broken).unwrap();
    for file in ["config.json", "tokenizer.json", "model.safetensors"] {
        std::fs::write(broken.join(file), "not a model").unwrap();
    }
    let mut models = vec![missing, broken.clone()];
    if let Some([int8, _]) = otc_fixtures::search_model_dirs() {
        // An ONNX model whose runtime library is missing, one whose library is not a library,
        // and one whose export is not ONNX.
        let no_runtime = dir.join("no-runtime");
        let bad_runtime = dir.join("bad-runtime");
        let bad_onnx = dir.join("bad-onnx");
        for (into, skip) in [
            (&no_runtime, "libonnxruntime.so"),
            (&bad_runtime, ""),
            (&bad_onnx, ""),
        ] {
            std::fs::create_dir_all(into).unwrap();
            for file in ["tokenizer.json", "model.onnx", "libonnxruntime.so"] {
                if file != skip {
                    std::fs::copy(int8.join(file), into.join(file)).unwrap();
                }
            }
        }
        std::fs::write(bad_runtime.join("libonnxruntime.so"), "not a library").unwrap();
        std::fs::write(bad_onnx.join("model.onnx"), "not a model").unwrap();
        models.extend([no_runtime, bad_runtime, bad_onnx]);
    }
    for model in &models {
        let (code, _, stderr) = run(&[
            "--listen",
            "127.0.0.1:0",
            "--openapi",
            api.to_str().unwrap(),
            "--search-model",
            model.to_str().unwrap(),
        ]);
        assert_ne!(code, 0, "{stderr}");
        assert!(stderr.contains(&*model.to_string_lossy()), "{stderr}");
    }
    // `optional: true`: a warning, and lexical search.
    let config = dir.join("bridge.yaml");
    std::fs::write(
        &config,
        format!(
            "search: {{model: {}, optional: true}}\nsources:\n  - type: openapi\n    spec: {}\n",
            broken.display(),
            api.display()
        ),
    )
    .unwrap();
    let mut bridge = Running::spawn(
        &[
            "--listen",
            "127.0.0.1:0",
            "--config",
            config.to_str().unwrap(),
        ],
        &[],
    );
    let url = bridge.url().await;
    let health = get_json(&format!("{url}/health")).await;
    assert_eq!(health["search"], json!({"mode": "lexical"}), "{health}");
    bridge.interrupt().await;
}
