//! Tool transforms and projections of results (DESIGN.md §15) as a user configures them: an
//! operation of the test upstream served under a new name with arguments hidden, renamed and
//! narrowed, called through the real binary, and checked on what arrived upstream.

use otc_tests::bridge_process::Running;
use otc_tests::upstream_http::{self, Upstream};
use serde_json::{Value, json};

/// The upstream as a source, with `overrides` (YAML lines indented for the source's keys).
fn config(upstream: &Upstream, overrides: &str) -> String {
    format!(
        "sources:\n  - type: openapi\n    name: upstream\n    spec: {}\n    base_url: {}\n{overrides}auth:\n  api_keys:\n    - {{name: ci-bot, key: {{env: SHAPING_KEY}}}}\n",
        upstream_http::document_path().display(),
        upstream.url(),
    )
}

const KEY: &str = "shaping-key-0123456789";

async fn call(url: &str, tool: &str, input: Value) -> (u16, Value) {
    let response = reqwest::Client::new()
        .post(format!("{url}/tools/call"))
        .header("x-api-key", KEY)
        .json(&json!({"tool_id": tool, "input": input}))
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

async fn listed(url: &str) -> Vec<Value> {
    let body: Value = reqwest::Client::new()
        .get(format!("{url}/tools"))
        .header("x-api-key", KEY)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    body["tools"].as_array().unwrap().clone()
}

#[tokio::test]
async fn a_transformed_operation_is_served_as_configured_and_called_in_the_upstreams_shape() {
    let upstream = Upstream::start().await;
    let overrides = r#"    overrides:
      queryStyles:
        name: Search
        description_append: "Only open and closed items."
        arguments:
          limit: {fixed: 5}
          redirect_uri: {fixed: {env: SHAPING_REDIRECT}}
          q: {rename: query, description: "What to look for."}
          state: {enum: [open, closed], default: open}
        results: {jq: '{query, method}'}
      headersAndCookies:
        arguments:
          X-Request-Tag: {fixed: {caller: name}}
"#;
    let path = super::write_config("shaping", "transform", &config(&upstream, overrides));
    let mut bridge = Running::serving(
        &path,
        &[
            ("SHAPING_KEY", KEY),
            ("SHAPING_REDIRECT", "https://example.test/back"),
        ],
    );
    let url = bridge.url().await;

    // Served as transformed: new name, the appended description, hidden and renamed arguments,
    // the narrowed enum, and the output schema the projection gives.
    let tools = listed(&url).await;
    let search = tools
        .iter()
        .find(|t| t["name"] == "Upstream_Search")
        .unwrap_or_else(|| panic!("no Upstream_Search in {tools:#?}"));
    assert!(
        search["description"]
            .as_str()
            .unwrap()
            .ends_with("Only open and closed items."),
        "{search}"
    );
    // OTC 1.0 (the default dialect) wraps the schema as `{"parameters": …}`.
    let schema = &search["input_schema"]["parameters"];
    let properties = schema["properties"].as_object().unwrap();
    for hidden in ["limit", "redirect_uri", "q"] {
        assert!(
            !properties.contains_key(hidden),
            "{hidden} served: {schema}"
        );
    }
    assert_eq!(properties["query"]["description"], "What to look for.");
    assert_eq!(properties["state"]["enum"], json!(["open", "closed"]));
    assert_eq!(properties["state"]["default"], "open");
    // The upstream's answer is an object without declared properties: the projection's
    // schema cannot be derived, so none is served (rather than a wrong one).
    assert!(search["output_schema"].is_null(), "{search}");
    assert!(
        !tools.iter().any(|t| t["name"] == "Upstream_QueryStyles"),
        "the old name is still served"
    );

    // Called: mapped back (renamed, fixed from the configuration and the environment, the
    // default filled in), and the answer projected.
    let (status, body) = call(&url, "Upstream.Search", json!({"query": "cats"})).await;
    assert_eq!(status, 200, "{body}");
    let value = &body["value"];
    assert_eq!(value["method"], "GET", "{body}");
    assert_eq!(
        value.as_object().unwrap().len(),
        2,
        "not projected: {value}"
    );
    let query = value["query"].as_str().unwrap();
    for part in [
        "q=cats",
        "limit=5",
        "state=open",
        "redirect_uri=https://example.test/back",
    ] {
        assert!(query.contains(part), "{part} not in {query}");
    }

    // A hidden argument a caller still sends (one written before it was hidden) is accepted
    // and the fixed values are sent over it: hiding breaks no client.
    let (status, body) = call(
        &url,
        "Upstream.Search",
        json!({"query": "cats", "limit": 50, "redirect_uri": "https://evil.test/"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let query = body["value"]["query"].as_str().unwrap();
    assert!(query.contains("limit=5"), "{query}");
    assert!(
        query.contains("redirect_uri=https://example.test/back"),
        "{query}"
    );
    assert!(!query.contains("evil") && !query.contains("50"), "{query}");

    // Refused as the served schema says: outside the narrowed enum, the renamed argument's old
    // name.
    let (status, body) = call(&url, "Upstream.Search", json!({"state": "all"})).await;
    assert_eq!(status, 422, "{body}");
    assert!(body.to_string().contains("state"), "{body}");
    let (status, body) = call(&url, "Upstream.Search", json!({"q": "dogs"})).await;
    assert_eq!(status, 422, "{body}");
    assert!(body.to_string().contains("\"q\""), "{body}");
    assert!(
        !body.to_string().contains("example.test"),
        "a fixed value leaked: {body}"
    );

    // A value from the caller: its name, never its key.
    let (status, body) = call(&url, "Upstream.HeadersAndCookies", json!({})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["value"]["headers"]["x-request-tag"], "ci-bot",
        "{body}"
    );
    bridge.interrupt().await;
}

#[tokio::test]
async fn an_override_that_does_not_fit_its_tool_leaves_it_unserved_and_a_bad_program_stops_start_up()
 {
    let upstream = Upstream::start().await;
    // An argument the operation does not have: the tool is not served rather than served with
    // what the configuration meant to hide.
    let path = super::write_config(
        "shaping",
        "misfit",
        &config(
            &upstream,
            "    overrides:\n      queryStyles: {arguments: {nope: {fixed: 1}}}\n",
        ),
    );
    let mut bridge = Running::serving(&path, &[("SHAPING_KEY", KEY)]);
    let url = bridge.url().await;
    let tools = listed(&url).await;
    assert!(!tools.is_empty());
    assert!(
        !tools.iter().any(|t| t["name"] == "Upstream_QueryStyles"),
        "served untransformed"
    );
    bridge.interrupt().await;

    let path = super::write_config(
        "shaping",
        "badjq",
        &config(&upstream, "    results: {jq: '.[] | {'}\n"),
    );
    let (code, _, stderr) = otc_tests::bridge_process::run(&[
        "--listen",
        "127.0.0.1:0",
        "--config",
        path.to_str().unwrap(),
    ]);
    assert_ne!(code, 0);
    assert!(stderr.contains("results.jq"), "{stderr}");
    assert!(stderr.contains("jq syntax error"), "{stderr}");
}

/// A transform is part of the served definition: `otc-bridge diff` between a configuration
/// without it and one with it classifies it like any other change of the tool.
#[test]
fn a_transform_is_a_change_of_the_tool_for_diff_and_the_lockfile() {
    let document = upstream_http::document_path();
    let side = |name: &str, overrides: &str| {
        super::write_config(
            "shaping",
            name,
            &format!(
                "sources:\n  - type: openapi\n    name: upstream\n    spec: {}\n{overrides}",
                document.display()
            ),
        )
    };
    let plain = side("plain", "");
    let described = side(
        "described",
        "    overrides:\n      jsonBody: {description_append: \"Use for tests.\"}\n",
    );
    let renamed = side(
        "renamed",
        "    overrides:\n      jsonBody: {arguments: {id: {rename: ident}}}\n",
    );
    let hidden = side(
        "hidden",
        "    overrides:\n      jsonBody: {arguments: {id: {fixed: 7}}}\n",
    );
    let diff = |new: &std::path::Path| {
        otc_tests::bridge_process::run(&["diff", plain.to_str().unwrap(), new.to_str().unwrap()])
    };
    let (code, out, err) = diff(&described);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("patch Upstream.JsonBody"), "{out}");
    let (code, out, err) = diff(&renamed);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("major Upstream.JsonBody"), "{out}");
    assert!(out.contains("new required input `ident`"), "{out}");
    // Hiding a required argument behind a fixed value: its value is still accepted (and
    // overridden), so no client breaks.
    let (code, out, err) = diff(&hidden);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("minor Upstream.JsonBody"), "{out}");
    assert!(
        out.contains("input `id` hidden behind a fixed value"),
        "{out}"
    );
}

/// The kept result `handle` read through `read_result` as [`KEY`]'s caller from offset 0 until
/// `next_offset` is `null`, each page within `budget`.
async fn read_to_end(url: &str, handle: &str, budget: usize) -> String {
    let mut read = String::new();
    let mut offset = Some(0_u64);
    let mut pages = 0;
    while let Some(at) = offset {
        let page = super::mcp_call(
            url,
            KEY,
            "read_result",
            json!({"handle": handle, "offset": at}),
            &[],
        )
        .await;
        assert_eq!(page["isError"], false, "{page}");
        let text = page["content"][0]["text"].as_str().unwrap();
        assert!(text.len() <= budget);
        read.push_str(text);
        offset = page["structuredContent"]["next_offset"].as_u64();
        pages += 1;
        assert!(pages < 200, "no end");
    }
    read
}

#[tokio::test]
async fn a_5_mb_answer_is_cut_to_the_budget_on_mcp_and_read_to_the_end_by_its_caller_only() {
    let upstream = Upstream::start().await;
    let budget = 65_536;
    let text = format!(
        "{}mcp: {{max_result_bytes: {budget}}}\n",
        config(&upstream, "")
    )
    .replace(
        "    - {name: ci-bot, key: {env: SHAPING_KEY}}\n",
        "    - {name: ci-bot, key: {env: SHAPING_KEY}}\n    - {name: other, key: {env: SHAPING_OTHER}}\n",
    );
    let path = super::write_config("shaping", "budget", &text);
    let other = "shaping-other-0123456789";
    let mut bridge = Running::serving(&path, &[("SHAPING_KEY", KEY), ("SHAPING_OTHER", other)]);
    let url = bridge.url().await;

    // The whole answer, as OTC serves it (no budget there).
    let (status, body) = call(&url, "Upstream.Items", json!({"count": 50_000})).await;
    assert_eq!(status, 200);
    let whole = body["value"].to_string();
    assert!(whole.len() > 5_000_000, "{}", whole.len());

    let result = super::mcp_call(
        &url,
        KEY,
        "call_tool",
        json!({"path": "Upstream.Items", "arguments": {"count": 50_000}}),
        &[],
    )
    .await;
    assert_eq!(result["isError"], false, "{result}");
    let cut = result["content"][0]["text"].as_str().unwrap();
    assert!(cut.len() <= budget, "{} bytes", cut.len());
    let cut: Value = serde_json::from_str(cut).expect("the cut result is JSON");
    let items = cut.as_array().unwrap();
    assert_eq!(items[0]["id"], 0);
    assert!(
        items.last().unwrap().to_string().contains("more items"),
        "{}",
        items.last().unwrap()
    );
    let truncated = &result["structuredContent"]["truncated"];
    assert_eq!(truncated["total_bytes"], whole.len(), "{truncated}");
    let handle = truncated["handle"].as_str().unwrap().to_owned();
    let note = result["content"][1]["text"].as_str().unwrap();
    assert!(
        note.contains("read_result") && note.contains(&handle),
        "{note}"
    );

    // read_result is listed, and reads the whole text back in pages of the budget.
    let listed = reqwest::Client::new()
        .post(format!("{url}/mcp"))
        .header("x-api-key", KEY)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(listed.contains("\"read_result\""), "{listed}");
    assert_eq!(read_to_end(&url, &handle, budget).await, whole);

    // Another caller cannot read it; a wrong offset is a clear error.
    let theirs = super::mcp_call(
        &url,
        other,
        "read_result",
        json!({"handle": handle, "offset": 0}),
        &[],
    )
    .await;
    assert_eq!(theirs["isError"], true, "{theirs}");
    assert!(theirs.to_string().contains("No kept result"), "{theirs}");
    let past = super::mcp_call(
        &url,
        KEY,
        "read_result",
        json!({"handle": handle, "offset": whole.len() + 1}),
        &[],
    )
    .await;
    assert_eq!(past["isError"], true, "{past}");

    // A small answer is not cut.
    let small = super::mcp_call(
        &url,
        KEY,
        "call_tool",
        json!({"path": "Upstream.Items", "arguments": {"count": 3}}),
        &[],
    )
    .await;
    assert!(
        small.get("structuredContent").is_none()
            || small["structuredContent"].get("truncated").is_none(),
        "{small}"
    );
    assert_eq!(
        serde_json::from_str::<Value>(small["content"][0]["text"].as_str().unwrap())
            .unwrap()
            .as_array()
            .unwrap()
            .len(),
        3
    );
    bridge.interrupt().await;
}

/// Issue 27: an MCP source's large structured answer (1 MB here, over the 256 KiB from which a
/// transport sets one aside; bridge/examples/mcp_cut_peak.rs measures 5 MB) reaches an MCP host cut to its budget
/// without the bridge parsing it (the transport sets its text aside), over stdio, legacy SSE and
/// streamable HTTP's event streams; `read_result` reads back exactly the text the server sent,
/// and OTC, which has no budget, still gets the whole value.
#[tokio::test]
async fn an_mcp_sources_large_structured_answer_is_cut_and_read_back_over_each_transport() {
    use otc_tests::upstream_mcp::{example_server_bin, spawn_example_http_with};
    let budget = 65_536;
    let http = spawn_example_http_with("--http", &["--fault-tools"]).await;
    let sse = spawn_example_http_with("--sse", &["--fault-tools"]).await;
    let server = example_server_bin();
    let transports = [
        (
            "stdio",
            format!(
                "{{type: stdio, command: \"{}\", args: [--fault-tools]}}",
                server.display()
            ),
        ),
        (
            "http",
            format!("{{type: streamable_http, url: \"{}\"}}", http.url),
        ),
        ("sse", format!("{{type: sse, url: \"{}\"}}", sse.url)),
    ];
    for (name, transport) in transports {
        let text = format!(
            "sources:\n  - {{type: mcp, name: example, toolkit: Example, transport: {transport}}}\nmcp: {{max_result_bytes: {budget}}}\nauth:\n  api_keys:\n    - {{name: ci-bot, key: {{env: SHAPING_KEY}}}}\n"
        );
        let path = super::write_config("shaping", &format!("mcp-{name}"), &text);
        let mut bridge = Running::serving(&path, &[("SHAPING_KEY", KEY)]);
        let url = bridge.url().await;
        let arguments = json!({"bytes": 1_000_000, "structured": true});

        let (status, body) = call(&url, "Example.Huge", arguments.clone()).await;
        assert_eq!(status, 200, "{name}: {body}");
        let whole = body["value"].to_string();
        assert!(whole.len() > 1_000_000, "{name}: {} bytes", whole.len());

        let result = super::mcp_call(
            &url,
            KEY,
            "call_tool",
            json!({"path": "Example.Huge", "arguments": arguments}),
            &[],
        )
        .await;
        assert_eq!(result["isError"], false, "{name}: {result}");
        let cut = result["content"][0]["text"].as_str().unwrap();
        assert!(cut.len() <= budget, "{name}: {} bytes", cut.len());
        let cut: Value = serde_json::from_str(cut).expect("the cut result is JSON");
        assert_eq!(cut["items"][0]["id"], 0, "{name}");
        let truncated = &result["structuredContent"]["truncated"];
        assert_eq!(truncated["total_bytes"], whole.len(), "{name}: {truncated}");
        let handle = truncated["handle"].as_str().unwrap().to_owned();

        assert_eq!(read_to_end(&url, &handle, budget).await, whole, "{name}");
        bridge.interrupt().await;
    }
}
