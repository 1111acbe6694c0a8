//! The upstreams of `otc-bridge demo`: everything a newcomer needs to see the bridge work, with
//! no network and nothing installed but the Rust toolchain.
//!
//! - [`rest`]: "Demo Notes", a small REST service (axum, in-memory) that serves its own
//!   OpenAPI 3.0 document, started in-process on a loopback port.
//! - [`mcp_server`]: "demo-tools", an MCP server (rmcp server role) on stdio, run as a real
//!   child process by the hidden `otc-bridge demo-mcp-server` command, so the demo exercises
//!   the same stdio supervision as any other MCP server.
//!
//! Both ship inside the `otc-bridge` crate (the document is embedded with `include_str!`), so
//! `cargo run -p otc-bridge -- demo` works from a fresh clone. Their operations and tools are
//! picked to show the translation rules of DESIGN.md §4: path, query and body inputs, defaults
//! and enums, a 204, a 404 that becomes a retryable tool error, an API key, an output schema,
//! and an MCP `isError`.

pub(crate) mod mcp_server;
pub(crate) mod rest;
