//! Configuration: the YAML file (`--config`) and the flags, combined into one validated
//! [`Settings`] (STYLE.md §2.4: closed structs, `deny_unknown_fields`, errors that name the key
//! and line; secrets referenced by environment variable name, never written in the file).
//!
//! Flags win over the file for scalar settings; sources from flags are added after the file's.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use otc_mappings::otc::Dialect;
use serde::Deserialize;

use crate::server::{Authenticator, ServerSettings};

/// Everything the config file can say.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FileConfig {
    /// Address to listen on, e.g. `127.0.0.1:8080`.
    pub listen: Option<SocketAddr>,
    /// Default dialect: `otc` or `oxp`.
    pub dialect: Option<DialectName>,
    /// Log filter, e.g. `info` or `otc_bridge=debug`.
    pub log_level: Option<String>,
    /// Serve the sources that started even when others failed (default: refuse to start
    /// half-configured).
    pub allow_partial: bool,
    /// Server authentication.
    pub auth: AuthConfig,
    /// Limits.
    pub limits: LimitsConfig,
    /// The sources to serve; see `sources.rs` for the keys of each entry.
    pub sources: Vec<serde_yaml::Value>,
}

/// The dialect names accepted in flags and files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum DialectName {
    /// OTC 1.0 (`otc://1.0`, list key `tools`).
    Otc,
    /// OXP 1.0 (`urn:oxp:1.0`, list key `items`) — what the `oxp` Python SDK speaks.
    Oxp,
}

impl From<DialectName> for Dialect {
    fn from(name: DialectName) -> Self {
        match name {
            DialectName::Otc => Self::Otc,
            DialectName::Oxp => Self::OxpMain,
        }
    }
}

/// `auth:` — off unless one of its methods is configured.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AuthConfig {
    /// HS256 JWT bearer tokens.
    pub jwt: Option<JwtConfig>,
    /// API keys.
    pub api_keys: Option<ApiKeysConfig>,
}

/// `auth.jwt:`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JwtConfig {
    /// The environment variable holding the shared HS256 secret.
    pub secret_env: String,
    /// Accepted `aud` values; when set, tokens must carry one of them.
    #[serde(default)]
    pub audience: Vec<String>,
}

/// `auth.api_keys:` — keys from an environment variable (comma or newline separated) and/or a
/// file (one per line).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ApiKeysConfig {
    /// The environment variable holding the keys.
    pub env: Option<String>,
    /// A file holding the keys.
    pub file: Option<PathBuf>,
}

/// `limits:`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsConfig {
    /// Largest request body, in bytes (default 1 MiB).
    pub max_body_bytes: usize,
    /// Per-call timeout, in seconds (default 60).
    pub call_timeout_secs: u64,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        Self {
            max_body_bytes: 1024 * 1024,
            call_timeout_secs: 60,
        }
    }
}

/// A configuration problem, naming what to fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file cannot be read.
    #[error("cannot read config file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not valid YAML of the expected shape.
    #[error("config file {path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message, with key path, line and column.
        message: String,
    },
    /// A value is wrong.
    #[error("{0}")]
    Invalid(String),
}

/// Parses YAML text. The one place that knows which YAML crate is used (DESIGN.md §7).
pub fn parse_yaml<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, String> {
    serde_yaml::from_str(text).map_err(|e| e.to_string())
}

impl FileConfig {
    /// Reads and parses a config file.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        if text.trim().is_empty() {
            return Ok(Self::default());
        }
        parse_yaml(&text).map_err(|message| ConfigError::Parse {
            path: path.to_owned(),
            message,
        })
    }
}

/// Reads an environment variable that must be set and non-empty.
pub fn required_env(name: &str, what: &str) -> Result<String, ConfigError> {
    match std::env::var(name) {
        Ok(v) if !v.trim().is_empty() => Ok(v),
        _ => Err(ConfigError::Invalid(format!(
            "{what}: environment variable {name} is not set (or empty)"
        ))),
    }
}

impl AuthConfig {
    /// Builds the authenticator; `None` when no method is configured.
    pub fn build(&self) -> Result<Option<Authenticator>, ConfigError> {
        if self.jwt.is_none() && self.api_keys.is_none() {
            return Ok(None);
        }
        let secret = match &self.jwt {
            Some(jwt) => Some(required_env(&jwt.secret_env, "auth.jwt.secret_env")?),
            None => None,
        };
        let mut keys = Vec::new();
        if let Some(api) = &self.api_keys {
            if let Some(var) = &api.env {
                keys.extend(split_keys(&required_env(var, "auth.api_keys.env")?));
            }
            if let Some(file) = &api.file {
                let text = std::fs::read_to_string(file).map_err(|source| ConfigError::Read {
                    path: file.clone(),
                    source,
                })?;
                keys.extend(split_keys(&text));
            }
            if keys.is_empty() {
                return Err(ConfigError::Invalid(
                    "auth.api_keys: no keys found (set env or file)".to_owned(),
                ));
            }
        }
        let audience = self
            .jwt
            .as_ref()
            .map(|j| j.audience.clone())
            .unwrap_or_default();
        Ok(Some(Authenticator::new(
            secret.as_deref().map(str::as_bytes),
            &audience,
            keys,
        )))
    }
}

fn split_keys(text: &str) -> Vec<String> {
    text.split([',', '\n'])
        .map(str::trim)
        .filter(|k| !k.is_empty() && !k.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

impl LimitsConfig {
    /// The server settings these limits give, in `dialect`.
    pub fn server_settings(&self, dialect: Dialect) -> Result<ServerSettings, ConfigError> {
        if self.max_body_bytes == 0 {
            return Err(ConfigError::Invalid(
                "limits.max_body_bytes must be greater than 0".to_owned(),
            ));
        }
        if self.call_timeout_secs == 0 {
            return Err(ConfigError::Invalid(
                "limits.call_timeout_secs must be greater than 0".to_owned(),
            ));
        }
        Ok(ServerSettings {
            default_dialect: dialect,
            max_body_bytes: self.max_body_bytes,
            call_timeout: Duration::from_secs(self.call_timeout_secs),
            ..ServerSettings::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_are_named_with_their_line() {
        let err =
            parse_yaml::<FileConfig>("listen: 127.0.0.1:1\nlimits:\n  max_body: 3\n").unwrap_err();
        assert!(err.contains("max_body") && err.contains("line 3"), "{err}");
        let err = parse_yaml::<FileConfig>("limits:\n  call_timeout_secs: soon\n").unwrap_err();
        assert!(
            err.contains("call_timeout_secs") || err.contains("line 2"),
            "{err}"
        );
    }

    #[test]
    fn a_full_file_parses() {
        let c: FileConfig = parse_yaml(
            "listen: 0.0.0.0:9000\ndialect: oxp\nlog_level: debug\nallow_partial: true\nauth:\n  jwt:\n    secret_env: S\n    audience: [a]\n  api_keys:\n    env: K\nlimits:\n  max_body_bytes: 10\n  call_timeout_secs: 2\n",
        )
        .unwrap();
        assert_eq!(c.dialect, Some(DialectName::Oxp));
        assert_eq!(c.limits.max_body_bytes, 10);
    }
}
