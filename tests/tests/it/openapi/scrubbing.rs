//! Credentials an upstream echoes back never reach the caller or the model in any disguise
//! (issue 8, defects 4 and 5): `/leak/{code}` writes every credential it received as JSON
//! `\uXXXX` and `\/` escapes, percent-encoded as it arrived, and a Basic credential as its bare
//! user and password.

use super::*;

const LEAK: &str = "GET /leak/{code}";

/// A context that gives `value` for the credential of `scheme` only.
fn context_for_scheme(fx: &Fixture, scheme: &str, value: &str) -> CallContext {
    let tool = fx.tool(LEAK);
    let usage = plan_of(&tool)
        .security
        .iter()
        .flatten()
        .find(|u| u.scheme == scheme)
        .unwrap();
    let mut context = CallContext::default();
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
        CredentialSource::Bridge => panic!("{scheme} is held by the bridge"),
    }
    context
}

/// Whether `text` holds `secret` as is, percent-encoded in any way, or behind JSON escapes.
fn reveals(text: &str, secret: &str) -> bool {
    let unescaped = serde_json::from_str::<String>(&format!("\"{}\"", text.replace('"', "'")))
        .unwrap_or_else(|_| text.to_owned());
    [text, &unescaped].iter().any(|t| {
        let decoded = percent_decode(t);
        t.contains(secret) || decoded.contains(secret) || decoded.replace('+', " ").contains(secret)
    })
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = text
            .get(i + 1..i + 3)
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The credentials each scheme carries, and the parts of them that must not come back.
const CASES: &[(&str, &str, &[&str])] = &[
    (
        "basicAuth",
        "alice-b:pa/ss w0rd;",
        &["pa/ss w0rd;", "alice-b"],
    ),
    ("cookieKey", "c/k;1 x=é", &["c/k;1 x=é"]),
    ("queryKey", "q/k 2&é", &["q/k 2&é"]),
    ("headerKey", "h/k3-key", &["h/k3-key"]),
    ("bearerAuth", "b/t4-token", &["b/t4-token"]),
];

#[tokio::test]
async fn issue_8_error_bodies_are_scrubbed_through_escapes_and_encodings() {
    let fx = fixture().await;
    for (scheme, value, parts) in CASES {
        for format in ["json", "text"] {
            let context = context_for_scheme(&fx, scheme, value);
            let err = fx
                .call_with(LEAK, json!({"code": 400, "format": format}), context, None)
                .await
                .unwrap_err();
            let AdapterError::UpstreamStatus { body, .. } = &err else {
                panic!("{err:?}")
            };
            let body = body.as_deref().unwrap();
            assert!(
                body.contains("failed with 400"),
                "{scheme} {format}: {body}"
            );
            assert!(body.contains("[redacted]"), "{scheme} {format}: {body}");
            // What the model is shown (additional_prompt_content) and the developer message.
            let shown = serde_json::to_string(&fx.tool_error(LEAK, &err)).unwrap();
            for part in *parts {
                assert!(!reveals(body, part), "{scheme} {format}: {part} in {body}");
                assert!(
                    !reveals(&shown, part),
                    "{scheme} {format}: {part} in {shown}"
                );
            }
            if format == "text" {
                // Every escape the upstream wrote held a credential.
                assert!(!body.contains("\\u"), "{scheme}: {body}");
            }
        }
    }
}

/// The upstream's disguises are real: asked directly, it writes what the tests above expect.
#[tokio::test]
async fn issue_8_the_leak_route_disguises_what_it_echoes() {
    let upstream = Upstream::start().await;
    let body = reqwest::Client::new()
        .get(format!("{}/leak/400?api_key=q%2Fk", upstream.url()))
        .header("x-api-key", "h/k")
        .header("authorization", "Basic YWxpY2U6cHc=")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!body.contains("h/k"), "{body}");
    assert!(
        body.contains(r"\u0068\u002f\u006b") && body.contains(r"h\/k"),
        "{body}"
    );
    assert!(
        body.contains(r"\u0070\u0077") && body.contains("q%2Fk"),
        "{body}"
    );
}

/// Bridge-held credentials (config `credentials:`) echoed in a 2xx answer, as JSON, text or
/// binary. `CARGO_MANIFEST_DIR` is set by cargo for test processes, and holds `/`.
#[tokio::test]
async fn issue_8_bridge_credentials_echoed_in_success_values_are_scrubbed() {
    let fx = fixture_with(|c| {
        c.credentials.insert(
            "headerKey".into(),
            CredentialConfig {
                env: "CARGO_MANIFEST_DIR".into(),
            },
        );
    })
    .await;
    let secret = env!("CARGO_MANIFEST_DIR");
    for format in ["json", "text", "binary"] {
        let value = fx
            .call(LEAK, json!({"code": 200, "format": format}))
            .await
            .unwrap();
        assert_eq!(
            fx.upstream.last_headers()["x-api-key"],
            secret,
            "the credential was sent"
        );
        let text = match format {
            "binary" => {
                let bytes = upstream_http::base64_decode(value["base64"].as_str().unwrap());
                String::from_utf8_lossy(&bytes).into_owned()
            }
            _ => serde_json::to_string(&value).unwrap(),
        };
        assert!(text.contains("[redacted]"), "{format}: {text}");
        assert!(!reveals(&text, secret), "{format}: {text}");
    }
}

/// Credentials the caller supplied in `context` are the caller's: a 2xx value may hold them.
#[tokio::test]
async fn issue_8_callers_own_credentials_may_come_back_in_a_value() {
    let fx = fixture().await;
    let context = context_for_scheme(&fx, "headerKey", "callers-own-key");
    let value = fx
        .call_with(LEAK, json!({"code": 200}), context, None)
        .await
        .unwrap();
    assert_eq!(value["slashed"], json!(["callers-own-key"]));
}
