//! Rate limits and concurrency caps (issue 26, item 3) through the real binary: a caller over
//! its rate gets the standard's retryable error with its wait (429 and `Retry-After` on OTC,
//! `retry_after_ms` on MCP) while another caller goes on; a concurrency cap refuses the call
//! beyond it; two replicas sharing a real `redis-server` together allow no more than the limit
//! under concurrent load; and Redis killed mid-run is decided by `on_store_error`.

use serde_json::{Value, json};

use super::example_with_keys;
use otc_tests::bridge_process::Running;
use otc_tests::redis::RedisServer;

const CI_KEY: &str = "limits-ci-key-0123456789";
const OPS_KEY: &str = "limits-ops-key-0123456789";

fn keys_and_source() -> String {
    example_with_keys(&[
        ("ci-bot", "LIMITS_CI_KEY", "ci"),
        ("ops", "LIMITS_OPS_KEY", "ops"),
    ])
}

async fn start(config: &std::path::Path) -> (Running, String) {
    let mut running = Running::serving(
        config,
        &[("LIMITS_CI_KEY", CI_KEY), ("LIMITS_OPS_KEY", OPS_KEY)],
    );
    let url = running.url().await;
    (running, url)
}

/// `POST /tools/call`: status, `Retry-After`, body.
async fn call(url: &str, key: &str, tool: &str, input: Value) -> (u16, Option<String>, Value) {
    let response = reqwest::Client::new()
        .post(format!("{url}/tools/call"))
        .header("x-api-key", key)
        .json(&json!({"tool_id": tool, "input": input}))
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    (status, retry_after, response.json().await.unwrap())
}

const ECHO: &str = "ExampleMcpServer.Echo";

#[tokio::test]
async fn a_caller_over_its_rate_waits_while_others_go_on_and_a_concurrency_cap_holds() {
    let config = super::write_config(
        "limits",
        "memory",
        &format!(
            "{}rate_limits:\n  rules:\n    - {{name: ci-3-a-minute, groups: [ci], rate: 3/minute}}\n    - {{name: one-slow-at-a-time, tools: [\"ExampleMcpServer.Slow\"], concurrency: 1, per: rule}}\n",
            keys_and_source()
        ),
    );
    let (_bridge, url) = start(&config).await;
    for _ in 0..3 {
        let (status, _, body) = call(&url, CI_KEY, ECHO, json!({"message": "hi"})).await;
        assert_eq!(status, 200, "{body}");
    }
    let (status, retry_after, body) = call(&url, CI_KEY, ECHO, json!({"message": "hi"})).await;
    assert_eq!(status, 429, "{body}");
    let wait = body["retry_after_ms"].as_u64().unwrap();
    assert!((1..=20_000).contains(&wait), "{body}");
    assert_eq!(retry_after, Some(wait.div_ceil(1000).to_string()));
    assert!(
        body["message"].as_str().unwrap().contains("try again in"),
        "{body}"
    );
    // Another caller is not limited by the ci group's counter.
    for _ in 0..5 {
        let (status, _, body) = call(&url, OPS_KEY, ECHO, json!({"message": "hi"})).await;
        assert_eq!(status, 200, "{body}");
    }
    // The MCP edge: the same limit, as an error result with the wait.
    let reply: Value = reqwest::Client::new()
        .post(format!("{url}/mcp"))
        .header("x-api-key", CI_KEY)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "call_tool", "arguments": {"path": ECHO, "arguments": {"message": "hi"}}}}),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let result = &reply["result"];
    assert_eq!(result["isError"], json!(true), "{reply}");
    assert!(
        result["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Error: Too many calls")
    );
    assert!(result["structuredContent"]["error"]["retry_after_ms"].as_u64() > Some(0));
    assert_eq!(
        result["structuredContent"]["error"]["can_retry"],
        json!(true)
    );

    // One slow call at a time: the second, while the first runs, is refused.
    let slow = |key| {
        let url = url.clone();
        async move { call(&url, key, "ExampleMcpServer.Slow", json!({"ms": 1500})).await }
    };
    let first = tokio::spawn(slow(OPS_KEY));
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let (status, _, body) = slow(OPS_KEY).await;
    assert_eq!(status, 429, "{body}");
    assert_eq!(first.await.unwrap().0, 200);
    // Once it ended, the next one runs.
    let (status, _, body) = call(&url, OPS_KEY, "ExampleMcpServer.Slow", json!({"ms": 1})).await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test]
async fn two_replicas_share_a_limit_through_redis_and_redis_going_away_follows_on_store_error() {
    let mut redis = RedisServer::start().await;
    let config = |on_store_error: &str| {
        super::write_config(
            "limits",
            &format!("redis-{on_store_error}"),
            &format!(
                "{}state: {}\nrate_limits:\n  on_store_error: {on_store_error}\n  rules:\n    - {{name: shared-10, rate: 10/minute, per: rule}}\n",
                keys_and_source(),
                redis.url()
            ),
        )
    };
    let open = config("open");
    let (_first, a) = start(&open).await;
    let (_second, b) = start(&open).await;
    let refuse = config("refuse");
    let (_third, c) = start(&refuse).await;

    // 30 calls at once, alternating between the two replicas: 10 pass, whichever replica.
    let calls: Vec<_> = (0..30)
        .map(|i| {
            let url = if i % 2 == 0 { a.clone() } else { b.clone() };
            tokio::spawn(async move {
                call(&url, OPS_KEY, ECHO, json!({"message": format!("{i}")}))
                    .await
                    .0
            })
        })
        .collect();
    let mut statuses = Vec::new();
    for call in calls {
        statuses.push(call.await.unwrap());
    }
    let passed = statuses.iter().filter(|s| **s == 200).count();
    let limited = statuses.iter().filter(|s| **s == 429).count();
    assert_eq!((passed, limited), (10, 20), "{statuses:?}");
    // The third replica (same rule, same counter) is over it too.
    let (status, _, _) = call(&c, CI_KEY, ECHO, json!({"message": "x"})).await;
    assert_eq!(status, 429);

    // Redis goes away: `open` lets calls through, `refuse` answers with a retryable error.
    redis.kill().await;
    let (status, _, body) = call(&a, OPS_KEY, ECHO, json!({"message": "x"})).await;
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = call(&c, OPS_KEY, ECHO, json!({"message": "x"})).await;
    assert_eq!(status, 429, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("cannot be checked"),
        "{body}"
    );
}

#[test]
fn a_limit_that_does_not_compile_is_refused_at_start_up() {
    let config = super::write_config(
        "limits",
        "broken",
        "rate_limits:\n  rules:\n    - {name: typo, rate: 10/fortnight}\n",
    );
    let (code, _, stderr) =
        otc_tests::bridge_process::run(&["tools", "--config", config.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("rate_limits: rule typo: rate '10/fortnight' is not N/second"),
        "{stderr}"
    );
}
