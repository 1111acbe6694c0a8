//! Tests of the `otc-bridge` binary as a user runs it: the demo as printed, every command of the
//! README, and the messages of bad configurations.

mod binary;
mod config;
mod demo;
mod host_config;
mod hostile_files;
mod idempotency;
mod interop;
mod mcp_errors;
mod metrics;
mod per_caller;
mod readme;
mod reload;
mod search;
mod traces;
mod web;
