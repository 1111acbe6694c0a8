//! `call_id` as the idempotency key (issue 13): a repeat is answered from the store without
//! reaching the upstream (the example server counts the calls it handles: `stats`), a repeat in
//! flight waits for the first, a reused id with another input is a 400; and two replicas sharing
//! a real Redis (Debian `redis-server`, scripts/install-redis.sh) answer each other's repeats.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::{Child, Command};

use super::example_server;
use otc_tests::bridge_process::{Running, repo_root};
use otc_tests::redis::RedisServer;

struct Client {
    http: reqwest::Client,
    url: String,
    key: &'static str,
}

impl Client {
    async fn call(&self, tool: &str, input: Value, call_id: Option<&str>) -> (u16, Value) {
        let mut body = json!({"tool_id": tool, "input": input});
        if let Some(id) = call_id {
            body["call_id"] = json!(id);
        }
        let response = self
            .http
            .post(format!("{}/tools/call", self.url))
            .header("x-api-key", self.key)
            .json(&body)
            .send()
            .await
            .unwrap();
        (response.status().as_u16(), response.json().await.unwrap())
    }

    /// Calls the upstream has handled so far (this `stats` call included).
    async fn upstream_calls(&self) -> u64 {
        let (status, body) = self.call("ExampleMcpServer.Stats", json!({}), None).await;
        assert_eq!(status, 200, "{body}");
        body["value"]["calls"].as_u64().unwrap()
    }
}

const ECHO: &str = "ExampleMcpServer.Echo";
const SLOW: &str = "ExampleMcpServer.Slow";

#[tokio::test]
async fn a_repeated_call_id_is_answered_without_calling_upstream_again() {
    let mut bridge = Running::spawn(
        &[
            "--listen",
            "127.0.0.1:0",
            "--mcp",
            example_server(),
            "--api-keys-env",
            "IDEMPOTENCY_KEYS",
        ],
        &[("IDEMPOTENCY_KEYS", "k1,k2")],
    );
    let url = bridge.url().await;
    let alice = Client {
        http: reqwest::Client::new(),
        url: url.clone(),
        key: "k1",
    };

    let (status, first) = alice.call(ECHO, json!({"message": "hi"}), Some("a")).await;
    assert_eq!(status, 200, "{first}");
    let before = alice.upstream_calls().await;
    // Same id, same tool and input (keys in any order): the stored response, not a new call.
    let (status, again) = alice.call(ECHO, json!({"message": "hi"}), Some("a")).await;
    assert_eq!((status, &again), (200, &first));
    assert_eq!(
        alice.upstream_calls().await,
        before + 1,
        "the repeat reached the upstream"
    );

    // Same id, other input: refused, and nothing is sent.
    let (status, refused) = alice
        .call(ECHO, json!({"message": "other"}), Some("a"))
        .await;
    assert_eq!(status, 400, "{refused}");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("already used"),
        "{refused}"
    );

    // Another caller's call_id is its own.
    let bob = Client {
        http: reqwest::Client::new(),
        url: url.clone(),
        key: "k2",
    };
    let before = alice.upstream_calls().await;
    let (status, _) = bob.call(ECHO, json!({"message": "hi"}), Some("a")).await;
    assert_eq!(status, 200);
    assert_eq!(alice.upstream_calls().await, before + 2);

    // A repeat arriving while the first is in flight waits for it: one upstream call.
    let before = alice.upstream_calls().await;
    let slow = json!({"ms": 400});
    let (one, two) = tokio::join!(
        alice.call(SLOW, slow.clone(), Some("b")),
        alice.call(SLOW, slow.clone(), Some("b"))
    );
    assert_eq!(one.0, 200, "{}", one.1);
    assert_eq!(one, two);
    assert_eq!(alice.upstream_calls().await, before + 2);

    // A refused call is not kept: once fixed, the same id runs.
    let (status, _) = alice.call(ECHO, json!({"message": 7}), Some("c")).await;
    assert_eq!(status, 422);
    let (status, body) = alice.call(ECHO, json!({"message": 7}), Some("c")).await;
    assert_eq!(status, 422, "{body}");
    bridge.interrupt().await;
}

/// A repeat is the same call by the same credentials (issue 25, item 1): without server
/// authentication every request is one caller, so before the fix anyone who sent a `call_id`
/// already used got its answer, whatever token or secret they held (or none). Runs against the
/// demo, whose `DeleteNote` requires the secret `notes_api_key`.
#[tokio::test]
async fn a_repeated_call_id_never_answers_other_credentials() {
    let mut demo = Running::spawn(&["demo", "--listen", "127.0.0.1:0"], &[]);
    let url = demo.url().await;
    let http = reqwest::Client::new();
    let call = |body: Value| {
        let http = http.clone();
        let url = url.clone();
        async move {
            let response = http
                .post(format!("{url}/tools/call"))
                .json(&body)
                .send()
                .await
                .unwrap();
            (
                response.status().as_u16(),
                response.json::<Value>().await.unwrap(),
            )
        }
    };
    let (status, created) = call(json!({"tool_id": "DemoNotes.CreateNote",
        "input": {"title": "t", "body": "b"}}))
    .await;
    assert_eq!(status, 200, "{created}");
    let id = created["value"]["id"].as_u64().unwrap();
    let delete = |context: Value| {
        json!({"tool_id": "DemoNotes.DeleteNote", "call_id": "del-1",
            "input": {"noteId": id}, "context": context})
    };
    let secret = |value: &str| json!({"secrets": [{"id": "notes_api_key", "value": value}]});
    let (status, first) = call(delete(secret("demo-key"))).await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(first["success"], true, "{first}");

    // No credentials: refused for the missing secret, as a new call would be.
    let (status, body) = call(delete(json!({}))).await;
    assert_eq!(status, 400, "a repeat without the secret got: {body}");
    assert!(body.to_string().contains("notes_api_key"), "{body}");
    // Other credentials: a reuse of the call_id, not the first caller's answer.
    let (status, body) = call(delete(secret("someone-else"))).await;
    assert_eq!(status, 400, "a repeat with another secret got: {body}");
    assert!(
        body["message"].as_str().unwrap().contains("already used"),
        "{body}"
    );
    assert_ne!(body, first);
    // Another user id with the same secret is another call, too.
    let mut other_user = secret("demo-key");
    other_user["user_id"] = json!("bob");
    let (status, body) = call(delete(other_user)).await;
    assert_eq!(status, 400, "{body}");
    // The same credentials: the stored answer (the note is gone, so a second run would fail).
    let (status, again) = call(delete(secret("demo-key"))).await;
    assert_eq!((status, &again), (200, &first));
    demo.interrupt().await;
}

/// The first line `child` prints with a URL in it (it is then listening).
async fn ready_line(child: &mut Child, what: &str) -> String {
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let read = async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.contains("http://") {
                return line;
            }
        }
        panic!("{what} stopped before it was ready");
    };
    tokio::time::timeout(Duration::from_secs(30), read)
        .await
        .unwrap_or_else(|_| panic!("{what} was not ready within 30 s"))
}

/// A real `redis-server`, the example MCP server over streamable HTTP (its `stats` counts the
/// calls of both replicas), and two bridges sharing both.
struct Replicas {
    redis: RedisServer,
    _upstream: Child,
    first: Running,
    second: Running,
    a: Client,
    b: Client,
    dir: std::path::PathBuf,
}

async fn replicas(idempotency: &str) -> Replicas {
    let redis = RedisServer::start().await;
    let (port, state) = (redis.port, redis.url());

    let mut upstream = Command::new(repo_root().join(example_server()))
        .args(["--http", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mcp_url = ready_line(&mut upstream, "the example server").await;
    let mcp_url = mcp_url[mcp_url.find("http://").unwrap()..]
        .trim()
        .to_owned();

    let dir = otc_tests::scratch::dir(&format!("bridge-replicas-{port}"));
    let config = dir.join("bridge.yaml");
    std::fs::write(
        &config,
        format!(
            "state: {state}\nidempotency: {idempotency}\nauth:\n  api_keys: {{env: REPLICA_KEYS}}\nsources:\n  - type: mcp\n    name: example\n    transport: {{type: streamable_http, url: \"{mcp_url}\"}}\n"
        ),
    )
    .unwrap();
    let start = || {
        Running::spawn(
            &[
                "--config",
                config.to_str().unwrap(),
                "--listen",
                "127.0.0.1:0",
            ],
            &[("REPLICA_KEYS", "k1")],
        )
    };
    let (mut first, mut second) = (start(), start());
    let replica = |url: String| Client {
        http: reqwest::Client::new(),
        url,
        key: "k1",
    };
    let a = replica(first.url().await);
    let b = replica(second.url().await);
    Replicas {
        redis,
        _upstream: upstream,
        first,
        second,
        a,
        b,
        dir,
    }
}

impl Replicas {
    async fn stop(self) {
        let Self {
            first, second, dir, ..
        } = self;
        first.interrupt().await;
        second.interrupt().await;
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[tokio::test]
async fn two_replicas_sharing_redis_answer_each_others_repeats() {
    let mut replicas = replicas("{max_entries: 3}").await;
    let (a, b) = (&replicas.a, &replicas.b);

    let (status, answer) = a.call(ECHO, json!({"message": "once"}), Some("r1")).await;
    assert_eq!(status, 200, "{answer}");
    let before = a.upstream_calls().await;
    let (status, repeat) = b.call(ECHO, json!({"message": "once"}), Some("r1")).await;
    assert_eq!(
        (status, &repeat),
        (200, &answer),
        "the other replica ran it again"
    );
    assert_eq!(b.upstream_calls().await, before + 1);
    let (status, _) = b.call(ECHO, json!({"message": "twice"}), Some("r1")).await;
    assert_eq!(status, 400);

    // Duplicates in flight on both replicas at once: one upstream call.
    let before = a.upstream_calls().await;
    let slow = json!({"ms": 400});
    let (one, two) = tokio::join!(
        a.call(SLOW, slow.clone(), Some("r2")),
        b.call(SLOW, slow.clone(), Some("r2"))
    );
    assert_eq!(one.0, 200, "{}", one.1);
    assert_eq!(one, two);
    assert_eq!(a.upstream_calls().await, before + 2);

    // Stored answers are bounded in number across replicas: two more push out the oldest (r1),
    // whose repeat then runs again.
    for id in ["r4", "r5"] {
        let (status, _) = a.call(ECHO, json!({"message": id}), Some(id)).await;
        assert_eq!(status, 200);
    }
    let before = a.upstream_calls().await;
    let (status, _) = b.call(ECHO, json!({"message": "once"}), Some("r1")).await;
    assert_eq!(status, 200);
    assert_eq!(
        b.upstream_calls().await,
        before + 2,
        "the oldest answer was kept"
    );
    let before = a.upstream_calls().await;
    let (status, _) = b.call(ECHO, json!({"message": "r5"}), Some("r5")).await;
    assert_eq!(status, 200);
    assert_eq!(
        b.upstream_calls().await,
        before + 1,
        "a recent answer was dropped"
    );

    // Redis gone: calls go on without the duplicate check (the default, `on_store_error: open`).
    replicas.redis.kill().await;
    let (status, body) = replicas
        .a
        .call(ECHO, json!({"message": "x"}), Some("r3"))
        .await;
    assert_eq!(status, 200, "{body}");
    replicas.stop().await;
}

/// Issue 25, item 3: a call runs once however long it takes. The runner renews its claim while
/// the call runs, so a repeat on the other replica waits for its answer, past the claim's lease
/// (6 s) and past a 3 s window, instead of finding the claim expired and running the call again.
#[tokio::test]
async fn a_long_call_runs_once_on_two_replicas_past_the_lease_and_the_window() {
    let replicas = replicas("{window_secs: 3}").await;
    let (a, b) = (&replicas.a, &replicas.b);
    let before = a.upstream_calls().await;
    let slow = json!({"ms": 8000});
    let repeat = async {
        tokio::time::sleep(Duration::from_millis(7000)).await;
        b.call(SLOW, slow.clone(), Some("long")).await
    };
    let (first, repeated) = tokio::join!(a.call(SLOW, slow.clone(), Some("long")), repeat);
    assert_eq!(first.0, 200, "{}", first.1);
    assert_eq!(repeated, first, "the repeat got another answer");
    assert_eq!(
        a.upstream_calls().await,
        before + 2,
        "the slow call ran more than once"
    );
    replicas.stop().await;
}
