//! The cache of read-only calls (issue 27, DESIGN.md §15) as a user configures it: the test
//! upstream's `/cached/{key}` record behind the real binary, with its caching headers, counted
//! on the upstream's side (how many full answers it gave, what `If-None-Match` it received).

use std::time::Duration;

use otc_tests::bridge_process::Running;
use otc_tests::redis::RedisServer;
use otc_tests::upstream_http::{self, Upstream};
use serde_json::{Value, json};

const ALICE: &str = "cache-alice-0123456789";
const BOB: &str = "cache-bob-0123456789";

/// The upstream as a source with `cache` (a YAML flow mapping), two callers, and `extra`
/// top-level lines.
fn config(upstream: &Upstream, cache: &str, extra: &str) -> String {
    format!(
        "sources:\n  - type: openapi\n    name: upstream\n    spec: {}\n    base_url: {}\n    include: [cachedRead, cachedBump]\n    cache: {cache}\nauth:\n  api_keys:\n    - {{name: alice, key: {{env: CACHE_ALICE}}}}\n    - {{name: bob, key: {{env: CACHE_BOB}}}}\n{extra}",
        upstream_http::document_path().display(),
        upstream.url(),
    )
}

fn serve(path: &std::path::Path) -> Running {
    Running::serving(path, &[("CACHE_ALICE", ALICE), ("CACHE_BOB", BOB)])
}

/// Calls `tool` as the caller of `key`, with `cache_control` as its request header; the value.
async fn call(
    url: &str,
    key: &str,
    tool: &str,
    input: Value,
    cache_control: Option<&str>,
) -> Value {
    let mut request = reqwest::Client::new()
        .post(format!("{url}/tools/call"))
        .header("x-api-key", key)
        .json(&json!({"tool_id": tool, "input": input}));
    if let Some(value) = cache_control {
        request = request.header("cache-control", value);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let body: Value = response.json().await.unwrap();
    assert_eq!(status, 200, "{body}");
    assert!(body.get("error").is_none(), "{body}");
    body["value"].clone()
}

/// How many full answers the upstream had given when `value` was answered.
fn answers(value: &Value) -> u64 {
    value["answers"]
        .as_u64()
        .unwrap_or_else(|| panic!("{value}"))
}

async fn metric(url: &str, outcome: &str) -> u64 {
    let text = reqwest::Client::new()
        .get(format!("{url}/metrics"))
        .header("x-api-key", ALICE)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let prefix =
        format!("otc_bridge_cache_lookups_total{{outcome=\"{outcome}\",source=\"upstream\"}} ");
    text.lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .map_or(0, |n| n.trim().parse().unwrap())
}

const READ: &str = "Upstream.CachedRead";

#[tokio::test]
async fn a_fresh_answer_is_served_from_memory_until_it_expires_and_a_caller_can_refresh_it() {
    let upstream = Upstream::start().await;
    let path = super::write_config("cache", "ttl", &config(&upstream, "{ttl_secs: 2}", ""));
    let mut bridge = serve(&path);
    let url = bridge.url().await;

    let first = call(&url, ALICE, READ, json!({"key": "a"}), None).await;
    let hits = upstream.hits();
    let again = call(&url, ALICE, READ, json!({"key": "a"}), None).await;
    assert_eq!(again, first, "a hit answers the kept value");
    assert_eq!(upstream.hits(), hits, "a hit does not reach the upstream");
    // Another input is another entry.
    let other = call(&url, ALICE, READ, json!({"key": "b"}), None).await;
    assert!(answers(&other) > answers(&first));
    // The caller asks for a fresh answer: the upstream is called, and its answer kept.
    let refreshed = call(&url, ALICE, READ, json!({"key": "a"}), Some("no-cache")).await;
    assert!(answers(&refreshed) > answers(&other));
    assert_eq!(
        call(&url, ALICE, READ, json!({"key": "a"}), None).await,
        refreshed
    );
    assert_eq!(metric(&url, "hit").await, 2);
    assert_eq!(metric(&url, "miss").await, 2);
    assert_eq!(metric(&url, "bypassed").await, 1);
    // The catalog page says which tools keep their answers, and where.
    let page = reqwest::Client::new()
        .get(format!("{url}/"))
        .header("x-api-key", ALICE)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        page.contains("1 tool keeps its answers; in memory: 2 answers"),
        "{page}"
    );

    // The MCP edge reads the same entries (the same caller, the same input), and its callers
    // can refresh them the same way.
    let mcp = |headers: &'static [(&'static str, &'static str)]| {
        let url = url.clone();
        async move {
            let result = super::mcp_call(
                &url,
                ALICE,
                "call_tool",
                json!({"path": READ, "arguments": {"key": "a"}}),
                headers,
            )
            .await;
            assert_eq!(result["isError"], false, "{result}");
            result["structuredContent"].clone()
        }
    };
    assert_eq!(mcp(&[]).await, refreshed);
    let from_mcp = mcp(&[("cache-control", "no-cache")]).await;
    assert!(answers(&from_mcp) > answers(&refreshed), "{from_mcp}");
    let refreshed = call(&url, ALICE, READ, json!({"key": "a"}), None).await;
    assert_eq!(refreshed, from_mcp);

    // Past its ttl, the entry is gone.
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let expired = call(&url, ALICE, READ, json!({"key": "a"}), None).await;
    assert!(answers(&expired) > answers(&refreshed), "{expired}");
}

#[tokio::test]
async fn two_callers_never_share_a_private_entry_but_share_a_public_one() {
    let upstream = Upstream::start().await;
    let path = super::write_config("cache", "private", &config(&upstream, "{ttl_secs: 60}", ""));
    let mut bridge = serve(&path);
    let url = bridge.url().await;
    let alice = call(&url, ALICE, READ, json!({"key": "p"}), None).await;
    let bob = call(&url, BOB, READ, json!({"key": "p"}), None).await;
    assert!(
        answers(&bob) > answers(&alice),
        "bob got alice's entry: {bob}"
    );
    assert_eq!(
        call(&url, ALICE, READ, json!({"key": "p"}), None).await,
        alice
    );
    bridge.interrupt().await;

    let path = super::write_config(
        "cache",
        "public",
        &config(&upstream, "{ttl_secs: 60, public: true}", ""),
    );
    let mut bridge = serve(&path);
    let url = bridge.url().await;
    let alice = call(&url, ALICE, READ, json!({"key": "q"}), None).await;
    assert_eq!(
        call(&url, BOB, READ, json!({"key": "q"}), None).await,
        alice
    );
    // An answer the upstream marks private is never shared, whatever the configuration says.
    let input = json!({"key": "r", "max_age": 60, "private": true});
    let alice = call(&url, ALICE, READ, input.clone(), None).await;
    let bob = call(&url, BOB, READ, input, None).await;
    assert!(answers(&bob) > answers(&alice));
}

#[tokio::test]
async fn a_stale_answer_is_revalidated_with_its_etag_and_a_destructive_tool_is_never_cached() {
    let upstream = Upstream::start().await;
    let trail = otc_tests::scratch::file("cache", "audit.jsonl");
    let audit = format!("audit: {{file: \"{}\"}}\n", trail.display());
    let path = super::write_config(
        "cache",
        "etag",
        &config(&upstream, "{ttl_secs: 60}", &audit),
    );
    let mut bridge = serve(&path);
    let url = bridge.url().await;
    // `max-age=0` with an ETag: kept, stale at once, so every call revalidates.
    let input = json!({"key": "e", "max_age": 0, "etag": true});
    let first = call(&url, ALICE, READ, input.clone(), None).await;
    assert!(upstream.last_headers().get("if-none-match").is_none());
    let hits = upstream.hits();
    let again = call(&url, ALICE, READ, input.clone(), None).await;
    assert_eq!(again, first, "a 304 answers the kept value");
    assert_eq!(upstream.hits(), hits + 1, "revalidating asks the upstream");
    assert_eq!(
        upstream.last_headers()["if-none-match"],
        format!("\"v{}\"", first["version"])
    );
    assert_eq!(metric(&url, "revalidated").await, 1);

    // The destructive PUT changes the record; it is called every time, never kept.
    let hits = upstream.hits();
    call(
        &url,
        ALICE,
        "Upstream.CachedBump",
        json!({"key": "e"}),
        None,
    )
    .await;
    call(
        &url,
        ALICE,
        "Upstream.CachedBump",
        json!({"key": "e"}),
        None,
    )
    .await;
    assert_eq!(upstream.hits(), hits + 2);
    let changed = call(&url, ALICE, READ, input, None).await;
    assert!(
        changed["version"].as_u64() > first["version"].as_u64(),
        "{changed}"
    );
    assert!(answers(&changed) > answers(&first));

    // The upstream's max-age decides over the configuration's ttl.
    let short = json!({"key": "m", "max_age": 1});
    let kept = call(&url, ALICE, READ, short.clone(), None).await;
    assert_eq!(call(&url, ALICE, READ, short.clone(), None).await, kept);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert!(answers(&call(&url, ALICE, READ, short, None).await) > answers(&kept));

    // The audit trail says what the cache did for each call of a cached tool, and nothing for
    // the destructive one.
    bridge.interrupt().await;
    let lines: Vec<Value> = std::fs::read_to_string(&trail)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .filter(|line: &Value| line.get("caller").is_some())
        .collect();
    let said: Vec<&str> = lines
        .iter()
        .map(|line| line.get("cache").and_then(Value::as_str).unwrap_or("-"))
        .collect();
    assert_eq!(
        said,
        [
            "miss",
            "revalidated",
            "-",
            "-",
            "miss",
            "miss",
            "hit",
            "miss"
        ],
        "{lines:#?}"
    );
}

#[tokio::test]
async fn two_replicas_on_redis_share_their_entries() {
    let redis = RedisServer::start().await;
    let upstream = Upstream::start().await;
    let extra = format!("state: {}\n", redis.url());
    let path = super::write_config(
        "cache",
        "redis",
        &config(&upstream, "{ttl_secs: 60}", &extra),
    );
    let mut one = serve(&path);
    let mut two = serve(&path);
    let (url_one, url_two) = (one.url().await, two.url().await);
    let first = call(&url_one, ALICE, READ, json!({"key": "shared"}), None).await;
    let hits = upstream.hits();
    assert_eq!(
        call(&url_two, ALICE, READ, json!({"key": "shared"}), None).await,
        first,
        "the other replica answers from Redis"
    );
    assert_eq!(upstream.hits(), hits);
    // Still private there: another caller's call reaches the upstream.
    let bob = call(&url_two, BOB, READ, json!({"key": "shared"}), None).await;
    assert!(answers(&bob) > answers(&first));
    assert_eq!(metric(&url_two, "hit").await, 1);
}

#[tokio::test]
async fn an_override_turns_the_cache_off_for_one_tool_and_cache_true_is_refused() {
    let upstream = Upstream::start().await;
    let text = config(&upstream, "{ttl_secs: 60}", "").replace(
        "    cache: {ttl_secs: 60}\n",
        "    cache: {ttl_secs: 60}\n    overrides:\n      cachedRead: {cache: false}\n",
    );
    let path = super::write_config("cache", "off", &text);
    let mut bridge = serve(&path);
    let url = bridge.url().await;
    let first = call(&url, ALICE, READ, json!({"key": "o"}), None).await;
    let second = call(&url, ALICE, READ, json!({"key": "o"}), None).await;
    assert!(answers(&second) > answers(&first));
    bridge.interrupt().await;

    let text = text.replace("{cache: false}", "{cache: true}");
    let path = super::write_config("cache", "true", &text);
    let (code, _, stderr) =
        otc_tests::bridge_process::run(&["check", "--config", path.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("overrides.cachedRead.cache: `true` says not for how long"),
        "{stderr}"
    );
}
