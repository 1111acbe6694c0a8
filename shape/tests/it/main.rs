//! Integration tests of otc-shape: one binary (STYLE.md §2.7).

// Test helpers outside `#[test]` functions are not covered by `allow-unwrap-in-tests`.
#![allow(clippy::unwrap_used)]

mod budget;
mod project;
mod transform;
