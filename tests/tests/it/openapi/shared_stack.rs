//! Issue 23, item 8: sources built with one `BuildContext` share their HTTP clients, and each
//! still gets its own settings: the timeout and static headers set per request, the redirect
//! limit (and connect timeout and extra roots) by a client of its own when they differ.

use std::time::Duration;

use super::*;

#[tokio::test]
async fn issue_23_sources_sharing_a_client_keep_their_own_timeouts() {
    let cx = BuildContext::default();
    let quick = fixture_in(&cx, |c| c.timeout_ms = 200).await;
    let patient = fixture_in(&cx, |c| c.timeout_ms = 600_000).await;
    assert_eq!(
        cx.http.live(),
        1,
        "the timeout is no reason for a second client"
    );

    // Both wait on an upstream that never answers; the patient one started first, so had it
    // been given the quick one's timeout it would have failed first.
    let patient_call = patient.call("GET /slow", json!({}));
    let quick_call = quick.call("GET /slow", json!({}));
    tokio::pin!(patient_call);
    let outcome = tokio::time::timeout(Duration::from_secs(60), async {
        tokio::select! {
            biased;
            done = &mut patient_call => panic!("the patient source gave up first: {done:?}"),
            done = quick_call => done,
        }
    })
    .await
    .expect("the quick source's 200 ms timeout was not applied");
    let err = outcome.unwrap_err();
    assert!(
        matches!(err, AdapterError::Timeout { elapsed } if elapsed == Duration::from_millis(200)),
        "{err:?}"
    );
    // And the shared client's default is not 200 ms either: the patient call is still waiting.
    assert!(
        futures::poll!(&mut patient_call).is_pending(),
        "the patient call ended with the quick one"
    );
}

#[tokio::test]
async fn issue_23_sources_sharing_a_client_send_their_own_static_headers() {
    let cx = BuildContext::default();
    let a = fixture_in(&cx, |c| {
        c.headers.insert("X-Client".into(), "source-a".into());
        c.headers.insert("X-Request-Tag".into(), "static".into());
    })
    .await;
    let b = fixture_in(&cx, |c| {
        c.headers.insert("X-Client".into(), "source-b".into());
    })
    .await;
    assert_eq!(
        cx.http.live(),
        1,
        "static headers are no reason for a second client"
    );

    a.call("GET /echo/headers", json!({"X-Request-Tag": "from-input"}))
        .await
        .unwrap();
    let arrived = a.upstream.last_headers();
    assert_eq!(arrived["x-client"], "source-a");
    // A header the request sets itself wins over a static one, as a client default header did.
    assert_eq!(arrived.get_all("x-request-tag").iter().count(), 1);
    assert_eq!(arrived["x-request-tag"], "from-input");
    assert!(
        arrived["user-agent"]
            .to_str()
            .unwrap()
            .starts_with("otc-bridge/"),
        "{arrived:?}"
    );

    b.call("GET /echo/headers", json!({})).await.unwrap();
    let arrived = b.upstream.last_headers();
    assert_eq!(arrived["x-client"], "source-b");
    assert!(arrived.get("x-request-tag").is_none(), "{arrived:?}");
}

#[tokio::test]
async fn issue_23_a_different_redirect_limit_gets_its_own_client() {
    let cx = BuildContext::default();
    let strict = fixture_in(&cx, |c| c.max_redirects = 1).await;
    let lenient = fixture_in(&cx, |c| c.max_redirects = 5).await;
    let default = fixture_in(&cx, |_| {}).await;
    assert_eq!(cx.http.live(), 2, "max_redirects 5 is the default: shared");

    let chain = json!({"to": "/redirect?to=/redirect%3Fto%3D/text"});
    let err = strict
        .call("GET /redirect", chain.clone())
        .await
        .unwrap_err();
    assert!(matches!(err, AdapterError::Protocol { .. }), "{err:?}");
    for fx in [&lenient, &default] {
        let ok = fx.call("GET /redirect", chain.clone()).await.unwrap();
        assert_eq!(ok, "hello, world");
    }

    // A client lives as long as a source uses it.
    drop((lenient, default));
    assert_eq!(cx.http.live(), 1);
}
