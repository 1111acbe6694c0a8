//! otc-bridge: serves MCP servers and OpenAPI services as an Open Tool Calling tool server.
//!
//! The floor plan (DESIGN.md §12), arrows pointing down:
//!
//! | module | what it is |
//! |---|---|
//! | `server/` | the HTTP edge: the accept loop (`server/listen.rs`), guard, auth, extractors, routes, and the MCP edge (`server/mcp/`) |
//! | `call.rs` | one call, from a parsed request to its outcome; every edge calls through it |
//! | `access/` | who a request comes from, and the policies that decide what each caller may see and call |
//! | `idempotency/` | `call_id` repeats, in memory or in Redis |
//! | `result_cache/` | the cache of read-only calls' answers, in memory or in Redis |
//! | `rescue.rs` | errors and refusals, and their wire shapes |
//! | `catalog/` | the tools served (`catalog/registry.rs`), per-source policy, lockfile pins, validation, requirements |
//! | `telemetry/` | call events → log lines, metrics, traces and the audit trail |
//! | `config/` | the file, the flags and MCP hosts' files → one resolved [`Config`] |
//! | `lifecycle/` | starting sources and keeping the catalog fresh; reloading the configuration |
//!
//! The modules are private: this crate exists for the `otc-bridge` binary and the workspace's
//! tests, benches and examples, and exports only the names they use (below), so a module can be
//! reorganised without breaking a caller.
//!
//! Tool search is its own crate, `otc-search`. The command line, the commands and the built-in
//! demo are the `otc-bridge` binary's own modules (`src/main.rs`), not part of this API.
#![warn(missing_docs)]

mod access;
mod call;
mod catalog;
mod config;
mod idempotency;
mod lifecycle;
mod rescue;
mod result_cache;
mod server;
mod telemetry;

pub use access::{
    Caller, Effect, LimitConfig, LimitError, Limits, Per, Policies, PolicyConfig, PolicyError,
    RateLimitsConfig, RuleTrace, Verdict,
};
pub use catalog::lock::{Lockfile, OnChange};
pub use catalog::policy::SourceOptions;
pub use catalog::registry::{Catalog, Resolution, SharedCatalog, SourceTools};
pub use catalog::semantic::{
    ModelLoadError, SearchConfig, Semantic, load_model as load_search_model,
};
pub use config::host_import;
pub use config::sources::{Source, SourceFlag, SourceKind, Upstream, make_names_unique};
pub use config::{Config, DialectName, FileConfig, LimitsConfig, Overrides, public_url};
pub use idempotency::Idempotency;
pub use lifecycle::reload::{OffRuntime, READ_DEADLINE, Reloader};
pub use lifecycle::start::{
    Progress, SourceReport, load_catalog, shutdown_signal, spawn_refreshers, start_sources,
};
pub use rescue::tool_error;
pub use result_cache::{CacheStoreConfig, ResultCache};
pub use server::listen::{ConnectionLimits, is_body_timeout, raise_fd_limit, serve};
pub use server::mcp::{CatalogServer, Expose, McpSettings, serve_stdio};
pub use server::{AppState, Authenticator, Rules, ServerSettings, app};
pub use telemetry::audit::{AuditConfig, AuditError, AuditTrail, Broken, verify as verify_audit};
pub use telemetry::metrics::Metrics;
pub use telemetry::traces::Traces;
