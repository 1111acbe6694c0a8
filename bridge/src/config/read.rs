//! Reading configuration text: the one error type of configuration, and the one place that
//! knows which YAML crate writes it (DESIGN.md §7). Below the file, its sources and host files,
//! which all use it.
//!
//! Reading is bounded like every file and text the bridge reads (issue 25): the file by
//! [`otc_adapters::file`] (a regular file, at most [`MAX_CONFIG_BYTES`]), its text by
//! [`otc_mappings::text`] (nesting depth, YAML alias expansion).

use std::path::{Path, PathBuf};

use otc_adapters::file::{FileError, MAX_CONFIG_BYTES};
use otc_mappings::text::TextError;

/// A configuration problem, naming what to fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file cannot be read.
    #[error("cannot read config file {path}: {reason}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why: said in the message, so not also a `source` (an error chain printed it twice).
        reason: FileError,
    },
    /// The file is not valid YAML of the expected shape.
    #[error("config file {path}: {reason}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// Why, with key path, line and column: said in the message, so not also a `source`.
        reason: TextError,
    },
    /// The file is an MCP host's, and cannot be imported.
    #[error("config file {path}: {reason}")]
    HostFile {
        /// The file.
        path: PathBuf,
        /// Why, naming the server and field: said in the message, so not also a `source`.
        reason: crate::config::host_import::error::ImportError,
    },
    /// A value is wrong.
    #[error("{0}")]
    Invalid(String),
    /// A source's options cannot work.
    #[error(transparent)]
    Policy(#[from] crate::catalog::policy::PolicyError),
}

/// Reads a configuration file, or a file it names (API keys), as text.
pub(crate) fn read_config_file(path: &Path) -> Result<String, ConfigError> {
    otc_adapters::file::read_text(path, MAX_CONFIG_BYTES).map_err(|reason| ConfigError::Read {
        path: path.to_owned(),
        reason,
    })
}

/// Parses YAML text, bounded ([`otc_mappings::text::parse_yaml`]); the message names the key
/// path, line and column.
pub(crate) fn parse_yaml<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, TextError> {
    otc_mappings::text::parse_yaml(text)
}

/// Writes YAML text (`otc-bridge import`); the other half of [`parse_yaml`].
pub(crate) fn write_yaml<T: serde::Serialize>(value: &T) -> Result<String, serde_yaml::Error> {
    serde_yaml::to_string(value)
}

/// Reads an environment variable that must be set and non-empty.
pub(crate) fn required_env(name: &str, what: &str) -> Result<String, ConfigError> {
    match std::env::var(name) {
        Ok(v) if !v.trim().is_empty() => Ok(v),
        _ => Err(ConfigError::Invalid(format!(
            "{what}: environment variable {name} is not set (or empty)"
        ))),
    }
}
