//! `call_id` as the idempotency key the standard calls it (issue 13, DESIGN §11).
//!
//! A call repeated with the same `call_id` by the same caller, for the same tool, input and
//! context (tokens, secrets, user id), within the window (default 10 min) is answered with the
//! first call's response, without calling upstream again; a repeat that arrives while the first
//! is in flight waits for it; the same `call_id` with another tool, input or context is a 400.
//! A repeat is matched only after it passed the checks of a new call (requirements, input), so
//! a call without the credentials a tool requires is refused for them, never answered from the
//! store. Only outcomes a repeat must see again are kept: a value and a tool error that is not
//! to be retried. A refusal changed nothing upstream, and a failure answered `can_retry: true`
//! invites the very retry a `call_id` is for, so for both a repeat runs again.
//!
//! The key is the SHA-256 of the caller (the authenticated identity, see
//! `server::auth::Caller`) and the `call_id`; the fingerprint is the SHA-256 of the
//! tool id as requested, the input and the context in canonical form (keys sorted), so key
//! order does not make two calls differ. Another token, secret or user id with the same
//! `call_id` is a reuse (400, naming nothing of the first call), not a new call: a `call_id`
//! promises that its call runs at most once, and a client that retries with a refreshed token
//! must not run it twice unknowingly; it sends a new `call_id` for what is a new call.
//!
//! Two stores: [`memory`] (the default, bounded in entries and bytes) and [`redis`], shared by
//! replicas behind a load balancer. This is the only state the bridge shares across calls;
//! everything else is rebuilt from configuration, so N replicas are correct behind any balancer.

mod memory;
mod redis;

pub(crate) use redis::connect as connect_redis;

use std::time::Duration;

use otc_mappings::change::{write_sorted, write_sorted_object};
use otc_mappings::otc::{CallContext, CallOutcome, CallToolResponse};
use serde::Deserialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

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
#[derive(Debug)]
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
/// What makes two calls with one `call_id` the same call (see [`fingerprint`]).
pub(crate) type Fingerprint = [u8; 32];

impl Idempotency {
    /// Where answers are kept, in a word: `memory` or `redis` (for the catalog page).
    pub(crate) fn store_name(&self) -> &'static str {
        match self.store {
            Store::Memory(_) => "memory",
            Store::Redis(_) => "redis",
        }
    }

    /// The store `state` names: `memory` (or nothing) or `redis://…`.
    pub async fn new(state: Option<&str>, config: &IdempotencyConfig) -> Result<Self, StoreError> {
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
            Some(other) => return Err(StoreError::UnknownState(other.to_owned())),
        };
        Ok(Self {
            store,
            on_store_error: config.on_store_error,
        })
    }

    /// Whether a call of `caller` with `call_id` and `fingerprint` repeats an earlier one. A
    /// new call is [`Repeat::Run`]: run it and [`Pending::finish`] with its answer. When the
    /// store cannot be reached, `on_store_error` decides: run without the check (logged), or
    /// [`StoreUnavailable`].
    pub(crate) async fn check(
        &self,
        caller: &str,
        call_id: &str,
        fingerprint: Fingerprint,
    ) -> Result<Repeat, StoreUnavailable> {
        let key = key(caller, call_id);
        let claimed = match &self.store {
            Store::Memory(store) => Ok(store.claim(key, fingerprint).await),
            Store::Redis(store) => store.claim(key, fingerprint).await,
        };
        match claimed {
            Ok(Claim::Run(ticket)) => Ok(Repeat::Run(Pending(Some(ticket)))),
            Ok(Claim::Replay(response)) => Ok(Repeat::Replay(response)),
            Ok(Claim::Mismatch) => Ok(Repeat::Reused),
            Err(reason) => match self.on_store_error {
                OnStoreError::Open => {
                    tracing::warn!(%reason, "The idempotency store is unavailable; running the call without the duplicate check.");
                    Ok(Repeat::Run(Pending(None)))
                }
                OnStoreError::Refuse => Err(StoreUnavailable(reason)),
            },
        }
    }
}

/// What [`Idempotency::check`] found.
#[derive(Debug)]
pub(crate) enum Repeat {
    /// A new call: run it, then finish.
    Run(Pending),
    /// A repeat of a call answered before (or that finished while this one waited).
    Replay(CallToolResponse),
    /// The `call_id` was used for another tool, input or context.
    Reused,
}

/// A call claimed for its `call_id`: the right, and the duty, to store its answer. Dropped
/// without [`Pending::finish`], the claim is released and a repeat runs.
#[derive(Debug)]
pub(crate) struct Pending(Option<Ticket>);

impl Pending {
    /// Stores `response` for repeats (`None`: the call was refused; release the claim). A
    /// failure the caller is told to retry (`can_retry`) is not kept either: the retry it
    /// invites, with the same `call_id` as idempotency keys are meant to be used, must run.
    pub(crate) async fn finish(self, response: Option<&CallToolResponse>) {
        let response = response.filter(|response| !invites_retry(response));
        let finished = match self.0 {
            None => Ok(()),
            Some(Ticket::Memory(ticket)) => {
                ticket.finish(response);
                Ok(())
            }
            Some(Ticket::Redis(ticket)) => ticket.finish(response).await,
        };
        if let Err(reason) = finished {
            tracing::warn!(%reason, "Cannot store the answer for repeats of its call_id.");
        }
    }
}

/// Whether `response` is a failure the caller is told may succeed if tried again.
fn invites_retry(response: &CallToolResponse) -> bool {
    matches!(&response.outcome, CallOutcome::Error(error) if error.can_retry)
}

/// The shared store cannot be reached, and `on_store_error` is `refuse`.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct StoreUnavailable(pub StoreError);

/// Why the idempotency store cannot be set up or used. A Redis URL may carry a password, so
/// none is kept: only its host is named. A Redis error is in its variant's message, so it is
/// not also the source (a cause chain would say it twice).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// `state` names neither store.
    #[error("state: `{0}` is neither `memory` nor a redis:// URL")]
    UnknownState(String),
    /// `state` starts like a Redis URL but is not one.
    #[error("state: not a Redis URL ({0})")]
    NotRedisUrl(String),
    /// Redis cannot be reached at start-up.
    #[error("cannot reach Redis at {host}: {error}")]
    Unreachable {
        /// The URL's host.
        host: String,
        /// What Redis said.
        error: ::redis::RedisError,
    },
    /// A command failed.
    #[error("Redis: {0}")]
    Redis(::redis::RedisError),
    /// What the key holds is no answer this bridge stored.
    #[error("a stored answer cannot be read")]
    UnreadableAnswer,
}

fn key(caller: &str, call_id: &str) -> Key {
    let mut hash = Sha256::new();
    hash.update(caller.as_bytes());
    hash.update([0]);
    hash.update(call_id.as_bytes());
    hash.finalize().into()
}

/// The tool as requested, the input and the context (tokens, secrets, user id), each in
/// canonical form (object keys sorted), hashed: a repeat must be the same call by the same
/// credentials, so another token, secret or user id with a `call_id` already used is a
/// reuse, never the first caller's answer.
pub(crate) fn fingerprint(
    tool_id: &str,
    input: &Map<String, Value>,
    context: Option<&CallContext>,
) -> Fingerprint {
    let mut hash = Sha256::new();
    hash.update(tool_id.as_bytes());
    hash.update([0]);
    write_sorted_object(input, &mut |bytes| hash.update(bytes));
    hash.update([0]);
    // No context and an empty one are the same call.
    let context = context
        .and_then(|context| serde_json::to_value(context).ok())
        .unwrap_or_else(|| Value::Object(Map::new()));
    write_sorted(&context, &mut |bytes| hash.update(bytes));
    hash.finalize().into()
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

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn key_order_does_not_change_the_fingerprint_but_values_do() {
        let a = fingerprint(
            "T.X",
            &object(json!({"a": 1, "b": {"c": [1, 2], "d": "x"}})),
            None,
        );
        let b = fingerprint(
            "T.X",
            &object(json!({"b": {"d": "x", "c": [1, 2]}, "a": 1})),
            None,
        );
        assert_eq!(a, b);
        assert_ne!(
            a,
            fingerprint(
                "T.X",
                &object(json!({"a": 2, "b": {"c": [1, 2], "d": "x"}})),
                None
            )
        );
        assert_ne!(
            a,
            fingerprint(
                "T.Y",
                &object(json!({"a": 1, "b": {"c": [1, 2], "d": "x"}})),
                None
            )
        );
        assert_ne!(key("alice", "1"), key("bob", "1"));
    }

    #[test]
    fn the_context_is_part_of_the_fingerprint() {
        let context = |value: Value| serde_json::from_value::<CallContext>(value).ok();
        let input = object(json!({"q": 1}));
        let alice = context(json!({"authorization": [{"id": "gh", "token": "alice"}]}));
        let bob = context(json!({"authorization": [{"id": "gh", "token": "bob"}]}));
        assert_eq!(
            fingerprint("T.X", &input, alice.as_ref()),
            fingerprint("T.X", &input, alice.as_ref())
        );
        assert_ne!(
            fingerprint("T.X", &input, alice.as_ref()),
            fingerprint("T.X", &input, bob.as_ref())
        );
        assert_ne!(
            fingerprint("T.X", &input, alice.as_ref()),
            fingerprint("T.X", &input, None)
        );
        let user = |id: &str| context(json!({"user_id": id}));
        assert_ne!(
            fingerprint("T.X", &input, user("a").as_ref()),
            fingerprint("T.X", &input, user("b").as_ref())
        );
        let secret = |value: &str| context(json!({"secrets": [{"id": "k", "value": value}]}));
        assert_ne!(
            fingerprint("T.X", &input, secret("1").as_ref()),
            fingerprint("T.X", &input, secret("2").as_ref())
        );
        // No context and an empty one are the same call.
        assert_eq!(
            fingerprint("T.X", &input, None),
            fingerprint("T.X", &input, context(json!({})).as_ref())
        );
    }
}
