//! Callers and policies (issue 26, DESIGN.md §14) through the real binary: named API keys, JWTs
//! signed with a real RSA key (RS256) and with a shared secret (HS256), and the stdio identity
//! give callers with names and groups; ordered rules decide what each sees and may call on every
//! surface (`GET /tools`, `POST /tools/call`, `POST /mcp` list/search/read/call, `otc-bridge
//! mcp`). A hidden tool is answered byte for byte like one that does not exist; a condition
//! that fails is refused with the rule's `reason`, never its expression.
//!
//! The RSA key pair under `tests/fixtures/jwt` was made for these tests only
//! (`openssl genpkey -algorithm RSA`); it signs nothing else.

use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
use serde_json::{Value, json};

use super::{example_server, example_with_keys};
use otc_tests::bridge_process::{Running, repo_root, run};

const CI_KEY: &str = "ci-bot-key-0123456789";
const OPS_KEY: &str = "ops-key-0123456789";
const ISSUER: &str = "https://idp.example.test";
const ECHO: &str = "ExampleMcpServer.Echo";
const ORDER: &str = "ExampleMcpServer.CreateOrder";
const CRASH: &str = "ExampleMcpServer.Crash";
const DIVIDE: &str = "ExampleMcpServer.Divide";

/// The policies of these tests: ops may do anything; nobody else anything destructive; the CI
/// group may echo and place orders that are not urgent; a token with the `tools:read` scope may
/// use any tool that is not destructive.
const POLICIES: &str = r#"
policies:
  - name: ops-everything
    effect: allow
    groups: [ops]
  - name: nothing-destructive
    effect: deny
    destructive: true
  - name: ci-echo
    effect: allow
    groups: [ci]
    tools: ["ExampleMcpServer.Echo@>=1"]
  - name: ci-orders
    effect: allow
    groups: [ci]
    tools: ["ExampleMcpServer.Create*"]
    when: '(!has(input.priority) || input.priority != "high") && caller.name == "ci-bot"'
    reason: CI may not place high-priority orders
  - name: readers
    effect: allow
    claims: {scope: "tools:read"}
"#;

fn jwt_dir() -> std::path::PathBuf {
    repo_root().join("tests/fixtures/jwt")
}

/// A config with the example MCP server, named keys, RS256 JWTs and [`POLICIES`].
fn rs256_config() -> std::path::PathBuf {
    let public = jwt_dir().join("test-only-rs256-public.pem");
    super::write_config(
        "policies",
        "rs256",
        &format!(
            r#"
sources:
  - {{type: mcp, name: example, transport: {{type: stdio, command: "{server}"}}}}
mcp: {{expose: all}}
auth:
  jwt:
    public_key_file: "{public}"
    issuers: ["{ISSUER}"]
  api_keys:
    - {{name: ci-bot, key: {{env: POLICY_CI_KEY}}, groups: [ci]}}
    - {{name: ops, key: {{env: POLICY_OPS_KEY}}, groups: [ops]}}
{POLICIES}"#,
            server = example_server(),
            public = public.display(),
        ),
    )
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn rs256_token(claims: &Value) -> String {
    let pem = std::fs::read(jwt_dir().join("test-only-rs256-private.pem")).unwrap();
    encode(
        &Header::new(Algorithm::RS256),
        claims,
        &EncodingKey::from_rsa_pem(&pem).unwrap(),
    )
    .unwrap()
}

/// How a request authenticates.
#[derive(Clone, Copy)]
enum Cred<'a> {
    Key(&'a str),
    Bearer(&'a str),
}

struct Bridge {
    /// The process, when this value owns it.
    _running: Option<Running>,
    url: String,
    http: reqwest::Client,
}

impl Bridge {
    async fn start(config: &std::path::Path) -> Self {
        let mut running = Running::serving(
            config,
            &[("POLICY_CI_KEY", CI_KEY), ("POLICY_OPS_KEY", OPS_KEY)],
        );
        let url = running.url().await;
        Self {
            _running: Some(running),
            url,
            http: reqwest::Client::new(),
        }
    }

    fn request(&self, builder: reqwest::RequestBuilder, cred: Cred<'_>) -> reqwest::RequestBuilder {
        match cred {
            Cred::Key(key) => builder.header("x-api-key", key),
            Cred::Bearer(token) => builder.bearer_auth(token),
        }
    }

    /// The ids `GET /tools` lists for `cred`.
    async fn listed(&self, cred: Cred<'_>) -> Vec<String> {
        let response = self
            .request(self.http.get(format!("{}/tools", self.url)), cred)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let body: Value = response.json().await.unwrap();
        let mut ids: Vec<String> = body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                t["id"]
                    .as_str()
                    .unwrap()
                    .split('@')
                    .next()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        ids.sort();
        ids
    }

    /// `POST /tools/call`: the status and the body's bytes.
    async fn call(&self, cred: Cred<'_>, tool: &str, input: Value) -> (u16, String) {
        let response = self
            .request(self.http.post(format!("{}/tools/call", self.url)), cred)
            .json(&json!({"request": {"tool_id": tool, "input": input}}))
            .send()
            .await
            .unwrap();
        (response.status().as_u16(), response.text().await.unwrap())
    }

    /// One `tools/call` of a meta-tool (or, in `all` mode, a catalog tool) on `POST /mcp`: the
    /// JSON-RPC `result`.
    async fn mcp(&self, cred: Cred<'_>, tool: &str, arguments: Value) -> Value {
        self.rpc(
            cred,
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": tool, "arguments": arguments}}),
        )
        .await
    }

    async fn rpc(&self, cred: Cred<'_>, body: Value) -> Value {
        let text = self
            .request(self.http.post(format!("{}/mcp", self.url)), cred)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .json(&body)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let reply: Value = serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap();
        reply["result"].clone()
    }
}

fn ids(names: &[&str]) -> Vec<String> {
    let mut ids: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    ids.sort();
    ids
}

#[tokio::test]
async fn two_named_keys_see_and_call_different_tools_on_every_http_surface() {
    let bridge = Bridge::start(&rs256_config()).await;
    let ci = Cred::Key(CI_KEY);
    let ops = Cred::Key(OPS_KEY);

    // GET /tools: each caller's own view.
    assert_eq!(bridge.listed(ci).await, ids(&[ORDER, ECHO]));
    let everything = bridge.listed(ops).await;
    assert!(everything.len() > 5, "{everything:?}");
    assert!(everything.contains(&CRASH.to_owned()));

    // POST /tools/call: allowed, hidden, and refused by a condition with the rule's reason.
    let (status, body) = bridge.call(ci, ECHO, json!({"message": "hi"})).await;
    assert_eq!(status, 200, "{body}");
    let order = json!({"customer": {"name": "A"}, "items": [{"sku": "x", "quantity": 1}]});
    let (status, body) = bridge.call(ci, ORDER, order.clone()).await;
    assert_eq!(status, 200, "{body}");
    let mut urgent = order.clone();
    urgent["priority"] = json!("high");
    let (status, body) = bridge.call(ci, ORDER, urgent.clone()).await;
    assert_eq!(status, 403, "{body}");
    assert!(
        body.contains("CI may not place high-priority orders"),
        "{body}"
    );
    assert!(
        !body.contains("input.priority"),
        "the expression leaked: {body}"
    );
    let (status, body) = bridge.call(ops, ORDER, urgent).await;
    assert_eq!(status, 200, "{body}");

    // A hidden tool is answered exactly as one that does not exist (the id aside).
    let (hidden_status, hidden) = bridge.call(ci, DIVIDE, json!({"a": 1, "b": 2})).await;
    let (missing_status, missing) = bridge
        .call(ci, "ExampleMcpServer.Dividx", json!({"a": 1, "b": 2}))
        .await;
    assert_eq!(hidden_status, 400, "{hidden}");
    assert_eq!(
        (hidden_status, hidden.replace("Divide", "Dividx")),
        (missing_status, missing)
    );
    // Also with its version named, and in another letter case (no suggestion names it).
    let (_, hidden) = bridge.call(ci, &format!("{DIVIDE}@1.0.0"), json!({})).await;
    let (_, missing) = bridge
        .call(ci, "ExampleMcpServer.Dividx@1.0.0", json!({}))
        .await;
    assert_eq!(hidden.replace("Divide", "Dividx"), missing);
    let (_, hidden) = bridge.call(ci, "ExampleMcpServer.divide", json!({})).await;
    assert!(!hidden.contains(DIVIDE), "a suggestion named it: {hidden}");

    // POST /mcp: tools/list in `all` mode, search_tools, read_tool, call_tool, and the tool by
    // its own name.
    let listed = bridge
        .rpc(
            ci,
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        )
        .await;
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "search_tools",
            "read_tool",
            "call_tool",
            "ExampleMcpServer_Echo",
            "ExampleMcpServer_CreateOrder"
        ]
    );
    let search = |cred| {
        let bridge = &bridge;
        async move {
            let found = bridge
                .mcp(cred, "search_tools", json!({"query": "divide a by b"}))
                .await;
            found["structuredContent"]["results"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["path"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        }
    };
    let by_ops = search(ops).await;
    assert!(by_ops[0].starts_with(DIVIDE), "{by_ops:?}");
    let by_ci = search(ci).await;
    assert!(!by_ci.iter().any(|p| p.starts_with(DIVIDE)), "{by_ci:?}");
    let read = bridge.mcp(ci, "read_tool", json!({"path": DIVIDE})).await;
    let missing = bridge
        .mcp(ci, "read_tool", json!({"path": "ExampleMcpServer.Dividx"}))
        .await;
    assert_eq!(read["isError"], json!(true));
    assert_eq!(
        read.to_string().replace("Divide", "Dividx"),
        missing.to_string()
    );
    let called = bridge
        .mcp(
            ci,
            "call_tool",
            json!({"path": DIVIDE, "arguments": {"a": 1, "b": 2}}),
        )
        .await;
    assert_eq!(called["isError"], json!(true), "{called}");
    let by_name = bridge
        .mcp(ci, "ExampleMcpServer_Divide", json!({"a": 1, "b": 2}))
        .await;
    assert_eq!(by_name["isError"], json!(true), "{by_name}");
    let urgent = json!({"path": ORDER, "arguments": {"customer": {"name": "A"},
        "items": [{"sku": "x", "quantity": 1}], "priority": "high"}});
    let refused = bridge.mcp(ci, "call_tool", urgent).await;
    assert!(
        refused
            .to_string()
            .contains("CI may not place high-priority orders"),
        "{refused}"
    );
    let divided = bridge
        .mcp(
            ops,
            "call_tool",
            json!({"path": DIVIDE, "arguments": {"a": 6, "b": 3}}),
        )
        .await;
    assert_eq!(divided["isError"], json!(false), "{divided}");
}

#[tokio::test]
async fn rs256_tokens_name_their_subject_and_their_claims_decide() {
    let bridge = Bridge::start(&rs256_config()).await;
    let reader = rs256_token(&json!({
        "sub": "alice", "iss": ISSUER, "exp": now() + 300, "scope": "openid tools:read"
    }));
    let nobody = rs256_token(&json!({"sub": "bob", "iss": ISSUER, "exp": now() + 300}));
    let foreign = rs256_token(&json!({
        "sub": "eve", "iss": "https://elsewhere.test", "exp": now() + 300, "scope": "tools:read"
    }));
    // Every tool that is not destructive (an MCP tool that does not say it is not, is: the
    // example's divide and crash are hidden).
    assert_eq!(
        bridge.listed(Cred::Bearer(&reader)).await,
        ids(&[ORDER, ECHO])
    );
    // No rule allows bob anything: an empty catalog, not an error.
    assert!(bridge.listed(Cred::Bearer(&nobody)).await.is_empty());
    let (status, body) = bridge
        .call(Cred::Bearer(&nobody), ECHO, json!({"message": "hi"}))
        .await;
    assert_eq!(status, 400, "{body}");
    // A token from another issuer does not authenticate.
    let (status, _) = bridge
        .call(Cred::Bearer(&foreign), ECHO, json!({"message": "hi"}))
        .await;
    assert_eq!(status, 401);
    // The ci rules read `caller.name`: a token whose subject is in the ci group but is not
    // ci-bot may echo but not order.
    let ci_person = rs256_token(&json!({
        "sub": "carol", "iss": ISSUER, "exp": now() + 300, "groups": ["ci"]
    }));
    let order = json!({"customer": {"name": "A"}, "items": [{"sku": "x", "quantity": 1}]});
    let (status, body) = bridge.call(Cred::Bearer(&ci_person), ORDER, order).await;
    assert_eq!(status, 403, "{body}");
    let (status, body) = bridge
        .call(Cred::Bearer(&ci_person), ECHO, json!({"message": "hi"}))
        .await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test]
async fn hs256_tokens_carry_groups_in_a_configured_claim() {
    let secret = "a-shared-secret-of-at-least-32-bytes-for-hs256";
    let config = super::write_config(
        "policies",
        "hs256",
        &format!(
            r#"
sources:
  - {{type: mcp, name: example, transport: {{type: stdio, command: "{server}"}}}}
auth:
  jwt: {{secret_env: POLICY_HS_SECRET, group_claims: [teams]}}
policies:
  - {{effect: allow, groups: [maths], tools: ["*.Divide"]}}
"#,
            server = example_server(),
        ),
    );
    let mut running = Running::serving(&config, &[("POLICY_HS_SECRET", secret)]);
    let bridge = Bridge {
        url: running.url().await,
        _running: Some(running),
        http: reqwest::Client::new(),
    };
    let token = |teams: Value| {
        encode(
            &Header::new(Algorithm::HS256),
            &json!({"sub": "dana", "exp": now() + 300, "teams": teams}),
            &EncodingKey::from_secret(secret.as_bytes()),
        )
        .unwrap()
    };
    let maths = token(json!(["maths"]));
    assert_eq!(bridge.listed(Cred::Bearer(&maths)).await, ids(&[DIVIDE]));
    let other = token(json!("art music"));
    assert!(bridge.listed(Cred::Bearer(&other)).await.is_empty());
}

#[tokio::test]
async fn stdio_calls_as_the_configured_caller() {
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
    let config = super::write_config(
        "policies",
        "stdio",
        &format!(
            r#"
sources:
  - {{type: mcp, name: example, transport: {{type: stdio, command: "{server}"}}}}
mcp: {{expose: all, caller: {{name: desktop, groups: [ci]}}}}
auth:
  api_keys: [{{name: ops, key: {{env: POLICY_OPS_KEY}}, groups: [ops]}}]
{POLICIES}"#,
            server = example_server(),
        ),
    );
    let mut child = tokio::process::Command::new(otc_tests::bridge_process::bridge_bin())
        .args([
            "mcp",
            "--config",
            config.to_str().unwrap(),
            "--log-level",
            "warn",
        ])
        .env("POLICY_OPS_KEY", OPS_KEY)
        .current_dir(repo_root())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = async |message: Value| {
        stdin
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}}),
    )
    .await;
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).await;
    let order = json!({"customer": {"name": "A"}, "items": [{"sku": "x", "quantity": 1}]});
    send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "call_tool", "arguments": {"path": ORDER, "arguments": order}}}),
    )
    .await;
    let mut replies = std::collections::HashMap::new();
    while replies.len() < 3 {
        let line = tokio::time::timeout(std::time::Duration::from_secs(20), lines.next_line())
            .await
            .expect("no answer from otc-bridge mcp")
            .unwrap()
            .expect("otc-bridge mcp closed stdout");
        let reply: Value = serde_json::from_str(&line).unwrap();
        if let Some(id) = reply["id"].as_u64() {
            replies.insert(id, reply);
        }
    }
    let names: Vec<&str> = replies[&2]["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names[3..],
        ["ExampleMcpServer_Echo", "ExampleMcpServer_CreateOrder"]
    );
    // In the ci group, but not ci-bot: the ci-orders condition does not hold.
    let refused = replies[&3]["result"].to_string();
    assert!(
        refused.contains("CI may not place high-priority orders"),
        "{refused}"
    );
}

#[test]
fn a_policy_that_does_not_compile_is_refused_at_start_up_naming_the_rule() {
    let cases = [
        (
            "  - {name: broken, effect: allow, when: 'input.owner =='}",
            "policy broken: 'when' is not a valid CEL expression",
        ),
        (
            "  - {effect: allow, when: 'inptu.owner == \"acme\"'}",
            "policy #1: 'when' reads 'inptu'",
        ),
        (
            "  - {name: typo, effect: allow, groups: [opps]}",
            "policy typo: group 'opps' is not given to any API key",
        ),
        (
            "  - {name: range, effect: allow, tools: ['Github.Pulls*@^x']}",
            "policy range: 'Github.Pulls*@^x' has no valid version range",
        ),
    ];
    for (rule, expected) in cases {
        let config = super::write_config(
            "policies",
            "broken",
            &format!(
                "auth:\n  api_keys: [{{name: ops, key: {{env: POLICY_OPS_KEY}}, groups: [ops]}}]\npolicies:\n{rule}\n"
            ),
        );
        let (code, _, stderr) = run(&["tools", "--config", config.to_str().unwrap()]);
        assert_ne!(code, 0, "{rule}");
        assert!(stderr.contains(expected), "{rule}: {stderr}");
    }
}

#[test]
fn policy_list_and_explain_show_what_a_caller_sees_and_why() {
    let config = rs256_config();
    let config = config.to_str().unwrap();
    let (code, stdout, stderr) = run(&["policy", "list", "--caller", "ci-bot", "--config", config]);
    assert_eq!(code, 0, "{stderr}");
    let listed: Vec<&str> = stdout
        .lines()
        .map(|l| l.split('@').next().unwrap())
        .collect();
    assert_eq!(listed, [ECHO, ORDER]);

    let urgent = r#"{"customer": {"name": "A"}, "items": [], "priority": "high"}"#;
    let (code, stdout, stderr) = run(&[
        "policy", "explain", ORDER, "--caller", "ci-bot", "--input", urgent, "--config", config,
    ]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stdout.contains("decision: refused by ci-orders: CI may not place high-priority orders"),
        "{stdout}"
    );
    assert!(
        stdout.contains("4. ci-orders (allow): does not apply: its condition does not hold"),
        "{stdout}"
    );
    // A token's claims: its scope makes the non-destructive tools visible, not the destructive.
    let claims = r#"{"scope": "tools:read"}"#;
    let (code, stdout, _) = run(&[
        "policy", "explain", DIVIDE, "--caller", "alice", "--claims", claims, "--config", config,
    ]);
    assert_eq!(code, 1);
    assert!(stdout.contains("decision: hidden"), "{stdout}");
    assert!(
        stdout.contains("2. nothing-destructive (deny): applies"),
        "{stdout}"
    );
    let (code, stdout, _) = run(&[
        "policy", "explain", ECHO, "--caller", "alice", "--claims", claims, "--config", config,
    ]);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("decision: visible"), "{stdout}");
}

/// A config whose policies let the ci group use only `tool`, with the ci-bot key and, when
/// `newbie`, a second named key in the ci group.
fn swapped_config(path: &std::path::Path, tool: &str, newbie: bool) {
    let mut keys = vec![("ci-bot", "POLICY_CI_KEY", "ci")];
    if newbie {
        keys.push(("newbie", "POLICY_OPS_KEY", "ci"));
    }
    std::fs::write(
        path,
        format!(
            "{}policies:\n  - {{name: ci-only-one, effect: allow, groups: [ci], tools: [\"{tool}\"]}}\n",
            example_with_keys(&keys)
        ),
    )
    .unwrap();
}

#[tokio::test]
async fn reload_swaps_callers_and_policies_at_once_and_keeps_them_when_the_new_ones_do_not_compile()
{
    let path = super::write_config("policies", "swapped", "");
    swapped_config(&path, ECHO, false);
    let mut running = Running::serving(
        &path,
        &[("POLICY_CI_KEY", CI_KEY), ("POLICY_OPS_KEY", OPS_KEY)],
    );
    let url = running.url().await;
    let bridge = std::sync::Arc::new(Bridge {
        _running: None,
        url,
        http: reqwest::Client::new(),
    });
    assert_eq!(bridge.listed(Cred::Key(CI_KEY)).await, ids(&[ECHO]));

    // Lists and calls without pause while the rules swap back and forth: each one is decided
    // entirely under one configuration (one tool seen; the echo allowed or unknown).
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let hammer = |bridge: std::sync::Arc<Bridge>,
                  stop: std::sync::Arc<std::sync::atomic::AtomicBool>| async move {
        let mut seen = 0;
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            let listed = bridge.listed(Cred::Key(CI_KEY)).await;
            assert!(
                listed == ids(&[ECHO]) || listed == ids(&[DIVIDE]),
                "a list under mixed rules: {listed:?}"
            );
            let (status, body) = bridge
                .call(Cred::Key(CI_KEY), ECHO, json!({"message": "hi"}))
                .await;
            assert!(status == 200 || status == 400, "{status} {body}");
            seen += 1;
        }
        seen
    };
    let workers: Vec<_> = (0..4)
        .map(|_| tokio::spawn(hammer(bridge.clone(), stop.clone())))
        .collect();
    for round in 0..6 {
        let tool = if round % 2 == 0 { DIVIDE } else { ECHO };
        swapped_config(&path, tool, round % 2 == 0);
        running.hangup();
        let line = running.wait_for("reload").await;
        assert!(line.contains("reloaded:"), "{line}");
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for worker in workers {
        assert!(worker.await.unwrap() > 0);
    }
    // The last swap's rules: ECHO for the ci group, and no newbie key any more.
    assert_eq!(bridge.listed(Cred::Key(CI_KEY)).await, ids(&[ECHO]));
    let (status, _) = bridge
        .call(Cred::Key(OPS_KEY), ECHO, json!({"message": "hi"}))
        .await;
    assert_eq!(
        status, 401,
        "a key removed by the reload still authenticates"
    );
    // One more swap adds the newbie key, which works at once.
    swapped_config(&path, DIVIDE, true);
    running.hangup();
    running.wait_for("reloaded:").await;
    assert_eq!(bridge.listed(Cred::Key(OPS_KEY)).await, ids(&[DIVIDE]));

    // A policy that does not compile: refused at reload, naming the rule; the rules stay.
    std::fs::write(
        &path,
        std::fs::read_to_string(&path)
            .unwrap()
            .replace(r#"tools: ["ExampleMcpServer.Divide"]"#, "when: 'input. =='"),
    )
    .unwrap();
    running.hangup();
    let line = running.wait_for("reload failed").await;
    assert!(line.contains("policy ci-only-one"), "{line}");
    assert_eq!(bridge.listed(Cred::Key(OPS_KEY)).await, ids(&[DIVIDE]));
}
