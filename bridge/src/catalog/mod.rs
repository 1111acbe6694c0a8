//! The catalog: every tool the bridge serves, how it is resolved, and what a call to it must
//! satisfy before anything is sent upstream.
//!
//! - [`registry`]: the tools of every source, indexed by id and version, swapped atomically on
//!   refresh;
//! - [`policy`]: each source's compiled options (timeouts, retries, concurrency, `on_change`);
//! - [`lock`]: lockfile pins and drift, with each change's class;
//! - [`validate`]: a call's input against the tool's schema;
//! - [`requirements`]: a call's `context` against the tool's `requirements`;
//! - [`semantic`]: the search model and the tools' vectors, embedded in the background;
//! - [`shaping`]: what a transformed tool or a projection of results needs on each call.
//!
//! Below the edges and the call pipeline; it imports adapters, mappings and the search index,
//! never the server or the configuration.

pub(crate) mod lock;
pub(crate) mod policy;
pub(crate) mod registry;
pub(crate) mod requirements;
pub(crate) mod semantic;
pub(crate) mod shaping;
pub(crate) mod validate;
