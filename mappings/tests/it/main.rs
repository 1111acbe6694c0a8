//! Integration tests of otc-mappings: one binary (STYLE.md §2.7).

mod checks;
mod corpus;
mod openapi;
