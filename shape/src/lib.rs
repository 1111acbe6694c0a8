//! Shaping of served tools and their results (DESIGN.md §15), pure: no I/O, no async.
//!
//! - [`transform`]: tool transforms (name, description, arguments hidden, renamed, narrowed), and
//!   the map of each call back to the upstream's arguments.
//! - [`project`]: results projected with a jq program (jaq), bounded in time and size.
//! - [`budget`]: a result cut to a byte budget, still valid JSON and saying what it left out, and
//!   the full text read in pages.
//!
//! The bridge owns configuration, environments and callers; this crate only computes, so each
//! part is tested on values alone.
#![warn(missing_docs)]

pub mod budget;
pub mod project;
pub mod transform;
