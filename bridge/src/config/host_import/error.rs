//! Why a host file cannot be imported: its own module, so the configuration's error type
//! ([`crate::config::read::ConfigError`]) can hold it without `read` and `host_import` importing
//! each other.

use otc_mappings::text::TextError;

/// Why a host file cannot be imported. Messages name the server and the field; none quotes a
/// value read from the file or the environment (they are credentials as often as not). A
/// library's error is in its variant's message, so it is not also the source.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// The text is past the bounds of any text (nesting depth, YAML aliases).
    #[error("{0}")]
    Text(TextError),
    /// A JSON object that is neither JSON, JSON with comments, nor YAML.
    #[error("not valid JSON: {0}")]
    NotJson(serde_json::Error),
    /// `mcpServers` (or `servers`) is not an object.
    #[error("`{key}` must be an object of servers")]
    NotServers {
        /// `mcpServers` or `servers`.
        key: &'static str,
    },
    /// A server's name is blank.
    #[error("`{key}` has a server with an empty name")]
    EmptyName {
        /// `mcpServers` or `servers`.
        key: &'static str,
    },
    /// A server's entry cannot be converted.
    #[error("server `{server}`: {problem}")]
    Server {
        /// The server's name.
        server: String,
        /// What is wrong with its entry.
        problem: ServerProblem,
    },
    /// The native YAML cannot be written.
    #[error("{0}")]
    Write(serde_yaml::Error),
}

/// What is wrong with one server's entry in a host file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerProblem {
    /// The entry is not an object.
    #[error("expected an object")]
    NotAnObject,
    /// Both spellings of the URL are given.
    #[error("has both `url` and `serverUrl`")]
    TwoUrls,
    /// A field that must be a string is not one.
    #[error("`{0}` must be a string")]
    NotAString(String),
    /// A field that must be an array of strings is not one.
    #[error("`{0}` must be an array of strings")]
    NotAnArray(&'static str),
    /// A field that must be an object of strings is not one.
    #[error("`{0}` must be an object of strings")]
    NotAnObjectOfStrings(&'static str),
    /// A local command and a remote URL at once.
    #[error("has both `command` and `{0}`")]
    CommandAndUrl(&'static str),
    /// Neither a command nor a URL.
    #[error("needs `command` (a local server) or `url` (a remote one)")]
    NothingToRun,
    /// `type: stdio` with a URL.
    #[error("`type: stdio` needs `command`, not a URL")]
    StdioWithUrl,
    /// A remote `type` without a URL.
    #[error("`type: {0}` needs `url`")]
    NeedsUrl(String),
    /// A `type` no host defines.
    #[error("unknown `type: {0}`; expected stdio, http, streamable-http or sse")]
    UnknownType(String),
    /// The command cannot be quoted for a shell.
    #[error("`command` holds a NUL character")]
    NulInCommand,
    /// `${input:…}`: a prompt only VS Code can show.
    #[error(
        "`{field}` asks for the input `{id}`{}, a prompt only VS Code can show; put the value in an environment variable and write ${{env:NAME}} instead",
        declared_note(.declared)
    )]
    Input {
        /// The field.
        field: String,
        /// The input's id.
        id: String,
        /// Whether the file declares `inputs`.
        declared: bool,
    },
    /// `${userHome}` without `HOME`.
    #[error("`{field}` uses ${{userHome}}, but HOME is not set")]
    NoHome {
        /// The field.
        field: String,
    },
    /// A variable only the host that wrote the file can resolve.
    #[error(
        "`{field}` uses ${{{inner}}}, which only the host that wrote this file ({host}) can resolve"
    )]
    HostVariable {
        /// The field.
        field: String,
        /// The reference, without `${` and `}`.
        inner: String,
        /// The host, described.
        host: &'static str,
    },
    /// An environment variable that is not set, without a default.
    #[error("`{field}` uses ${{{reference}}}, but the environment variable {name} is not set")]
    Unset {
        /// The field.
        field: String,
        /// The reference, without `${` and `}`.
        reference: String,
        /// The variable.
        name: String,
    },
}

/// What [`ServerProblem::Input`] adds when the file declares `inputs`.
fn declared_note(declared: &bool) -> &'static str {
    if *declared {
        " (declared in `inputs`)"
    } else {
        ""
    }
}

impl ServerProblem {
    /// This problem, in server `server`.
    pub(super) fn at(self, server: &str) -> ImportError {
        ImportError::Server {
            server: server.to_owned(),
            problem: self,
        }
    }
}
