//! Per-caller OAuth end to end (issue 12): a real authorization server (npm `oidc-provider`,
//! `scripts/oauth-e2e/provider.mjs`) in front of a real OAuth-protected MCP server (the official
//! Python SDK, `scripts/oauth-e2e/mcp_server.py`, which introspects every token), and the bridge
//! between them and an OTC client with `per_caller: true`.
//!
//! The OTC client calls without a token and gets the standard's challenge; the test plays the
//! user at the challenge's `url` (`scripts/oauth-e2e/user.py` signs in and approves), the
//! browser lands on the bridge's callback, the client polls `check_url`, collects the token and
//! calls again as that user. A revoked token gets a new challenge; no token or code is logged.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::{Child, Command};

use otc_tests::bridge_process::{Running, repo_root};
use otc_tests::http::free_port;

/// A server process of the test bed, and the URL its `READY` line gave.
struct Server {
    _child: Child,
    url: String,
}

async fn start(mut command: Command, what: &str) -> Server {
    command
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let ready = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
        .await
        .unwrap_or_else(|_| panic!("{what} did not start within 60 s"))
        .unwrap()
        .unwrap_or_else(|| panic!("{what} exited before it was ready"));
    let url = ready
        .strip_prefix("READY ")
        .unwrap_or_else(|| panic!("{what} said {ready:?}"))
        .to_owned();
    Server { _child: child, url }
}

/// The user signs in as `login` at `url`; returns where the browser is sent back to.
async fn sign_in(python: &std::path::Path, url: &str, login: &str) -> String {
    let out = Command::new(python)
        .arg(repo_root().join("scripts/oauth-e2e/user.py"))
        .arg(url)
        .args(["--login", login])
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "user.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

struct Otc {
    http: reqwest::Client,
    bridge: String,
}

impl Otc {
    async fn call(&self, tool: &str, input: Value, token: Option<(&str, &str)>) -> (u16, Value) {
        let mut body = json!({"tool_id": tool, "input": input});
        if let Some((id, token)) = token {
            body["context"] = json!({"authorization": [{"id": id, "token": token}]});
        }
        let response = self
            .http
            .post(format!("{}/tools/call", self.bridge))
            .json(&body)
            .send()
            .await
            .unwrap();
        (response.status().as_u16(), response.json().await.unwrap())
    }

    async fn get(&self, url: &str) -> (u16, String) {
        let response = self.http.get(url).send().await.unwrap();
        (response.status().as_u16(), response.text().await.unwrap())
    }

    /// Calls without `token` and completes the challenge it gets, as `login`, checking that it
    /// asks for `scope`; returns the token the bridge hands over at `check_url`, and the
    /// authorization code it exchanged.
    async fn authorize(
        &self,
        python: &std::path::Path,
        issuer: &str,
        login: &str,
        scope: &str,
    ) -> (String, String) {
        let (status, body) = self.call("OtcOauthE2e.Whoami", json!({}), None).await;
        assert_eq!(status, 400, "{body}");
        self.complete(&body, python, issuer, login, scope).await
    }

    /// Completes the challenge of the 400 `body` as `login`, checking that it asks for
    /// `scope`; returns the token and the authorization code.
    async fn complete(
        &self,
        body: &Value,
        python: &std::path::Path,
        issuer: &str,
        login: &str,
        scope: &str,
    ) -> (String, String) {
        let challenge = &body["missing_requirements"]["authorization"][0];
        assert_eq!(challenge["id"], issuer, "{body}");
        let url = challenge["url"].as_str().unwrap();
        let check_url = challenge["check_url"].as_str().unwrap();
        assert!(url.starts_with(&format!("{issuer}/auth?")), "{url}");
        for part in ["code_challenge_method=S256", "resource="] {
            assert!(url.contains(part), "{part} missing from {url}");
        }
        assert_eq!(query(url, "scope").as_deref(), Some(scope), "{url}");
        assert!(check_url.starts_with(&format!("{}/oauth/check/", self.bridge)));
        let (_, pending) = self.get(check_url).await;
        assert_eq!(
            serde_json::from_str::<Value>(&pending).unwrap()["status"],
            "pending"
        );

        let back = sign_in(python, url, login).await;
        assert!(
            back.starts_with(&format!("{}/oauth/callback?", self.bridge)),
            "{back}"
        );
        let (status, page) = self.get(&back).await;
        assert_eq!(status, 200, "{page}");
        assert!(page.starts_with("Signed in."), "{page}");
        // The same redirect again (a reload): the sign-in is used up.
        let (status, _) = self.get(&back).await;
        assert_eq!(status, 400);

        let (status, checked) = self.get(check_url).await;
        assert_eq!(status, 200);
        let checked: Value = serde_json::from_str(&checked).unwrap();
        assert_eq!(checked["status"], "completed", "{checked}");
        assert_eq!(checked["id"], issuer);
        let token = checked["token"].as_str().unwrap().to_owned();
        // Handed over once.
        let (_, again) = self.get(check_url).await;
        let again: Value = serde_json::from_str(&again).unwrap();
        assert_eq!(again["status"], "completed");
        assert!(again.get("token").is_none(), "{again}");
        (token, query(&back, "code").unwrap())
    }
}

fn query(url: &str, name: &str) -> Option<String> {
    url::Url::parse(url)
        .unwrap()
        .query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

#[tokio::test]
async fn a_caller_without_a_token_is_challenged_signs_in_and_calls_as_itself() {
    per_caller_flow("streamable_http").await;
}

/// The same over legacy HTTP+SSE (`--mcp-sse`): the stream and its POSTs carry the token.
#[tokio::test]
async fn per_caller_tokens_work_over_legacy_sse_too() {
    per_caller_flow("sse").await;
}

/// The test bed: the authorization server, the MCP server on `transport` (a `transport.type`
/// of the config) and the bridge; `caller_auth` is added to the source's `auth`. `None` when
/// the corpus is not set up (a fresh clone without `../shared/`).
struct Bed {
    _servers: [Server; 2],
    bridge: Running,
    otc: Otc,
    issuer: String,
    python: std::path::PathBuf,
    dir: std::path::PathBuf,
    log_path: std::path::PathBuf,
}

impl Bed {
    async fn start(transport: &str, caller_auth: &str) -> Option<Self> {
        let corpus = otc_fixtures::corpus_dir()?;
        let (path, server_transport) = match transport {
            "sse" => ("sse", "sse"),
            _ => ("mcp", "streamable-http"),
        };
        let node = corpus.join("node22/node_modules/.bin/node");
        let python = corpus.join("venv/bin/python");
        for (path, script) in [
            (&node, "scripts/install-mcp-conformance.sh"),
            (
                &corpus.join("oauth-server/node_modules/oidc-provider"),
                "scripts/install-oauth-server.sh",
            ),
            (&python, "scripts/install-python-client.sh"),
        ] {
            assert!(path.exists(), "{} is missing: run {script}", path.display());
        }

        let mcp_port = free_port();
        let resource = format!("http://127.0.0.1:{mcp_port}/{path}");
        let mut provider = Command::new(&node);
        provider
            .arg(repo_root().join("scripts/oauth-e2e/provider.mjs"))
            .args(["--port", "0", "--resource", &resource])
            .env("OTC_CORPUS_DIR", &corpus);
        let authorization_server = start(provider, "the authorization server").await;
        let issuer = authorization_server.url.clone();
        let mut server = Command::new(&python);
        server
            .arg(repo_root().join("scripts/oauth-e2e/mcp_server.py"))
            .args(["--port", &mcp_port.to_string(), "--issuer", &issuer])
            .args(["--transport", server_transport]);
        let mcp = start(server, "the MCP server").await;
        assert_eq!(mcp.url, resource);

        // The bridge lists with its own token (client_credentials); calls carry each caller's.
        let dir = otc_tests::scratch::dir(&format!("bridge-per-caller-{transport}"));
        let config = dir.join("bridge.yaml");
        std::fs::write(
            &config,
            format!(
                "sources:\n  - type: mcp\n    name: tracker\n    transport:\n      type: {transport}\n      url: {resource}\n    auth:\n      type: oauth\n      grant: client_credentials\n      client_id: otc-bridge-service\n      client_secret: {{env: TRACKER_SECRET}}\n      scopes: [tools]\n      per_caller: true\n      token_file: {}\n{caller_auth}",
                dir.join("tokens.json").display()
            ),
        )
        .unwrap();
        let log_path = dir.join("bridge.log");
        let log = std::fs::File::create(&log_path).unwrap();
        let mut bridge = Running::spawn_with_stderr(
            &[
                "--config",
                config.to_str().unwrap(),
                "--listen",
                "127.0.0.1:0",
                "--log-level",
                "debug",
            ],
            &[("TRACKER_SECRET", "service-secret")],
            log,
        );
        let otc = Otc {
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            bridge: bridge.url().await,
        };
        Some(Self {
            _servers: [authorization_server, mcp],
            bridge,
            otc,
            issuer,
            python,
            dir,
            log_path,
        })
    }

    /// Stops the bridge and returns its log, checking that no `secret` and no check id is in it.
    async fn stop(self, secrets: &[&str]) -> String {
        self.bridge.interrupt().await;
        let log = std::fs::read_to_string(&self.log_path).unwrap();
        assert!(log.contains("/tools/call"), "the log is empty: {log}");
        for secret in secrets.iter().chain(&["service-secret"]) {
            assert!(
                !log.contains(secret),
                "a token, code or secret reached the log"
            );
        }
        // Nor a check id, which collects a token.
        let check_ids = log.matches("/oauth/check/").count();
        assert_eq!(check_ids, log.matches("/oauth/check/…").count(), "{log}");
        let _ = std::fs::remove_dir_all(&self.dir);
        log
    }
}

/// The whole flow with the MCP server on `transport`.
async fn per_caller_flow(transport: &str) {
    let Some(bed) = Bed::start(transport, "").await else {
        return;
    };
    let (otc, issuer, python, dir) = (
        &bed.otc,
        bed.issuer.clone(),
        bed.python.clone(),
        bed.dir.clone(),
    );

    // Each tool declares the authorization server as the provider its caller must sign in to.
    let tools: Value = otc
        .http
        .get(format!("{}/tools", otc.bridge))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let whoami = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "OtcOauthE2e.Whoami@1.0.0")
        .unwrap_or_else(|| panic!("{tools}"));
    assert_eq!(
        whoami["requirements"],
        json!({"authorization": [{"id": issuer, "oauth2": {"scopes": ["tools"]}}]})
    );

    // Two people, each signed in once: each call runs as its own caller.
    let (alice, alice_code) = otc.authorize(&python, &issuer, "alice", "tools").await;
    let (bob, bob_code) = otc.authorize(&python, &issuer, "bob", "tools").await;
    for (token, who) in [(&alice, "alice"), (&bob, "bob"), (&alice, "alice")] {
        let (status, body) = otc
            .call("OtcOauthE2e.Whoami", json!({}), Some((&issuer, token)))
            .await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["value"]["result"], who, "{body}");
    }
    let (status, body) = otc
        .call(
            "OtcOauthE2e.Echo",
            json!({"text": "hi"}),
            Some((&issuer, &bob)),
        )
        .await;
    assert_eq!(
        (status, &body["value"]["result"]),
        (200, &json!("hi")),
        "{body}"
    );

    // A token the server does not know, and one revoked after use, get a new challenge.
    let (status, body) = otc
        .call(
            "OtcOauthE2e.Whoami",
            json!({}),
            Some((&issuer, "not-a-token")),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(body["missing_requirements"]["authorization"][0]["check_url"].is_string());
    let client_id = {
        let (_, body) = otc.call("OtcOauthE2e.Whoami", json!({}), None).await;
        let url = body["missing_requirements"]["authorization"][0]["url"]
            .as_str()
            .unwrap();
        query(url, "client_id").unwrap()
    };
    let revoked = otc
        .http
        .post(format!("{issuer}/token/revocation"))
        .form(&[("token", alice.as_str()), ("client_id", client_id.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.status(), 200);
    let (status, body) = otc
        .call("OtcOauthE2e.Whoami", json!({}), Some((&issuer, &alice)))
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("not accepted"),
        "{body}"
    );
    let challenge = &body["missing_requirements"]["authorization"][0];
    assert_eq!(challenge["id"], issuer);
    // Bob's token still works.
    let (status, body) = otc
        .call("OtcOauthE2e.Whoami", json!({}), Some((&issuer, &bob)))
        .await;
    assert_eq!(
        (status, &body["value"]["result"]),
        (200, &json!("bob")),
        "{body}"
    );

    // An unknown check id is a failed challenge, not an error page.
    let (status, body) = otc
        .get(&format!("{}/oauth/check/nothing-here", otc.bridge))
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["status"],
        "failed"
    );

    // The bridge's own token (client_credentials), revoked: the next re-list is refused, and the
    // bridge gets a new token by itself. A stateless server's list (`ttlMs: 0`) is re-listed
    // every second; a legacy SSE session lists only on a change, so only the former shows it.
    let own_token = || -> String {
        let file = std::fs::read_to_string(dir.join("tokens.json")).unwrap();
        let stored: Value = serde_json::from_str(&file).unwrap();
        stored["token_response"]["access_token"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let first = own_token();
    if transport == "streamable_http" {
        let revoked = otc
            .http
            .post(format!("{issuer}/token/revocation"))
            .basic_auth("otc-bridge-service", Some("service-secret"))
            .form(&[("token", first.as_str())])
            .send()
            .await
            .unwrap();
        assert_eq!(revoked.status(), 200);
        let replaced = async {
            while own_token() == first {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        };
        tokio::time::timeout(Duration::from_secs(20), replaced)
            .await
            .expect("the bridge did not replace its revoked token");
        let (status, body) = otc
            .call("OtcOauthE2e.Whoami", json!({}), Some((&issuer, &bob)))
            .await;
        assert_eq!(status, 200, "{body}");
    }

    let log = bed
        .stop(&[&alice, &bob, &alice_code, &bob_code, &first])
        .await;
    assert!(log.contains("/oauth/check/…"), "{log}");
}

/// A caller signed in without the scope the server requires (`caller_scopes: [openid]`) is
/// refused with 403 `insufficient_scope`; its next challenge asks for that scope too (the
/// Python SDK names none, so the server's `scopes_supported`), and the new token works.
#[tokio::test]
async fn a_caller_short_of_a_scope_is_challenged_for_more() {
    let Some(bed) = Bed::start("streamable_http", "      caller_scopes: [openid]\n").await else {
        return;
    };
    let (otc, issuer, python) = (&bed.otc, bed.issuer.as_str(), bed.python.as_path());
    let (status, body) = otc.call("OtcOauthE2e.Whoami", json!({}), None).await;
    assert_eq!(status, 400, "{body}");
    let (narrow, narrow_code) = otc.complete(&body, python, issuer, "carol", "openid").await;

    let (status, body) = otc
        .call("OtcOauthE2e.Whoami", json!({}), Some((issuer, &narrow)))
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("more scope"),
        "{body}"
    );
    let (wide, wide_code) = otc
        .complete(&body, python, issuer, "carol", "openid tools")
        .await;
    let (status, body) = otc
        .call("OtcOauthE2e.Whoami", json!({}), Some((issuer, &wide)))
        .await;
    assert_eq!(
        (status, &body["value"]["result"]),
        (200, &json!("carol")),
        "{body}"
    );
    bed.stop(&[&narrow, &narrow_code, &wide, &wide_code]).await;
}

/// Issue 26: a per-caller sign-in names its caller. With authentication off, a call that carries
/// a token a sign-in through this bridge handed out is made by the user who signed in (the
/// subject of the `id_token` the sign-in got with `openid`): a policy on that name applies, and
/// the audit trail names them; a call without such a token stays anonymous.
#[tokio::test]
async fn a_signed_in_caller_is_named_by_their_subject_for_policies_and_the_audit_trail() {
    let trail = otc_tests::scratch::file("per-caller-audit", "audit.jsonl");
    let extra = format!(
        "      caller_scopes: [openid, tools]\npolicies:\n  - {{effect: deny, callers: [mallory]}}\n  - {{effect: allow}}\naudit: {{file: \"{}\"}}\n",
        trail.display()
    );
    let Some(bed) = Bed::start("streamable_http", &extra).await else {
        return;
    };
    let (otc, issuer, python) = (&bed.otc, bed.issuer.as_str(), bed.python.as_path());

    // Alice signs in (anonymous callers see the tool, so they are challenged) and calls as alice.
    let (alice, alice_code) = otc.authorize(python, issuer, "alice", "openid tools").await;
    let (status, body) = otc
        .call("OtcOauthE2e.Whoami", json!({}), Some((issuer, &alice)))
        .await;
    assert_eq!(
        (status, &body["value"]["result"]),
        (200, &json!("alice")),
        "{body}"
    );

    // Mallory signs in too; the policy that names mallory hides the tool from that caller, as
    // if it did not exist.
    let (mallory, mallory_code) = otc
        .authorize(python, issuer, "mallory", "openid tools")
        .await;
    let (status, body) = otc
        .call("OtcOauthE2e.Whoami", json!({}), Some((issuer, &mallory)))
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("not found"),
        "{body}"
    );
    // A token the bridge did not hand out names nobody: the caller stays anonymous, and the
    // server refuses the token with a new challenge.
    let (status, body) = otc
        .call(
            "OtcOauthE2e.Whoami",
            json!({}),
            Some((issuer, "forged-token")),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(body["missing_requirements"].is_object(), "{body}");

    // Read once the bridge has stopped: the trail is written behind the calls.
    bed.stop(&[&alice, &alice_code, &mallory, &mallory_code])
        .await;
    let text = std::fs::read_to_string(&trail).unwrap();
    let callers: Vec<String> = text
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter_map(|line| line["caller"].as_str().map(str::to_owned))
        .collect();
    for who in ["alice", "mallory", "anonymous"] {
        assert!(callers.iter().any(|c| c == who), "{who}: {text}");
    }
    for secret in [&alice, &mallory] {
        assert!(
            !text.contains(secret.as_str()),
            "a token reached the audit trail"
        );
    }
}
