//! otc-bridge: serves MCP servers and OpenAPI services as an Open Tool Calling tool server.
//!
//! The pieces, in the order a call meets them: [`server`] (the HTTP edge: logging, origin
//! checks, auth, extractors that detect the dialect and parse once), [`call`] (the pipeline
//! every edge shares: resolve in the [`registry`], check [`requirements`], [`validate`],
//! forward under the source's [`policy`]), and [`rescue`] (the one place where errors become
//! wire shapes). [`mcp`] is the second edge over the same pipeline: the catalog served to MCP
//! hosts through three meta-tools, ranked by [`search`].
//!
//! Start-up: [`config`] merges the file and the flags into one [`config::Config`], whose
//! [`sources`] carry their compiled [`policy`] (an MCP host's
//! own file is read by [`mcp_servers`]); [`run`] starts them and keeps the catalog fresh.
//! The command line, the commands and the built-in demo are the `otc-bridge` binary's own
//! modules (`src/main.rs`), not part of this API.
#![warn(missing_docs)]

pub mod call;
pub mod config;
pub mod idempotency;
pub mod lock;
pub mod mcp;
pub mod mcp_servers;
pub mod metrics;
pub mod policy;
pub mod registry;
pub mod reload;
pub mod requirements;
pub mod rescue;
pub mod run;
pub mod search;
pub mod serve;
pub mod server;
pub mod sources;
pub mod traces;
pub mod validate;

pub use registry::{Catalog, FailedSource, SharedCatalog, SourceTools};
pub use server::{AppState, Authenticator, ServerSettings, app};
