//! Building the adapter: documents from files and URLs, `$ref`s to other files, setup errors.

use super::*;

#[tokio::test]
async fn a_document_fetched_over_http_resolves_its_relative_server() {
    let upstream = Upstream::start().await;
    let config = OpenApiConfig::new(format!("{}/openapi.yaml", upstream.url()));
    let adapter = OpenApiAdapter::build("remote", &config, &BuildContext::default())
        .await
        .unwrap();
    let listed = adapter.list_tools().await.unwrap();
    let tool = listed
        .tools
        .iter()
        .find(|t| plan_of(t).operation == "GET /text")
        .unwrap();
    let value = adapter
        .call(ToolCall {
            tool: Arc::new(tool.clone()),
            input: Map::new(),
            context: CallContext::default(),
            call_id: "c".into(),
            trace_id: None,
            trace_context: None,
        })
        .await
        .unwrap();
    assert_eq!(value, "hello, world");
}

#[tokio::test]
async fn setup_errors_name_what_to_fix() {
    let err = OpenApiAdapter::build(
        "x",
        &OpenApiConfig::new("/nonexistent/api.yaml"),
        &BuildContext::default(),
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("/nonexistent/api.yaml"), "{err}");

    // A file document whose only server is relative needs base_url.
    let config = OpenApiConfig::new(upstream_http::document_path().display().to_string());
    let err = OpenApiAdapter::build("x", &config, &BuildContext::default())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("set base_url"), "{err}");

    let mut config = OpenApiConfig::new(upstream_http::document_path().display().to_string());
    config.base_url = Some("http://127.0.0.1:1".into());
    config.credentials.insert(
        "bearerAuth".into(),
        CredentialConfig {
            env: "OTC_TEST_SURELY_UNSET_VARIABLE".into(),
        },
    );
    let err = OpenApiAdapter::build("x", &config, &BuildContext::default())
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("OTC_TEST_SURELY_UNSET_VARIABLE"),
        "{err}"
    );

    for (ca, says) in [
        ("/nonexistent/ca.pem".into(), "/nonexistent/ca.pem"),
        (upstream_http::document_path(), "no PEM certificate"),
    ] {
        let mut config = OpenApiConfig::new(upstream_http::document_path().display().to_string());
        config.base_url = Some("http://127.0.0.1:1".into());
        config.ca_cert_file = Some(ca);
        let err = OpenApiAdapter::build("x", &config, &BuildContext::default())
            .await
            .unwrap_err();
        assert!(err.to_string().contains(says), "{err}");
    }

    let closed = format!("127.0.0.1:{}", otc_tests::http::free_port());
    let err = OpenApiAdapter::build(
        "x",
        &OpenApiConfig::new(format!("http://{closed}/api.yaml")),
        &BuildContext::default(),
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains(&closed.to_string()), "{err}");
}

/// The `name` property of the only tool's input schema, if the body schema was resolved.
fn pet_name_property(listed: &Mapped<MappedTool>) -> Option<Value> {
    let schema = listed.tools.first()?.definition.input_schema.to_value();
    schema.pointer("/properties/name").cloned()
}

#[tokio::test]
async fn sibling_file_refs_are_read_for_a_file_document() {
    let upstream = Upstream::start().await;
    let mut config = OpenApiConfig::new(upstream_http::split_document_path().display().to_string());
    config.base_url = Some(upstream.url());
    let adapter = OpenApiAdapter::build("split", &config, &BuildContext::default())
        .await
        .unwrap();
    let listed = adapter.list_tools().await.unwrap();
    let name = pet_name_property(&listed).unwrap();
    assert_eq!(name["description"], "The pet's name.");
    let value = adapter
        .call(ToolCall {
            tool: Arc::new(listed.tools[0].clone()),
            input: json!({"name": "Rex"}).as_object().unwrap().clone(),
            context: CallContext::default(),
            call_id: "c".into(),
            trace_id: None,
            trace_context: None,
        })
        .await
        .unwrap();
    assert_eq!(value["body"]["json"], json!({"name": "Rex"}));
}

#[tokio::test]
async fn refs_of_a_remote_document_are_fetched_only_when_allowed() {
    let upstream = Upstream::start().await;
    let spec = format!("{}/split/api.yaml", upstream.url());

    let refused = OpenApiAdapter::build(
        "split",
        &OpenApiConfig::new(spec.clone()),
        &BuildContext::default(),
    )
    .await
    .unwrap();
    assert_eq!(upstream.hits(), 1, "only the document itself is fetched");
    let listed = refused.list_tools().await.unwrap();
    assert!(pet_name_property(&listed).is_none());
    let said = format!("{:?}", listed.diagnostics);
    assert!(said.contains("schemas.yaml"), "{said}");

    let mut config = OpenApiConfig::new(spec);
    config.allow_remote_refs = true;
    let allowed = OpenApiAdapter::build("split", &config, &BuildContext::default())
        .await
        .unwrap();
    let listed = allowed.list_tools().await.unwrap();
    assert_eq!(pet_name_property(&listed).unwrap()["type"], "string");
}

#[tokio::test]
async fn map_only_needs_no_base_url_or_credentials() {
    let mut config = OpenApiConfig::new(upstream_http::document_path().display().to_string());
    config.credentials.insert(
        "headerKey".into(),
        CredentialConfig {
            env: "OTC_TEST_SURELY_UNSET_VARIABLE".into(),
        },
    );
    let mapped = OpenApiAdapter::map(&config, &BuildContext::default())
        .await
        .unwrap();
    let tool = mapped
        .tools
        .iter()
        .find(|t| plan_of(t).operation == "GET /echo/secure/header")
        .unwrap();
    let usage = &plan_of(tool).security[0][0];
    assert_eq!(usage.source, CredentialSource::Bridge);
}
