//! The MCP adapter: any MCP server (stdio child, streamable HTTP, legacy HTTP+SSE) served as OTC
//! tools, through rmcp's client role.
//!
//! - `config.rs`: [`McpConfig`], what the bridge's config and CLI flags build.
//! - `client`: one session (connect in the server's era, `list_changed` → catalog tick).
//! - `child`: the stdio child (process group, stderr to the log, no orphans).
//! - `supervisor`: restarts with backoff, hang detection, state for `/health`.
//! - `sse`: the legacy HTTP+SSE transport rmcp lacks.
//! - `stdio`, `http`, `limits`: the stdio transport, the client under streamable HTTP, and the size cap every transport shares; an answer
//!   over it (or too deep to parse) fails its call at once instead of being dropped.
//! - [`LineReader`] (`lines`): newline-delimited JSON-RPC read under that cap, shared with the
//!   bridge's own stdio edge, which answers what it cannot read with JSON-RPC errors.
//! - `convert`: call results and rmcp errors → values and [`AdapterError`]s.
//! - `set_aside`: a large `structuredContent` kept as its text, out of rmcp's parse; `nesting`:
//!   the strings-and-brackets skip its scan shares with `limits`'.
//! - `features`: resources and prompts served as tools (`resources: tools`, `prompts: tools`).
//!
//! Translation of tool lists is pure and lives in `otc_mappings::mcp`. Calls multiplex over one
//! session: rmcp's `Peer` is cloned per call and nothing is locked while a call is in flight.
//! A call whose future is dropped (the bridge's timeout) sends `notifications/cancelled`
//! upstream: rmcp's `call_tool` does that on drop.

use std::collections::BTreeSet;
use std::fmt;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use async_trait::async_trait;
use otc_mappings::mcp::{McpSource, map_tools};
use otc_mappings::otc::{AuthorizationRequirement, OAuth2Requirement, ToolAuthorizationChallenge};
use otc_mappings::{Mapped, MappedTool, Target};
use rmcp::model as mcp;
use rmcp::model::RequestParamsMeta as _;
use rmcp::{Peer, RoleClient};
use serde_json::Value;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::{Adapter, AdapterError, BuildContext, McpProtocol, SourceState, ToolCall, ToolValue};

#[cfg(test)]
mod arbitrary;
mod callers;
mod child;
mod client;
mod config;
mod convert;
mod features;
mod http;
mod limits;
mod lines;
mod login;
mod nesting;
mod oauth;
mod set_aside;
mod sse;
mod stdio;
mod supervisor;
mod tool_call;

pub use config::{
    AuthConfig, EnvValueConfig, HeaderValueConfig, McpConfig, McpTransportConfig, OAuthGrant,
    RestartConfig, ServeAs,
};
pub use limits::{MAX_MESSAGE_BYTES, TopLevel};
pub use lines::{Frame, LineReader, Pieces, Watch};
pub use login::{LoginOutcome, login};
pub use oauth::challenges::Challenges;
pub use oauth::{Visit, VisitError};

use client::{Handler, Session};
use convert::Failure;

/// How long a call that lost its transport waits for the child's exit status, to report a crash
/// with its exit code rather than a lost connection.
const EXIT_STATUS_WAIT: Duration = Duration::from_secs(2);

/// The shortest wait before re-listing a tool list whose `ttlMs` ran out: a server that says
/// `0` is not re-listed in a loop.
const MIN_RELIST: Duration = Duration::from_secs(1);

/// One MCP server, supervised.
pub struct McpAdapter {
    shared: Arc<Shared>,
    supervisor: Mutex<Option<JoinHandle<()>>>,
}

/// What the adapter and its supervisor share.
pub(crate) struct Shared {
    name: String,
    config: McpConfig,
    /// Variables never passed to a child: the bridge's secrets and this source's own.
    secret_env: BTreeSet<String>,
    state: watch::Sender<SourceState>,
    catalog: Arc<watch::Sender<u64>>,
    live: RwLock<Option<Live>>,
    shutdown: watch::Sender<bool>,
    /// The OAuth client of a source with `auth`.
    auth: Option<oauth::SourceAuth>,
    /// With `per_caller: true`: callers' sign-ins and sessions.
    callers: Option<callers::Callers>,
    /// The re-list scheduled for when the last list's `ttlMs` runs out.
    relist: Mutex<Option<JoinHandle<()>>>,
    /// Sessions lost and restarted, for `/metrics`.
    restarts: std::sync::atomic::AtomicU64,
}

/// The session calls go through while the source is ready.
#[derive(Clone)]
struct Live {
    peer: Peer<RoleClient>,
    child_exit: Option<watch::Receiver<Option<ExitStatus>>>,
    pid: Option<u32>,
    protocol: McpProtocol,
}

impl fmt::Debug for McpAdapter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpAdapter")
            .field("name", &self.shared.name)
            .field("upstream", &self.shared.config.describe())
            .field("state", &*self.shared.state.borrow())
            .finish()
    }
}

impl McpAdapter {
    /// Starts the server (or connects to it) and runs `initialize`, within
    /// `startup_timeout_secs`. A command that cannot be spawned, a server that exits during
    /// start-up, or an unreachable URL is an [`AdapterError::Setup`] or
    /// [`AdapterError::Unreachable`] naming the upstream. A stdio child never sees the variables
    /// named in `cx.secret_env` (nor this source's own header variables).
    pub async fn build(
        name: &str,
        config: &McpConfig,
        cx: &BuildContext,
    ) -> Result<Arc<Self>, AdapterError> {
        let (catalog, _) = watch::channel(0);
        let catalog = Arc::new(catalog);
        let (state, _) = watch::channel(SourceState::Starting);
        let (shutdown, _) = watch::channel(false);
        let mut secret_env = cx.secret_env.clone();
        secret_env.extend(config.secret_env());
        let auth = oauth::SourceAuth::of(name, config).await?;
        let callers = oauth::CallerGate::of(config, cx)
            .await?
            .map(callers::Callers::new);
        let shared = Arc::new(Shared {
            name: name.to_owned(),
            config: config.clone(),
            secret_env,
            state,
            catalog: catalog.clone(),
            live: RwLock::new(None),
            shutdown,
            auth,
            callers,
            relist: Mutex::new(None),
            restarts: std::sync::atomic::AtomicU64::new(0),
        });
        let session = client::connect(
            name,
            config,
            &shared.secret_env,
            Handler::for_source(catalog, config),
            shared.auth.as_ref(),
        )
        .await?;
        shared.publish(&session);
        let supervisor = tokio::spawn(supervisor::run(shared.clone(), session));
        Ok(Arc::new(Self {
            shared,
            supervisor: Mutex::new(Some(supervisor)),
        }))
    }

    /// A channel with the source's state, for waiting on transitions (tests, `/health` streams).
    pub fn state_changes(&self) -> watch::Receiver<SourceState> {
        self.shared.state.subscribe()
    }

    /// The pid of the current child process (stdio sources that are ready).
    pub fn child_pid(&self) -> Option<u32> {
        self.shared.live().ok().and_then(|live| live.pid)
    }

    /// What `initialize` said about the server (name, version), while a session is live.
    pub fn server_info(&self) -> Option<mcp::Implementation> {
        let live = self.shared.live().ok()?;
        live.peer.peer_info()?.server_info.clone()
    }
}

impl Shared {
    fn publish(&self, session: &Session) {
        let live = Live {
            peer: session.peer.clone(),
            child_exit: session.child_exit(),
            pid: session.child.as_ref().map(child::ChildProcess::pid),
            protocol: session.protocol.clone(),
        };
        if let Ok(mut slot) = self.live.write() {
            *slot = Some(live);
        }
        self.set_state(SourceState::Ready);
    }

    fn unpublish(&self) {
        if let Ok(mut slot) = self.live.write() {
            *slot = None;
        }
    }

    /// Sends `request`; when the server refuses the token (it expired or was revoked
    /// mid-session), gets another (`client_credentials`) and sends it once more, or fails with
    /// the error that says how to sign in again.
    async fn with_token_recovery<T, F, Fut>(
        &self,
        request: F,
    ) -> Result<Result<T, rmcp::ServiceError>, AdapterError>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Result<T, rmcp::ServiceError>>,
    {
        let answer = request().await;
        if let (Err(error), Some(auth)) = (&answer, &self.auth)
            && let Some(challenge) = error.auth_challenge()
        {
            // Rare (a token refused mid-session): boxed, so that the common path's future (which
            // every call moves into a box) does not carry this one's size.
            Box::pin(auth.recover(challenge)).await?;
            return Ok(Box::pin(request()).await);
        }
        Ok(answer)
    }

    /// Re-lists once `ttl` has passed (a stateless server's cache hint), replacing any re-list
    /// scheduled before.
    fn relist_after(&self, ttl: Duration) {
        let catalog = self.catalog.clone();
        let timer = tokio::spawn(async move {
            tokio::time::sleep(ttl.max(MIN_RELIST)).await;
            catalog.send_modify(|n| *n = n.wrapping_add(1));
        });
        if let Ok(mut slot) = self.relist.lock()
            && let Some(previous) = slot.replace(timer)
        {
            previous.abort();
        }
    }

    fn set_state(&self, state: SourceState) {
        self.state.send_replace(state);
    }

    /// The live session, or the reason there is none (answered at once, nothing is queued).
    fn live(&self) -> Result<Live, AdapterError> {
        let live = self.live.read().ok().and_then(|slot| slot.clone());
        live.ok_or_else(|| {
            let reason = match &*self.state.borrow() {
                SourceState::Starting => "it is starting".to_owned(),
                SourceState::Ready => "it is between sessions".to_owned(),
                SourceState::Restarting { reason } => format!("it is restarting ({reason})"),
                SourceState::Failed { reason } => format!("it failed ({reason})"),
            };
            AdapterError::Unavailable {
                source_name: self.name.clone(),
                reason,
            }
        })
    }
}

impl Live {
    /// What a lost transport means: a crash with an exit code when the child exited.
    async fn lost(&self, message: String) -> AdapterError {
        if let Some(mut exit) = self.child_exit.clone() {
            let status = tokio::time::timeout(EXIT_STATUS_WAIT, exit.wait_for(Option::is_some));
            if let Ok(Ok(status)) = status.await {
                return AdapterError::ChildExited {
                    code: status.and_then(|s| s.code()),
                };
            }
        }
        AdapterError::ConnectionLost { message }
    }

    async fn classify(&self, error: rmcp::ServiceError) -> AdapterError {
        match convert::service_error(error) {
            Failure::Error(error) => error,
            Failure::Lost(message) => self.lost(message).await,
        }
    }
}

impl McpAdapter {
    /// The tool's value for `call`, as [`Adapter::call_unparsed`] gives it. One inherent
    /// function under both trait methods: `call` awaiting `call_unparsed` would box (and move)
    /// the whole call's future twice, once per `async_trait` method, on every call.
    async fn answer(&self, call: ToolCall) -> Result<ToolValue, AdapterError> {
        let tool = call.tool.clone();
        let (upstream, answered) = match &tool.target {
            Target::Named { name } => (name.clone(), self.call_tool(name, call).await),
            Target::Mcp { request } => (
                request.handle(),
                // Boxed, as the rarer path: see `call_tool`.
                Box::pin(features::call(&self.shared, request, call))
                    .await
                    .map(ToolValue::Parsed),
            ),
            Target::Http(_) => {
                return Err(AdapterError::setup(format!(
                    "tool {} is not an MCP tool",
                    tool.definition.id
                )));
            }
        };
        if let Err(AdapterError::ResponseTooLarge { limit_bytes }) = &answered {
            // The caller is told; the operator should be too: a server that answers this much
            // is misbehaving or misused.
            tracing::warn!(
                source = %self.shared.name,
                tool = %upstream,
                limit_bytes,
                "An MCP answer larger than the limit was refused."
            );
        }
        answered
    }

    /// `tools/call` of the server's tool `name`.
    async fn call_tool(&self, name: &str, call: ToolCall) -> Result<ToolValue, AdapterError> {
        let live = self.shared.live()?;
        let mut params =
            mcp::CallToolRequestParams::new(name.to_owned()).with_arguments(call.input);
        if let Some(context) = &call.trace_context {
            // The MCP convention for trace context (SEP-414): `_meta.traceparent`/`tracestate`.
            params.set_traceparent(&context.traceparent);
            if let Some(state) = &context.tracestate {
                params.set_tracestate(state);
            }
        }
        if let Some(callers) = &self.shared.callers {
            let token = call.context.token(&callers.gate.issuer);
            // Boxed: a per-caller session's future is large, and every call's future (moved
            // into a box by `async_trait`) would otherwise carry its size.
            let response =
                Box::pin(callers.call(&self.shared.name, &self.shared.config, token, params))
                    .await?;
            return convert::call_response(response);
        }
        let answer = self
            .shared
            .with_token_recovery(|| live.peer.call_tool_once(params.clone()))
            .await?;
        match answer {
            Ok(response) => convert::call_response(response),
            Err(error) => Err(Box::pin(live.classify(error)).await),
        }
    }
}

#[async_trait]
impl Adapter for McpAdapter {
    fn name(&self) -> &str {
        &self.shared.name
    }

    async fn list_tools(&self) -> Result<Mapped<MappedTool>, AdapterError> {
        let live = self.shared.live()?;
        let listed = self
            .shared
            .with_token_recovery(|| live.peer.list_all_tools_with_cache_hint())
            .await?;
        let tools = match listed {
            Ok(list) => {
                // A stateless server says how long its list holds; without a hint the list
                // changes only when the server says so.
                if let Some(ttl) = list.ttl_ms {
                    self.shared.relist_after(Duration::from_millis(ttl));
                }
                list.items
            }
            Err(error) => return Err(live.classify(error).await),
        };
        let info = live.peer.peer_info();
        let server_info = info.as_ref().and_then(|i| i.server_info.as_ref());
        let config = &self.shared.config;
        let source = McpSource {
            toolkit: config.toolkit.as_deref(),
            version: config.version.as_deref(),
            server_info,
        };
        let mut mapped = map_tools(&source, &tools);
        features::add(&self.shared, &live, &source, &mut mapped).await?;
        if let Some(callers) = &self.shared.callers {
            // Each call needs its caller's token from this authorization server.
            let requirement = AuthorizationRequirement {
                id: callers.gate.issuer.clone(),
                oauth2: Some(OAuth2Requirement {
                    scopes: callers.gate.scopes.clone(),
                }),
                extra: serde_json::Map::new(),
            };
            for tool in &mut mapped.tools {
                Arc::make_mut(&mut tool.definition)
                    .requirements
                    .get_or_insert_with(Default::default)
                    .authorization
                    .push(requirement.clone());
            }
        }
        Ok(mapped)
    }

    async fn call(&self, call: ToolCall) -> Result<Value, AdapterError> {
        self.answer(call).await.and_then(convert::parsed)
    }

    /// A large structured result stays the JSON text it came as, when its transport set it
    /// aside (`set_aside.rs`).
    async fn call_unparsed(&self, call: ToolCall) -> Result<ToolValue, AdapterError> {
        self.answer(call).await
    }

    fn state(&self) -> SourceState {
        self.shared.state.borrow().clone()
    }

    fn catalog_changes(&self) -> Option<watch::Receiver<u64>> {
        Some(self.shared.catalog.subscribe())
    }

    fn restarts(&self) -> u64 {
        self.shared
            .restarts
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    async fn challenge(
        &self,
        provider: &str,
    ) -> Result<Option<ToolAuthorizationChallenge>, AdapterError> {
        match &self.shared.callers {
            Some(callers) if callers.gate.issuer == provider => {
                callers.gate.challenge(&callers.gate.scopes).await.map(Some)
            }
            _ => Ok(None),
        }
    }

    fn mcp_protocol(&self) -> Option<McpProtocol> {
        self.shared.live().ok().map(|live| live.protocol)
    }

    async fn shutdown(&self) {
        self.shared.shutdown.send_replace(true);
        if let Some(timer) = self.shared.relist.lock().ok().and_then(|mut t| t.take()) {
            timer.abort();
        }
        let supervisor = self.supervisor.lock().ok().and_then(|mut s| s.take());
        if let Some(supervisor) = supervisor {
            let _ = supervisor.await;
        }
    }
}

impl Drop for McpAdapter {
    fn drop(&mut self) {
        // Without an explicit shutdown the supervisor still stops the server.
        self.shared.shutdown.send_replace(true);
    }
}
