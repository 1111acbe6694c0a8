//! Keeps one MCP source alive: watches the session, restarts a crashed or hung server with
//! exponential backoff, and publishes the live session and the source's state.
//!
//! - **Crash**: the child exited or the transport closed → `restarting`, the session is killed
//!   (the child's whole process group), and a new one is started after
//!   [`RestartConfig::backoff`](super::config::RestartConfig::backoff).
//! - **Hang**: a `ping` every `ping_interval_secs` must be answered within `ping_timeout_secs`;
//!   one that is not counts as a crash.
//! - While no session is live, calls are refused at once with `AdapterError::Unavailable`
//!   (nothing is queued: the bridge answers 400 "temporarily unavailable").
//! - After a restart the catalog channel ticks, so the bridge re-lists (the new process may
//!   serve other tools).
//! - A backoff counter is reset once a session has stayed up longer than the longest backoff,
//!   so a server that crashes on every start is not restarted in a tight loop.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model as mcp;
use tokio::sync::watch;

use super::Shared;
use super::client::{self, Handler, Session};
use crate::SourceState;

/// How a watched session ended.
enum Outcome {
    /// The adapter is shutting down.
    Shutdown,
    /// The session was lost; the reason is for the log and `/health`.
    Lost(String),
}

/// Runs until shutdown, starting from a session that is already connected.
pub(super) async fn run(shared: Arc<Shared>, first: Session) {
    let mut shutdown = shared.shutdown.subscribe();
    let restart = shared.config.restart.clone();
    let grace = Duration::from_millis(restart.shutdown_grace_ms);
    let mut session = first;
    let mut failures: u32 = 0;
    loop {
        shared.publish(&session);
        let started = Instant::now();
        let outcome = watch_session(&shared, &mut session, &mut shutdown).await;
        shared.unpublish();
        let reason = match outcome {
            Outcome::Shutdown => {
                session.stop(grace).await;
                shared.set_state(SourceState::Failed {
                    reason: "the source was shut down".to_owned(),
                });
                return;
            }
            Outcome::Lost(reason) => reason,
        };
        tracing::warn!(upstream = %shared.name, %reason, "MCP server lost; restarting it.");
        shared
            .restarts
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        shared.set_state(SourceState::Restarting {
            reason: reason.clone(),
        });
        session.kill();
        if started.elapsed() > Duration::from_millis(restart.max_backoff_ms) {
            failures = 0;
        }
        session = loop {
            let delay = restart.backoff(failures);
            failures = failures.saturating_add(1);
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                _ = shutdown.wait_for(|stop| *stop) => {
                    shared.set_state(SourceState::Failed { reason: "the source was shut down".to_owned() });
                    return;
                }
            }
            let handler = Handler::for_source(shared.catalog.clone(), &shared.config);
            let attempt = tokio::select! {
                attempt = client::connect(&shared.name, &shared.config, &shared.secret_env, handler, shared.auth.as_ref()) => attempt,
                _ = shutdown.wait_for(|stop| *stop) => {
                    shared.set_state(SourceState::Failed { reason: "the source was shut down".to_owned() });
                    return;
                }
            };
            match attempt {
                Ok(session) => break session,
                Err(error) => {
                    let reason = format!("restart failed: {error}");
                    tracing::warn!(upstream = %shared.name, %reason, attempt = failures, "Cannot restart the MCP server.");
                    shared.set_state(if failures >= restart.failures_before_failed {
                        SourceState::Failed { reason }
                    } else {
                        SourceState::Restarting { reason }
                    });
                }
            }
        };
        tracing::info!(upstream = %shared.name, "MCP server restarted.");
        // Published before the tick, so the bridge's re-list finds the new session.
        shared.publish(&session);
        shared.catalog.send_modify(|n| *n = n.wrapping_add(1));
    }
}

/// Waits until the session ends, fails a ping, or the adapter shuts down.
async fn watch_session(
    shared: &Shared,
    session: &mut Session,
    shutdown: &mut watch::Receiver<bool>,
) -> Outcome {
    let interval = Duration::from_secs(shared.config.ping_interval_secs);
    let ping_timeout = Duration::from_secs(shared.config.ping_timeout_secs.max(1));
    let peer = session.peer.clone();
    let pinger = async {
        if interval.is_zero() {
            return std::future::pending().await;
        }
        loop {
            tokio::time::sleep(interval).await;
            let ping = peer.send_request(mcp::ClientRequest::PingRequest(Default::default()));
            match tokio::time::timeout(ping_timeout, ping).await {
                Ok(Ok(_)) => {}
                // A server that does not know `ping` is alive; one that breaks the transport is
                // found by `ended()` below.
                Ok(Err(rmcp::ServiceError::McpError(_))) => {}
                Ok(Err(error)) => return format!("a ping failed: {error}"),
                Err(_) => {
                    return format!(
                        "the server did not answer a ping within {} s (hung)",
                        ping_timeout.as_secs()
                    );
                }
            }
        }
    };
    tokio::select! {
        _ = shutdown.wait_for(|stop| *stop) => Outcome::Shutdown,
        reason = session.ended() => Outcome::Lost(reason),
        reason = pinger => Outcome::Lost(reason),
    }
}
