//! The OpenAPI adapter against a real upstream over loopback: `tests/fixtures/openapi/upstream.yaml`
//! is mapped by `otc-mappings`, and every call goes through the `Adapter` trait to the axum
//! server of `otc_tests::upstream_http`, whose echo routes report what arrived on the wire.
//!
//! Parameter locations and styles, body types, security schemes, response kinds and failure
//! classes each have a test; retry hints are checked through the bridge's `rescue` table, the
//! one place that decides them.

use std::sync::Arc;

use otc_adapters::openapi::{CredentialConfig, OpenApiAdapter, OpenApiConfig};
use otc_adapters::{Adapter, AdapterError, ToolCall};
use otc_mappings::openapi::{CredentialSource, RequestPlan};
use otc_mappings::otc::{AuthorizationToken, CallContext, ToolSecret};
use otc_mappings::{Mapped, MappedTool, Severity, Target};
use otc_tests::upstream_http::{self, BINARY_BODY, Upstream};
use serde_json::{Map, Value, json};

struct Fixture {
    upstream: Upstream,
    adapter: OpenApiAdapter,
    listed: Mapped<MappedTool>,
}

async fn fixture() -> Fixture {
    fixture_with(|_| {}).await
}

async fn fixture_with(edit: impl FnOnce(&mut OpenApiConfig)) -> Fixture {
    let upstream = Upstream::start().await;
    let mut config = OpenApiConfig::new(upstream_http::document_path().display().to_string());
    config.base_url = Some(upstream.url());
    edit(&mut config);
    let adapter = OpenApiAdapter::build("upstream", &config).await.unwrap();
    let listed = adapter.list_tools().await.unwrap();
    Fixture {
        upstream,
        adapter,
        listed,
    }
}

fn plan_of(tool: &MappedTool) -> &RequestPlan {
    match &tool.target {
        Target::Http(plan) => plan,
        Target::Named { .. } => panic!("not an HTTP tool"),
    }
}

impl Fixture {
    /// The tool of `operation` (`GET /echo/query`).
    fn tool(&self, operation: &str) -> Arc<MappedTool> {
        let tool = self
            .listed
            .tools
            .iter()
            .find(|t| plan_of(t).operation == operation)
            .unwrap_or_else(|| panic!("no tool for {operation}"));
        Arc::new(tool.clone())
    }

    /// Calls `operation` with arguments keyed by their wire names (translated to the tool's
    /// input names through the plan, so the test does not depend on renaming rules).
    async fn call(&self, operation: &str, args: Value) -> Result<Value, AdapterError> {
        self.call_with(operation, args, CallContext::default(), None)
            .await
    }

    async fn call_with(
        &self,
        operation: &str,
        args: Value,
        context: CallContext,
        trace_id: Option<&str>,
    ) -> Result<Value, AdapterError> {
        let tool = self.tool(operation);
        let plan = plan_of(&tool);
        let mut input = Map::new();
        for (key, value) in args.as_object().unwrap() {
            let name = plan
                .params
                .iter()
                .find(|p| &p.name == key)
                .map_or(key.clone(), |p| p.input.clone());
            input.insert(name, value.clone());
        }
        self.adapter
            .call(ToolCall {
                tool,
                input,
                context,
                call_id: "call-1".into(),
                trace_id: trace_id.map(str::to_owned),
            })
            .await
    }

    /// A context that gives `value` for every credential the operation's first alternative uses.
    fn context_for(&self, operation: &str, value: &str) -> CallContext {
        let tool = self.tool(operation);
        let mut context = CallContext::default();
        for usage in &plan_of(&tool).security[0] {
            match usage.source {
                CredentialSource::Authorization => context.authorization.push(AuthorizationToken {
                    id: usage.requirement_id.clone(),
                    token: value.into(),
                    extra: Map::new(),
                }),
                CredentialSource::Secret => context.secrets.push(ToolSecret {
                    id: usage.requirement_id.clone(),
                    value: value.into(),
                    extra: Map::new(),
                }),
                CredentialSource::Bridge => {}
            }
        }
        context
    }

    /// The bridge's verdict on a failure (can_retry, retry_after_ms, messages).
    fn tool_error(&self, operation: &str, err: &AdapterError) -> otc_mappings::otc::ToolError {
        otc_bridge::rescue::tool_error(err, &self.tool(operation).definition)
    }
}

#[tokio::test]
async fn every_operation_of_the_document_becomes_a_tool() {
    let fx = fixture().await;
    let skipped: Vec<_> = fx
        .listed
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Skipped)
        .collect();
    assert!(skipped.is_empty(), "{skipped:?}");
    let operations = upstream_http::DOCUMENT.matches("operationId:").count();
    assert_eq!(fx.listed.tools.len(), operations);
}

#[tokio::test]
async fn path_parameters_simple_label_matrix() {
    let fx = fixture().await;
    let echo = fx
        .call(
            "GET /echo/path/simple/{ids}/{id}",
            json!({"ids": ["a b", "c/d"], "id": "x?y#z"}),
        )
        .await
        .unwrap();
    assert_eq!(echo["path"], "/echo/path/simple/a%20b,c%2Fd/x%3Fy%23z");
    let echo = fx
        .call("GET /echo/path/label/{ids}", json!({"ids": [1, 2, 3]}))
        .await
        .unwrap();
    assert_eq!(echo["path"], "/echo/path/label/.1.2.3");
    let echo = fx
        .call(
            "GET /echo/path/matrix/{point}",
            json!({"point": {"x": 1, "y": 2}}),
        )
        .await
        .unwrap();
    assert_eq!(echo["path"], "/echo/path/matrix/;x=1;y=2");

    // A dot segment would be resolved away by URL parsing and reach another endpoint.
    let err = fx
        .call(
            "GET /echo/path/simple/{ids}/{id}",
            json!({"ids": ["a"], "id": ".."}),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, AdapterError::BadInput { .. }), "{err:?}");
}

#[tokio::test]
async fn query_styles_reserved_characters_and_defaults() {
    let fx = fixture().await;
    let echo = fx
        .call(
            "GET /echo/query",
            json!({
                "tags": ["a", "b"],
                "colors": ["red", "green"],
                "words": ["hello", "world"],
                "nums": [1, 2, 3],
                "filter": {"x": 1, "y": 2},
                "point": {"x": 3, "y": 4},
                "redirect_uri": "https://a.example/cb?x=1",
                "q": "a&b=c d",
            }),
        )
        .await
        .unwrap();
    assert_eq!(
        echo["query"],
        "tags=a&tags=b&colors=red,green&words=hello%20world&nums=1|2|3\
         &filter%5Bx%5D=1&filter%5By%5D=2&x=3&y=4&redirect_uri=https://a.example/cb?x=1\
         &q=a%26b%3Dc%20d&limit=10"
    );
    // An explicit value wins over the default.
    let echo = fx
        .call("GET /echo/query", json!({"limit": 3}))
        .await
        .unwrap();
    assert_eq!(echo["query"], "limit=3");
}

#[tokio::test]
async fn headers_and_cookies() {
    let fx = fixture().await;
    let echo = fx
        .call(
            "GET /echo/headers",
            json!({"X-Request-Tag": "t-1", "X-Ids": [4, 5], "session": "abc def;x"}),
        )
        .await
        .unwrap();
    let headers = &echo["headers"];
    assert_eq!(headers["x-request-tag"], "t-1");
    assert_eq!(headers["x-ids"], "4,5");
    assert_eq!(headers["cookie"], "session=abc%20def%3Bx; theme=dark");
    assert_eq!(headers["accept"], "application/json");
}

#[tokio::test]
async fn json_body_with_path_parameter() {
    let fx = fixture().await;
    let echo = fx
        .call(
            "PUT /echo/json/{id}",
            json!({"id": 7, "name": "Rex", "tags": ["a"], "owner": {"id": 1}}),
        )
        .await
        .unwrap();
    assert_eq!(echo["method"], "PUT");
    assert_eq!(echo["path"], "/echo/json/7");
    assert_eq!(echo["body"]["content_type"], "application/json");
    assert_eq!(
        echo["body"]["json"],
        json!({"name": "Rex", "tags": ["a"], "owner": {"id": 1}})
    );
}

#[tokio::test]
async fn form_body() {
    let fx = fixture().await;
    let echo = fx
        .call(
            "POST /echo/form",
            json!({"name": "a b&c", "tags": ["x", "y"]}),
        )
        .await
        .unwrap();
    assert_eq!(
        echo["body"]["content_type"],
        "application/x-www-form-urlencoded"
    );
    assert_eq!(
        echo["body"]["form"],
        json!([["name", "a b&c"], ["tags", "x"], ["tags", "y"]])
    );
}

#[tokio::test]
async fn multipart_body_with_a_file_from_a_data_url_or_base64() {
    let fx = fixture().await;
    let echo = fx
        .call(
            "POST /echo/multipart",
            json!({"title": "T", "file": "data:text/plain;name=hi.txt;base64,aGVsbG8="}),
        )
        .await
        .unwrap();
    let parts = echo["body"]["parts"].as_array().unwrap();
    assert_eq!(parts[0]["name"], "title");
    assert_eq!(parts[0]["text"], "T");
    assert_eq!(parts[1]["name"], "file");
    assert_eq!(parts[1]["filename"], "hi.txt");
    assert_eq!(parts[1]["content_type"], "text/plain");
    assert_eq!(parts[1]["text"], "hello");

    let echo = fx
        .call("POST /echo/multipart", json!({"file": "/wAB"}))
        .await
        .unwrap();
    let part = &echo["body"]["parts"][0];
    assert_eq!(part["filename"], "file");
    assert_eq!(part["bytes"], json!([255, 0, 1]));
}

#[tokio::test]
async fn text_and_binary_bodies() {
    let fx = fixture().await;
    let tool = fx.tool("POST /echo/text");
    let body = plan_of(&tool).body.as_ref().unwrap().source.clone();
    let otc_mappings::openapi::BodySource::Property(text_input) = body else {
        panic!("a text body is one property")
    };
    let echo = fx
        .call("POST /echo/text", json!({ text_input: "héllo\nworld" }))
        .await
        .unwrap();
    assert_eq!(echo["body"]["content_type"], "text/plain");
    assert_eq!(echo["body"]["text"], "héllo\nworld");

    let tool = fx.tool("POST /echo/binary");
    let otc_mappings::openapi::BodySource::Property(bin_input) =
        plan_of(&tool).body.as_ref().unwrap().source.clone()
    else {
        panic!("a binary body is one property")
    };
    let echo = fx
        .call("POST /echo/binary", json!({ bin_input.as_str(): "/wAB" }))
        .await
        .unwrap();
    assert_eq!(echo["body"]["content_type"], "application/octet-stream");
    assert_eq!(echo["body"]["bytes"], json!([255, 0, 1]));

    let err = fx
        .call(
            "POST /echo/binary",
            json!({ bin_input.as_str(): "not base64!" }),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, AdapterError::BadInput { .. }), "{err}");
}

#[tokio::test]
async fn security_schemes_place_credentials_where_they_belong() {
    let fx = fixture().await;
    let cases = [
        ("bearer", "tok-1", "authorization", "Bearer tok-1"),
        ("oauth2", "tok-2", "authorization", "Bearer tok-2"),
        ("basic", "user:pass", "authorization", "Basic dXNlcjpwYXNz"),
        (
            "basic",
            "dXNlcjpwYXNz",
            "authorization",
            "Basic dXNlcjpwYXNz",
        ),
        ("header", "key-3", "x-api-key", "key-3"),
        ("cookie", "key-4", "cookie", "token=key-4"),
    ];
    for (scheme, value, header, expected) in cases {
        let operation = format!("GET /echo/secure/{scheme}");
        let context = fx.context_for(&operation, value);
        let echo = fx
            .call_with(&operation, json!({}), context, None)
            .await
            .unwrap();
        assert_eq!(echo["headers"][header], expected, "{scheme}");
    }
    let context = fx.context_for("GET /echo/secure/query", "k 5");
    let echo = fx
        .call_with("GET /echo/secure/query", json!({}), context, None)
        .await
        .unwrap();
    assert_eq!(echo["query"], "api_key=k%205");
}

#[tokio::test]
async fn a_missing_credential_is_bad_input_and_nothing_is_sent() {
    let fx = fixture().await;
    let before = fx.upstream.hits();
    let err = fx
        .call("GET /echo/secure/bearer", json!({}))
        .await
        .unwrap_err();
    assert!(matches!(err, AdapterError::BadInput { .. }), "{err}");
    assert_eq!(fx.upstream.hits(), before);
}

#[tokio::test]
async fn bridge_credentials_and_static_headers_are_sent() {
    // cargo sets CARGO_PKG_NAME for test processes: an environment variable we need not set.
    let fx = fixture_with(|c| {
        c.credentials.insert(
            "headerKey".into(),
            CredentialConfig {
                env: "CARGO_PKG_NAME".into(),
            },
        );
        c.headers.insert("X-Client".into(), "otc-tests".into());
    })
    .await;
    let tool = fx.tool("GET /echo/secure/header");
    let listed = tool.definition.requirements.clone().unwrap_or_default();
    assert!(listed.secrets.is_empty(), "{listed:?}");
    let echo = fx.call("GET /echo/secure/header", json!({})).await.unwrap();
    assert_eq!(echo["headers"]["x-api-key"], "otc-tests");
    assert_eq!(echo["headers"]["x-client"], "otc-tests");
}

#[tokio::test]
async fn trace_ids_are_forwarded() {
    let fx = fixture().await;
    let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let echo = fx
        .call_with(
            "GET /echo/query",
            json!({}),
            CallContext::default(),
            Some(traceparent),
        )
        .await
        .unwrap();
    assert_eq!(echo["headers"]["traceparent"], traceparent);
    let echo = fx
        .call_with(
            "GET /echo/query",
            json!({}),
            CallContext::default(),
            Some("req-42"),
        )
        .await
        .unwrap();
    assert_eq!(echo["headers"]["x-trace-id"], "req-42");
    assert!(echo["headers"].get("traceparent").is_none());
}

#[tokio::test]
async fn response_kinds_json_text_binary_empty() {
    let fx = fixture().await;
    assert_eq!(
        fx.call("GET /text", json!({})).await.unwrap(),
        "hello, world"
    );
    let binary = fx.call("GET /binary", json!({})).await.unwrap();
    assert_eq!(binary["media_type"], "image/png");
    assert_eq!(binary["base64"], "iVBORw0KGgo=");
    assert_eq!(BINARY_BODY.len(), 8);
    assert_eq!(
        fx.call("DELETE /empty", json!({})).await.unwrap(),
        Value::Null
    );
}

/// Calls `GET /status/{code}` with a key the upstream echoes in its error body.
async fn status(fx: &Fixture, code: u16, retry_after: Option<&str>) -> AdapterError {
    let mut args = json!({"code": code});
    if let Some(r) = retry_after {
        args["retry_after"] = json!(r);
    }
    let context = fx.context_for("GET /status/{code}", "s3cr3t-key");
    fx.call_with("GET /status/{code}", args, context, None)
        .await
        .unwrap_err()
}

#[tokio::test]
async fn argument_complaints_are_retryable_with_the_upstream_body() {
    let fx = fixture().await;
    for code in [400, 404, 422] {
        let err = status(&fx, code, None).await;
        let AdapterError::UpstreamStatus { status, body, .. } = &err else {
            panic!("{err:?}")
        };
        assert_eq!(*status, code);
        let body = body.as_deref().unwrap();
        assert!(body.contains(&format!("failed with {code}")), "{body}");
        assert!(
            !body.contains("s3cr3t-key") && body.contains("[redacted]"),
            "{body}"
        );
        let tool_error = fx.tool_error("GET /status/{code}", &err);
        assert!(tool_error.can_retry, "{code}");
        let shown = serde_json::to_string(&tool_error).unwrap();
        assert!(!shown.contains("s3cr3t-key"), "{shown}");
    }
}

#[tokio::test]
async fn auth_failures_are_not_retryable() {
    let fx = fixture().await;
    for code in [401, 403] {
        let err = status(&fx, code, None).await;
        assert!(matches!(err, AdapterError::UpstreamStatus { status, .. } if status == code));
        assert!(
            !fx.tool_error("GET /status/{code}", &err).can_retry,
            "{code}"
        );
    }
}

#[tokio::test]
async fn retry_after_in_seconds_and_as_a_date() {
    let fx = fixture().await;
    let err = status(&fx, 429, Some("120")).await;
    assert_eq!(err.retry_after(), Some(std::time::Duration::from_secs(120)));
    let tool_error = fx.tool_error("GET /status/{code}", &err);
    assert!(tool_error.can_retry);
    assert_eq!(tool_error.retry_after_ms, Some(120_000));

    let date = "Wed, 21 Oct 2015 07:28:00 GMT"; // in the past: retry now
    let err = status(&fx, 503, Some(date)).await;
    assert_eq!(err.retry_after(), Some(std::time::Duration::ZERO));
    assert!(fx.tool_error("GET /status/{code}", &err).can_retry);

    let err = status(&fx, 500, None).await;
    assert!(matches!(
        err,
        AdapterError::UpstreamStatus {
            status: 500,
            retry_after: None,
            ..
        }
    ));
}

#[tokio::test]
async fn a_slow_upstream_times_out() {
    let fx = fixture_with(|c| c.timeout_ms = 200).await;
    let err = fx.call("GET /slow", json!({})).await.unwrap_err();
    assert!(matches!(err, AdapterError::Timeout { .. }), "{err:?}");
    assert!(fx.tool_error("GET /slow", &err).can_retry);
}

#[tokio::test]
async fn a_closed_port_is_unreachable() {
    let closed = upstream_http::closed_port().await;
    let fx = fixture_with(|c| c.base_url = Some(format!("http://{closed}"))).await;
    let err = fx.call("GET /text", json!({})).await.unwrap_err();
    assert!(matches!(err, AdapterError::Unreachable { .. }), "{err:?}");
}

#[tokio::test]
async fn a_tls_failure_is_unreachable_and_says_tls() {
    let upstream = Upstream::start().await;
    // TLS to a plain-HTTP server: the handshake fails.
    let url = format!("https://{}", upstream.addr());
    let fx = fixture_with(|c| c.base_url = Some(url)).await;
    let err = fx.call("GET /text", json!({})).await.unwrap_err();
    let AdapterError::Unreachable { message, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(message.contains("TLS"), "{message}");
}

#[tokio::test]
async fn invalid_json_from_the_upstream_is_a_protocol_error() {
    let fx = fixture().await;
    let err = fx.call("GET /invalid-json", json!({})).await.unwrap_err();
    assert!(matches!(err, AdapterError::Protocol { .. }), "{err:?}");
}

#[tokio::test]
async fn responses_over_the_limit_fail_with_or_without_content_length() {
    let fx = fixture_with(|c| c.max_response_bytes = 4096).await;
    for chunked in [false, true] {
        let err = fx
            .call("GET /big", json!({"bytes": 10_000, "chunked": chunked}))
            .await
            .unwrap_err();
        assert!(
            matches!(err, AdapterError::ResponseTooLarge { limit_bytes: 4096 }),
            "{err:?}"
        );
        let ok = fx
            .call("GET /big", json!({"bytes": 4096, "chunked": chunked}))
            .await
            .unwrap();
        assert_eq!(ok.as_str().unwrap().len(), 4096);
    }
}

#[tokio::test]
async fn redirects_stay_within_the_origin() {
    let fx = fixture().await;
    let same = fx
        .call("GET /redirect", json!({"to": "/text"}))
        .await
        .unwrap();
    assert_eq!(same, "hello, world");

    let other = Upstream::start().await;
    let err = fx
        .call(
            "GET /redirect",
            json!({"to": format!("{}/text", other.url())}),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(err, AdapterError::UpstreamStatus { status: 302, .. }),
        "{err:?}"
    );
    assert_eq!(other.hits(), 0, "the other origin was contacted");

    let err = fx
        .call(
            "GET /redirect",
            json!({"to": "/redirect?to=/redirect%3Fto%3D/text"}),
        )
        .await;
    assert_eq!(
        err.unwrap(),
        "hello, world",
        "three hops are within the limit"
    );
}

#[tokio::test]
async fn a_connection_lost_mid_response() {
    let fx = fixture().await;
    let err = fx.call("GET /reset", json!({})).await.unwrap_err();
    assert!(
        matches!(err, AdapterError::ConnectionLost { .. }),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_document_fetched_over_http_resolves_its_relative_server() {
    let upstream = Upstream::start().await;
    let config = OpenApiConfig::new(format!("{}/openapi.yaml", upstream.url()));
    let adapter = OpenApiAdapter::build("remote", &config).await.unwrap();
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
        })
        .await
        .unwrap();
    assert_eq!(value, "hello, world");
}

#[tokio::test]
async fn setup_errors_name_what_to_fix() {
    let err = OpenApiAdapter::build("x", &OpenApiConfig::new("/nonexistent/api.yaml"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("/nonexistent/api.yaml"), "{err}");

    // A file document whose only server is relative needs base_url.
    let config = OpenApiConfig::new(upstream_http::document_path().display().to_string());
    let err = OpenApiAdapter::build("x", &config).await.unwrap_err();
    assert!(err.to_string().contains("set base_url"), "{err}");

    let mut config = OpenApiConfig::new(upstream_http::document_path().display().to_string());
    config.base_url = Some("http://127.0.0.1:1".into());
    config.credentials.insert(
        "bearerAuth".into(),
        CredentialConfig {
            env: "OTC_TEST_SURELY_UNSET_VARIABLE".into(),
        },
    );
    let err = OpenApiAdapter::build("x", &config).await.unwrap_err();
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
        let err = OpenApiAdapter::build("x", &config).await.unwrap_err();
        assert!(err.to_string().contains(says), "{err}");
    }

    let closed = upstream_http::closed_port().await;
    let err = OpenApiAdapter::build(
        "x",
        &OpenApiConfig::new(format!("http://{closed}/api.yaml")),
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains(&closed.to_string()), "{err}");
}

/// The `name` property of the only tool's input schema, if the body schema was resolved.
fn pet_name_property(listed: &Mapped<MappedTool>) -> Option<Value> {
    let schema = &listed.tools.first()?.definition.input_schema;
    schema.pointer("/properties/name").cloned()
}

#[tokio::test]
async fn sibling_file_refs_are_read_for_a_file_document() {
    let upstream = Upstream::start().await;
    let mut config = OpenApiConfig::new(upstream_http::split_document_path().display().to_string());
    config.base_url = Some(upstream.url());
    let adapter = OpenApiAdapter::build("split", &config).await.unwrap();
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
        })
        .await
        .unwrap();
    assert_eq!(value["body"]["json"], json!({"name": "Rex"}));
}

#[tokio::test]
async fn refs_of_a_remote_document_are_fetched_only_when_allowed() {
    let upstream = Upstream::start().await;
    let spec = format!("{}/split/api.yaml", upstream.url());

    let refused = OpenApiAdapter::build("split", &OpenApiConfig::new(spec.clone()))
        .await
        .unwrap();
    assert_eq!(upstream.hits(), 1, "only the document itself is fetched");
    let listed = refused.list_tools().await.unwrap();
    assert!(pet_name_property(&listed).is_none());
    let said = format!("{:?}", listed.diagnostics);
    assert!(said.contains("schemas.yaml"), "{said}");

    let mut config = OpenApiConfig::new(spec);
    config.allow_remote_refs = true;
    let allowed = OpenApiAdapter::build("split", &config).await.unwrap();
    let listed = allowed.list_tools().await.unwrap();
    assert_eq!(pet_name_property(&listed).unwrap()["type"], "string");
}

/// `/redirect?to=…` nested `depth` times around `/text`.
fn redirect_chain(depth: usize) -> String {
    let mut target = "/text".to_owned();
    for _ in 0..depth {
        let encoded: String = target
            .chars()
            .map(|c| match c {
                '%' => "%25".to_owned(),
                '?' => "%3F".to_owned(),
                '=' => "%3D".to_owned(),
                '&' => "%26".to_owned(),
                c => c.to_string(),
            })
            .collect();
        target = format!("/redirect?to={encoded}");
    }
    target
}

#[tokio::test]
async fn redirect_chains_past_the_limit_fail() {
    let fx = fixture_with(|c| c.max_redirects = 3).await;
    let ok = fx
        .call("GET /redirect", json!({"to": redirect_chain(2)}))
        .await
        .unwrap();
    assert_eq!(ok, "hello, world");
    let err = fx
        .call("GET /redirect", json!({"to": redirect_chain(5)}))
        .await
        .unwrap_err();
    assert!(matches!(err, AdapterError::Protocol { .. }), "{err:?}");
}
