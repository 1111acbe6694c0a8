//! Calls of a per-caller source (`auth: {type: oauth, per_caller: true}`): each goes out with
//! its caller's token, over a session opened with that token.
//!
//! A stateless (2026-07-28) server keeps nothing between requests, so its "session" is only the
//! client that adds the header; a handshake-era server has a real session per token. Either
//! way the sessions are pooled: at most [`MAX_SESSIONS`], keyed by the SHA-256 of the token (the
//! pool holds no token as a key), the least recently used closed first. A session whose token
//! the server refuses is dropped from the pool, and the caller gets a new challenge.

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};

use lru::LruCache;
use rmcp::model as mcp;
use rmcp::{Peer, RoleClient};
use sha2::{Digest, Sha256};
use tokio::sync::OnceCell;

use super::client::{self, Failed, Session};
use super::config::McpConfig;
use super::convert::{self, Failure};
use super::oauth::challenges::CallerGate;
use crate::AdapterError;

/// Callers' sessions kept open at once, per source.
pub(crate) const MAX_SESSIONS: usize = 64;

type Key = [u8; 32];

/// One caller's session; closed when the pool and every call in flight have let it go.
struct Pooled {
    peer: Peer<RoleClient>,
    session: Option<Session>,
}

impl Drop for Pooled {
    fn drop(&mut self) {
        if let Some(session) = self.session.take() {
            session.kill();
        }
    }
}

/// The per-caller side of one source.
pub(crate) struct Callers {
    pub(crate) gate: Arc<CallerGate>,
    pool: Mutex<LruCache<Key, Arc<OnceCell<Pooled>>>>,
}

impl Callers {
    pub(crate) fn new(gate: Arc<CallerGate>) -> Self {
        let size = NonZeroUsize::new(MAX_SESSIONS).unwrap_or(NonZeroUsize::MIN);
        Self {
            gate,
            pool: Mutex::new(LruCache::new(size)),
        }
    }

    fn pool(&self) -> std::sync::MutexGuard<'_, LruCache<Key, Arc<OnceCell<Pooled>>>> {
        self.pool
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Calls a tool as the caller whose `token` was given (`None`: no token).
    pub(crate) async fn call(
        &self,
        source: &str,
        config: &McpConfig,
        token: Option<&str>,
        params: mcp::CallToolRequestParams,
    ) -> Result<mcp::CallToolResponse, AdapterError> {
        let Some(token) = token.filter(|t| !t.is_empty()) else {
            return Err(self
                .challenge("the call carries no token for it", &self.gate.scopes)
                .await);
        };
        let key: Key = Sha256::digest(token.as_bytes()).into();
        // Concurrent first calls with one token open one session: they share the cell.
        let cell = self.pool().get_or_insert(key, Default::default).clone();
        let opened = cell
            .get_or_try_init(|| async {
                let session = client::connect_as_caller(source, config, token).await?;
                Ok::<_, Failed>(Pooled {
                    peer: session.peer.clone(),
                    session: Some(session),
                })
            })
            .await;
        let pooled = match opened {
            Ok(pooled) => pooled,
            Err(failed) => {
                self.forget(&key, &cell);
                return Err(match failed {
                    Failed::Challenge(refusal) => self.refused(&refusal).await,
                    other => other.into_error(),
                });
            }
        };
        match pooled.peer.call_tool_once(params).await {
            Ok(result) => Ok(result),
            Err(error) if error.auth_challenge().is_some() => {
                // Expired or revoked since the session opened, or short of a scope this call
                // needs.
                self.forget(&key, &cell);
                let refusal = error.auth_challenge().unwrap_or_default();
                Err(self.refused(refusal).await)
            }
            Err(error) => match convert::service_error(error) {
                Failure::Error(error) => Err(error),
                Failure::Lost(message) => {
                    self.forget(&key, &cell);
                    Err(AdapterError::ConnectionLost { message })
                }
            },
        }
    }

    /// Drops `cell` from the pool, unless another session has replaced it meanwhile.
    fn forget(&self, key: &Key, cell: &Arc<OnceCell<Pooled>>) {
        let mut pool = self.pool();
        if pool.peek(key).is_some_and(|c| Arc::ptr_eq(c, cell)) {
            pool.pop(key);
        }
    }

    /// The challenge for a caller whose token the server refused with `www_authenticate`.
    async fn refused(&self, www_authenticate: &str) -> AdapterError {
        let scopes = self.gate.scopes_after(www_authenticate);
        if scopes.len() > self.gate.scopes.len() {
            let more = scopes[self.gate.scopes.len()..].join(" ");
            let reason = format!("the MCP server wants more scope for this call ({more})");
            self.challenge(&reason, &scopes).await
        } else {
            self.challenge("the MCP server refused the token", &scopes)
                .await
        }
    }

    /// The challenge for a caller, or the error that says why none could be made.
    pub(crate) async fn challenge(&self, reason: &str, scopes: &[String]) -> AdapterError {
        match self.gate.challenge(scopes).await {
            Ok(challenge) => AdapterError::AuthorizationRequired {
                challenge: Box::new(challenge),
                reason: reason.to_owned(),
            },
            Err(error) => error,
        }
    }
}
