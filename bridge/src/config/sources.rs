//! Sources: what the operator asked to serve, from flags (`--openapi`, `--mcp`, …) and from the
//! config file's `sources:` list, and how each becomes an adapter.
//!
//! A file entry is one flat mapping: `type`, the bridge's own per-source keys (`name`), and the
//! adapter's keys (`OpenApiConfig`, `McpConfig`, each closed with `deny_unknown_fields`). The
//! bridge keys are taken out first and the rest is handed to the adapter's config, so an unknown
//! key is still an error that names it.

use std::collections::BTreeSet;
use std::sync::Arc;

use otc_adapters::BuildContext;
use otc_adapters::mcp::{McpAdapter, McpConfig, McpTransportConfig, ServeAs};
use otc_adapters::openapi::{OpenApiAdapter, OpenApiConfig};
use otc_adapters::{Adapter, AdapterError, ToolCall};
use otc_mappings::{Mapped, MappedTool};
use serde_yaml::{Mapping, Value};

use super::read::ConfigError;
use crate::catalog::lock::{Lockfile, OnChange, Pins};
use crate::catalog::policy::{SourceOptions, SourcePolicy};

/// One configured source.
///
/// It carries its policy compiled once, when the source is parsed or built, so start-up does not
/// compile it a second time: a second compilation would also make a second concurrency
/// semaphore, and `SourcePolicy` must stay the one owner of the source's call limits.
#[derive(Debug, Clone)]
pub struct Source {
    /// Its name in logs, `/health` and reports; unique.
    pub name: String,
    /// The upstream and how to reach it.
    pub upstream: Upstream,
    /// The bridge's per-source options as configured (filters, overrides, limits).
    options: SourceOptions,
    /// `options`, compiled; shared by every clone of this source.
    policy: Arc<SourcePolicy>,
    /// Whether the source is only listed, never called (see [`Source::for_inspection`]).
    pub inspect_only: bool,
}

impl Source {
    /// What listing this source would start or contact beyond reading files (a process, a URL),
    /// said for an error; `None` when it only reads local files.
    pub fn reaches_beyond_files(&self) -> Option<String> {
        match &self.upstream {
            Upstream::Mcp(config) => Some(match &config.transport {
                McpTransportConfig::Stdio { .. } => {
                    format!("source `{}` runs its MCP server as a process", self.name)
                }
                McpTransportConfig::StreamableHttp { .. } | McpTransportConfig::Sse { .. } => {
                    format!("source `{}` is an MCP server at a URL", self.name)
                }
            }),
            Upstream::OpenApi(config) => {
                let spec = config.spec.trim_start().to_ascii_lowercase();
                if spec.starts_with("http://") || spec.starts_with("https://") {
                    Some(format!(
                        "source `{}` fetches its document from a URL",
                        self.name
                    ))
                } else if config.allow_remote_refs {
                    Some(format!(
                        "source `{}` fetches remote `$ref`s (allow_remote_refs)",
                        self.name
                    ))
                } else {
                    None
                }
            }
        }
    }
}

/// Two sources are equal when they are configured alike; the compiled policy follows from the
/// options and is not compared (its semaphore has no meaningful equality).
impl PartialEq for Source {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.upstream == other.upstream
            && self.options == other.options
            && self.inspect_only == other.inspect_only
    }
}

/// One source named on the command line, with the modifiers that followed it. The binary reads
/// these from its flags; the library only needs this plain form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFlag {
    /// What kind of source.
    pub kind: SourceKind,
    /// The path, URL or command.
    pub target: String,
    /// `--base-url` (OpenAPI only).
    pub base_url: Option<String>,
    /// `--toolkit`.
    pub toolkit: Option<String>,
    /// `--tool-version`.
    pub version: Option<String>,
    /// `--oauth` (`--mcp-url` and `--mcp-sse` only): the server is behind OAuth 2.1.
    pub oauth: bool,
    /// `--resources tools` (MCP only): the server's resources are served as tools too.
    pub resources: bool,
    /// `--prompts tools` (MCP only): the server's prompts are served as tools too.
    pub prompts: bool,
}

/// The kinds of source flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    /// `--openapi`.
    OpenApi,
    /// `--mcp`.
    McpStdio,
    /// `--mcp-url`.
    McpHttp,
    /// `--mcp-sse`.
    McpSse,
}

/// The two kinds of upstream.
#[derive(Debug, Clone, PartialEq)]
pub enum Upstream {
    /// An OpenAPI document.
    OpenApi(OpenApiConfig),
    /// An MCP server.
    Mcp(McpConfig),
}

impl Source {
    /// A source with `options`, compiled now; errors name the key under `at` (e.g.
    /// `sources[2]`).
    pub fn new(
        name: String,
        upstream: Upstream,
        options: SourceOptions,
        at: &str,
    ) -> Result<Self, ConfigError> {
        let policy = options.compile(at)?;
        Ok(Self {
            name,
            upstream,
            options,
            policy: Arc::new(policy),
            inspect_only: false,
        })
    }

    /// A source with the default options (serve everything, no per-source limits).
    pub fn with_defaults(name: String, upstream: Upstream) -> Self {
        Self {
            name,
            upstream,
            options: SourceOptions::default(),
            policy: Arc::new(SourcePolicy::default()),
            inspect_only: false,
        }
    }

    /// Serves this source's tools as `lock` says, a change doing what its `on_change` (or
    /// else `default`) says.
    pub fn pin(&mut self, lock: &Arc<Lockfile>, default: OnChange) {
        let on_change = self.options.on_change.unwrap_or(default);
        self.pin_with(lock, on_change);
    }

    /// Serves this source's tools as `lock` says, a change doing what `on_change` says whatever
    /// the source's own setting (`otc-bridge lock` moves every changed tool on).
    pub fn pin_with(&mut self, lock: &Arc<Lockfile>, on_change: OnChange) {
        Arc::make_mut(&mut self.policy).pins = Some(Pins {
            lock: Arc::clone(lock),
            on_change,
        });
    }

    /// The options as configured.
    pub fn options(&self) -> &SourceOptions {
        &self.options
    }

    /// The policy compiled from the options: filters, overrides and the call limits.
    pub fn policy(&self) -> &Arc<SourcePolicy> {
        &self.policy
    }

    /// The names of the environment variables this source reads secrets from: an OpenAPI
    /// source's credentials and an MCP source's `headers: {X: {env: VAR}}`. (A stdio child's
    /// `env:` values are written in the file, not read from the bridge's environment.)
    pub fn secret_env(&self) -> BTreeSet<String> {
        match &self.upstream {
            Upstream::OpenApi(c) => c.credentials.values().map(|c| c.env.clone()).collect(),
            Upstream::Mcp(c) => c.secret_env(),
        }
    }

    /// The source a command-line flag names.
    pub fn from_flag(flag: &SourceFlag) -> Self {
        let upstream = match flag.kind {
            SourceKind::OpenApi => {
                let mut config = OpenApiConfig::new(flag.target.clone());
                config.base_url.clone_from(&flag.base_url);
                config.toolkit.clone_from(&flag.toolkit);
                config.version.clone_from(&flag.version);
                Upstream::OpenApi(config)
            }
            SourceKind::McpStdio | SourceKind::McpHttp | SourceKind::McpSse => {
                let mut config = match flag.kind {
                    SourceKind::McpStdio => McpConfig::stdio(&flag.target),
                    SourceKind::McpHttp => McpConfig::streamable_http(&flag.target),
                    _ => McpConfig::sse(&flag.target),
                };
                config.toolkit.clone_from(&flag.toolkit);
                config.version.clone_from(&flag.version);
                if flag.oauth {
                    config.auth = Some(otc_adapters::mcp::AuthConfig::Oauth(Default::default()));
                }
                if flag.resources {
                    config.resources = ServeAs::Tools;
                }
                if flag.prompts {
                    config.prompts = ServeAs::Tools;
                }
                Upstream::Mcp(config)
            }
        };
        Self::with_defaults(default_name(&upstream), upstream)
    }

    /// Builds the adapter: loads the document or starts the server. `cx` names the variables
    /// that hold the bridge's secrets, which no MCP child may inherit, and holds the HTTP
    /// clients OpenAPI sources share.
    pub async fn build(&self, cx: &BuildContext) -> Result<Arc<dyn Adapter>, AdapterError> {
        Ok(match &self.upstream {
            Upstream::OpenApi(config) if self.inspect_only => Arc::new(Listed {
                name: self.name.clone(),
                mapped: OpenApiAdapter::map(config, cx).await?,
            }),
            Upstream::OpenApi(config) => {
                Arc::new(OpenApiAdapter::build(&self.name, config, cx).await?)
            }
            Upstream::Mcp(config) => McpAdapter::build(&self.name, config, cx).await?,
        })
    }

    /// The source as the inspecting commands (`tools`, `check`, `export`) use it: they call
    /// nothing, so an OpenAPI document is only loaded and mapped (no base URL or credential
    /// variables needed); an MCP server is still started, since listing is a call.
    pub fn for_inspection(mut self) -> Self {
        self.inspect_only = true;
        self
    }

    /// A short description for progress lines: the document or the command/URL.
    pub fn describe(&self) -> String {
        match &self.upstream {
            Upstream::OpenApi(c) => format!("OpenAPI {}", c.spec),
            Upstream::Mcp(c) => match &c.transport {
                McpTransportConfig::Stdio { command, .. } => format!("MCP `{command}`"),
                McpTransportConfig::StreamableHttp { url, .. } => format!("MCP {url}"),
                McpTransportConfig::Sse { url, .. } => format!("MCP (SSE) {url}"),
            },
        }
    }
}

/// A source that was only translated, for the inspecting commands: it lists, and refuses calls.
#[derive(Debug)]
struct Listed {
    name: String,
    mapped: Mapped<MappedTool>,
}

#[async_trait::async_trait]
impl Adapter for Listed {
    fn name(&self) -> &str {
        &self.name
    }

    async fn list_tools(&self) -> Result<Mapped<MappedTool>, AdapterError> {
        Ok(self.mapped.clone())
    }

    async fn call(&self, _call: ToolCall) -> Result<serde_json::Value, AdapterError> {
        Err(AdapterError::setup(format!(
            "source '{}' was loaded for inspection only",
            self.name
        )))
    }
}

/// A readable default name: the document's file stem, or the MCP server's package or host.
fn default_name(upstream: &Upstream) -> String {
    let raw = match upstream {
        Upstream::OpenApi(c) => c.toolkit.clone().unwrap_or_else(|| last_segment(&c.spec)),
        Upstream::Mcp(c) => c.toolkit.clone().unwrap_or_else(|| match &c.transport {
            McpTransportConfig::Stdio { command, .. } => command_name(command),
            McpTransportConfig::StreamableHttp { url, .. }
            | McpTransportConfig::Sse { url, .. } => host(url),
        }),
    };
    let cleaned: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let cleaned = cleaned.trim_matches('-').to_owned();
    if cleaned.is_empty() {
        "source".to_owned()
    } else {
        cleaned
    }
}

fn last_segment(spec: &str) -> String {
    let path = spec
        .split(['?', '#'])
        .next()
        .unwrap_or(spec)
        .trim_end_matches('/');
    let file = path.rsplit('/').next().unwrap_or(path);
    file.split('.').next().unwrap_or(file).to_owned()
}

fn host(url: &str) -> String {
    url.split("://")
        .nth(1)
        .and_then(|rest| rest.split(['/', '?']).next())
        .unwrap_or(url)
        .replace(':', "-")
}

/// `npx -y @modelcontextprotocol/server-everything stdio` → `server-everything`.
fn command_name(command: &str) -> String {
    let words = shlex::split(command).unwrap_or_default();
    const LAUNCHERS: &[&str] = &[
        "npx", "uvx", "node", "python", "python3", "deno", "bun", "bunx", "pipx", "run", "exec",
    ];
    let word = words
        .iter()
        .find(|w| !w.starts_with('-') && !LAUNCHERS.contains(&w.rsplit('/').next().unwrap_or(w)))
        .or_else(|| words.first())
        .cloned()
        .unwrap_or_default();
    let word = word.rsplit('/').next().unwrap_or(&word).to_owned();
    let word = match word.rfind('@') {
        Some(at) if at > 0 => word[..at].to_owned(),
        _ => word,
    };
    word.trim_end_matches(".js")
        .trim_end_matches(".py")
        .to_owned()
}

/// Gives duplicate names a numeric suffix (`pets`, `pets-2`), in order.
pub fn make_names_unique(sources: &mut [Source]) {
    let mut seen = BTreeSet::new();
    for source in sources {
        let base = source.name.clone();
        let mut n = 1;
        while !seen.insert(source.name.clone()) {
            n += 1;
            source.name = format!("{base}-{n}");
        }
    }
}

/// The sources of the config file's `sources:` entries followed by those of the flags, each
/// with its policy compiled, names made unique.
pub(crate) fn collect(entries: &[Value], flags: &[SourceFlag]) -> Result<Vec<Source>, ConfigError> {
    let mut all = from_file(entries)?;
    all.extend(flags.iter().map(Source::from_flag));
    make_names_unique(&mut all);
    Ok(all)
}

/// Parses the config file's `sources:` entries.
pub(crate) fn from_file(entries: &[Value]) -> Result<Vec<Source>, ConfigError> {
    entries
        .iter()
        .enumerate()
        .map(|(i, entry)| from_entry(i, entry))
        .collect()
}

fn from_entry(index: usize, entry: &Value) -> Result<Source, ConfigError> {
    let at = |key: &str| {
        format!(
            "sources[{index}]{}{key}",
            if key.is_empty() { "" } else { "." }
        )
    };
    let invalid = |message: String| ConfigError::Invalid(message);
    let Value::Mapping(map) = entry else {
        return Err(invalid(format!(
            "{}: expected a mapping with a `type` key (openapi or mcp)",
            at("")
        )));
    };
    let mut rest: Mapping = map.clone();
    let kind = match rest.remove("type") {
        Some(Value::String(kind)) => kind,
        Some(_) => {
            return Err(invalid(format!(
                "{}: must be `openapi` or `mcp`",
                at("type")
            )));
        }
        None => {
            return Err(invalid(format!(
                "{}: missing `type` (openapi or mcp)",
                at("")
            )));
        }
    };
    let name = match rest.remove("name") {
        None => None,
        Some(Value::String(name)) if !name.trim().is_empty() => Some(name),
        Some(_) => {
            return Err(invalid(format!(
                "{}: must be a non-empty string",
                at("name")
            )));
        }
    };
    let mut bridge_keys = Mapping::new();
    for key in [
        "timeout_secs",
        "max_concurrency",
        "include",
        "exclude",
        "overrides",
        "results",
        "cache",
        "context_headers",
        "on_change",
    ] {
        if let Some(value) = rest.remove(key) {
            bridge_keys.insert(Value::String(key.to_owned()), value);
        }
    }
    let adapter_error = |e: serde_yaml::Error| invalid(format!("{}: {e}", at("")));
    let options: SourceOptions =
        serde_yaml::from_value(Value::Mapping(bridge_keys)).map_err(adapter_error)?;
    let upstream = match kind.as_str() {
        "openapi" => {
            Upstream::OpenApi(serde_yaml::from_value(Value::Mapping(rest)).map_err(adapter_error)?)
        }
        "mcp" => {
            Upstream::Mcp(serde_yaml::from_value(Value::Mapping(rest)).map_err(adapter_error)?)
        }
        other => {
            return Err(invalid(format!(
                "{}: unknown source type `{other}`; expected `openapi` or `mcp`",
                at("type")
            )));
        }
    };
    let name = name.unwrap_or_else(|| default_name(&upstream));
    Source::new(name, upstream, options, &at(""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_names_are_readable() {
        assert_eq!(
            command_name("npx -y @modelcontextprotocol/server-everything@2026.1.1 stdio"),
            "server-everything"
        );
        assert_eq!(command_name("/usr/bin/python3 -m server"), "server");
        assert_eq!(
            command_name("./target/debug/example-mcp-server --flag"),
            "example-mcp-server"
        );
        assert_eq!(
            last_segment("https://x.test/v1/openapi.json?x=1"),
            "openapi"
        );
        assert_eq!(last_segment("specs/petstore.yaml"), "petstore");
        assert_eq!(host("http://127.0.0.1:3001/mcp"), "127.0.0.1-3001");
    }

    #[test]
    fn file_entries_split_bridge_keys_from_adapter_keys() {
        let entries: Vec<Value> = serde_yaml::from_str(
            "- type: openapi\n  name: pets\n  spec: pets.yaml\n  base_url: http://127.0.0.1:1\n- type: mcp\n  transport:\n    type: stdio\n    command: srv --x\n",
        )
        .unwrap();
        let sources = from_file(&entries).unwrap();
        assert_eq!(sources[0].name, "pets");
        assert!(matches!(&sources[0].upstream, Upstream::OpenApi(c) if c.spec == "pets.yaml"));
        assert_eq!(sources[1].name, "srv");
        // Issue 27: `resources: tools` and `prompts: tools` are the MCP adapter's own keys.
        let entries: Vec<Value> = serde_yaml::from_str(
            "- type: mcp\n  transport: {type: stdio, command: srv}\n  resources: tools\n  prompts: tools\n",
        )
        .unwrap();
        let Upstream::Mcp(config) = &from_file(&entries).unwrap()[0].upstream else {
            panic!("not MCP")
        };
        assert_eq!(
            (config.resources, config.prompts),
            (ServeAs::Tools, ServeAs::Tools)
        );
    }

    #[test]
    fn file_errors_name_the_entry_and_key() {
        let bad = |yaml: &str| {
            from_file(&serde_yaml::from_str::<Vec<Value>>(yaml).unwrap())
                .unwrap_err()
                .to_string()
        };
        assert!(bad("- type: openapi\n  spec: a\n  colour: red\n").contains("sources[0]"));
        assert!(bad("- type: openapi\n  spec: a\n  colour: red\n").contains("colour"));
        assert!(bad("- spec: a\n").contains("missing `type`"));
        assert!(bad("- type: grpc\n").contains("unknown source type `grpc`"));
        assert!(bad("- type: mcp\n").contains("transport"));
    }

    #[test]
    fn duplicate_names_get_suffixes() {
        let flag = |t: &str| SourceFlag {
            kind: SourceKind::OpenApi,
            target: t.to_owned(),
            base_url: None,
            toolkit: None,
            version: None,
            oauth: false,
            resources: false,
            prompts: false,
        };
        let mut s = vec![
            Source::from_flag(&flag("a/pets.yaml")),
            Source::from_flag(&flag("b/pets.yaml")),
        ];
        make_names_unique(&mut s);
        assert_eq!(s[1].name, "pets-2");
    }

    /// Start-up serves a source under the policy compiled when the source was parsed: one
    /// compilation, so one semaphore holds the source's `max_concurrency`.
    #[tokio::test]
    async fn issue_8_start_up_reuses_the_policy_compiled_at_parse_time() {
        let spec = concat!(env!("CARGO_MANIFEST_DIR"), "/src/demo/openapi.yaml");
        let entries: Vec<Value> = serde_yaml::from_str(&format!(
            "- type: openapi\n  spec: '{spec}'\n  max_concurrency: 3\n"
        ))
        .unwrap();
        let source = from_file(&entries).unwrap().remove(0).for_inspection();
        let (adapters, catalog, reports) = crate::lifecycle::start::start_sources(
            std::slice::from_ref(&source),
            &BuildContext::default(),
            |_| {},
        )
        .await;
        assert!(reports[0].error.is_none(), "{:?}", reports[0].error);
        let served = &catalog.sources()[0];
        assert!(Arc::ptr_eq(&served.policy, source.policy()));
        assert!(!served.entries.is_empty());
        assert!(
            served
                .entries
                .iter()
                .all(|e| Arc::ptr_eq(&e.policy, source.policy()))
        );
        futures::future::join_all(adapters.iter().map(|a| a.shutdown())).await;
    }
}
