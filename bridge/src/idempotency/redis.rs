//! The idempotency store shared by replicas: Redis (`state: redis://…`).
//!
//! One key per (caller, `call_id`) under `otc-bridge:call:`, holding either `P` + fingerprint +
//! a token (the first call is running somewhere; `SET NX` makes exactly one replica the runner,
//! and the token, random per claim, makes the claim its own) or `D` + fingerprint + the
//! response's JSON (kept for the window). The runner's claim lives [`LEASE`] and is renewed every
//! [`RENEW`] while the call runs, however long that is (a claim that expired mid-call let a
//! repeat on another replica run the call again); a runner that died stops renewing, and its
//! claim is free a lease later. Renewing and releasing compare the token first, so a runner only
//! ever extends or frees its own claim. A repeat that finds `P` waits (polling, backing off)
//! until `D` appears or the claim goes. Stored answers are bounded like the memory store's:
//! each by `max_bytes`, and in number by `max_entries`, through a sorted set of the stored keys
//! (`otc-bridge:calls`, scored by the time they were stored): storing one trims the set to the
//! window and to `max_entries`, oldest first, and deletes what it trimmed, in one script. Every
//! Redis request has a deadline ([`TIMEOUT`]); what happens when Redis cannot be reached is the
//! bridge's `idempotency.on_store_error`.

use std::time::Duration;

use otc_mappings::otc::CallToolResponse;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use super::{Claim, Fingerprint, Key, StoreError};

/// How long a claim lives unless its runner renews it: how soon a runner that died frees its
/// `call_id` for a repeat.
const LEASE: Duration = Duration::from_secs(6);

/// How often a running call renews its claim (a third of the lease: two renewals may fail).
const RENEW: Duration = Duration::from_secs(2);

/// How often a repeat first looks whether the first call has finished; the pause doubles up to
/// [`POLL_MAX`], so a repeat waiting on a long call costs Redis a few requests a second.
const POLL: Duration = Duration::from_millis(10);
const POLL_MAX: Duration = Duration::from_millis(250);

/// The deadline of one Redis request, and of connecting.
const TIMEOUT: Duration = Duration::from_secs(2);

const PREFIX: &[u8] = b"otc-bridge:call:";

/// The stored answers' keys, scored by when they were stored (milliseconds, Redis's clock).
const INDEX: &str = "otc-bridge:calls";

/// Stores an answer and trims the index to the window and to `max_entries`, oldest first.
/// KEYS: the answer's key, the index; ARGV: the value, the window (ms), `max_entries`.
const STORE: &str = r"
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', KEYS[2], ms, KEYS[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ms - tonumber(ARGV[2]))
local excess = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[3])
if excess > 0 then
  for _, key in ipairs(redis.call('ZRANGE', KEYS[2], 0, excess - 1)) do
    redis.call('DEL', key)
  end
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, excess - 1)
end
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1
";

/// Extends a claim if it is still this runner's. KEYS: the key; ARGV: the marker, the lease (ms).
const RENEW_CLAIM: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
";

/// Frees a claim if it is still this runner's (never another runner's claim, never a stored
/// answer). KEYS: the key; ARGV: the marker.
const RELEASE_CLAIM: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
";

pub(super) struct RedisStore {
    connection: ConnectionManager,
    window: Duration,
    max_bytes: usize,
    max_entries: usize,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("window", &self.window)
            .finish_non_exhaustive()
    }
}

/// A reconnecting connection to the Redis at `url` (the `state:` every piece of shared state
/// uses: idempotency, rate limits), with the store's timeouts; Redis must be reachable now.
pub(crate) async fn connect(url: &str) -> Result<ConnectionManager, StoreError> {
    // The URL may carry a password: errors name the host only.
    let shown = url::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_else(|| "the configured host".to_owned());
    let client =
        redis::Client::open(url).map_err(|e| StoreError::NotRedisUrl(e.category().to_owned()))?;
    let config = ConnectionManagerConfig::new()
        .set_connection_timeout(Some(TIMEOUT))
        .set_response_timeout(Some(TIMEOUT))
        .set_number_of_retries(2);
    client
        .get_connection_manager_with_config(config)
        .await
        .map_err(|error| StoreError::Unreachable { host: shown, error })
}

impl RedisStore {
    /// Connects to `url`; Redis must be reachable at start-up (later outages follow
    /// `on_store_error`).
    pub(super) async fn connect(
        url: &str,
        window: Duration,
        max_bytes: usize,
        max_entries: usize,
    ) -> Result<Self, StoreError> {
        let connection = connect(url).await?;
        Ok(Self {
            connection,
            window,
            max_bytes,
            max_entries: max_entries.max(1),
        })
    }

    pub(super) async fn claim(
        &self,
        key: Key,
        fingerprint: Fingerprint,
    ) -> Result<Claim, StoreError> {
        let key = redis_key(&key);
        let mut marker = b"P".to_vec();
        marker.extend_from_slice(&fingerprint);
        marker.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
        let mut connection = self.connection.clone();
        let mut pause = POLL;
        loop {
            let claimed: Option<String> = redis::cmd("SET")
                .arg(&key)
                .arg(&marker)
                .arg("NX")
                .arg("PX")
                .arg(millis(LEASE))
                .query_async(&mut connection)
                .await
                .map_err(StoreError::Redis)?;
            if claimed.is_some() {
                let renewal =
                    tokio::spawn(renew(self.connection.clone(), key.clone(), marker.clone()));
                return Ok(Claim::Run(super::Ticket::Redis(Ticket {
                    connection: self.connection.clone(),
                    key,
                    marker,
                    fingerprint,
                    window: self.window,
                    max_bytes: self.max_bytes,
                    max_entries: self.max_entries,
                    renewal,
                    finished: false,
                })));
            }
            let found: Option<Vec<u8>> = redis::cmd("GET")
                .arg(&key)
                .query_async(&mut connection)
                .await
                .map_err(StoreError::Redis)?;
            match found.as_deref() {
                // Expired or released in between: claim again.
                None => continue,
                Some([b'P', stored @ ..]) => {
                    if stored.get(..fingerprint.len()) != Some(&fingerprint[..]) {
                        return Ok(Claim::Mismatch);
                    }
                }
                Some([b'D', stored @ ..]) => {
                    return match super::decode(stored) {
                        Some((f, _)) if f != fingerprint => Ok(Claim::Mismatch),
                        Some((_, response)) => Ok(Claim::Replay(response)),
                        None => Err(StoreError::UnreadableAnswer),
                    };
                }
                Some(_) => return Err(StoreError::UnreadableAnswer),
            }
            // The first call is running (its runner renews the claim while it does): wait.
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(POLL_MAX);
        }
    }
}

/// Keeps the claim `marker` on `key` alive until aborted (the ticket's end) or lost.
async fn renew(mut connection: ConnectionManager, key: Vec<u8>, marker: Vec<u8>) {
    loop {
        tokio::time::sleep(RENEW).await;
        let renewed = redis::Script::new(RENEW_CLAIM)
            .key(&key)
            .arg(&marker)
            .arg(millis(LEASE))
            .invoke_async::<i64>(&mut connection)
            .await;
        match renewed {
            Ok(1) => {}
            Ok(_) => {
                tracing::warn!(
                    "A running call lost its call_id claim (it expired while Redis was unreachable); a repeat may run it again."
                );
                return;
            }
            Err(error) => {
                tracing::warn!(%error, "Cannot renew a running call's call_id claim in Redis.");
            }
        }
    }
}

fn redis_key(key: &Key) -> Vec<u8> {
    let mut name = PREFIX.to_vec();
    name.extend_from_slice(otc_mappings::hex::hex(key).as_bytes());
    name
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

/// The runner's claim on a key.
#[derive(Debug)]
pub(super) struct Ticket {
    connection: ConnectionManager,
    key: Vec<u8>,
    /// `P` + fingerprint + this claim's token: what the key holds while the claim is ours.
    marker: Vec<u8>,
    fingerprint: Fingerprint,
    window: Duration,
    max_bytes: usize,
    max_entries: usize,
    /// The task renewing the claim; stopped when the ticket ends.
    renewal: tokio::task::JoinHandle<()>,
    finished: bool,
}

impl Ticket {
    /// Keeps `response` for the window (`None`: refused; the key is released for a repeat).
    pub(super) async fn finish(
        mut self,
        response: Option<&CallToolResponse>,
    ) -> Result<(), StoreError> {
        self.finished = true;
        self.renewal.abort();
        let mut connection = self.connection.clone();
        let stored = response.and_then(|r| super::encode(&self.fingerprint, r));
        match stored {
            Some(bytes) if bytes.len() <= self.max_bytes => {
                let mut value = b"D".to_vec();
                value.extend_from_slice(&bytes);
                redis::Script::new(STORE)
                    .key(&self.key)
                    .key(INDEX)
                    .arg(value)
                    .arg(millis(self.window))
                    .arg(self.max_entries)
                    .invoke_async::<i64>(&mut connection)
                    .await
                    .map(|_| ())
                    .map_err(StoreError::Redis)
            }
            _ => release(&mut connection, &self.key, &self.marker).await,
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.renewal.abort();
        // Abandoned (the client went away): release the key so a repeat may run.
        if !self.finished {
            let mut connection = self.connection.clone();
            let key = std::mem::take(&mut self.key);
            let marker = std::mem::take(&mut self.marker);
            tokio::spawn(async move {
                let _ = release(&mut connection, &key, &marker).await;
            });
        }
    }
}

/// Frees this runner's claim (compare-and-delete on its token: a claim that expired and was
/// taken by another runner stays theirs, and a stored answer stays).
async fn release(
    connection: &mut ConnectionManager,
    key: &[u8],
    marker: &[u8],
) -> Result<(), StoreError> {
    redis::Script::new(RELEASE_CLAIM)
        .key(key)
        .arg(marker)
        .invoke_async::<i64>(connection)
        .await
        .map(|_| ())
        .map_err(StoreError::Redis)
}
