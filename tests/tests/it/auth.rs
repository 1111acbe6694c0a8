//! Server authentication over loopback (CHECKLIST §2): HS256 JWTs and API keys, 401 with a
//! `ServerErrorResponse` on failure, `/health` open, and `Authorization` ignored when auth is off.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
use otc_bridge::{Authenticator, ServerSettings};
use otc_tests::bridge::TestBridge;
use otc_tests::tools::fixture_adapter;
use serde_json::{Value, json};

const SECRET: &[u8] = b"a-shared-secret-of-at-least-32-bytes!!";

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn token(claims: &Value, secret: &[u8]) -> String {
    encode(
        &Header::new(Algorithm::HS256),
        claims,
        &EncodingKey::from_secret(secret),
    )
    .unwrap()
}

async fn start(auth: Option<Authenticator>) -> TestBridge {
    TestBridge::start(
        vec![Arc::new(fixture_adapter())],
        ServerSettings::default(),
        auth,
    )
    .await
}

async fn status(b: &TestBridge, path: &str, headers: &[(&str, String)]) -> (u16, Value) {
    let client = reqwest::Client::new();
    let mut req = if path == "/tools/call" {
        client
            .post(b.at(path))
            .header("content-type", "application/json")
            .body(r#"{"request":{"tool_id":"Calculator.Add@1.0.0","input":{"a":1,"b":2}}}"#)
    } else {
        client.get(b.at(path))
    };
    for (k, v) in headers {
        req = req.header(*k, v);
    }
    let response = req.send().await.unwrap();
    let code = response.status().as_u16();
    let www = response.headers().get("www-authenticate").is_some();
    let body: Value = response.json().await.unwrap();
    if code == 401 {
        assert!(www, "401 carries WWW-Authenticate");
        assert!(
            body["message"].is_string(),
            "401 body is a ServerErrorResponse: {body}"
        );
    }
    (code, body)
}

#[tokio::test]
async fn jwt_is_checked_for_signature_expiry_and_audience() {
    let auth = Authenticator::new(Some(SECRET), &["my-client".to_owned()], vec![]);
    let b = start(Some(auth)).await;
    let good = token(&json!({"exp": now() + 600, "aud": "my-client"}), SECRET);
    let bearer = |t: &str| vec![("authorization", format!("Bearer {t}"))];
    assert_eq!(status(&b, "/tools", &bearer(&good)).await.0, 200);
    assert_eq!(status(&b, "/tools/call", &bearer(&good)).await.0, 200);
    assert_eq!(
        status(&b, "/health", &[]).await.0,
        200,
        "health is never authenticated"
    );

    let cases = [
        ("no header", vec![]),
        (
            "wrong signature",
            bearer(&token(
                &json!({"exp": now() + 600, "aud": "my-client"}),
                b"another-secret-entirely-000000000",
            )),
        ),
        (
            "expired",
            bearer(&token(
                &json!({"exp": now() - 3600, "aud": "my-client"}),
                SECRET,
            )),
        ),
        (
            "no exp",
            bearer(&token(&json!({"aud": "my-client"}), SECRET)),
        ),
        (
            "wrong audience",
            bearer(&token(
                &json!({"exp": now() + 600, "aud": "someone-else"}),
                SECRET,
            )),
        ),
        ("garbage", bearer("not.a.jwt")),
    ];
    for (what, headers) in cases {
        for path in ["/tools", "/tools/call"] {
            let (code, body) = status(&b, path, &headers).await;
            assert_eq!(code, 401, "{what} on {path}: {body}");
        }
    }
}

#[tokio::test]
async fn api_keys_are_accepted_in_all_three_headers() {
    let key = "k".repeat(43);
    let auth = Authenticator::new(
        None,
        &[],
        vec![
            key.clone(),
            "second-key-also-long-enough-for-tests".to_owned(),
        ],
    );
    let b = start(Some(auth)).await;
    for header in ["X-API-Key", "OTC-API-Key", "OXP-API-Key"] {
        assert_eq!(
            status(&b, "/tools", &[(header, key.clone())]).await.0,
            200,
            "{header}"
        );
        let (code, body) = status(&b, "/tools/call", &[(header, "wrong".to_owned())]).await;
        assert_eq!(code, 401, "{header}");
        assert!(
            body["developer_message"]
                .as_str()
                .unwrap()
                .contains("API key")
        );
    }
    assert_eq!(status(&b, "/tools", &[]).await.0, 401);
    // A key never appears in any answer.
    let (_, body) = status(&b, "/tools", &[("X-API-Key", format!("{key}x"))]).await;
    assert!(!body.to_string().contains(&key));
}

#[tokio::test]
async fn without_auth_an_authorization_header_is_ignored() {
    let b = start(None).await;
    let headers = [(
        "authorization",
        "Bearer whatever-the-oxp-sdk-sends".to_owned(),
    )];
    assert_eq!(status(&b, "/tools", &headers).await.0, 200);
    assert_eq!(status(&b, "/tools/call", &headers).await.0, 200);
}

#[tokio::test]
async fn issue_8_jwt_requires_aud_honours_nbf_and_refuses_crit() {
    let auth = Authenticator::new(Some(SECRET), &["my-client".to_owned()], vec![]);
    let b = start(Some(auth)).await;
    let bearer = |scheme: &str, t: &str| vec![("authorization", format!("{scheme} {t}"))];
    let good = token(&json!({"exp": now() + 600, "aud": "my-client"}), SECRET);
    for scheme in ["Bearer", "bearer", "BEARER"] {
        assert_eq!(
            status(&b, "/tools", &bearer(scheme, &good)).await.0,
            200,
            "{scheme}"
        );
    }
    let no_aud = token(&json!({"exp": now() + 600}), SECRET);
    assert_eq!(
        status(&b, "/tools", &bearer("Bearer", &no_aud)).await.0,
        401,
        "aud is required when configured"
    );
    let not_yet = token(
        &json!({"exp": now() + 600, "nbf": now() + 3600, "aud": "my-client"}),
        SECRET,
    );
    assert_eq!(
        status(&b, "/tools", &bearer("Bearer", &not_yet)).await.0,
        401,
        "nbf in the future"
    );
    // jsonwebtoken cannot write `crit`: the token is put together by hand, validly signed.
    let part = |v: Value| URL_SAFE_NO_PAD.encode(v.to_string());
    let signed = format!(
        "{}.{}",
        part(json!({"alg": "HS256", "typ": "JWT", "crit": ["exp-ext"], "exp-ext": true})),
        part(json!({"exp": now() + 600, "aud": "my-client"}))
    );
    let signature = jsonwebtoken::crypto::sign(
        signed.as_bytes(),
        &EncodingKey::from_secret(SECRET),
        Algorithm::HS256,
    )
    .unwrap();
    let critical = format!("{signed}.{signature}");
    let (code, body) = status(&b, "/tools", &bearer("Bearer", &critical)).await;
    assert_eq!(code, 401, "crit: {body}");
    assert!(body["developer_message"].as_str().unwrap().contains("crit"));
}
