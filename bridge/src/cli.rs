//! Command-line flags (clap). Source flags are positional in one respect: `--toolkit`,
//! `--tool-version`, `--base-url`, `--oauth`, `--resources` and `--prompts` apply to the source flag (`--openapi`, `--mcp`,
//! `--mcp-url`, `--mcp-sse`) that precedes them, so they are read from clap's argument indices.
//!
//! These types are the binary's: the library receives the flags as plain
//! [`otc_bridge::Overrides`], so its API does not follow the command line's shape.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{ArgMatches, Args, Parser, Subcommand};

use otc_bridge::{DialectName, Expose, OnChange, Overrides, SourceFlag, SourceKind};

/// Serve MCP servers and OpenAPI services as an Open Tool Calling (OTC) tool server.
#[derive(Debug, Parser)]
#[command(name = "otc-bridge", version, about, long_about = None, args_conflicts_with_subcommands = true)]
pub(crate) struct Cli {
    /// What to do; without a command, serve.
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
    /// Serving options.
    #[command(flatten)]
    pub(crate) serve: ServeArgs,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Print the translated tool definitions (the `GET /tools` body) to stdout, diagnostics to stderr.
    Tools(InspectArgs),
    /// Print a conversion report; exit non-zero when any operation or tool was skipped.
    Check(InspectArgs),
    /// Write the translated definitions to files, for moving tools into OTC clients and for
    /// review in version control. Same input, byte-identical output.
    Export(ExportArgs),
    /// Print the native YAML configuration equivalent to an MCP host's file (the `mcpServers`
    /// JSON of Claude Desktop, Claude Code, Cursor or Windsurf, or VS Code's `servers`), which
    /// --config also reads as it is: `otc-bridge import claude_desktop_config.json > otc-bridge.yaml`.
    Import(ImportArgs),
    /// Write a lockfile pinning every served tool id to its contract (fingerprint and canonical
    /// definition), or check that the sources still match one. Serve with --lock FILE.
    Lock(LockArgs),
    /// Compare two versions of a set of tools (each a lockfile, an export, an OpenAPI document or
    /// a configuration): every changed tool with its class (patch, minor, major) and reasons.
    /// Exits 1 when anything is major, for CI.
    Diff(DiffArgs),
    /// Sign in to the MCP servers behind OAuth (--mcp-url or --mcp-sse URL --oauth, or `auth: {type: oauth}`
    /// in --config): prints the authorization URL, catches the redirect on loopback, and keeps
    /// the tokens (file mode 0600) for the bridge to use and refresh.
    Login(InspectArgs),
    /// What the configuration's policies let one caller see and call: `policy list --caller
    /// NAME` prints the tools it sees; `policy explain --caller NAME TOOL --input JSON` prints
    /// the decision for one call and what each rule made of it.
    Policy(PolicyArgs),
    /// Check an audit trail (`audit:` in the configuration): `audit verify FILE.3 FILE.2 FILE.1
    /// FILE`, oldest first, names the first line that was changed, removed or inserted.
    Audit(AuditArgs),
    /// Serve the catalog to an MCP host over stdio (for hosts that spawn a command, e.g.
    /// Claude Desktop or Cursor): three meta-tools, search_tools, read_tool and call_tool, or
    /// every tool with --mcp-expose all. Logs go to stderr; stdout carries MCP only.
    Mcp(McpArgs),
    /// Start a built-in demo: a REST service with its OpenAPI document and an MCP server, both
    /// shipped in this binary, with the bridge in front of both. No network needed.
    Demo(DemoArgs),
    /// The demo's MCP server on stdio (spawned by `demo` as a real child process).
    #[command(hide = true)]
    DemoMcpServer,
}

/// The dialect names of `--dialect` (clap's side of [`DialectName`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum DialectArg {
    /// OTC 1.0 (`otc://1.0`, list key `tools`).
    Otc,
    /// OXP 1.0 (`urn:oxp:1.0`, list key `items`) — what the `oxp` Python SDK speaks.
    Oxp,
}

impl From<DialectArg> for DialectName {
    fn from(arg: DialectArg) -> Self {
        match arg {
            DialectArg::Otc => Self::Otc,
            DialectArg::Oxp => Self::Oxp,
        }
    }
}

/// What `--mcp-expose` accepts (clap's side of [`Expose`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ExposeArg {
    /// search_tools, read_tool and call_tool only: three tools whatever the catalog's size.
    Meta,
    /// The meta-tools and every catalog tool, named by its OTC name.
    All,
}

impl From<ExposeArg> for Expose {
    fn from(arg: ExposeArg) -> Self {
        match arg {
            ExposeArg::Meta => Self::Meta,
            ExposeArg::All => Self::All,
        }
    }
}

/// Options of `mcp`.
#[derive(Debug, Clone, Args)]
pub(crate) struct McpArgs {
    /// YAML configuration file, or an MCP host's (`mcpServers` or VS Code `servers` JSON).
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// What the host sees [default: meta].
    #[arg(long, value_enum)]
    pub(crate) mcp_expose: Option<ExposeArg>,
    /// A sentence-embedding model's directory for semantic tool search (install one with
    /// scripts/install-search-model.sh); without one, search is lexical.
    #[arg(long, value_name = "DIR")]
    pub(crate) search_model: Option<PathBuf>,
    /// Log filter, for the log on stderr [default: info].
    #[arg(long, value_name = "FILTER")]
    pub(crate) log_level: Option<String>,
    /// Per-call timeout in seconds [default: 60].
    #[arg(long, value_name = "SECS")]
    pub(crate) call_timeout_secs: Option<u64>,
    /// Serve the sources that started even when others failed.
    #[arg(long)]
    pub(crate) allow_partial: bool,
    /// The lockfile and what a change does.
    #[command(flatten)]
    pub(crate) lock: LockFlags,
    /// Sources.
    #[command(flatten)]
    pub(crate) sources: SourceArgs,
}

impl McpArgs {
    /// The flags as the library's [`Overrides`].
    pub(crate) fn overrides(&self, matches: &ArgMatches) -> Result<Overrides, FlagError> {
        Ok(Overrides {
            log_filter: self.log_level.clone(),
            call_timeout_secs: self.call_timeout_secs,
            allow_partial: self.allow_partial,
            mcp_expose: self.mcp_expose.map(Into::into),
            search_model: self.search_model.clone(),
            lock: self.lock.lock.clone(),
            on_change: self.lock.on_change(),
            sources: source_flags(matches)?,
            ..Overrides::default()
        })
    }
}

/// `--lock` and `--on-change`, shared by `serve` and `mcp`.
#[derive(Debug, Clone, Args)]
pub(crate) struct LockFlags {
    /// Serve each tool id as this lockfile (`otc-bridge lock`) locked it.
    #[arg(long, value_name = "FILE")]
    pub(crate) lock: Option<PathBuf>,
    /// With --lock, what a tool that changed upstream since it was locked does: served at the
    /// next version of its change (bump), under its locked version with a warning (warn), or
    /// not at all until the lock is updated (refuse) [default: bump].
    #[arg(long, value_enum)]
    pub(crate) on_change: Option<OnChangeArg>,
}

impl LockFlags {
    /// `--on-change` as the library's [`OnChange`].
    fn on_change(&self) -> Option<OnChange> {
        self.on_change.map(Into::into)
    }
}

/// Options of `import`.
#[derive(Debug, Clone, Args)]
pub(crate) struct ImportArgs {
    /// The host's file, e.g. claude_desktop_config.json, .mcp.json, .cursor/mcp.json,
    /// .vscode/mcp.json.
    #[arg(value_name = "FILE")]
    pub(crate) file: PathBuf,
}

/// Options of `lock`.
#[derive(Debug, Clone, Args)]
pub(crate) struct LockArgs {
    /// The lockfile to write (or check against).
    #[arg(long, value_name = "FILE", default_value = "otc-bridge.lock")]
    pub(crate) lock: PathBuf,
    /// Rewrite an existing lockfile with what the sources serve now (after review); without it
    /// a lockfile that no longer matches is left as it is and the command fails.
    #[arg(long)]
    pub(crate) update: bool,
    /// Inspection options (sources, config).
    #[command(flatten)]
    pub(crate) inspect: InspectArgs,
}

/// Options of `diff`.
#[derive(Debug, Clone, Args)]
pub(crate) struct DiffArgs {
    /// The old side: a lockfile, an export, an OpenAPI document or an otc-bridge configuration.
    pub(crate) old: String,
    /// The new side, of any of the same kinds.
    pub(crate) new: String,
    /// List a configuration side's sources even when that starts a process (an MCP server over
    /// stdio) or contacts a URL (an MCP server over HTTP, a document fetched over HTTP). Without
    /// it `diff` reads files only, so it is safe on a pull request's files; a side that needs
    /// more is an error naming this flag.
    #[arg(long)]
    pub(crate) start_sources: bool,
}

/// What `--on-change` accepts (clap's side of [`OnChange`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum OnChangeArg {
    /// Serve the changed tool at the next version of its change (patch, minor or major).
    Bump,
    /// Serve it under its locked version, with a warning in the log and in /health.
    Warn,
    /// Do not serve it until the lock is updated.
    Refuse,
}

impl From<OnChangeArg> for OnChange {
    fn from(arg: OnChangeArg) -> Self {
        match arg {
            OnChangeArg::Bump => Self::Bump,
            OnChangeArg::Warn => Self::Warn,
            OnChangeArg::Refuse => Self::Refuse,
        }
    }
}

/// Options of `export`.
#[derive(Debug, Clone, Args)]
pub(crate) struct ExportArgs {
    /// Where to write: a file (one `GET /tools` body), or with --split a directory (one file per
    /// toolkit, `<Toolkit>.json`).
    #[arg(long, value_name = "PATH")]
    pub(crate) out: PathBuf,
    /// One file per toolkit instead of one document.
    #[arg(long)]
    pub(crate) split: bool,
    /// Inspection options (sources, config, dialect).
    #[command(flatten)]
    pub(crate) inspect: InspectArgs,
}

/// Options of `demo`.
#[derive(Debug, Clone, Args)]
pub(crate) struct DemoArgs {
    /// Address the bridge listens on.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    pub(crate) listen: SocketAddr,
    /// Dialect of responses when a request carries no signal [default: otc].
    #[arg(long, value_enum)]
    pub(crate) dialect: Option<DialectArg>,
}

/// Options of the server.
#[derive(Debug, Clone, Args)]
pub(crate) struct ServeArgs {
    /// Address to listen on [default: 127.0.0.1:8080].
    #[arg(long, value_name = "ADDR")]
    pub(crate) listen: Option<SocketAddr>,
    /// Dialect of responses when a request carries no signal [default: otc].
    #[arg(long, value_enum)]
    pub(crate) dialect: Option<DialectArg>,
    /// YAML configuration file, or an MCP host's (`mcpServers` or VS Code `servers` JSON).
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Log filter (error, warn, info, debug, trace, or a tracing directive) [default: info].
    #[arg(long, value_name = "FILTER")]
    pub(crate) log_level: Option<String>,
    /// Require HS256 JWT bearer tokens signed with the secret in this environment variable.
    #[arg(long, value_name = "VAR")]
    pub(crate) jwt_secret_env: Option<String>,
    /// Accepted JWT audience (repeatable); tokens must carry one of them.
    #[arg(long, value_name = "AUD")]
    pub(crate) jwt_audience: Vec<String>,
    /// Accept API keys listed (comma-separated) in this environment variable.
    #[arg(long, value_name = "VAR")]
    pub(crate) api_keys_env: Option<String>,
    /// Accept API keys listed (one per line) in this file.
    #[arg(long, value_name = "FILE")]
    pub(crate) api_keys_file: Option<PathBuf>,
    /// Largest request body in bytes [default: 1048576].
    #[arg(long, value_name = "BYTES")]
    pub(crate) max_body_bytes: Option<usize>,
    /// Per-call timeout in seconds [default: 60].
    #[arg(long, value_name = "SECS")]
    pub(crate) call_timeout_secs: Option<u64>,
    /// Serve the sources that started even when others failed (by default the bridge refuses
    /// to start half-configured).
    #[arg(long)]
    pub(crate) allow_partial: bool,
    /// A web origin allowed to call the bridge from a browser (repeatable), e.g.
    /// https://app.example.com; other cross-site requests are refused with 403.
    #[arg(long, value_name = "ORIGIN")]
    pub(crate) allow_origin: Vec<String>,
    /// A further Host name accepted while listening on loopback (repeatable), e.g. the name a
    /// reverse proxy forwards; other names are refused (DNS rebinding).
    #[arg(long, value_name = "NAME")]
    pub(crate) allow_host: Vec<String>,
    /// What MCP hosts see at POST /mcp: the three meta-tools, or all tools too [default: meta].
    #[arg(long, value_enum)]
    pub(crate) mcp_expose: Option<ExposeArg>,
    /// A sentence-embedding model's directory for semantic tool search (install one with
    /// scripts/install-search-model.sh); without one, search is lexical.
    #[arg(long, value_name = "DIR")]
    pub(crate) search_model: Option<PathBuf>,
    /// Reload when the --config file changes (as on SIGHUP): new sources start, removed ones
    /// stop, unchanged ones keep running untouched.
    #[arg(long)]
    pub(crate) watch: bool,
    /// The URL the bridge is reached at, when not http://LISTEN (behind a reverse proxy):
    /// where people return after signing in for a per-caller OAuth source.
    #[arg(long, value_name = "URL")]
    pub(crate) public_url: Option<String>,
    /// The lockfile and what a change does.
    #[command(flatten)]
    pub(crate) lock: LockFlags,
    /// Sources.
    #[command(flatten)]
    pub(crate) sources: SourceArgs,
}

impl ServeArgs {
    /// The flags as the library's [`Overrides`]; `matches` gives the source flags' order.
    pub(crate) fn overrides(self, matches: &ArgMatches) -> Result<Overrides, FlagError> {
        Ok(Overrides {
            listen: self.listen,
            dialect: self.dialect.map(Into::into),
            log_filter: self.log_level,
            jwt_secret_env: self.jwt_secret_env,
            jwt_audience: self.jwt_audience,
            api_keys_env: self.api_keys_env,
            api_keys_file: self.api_keys_file,
            max_body_bytes: self.max_body_bytes,
            call_timeout_secs: self.call_timeout_secs,
            allow_partial: self.allow_partial,
            allow_origins: self.allow_origin,
            allow_hosts: self.allow_host,
            mcp_expose: self.mcp_expose.map(Into::into),
            search_model: self.search_model,
            public_url: self.public_url,
            on_change: self.lock.on_change(),
            lock: self.lock.lock,
            sources: source_flags(matches)?,
        })
    }
}

/// `audit`'s subcommands.
#[derive(Debug, Clone, Args)]
pub(crate) struct AuditArgs {
    /// What to do.
    #[command(subcommand)]
    pub(crate) command: AuditCommand,
}

/// `audit verify`.
#[derive(Debug, Clone, Subcommand)]
pub(crate) enum AuditCommand {
    /// Check the hash chain of a trail across its files; exit 1 at the first line changed,
    /// removed or inserted.
    Verify {
        /// The trail's files in the order they were written: the oldest rotated file first.
        #[arg(value_name = "FILE", required = true)]
        files: Vec<PathBuf>,
        /// The environment variable holding the trail's key, when `audit.key_env` was set.
        #[arg(long, value_name = "VAR")]
        key_env: Option<String>,
    },
}

/// `policy`'s subcommands.
#[derive(Debug, Clone, Args)]
pub(crate) struct PolicyArgs {
    /// What to show.
    #[command(subcommand)]
    pub(crate) command: PolicyCommand,
}

/// `policy explain` and `policy list`.
#[derive(Debug, Clone, Subcommand)]
pub(crate) enum PolicyCommand {
    /// The decision for one call (exit 1 when it would not be allowed), the rule that made it,
    /// and what each rule made of it.
    Explain(ExplainArgs),
    /// The tool ids the caller may see, one per line.
    List(WhoArgs),
}

/// Who asks, and the sources to ask about.
#[derive(Debug, Clone, Args)]
pub(crate) struct WhoArgs {
    /// The caller's name (a named API key's, a JWT's `sub`, or `mcp.caller`'s); the groups the
    /// configuration gives that name are its groups.
    #[arg(long, value_name = "NAME")]
    pub(crate) caller: String,
    /// A further group (repeatable).
    #[arg(long = "group", value_name = "GROUP")]
    pub(crate) groups: Vec<String>,
    /// The caller's JWT claims, as a JSON object; the configured group claims among them are
    /// groups too.
    #[arg(long, value_name = "JSON")]
    pub(crate) claims: Option<String>,
    /// The configuration and sources.
    #[command(flatten)]
    pub(crate) inspect: InspectArgs,
}

/// `policy explain`.
#[derive(Debug, Clone, Args)]
pub(crate) struct ExplainArgs {
    /// The tool id, with or without `@version`.
    #[arg(value_name = "TOOL")]
    pub(crate) tool: String,
    /// The call's arguments, as a JSON object (conditions read them).
    #[arg(long, value_name = "JSON")]
    pub(crate) input: Option<String>,
    /// Who asks.
    #[command(flatten)]
    pub(crate) who: WhoArgs,
}

/// Options of `tools` and `check`.
#[derive(Debug, Clone, Args)]
pub(crate) struct InspectArgs {
    /// YAML configuration file, or an MCP host's (`mcpServers` or VS Code `servers` JSON); its
    /// sources are used.
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Dialect to print definitions in [default: otc].
    #[arg(long, value_enum)]
    pub(crate) dialect: Option<DialectArg>,
    /// Sources.
    #[command(flatten)]
    pub(crate) sources: SourceArgs,
}

impl InspectArgs {
    /// The flags as the library's [`Overrides`] (sources and dialect only).
    pub(crate) fn overrides(&self, matches: &ArgMatches) -> Result<Overrides, FlagError> {
        Ok(Overrides {
            dialect: self.dialect.map(Into::into),
            sources: source_flags(matches)?,
            ..Overrides::default()
        })
    }
}

/// Source flags (repeatable, any mix).
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct SourceArgs {
    /// An OpenAPI document (Swagger 2.0, OpenAPI 3.0/3.1; JSON or YAML; file path or http(s) URL).
    #[arg(long, value_name = "PATH_OR_URL")]
    pub(crate) openapi: Vec<String>,
    /// An MCP server to spawn over stdio, as a command line: "npx -y some-server --flag".
    #[arg(long, value_name = "COMMAND")]
    pub(crate) mcp: Vec<String>,
    /// An MCP server over streamable HTTP.
    #[arg(long, value_name = "URL")]
    pub(crate) mcp_url: Vec<String>,
    /// An MCP server over the legacy HTTP+SSE transport.
    #[arg(long, value_name = "URL")]
    pub(crate) mcp_sse: Vec<String>,
    /// Base URL of the preceding --openapi source (overrides the document's servers).
    #[arg(long, value_name = "URL")]
    pub(crate) base_url: Vec<String>,
    /// Toolkit name of the preceding source.
    #[arg(long, value_name = "NAME")]
    pub(crate) toolkit: Vec<String>,
    /// Version (x.y.z) of the preceding source's tools.
    #[arg(long, value_name = "X.Y.Z")]
    pub(crate) tool_version: Vec<String>,
    /// The preceding --mcp-url or --mcp-sse source is behind OAuth 2.1: sign in once with `otc-bridge login`
    /// (the tokens are kept in the per-user config directory). More settings in --config.
    #[arg(long, num_args = 0, default_missing_value = "true")]
    pub(crate) oauth: Vec<String>,
    /// `tools`: the preceding MCP source's resources are served as tools too (ListResources,
    /// ReadResource, ReadResourceTemplate), as `resources: tools` in --config.
    #[arg(long, value_name = "tools", value_parser = ["tools"])]
    pub(crate) resources: Vec<String>,
    /// `tools`: each of the preceding MCP source's prompts is served as a tool too
    /// (Prompt<Name>), as `prompts: tools` in --config.
    #[arg(long, value_name = "tools", value_parser = ["tools"])]
    pub(crate) prompts: Vec<String>,
}

/// Reads the source flags of `matches` in command-line order, attaching each modifier to the
/// source before it.
/// A source modifier flag in the wrong place; clap cannot tell, as the order of flags is ours.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum FlagError {
    /// A modifier before any source.
    #[error(
        "{flag} must follow the source it applies to (--openapi, --mcp, --mcp-url or --mcp-sse)"
    )]
    NoSource {
        /// The flag, e.g. `--toolkit`.
        flag: String,
    },
    /// A modifier after a source of a kind it does not apply to.
    #[error("{flag} applies to {kinds} sources only, not to '{target}'")]
    WrongKind {
        /// The flag.
        flag: &'static str,
        /// The kinds it applies to.
        kinds: &'static str,
        /// The source it follows.
        target: String,
    },
    /// A modifier given twice for one source.
    #[error("{flag} is given twice for '{target}'")]
    Twice {
        /// The flag.
        flag: String,
        /// The source.
        target: String,
    },
}

pub(crate) fn source_flags(matches: &ArgMatches) -> Result<Vec<SourceFlag>, FlagError> {
    let mut events: Vec<(usize, &str, String)> = Vec::new();
    for id in [
        "openapi",
        "mcp",
        "mcp_url",
        "mcp_sse",
        "base_url",
        "toolkit",
        "tool_version",
        "oauth",
        "resources",
        "prompts",
    ] {
        let (Some(indices), Some(values)) =
            (matches.indices_of(id), matches.get_many::<String>(id))
        else {
            continue;
        };
        events.extend(indices.zip(values).map(|(i, v)| (i, id, v.clone())));
    }
    events.sort_by_key(|(i, _, _)| *i);
    let mut sources: Vec<SourceFlag> = Vec::new();
    for (_, id, value) in events {
        let kind = match id {
            "openapi" => Some(SourceKind::OpenApi),
            "mcp" => Some(SourceKind::McpStdio),
            "mcp_url" => Some(SourceKind::McpHttp),
            "mcp_sse" => Some(SourceKind::McpSse),
            _ => None,
        };
        if let Some(kind) = kind {
            sources.push(SourceFlag {
                kind,
                target: value,
                base_url: None,
                toolkit: None,
                version: None,
                oauth: false,
                resources: false,
                prompts: false,
            });
            continue;
        }
        let flag = format!("--{}", id.replace('_', "-"));
        let Some(last) = sources.last_mut() else {
            return Err(FlagError::NoSource { flag });
        };
        if id == "oauth" {
            if !matches!(last.kind, SourceKind::McpHttp | SourceKind::McpSse) {
                return Err(FlagError::WrongKind {
                    flag: "--oauth",
                    kinds: "--mcp-url and --mcp-sse",
                    target: last.target.clone(),
                });
            }
            last.oauth = true;
            continue;
        }
        if id == "resources" || id == "prompts" {
            if last.kind == SourceKind::OpenApi {
                return Err(FlagError::WrongKind {
                    flag: if id == "resources" {
                        "--resources"
                    } else {
                        "--prompts"
                    },
                    kinds: "--mcp, --mcp-url and --mcp-sse",
                    target: last.target.clone(),
                });
            }
            let slot = if id == "resources" {
                &mut last.resources
            } else {
                &mut last.prompts
            };
            if *slot {
                return Err(FlagError::Twice {
                    flag,
                    target: last.target.clone(),
                });
            }
            *slot = true;
            continue;
        }
        let slot = match id {
            "base_url" if last.kind != SourceKind::OpenApi => {
                return Err(FlagError::WrongKind {
                    flag: "--base-url",
                    kinds: "--openapi",
                    target: last.target.clone(),
                });
            }
            "base_url" => &mut last.base_url,
            "toolkit" => &mut last.toolkit,
            _ => &mut last.version,
        };
        if slot.is_some() {
            return Err(FlagError::Twice {
                flag,
                target: last.target.clone(),
            });
        }
        *slot = Some(value);
    }
    Ok(sources)
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, FromArgMatches};

    use super::*;

    fn parse(args: &[&str]) -> Result<Vec<SourceFlag>, String> {
        let matches = Cli::command()
            .try_get_matches_from(args)
            .map_err(|e| e.to_string())?;
        let cli = Cli::from_arg_matches(&matches).map_err(|e| e.to_string())?;
        assert!(cli.command.is_none());
        source_flags(&matches).map_err(|e| e.to_string())
    }

    #[test]
    fn modifiers_apply_to_the_source_before_them() {
        let s = parse(&[
            "otc-bridge",
            "--openapi",
            "a.yaml",
            "--toolkit",
            "Pets",
            "--base-url",
            "http://x",
            "--mcp",
            "npx srv",
            "--tool-version",
            "2.0.0",
            "--openapi",
            "b.json",
        ])
        .unwrap();
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].toolkit.as_deref(), Some("Pets"));
        assert_eq!(s[0].base_url.as_deref(), Some("http://x"));
        assert_eq!(s[1].kind, SourceKind::McpStdio);
        assert_eq!(s[1].version.as_deref(), Some("2.0.0"));
        assert_eq!(s[2].toolkit, None);
    }

    #[test]
    fn oauth_marks_the_remote_mcp_source_before_it() {
        let s = parse(&[
            "otc-bridge",
            "--mcp-url",
            "http://a/mcp",
            "--oauth",
            "--mcp-url",
            "http://b/mcp",
            "--mcp-sse",
            "http://c/sse",
            "--oauth",
        ])
        .unwrap();
        assert_eq!((s[0].oauth, s[1].oauth, s[2].oauth), (true, false, true));
        assert!(
            parse(&["otc-bridge", "--oauth", "--mcp-url", "http://a/mcp"])
                .unwrap_err()
                .contains("must follow")
        );
        assert!(
            parse(&["otc-bridge", "--mcp", "srv", "--oauth"])
                .unwrap_err()
                .contains("--mcp-url and --mcp-sse sources only")
        );
    }

    /// Issue 27: `--resources tools` and `--prompts tools` follow an MCP source.
    #[test]
    fn resources_and_prompts_mark_the_mcp_source_before_them() {
        let s = parse(&[
            "otc-bridge",
            "--mcp",
            "srv",
            "--resources",
            "tools",
            "--prompts",
            "tools",
            "--mcp-url",
            "http://b/mcp",
            "--prompts",
            "tools",
        ])
        .unwrap();
        assert_eq!((s[0].resources, s[0].prompts), (true, true));
        assert_eq!((s[1].resources, s[1].prompts), (false, true));
        assert!(
            parse(&["otc-bridge", "--openapi", "a", "--resources", "tools"])
                .unwrap_err()
                .contains("--mcp, --mcp-url and --mcp-sse sources only")
        );
        assert!(parse(&["otc-bridge", "--mcp", "srv", "--resources", "yes"]).is_err());
    }

    #[test]
    fn misplaced_modifiers_are_errors() {
        assert!(
            parse(&["otc-bridge", "--toolkit", "X", "--openapi", "a"])
                .unwrap_err()
                .contains("must follow")
        );
        assert!(
            parse(&["otc-bridge", "--mcp", "x", "--base-url", "http://y"])
                .unwrap_err()
                .contains("--openapi sources only")
        );
        assert!(
            parse(&[
                "otc-bridge",
                "--openapi",
                "a",
                "--toolkit",
                "X",
                "--toolkit",
                "Y"
            ])
            .unwrap_err()
            .contains("twice")
        );
    }

    /// Every serving flag reaches the library's `Overrides`, sources in command-line order.
    #[test]
    fn issue_8_serve_flags_become_overrides() {
        let args = [
            "otc-bridge",
            "--listen",
            "127.0.0.1:9",
            "--dialect",
            "oxp",
            "--log-level",
            "debug",
            "--jwt-secret-env",
            "S",
            "--jwt-audience",
            "a",
            "--api-keys-env",
            "K",
            "--max-body-bytes",
            "5",
            "--call-timeout-secs",
            "7",
            "--allow-partial",
            "--mcp",
            "srv",
            "--openapi",
            "a.yaml",
        ];
        let matches = Cli::command().try_get_matches_from(args).unwrap();
        let cli = Cli::from_arg_matches(&matches).unwrap();
        let o = cli.serve.overrides(&matches).unwrap();
        assert_eq!(o.listen, Some("127.0.0.1:9".parse().unwrap()));
        assert_eq!(o.dialect, Some(DialectName::Oxp));
        assert_eq!(o.log_filter.as_deref(), Some("debug"));
        assert_eq!(o.jwt_secret_env.as_deref(), Some("S"));
        assert_eq!(o.jwt_audience, ["a"]);
        assert_eq!(o.api_keys_env.as_deref(), Some("K"));
        assert_eq!((o.max_body_bytes, o.call_timeout_secs), (Some(5), Some(7)));
        assert!(o.allow_partial);
        let kinds: Vec<SourceKind> = o.sources.iter().map(|s| s.kind).collect();
        assert_eq!(kinds, [SourceKind::McpStdio, SourceKind::OpenApi]);
    }
}
