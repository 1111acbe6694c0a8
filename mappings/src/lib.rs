//! Pure translation for otc-bridge: the OTC wire model, naming and version rules, JSON Schema
//! normalisation, and the translators from OpenAPI documents and MCP tool lists to OTC tools.
//!
//! No I/O and no async: every function here takes a description and returns tools plus
//! diagnostics, so all of it is tested without a network.
#![warn(missing_docs)]

pub mod change;
pub mod error;
pub mod hex;
pub mod mcp;
pub mod naming;
pub mod openapi;
pub mod otc;
mod plan;
mod pointer;
pub mod schema;
pub mod text;
mod tool;

pub use error::{Diagnostic, Mapped, MappingError, Severity};
pub use tool::{MappedTool, McpRequest, Target};
