//! `call_id` as the idempotency key the standard calls it (issue 13, DESIGN §11).
//!
//! A call repeated with the same `call_id` by the same caller, for the same tool and input,
//! within the window (default 10 min) is answered with the first call's response, without
//! calling upstream again; a repeat that arrives while the first is in flight waits for it; the
//! same `call_id` with another tool or input is a 400. Only calls that reached their tool are
//! kept (a value or a tool error): a refusal changed nothing upstream, so a repeat runs again.
//!
//! The key is the SHA-256 of the caller (the authenticated identity, see
//! [`crate::server::auth::Caller`]) and the `call_id`; the fingerprint is the SHA-256 of the
//! tool id as requested and the input in canonical form (keys sorted), so key order does not
//! make two inputs differ.
//!
//! Two stores: [`memory`] (the default, bounded in entries and bytes) and [`redis`], shared by
//! replicas behind a load balancer. This is the only state the bridge shares across calls;
//! everything else is rebuilt from configuration, so N replicas are correct behind any balancer.

mod memory;
mod redis;

use std::time::Duration;

use otc_mappings::otc::CallToolResponse;
use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::call::{Answer, Call};
use crate::rescue::ApiError;

/// `idempotency:` in the config file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IdempotencyConfig {
    /// How long a response is kept for repeats.
    pub window_secs: u64,
    /// At most this many responses are kept (the oldest go first), in memory or in Redis.
    pub max_entries: usize,
    /// At most this many bytes of responses are kept in memory; in Redis, the largest one kept.
    pub max_bytes: usize,
    /// What a call does when the shared store cannot be reached.
    pub on_store_error: OnStoreError,
}

impl Default for IdempotencyConfig {
    fn default() -> Self {
        Self {
            window_secs: 600,
            max_entries: 10_000,
            max_bytes: 64 * 1024 * 1024,
            on_store_error: OnStoreError::Open,
        }
    }
}

/// When Redis cannot be reached.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnStoreError {
    /// Run the call without the duplicate check, and log it (the default: a Redis outage does
    /// not take the tools down; a repeat in that moment may run twice).
    #[default]
    Open,
    /// Refuse the call with a retryable error (nothing can run twice).
    Refuse,
}

/// What a claim on a key found.
enum Claim {
    /// First of its kind: run the call, then store its answer with the ticket.
    Run(Ticket),
    /// Answered before (or while waiting): this response.
    Replay(CallToolResponse),
    /// The key was used for another tool or input.
    Mismatch,
}

/// The right, and the duty, to store the answer of a claimed call.
enum Ticket {
    Memory(memory::Ticket),
    Redis(redis::Ticket),
}

/// The idempotency store of one bridge.
#[derive(Debug)]
pub struct Idempotency {
    store: Store,
    on_store_error: OnStoreError,
}

#[derive(Debug)]
enum Store {
    Memory(memory::MemoryStore),
    Redis(redis::RedisStore),
}

type Key = [u8; 32];
type Fingerprint = [u8; 32];

impl Idempotency {
    /// The store `state` names: `memory` (or nothing) or `redis://…`.
    pub async fn new(state: Option<&str>, config: &IdempotencyConfig) -> Result<Self, String> {
        let window = Duration::from_secs(config.window_secs.max(1));
        let store = match state {
            None | Some("memory") => Store::Memory(memory::MemoryStore::new(
                window,
                config.max_entries,
                config.max_bytes,
            )),
            Some(url) if url.starts_with("redis://") || url.starts_with("rediss://") => {
                Store::Redis(
                    redis::RedisStore::connect(url, window, config.max_bytes, config.max_entries)
                        .await?,
                )
            }
            Some(other) => {
                return Err(format!(
                    "state: `{other}` is neither `memory` nor a redis:// URL"
                ));
            }
        };
        Ok(Self {
            store,
            on_store_error: config.on_store_error,
        })
    }

    /// Runs `call` through `run` unless it repeats an earlier one of `caller`.
    pub async fn call<F, Fut>(&self, caller: &str, call: Call, run: F) -> Result<Answer, ApiError>
    where
        F: FnOnce(Call) -> Fut,
        Fut: std::future::Future<Output = Result<Answer, ApiError>>,
    {
        let Some(call_id) = call.request.call_id.clone() else {
            return run(call).await;
        };
        let key = key(caller, &call_id);
        let fingerprint = fingerprint(&call.request.tool_id, call.request.input.as_ref());
        let claimed = match &self.store {
            Store::Memory(store) => Ok(store.claim(key, fingerprint).await),
            Store::Redis(store) => store.claim(key, fingerprint).await,
        };
        let ticket = match claimed {
            Ok(Claim::Run(ticket)) => Some(ticket),
            Ok(Claim::Replay(response)) => {
                return Ok(Answer {
                    response,
                    failure: None,
                });
            }
            Ok(Claim::Mismatch) => return Err(ApiError::CallIdReused { call_id }),
            Err(reason) => match self.on_store_error {
                OnStoreError::Open => {
                    tracing::warn!(%reason, "The idempotency store is unavailable; running the call without the duplicate check.");
                    None
                }
                OnStoreError::Refuse => return Err(ApiError::StateUnavailable { reason }),
            },
        };
        let answer = run(call).await;
        if let Some(ticket) = ticket {
            let stored = answer.as_ref().ok().map(|a| &a.response);
            let finished = match ticket {
                Ticket::Memory(ticket) => {
                    ticket.finish(stored);
                    Ok(())
                }
                Ticket::Redis(ticket) => ticket.finish(stored).await,
            };
            if let Err(reason) = finished {
                tracing::warn!(%reason, "Cannot store the answer for repeats of its call_id.");
            }
        }
        answer
    }
}

fn key(caller: &str, call_id: &str) -> Key {
    let mut hash = Sha256::new();
    hash.update(caller.as_bytes());
    hash.update([0]);
    hash.update(call_id.as_bytes());
    hash.finalize().into()
}

/// The tool as requested and the input with its keys sorted, hashed.
fn fingerprint(tool_id: &str, input: Option<&Value>) -> Fingerprint {
    let mut hash = Sha256::new();
    hash.update(tool_id.as_bytes());
    hash.update([0]);
    match input {
        // No input and an empty object are the same call.
        None | Some(Value::Null) => canonical(&mut hash, &Value::Object(Default::default())),
        Some(input) => canonical(&mut hash, input),
    }
    hash.finalize().into()
}

fn canonical(hash: &mut Sha256, value: &Value) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            hash.update(b"{");
            for key in keys {
                hash.update(serde_json::to_string(key).unwrap_or_default().as_bytes());
                hash.update(b":");
                if let Some(value) = map.get(key) {
                    canonical(hash, value);
                }
                hash.update(b",");
            }
            hash.update(b"}");
        }
        Value::Array(items) => {
            hash.update(b"[");
            for item in items {
                canonical(hash, item);
                hash.update(b",");
            }
            hash.update(b"]");
        }
        other => hash.update(other.to_string().as_bytes()),
    }
}

/// A stored response: its fingerprint and its body (the standard's JSON).
fn encode(fingerprint: &Fingerprint, response: &CallToolResponse) -> Option<Vec<u8>> {
    let mut bytes = fingerprint.to_vec();
    serde_json::to_writer(&mut bytes, response).ok()?;
    Some(bytes)
}

fn decode(bytes: &[u8]) -> Option<(Fingerprint, CallToolResponse)> {
    let fingerprint: Fingerprint = bytes.get(..32)?.try_into().ok()?;
    let response = serde_json::from_slice(bytes.get(32..)?).ok()?;
    Some((fingerprint, response))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_order_does_not_change_the_fingerprint_but_values_do() {
        let a = fingerprint("T.X", Some(&json!({"a": 1, "b": {"c": [1, 2], "d": "x"}})));
        let b = fingerprint("T.X", Some(&json!({"b": {"d": "x", "c": [1, 2]}, "a": 1})));
        assert_eq!(a, b);
        assert_ne!(
            a,
            fingerprint("T.X", Some(&json!({"a": 2, "b": {"c": [1, 2], "d": "x"}})))
        );
        assert_ne!(
            a,
            fingerprint("T.Y", Some(&json!({"a": 1, "b": {"c": [1, 2], "d": "x"}})))
        );
        assert_eq!(
            fingerprint("T.X", None),
            fingerprint("T.X", Some(&json!({})))
        );
        assert_ne!(key("alice", "1"), key("bob", "1"));
    }
}
