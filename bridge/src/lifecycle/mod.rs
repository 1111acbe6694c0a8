//! A running bridge over time: [`start`] starts the sources, builds the first catalog and keeps
//! it fresh (list changes, restarts), and waits for the shutdown signal; [`reload`] applies a
//! changed configuration file (SIGHUP, `--watch`) as a difference, leaving unchanged sources
//! untouched.

pub(crate) mod reload;
pub(crate) mod start;
