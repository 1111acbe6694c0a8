//! Response kinds and every failure class: statuses with their bodies and `Retry-After`,
//! timeouts, refused and TLS connections, invalid JSON, size limits, redirects, lost connections.

use super::*;

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
    let closed = format!("127.0.0.1:{}", otc_tests::http::free_port());
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

/// Issue 25, item 2: a failure answered `can_retry` is not kept for repeats of its `call_id`, so
/// the retry it invites, with the same `call_id`, reaches the upstream again; a failure that is
/// not to be retried is kept and answered from the store.
#[tokio::test]
async fn a_retryable_failure_is_not_kept_for_repeats_of_its_call_id() {
    let Fixture {
        upstream, adapter, ..
    } = fixture().await;
    let store = otc_bridge::Idempotency::new(None, &Default::default())
        .await
        .unwrap();
    let settings = otc_bridge::ServerSettings {
        idempotency: Some(Arc::new(store)),
        ..otc_bridge::ServerSettings::default()
    };
    let bridge =
        otc_tests::bridge::TestBridge::start(vec![Arc::new(adapter)], settings, None).await;
    let http = reqwest::Client::new();
    let call = |code: u16, retry_after: Option<&str>, call_id: &str| {
        let mut input = json!({"code": code});
        if let Some(seconds) = retry_after {
            input["retry_after"] = json!(seconds);
        }
        let body = json!({
            "tool_id": "Upstream.Status",
            "input": input,
            "call_id": call_id,
            "context": {"secrets": [{"id": "headerKey", "value": "k"}]},
        });
        let request = http.post(format!("{}/tools/call", bridge.url)).json(&body);
        async move {
            let response = request.send().await.unwrap();
            assert_eq!(response.status(), 200);
            response.json::<Value>().await.unwrap()
        }
    };

    let first = call(503, Some("1"), "retry-me").await;
    assert_eq!(first["success"], false, "{first}");
    assert_eq!(first["error"]["can_retry"], true, "{first}");
    assert_eq!(first["error"]["retry_after_ms"], 1000, "{first}");
    let hits = upstream.hits();
    let retried = call(503, Some("1"), "retry-me").await;
    assert_eq!(retried["error"]["can_retry"], true, "{retried}");
    assert_eq!(
        upstream.hits(),
        hits + 1,
        "the invited retry must reach the upstream"
    );

    let refused = call(403, None, "final").await;
    assert_eq!(refused["error"]["can_retry"], false, "{refused}");
    let hits = upstream.hits();
    let repeated = call(403, None, "final").await;
    assert_eq!(
        repeated, refused,
        "a final failure is answered from the store"
    );
    assert_eq!(upstream.hits(), hits, "a final failure is not run again");
}
