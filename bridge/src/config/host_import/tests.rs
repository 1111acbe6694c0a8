use std::collections::BTreeMap;

use otc_adapters::mcp::{EnvValueConfig, HeaderValueConfig, McpConfig, McpTransportConfig};

use super::*;
use crate::config::sources::{Source, Upstream};
use crate::config::{Config, FileConfig, Overrides, parse_yaml};

/// A fixed environment, so the tests do not depend on the machine's.
fn env(name: &str) -> Option<String> {
    match name {
        "HOME" => Some("/home/ada".to_owned()),
        "API_KEY" => Some("k-123".to_owned()),
        "API_BASE_URL" => Some("https://api.example.com".to_owned()),
        "EMPTY" => Some(String::new()),
        _ => None,
    }
}

fn import(text: &str, origin: &str) -> Imported {
    read_with(text, Path::new(origin), &env)
        .unwrap()
        .expect("a host file")
}

fn error(text: &str) -> String {
    read_with(text, Path::new("mcp.json"), &env)
        .unwrap_err()
        .to_string()
}

/// The sources an import gives, as the bridge resolves them.
fn sources(imported: &Imported) -> Vec<Source> {
    Config::resolve(FileConfig::from(imported.clone()), Overrides::default())
        .unwrap()
        .sources
}

fn mcp(source: &Source) -> &McpConfig {
    match &source.upstream {
        Upstream::Mcp(config) => config,
        Upstream::OpenApi(_) => panic!("not MCP: {source:?}"),
    }
}

fn strings(pairs: &[(&str, &str)]) -> BTreeMap<String, EnvValueConfig> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), EnvValueConfig::from(*v)))
        .collect()
}

/// As written by Claude Desktop's "Edit Config": stdio servers only, with `env`.
const CLAUDE_DESKTOP: &str = r#"{
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/ada/Desktop"]
    },
    "github": {
      "command": "/Applications/My Tools/github-mcp",
      "args": ["stdio"],
      "env": { "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_literal", "PORT": 8080 }
    }
  },
  "globalShortcut": "Ctrl+Space"
}"#;

#[test]
fn claude_desktop_servers_become_stdio_sources_named_by_their_keys() {
    let imported = import(CLAUDE_DESKTOP, "claude_desktop_config.json");
    assert_eq!(imported.format, HostFormat::McpServers);
    assert_eq!(imported.warnings, ["top-level `globalShortcut` ignored"]);
    let sources = sources(&imported);
    let names: Vec<&str> = sources.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["filesystem", "github"]);
    assert_eq!(mcp(&sources[1]).toolkit.as_deref(), Some("github"));
    assert_eq!(
        mcp(&sources[1]).transport,
        McpTransportConfig::Stdio {
            // A program path is one word, spaces and all, as the host runs it.
            command: "'/Applications/My Tools/github-mcp'".to_owned(),
            args: vec!["stdio".to_owned()],
            env: strings(&[
                ("GITHUB_PERSONAL_ACCESS_TOKEN", "ghp_literal"),
                ("PORT", "8080")
            ]),
            inherit_env: false,
            cwd: None,
        }
    );
    let McpTransportConfig::Stdio { command, args, .. } = &mcp(&sources[0]).transport else {
        panic!("not stdio")
    };
    assert_eq!(
        (command.as_str(), args.len()),
        ("npx", 3),
        "arguments stay separate words"
    );
}

#[test]
fn cursor_url_servers_are_streamable_http_and_unknown_fields_are_warnings() {
    let imported = import(
        r#"{"mcpServers": {
            "remote": {"url": "http://127.0.0.1:3000/mcp", "headers": {"X-Team": "blue"}, "alwaysAllow": ["x"], "timeout": 30},
            "local": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}, "autoApprove": [], "disabled": false}
        }}"#,
        ".cursor/mcp.json",
    );
    assert_eq!(
        imported.warnings,
        [
            "server `remote`: `alwaysAllow` ignored",
            "server `remote`: `timeout` ignored",
            "server `local`: `autoApprove` ignored",
        ]
    );
    let sources = sources(&imported);
    assert_eq!(
        mcp(&sources[0]).transport,
        McpTransportConfig::StreamableHttp {
            url: "http://127.0.0.1:3000/mcp".to_owned(),
            headers: [(
                "X-Team".to_owned(),
                HeaderValueConfig::Value("blue".to_owned())
            )]
            .into(),
        }
    );
    assert!(matches!(
        mcp(&sources[1]).transport,
        McpTransportConfig::Stdio { .. }
    ));
}

#[test]
fn windsurf_server_url_and_sse_type() {
    let imported = import(
        r#"{"mcpServers": {
            "wind": {"serverUrl": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${env:API_KEY}"}},
            "old": {"type": "sse", "url": "http://127.0.0.1:1/sse"}
        }}"#,
        "mcp_config.json",
    );
    assert!(imported.warnings.is_empty(), "{:?}", imported.warnings);
    let sources = sources(&imported);
    assert_eq!(
        mcp(&sources[0]).transport,
        McpTransportConfig::StreamableHttp {
            url: "https://mcp.example.com/mcp".to_owned(),
            headers: [(
                "Authorization".to_owned(),
                HeaderValueConfig::Template("Bearer ${API_KEY}".to_owned())
            )]
            .into(),
        }
    );
    assert!(matches!(
        &mcp(&sources[1]).transport,
        McpTransportConfig::Sse { url, .. } if url == "http://127.0.0.1:1/sse"
    ));
    // The variable behind a header is a secret: no child inherits it.
    let config = Config::resolve(FileConfig::from(imported), Overrides::default()).unwrap();
    assert!(config.secret_env.contains("API_KEY"));
}

#[test]
fn claude_code_http_type_and_variables_with_defaults() {
    let imported = import(
        r#"{"mcpServers": {
            "api": {
                "type": "http",
                "url": "${API_BASE_URL:-https://fallback.example.com}/mcp",
                "headers": {"Authorization": "${API_KEY}", "X-Region": "${REGION:-eu}", "X-Both": "${API_KEY}:${OTHER}"}
            },
            "tool": {
                "type": "stdio",
                "command": "${HOME}/bin/tool",
                "args": ["--root", "${ROOT:-/srv}", "${EMPTY:-dflt}"],
                "env": {"KEY": "${API_KEY}"}
            }
        }}"#,
        ".mcp.json",
    );
    let sources = sources(&imported);
    assert_eq!(
        mcp(&sources[0]).transport,
        McpTransportConfig::StreamableHttp {
            url: "https://api.example.com/mcp".to_owned(),
            headers: [
                (
                    "Authorization".to_owned(),
                    HeaderValueConfig::Env("API_KEY".to_owned())
                ),
                (
                    "X-Region".to_owned(),
                    HeaderValueConfig::Value("eu".to_owned())
                ),
                (
                    "X-Both".to_owned(),
                    HeaderValueConfig::Template("${API_KEY}:${OTHER}".to_owned())
                ),
            ]
            .into(),
        }
    );
    assert_eq!(
        mcp(&sources[1]).transport,
        McpTransportConfig::Stdio {
            command: "/home/ada/bin/tool".to_owned(),
            args: vec!["--root".to_owned(), "/srv".to_owned(), "dflt".to_owned()],
            // A reference stays one, read at start-up like a header's.
            env: [(
                "KEY".to_owned(),
                EnvValueConfig::Reference(HeaderValueConfig::Env("API_KEY".to_owned()))
            )]
            .into(),
            inherit_env: false,
            cwd: None,
        }
    );
    assert_eq!(
        imported.substituted,
        [
            "server `api`: `url` holds the value of $API_BASE_URL",
            "server `tool`: `command` holds the value of $HOME",
        ]
    );
    // A variable that is not set, and has no default, outside headers: named.
    let err = error(r#"{"mcpServers": {"x": {"command": "srv", "args": ["${NOPE}"]}}}"#);
    assert!(
        err.contains("server `x`") && err.contains("args[0]") && err.contains("NOPE"),
        "{err}"
    );
}

#[test]
fn vs_code_servers_with_inputs() {
    let text = r#"{
  // VS Code writes comments here
  "inputs": [{"type": "promptString", "id": "token", "description": "API token", "password": true}],
  "servers": {
    "time": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time"], "cwd": "${workspaceFolder}/tools", "envFile": "${workspaceFolder}/.env"},
    "remote": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer ${env:API_KEY}"}},
  },
}"#;
    let imported = import(text, "/work/project/.vscode/mcp.json");
    assert_eq!(imported.format, HostFormat::VsCode);
    assert_eq!(imported.warnings, ["server `time`: `envFile` ignored"]);
    let sources = sources(&imported);
    let McpTransportConfig::Stdio { cwd, .. } = &mcp(&sources[0]).transport else {
        panic!("not stdio")
    };
    assert_eq!(
        cwd.as_deref(),
        Some(Path::new("/work/project/tools")),
        "the workspace holds .vscode/"
    );
    assert!(matches!(
        mcp(&sources[1]).transport,
        McpTransportConfig::StreamableHttp { .. }
    ));
    // `${input:…}` is a VS Code prompt: a clear error naming the server and field.
    let err = error(
        r#"{"inputs": [{"id": "pat"}], "servers": {"gh": {"type": "http", "url": "https://x/mcp", "headers": {"Authorization": "Bearer ${input:pat}"}}}}"#,
    );
    assert!(
        err.contains("server `gh`")
            && err.contains("headers.Authorization")
            && err.contains("`pat`")
            && err.contains("${env:NAME}"),
        "{err}"
    );
}

#[test]
fn disabled_servers_are_skipped_and_reported() {
    let imported = import(
        r#"{"mcpServers": {"off": {"command": "srv", "disabled": true}, "on": {"command": "srv"}}}"#,
        "mcp.json",
    );
    assert_eq!(imported.warnings, ["server `off`: disabled, skipped"]);
    let names: Vec<String> = sources(&imported).into_iter().map(|s| s.name).collect();
    assert_eq!(names, ["on"]);
}

#[test]
fn native_files_and_other_documents_are_not_host_files() {
    let none = |text: &str| read_with(text, Path::new("x"), &env).unwrap();
    assert!(none("sources:\n  - type: mcp\n").is_none());
    assert!(none("listen: 127.0.0.1:1\n").is_none());
    assert!(none(r#"{"sources": [], "mcpServers": {}}"#).is_none());
    assert!(none(r#"{"openapi": "3.0.0"}"#).is_none());
    assert!(none("not: [valid").is_none());
    // YAML with `mcpServers` is read too.
    let imported = import("mcpServers:\n  a:\n    command: srv\n", "mcp.yaml");
    assert_eq!(imported.sources.len(), 1);
}

#[test]
fn servers_that_cannot_be_read_are_errors_naming_them() {
    let cases = [
        (r#"{"mcpServers": {"a": {}}}"#, "needs `command`"),
        (
            r#"{"mcpServers": {"a": {"command": "x", "url": "http://x"}}}"#,
            "both `command` and `url`",
        ),
        (
            r#"{"mcpServers": {"a": {"type": "ws", "url": "ws://x"}}}"#,
            "unknown `type: ws`",
        ),
        (r#"{"mcpServers": {"a": {"type": "sse"}}}"#, "needs `url`"),
        (
            r#"{"mcpServers": {"a": {"command": "x", "args": "y"}}}"#,
            "`args` must be an array",
        ),
        (
            r#"{"servers": {"a": {"command": "x", "args": ["${workspaceFolderBasename}"]}}}"#,
            "only the host",
        ),
        (r#"{"mcpServers": {"": {"command": "x"}}}"#, "empty name"),
        (
            r#"{"mcpServers": {"a": {"command": "x",}}"#,
            "not valid JSON",
        ),
    ];
    for (text, expected) in cases {
        let err = error(text);
        assert!(err.contains(expected), "{text}: {err}");
    }
}

#[test]
fn jsonc_comments_and_trailing_commas_are_removed_outside_strings() {
    let text = "{\"a\": \"//not a comment, }\", /* gone */ \"b\": [1, 2,], // gone\n}";
    let doc: Json = serde_json::from_str(&strip_jsonc(text)).unwrap();
    assert_eq!(
        doc,
        serde_json::json!({"a": "//not a comment, }", "b": [1, 2]})
    );
}

/// `import` prints YAML that loads as the sources the host file gives, but for the values the
/// host file held for a child's `env` and for headers: each is a reference to a variable.
#[test]
fn imported_yaml_loads_as_the_same_sources_with_values_as_references() {
    let text = r#"{"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "server-filesystem", "/tmp/a b"], "env": {"A": "1"}, "cwd": "/tmp"},
        "api": {"type": "http", "url": "http://127.0.0.1:3000/mcp", "headers": {"Authorization": "Bearer ${API_KEY}", "X-Key": "${API_KEY}", "X-Plain": "p"}},
        "other-files": {"command": "npx", "env": {"A": "2", "GITHUB_TOKEN": "ghp_literal"}},
        "events": {"type": "sse", "url": "http://127.0.0.1:3000/sse"},
        "off": {"command": "x", "disabled": true, "alwaysAllow": []}
    }, "other": 1}"#;
    let imported = import(text, "claude_desktop_config.json");
    let written = imported
        .to_yaml(Path::new("claude_desktop_config.json"))
        .unwrap();
    let yaml = &written.text;
    assert!(
        yaml.starts_with("# otc-bridge configuration imported from claude_desktop_config.json")
    );
    for warning in &imported.warnings {
        assert!(yaml.contains(&format!("#   {warning}\n")), "{yaml}");
    }
    assert_eq!(
        written.variables,
        [
            "A: server `files`, env.A",
            "API_X_PLAIN: server `api`, headers.X-Plain",
            "OTHER_FILES_A: server `other-files`, env.A",
            "GITHUB_TOKEN: server `other-files`, env.GITHUB_TOKEN",
        ]
    );
    for secret in ["k-123", "ghp_literal", "'1'", "'2'", ": p\n"] {
        assert!(!yaml.contains(secret), "{secret} written: {yaml}");
    }
    let native: FileConfig = parse_yaml(yaml).unwrap();
    let from_yaml = Config::resolve(native, Overrides::default()).unwrap();
    let as_read = sources(&imported);
    assert_eq!(from_yaml.sources.len(), as_read.len());
    let McpTransportConfig::Stdio { env, .. } = &mcp(&from_yaml.sources[2]).transport else {
        panic!("not stdio");
    };
    let reference = |var: &str| EnvValueConfig::Reference(HeaderValueConfig::Env(var.to_owned()));
    assert_eq!(env["A"], reference("OTHER_FILES_A"));
    assert_eq!(env["GITHUB_TOKEN"], reference("GITHUB_TOKEN"));
    // What the variables name is a secret of the bridge: no child inherits it.
    for var in [
        "A",
        "OTHER_FILES_A",
        "GITHUB_TOKEN",
        "API_X_PLAIN",
        "API_KEY",
    ] {
        assert!(from_yaml.secret_env.contains(var), "{var}");
    }
}

/// Issue 25, item 10: a name from the host file written into a comment cannot end the comment
/// and add configuration of its own.
#[test]
fn names_in_comments_cannot_write_live_yaml() {
    for line_break in ["\n", "\r", "\u{85}", "\u{2028}", "\u{2029}"] {
        let name = format!("x{line_break}allow_origins: ['*']{line_break}#");
        let text =
            serde_json::json!({"mcpServers": {"s": {"command": "srv", name: true}}}).to_string();
        let written = import(&text, "mcp.json")
            .to_yaml(Path::new("mcp.json"))
            .unwrap();
        let native: FileConfig = parse_yaml(&written.text).unwrap();
        let config = Config::resolve(native, Overrides::default()).unwrap();
        assert!(
            config.settings.allowed_origins.is_empty(),
            "{line_break:?}: {}",
            written.text
        );
    }
}
