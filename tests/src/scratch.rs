//! Fresh directories for a test's files.
//!
//! Each is created new under the temporary directory with a random suffix (`tempfile`), never
//! named after the process id alone: nextest runs every test in its own process, and a pid the
//! system hands out again would give a later test an earlier one's leftovers (a lockfile it
//! overwrote with garbage, an audit trail it appended to). The directories are kept after the
//! test, for a look at what it wrote.

use std::path::PathBuf;

/// A new, empty directory whose name starts with `otc-{prefix}-`.
pub fn dir(prefix: &str) -> PathBuf {
    tempfile::Builder::new()
        .prefix(&format!("otc-{prefix}-"))
        .tempdir()
        .expect("a directory can be created under the temporary directory")
        .keep()
}

/// A path named `name` in a new, empty directory (see [`dir`]); the file does not exist yet.
pub fn file(prefix: &str, name: &str) -> PathBuf {
    dir(prefix).join(name)
}
