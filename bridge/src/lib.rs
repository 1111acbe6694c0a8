//! otc-bridge: serves MCP servers and OpenAPI services as an Open Tool Calling tool server.
//!
//! The pieces, in the order a call meets them: [`server`] (the HTTP edge: logging, origin
//! checks, auth, extractors that detect the dialect and parse once), [`call`] (the pipeline
//! every edge shares: resolve in the [`registry`], check [`requirements`], [`validate`],
//! forward under the source's [`policy`]), and [`rescue`] (the one place where errors become
//! wire shapes).
#![warn(missing_docs)]

pub mod call;
pub mod cli;
pub mod config;
pub mod demo;
pub mod policy;
pub mod registry;
pub mod requirements;
pub mod rescue;
pub mod run;
pub mod server;
pub mod sources;
pub mod validate;

pub use registry::{Catalog, FailedSource, SharedCatalog, SourceTools};
pub use server::{AppState, Authenticator, ServerSettings, app};
