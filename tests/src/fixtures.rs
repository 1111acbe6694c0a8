//! Locating optional inputs: the official spec files (`OTC_SPEC_DIR`) and the installed corpus
//! (`OTC_CORPUS_DIR`). `.ci/run` sets both and checks they exist; a plain `cargo test` on a
//! fresh clone runs without them and says what it skipped.

use std::path::PathBuf;

/// The directory of the official spec files, when `OTC_SPEC_DIR` names one.
pub fn spec_dir() -> Option<PathBuf> {
    dir_from_env("OTC_SPEC_DIR")
}

/// The directory the corpus script installed into, when `OTC_CORPUS_DIR` names one.
pub fn corpus_dir() -> Option<PathBuf> {
    dir_from_env("OTC_CORPUS_DIR")
}

/// Reads a directory from an environment variable. Under CI (`CI` set) a missing directory is a
/// failure, so nothing is skipped silently there.
fn dir_from_env(var: &str) -> Option<PathBuf> {
    match std::env::var_os(var) {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            assert!(dir.is_dir(), "{var}={} is not a directory", dir.display());
            Some(dir)
        }
        None => {
            assert!(
                std::env::var_os("CI").is_none(),
                "{var} must be set under CI (see .ci/run)"
            );
            eprintln!(
                "note: {var} is not set; tests that need it are skipped (run scripts/test.sh to run everything)"
            );
            None
        }
    }
}
