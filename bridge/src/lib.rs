//! otc-bridge: serves MCP servers and OpenAPI services as an Open Tool Calling tool server.
//!
//! The floor plan (DESIGN.md §12), arrows pointing down:
//!
//! | module | what it is |
//! |---|---|
//! | [`server`] | the HTTP edge: the accept loop ([`server::listen`]), guard, auth, extractors, routes, and the MCP edge ([`server::mcp`]) |
//! | [`call`] | one call, from a parsed request to its outcome; every edge calls through it |
//! | [`idempotency`] | `call_id` repeats, in memory or in Redis (the only state shared across calls) |
//! | [`rescue`] | errors and refusals, and their wire shapes |
//! | [`catalog`] | the tools served ([`catalog::registry`]), per-source policy, lockfile pins, validation, requirements |
//! | [`telemetry`] | call events → log lines, metrics and traces |
//! | [`config`] | the file, the flags and MCP hosts' files → one resolved [`config::Config`] |
//! | [`lifecycle`] | starting sources and keeping the catalog fresh; reloading the configuration |
//!
//! Tool search is its own crate, `otc-search`. The command line, the commands and the built-in
//! demo are the `otc-bridge` binary's own modules (`src/main.rs`), not part of this API.
#![warn(missing_docs)]

pub mod call;
pub mod catalog;
pub mod config;
pub mod idempotency;
pub mod lifecycle;
pub mod rescue;
pub mod server;
pub mod telemetry;

pub use catalog::registry::{Catalog, FailedSource, SharedCatalog, SourceTools};
pub use server::{AppState, Authenticator, ServerSettings, app};
