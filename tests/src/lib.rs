//! End-to-end harness for otc-bridge: real HTTP over loopback, real child processes.
//!
//! Each module is one kind of real part the tests run against.
#![warn(missing_docs)]
#![allow(clippy::unwrap_used, clippy::missing_panics_doc)]

pub mod bridge;
pub mod bridge_process;
pub mod conformance;
pub mod http;
pub mod redis;
pub mod scratch;
pub mod spec;
pub mod tools;
pub mod upstream_http;
pub mod upstream_mcp;
