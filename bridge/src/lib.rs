//! otc-bridge: serves MCP servers and OpenAPI services as an Open Tool Calling tool server.
//!
//! The pieces, in the order a call meets them: [`server`] (HTTP, auth, dialects),
//! [`registry`] (tool lookup and version resolution, validators compiled once),
//! [`requirements`] and [`validate`] (checks before the call), the adapter (upstream), and
//! [`rescue`] (the one place where errors become wire shapes).
#![warn(missing_docs)]

pub mod cli;
pub mod config;
pub mod demo;
pub mod policy;
pub mod registry;
pub mod requirements;
pub mod rescue;
pub mod run;
pub mod serve;
pub mod server;
pub mod sources;
pub mod validate;

pub use registry::{Catalog, SharedCatalog, SourceTools};
pub use server::{AppState, Authenticator, ServerSettings, app};
