//! End-to-end tests of otc-bridge (one binary: link time matters on two cores).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod auth;
mod browser;
mod cli;
mod conformance;
mod connections;
mod edge;
mod examples;
mod lock;
mod mcp;
mod mcp_host;
mod openapi;
mod properties;
mod server;
mod ui;
