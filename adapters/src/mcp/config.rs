//! `McpConfig`: how to reach one MCP server and how to supervise it (STYLE.md §2.4).
//!
//! The YAML form (every key but `transport` optional):
//!
//! ```yaml
//! transport:
//!   type: stdio                      # or streamable_http / sse
//!   command: "npx -y @modelcontextprotocol/server-everything stdio"
//!   args: ["--verbose"]              # appended to what `command` splits into
//!   env: { LOG_LEVEL: debug, GITHUB_TOKEN: { env: GITHUB_TOKEN } }  # on top of a minimal environment
//!   inherit_env: false               # true: the bridge's whole environment, less its secrets
//!   cwd: /srv/mcp
//! toolkit: Everything                # else serverInfo.name
//! version: 2.0.0                     # else serverInfo.version
//! startup_timeout_secs: 30
//! restart: { initial_backoff_ms: 250, max_backoff_ms: 30000, failures_before_failed: 5 }
//! resources: tools                   # also serve resources as tools (default: off)
//! prompts: tools                     # also serve each prompt as a tool (default: off)
//! ```
//!
//! HTTP transports take `url` and `headers`, each header given by value or read from an
//! environment variable at start-up: `headers: { Authorization: { env: MCP_TOKEN } }` (the value of
//! the variable is sent as it is, so put `Bearer …` in the variable), or written around variables:
//! `{ template: "Bearer ${MCP_TOKEN}" }`. Values are never logged.
//!
//! A stdio child does not inherit the bridge's environment (issue 8, defect 2: the bridge holds
//! the JWT key, API keys and other sources' credentials). It gets the few variables programs
//! need to run (`PATH`, `HOME`, locale…, listed with their reasons in `child.rs`) plus `env:`,
//! whose values are text or, like headers, read from the bridge's environment at start-up.
//! `inherit_env: true` restores the whole environment, still without the variables the bridge
//! reads secrets from.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::AdapterError;

/// One MCP upstream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpConfig {
    /// How to reach the server.
    pub transport: McpTransportConfig,
    /// The toolkit name in tool ids; default: the server's `serverInfo.name`.
    #[serde(default)]
    pub toolkit: Option<String>,
    /// The version in tool ids; default: the server's `serverInfo.version`, normalised.
    #[serde(default)]
    pub version: Option<String>,
    /// How long start-up (spawn or connect, `initialize`) may take.
    #[serde(default = "default_startup_timeout_secs")]
    pub startup_timeout_secs: u64,
    /// Restarting a crashed child or reconnecting a lost session.
    #[serde(default)]
    pub restart: RestartConfig,
    /// How often the server is pinged to find a hung one; `0` turns pinging off.
    #[serde(default = "default_ping_interval_secs")]
    pub ping_interval_secs: u64,
    /// How long a ping may take before the server counts as hung and is restarted.
    #[serde(default = "default_ping_timeout_secs")]
    pub ping_timeout_secs: u64,
    /// At most this many stderr lines per second of a child are logged; the rest are counted.
    #[serde(default = "default_stderr_lines_per_sec")]
    pub stderr_lines_per_sec: u32,
    /// How to authorize to a remote server (streamable HTTP only): OAuth 2.1.
    #[serde(default)]
    pub auth: Option<AuthConfig>,
    /// `resources: tools`: the server's resources are also served as tools (`ListResources`,
    /// `ReadResource`, `ReadResourceTemplate`; see `otc_mappings::mcp::resources`).
    #[serde(default)]
    pub resources: ServeAs,
    /// `prompts: tools`: each of the server's prompts is also served as a tool
    /// (`Prompt<Name>`; see `otc_mappings::mcp::prompts`).
    #[serde(default)]
    pub prompts: ServeAs,
}

/// How an MCP feature other than tools (resources, prompts) is served over OTC.
///
/// An enum rather than a bool because the issue's spelling, `resources: tools`, names *how*:
/// other ways (say, resources embedded in tool results, or subscriptions) can be added without
/// changing what a configuration file means.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServeAs {
    /// Not served (the default): OTC callers see the server's tools only.
    #[default]
    Off,
    /// Served as read-only tools in the source's toolkit.
    Tools,
}

impl ServeAs {
    /// Whether the feature is served as tools.
    pub fn as_tools(self) -> bool {
        self == Self::Tools
    }
}

/// Authorization to a remote MCP server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum AuthConfig {
    /// OAuth 2.1 as the MCP authorization spec describes it (DESIGN §10): on a 401 the bridge
    /// discovers the protected resource's and the authorization server's metadata, gets a
    /// client (pre-registered, a client ID metadata document, or dynamic registration) and a
    /// token (PKCE with the `resource` parameter, or `client_credentials`), and refreshes it.
    Oauth(OAuthConfig),
}

/// OAuth settings of one source; every key is optional.
///
/// ```yaml
/// auth:
///   type: oauth
///   grant: authorization_code        # or client_credentials (machine clients)
///   client_id: my-registered-client  # else client_metadata_url, else dynamic registration
///   client_secret: { env: MCP_CLIENT_SECRET }
///   client_metadata_url: https://example.com/otc-bridge-client.json
///   private_key: { env: MCP_CLIENT_KEY }   # client_credentials with private_key_jwt (PEM)
///   scopes: [read, write]            # else those the server asks for, else scopes_supported
///   token_file: /var/lib/otc/tokens.json   # default: <config dir>/otc-bridge/tokens/<source>.json
///   per_caller: true                 # calls carry each caller's own token (see below)
///   caller_scopes: [read]            # what callers' sign-ins ask for; default: `scopes`
/// ```
///
/// With `per_caller`, the bridge's own token (from `grant`) only lists the tools; each call is
/// sent with the token its caller gives in `context.authorization`, and a call without one (or
/// with one the server refuses) is answered with the standard's authorization challenge. A
/// caller's token refused for want of scope (403 `insufficient_scope`) gets a challenge for
/// `caller_scopes` plus the scopes the server asked for (else all it supports): a step-up.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OAuthConfig {
    /// How the bridge gets its token.
    pub grant: OAuthGrant,
    /// A client id registered with the authorization server beforehand.
    pub client_id: Option<String>,
    /// That client's secret, inline or from the environment.
    pub client_secret: Option<HeaderValueConfig>,
    /// The URL of a client ID metadata document that identifies the bridge.
    pub client_metadata_url: Option<String>,
    /// A PEM private key for `private_key_jwt` client authentication (`client_credentials`).
    pub private_key: Option<HeaderValueConfig>,
    /// The scopes to ask for; default: from the server's challenge, else all it supports.
    pub scopes: Option<Vec<String>>,
    /// Where tokens are kept between runs (mode 0600).
    pub token_file: Option<PathBuf>,
    /// Calls are sent with each caller's own token (`context.authorization`), not the bridge's.
    pub per_caller: bool,
    /// The scopes callers' sign-ins ask for (`per_caller`); default: `scopes`, else all the
    /// server supports. Apart from `scopes`, which the bridge's own grant asks for.
    pub caller_scopes: Option<Vec<String>>,
}

/// How the bridge obtains its token.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OAuthGrant {
    /// A person signs in once with `otc-bridge login SOURCE` (PKCE, loopback redirect); the
    /// tokens are kept in `token_file` and refreshed.
    #[default]
    AuthorizationCode,
    /// The bridge is the client (no person): `client_id` with `client_secret` or `private_key`.
    ClientCredentials,
}

/// The three ways to reach an MCP server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum McpTransportConfig {
    /// A child process speaking JSON-RPC over stdin/stdout.
    Stdio {
        /// The command line, split as a POSIX shell would split it (quotes, backslashes) and
        /// run without a shell: no globbing, no variables, no pipes.
        command: String,
        /// Extra arguments appended after those in `command`.
        #[serde(default)]
        args: Vec<String>,
        /// Environment variables set for the child, on top of a minimal environment (or of the
        /// bridge's, less its secrets, with `inherit_env`).
        #[serde(default)]
        env: BTreeMap<String, EnvValueConfig>,
        /// Pass the bridge's whole environment to the child, except the variables the bridge
        /// reads secrets from. Default `false`: only a minimal environment plus `env`.
        #[serde(default)]
        inherit_env: bool,
        /// The child's working directory; default: the bridge's.
        #[serde(default)]
        cwd: Option<PathBuf>,
    },
    /// The streamable HTTP transport (MCP 2025-03-26 and later): one endpoint URL.
    StreamableHttp {
        /// The endpoint, e.g. `http://127.0.0.1:3001/mcp`.
        url: String,
        /// Extra headers sent with every request.
        #[serde(default)]
        headers: BTreeMap<String, HeaderValueConfig>,
    },
    /// The legacy HTTP+SSE transport (MCP 2024-11-05): a `GET` event stream plus a `POST`
    /// endpoint the stream announces.
    Sse {
        /// The event stream URL, e.g. `http://127.0.0.1:3001/sse`.
        url: String,
        /// Extra headers sent with every request.
        #[serde(default)]
        headers: BTreeMap<String, HeaderValueConfig>,
    },
}

/// A header value, given inline or read from the environment at start-up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum HeaderValueConfig {
    /// `{ value: "…" }`.
    Value(String),
    /// `{ env: "VAR" }`: the value of the environment variable `VAR`.
    Env(String),
    /// `{ template: "Bearer ${VAR}" }`: the text with each `${VAR}` replaced by the value of the
    /// environment variable `VAR` (the form MCP hosts' `mcpServers` files write headers in). A
    /// `$` not followed by `{` is kept as it is.
    Template(String),
}

impl HeaderValueConfig {
    /// The value to send; an unset variable is a start-up error naming the variable.
    pub fn resolve(&self, header: &str) -> Result<String, AdapterError> {
        self.resolve_for(&format!("header '{header}'"))
    }

    /// The value; `what` names its place in an error (`header 'Authorization'`).
    fn resolve_for(&self, what: &str) -> Result<String, AdapterError> {
        match self {
            Self::Value(value) => Ok(value.clone()),
            Self::Env(var) => read_var(what, var),
            Self::Template(template) => {
                let mut out = String::with_capacity(template.len());
                for part in template_parts(template) {
                    match part {
                        TemplatePart::Text(text) => out.push_str(text),
                        TemplatePart::Var(var) => out.push_str(&read_var(what, var)?),
                    }
                }
                Ok(out)
            }
        }
    }

    /// The environment variables the value is read from (none for `value`).
    pub fn variables(&self) -> Vec<String> {
        match self {
            Self::Value(_) => Vec::new(),
            Self::Env(var) => vec![var.clone()],
            Self::Template(template) => template_parts(template)
                .filter_map(|part| match part {
                    TemplatePart::Var(var) => Some(var.to_owned()),
                    TemplatePart::Text(_) => None,
                })
                .collect(),
        }
    }
}

fn read_var(what: &str, var: &str) -> Result<String, AdapterError> {
    std::env::var(var).map_err(|_| {
        AdapterError::setup(format!(
            "{what} is read from the environment variable {var}, which is not set"
        ))
    })
}

/// A value of a stdio child's `env:`: text as it is (`LOG_LEVEL: debug`), or read from the
/// bridge's environment at start-up, in the forms of a header value (`GITHUB_TOKEN: {env:
/// GITHUB_TOKEN}`, `{template: "…${VAR}…"}`). A variable read this way is one of the bridge's
/// secrets (see [`McpConfig::secret_env`]): written as a reference, a token stays out of the
/// configuration file (what `otc-bridge import` writes) and out of other children.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum EnvValueConfig {
    /// `VAR: text`.
    Text(String),
    /// `VAR: {env: NAME}` (or `{value: …}`, `{template: …}`).
    Reference(HeaderValueConfig),
}

impl EnvValueConfig {
    /// The value the child gets for `var`; an unset variable is a start-up error naming it.
    pub fn resolve(&self, var: &str) -> Result<String, AdapterError> {
        match self {
            Self::Text(text) => Ok(text.clone()),
            Self::Reference(reference) => reference.resolve_for(&format!("env '{var}'")),
        }
    }

    /// The bridge's environment variables the value is read from.
    pub fn variables(&self) -> Vec<String> {
        match self {
            Self::Text(_) => Vec::new(),
            Self::Reference(reference) => reference.variables(),
        }
    }
}

impl From<&str> for EnvValueConfig {
    fn from(text: &str) -> Self {
        Self::Text(text.to_owned())
    }
}

/// A piece of a `template` header value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TemplatePart<'a> {
    Text(&'a str),
    Var(&'a str),
}

/// Splits `template` into text and `${VAR}` references; an unclosed `${` is text.
fn template_parts(template: &str) -> impl Iterator<Item = TemplatePart<'_>> {
    let mut rest = template;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let Some(start) = rest.find("${") else {
            let text = rest;
            rest = "";
            return Some(TemplatePart::Text(text));
        };
        if start > 0 {
            let text = &rest[..start];
            rest = &rest[start..];
            return Some(TemplatePart::Text(text));
        }
        match rest.find('}') {
            Some(end) => {
                let var = &rest[2..end];
                rest = &rest[end + 1..];
                Some(TemplatePart::Var(var))
            }
            None => {
                let text = rest;
                rest = "";
                Some(TemplatePart::Text(text))
            }
        }
    })
}

/// Restart and reconnect policy: exponential backoff from `initial_backoff_ms`, doubled per
/// consecutive failure up to `max_backoff_ms`. The bridge never stops trying; after
/// `failures_before_failed` consecutive failures the source reports `failed` instead of
/// `restarting` until it recovers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RestartConfig {
    /// The first delay after a crash.
    pub initial_backoff_ms: u64,
    /// The longest delay between attempts.
    pub max_backoff_ms: u64,
    /// Consecutive failed attempts after which the state is `failed`.
    pub failures_before_failed: u32,
    /// How long a stopping child gets after `SIGTERM` before it is killed.
    pub shutdown_grace_ms: u64,
}

impl Default for RestartConfig {
    fn default() -> Self {
        Self {
            initial_backoff_ms: 250,
            max_backoff_ms: 30_000,
            failures_before_failed: 5,
            shutdown_grace_ms: 2_000,
        }
    }
}

impl RestartConfig {
    /// The delay before attempt number `failures` (0 = the first restart after a crash).
    pub fn backoff(&self, failures: u32) -> Duration {
        let factor = 1u64.checked_shl(failures.min(32)).unwrap_or(u64::MAX);
        let ms = self
            .initial_backoff_ms
            .saturating_mul(factor)
            .min(self.max_backoff_ms.max(self.initial_backoff_ms));
        Duration::from_millis(ms)
    }
}

fn default_startup_timeout_secs() -> u64 {
    30
}
fn default_ping_interval_secs() -> u64 {
    30
}
fn default_ping_timeout_secs() -> u64 {
    10
}
fn default_stderr_lines_per_sec() -> u32 {
    50
}

impl McpConfig {
    /// A config for `transport` with every other setting at its default.
    pub fn new(transport: McpTransportConfig) -> Self {
        Self {
            transport,
            toolkit: None,
            version: None,
            startup_timeout_secs: default_startup_timeout_secs(),
            restart: RestartConfig::default(),
            ping_interval_secs: default_ping_interval_secs(),
            ping_timeout_secs: default_ping_timeout_secs(),
            stderr_lines_per_sec: default_stderr_lines_per_sec(),
            auth: None,
            resources: ServeAs::Off,
            prompts: ServeAs::Off,
        }
    }

    /// `--mcp "CMD ARGS…"`: a child process; the line is split when the adapter is built.
    pub fn stdio(command_line: &str) -> Self {
        Self::new(McpTransportConfig::Stdio {
            command: command_line.to_owned(),
            args: Vec::new(),
            env: BTreeMap::new(),
            inherit_env: false,
            cwd: None,
        })
    }

    /// `--mcp-url URL`: the streamable HTTP transport.
    pub fn streamable_http(url: &str) -> Self {
        Self::new(McpTransportConfig::StreamableHttp {
            url: url.to_owned(),
            headers: BTreeMap::new(),
        })
    }

    /// `--mcp-sse URL`: the legacy HTTP+SSE transport.
    pub fn sse(url: &str) -> Self {
        Self::new(McpTransportConfig::Sse {
            url: url.to_owned(),
            headers: BTreeMap::new(),
        })
    }

    /// Sets the toolkit name.
    pub fn with_toolkit(mut self, toolkit: impl Into<String>) -> Self {
        self.toolkit = Some(toolkit.into());
        self
    }

    /// Sets the version.
    pub fn with_version(mut self, version: impl Into<String>) -> Self {
        self.version = Some(version.into());
        self
    }

    /// A short description of the upstream for logs and errors (never includes header values).
    pub fn describe(&self) -> String {
        match &self.transport {
            McpTransportConfig::Stdio { command, args, .. } if args.is_empty() => {
                format!("command `{command}`")
            }
            McpTransportConfig::Stdio { command, args, .. } => {
                format!("command `{command} {}`", args.join(" "))
            }
            McpTransportConfig::StreamableHttp { url, .. } => format!("streamable HTTP {url}"),
            McpTransportConfig::Sse { url, .. } => format!("SSE {url}"),
        }
    }

    /// The URL of a remote server (streamable HTTP or SSE); `None` for a child process.
    pub fn remote_url(&self) -> Option<&str> {
        match &self.transport {
            McpTransportConfig::Stdio { .. } => None,
            McpTransportConfig::StreamableHttp { url, .. }
            | McpTransportConfig::Sse { url, .. } => Some(url),
        }
    }

    /// The environment variables this source reads secrets from (its `headers: {X: {env: VAR}}`,
    /// a child's `env: {X: {env: VAR}}`).
    /// The bridge adds them to [`BuildContext::secret_env`](crate::BuildContext) so that no other
    /// source's child sees them; the adapter also withholds them from its own child.
    pub fn secret_env(&self) -> BTreeSet<String> {
        let headers = match &self.transport {
            McpTransportConfig::Stdio { env, .. } => {
                return env.values().flat_map(EnvValueConfig::variables).collect();
            }
            McpTransportConfig::StreamableHttp { headers, .. }
            | McpTransportConfig::Sse { headers, .. } => headers,
        };
        let oauth = match &self.auth {
            Some(AuthConfig::Oauth(oauth)) => vec![&oauth.client_secret, &oauth.private_key],
            None => Vec::new(),
        };
        headers
            .values()
            .chain(oauth.into_iter().flatten())
            .flat_map(HeaderValueConfig::variables)
            .collect()
    }

    pub(crate) fn startup_timeout(&self) -> Duration {
        Duration::from_secs(self.startup_timeout_secs.max(1))
    }
}

/// Splits a command line as a POSIX shell would (without expanding anything) and appends `args`.
pub(crate) fn split_command(command: &str, args: &[String]) -> Result<Vec<String>, AdapterError> {
    let mut argv = shlex::split(command).ok_or_else(|| {
        AdapterError::setup(format!(
            "cannot split the MCP command `{command}`: unbalanced quotes or a trailing backslash"
        ))
    })?;
    if argv.is_empty() {
        return Err(AdapterError::setup("the MCP command is empty"));
    }
    argv.extend(args.iter().cloned());
    Ok(argv)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oauth_settings_parse_and_their_secret_variables_are_kept_from_children() {
        let yaml = r#"
transport: { type: streamable_http, url: "https://mcp.example.com/mcp" }
auth:
  type: oauth
  grant: client_credentials
  client_id: bridge
  client_secret: { env: MCP_SECRET }
  private_key: { env: MCP_KEY }
  scopes: [read]
"#;
        let config: McpConfig = serde_yaml::from_str(yaml).unwrap();
        let Some(AuthConfig::Oauth(oauth)) = &config.auth else {
            panic!("no oauth: {config:?}")
        };
        assert_eq!(oauth.grant, OAuthGrant::ClientCredentials);
        assert_eq!(oauth.scopes.as_deref(), Some(&["read".to_owned()][..]));
        assert_eq!(
            config.secret_env(),
            BTreeSet::from(["MCP_KEY".to_owned(), "MCP_SECRET".to_owned()])
        );
        // Defaults: the authorization code flow, nothing else needed.
        let config: McpConfig = serde_yaml::from_str(
            "transport: { type: streamable_http, url: 'http://x' }\nauth: { type: oauth }",
        )
        .unwrap();
        assert_eq!(config.auth, Some(AuthConfig::Oauth(OAuthConfig::default())));
        // A misspelt key is an error, not a silently public client.
        let bad = "transport: { type: streamable_http, url: 'http://x' }\nauth: { type: oauth, client_secert: x }";
        assert!(serde_yaml::from_str::<McpConfig>(bad).is_err());
    }

    #[test]
    fn yaml_form_parses_and_unknown_keys_are_rejected() {
        let yaml = r#"
transport:
  type: stdio
  command: "node 'my server.js' --flag"
  env: { A: "1" }
toolkit: Demo
restart: { initial_backoff_ms: 10 }
"#;
        let config: McpConfig = serde_yaml::from_str(yaml).unwrap();
        assert_eq!(config.toolkit.as_deref(), Some("Demo"));
        assert_eq!(config.restart.initial_backoff_ms, 10);
        assert_eq!(config.restart.max_backoff_ms, 30_000);
        let McpTransportConfig::Stdio { command, args, .. } = &config.transport else {
            panic!("not stdio")
        };
        assert_eq!(
            split_command(command, args).unwrap(),
            ["node", "my server.js", "--flag"]
        );
        let bad = "transport: { type: sse, url: 'http://x', header: {} }";
        assert!(serde_yaml::from_str::<McpConfig>(bad).is_err());
        let bad = "transport: { type: sse, url: 'http://x' }\ntoolkt: X";
        assert!(serde_yaml::from_str::<McpConfig>(bad).is_err());
        // Issue 27: resources and prompts as tools, off unless asked for.
        assert_eq!(
            (config.resources, config.prompts),
            (ServeAs::Off, ServeAs::Off)
        );
        let both = "transport: { type: stdio, command: x }\nresources: tools\nprompts: tools";
        let both: McpConfig = serde_yaml::from_str(both).unwrap();
        assert!(both.resources.as_tools() && both.prompts.as_tools());
        let bad = "transport: { type: stdio, command: x }\nresources: true";
        assert!(serde_yaml::from_str::<McpConfig>(bad).is_err());
        let McpTransportConfig::Stdio { inherit_env, .. } = &config.transport else {
            panic!("not stdio")
        };
        assert!(!inherit_env, "a child inherits nothing unless asked");
        let yaml = "transport: { type: stdio, command: x, inherit_env: true }";
        let config: McpConfig = serde_yaml::from_str(yaml).unwrap();
        assert!(matches!(
            config.transport,
            McpTransportConfig::Stdio {
                inherit_env: true,
                ..
            }
        ));
        let http = "transport: { type: streamable_http, url: 'http://x/mcp', headers: { Authorization: { env: TOKEN } } }";
        let config: McpConfig = serde_yaml::from_str(http).unwrap();
        assert_eq!(
            config,
            McpConfig::new(McpTransportConfig::StreamableHttp {
                url: "http://x/mcp".to_owned(),
                headers: [(
                    "Authorization".to_owned(),
                    HeaderValueConfig::Env("TOKEN".to_owned())
                )]
                .into()
            })
        );
        assert_eq!(config.secret_env(), BTreeSet::from(["TOKEN".to_owned()]));
    }

    #[test]
    fn template_headers_read_each_variable_and_keep_it_secret() {
        let config: McpConfig = serde_yaml::from_str(
            "transport: { type: sse, url: 'http://x', headers: { Authorization: { template: 'Bearer ${PATH}/${HOME}$x${' } } }",
        )
        .unwrap();
        assert_eq!(
            config.secret_env(),
            BTreeSet::from(["HOME".to_owned(), "PATH".to_owned()])
        );
        let value = HeaderValueConfig::Template("Bearer ${PATH}$x${".to_owned());
        let path = std::env::var("PATH").unwrap();
        assert_eq!(
            value.resolve("Authorization").unwrap(),
            format!("Bearer {path}$x${{")
        );
        let unset = HeaderValueConfig::Template("a ${OTC_TEST_NEVER_SET_VAR} b".to_owned());
        let err = unset.resolve("X-Key").unwrap_err().to_string();
        assert!(
            err.contains("X-Key") && err.contains("OTC_TEST_NEVER_SET_VAR"),
            "{err}"
        );
    }

    #[test]
    fn command_lines_split_like_a_shell() {
        assert!(split_command("node 'unterminated", &[]).is_err());
        assert!(split_command("   ", &[]).is_err());
        let argv = split_command(r#"npx -y "a b" c\ d"#, &["e".to_owned()]).unwrap();
        assert_eq!(argv, ["npx", "-y", "a b", "c d", "e"]);
    }

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let restart = RestartConfig::default();
        assert_eq!(restart.backoff(0), Duration::from_millis(250));
        assert_eq!(restart.backoff(2), Duration::from_millis(1000));
        assert_eq!(restart.backoff(40), Duration::from_millis(30_000));
    }
}
