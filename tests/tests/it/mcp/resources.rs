//! Issue 27: an MCP server's resources and prompts served as tools (`resources: tools`,
//! `prompts: tools`), against the real `@modelcontextprotocol/server-everything` and called over
//! OTC (`POST /tools/call` on the bridge's HTTP server); the example server, which declares
//! neither capability, for the warning.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use otc_adapters::mcp::ServeAs;
use otc_bridge::ServerSettings;
use otc_tests::bridge::TestBridge;

use super::*;

/// The server's toolkit in ids (`serverInfo.name` is `mcp-servers/everything`).
const KIT: &str = "McpServersEverything";

fn everything(bin: &std::path::Path, features: ServeAs) -> McpConfig {
    let mut config = quick(McpConfig::stdio(&format!("'{}' stdio", bin.display())));
    config.resources = features;
    config.prompts = features;
    config
}

/// `POST /tools/call` of `tool` in the server's toolkit: the status and the body.
async fn post(bridge: &TestBridge, tool: &str, input: Value) -> (u16, Value) {
    let body =
        json!({"request": {"call_id": "c1", "tool_id": format!("{KIT}.{tool}"), "input": input}});
    let response = reqwest::Client::new()
        .post(bridge.at("/tools/call"))
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

/// The value of a successful call.
async fn value(bridge: &TestBridge, tool: &str, input: Value) -> Value {
    let (status, body) = post(bridge, tool, input).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["success"], true, "{body}");
    body["result"]["value"].clone()
}

#[tokio::test]
async fn issue_27_everything_resources_templates_and_prompts_are_called_over_otc() {
    let Some(bin) = everything_bin() else { return };
    let adapter = McpAdapter::build(
        "everything",
        &everything(&bin, ServeAs::Tools),
        &BuildContext::default(),
    )
    .await
    .unwrap();
    let tools = adapter.list_tools().await.unwrap();
    assert!(tools.diagnostics.is_empty(), "{:?}", tools.diagnostics);
    let added: Vec<String> = tools
        .tools
        .iter()
        .filter(|t| matches!(t.target, otc_mappings::Target::Mcp { .. }))
        .map(|t| t.definition.id.tool.clone())
        .collect();
    for wanted in [
        "ListResources",
        "ReadResource",
        "ReadResourceTemplate",
        "PromptSimplePrompt",
        "PromptArgsPrompt",
        "PromptResourcePrompt",
    ] {
        assert!(
            added.iter().any(|t| t == wanted),
            "no {wanted} in {added:?}"
        );
    }
    for t in tools
        .tools
        .iter()
        .filter(|t| matches!(t.target, otc_mappings::Target::Mcp { .. }))
    {
        assert!(!t.destructive, "{} is read-only", t.definition.id);
        assert_eq!(t.definition.version.to_string(), "2.0.0");
        assert!(!schema::has_refs(&t.definition.input_schema.to_value()));
        assert!(t.definition.output_schema.is_some());
    }
    otc_tests::conformance::assert_definitions_conform_to_the_spec(&tools);

    let bridge = TestBridge::start(vec![adapter.clone()], ServerSettings::default(), None).await;

    // The list: the server's static documents, and its two templates.
    let listed = value(&bridge, "ListResources", json!({})).await;
    let resources = listed["resources"].as_array().unwrap();
    let document = resources
        .iter()
        .find(|r| {
            r["uri"]
                .as_str()
                .unwrap()
                .starts_with("demo://resource/static/document/")
        })
        .unwrap_or_else(|| panic!("no static document in {listed}"));
    let templates: Vec<&str> = listed["templates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["uriTemplate"].as_str().unwrap())
        .collect();
    assert!(
        templates.contains(&"demo://resource/dynamic/blob/{resourceId}"),
        "{listed}"
    );

    // A text resource, read by the URI the list gave.
    let read = value(&bridge, "ReadResource", json!({"uri": document["uri"]})).await;
    let content = &read["contents"][0];
    assert_eq!(content["uri"], document["uri"]);
    assert_eq!(content["mimeType"], document["mimeType"]);
    assert!(!content["text"].as_str().unwrap().is_empty(), "{read}");

    // A binary resource through a template: base64 with its MIME type.
    let blob = value(
        &bridge,
        "ReadResourceTemplate",
        json!({"template": "demo://resource/dynamic/blob/{resourceId}", "arguments": {"resourceId": "7"}}),
    )
    .await;
    let content = &blob["contents"][0];
    assert_eq!(content["uri"], "demo://resource/dynamic/blob/7");
    assert_eq!(content["mimeType"], "text/plain");
    assert!(content.get("text").is_none(), "{blob}");
    let bytes = STANDARD.decode(content["blob"].as_str().unwrap()).unwrap();
    let decoded = String::from_utf8(bytes).unwrap();
    assert!(
        decoded.starts_with("Resource 7: This is a base64 blob"),
        "{decoded}"
    );
    let text = value(
        &bridge,
        "ReadResourceTemplate",
        json!({"template": "demo://resource/dynamic/text/{resourceId}", "arguments": {"resourceId": 3}}),
    )
    .await;
    assert!(
        text["contents"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Resource 3:"),
        "{text}"
    );

    // A template the server did not list is refused before anything is sent: the bridge's
    // validator, in the standard's 422 shape naming the parameter.
    let (status, body) = post(
        &bridge,
        "ReadResourceTemplate",
        json!({"template": "file:///{path}", "arguments": {"path": "etc/passwd"}}),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert!(body["parameter_errors"].get("template").is_some(), "{body}");
    // A variable the template does not have is the caller's to correct.
    let (status, body) = post(
        &bridge,
        "ReadResourceTemplate",
        json!({"template": "demo://resource/dynamic/text/{resourceId}", "arguments": {"id": "1"}}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["result"]["success"], false, "{body}");
    assert_eq!(body["result"]["error"]["can_retry"], true, "{body}");
    // An unknown URI is passed through and the server's error comes back as a tool error.
    let (status, body) = post(
        &bridge,
        "ReadResource",
        json!({"uri": "demo://resource/nope"}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["result"]["success"], false, "{body}");
    assert!(body["result"]["error"]["message"].is_string(), "{body}");

    // A prompt with arguments: its messages.
    let prompt = value(
        &bridge,
        "PromptArgsPrompt",
        json!({"city": "Lyon", "state": "Rhône"}),
    )
    .await;
    assert_eq!(prompt["messages"][0]["role"], "user", "{prompt}");
    assert_eq!(prompt["messages"][0]["content"]["type"], "text");
    assert_eq!(
        prompt["messages"][0]["content"]["text"],
        "What's weather in Lyon, Rhône?"
    );
    // Its required argument is required.
    let (status, body) = post(&bridge, "PromptArgsPrompt", json!({"state": "Rhône"})).await;
    assert_eq!(status, 422, "{body}");
    // A prompt whose messages embed a binary resource.
    let embedded = value(
        &bridge,
        "PromptResourcePrompt",
        json!({"resourceType": "Blob", "resourceId": "2"}),
    )
    .await;
    assert_eq!(
        embedded["messages"][1]["content"]["type"], "resource",
        "{embedded}"
    );
    assert!(embedded["messages"][1]["content"]["resource"]["blob"].is_string());

    bridge.stop().await;
    adapter.shutdown().await;
}

/// A resource the server adds while running: `notifications/resources/list_changed` refreshes
/// the catalog like a tool list change, and the new resource reads as binary with its MIME type.
#[tokio::test]
async fn issue_27_resources_list_changed_refreshes_and_a_new_binary_resource_reads() {
    let Some(bin) = everything_bin() else { return };
    let adapter = McpAdapter::build(
        "everything",
        &everything(&bin, ServeAs::Tools),
        &BuildContext::default(),
    )
    .await
    .unwrap();
    let tools = adapter.list_tools().await.unwrap();
    let mut changes = adapter.catalog_changes().unwrap();
    changes.borrow_and_update();
    let data = format!(
        "data:text/plain;base64,{}",
        STANDARD.encode("hello, resources")
    );
    let gzip = invoke(
        &adapter,
        &tools,
        "gzip-file-as-resource",
        json!({"name": "hello.txt.gz", "data": data, "outputType": "resourceLink"}),
    )
    .await
    .unwrap();
    assert!(
        gzip.to_string()
            .contains("demo://resource/session/hello.txt.gz"),
        "{gzip}"
    );
    tokio::time::timeout(WAIT, changes.changed())
        .await
        .expect("resources/list_changed did not refresh the catalog")
        .unwrap();
    let call_added = |tool: &str, input: Value| {
        let found = tools
            .tools
            .iter()
            .find(|t| t.definition.id.tool == tool)
            .unwrap_or_else(|| panic!("no {tool}"));
        let call = call(&Arc::new(found.clone()), input);
        let adapter = adapter.clone();
        async move {
            tokio::time::timeout(WAIT, adapter.call(call))
                .await
                .unwrap()
        }
    };
    let listed = call_added("ListResources", json!({})).await.unwrap();
    assert!(
        listed["resources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["uri"] == "demo://resource/session/hello.txt.gz"),
        "{listed}"
    );
    let read = call_added(
        "ReadResource",
        json!({"uri": "demo://resource/session/hello.txt.gz"}),
    )
    .await
    .unwrap();
    let content = &read["contents"][0];
    assert_eq!(content["mimeType"], "application/gzip", "{read}");
    let bytes = STANDARD.decode(content["blob"].as_str().unwrap()).unwrap();
    assert_eq!(&bytes[..2], &[0x1f, 0x8b], "gzip's magic number");
    adapter.shutdown().await;
}

#[tokio::test]
async fn issue_27_resources_and_prompts_are_off_by_default() {
    let Some(bin) = everything_bin() else { return };
    let adapter = McpAdapter::build(
        "everything",
        &everything(&bin, ServeAs::Off),
        &BuildContext::default(),
    )
    .await
    .unwrap();
    let tools = adapter.list_tools().await.unwrap();
    assert!(
        tools
            .tools
            .iter()
            .all(|t| matches!(t.target, otc_mappings::Target::Named { .. })),
        "{:?}",
        tools
            .tools
            .iter()
            .map(|t| t.definition.id.to_string())
            .collect::<Vec<_>>()
    );
    assert!(
        tools
            .tools
            .iter()
            .all(|t| !t.definition.id.tool.starts_with("Prompt"))
    );
    adapter.shutdown().await;
}

#[tokio::test]
async fn issue_27_a_server_without_the_capabilities_gets_a_warning_not_a_failure() {
    let mut config = demo_config();
    config.resources = ServeAs::Tools;
    config.prompts = ServeAs::Tools;
    let adapter = stdio_adapter(config).await;
    let tools = adapter.list_tools().await.unwrap();
    assert_eq!(
        tools.tools.len(),
        9,
        "the server's own tools, nothing added"
    );
    let reasons: Vec<&str> = tools
        .diagnostics
        .iter()
        .map(|d| d.reason.as_str())
        .collect();
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    assert!(
        reasons[0].starts_with("source `demo`: `resources: tools`"),
        "{reasons:?}"
    );
    assert!(reasons[0].contains("does not declare the `resources` capability"));
    assert!(
        reasons[1].contains("does not declare the `prompts` capability"),
        "{reasons:?}"
    );
    adapter.shutdown().await;
}
