//! Upstream adapters for otc-bridge: each configured MCP server or OpenAPI service is one
//! [`Adapter`], which lists its tools (already translated to OTC by `otc-mappings`) and forwards
//! validated calls. Every upstream failure is classified into an [`AdapterError`] by what
//! happened, so the bridge can answer in the standard's error classes (DESIGN.md §3).
//!
//! Cross-cutting limits (per-call timeout, concurrency) are the bridge's job, not each adapter's.
#![warn(missing_docs)]

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use otc_mappings::otc::CallContext;
use otc_mappings::{Mapped, MappedTool};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio::sync::watch;

mod error;
#[cfg(feature = "test-util")]
pub mod fake;
pub mod file;
pub mod fresh;
pub mod mcp;
pub mod openapi;

pub use error::AdapterError;
pub use fresh::{CacheRequest, Fetched, Freshness, Validators};

/// What the bridge tells every adapter it builds, beyond the adapter's own config.
///
/// Today that is which environment variables hold the bridge's secrets, so that an MCP stdio
/// child never sees them (issue 8, defect 2), even with `inherit_env: true`; where per-caller
/// authorization challenges go; and the HTTP stack OpenAPI sources share.
#[derive(Debug, Clone, Default)]
pub struct BuildContext {
    /// Names of the environment variables the bridge reads secrets from (the JWT key, API keys,
    /// every source's credential and header variables). Never passed to a child process.
    pub secret_env: std::collections::BTreeSet<String>,
    /// Where per-caller authorization challenges are kept and answered (the bridge's
    /// `/oauth/callback` and `/oauth/check/{id}`); a source with `per_caller: true` needs it.
    pub challenges: Option<Arc<mcp::Challenges>>,
    /// The HTTP clients OpenAPI sources call through: sources built with this context (and its
    /// clones) share them, one client per distinct set of client settings, instead of a client
    /// (and a root store) each.
    pub http: openapi::HttpClients,
}

/// One validated call, handed to the adapter that owns the tool.
#[derive(Debug, Clone)]
pub struct ToolCall {
    /// The tool as listed (definition and upstream target).
    pub tool: Arc<MappedTool>,
    /// The input, already validated against the tool's input schema.
    pub input: Map<String, Value>,
    /// Credentials and identity from the request's `context`.
    pub context: CallContext,
    /// The call's id (echoed or generated).
    pub call_id: String,
    /// The caller's trace id, forwarded upstream where the protocol has a place for it.
    pub trace_id: Option<String>,
    /// The W3C trace context of the bridge's span for this upstream call, when traces are on:
    /// sent as the `traceparent`/`tracestate` headers to OpenAPI upstreams and in `_meta` to MCP
    /// upstreams. `None` when traces are off (then only `trace_id` is forwarded, as before).
    pub trace_context: Option<TraceContext>,
}

/// A W3C trace context as text (<https://www.w3.org/TR/trace-context/>), the fields a
/// propagator writes. Plain strings, so adapters need no tracing library to forward it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceContext {
    /// `00-<trace id>-<parent span id>-<flags>`.
    pub traceparent: String,
    /// Vendor-specific entries, when there are any.
    pub tracestate: Option<String>,
}

/// The state of one source, as `/health` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum SourceState {
    /// Starting up: not yet listed.
    Starting,
    /// Serving calls.
    Ready,
    /// Lost its upstream and is reconnecting or restarting it.
    Restarting {
        /// Why.
        reason: String,
    },
    /// Gave up; calls are refused until it recovers.
    Failed {
        /// Why.
        reason: String,
    },
}

impl SourceState {
    /// Whether calls can be sent now.
    pub fn is_ready(&self) -> bool {
        matches!(self, Self::Ready)
    }
}

/// The MCP protocol a source speaks with its server, as `/health` and `check` show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct McpProtocol {
    /// The negotiated version (`2026-07-28`, `2025-11-25`, …).
    pub version: String,
    /// Which lifecycle that version has.
    pub era: McpEra,
}

/// The two lifecycles of MCP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum McpEra {
    /// 2026-07-28 and later: `server/discover`, `_meta` on every request, no session.
    Stateless,
    /// Up to 2025-11-25: the `initialize` handshake and a session.
    Session,
}

impl fmt::Display for McpProtocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let era = match self.era {
            McpEra::Stateless => "stateless",
            McpEra::Session => "session",
        };
        write!(f, "MCP {} ({era})", self.version)
    }
}

/// A tool's value as [`Adapter::call_unparsed`] gives it.
#[derive(Debug, Clone)]
pub enum ToolValue {
    /// Parsed.
    Parsed(Value),
    /// The upstream's JSON text as it came: one valid JSON value, whitespace and escapes as the
    /// upstream wrote them.
    Json(Box<RawValue>),
}

/// One configured upstream: an MCP server or an OpenAPI service.
#[async_trait]
pub trait Adapter: fmt::Debug + Send + Sync + 'static {
    /// The source's name, for logs and `/health`.
    fn name(&self) -> &str;

    /// Discovers the upstream's tools, translated to OTC, with what translation lost.
    /// Called at start-up and whenever [`Adapter::catalog_changes`] fires.
    async fn list_tools(&self) -> Result<Mapped<MappedTool>, AdapterError>;

    /// Forwards one validated call upstream and returns the tool's value.
    async fn call(&self, call: ToolCall) -> Result<Value, AdapterError>;

    /// Forwards a call whose value the bridge only passes on or cuts to a size: like
    /// [`Adapter::call`], but an adapter may give the upstream's JSON text unparsed
    /// ([`ToolValue::Json`]), checked to be one JSON value and scrubbed as a value would be. A
    /// parsed `serde_json::Value` weighs several times its text; a large answer cut to an MCP
    /// host's budget never needs it (issue 27). An adapter whose answers are not JSON text keeps
    /// this default.
    async fn call_unparsed(&self, call: ToolCall) -> Result<ToolValue, AdapterError> {
        Ok(ToolValue::Parsed(self.call(call).await?))
    }

    /// Forwards a call whose answer the bridge may keep ([`fresh`]): like [`Adapter::call`],
    /// and says how long the answer stays fresh; with `cache.validators`, the upstream may
    /// answer that the kept answer is still current. An adapter whose upstream says nothing
    /// about caching keeps this default.
    async fn call_fresh(
        &self,
        call: ToolCall,
        cache: &CacheRequest,
    ) -> Result<Fetched, AdapterError> {
        let _ = cache;
        Ok(Fetched::Value(self.call(call).await?, Freshness::unsaid()))
    }

    /// The source's current state.
    fn state(&self) -> SourceState {
        SourceState::Ready
    }

    /// A channel that ticks whenever the upstream's tool list changed and should be re-listed
    /// (MCP `notifications/tools/list_changed`). `None`: the list never changes.
    fn catalog_changes(&self) -> Option<watch::Receiver<u64>> {
        None
    }

    /// A new authorization challenge for `provider` (a tool requirement's id), when this source
    /// can issue one: a caller who gave no token is sent to sign in instead of told to configure.
    async fn challenge(
        &self,
        _provider: &str,
    ) -> Result<Option<otc_mappings::otc::ToolAuthorizationChallenge>, AdapterError> {
        Ok(None)
    }

    /// How many times the upstream was lost and restarted (or reconnected) since start-up.
    fn restarts(&self) -> u64 {
        0
    }

    /// The MCP protocol the source speaks while connected; `None` for other sources.
    fn mcp_protocol(&self) -> Option<McpProtocol> {
        None
    }

    /// Stops the upstream (children are killed, sessions closed). Calls after this fail.
    async fn shutdown(&self) {}
}
