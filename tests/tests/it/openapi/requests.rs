//! Requests as the upstream receives them: parameter locations and styles, bodies, credentials,
//! trace ids.

use super::*;

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
    fx.call("GET /echo/secure/header", json!({})).await.unwrap();
    // Read on the upstream's side: the echo is scrubbed of the bridge's credential (issue 8).
    let arrived = fx.upstream.last_headers();
    assert_eq!(arrived["x-api-key"], "otc-tests");
    assert_eq!(arrived["x-client"], "otc-tests");
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
