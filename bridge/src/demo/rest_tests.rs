//! The demo REST service over a real loopback socket, and its document through the bridge's own
//! OpenAPI mapper and adapter (so a change that breaks the demo's translation fails here).

use std::collections::BTreeSet;
use std::sync::Arc;

use otc_adapters::openapi::{OpenApiAdapter, OpenApiConfig};
use otc_adapters::{Adapter, BuildContext, ToolCall};
use otc_mappings::openapi::{MapOptions, NoFetch, map_document};
use otc_mappings::otc::{CallContext, ToolSecret};
use otc_mappings::{MappedTool, Severity};
use reqwest::StatusCode as Status;
use serde_json::{Map, Value, json};

use super::*;

async fn started() -> RestDemo {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    start(listener).await.unwrap()
}

fn url(demo: &RestDemo, path: &str) -> String {
    format!("http://{}{path}", demo.addr())
}

async fn get(demo: &RestDemo, path: &str) -> (Status, Value) {
    let response = reqwest::get(url(demo, path)).await.unwrap();
    let status = response.status();
    (status, response.json().await.unwrap())
}

async fn send(
    demo: &RestDemo,
    method: reqwest::Method,
    path: &str,
    body: &Value,
) -> (Status, Value) {
    let response = reqwest::Client::new()
        .request(method, url(demo, path))
        .json(body)
        .send()
        .await
        .unwrap();
    let status = response.status();
    (status, response.json().await.unwrap())
}

fn ids(list: &Value) -> Vec<u64> {
    list["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].as_u64().unwrap())
        .collect()
}

fn document() -> Value {
    serde_yaml::from_str(OPENAPI_YAML).unwrap()
}

#[tokio::test]
async fn serves_its_own_document() {
    let demo = started().await;
    let response = reqwest::get(demo.document_url()).await.unwrap();
    assert_eq!(response.status(), Status::OK);
    assert_eq!(response.headers()["content-type"], "application/yaml");
    assert_eq!(response.text().await.unwrap(), OPENAPI_YAML);
    assert_eq!(
        demo.document_url(),
        format!("{}openapi.yaml", demo.base_url())
    );
}

#[test]
fn document_is_openapi_3_0_with_described_operations() {
    let doc = document();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.0."));
    assert_eq!(
        doc["servers"][0]["url"], "/",
        "relative, resolved against the document"
    );
    let mut operation_ids = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            if method == "parameters" {
                continue;
            }
            let label = format!("{method} {path}");
            let id = op["operationId"]
                .as_str()
                .unwrap_or_else(|| panic!("{label}"));
            assert!(operation_ids.insert(id.to_owned()), "{label}: duplicate id");
            for key in ["summary", "description"] {
                assert!(
                    op[key].as_str().is_some_and(|s| !s.is_empty()),
                    "{label}: {key}"
                );
            }
            assert!(op["responses"].is_object(), "{label}: responses");
        }
    }
    let expected = [
        "createNote",
        "deleteNote",
        "getNote",
        "listNotes",
        "updateNote",
    ];
    assert_eq!(operation_ids, expected.map(str::to_owned).into());
    let scheme = &doc["components"]["securitySchemes"][API_KEY_SECRET];
    assert_eq!(scheme["type"], "apiKey");
    assert_eq!(scheme["in"], "header");
    assert!(
        scheme["name"]
            .as_str()
            .unwrap()
            .eq_ignore_ascii_case(API_KEY_HEADER)
    );
}

fn mapped_tools() -> Vec<MappedTool> {
    let options = MapOptions {
        base_uri: Some("http://127.0.0.1:1/openapi.yaml".to_owned()),
        ..MapOptions::default()
    };
    let mapped = map_document(OPENAPI_YAML, &options, &NoFetch).unwrap();
    let complaints: Vec<_> = mapped
        .diagnostics
        .iter()
        .filter(|d| d.severity != Severity::Info)
        .collect();
    assert!(complaints.is_empty(), "{complaints:#?}");
    mapped.tools
}

#[test]
fn document_maps_to_described_tools_without_warnings() {
    let tools = mapped_tools();
    let ids: BTreeSet<String> = tools.iter().map(|t| t.definition.id.to_string()).collect();
    let expected = [
        "DemoNotes.CreateNote@1.0.0",
        "DemoNotes.DeleteNote@1.0.0",
        "DemoNotes.GetNote@1.0.0",
        "DemoNotes.ListNotes@1.0.0",
        "DemoNotes.UpdateNote@1.0.0",
    ];
    assert_eq!(ids, expected.map(str::to_owned).into());
    for tool in &tools {
        let definition = &tool.definition;
        assert!(!definition.description.is_empty());
        let text = definition.input_schema.to_string();
        assert!(!text.contains("$ref"), "{}: {text}", definition.id);
        let requirements = serde_json::to_value(&definition.requirements).unwrap();
        if definition
            .id
            .to_string()
            .starts_with("DemoNotes.DeleteNote")
        {
            assert_eq!(requirements["secrets"][0]["id"], API_KEY_SECRET);
            assert_eq!(definition.output_schema, None, "204: no content");
        } else {
            assert_eq!(requirements, Value::Null, "{}", definition.id);
        }
    }
    let list = tools
        .iter()
        .find(|t| t.definition.name == "DemoNotes_ListNotes")
        .unwrap();
    let input = list.definition.input_schema.to_value();
    let properties = &input["properties"];
    assert_eq!(properties["limit"]["default"], 10);
    assert_eq!(properties["order"]["enum"], json!(["newest", "oldest"]));
    let create = tools
        .iter()
        .find(|t| t.definition.name == "DemoNotes_CreateNote")
        .unwrap();
    let input = create.definition.input_schema.to_value();
    let required = &input["required"];
    assert_eq!(
        required,
        &json!(["title", "body"]),
        "body fields merged into the input"
    );
}

#[tokio::test]
async fn list_applies_defaults_order_and_tag() {
    let demo = started().await;
    let (status, all) = get(&demo, "/notes").await;
    assert_eq!(status, Status::OK);
    assert_eq!(ids(&all), [2, 1], "newest first by default");
    assert_eq!(all["total"], 2);
    assert_eq!(all["notes"][1]["title"], "Welcome");
    assert_eq!(ids(&get(&demo, "/notes?order=oldest").await.1), [1, 2]);
    let (_, first) = get(&demo, "/notes?order=oldest&limit=1").await;
    assert_eq!((ids(&first), &first["total"]), (vec![1], &json!(2)));
    assert_eq!(ids(&get(&demo, "/notes?tag=ideas").await.1), [2]);
    assert_eq!(
        ids(&get(&demo, "/notes?tag=none").await.1),
        Vec::<u64>::new()
    );
}

#[tokio::test]
async fn bad_queries_are_400_with_a_json_error() {
    let demo = started().await;
    for query in ["order=random", "limit=0", "limit=51", "limit=many"] {
        let (status, body) = get(&demo, &format!("/notes?{query}")).await;
        assert_eq!(status, Status::BAD_REQUEST, "{query}");
        assert_eq!(body["code"], "bad_request", "{query}");
        assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()));
    }
}

#[tokio::test]
async fn create_get_and_update_a_note() {
    let demo = started().await;
    let new = json!({"title": "Groceries", "body": "Eggs, flour, milk.", "tags": ["home"]});
    let (status, created) = send(&demo, reqwest::Method::POST, "/notes", &new).await;
    assert_eq!(status, Status::CREATED);
    assert_eq!(
        created,
        json!({"id": 3, "title": "Groceries", "body": "Eggs, flour, milk.",
               "tags": ["home"], "pinned": false})
    );
    assert_eq!(get(&demo, "/notes/3").await, (Status::OK, created.clone()));

    let change = json!({"pinned": true, "title": "Shopping"});
    let (status, updated) = send(&demo, reqwest::Method::PATCH, "/notes/3", &change).await;
    assert_eq!(status, Status::OK);
    assert_eq!(updated["title"], "Shopping");
    assert_eq!(updated["pinned"], true);
    assert_eq!(
        updated["body"], created["body"],
        "fields not given are kept"
    );
    assert_eq!(get(&demo, "/notes/3").await.1, updated);
}

#[tokio::test]
async fn bad_bodies_are_400_with_a_json_error() {
    let demo = started().await;
    let too_many_tags: Vec<String> = (0..6).map(|i| format!("t{i}")).collect();
    let cases = [
        (reqwest::Method::POST, "/notes", json!({"body": "no title"})),
        (
            reqwest::Method::POST,
            "/notes",
            json!({"title": "", "body": "x"}),
        ),
        (
            reqwest::Method::POST,
            "/notes",
            json!({"title": "x".repeat(81), "body": "x"}),
        ),
        (
            reqwest::Method::POST,
            "/notes",
            json!({"title": "t", "body": "x", "tags": too_many_tags}),
        ),
        (
            reqwest::Method::POST,
            "/notes",
            json!(["not", "an", "object"]),
        ),
        (reqwest::Method::PATCH, "/notes/1", json!({})),
        (reqwest::Method::PATCH, "/notes/1", json!({"tags": [""]})),
    ];
    for (method, path, body) in cases {
        let (status, answer) = send(&demo, method.clone(), path, &body).await;
        assert_eq!(status, Status::BAD_REQUEST, "{method} {path} {body}");
        assert_eq!(answer["code"], "bad_request", "{method} {path} {body}");
    }
    assert_eq!(
        get(&demo, "/notes").await.1["total"],
        2,
        "nothing was stored"
    );
}

#[tokio::test]
async fn unknown_ids_and_routes_are_404_with_a_json_error() {
    let demo = started().await;
    let (status, body) = get(&demo, "/notes/42").await;
    assert_eq!(status, Status::NOT_FOUND);
    assert_eq!(body["code"], "not_found");
    assert!(body["message"].as_str().unwrap().contains("42"));
    let patch = json!({"pinned": true});
    let (status, _) = send(&demo, reqwest::Method::PATCH, "/notes/42", &patch).await;
    assert_eq!(status, Status::NOT_FOUND);
    let (status, body) = get(&demo, "/nothing/here").await;
    assert_eq!(
        (status, &body["code"]),
        (Status::NOT_FOUND, &json!("not_found"))
    );
    let (status, body) = get(&demo, "/notes/abc").await;
    assert_eq!(
        (status, &body["code"]),
        (Status::BAD_REQUEST, &json!("bad_request"))
    );
}

#[tokio::test]
async fn delete_needs_the_api_key() {
    let demo = started().await;
    let client = reqwest::Client::new();
    let delete = |key: Option<&str>| {
        let mut request = client.delete(url(&demo, "/notes/1"));
        if let Some(key) = key {
            request = request.header("X-Api-Key", key);
        }
        request.send()
    };
    for key in [None, Some("wrong")] {
        let response = delete(key).await.unwrap();
        assert_eq!(response.status(), Status::UNAUTHORIZED, "{key:?}");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["code"], "unauthorized");
    }
    assert_eq!(get(&demo, "/notes/1").await.0, Status::OK, "still there");

    let response = delete(Some(API_KEY)).await.unwrap();
    assert_eq!(response.status(), Status::NO_CONTENT);
    assert!(response.bytes().await.unwrap().is_empty());
    assert_eq!(get(&demo, "/notes/1").await.0, Status::NOT_FOUND);
    let again = delete(Some(API_KEY)).await.unwrap();
    assert_eq!(again.status(), Status::NOT_FOUND);
}

#[tokio::test]
async fn shutdown_stops_the_service() {
    let demo = started().await;
    let document = demo.document_url();
    assert_eq!(reqwest::get(&document).await.unwrap().status(), Status::OK);
    demo.shutdown().await.unwrap();
    let after = reqwest::Client::new().get(&document).send().await;
    assert!(after.is_err_and(|e| e.is_connect()));
}

fn call(tools: &[MappedTool], name: &str, input: Value, context: CallContext) -> ToolCall {
    let tool = tools.iter().find(|t| t.definition.name == name).unwrap();
    ToolCall {
        tool: Arc::new(tool.clone()),
        input: serde_json::from_value::<Map<String, Value>>(input).unwrap(),
        context,
        call_id: "demo-call".to_owned(),
        trace_id: None,
        trace_context: None,
    }
}

#[tokio::test]
async fn works_through_the_openapi_adapter() {
    let demo = started().await;
    let adapter = OpenApiAdapter::build(
        "demo",
        &OpenApiConfig::new(demo.document_url()),
        &BuildContext::default(),
    )
    .await
    .unwrap();
    let tools = adapter.list_tools().await.unwrap().tools;
    assert_eq!(tools.len(), 5);

    let none = CallContext::default;
    let note = adapter
        .call(call(
            &tools,
            "DemoNotes_GetNote",
            json!({"noteId": 1}),
            none(),
        ))
        .await
        .unwrap();
    assert_eq!(note["title"], "Welcome");

    let input = json!({"title": "From the bridge", "body": "Hello.", "pinned": true});
    let created = adapter
        .call(call(&tools, "DemoNotes_CreateNote", input, none()))
        .await
        .unwrap();
    assert_eq!(
        (&created["id"], &created["pinned"]),
        (&json!(3), &json!(true))
    );

    let list = adapter
        .call(call(
            &tools,
            "DemoNotes_ListNotes",
            json!({"order": "oldest"}),
            none(),
        ))
        .await
        .unwrap();
    assert_eq!(ids(&list), [1, 2, 3]);

    let missing = adapter
        .call(call(
            &tools,
            "DemoNotes_GetNote",
            json!({"noteId": 99}),
            none(),
        ))
        .await
        .unwrap_err();
    assert!(
        matches!(
            missing,
            otc_adapters::AdapterError::UpstreamStatus { status: 404, .. }
        ),
        "{missing:?}"
    );

    let with_key = CallContext {
        secrets: vec![ToolSecret {
            id: API_KEY_SECRET.to_owned(),
            value: API_KEY.to_owned(),
            extra: Map::new(),
        }],
        ..CallContext::default()
    };
    let deleted = adapter
        .call(call(
            &tools,
            "DemoNotes_DeleteNote",
            json!({"noteId": 3}),
            with_key,
        ))
        .await
        .unwrap();
    assert_eq!(deleted, Value::Null);
}
