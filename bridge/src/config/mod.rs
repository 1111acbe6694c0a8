//! Configuration: the YAML file (`--config`) and the flags, merged in one typed step,
//! [`Config::resolve`], into the [`Config`] the binary runs (STYLE.md §2.4: closed structs,
//! `deny_unknown_fields`, errors that name the key and line; secrets referenced by environment
//! variable name, never written in the file).
//!
//! Flags win over the file for scalar settings; sources from flags are added after the file's.
//! The flags reach this module as [`Overrides`], a plain struct the binary fills from its clap
//! types, so the library does not depend on the command line's shape. Resolution reads no
//! environment variable: it only records, in [`Config::secret_env`], which ones hold secrets.
//! The values are read when the authenticator and the adapters are built.

pub mod host_import;
mod read;
pub(crate) mod sources;

pub(crate) use read::{ConfigError, parse_yaml, read_config_file, required_env};

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use otc_mappings::otc::Dialect;
use serde::Deserialize;

use crate::catalog::lock::{Lockfile, OnChange};
use crate::server::listen::ConnectionLimits;
use crate::server::mcp::Expose;
use crate::server::{Authenticator, ServerSettings};
use otc_adapters::mcp::Challenges;
use sources::{Source, SourceFlag};

/// The listen address when neither the file nor a flag gives one.
pub(crate) const DEFAULT_LISTEN: SocketAddr = SocketAddr::V4(std::net::SocketAddrV4::new(
    std::net::Ipv4Addr::LOCALHOST,
    8080,
));

/// The log filter when neither the file nor a flag gives one.
pub(crate) const DEFAULT_LOG_FILTER: &str = "info,rmcp=warn";

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
    /// Web origins allowed to call the bridge from a browser, e.g. `https://app.example.com`
    /// (CORS); other cross-site requests are refused.
    pub allow_origins: Vec<String>,
    /// Further `Host` names accepted while listening on loopback (a reverse proxy's name).
    pub allow_hosts: Vec<String>,
    /// The URL people and clients reach the bridge at, when it is not `http://<listen>` (a
    /// reverse proxy): where sign-ins for per-caller sources return and challenges are checked.
    pub public_url: Option<String>,
    /// Server authentication.
    pub auth: AuthConfig,
    /// Limits.
    pub limits: LimitsConfig,
    /// Connection-level limits: header/body/idle/shutdown deadlines and the connection cap.
    pub connections: ConnectionLimits,
    /// The MCP edge (`POST /mcp`, `otc-bridge mcp`).
    pub mcp: McpConfig,
    /// Tool search: the sentence-embedding model of semantic search.
    pub search: crate::catalog::semantic::SearchConfig,
    /// `GET /metrics`.
    pub metrics: MetricsConfig,
    /// The catalog page (`GET /`, `/ui/…`); default on, `false` turns it off.
    pub ui: Option<bool>,
    /// Where the state shared across calls lives (the `call_id` idempotency store): `memory`
    /// (default) or `redis://host:port/db` for replicas behind a load balancer.
    pub state: Option<String>,
    /// How repeated `call_id`s are answered.
    pub idempotency: crate::idempotency::IdempotencyConfig,
    /// The bounds of the cache of read-only calls (what each source keeps is its `cache:`).
    pub cache: crate::result_cache::CacheStoreConfig,
    /// A lockfile (`otc-bridge lock`): serve each tool id as it was locked.
    pub lock: Option<PathBuf>,
    /// What a tool that changed since it was locked does: `bump` (default), `warn`, `refuse`;
    /// a source's own `on_change` wins.
    pub on_change: Option<OnChange>,
    /// Rate limits and concurrency caps per caller, group, tool or rule (`rate_limits:`).
    pub rate_limits: crate::access::RateLimitsConfig,
    /// The audit trail: one hash-chained line per decided call (`audit:`); off by default.
    pub audit: Option<crate::telemetry::audit::AuditConfig>,
    /// Who may see and call what (DESIGN.md §14): ordered rules, the first that matches
    /// decides; none: every caller sees and calls every tool.
    pub policies: Vec<crate::access::PolicyConfig>,
    /// The sources to serve; see `sources.rs` for the keys of each entry.
    pub sources: Vec<serde_yaml::Value>,
    /// What reading the file ignored, to be logged once at start-up (an MCP host's file read by
    /// [`crate::config::host_import`]: its unknown fields and disabled servers). Never read from YAML.
    #[serde(skip)]
    pub warnings: Vec<String>,
}

/// `mcp:`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct McpConfig {
    /// What MCP hosts are shown: `meta` (three meta-tools, the default) or `all`.
    pub expose: Option<Expose>,
    /// Who `otc-bridge mcp` (stdio, where no credential is sent) calls as, for policies and
    /// logs (default: `anonymous`).
    pub caller: Option<StdioCaller>,
    /// The byte budget of a call's result for MCP hosts (`POST /mcp` and `otc-bridge mcp`): a
    /// result over it is cut and kept for `read_result`. Off by default; 65536 suits most hosts.
    pub max_result_bytes: Option<usize>,
}

/// `mcp.caller:` — the identity of the MCP host on stdio.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StdioCaller {
    /// The caller's name.
    pub name: String,
    /// Its groups.
    #[serde(default)]
    pub groups: Vec<String>,
}

/// `metrics:` — `GET /metrics` in the Prometheus text format, on by default.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MetricsConfig {
    /// Serve `/metrics` at all.
    pub enabled: bool,
    /// Serve it without server authentication (for a scraper on a private network).
    pub public: bool,
    /// Label calls with their tool id (turn off for catalogs of thousands of tools).
    pub tool_label: bool,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            public: false,
            tool_label: true,
        }
    }
}

/// The dialect names accepted in flags and files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
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

/// What the command line says, in plain types: each `Some` (or `true`, or non-empty list) wins
/// over the file.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `--listen`.
    pub listen: Option<SocketAddr>,
    /// `--dialect`.
    pub dialect: Option<DialectName>,
    /// `--log-level`.
    pub log_filter: Option<String>,
    /// `--jwt-secret-env`: replaces the file's `auth.jwt`.
    pub jwt_secret_env: Option<String>,
    /// `--jwt-audience` (repeatable); needs `jwt_secret_env`.
    pub jwt_audience: Vec<String>,
    /// `--api-keys-env`: with `api_keys_file`, replaces the file's `auth.api_keys`.
    pub api_keys_env: Option<String>,
    /// `--api-keys-file`.
    pub api_keys_file: Option<PathBuf>,
    /// `--max-body-bytes`.
    pub max_body_bytes: Option<usize>,
    /// `--call-timeout-secs`.
    pub call_timeout_secs: Option<u64>,
    /// `--allow-partial` (a flag can only turn it on).
    pub allow_partial: bool,
    /// `--allow-origin`, added to the file's `allow_origins`.
    pub allow_origins: Vec<String>,
    /// `--allow-host`, added to the file's `allow_hosts`.
    pub allow_hosts: Vec<String>,
    /// `--mcp-expose`.
    pub mcp_expose: Option<Expose>,
    /// `--search-model`.
    pub search_model: Option<PathBuf>,
    /// `--public-url`.
    pub public_url: Option<String>,
    /// `--lock`.
    pub lock: Option<PathBuf>,
    /// `--on-change`.
    pub on_change: Option<OnChange>,
    /// `--openapi`, `--mcp`, `--mcp-url`, `--mcp-sse` with their modifiers, in command-line
    /// order; served after the file's sources.
    pub sources: Vec<SourceFlag>,
}

/// The resolved configuration: file and flags merged and validated.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where to listen.
    pub listen: SocketAddr,
    /// The default dialect (also in `settings.default_dialect`).
    pub dialect: Dialect,
    /// The log filter.
    pub log_filter: String,
    /// Serve the sources that started even when others failed.
    pub allow_partial: bool,
    /// Connection-level limits of the listener.
    pub connections: ConnectionLimits,
    /// Server authentication, merged; `AuthConfig::build` reads its secrets.
    pub auth: AuthConfig,
    /// The server's settings.
    pub settings: ServerSettings,
    /// The sources, the file's first, each with its compiled policy; names unique.
    pub sources: Vec<Source>,
    /// The lockfile, when one is used (its tools are already pinned on the sources).
    pub lock: Option<PathBuf>,
    /// What a change does where a source does not say.
    pub on_change: OnChange,
    /// `public_url`, checked: where the bridge is reached from outside, when not at `listen`.
    pub public_url: Option<String>,
    /// `state`: the idempotency store (`None`: memory).
    pub state: Option<String>,
    /// `idempotency`.
    pub idempotency: crate::idempotency::IdempotencyConfig,
    /// `cache`: the bounds of the cache of read-only calls.
    pub cache: crate::result_cache::CacheStoreConfig,
    /// `search`, with `--search-model` applied.
    pub search: crate::catalog::semantic::SearchConfig,
    /// The names of every environment variable the configuration reads a secret from
    /// (`auth.jwt.secret_env`, `auth.api_keys.env`, OpenAPI credentials, MCP header values
    /// `{env: VAR}`), so they can be kept away from child processes and out of answers.
    pub secret_env: BTreeSet<String>,
    /// What reading the config file ignored ([`FileConfig::warnings`]); the commands log them.
    pub warnings: Vec<String>,
    /// Who `otc-bridge mcp` calls as (`mcp.caller`, else anonymous).
    pub stdio_caller: crate::access::Caller,
    /// `audit`.
    pub audit: Option<crate::telemetry::audit::AuditConfig>,
    /// `rate_limits` (compiled in memory in `settings.limits`; [`Config::shared_limits`] moves
    /// their counters to Redis when `state` names one).
    pub rate_limits: crate::access::RateLimitsConfig,
    /// The groups a rule may name (`None`: any, since JWTs may carry any group).
    pub known_groups: Option<Vec<String>>,
}

impl Config {
    /// Merges the file and the flags into one validated configuration. Errors name the key
    /// (`limits.max_body_bytes`, `sources[2].include`) or the flag.
    pub fn resolve(file: FileConfig, overrides: Overrides) -> Result<Self, ConfigError> {
        let FileConfig {
            listen,
            dialect,
            log_level,
            allow_partial,
            mut allow_origins,
            mut allow_hosts,
            public_url,
            mut auth,
            mut limits,
            connections,
            mcp,
            mut search,
            metrics,
            ui,
            state,
            idempotency,
            cache,
            lock,
            on_change,
            rate_limits,
            audit,
            policies,
            sources: entries,
            warnings,
        } = file;
        if let Some(secret_env) = overrides.jwt_secret_env {
            auth.jwt = Some(JwtConfig {
                secret_env: Some(secret_env),
                public_key_file: None,
                audience: overrides.jwt_audience,
                issuers: Vec::new(),
                group_claims: None,
            });
        } else if !overrides.jwt_audience.is_empty() {
            return Err(ConfigError::Invalid(
                "--jwt-audience needs --jwt-secret-env".to_owned(),
            ));
        }
        if overrides.api_keys_env.is_some() || overrides.api_keys_file.is_some() {
            auth.api_keys = Some(ApiKeysConfig::One(ApiKeyEntry {
                env: overrides.api_keys_env,
                file: overrides.api_keys_file,
                ..ApiKeyEntry::default()
            }));
        }
        if let Some(bytes) = overrides.max_body_bytes {
            limits.max_body_bytes = bytes;
        }
        if let Some(secs) = overrides.call_timeout_secs {
            limits.call_timeout_secs = secs;
        }
        let dialect: Dialect = overrides
            .dialect
            .or(dialect)
            .map_or(Dialect::Otc, Into::into);
        let mut settings = limits.server_settings(dialect)?;
        allow_origins.extend(overrides.allow_origins);
        allow_hosts.extend(overrides.allow_hosts);
        settings.allowed_origins = allow_origins;
        settings.allowed_hosts = allow_hosts;
        settings.mcp_expose = overrides.mcp_expose.or(mcp.expose).unwrap_or_default();
        if let Some(bytes) = mcp.max_result_bytes
            && bytes < otc_shape::budget::MIN_BUDGET
        {
            return Err(ConfigError::Invalid(format!(
                "mcp.max_result_bytes: {bytes} is too small to say anything; at least {}",
                otc_shape::budget::MIN_BUDGET
            )));
        }
        settings.mcp_max_result_bytes = mcp.max_result_bytes;
        settings.telemetry.metrics = metrics.enabled.then(|| {
            std::sync::Arc::new(crate::telemetry::metrics::Metrics::new(metrics.tool_label))
        });
        settings.metrics_public = metrics.public;
        settings.ui = ui.unwrap_or(true);
        if let Some(model) = overrides.search_model {
            search.model = Some(model);
        }
        let public_url = overrides.public_url.or(public_url);
        if let Some(url) = &public_url {
            let parsed = url::Url::parse(url).ok();
            if !parsed.is_some_and(|u| matches!(u.scheme(), "http" | "https") && u.has_host()) {
                return Err(ConfigError::Invalid(format!(
                    "public_url: `{url}` is not an http(s) URL"
                )));
            }
        }
        let mut sources = sources::collect(&entries, &overrides.sources)?;
        if auth.api_keys.is_some() {
            refuse_api_key_headers(&sources)?;
        }
        let lock = overrides.lock.or(lock);
        let on_change = overrides.on_change.or(on_change).unwrap_or_default();
        if let Some(path) = &lock {
            let locked = Lockfile::load(path).map_err(|e| {
                ConfigError::Invalid(format!("lock: {e} (write one with `otc-bridge lock`)"))
            })?;
            let locked = Arc::new(locked);
            for source in &mut sources {
                source.pin(&locked, on_change);
            }
        }
        let stdio_caller = mcp
            .caller
            .map_or_else(crate::access::Caller::anonymous, |c| {
                crate::access::Caller::named(c.name).with_groups(c.groups)
            });
        // The groups a rule may name: those some caller can be in.
        let known_groups = auth.known_groups().map(|mut groups| {
            groups.extend(stdio_caller.groups.iter().cloned());
            groups
        });
        settings.policies = Arc::new(
            crate::access::Policies::compile(&policies, known_groups.as_deref())
                .map_err(|e| ConfigError::Invalid(e.to_string()))?,
        );
        settings.limits = Arc::new(
            crate::access::Limits::compile(&rate_limits, known_groups.as_deref(), None)
                .map_err(|e| ConfigError::Invalid(e.to_string()))?,
        );
        let secret_env = auth
            .secret_env()
            .chain(audit.iter().filter_map(|a| a.key_env.clone()))
            .chain(sources.iter().flat_map(Source::secret_env))
            .collect();
        Ok(Self {
            listen: overrides.listen.or(listen).unwrap_or(DEFAULT_LISTEN),
            dialect,
            log_filter: overrides
                .log_filter
                .or(log_level)
                .unwrap_or_else(|| DEFAULT_LOG_FILTER.to_owned()),
            allow_partial: overrides.allow_partial || allow_partial,
            connections,
            auth,
            settings,
            sources,
            lock,
            on_change,
            public_url,
            state,
            idempotency,
            cache,
            search,
            secret_env,
            warnings,
            stdio_caller,
            audit,
            rate_limits,
            known_groups,
        })
    }
}

impl Config {
    /// The rate limits with their counters in the Redis `state` names, shared by every replica;
    /// `None` when they stay in memory (no Redis, or no rate to count).
    pub async fn shared_limits(
        &self,
    ) -> Result<Option<Arc<crate::access::Limits>>, crate::idempotency::StoreError> {
        let Some(url) = self.state.as_deref().filter(|s| s.starts_with("redis")) else {
            return Ok(None);
        };
        if !self.rate_limits.rules.iter().any(|r| r.rate.is_some()) {
            return Ok(None);
        }
        let redis = crate::idempotency::connect_redis(url).await?;
        let limits = crate::access::Limits::compile(
            &self.rate_limits,
            self.known_groups.as_deref(),
            Some(redis),
        );
        // The same configuration compiled in `resolve`: it cannot fail now.
        Ok(limits.ok().map(Arc::new))
    }

    /// The groups the configuration gives the caller `name`: its named API key's, and
    /// `mcp.caller`'s when that is its name.
    pub fn caller_groups(&self, name: &str) -> Vec<String> {
        let keys = self
            .auth
            .api_keys
            .iter()
            .flat_map(ApiKeysConfig::entries)
            .filter(|e| e.name.as_deref() == Some(name))
            .flat_map(|e| e.groups.iter().cloned());
        let stdio = (self.stdio_caller.name == name)
            .then(|| self.stdio_caller.groups.iter().cloned())
            .into_iter()
            .flatten();
        keys.chain(stdio).collect()
    }

    /// The groups a JWT carrying `claims` gives its caller (the configured `group_claims`).
    pub fn groups_in_claims(
        &self,
        claims: &serde_json::Map<String, serde_json::Value>,
    ) -> Vec<String> {
        let configured = self.auth.jwt.as_ref().and_then(|j| j.group_claims.clone());
        let group_claims = configured.unwrap_or_else(|| {
            crate::access::DEFAULT_GROUP_CLAIMS
                .map(str::to_owned)
                .to_vec()
        });
        crate::access::groups_in_claims(claims, &group_claims)
    }

    /// What adapters are told when they are built: the variables holding the bridge's secrets,
    /// which no MCP child may inherit, and an empty HTTP stack for the OpenAPI sources to share
    /// (the server keeps this context, so sources a reload adds share it too).
    pub fn build_context(&self) -> otc_adapters::BuildContext {
        otc_adapters::BuildContext {
            secret_env: self.secret_env.clone(),
            challenges: Some(Challenges::new(&public_url(
                self.public_url.as_deref(),
                self.listen,
            ))),
            http: otc_adapters::openapi::HttpClients::default(),
        }
    }
}

/// Where a bridge bound to `bound` is reached: `configured` (`public_url`), else
/// `http://<bound>`, an unspecified address read as loopback (what a local browser reaches).
pub fn public_url(configured: Option<&str>, bound: SocketAddr) -> String {
    if let Some(url) = configured {
        return url.trim_end_matches('/').to_owned();
    }
    let mut bound = bound;
    if bound.ip().is_unspecified() {
        bound.set_ip(match bound {
            SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
            SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
        });
    }
    format!("http://{bound}")
}

/// While the bridge takes API keys, the headers that carry them are the bridge's own: a source
/// that named one in `context_headers` would hand the caller's key to the bridge to its upstream.
/// (`Authorization` and `Cookie` are refused for every source, in `SourceOptions::compile`.)
fn refuse_api_key_headers(sources: &[Source]) -> Result<(), ConfigError> {
    for source in sources {
        for (id, header) in &source.policy().context_headers {
            if crate::server::auth::API_KEY_HEADERS.contains(&header.as_str()) {
                return Err(ConfigError::Invalid(format!(
                    "source `{}`: context_headers.{id}: '{header}' carries the bridge's own API key (auth.api_keys is configured) and is never forwarded; use a header of its own (e.g. X-{id})",
                    source.name
                )));
            }
        }
    }
    Ok(())
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

/// `auth.jwt:` — bearer tokens signed with a shared HS256 secret or verified with a public key.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JwtConfig {
    /// The environment variable holding the shared HS256 secret.
    #[serde(default)]
    pub secret_env: Option<String>,
    /// A PEM file holding the RSA or EC public key tokens are signed for (RS256…, ES256…),
    /// instead of `secret_env`.
    #[serde(default)]
    pub public_key_file: Option<PathBuf>,
    /// Accepted `aud` values; when set, tokens must carry one of them.
    #[serde(default)]
    pub audience: Vec<String>,
    /// Accepted `iss` values; when set, tokens must carry one of them.
    #[serde(default)]
    pub issuers: Vec<String>,
    /// The claims whose values (an array, or space-separated words) are the caller's groups
    /// (default: `groups` and `roles`).
    #[serde(default)]
    pub group_claims: Option<Vec<String>>,
}

/// `auth.api_keys:` — either keys from an environment variable (comma or newline separated)
/// and/or a file (one per line), each its own unnamed caller; or a list of entries, each a named
/// key (`{name: ci-bot, key: {env: CI_BOT_KEY}, groups: [ci]}`) or such a variable or file.
#[derive(Debug, Clone, Deserialize)]
#[serde(
    untagged,
    expecting = "a map with `env` and/or `file`, or a list of keys (`{name, key: {env | file}, groups}` or `{env | file}`)"
)]
pub enum ApiKeysConfig {
    /// A list of entries.
    List(Vec<ApiKeyEntry>),
    /// One entry (the form before named keys).
    One(ApiKeyEntry),
}

/// One entry of `auth.api_keys:`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ApiKeyEntry {
    /// The caller's name (with `key`).
    pub name: Option<String>,
    /// Where the named key is (with `name`).
    pub key: Option<SecretRef>,
    /// The caller's groups (with `name`).
    pub groups: Vec<String>,
    /// An environment variable holding unnamed keys.
    pub env: Option<String>,
    /// A file holding unnamed keys, one per line.
    pub file: Option<PathBuf>,
}

/// Where one secret is: an environment variable or a file (its whole text, trimmed).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SecretRef {
    /// The environment variable.
    pub env: Option<String>,
    /// The file.
    pub file: Option<PathBuf>,
}

impl ApiKeysConfig {
    /// The entries, in order.
    pub fn entries(&self) -> &[ApiKeyEntry] {
        match self {
            Self::List(entries) => entries,
            Self::One(entry) => std::slice::from_ref(entry),
        }
    }
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

impl FileConfig {
    /// Reads and parses a config file: the native YAML, or an MCP host's `mcpServers` /
    /// `servers` JSON, whose servers become the sources ([`crate::config::host_import`]).
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = read_config_file(path)?;
        if text.trim().is_empty() {
            return Ok(Self::default());
        }
        let host_file = |reason| ConfigError::HostFile {
            path: path.to_owned(),
            reason,
        };
        if let Some(imported) = crate::config::host_import::read(&text, path).map_err(host_file)? {
            let mut file = Self::from(imported);
            for warning in &mut file.warnings {
                *warning = format!("{}: {warning}", path.display());
            }
            return Ok(file);
        }
        parse_yaml(&text).map_err(|reason| ConfigError::Parse {
            path: path.to_owned(),
            reason,
        })
    }
}

/// A host file's servers as the sources of an otherwise default configuration.
impl From<crate::config::host_import::Imported> for FileConfig {
    fn from(imported: crate::config::host_import::Imported) -> Self {
        Self {
            sources: imported.sources,
            warnings: imported.warnings,
            ..Self::default()
        }
    }
}

impl AuthConfig {
    /// The environment variables this configuration reads secrets from.
    pub fn secret_env(&self) -> impl Iterator<Item = String> + '_ {
        let jwt = self.jwt.iter().filter_map(|j| j.secret_env.clone());
        let keys = self
            .api_keys
            .iter()
            .flat_map(ApiKeysConfig::entries)
            .flat_map(|e| e.env.iter().chain(e.key.iter().flat_map(|k| &k.env)))
            .cloned();
        jwt.chain(keys)
    }

    /// The groups named keys give, or `None` (any) when JWTs, whose tokens may carry any group,
    /// are accepted: with the stdio caller's, the groups a policy may name.
    pub(crate) fn known_groups(&self) -> Option<Vec<String>> {
        if self.jwt.is_some() {
            return None;
        }
        let mut groups: Vec<String> = self
            .api_keys
            .iter()
            .flat_map(ApiKeysConfig::entries)
            .flat_map(|e| e.groups.iter().cloned())
            .collect();
        groups.sort();
        groups.dedup();
        Some(groups)
    }

    /// Builds the authenticator; `None` when no method is configured.
    pub fn build(&self) -> Result<Option<Authenticator>, ConfigError> {
        if self.jwt.is_none() && self.api_keys.is_none() {
            return Ok(None);
        }
        let mut auth = match &self.jwt {
            Some(jwt) => jwt_authenticator(jwt)?,
            None => Authenticator::new(None, &[], Vec::new()),
        };
        if let Some(api) = &self.api_keys {
            let mut any = false;
            for (i, entry) in api.entries().iter().enumerate() {
                let at = format!("auth.api_keys[{i}]");
                match (&entry.name, &entry.key) {
                    (Some(name), Some(key)) => {
                        if entry.env.is_some() || entry.file.is_some() {
                            return Err(ConfigError::Invalid(format!(
                                "{at}: a named key takes its key from `key:`, not `env`/`file`"
                            )));
                        }
                        let secret = read_secret(key, &format!("{at}.key"))?;
                        auth = auth.with_key(Some(name.clone()), secret, entry.groups.clone());
                        any = true;
                    }
                    (None, None) => {
                        if !entry.groups.is_empty() {
                            return Err(ConfigError::Invalid(format!(
                                "{at}: `groups` needs a named key (`name` and `key`)"
                            )));
                        }
                        let mut keys = Vec::new();
                        if let Some(var) = &entry.env {
                            keys.extend(split_keys(&required_env(var, &format!("{at}.env"))?));
                        }
                        if let Some(file) = &entry.file {
                            keys.extend(split_keys(&read_config_file(file)?));
                        }
                        for key in keys {
                            auth = auth.with_key(None, key, Vec::new());
                            any = true;
                        }
                    }
                    _ => {
                        return Err(ConfigError::Invalid(format!(
                            "{at}: a named key needs both `name` and `key`"
                        )));
                    }
                }
            }
            if !any {
                return Err(ConfigError::Invalid(
                    "auth.api_keys: no keys found (set env or file)".to_owned(),
                ));
            }
        }
        Ok(Some(auth))
    }
}

/// The JWT half of the authenticator: HS256 with a shared secret, or a public key.
fn jwt_authenticator(jwt: &JwtConfig) -> Result<Authenticator, ConfigError> {
    let auth = match (&jwt.secret_env, &jwt.public_key_file) {
        (Some(var), None) => {
            let secret = required_env(var, "auth.jwt.secret_env")?;
            Authenticator::new(Some(secret.as_bytes()), &jwt.audience, Vec::new())
        }
        (None, Some(path)) => {
            let pem = read_config_file(path)?;
            Authenticator::new(None, &[], Vec::new())
                .with_jwt_public_key(pem.as_bytes(), &jwt.audience)
                .map_err(|e| {
                    ConfigError::Invalid(format!(
                        "auth.jwt.public_key_file: {} is not an RSA or EC public key in PEM ({e})",
                        path.display()
                    ))
                })?
        }
        _ => {
            return Err(ConfigError::Invalid(
                "auth.jwt: set exactly one of `secret_env` (HS256) and `public_key_file` (RS256, ES256)"
                    .to_owned(),
            ));
        }
    };
    let auth = auth.with_issuers(&jwt.issuers);
    Ok(match &jwt.group_claims {
        Some(claims) => auth.with_group_claims(claims.clone()),
        None => auth,
    })
}

/// One secret from where `at` says it is.
fn read_secret(secret: &SecretRef, at: &str) -> Result<String, ConfigError> {
    let text = match (&secret.env, &secret.file) {
        (Some(var), None) => required_env(var, &format!("{at}.env"))?,
        (None, Some(file)) => read_config_file(file)?,
        _ => {
            return Err(ConfigError::Invalid(format!(
                "{at}: set exactly one of `env` and `file`"
            )));
        }
    };
    let text = text.trim();
    if text.is_empty() {
        return Err(ConfigError::Invalid(format!("{at}: the key is empty")));
    }
    Ok(text.to_owned())
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
    use crate::config::sources::SourceKind;

    #[test]
    fn unknown_keys_are_named_with_their_line() {
        let err = parse_yaml::<FileConfig>("listen: 127.0.0.1:1\nlimits:\n  max_body: 3\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("max_body") && err.contains("line 3"), "{err}");
        let err = parse_yaml::<FileConfig>("limits:\n  call_timeout_secs: soon\n")
            .unwrap_err()
            .to_string();
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

    fn file(yaml: &str) -> FileConfig {
        parse_yaml(yaml).unwrap()
    }

    fn flag(kind: SourceKind, target: &str) -> SourceFlag {
        SourceFlag {
            kind,
            target: target.to_owned(),
            base_url: None,
            toolkit: None,
            version: None,
            oauth: false,
            resources: false,
            prompts: false,
        }
    }

    #[test]
    fn issue_8_defaults_without_file_or_flags() {
        let c = Config::resolve(FileConfig::default(), Overrides::default()).unwrap();
        assert_eq!(c.listen, DEFAULT_LISTEN);
        assert_eq!(c.dialect, Dialect::Otc);
        assert_eq!(c.log_filter, DEFAULT_LOG_FILTER);
        assert!(!c.allow_partial);
        assert!(c.auth.jwt.is_none() && c.auth.api_keys.is_none());
        assert_eq!(c.settings.max_body_bytes, 1024 * 1024);
        assert_eq!(c.settings.call_timeout, Duration::from_secs(60));
        assert!(c.sources.is_empty() && c.secret_env.is_empty());
    }

    #[test]
    fn issue_8_the_file_applies_when_no_flag_is_given() {
        let c = Config::resolve(
            file("listen: 0.0.0.0:9000\ndialect: oxp\nlog_level: debug\nallow_partial: true\nlimits:\n  max_body_bytes: 10\n  call_timeout_secs: 2\n"),
            Overrides::default(),
        )
        .unwrap();
        assert_eq!(c.listen, "0.0.0.0:9000".parse().unwrap());
        assert_eq!(c.dialect, Dialect::OxpMain);
        assert_eq!(c.settings.default_dialect, Dialect::OxpMain);
        assert_eq!(c.log_filter, "debug");
        assert!(c.allow_partial);
        assert_eq!(c.settings.max_body_bytes, 10);
        assert_eq!(c.settings.call_timeout, Duration::from_secs(2));
    }

    #[test]
    fn issue_8_flags_win_over_the_file_for_scalars() {
        let c = Config::resolve(
            file("listen: 0.0.0.0:9000\ndialect: oxp\nlog_level: debug\nauth:\n  jwt:\n    secret_env: FILE_SECRET\n    audience: [file]\n  api_keys:\n    env: FILE_KEYS\nlimits:\n  max_body_bytes: 10\n  call_timeout_secs: 2\n"),
            Overrides {
                listen: Some("127.0.0.1:1".parse().unwrap()),
                dialect: Some(DialectName::Otc),
                log_filter: Some("trace".to_owned()),
                jwt_secret_env: Some("FLAG_SECRET".to_owned()),
                jwt_audience: vec!["flag".to_owned()],
                api_keys_file: Some(PathBuf::from("keys.txt")),
                max_body_bytes: Some(20),
                call_timeout_secs: Some(3),
                allow_partial: true,
                ..Overrides::default()
            },
        )
        .unwrap();
        assert_eq!(c.listen, "127.0.0.1:1".parse().unwrap());
        assert_eq!(c.dialect, Dialect::Otc);
        assert_eq!(c.log_filter, "trace");
        assert!(c.allow_partial);
        assert_eq!(c.settings.max_body_bytes, 20);
        assert_eq!(c.settings.call_timeout, Duration::from_secs(3));
        let jwt = c.auth.jwt.unwrap();
        assert_eq!(
            (jwt.secret_env.as_deref(), jwt.audience),
            (Some("FLAG_SECRET"), vec!["flag".to_owned()])
        );
        // The api-keys flags replace the file's `auth.api_keys` as a whole.
        let keys = c.auth.api_keys.unwrap();
        let keys = &keys.entries()[0];
        assert_eq!(
            (keys.env.clone(), keys.file.clone()),
            (None, Some(PathBuf::from("keys.txt")))
        );
    }

    #[test]
    fn issue_8_flag_sources_come_after_the_file_sources() {
        let c = Config::resolve(
            file("sources:\n  - type: openapi\n    name: pets\n    spec: pets.yaml\n    max_concurrency: 2\n"),
            Overrides {
                sources: vec![
                    flag(SourceKind::OpenApi, "other/pets.yaml"),
                    flag(SourceKind::McpStdio, "srv --x"),
                ],
                ..Overrides::default()
            },
        )
        .unwrap();
        let names: Vec<&str> = c.sources.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["pets", "pets-2", "srv"]);
        // The file source's policy is compiled once, here, with its limit.
        let permits = c.sources[0].policy().permits.as_ref().unwrap();
        assert_eq!(permits.available_permits(), 2);
    }

    #[test]
    fn issue_8_secret_env_names_every_secret_variable() {
        let c = Config::resolve(
            file(concat!(
                "auth:\n  jwt:\n    secret_env: JWT_KEY\n  api_keys:\n    env: API_KEYS\n",
                "sources:\n",
                "  - type: openapi\n    spec: a.yaml\n    credentials:\n      api_key: { env: PET_KEY }\n",
                "  - type: mcp\n    transport:\n      type: streamable_http\n      url: http://127.0.0.1:1/mcp\n      headers:\n        Authorization: { env: MCP_TOKEN }\n        X-Plain: { value: visible }\n",
                "  - type: mcp\n    transport:\n      type: stdio\n      command: srv\n      env: { LOG_LEVEL: debug }\n",
            )),
            Overrides::default(),
        )
        .unwrap();
        let names: Vec<&str> = c.secret_env.iter().map(String::as_str).collect();
        assert_eq!(names, ["API_KEYS", "JWT_KEY", "MCP_TOKEN", "PET_KEY"]);
    }

    #[test]
    fn issue_8_resolution_errors_name_the_key_or_flag() {
        let err = |f: FileConfig, o: Overrides| Config::resolve(f, o).unwrap_err().to_string();
        assert!(
            err(
                FileConfig::default(),
                Overrides {
                    jwt_audience: vec!["a".to_owned()],
                    ..Overrides::default()
                }
            )
            .contains("--jwt-audience needs --jwt-secret-env")
        );
        assert!(
            err(
                FileConfig::default(),
                Overrides {
                    max_body_bytes: Some(0),
                    ..Overrides::default()
                }
            )
            .contains("limits.max_body_bytes")
        );
        assert!(
            err(file("sources:\n  - type: openapi\n    spec: a\n  - type: openapi\n    spec: b\n    include: ['[']\n"), Overrides::default())
                .contains("sources[1].include")
        );
    }
}
