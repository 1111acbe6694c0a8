//! Integration tests of otc-mappings: one binary (STYLE.md §2.7).

// Test helpers outside `#[test]` functions are not covered by `allow-unwrap-in-tests`.
#![allow(clippy::unwrap_used)]

/// The corpus run translates 2,639 documents and compiles every schema it produces: with glibc's
/// malloc, allocation was 40 % of it (the bridge itself runs on jemalloc), and mimalloc halves
/// the release run (166 s to 89 s on two cores) for seconds of compiling one C file.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod bombs;
mod change;
mod checks;
mod corpus;
mod openapi;
mod properties;
