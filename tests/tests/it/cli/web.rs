//! Issue 8, defect 1, against the real binary: a web page cannot drive a default bridge. It
//! listens on loopback, so a DNS-rebinding `Host` is refused; a cross-site `Origin` is refused
//! unless `--allow-origin` names it; a body not declared JSON is a 415.

use otc_tests::bridge_process::Running;

#[tokio::test]
async fn issue_8_a_default_bridge_refuses_web_pages() {
    let mut server = Running::spawn(
        &[
            "--listen",
            "127.0.0.1:0",
            "--allow-origin",
            "https://app.example.com",
        ],
        &[],
    );
    let url = server.url().await;
    let port = url.rsplit(':').next().unwrap().to_owned();
    let client = reqwest::Client::new();
    let call = r#"{"request":{"tool_id":"Nope.Nothing"}}"#;

    // A DNS-rebinding page: its own name resolved to 127.0.0.1.
    let rebound = client
        .get(format!("{url}/tools"))
        .header("host", format!("rebind.evil.example:{port}"))
        .send()
        .await
        .unwrap();
    assert_eq!(rebound.status(), 403);

    // A cross-site page posting JSON (after a preflight it would not get) or plain text.
    let cross_site = client
        .post(format!("{url}/tools/call"))
        .header("origin", "https://evil.example")
        .header("content-type", "application/json")
        .body(call)
        .send()
        .await
        .unwrap();
    assert_eq!(cross_site.status(), 403);
    let text_plain = client
        .post(format!("{url}/tools/call"))
        .header("content-type", "text/plain")
        .body(call)
        .send()
        .await
        .unwrap();
    assert_eq!(text_plain.status(), 415);

    // The allowed origin gets through (an unknown tool is a 400) with CORS headers.
    let allowed = client
        .post(format!("{url}/tools/call"))
        .header("origin", "https://app.example.com")
        .header("content-type", "application/json")
        .body(call)
        .send()
        .await
        .unwrap();
    assert_eq!(allowed.status(), 400);
    assert_eq!(
        allowed.headers()["access-control-allow-origin"],
        "https://app.example.com"
    );
    // And a plain client (no Origin, Host naming the bridge) is unaffected.
    let health = client.get(format!("{url}/health")).send().await.unwrap();
    assert_eq!(health.status(), 200);
    server.interrupt().await;
}
