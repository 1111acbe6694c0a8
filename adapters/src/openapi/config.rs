//! `OpenApiConfig`: what an operator writes to serve one OpenAPI document, and `Secret`, the one
//! type that holds a credential value.
//!
//! The config only ever names credentials by environment variable (STYLE.md §2.4): the values are
//! read once, when the adapter is built, into [`Secret`]s whose `Debug` prints `<redacted>`, so a
//! config or an adapter can be logged freely.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::AdapterError;

/// The default upper bound on an upstream response body: 10 MiB.
pub const DEFAULT_MAX_RESPONSE_BYTES: u64 = 10 * 1024 * 1024;
/// The default for [`OpenApiConfig::timeout_ms`]: 30 s.
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;
/// The default for [`OpenApiConfig::connect_timeout_ms`]: 10 s.
pub const DEFAULT_CONNECT_TIMEOUT_MS: u64 = 10_000;
/// The default for [`OpenApiConfig::max_redirects`].
pub const DEFAULT_MAX_REDIRECTS: usize = 5;

/// One OpenAPI source: the document, where its operations are served, and how to reach them.
///
/// ```yaml
/// type: openapi
/// spec: ./petstore.yaml            # or https://example.com/openapi.json
/// base_url: https://api.example.com/v1
/// toolkit: PetStore
/// credentials:
///   api_key: { env: PETSTORE_API_KEY }   # keyed by the securitySchemes name
/// headers:
///   X-Client: otc-bridge
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub struct OpenApiConfig {
    /// The document: a file path (relative to the working directory), a `file://` URL, or an
    /// `http(s)://` URL. Swagger 2.0, OpenAPI 3.0 or 3.1, JSON or YAML.
    pub spec: String,
    /// Where the operations are served, overriding the document's `servers`. Needed when the
    /// document has no absolute server URL and was loaded from a file.
    #[serde(default)]
    pub base_url: Option<String>,
    /// The toolkit name (default: the document's `info.title`).
    #[serde(default)]
    pub toolkit: Option<String>,
    /// The tools' version (default: the document's `info.version`, normalised).
    #[serde(default)]
    pub version: Option<String>,
    /// Whether `$ref`s to other hosts (and every `$ref` of a document loaded from a URL) may be
    /// fetched. Off by default: no surprise network access.
    #[serde(default)]
    pub allow_remote_refs: bool,
    /// Directories, besides the document's own directory tree, whose files the document's
    /// `$ref`s may read (relative paths are relative to the working directory). Files elsewhere,
    /// and anything that is not a regular file, are never read.
    #[serde(default)]
    pub ref_dirs: Vec<PathBuf>,
    /// Whether the document's `servers` may point at link-local or cloud-metadata addresses
    /// (169.254.0.0/16, fe80::/10, fd00:ec2::254, `metadata.google.internal`, ...). Off by
    /// default: a document that sends calls there is how a server-side request forgery reads a
    /// cloud instance's credentials, so such operations are skipped with a diagnostic. An explicit
    /// `base_url` is the operator's choice and is never refused.
    #[serde(default)]
    pub allow_link_local_servers: bool,
    /// Upstream responses larger than this fail with `ResponseTooLarge` (default 10 MiB).
    #[serde(default = "default_max_response_bytes")]
    pub max_response_bytes: u64,
    /// The whole upstream exchange, from connecting to the last body byte, in milliseconds
    /// (default 30 000). Also bounds fetching the document. The bridge's own per-call timeout
    /// still applies on top.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
    /// Connecting to the upstream, in milliseconds (default 10 000).
    #[serde(default = "default_connect_timeout_ms")]
    pub connect_timeout_ms: u64,
    /// Redirects followed per call (default 5); only redirects to the upstream's own origin are
    /// ever followed.
    #[serde(default = "default_max_redirects")]
    pub max_redirects: usize,
    /// Credentials the bridge supplies itself, keyed by the document's `securitySchemes` name.
    /// Operations secured by such a scheme no longer ask callers for it.
    #[serde(default)]
    pub credentials: BTreeMap<String, CredentialConfig>,
    /// Static headers added to every upstream request (not for secrets: use `credentials`).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// A PEM file of extra root certificates to trust (an internal CA), on top of the system's.
    #[serde(default)]
    pub ca_cert_file: Option<PathBuf>,
}

impl OpenApiConfig {
    /// A config for `spec` with every other setting at its default.
    pub fn new(spec: impl Into<String>) -> Self {
        Self {
            spec: spec.into(),
            base_url: None,
            toolkit: None,
            version: None,
            allow_remote_refs: false,
            ref_dirs: Vec::new(),
            allow_link_local_servers: false,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            timeout_ms: DEFAULT_TIMEOUT_MS,
            connect_timeout_ms: DEFAULT_CONNECT_TIMEOUT_MS,
            max_redirects: DEFAULT_MAX_REDIRECTS,
            credentials: BTreeMap::new(),
            headers: BTreeMap::new(),
            ca_cert_file: None,
        }
    }
}

fn default_max_response_bytes() -> u64 {
    DEFAULT_MAX_RESPONSE_BYTES
}

fn default_timeout_ms() -> u64 {
    DEFAULT_TIMEOUT_MS
}

fn default_connect_timeout_ms() -> u64 {
    DEFAULT_CONNECT_TIMEOUT_MS
}

fn default_max_redirects() -> usize {
    DEFAULT_MAX_REDIRECTS
}

/// Where the bridge reads one credential's value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub struct CredentialConfig {
    /// The environment variable that holds the value. For `http basic` schemes the value is
    /// `user:password` (or its base64 form); for the others, the token or key itself.
    pub env: String,
}

impl CredentialConfig {
    /// Reads the value from the environment; a missing or empty variable is a setup error naming
    /// the variable and the scheme, never the value.
    pub(crate) fn read(&self, scheme: &str) -> Result<Secret, AdapterError> {
        match std::env::var(&self.env) {
            Ok(value) if !value.is_empty() => Ok(Secret(value)),
            Ok(_) => Err(AdapterError::setup(format!(
                "credential for security scheme '{scheme}': environment variable {} is empty",
                self.env
            ))),
            Err(_) => Err(AdapterError::setup(format!(
                "credential for security scheme '{scheme}': environment variable {} is not set",
                self.env
            ))),
        }
    }
}

/// A credential value. Its `Debug` hides it; only the request builder reads it.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Secret(String);

impl Secret {
    /// Wraps a value.
    #[cfg(test)]
    pub(crate) fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The value, for placing it on a request.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_fill_everything_but_spec() {
        let config: OpenApiConfig = serde_json::from_str(r#"{"spec": "a.yaml"}"#).unwrap();
        assert_eq!(config, OpenApiConfig::new("a.yaml"));
    }

    #[test]
    fn unknown_keys_are_rejected() {
        let err =
            serde_json::from_str::<OpenApiConfig>(r#"{"spec": "a", "base_uri": "x"}"#).unwrap_err();
        assert!(err.to_string().contains("base_uri"), "{err}");
    }

    #[test]
    fn secret_debug_is_redacted() {
        assert_eq!(format!("{:?}", Secret::new("hunter2")), "<redacted>");
    }
}
