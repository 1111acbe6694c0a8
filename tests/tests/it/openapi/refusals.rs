//! What the adapter refuses to send (issue 8): servers at link-local and cloud-metadata
//! addresses the document chose (defect 14 a), header values that are not visible ASCII
//! (defect 14 c), and credentials that can never be placed, found at build time.

use super::*;

fn operations(listed: &Mapped<MappedTool>) -> Vec<String> {
    let mut ops: Vec<String> = listed
        .tools
        .iter()
        .map(|t| plan_of(t).operation.clone())
        .collect();
    ops.sort();
    ops
}

fn skipped_reason(listed: &Mapped<MappedTool>, operation: &str) -> String {
    listed
        .diagnostics
        .iter()
        .find(|d| d.severity == Severity::Skipped && d.operation.as_deref() == Some(operation))
        .map(|d| d.reason.clone())
        .unwrap_or_else(|| panic!("{operation} not skipped: {:?}", listed.diagnostics))
}

#[tokio::test]
async fn issue_8_link_local_and_metadata_servers_are_refused_unless_allowed() {
    let config = OpenApiConfig::new(
        upstream_http::misconfigured_document_path()
            .display()
            .to_string(),
    );
    let adapter = OpenApiAdapter::build("m", &config, &BuildContext::default())
        .await
        .unwrap();
    let listed = adapter.list_tools().await.unwrap();
    assert_eq!(operations(&listed), ["GET /fine"]);
    for (operation, url) in [
        ("GET /aws", "169.254.169.254"),
        ("GET /aws-decimal", "169.254.169.254"),
        ("GET /aws-v6", "[fd00:ec2::254]"),
        ("GET /mapped", "[::ffff:a9fe:a9fe]"),
        ("GET /link-local-v6", "[fe80::1]"),
        ("GET /gcp", "metadata.google.internal"),
    ] {
        let reason = skipped_reason(&listed, operation);
        assert!(reason.contains(url), "{operation}: {reason}");
        assert!(reason.contains("allow_link_local_servers"), "{reason}");
    }

    let mut config = config;
    config.allow_link_local_servers = true;
    let adapter = OpenApiAdapter::build("m", &config, &BuildContext::default())
        .await
        .unwrap();
    let listed = adapter.list_tools().await.unwrap();
    assert!(operations(&listed).contains(&"GET /aws".to_owned()));
    assert_eq!(listed.tools.len(), 7, "{:?}", listed.diagnostics);
}

#[tokio::test]
async fn issue_8_a_source_whose_every_server_is_refused_fails() {
    let path = upstream_http::metadata_only_document_path();
    let err = OpenApiAdapter::build(
        "m",
        &OpenApiConfig::new(path.display().to_string()),
        &BuildContext::default(),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, AdapterError::Setup { .. }), "{err:?}");
    let said = err.to_string();
    assert!(
        said.contains("169.254.169.254") && said.contains("allow_link_local_servers"),
        "{said}"
    );

    // An explicit base_url is the operator's choice: here, the loopback upstream.
    let upstream = Upstream::start().await;
    let mut config = OpenApiConfig::new(path.display().to_string());
    config.base_url = Some(format!("{}/echo", upstream.url()));
    let adapter = OpenApiAdapter::build("m", &config, &BuildContext::default())
        .await
        .unwrap();
    let listed = adapter.list_tools().await.unwrap();
    let value = adapter
        .call(ToolCall {
            tool: Arc::new(listed.tools[0].clone()),
            input: Map::new(),
            context: CallContext::default(),
            call_id: "c".into(),
            trace_id: None,
            trace_context: None,
        })
        .await
        .unwrap();
    assert_eq!(value["path"], "/echo/meta-data/iam/security-credentials");
}

#[tokio::test]
async fn issue_8_credentials_that_can_never_be_placed_skip_the_operation_at_build() {
    let config = OpenApiConfig::new(
        upstream_http::misconfigured_document_path()
            .display()
            .to_string(),
    );
    let adapter = OpenApiAdapter::build("m", &config, &BuildContext::default())
        .await
        .unwrap();
    let listed = adapter.list_tools().await.unwrap();
    let reason = skipped_reason(&listed, "GET /bad-header-key");
    assert!(
        reason.contains("badHeader") && reason.contains("fix the scheme's `name`"),
        "{reason}"
    );
    let reason = skipped_reason(&listed, "GET /bad-scheme-word");
    assert!(
        reason.contains("badWord") && reason.contains("fix the scheme's `scheme`"),
        "{reason}"
    );
}

#[tokio::test]
async fn issue_8_header_values_must_be_visible_ascii() {
    let fx = fixture().await;
    let before = fx.upstream.hits();
    for value in ["café", "a\r\nX-Injected: 1", "a\nb", "nul\0"] {
        let err = fx
            .call("GET /echo/headers", json!({"X-Request-Tag": value}))
            .await
            .unwrap_err();
        let AdapterError::BadInput { message } = &err else {
            panic!("{value:?}: {err:?}")
        };
        assert!(message.contains("visible ASCII"), "{message}");
        let input = plan_of(&fx.tool("GET /echo/headers")).params[0]
            .input
            .clone();
        assert!(message.contains(&input), "{message}");
    }
    // A credential placed in a header follows the same rule.
    let context = fx.context_for("GET /echo/secure/header", "clé");
    let err = fx
        .call_with("GET /echo/secure/header", json!({}), context, None)
        .await
        .unwrap_err();
    assert!(matches!(err, AdapterError::BadInput { .. }), "{err:?}");
    assert_eq!(fx.upstream.hits(), before, "nothing was sent");

    // Visible ASCII, spaces and tabs go through as given.
    let echo = fx
        .call("GET /echo/headers", json!({"X-Request-Tag": "a b\tc"}))
        .await
        .unwrap();
    assert_eq!(echo["headers"]["x-request-tag"], "a b\tc");

    // A static header of the config is checked when the source is built.
    let upstream = Upstream::start().await;
    let mut config = OpenApiConfig::new(upstream_http::document_path().display().to_string());
    config.base_url = Some(upstream.url());
    config
        .headers
        .insert("X-Client".into(), "otc-brücke".into());
    let err = OpenApiAdapter::build("x", &config, &BuildContext::default())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("X-Client"), "{err}");
}

/// Redirects are followed only within the operation's origin, which was checked at build time:
/// a redirect to the metadata address is reported, not followed (verified for issue 8; this held
/// before the issue, and must keep holding).
#[tokio::test]
async fn issue_8_a_redirect_to_the_metadata_address_is_not_followed() {
    let fx = fixture().await;
    let err = fx
        .call(
            "GET /redirect",
            json!({"to": "http://169.254.169.254/latest/meta-data/"}),
        )
        .await
        .unwrap_err();
    let AdapterError::UpstreamStatus { status, body, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(*status, 302);
    assert!(
        body.as_deref().unwrap().contains("http://169.254.169.254"),
        "{body:?}"
    );
}

/// Issue 25, item 13: `otc-bridge check` reports what serving refuses: the operations whose
/// server is link-local or a metadata host are skipped in its report too (it said `skipped: 0`).
#[test]
fn check_reports_the_servers_serving_refuses() {
    let output = std::process::Command::new(otc_tests::bridge_process::bridge_bin())
        .args(["check", "--openapi"])
        .arg(upstream_http::misconfigured_document_path())
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{report}");
    for operation in ["GET /aws", "GET /aws-v6", "GET /link-local-v6", "GET /gcp"] {
        assert!(
            report.contains(&format!("skipped: {operation}: the server URL")),
            "{operation} not reported: {report}"
        );
    }
    assert!(!report.contains("skipped: 0"), "{report}");
}
