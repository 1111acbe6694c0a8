//! The configuration files people already have: the `mcpServers` JSON of Claude Desktop, Claude
//! Code (`.mcp.json`), Cursor and Windsurf, and VS Code's `servers` (`.vscode/mcp.json`), turned
//! into the native `sources:` entries (issue 13).
//!
//! `--config` reads such a file as it is, and `otc-bridge import` prints the native YAML it
//! becomes. Both go through [`read`], which produces the same `type: mcp` entries a person would
//! write, so nothing downstream knows where a source came from. Each server is a source named by
//! its key, whose toolkit is also the key (`github` → `Github.CreateIssue`): hosts namespace tools
//! by that key, and two servers of one package (two `filesystem` roots) stay apart.
//!
//! What is read, per server: `command`, `args`, `env`, `cwd` (a child process); `url` (Windsurf:
//! `serverUrl`) and `headers` (a remote server, streamable HTTP unless `type` says `sse`); `type`;
//! `disabled: true` skips the server. Anything else (`alwaysAllow`, `autoApprove`, `timeout`,
//! `envFile`, …) is reported as ignored, never fatal: these files carry the host's own settings.
//!
//! Variables. Claude Code writes `${VAR}` and `${VAR:-default}`, Cursor, Windsurf and VS Code
//! `${env:VAR}`; they are read from the bridge's environment when the file is read, except in
//! header values, which become references (`{env: VAR}`, or `{template: "Bearer ${VAR}"}`) read at
//! start-up, so the bridge treats them as secrets: no child inherits them and they are never
//! written out by `import`. `${userHome}`, `${workspaceFolder}` and `${pathSeparator}` are VS
//! Code's and Cursor's; `${input:id}` is a prompt only VS Code can show, and is an error naming
//! the server and field. A stdio child gets the bridge's minimal environment (`PATH`, `HOME`, …)
//! plus `env`, which is what Claude Desktop gives its children too.

pub(crate) mod error;

pub use error::{ImportError, ServerProblem};

use std::path::{Path, PathBuf};

use otc_mappings::text::{self, TextError};
use serde_json::{Map, Value as Json};
use serde_yaml::{Mapping, Value};

/// The keys of the native file ([`crate::config::FileConfig`]): a document with any of them is
/// a native configuration, whatever else it holds.
const NATIVE_KEYS: &[&str] = &[
    "listen",
    "dialect",
    "log_level",
    "allow_partial",
    "allow_origins",
    "allow_hosts",
    "public_url",
    "auth",
    "limits",
    "connections",
    "mcp",
    "lock",
    "on_change",
    "sources",
];

/// The two shapes of host file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostFormat {
    /// `{"mcpServers": {…}}`: Claude Desktop, Claude Code, Cursor, Windsurf.
    McpServers,
    /// `{"servers": {…}, "inputs": […]}`: VS Code.
    VsCode,
}

impl HostFormat {
    /// Who writes files of this shape.
    pub fn describe(self) -> &'static str {
        match self {
            Self::McpServers => "`mcpServers` of Claude Desktop, Claude Code, Cursor or Windsurf",
            Self::VsCode => "VS Code `servers`",
        }
    }

    fn servers_key(self) -> &'static str {
        match self {
            Self::McpServers => "mcpServers",
            Self::VsCode => "servers",
        }
    }
}

/// A host file, converted.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// Which shape it had.
    pub format: HostFormat,
    /// One native `sources:` entry (`type: mcp`) per server that is not disabled, in file order.
    pub sources: Vec<Value>,
    /// What was ignored or skipped, one line each, naming the server and the field.
    pub warnings: Vec<String>,
    /// The fields whose value was read from the environment while converting (`env.API_KEY
    /// from ${API_KEY}`): the native file holds the value itself, so `import` says so.
    pub substituted: Vec<String>,
}

/// Whether `doc` is a host file: a mapping with `mcpServers` or `servers` and no native key.
pub fn detect(doc: &Json) -> Option<HostFormat> {
    let map = doc.as_object()?;
    if map.keys().any(|k| NATIVE_KEYS.contains(&k.as_str())) {
        return None;
    }
    if map.contains_key("mcpServers") {
        Some(HostFormat::McpServers)
    } else if map.get("servers").is_some_and(Json::is_object) {
        Some(HostFormat::VsCode)
    } else {
        None
    }
}

/// Reads `text` (the file at `origin`) as a host file, with variables from the process
/// environment; `Ok(None)` when it is not one (a native configuration). Errors name the server
/// and field.
pub fn read(text: &str, origin: &Path) -> Result<Option<Imported>, ImportError> {
    read_with(text, origin, &|name| std::env::var(name).ok())
}

/// [`read`] with the environment given as a lookup (tests).
pub(crate) fn read_with(
    text: &str,
    origin: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<Imported>, ImportError> {
    let Some(doc) = parse(text)? else {
        return Ok(None);
    };
    let Some(format) = detect(&doc) else {
        return Ok(None);
    };
    let cx = Vars {
        env,
        workspace: workspace_folder(origin),
        inputs: doc.get("inputs").is_some(),
    };
    convert(&doc, format, &cx).map(Some)
}

/// The document, if `text` is JSON (with VS Code's comments and trailing commas allowed) or YAML.
/// A JSON object that cannot be parsed is an error here, with JSON's line and column; anything
/// else that is not a document is left to the native parser to report. A text past the bounds of
/// every text (nesting depth, YAML aliases) is an error whatever it looks like.
fn parse(text: &str) -> Result<Option<Json>, ImportError> {
    // Before serde_json: a deep text it refuses would be tried as JSONC and YAML next.
    text::nesting_depth(text).map_err(ImportError::Text)?;
    if text.trim_start().starts_with('{') {
        let error = match serde_json::from_str(text) {
            Ok(doc) => return Ok(Some(doc)),
            Err(error) => error,
        };
        if let Ok(doc) = serde_json::from_str(&strip_jsonc(text)) {
            return Ok(Some(doc));
        }
        // A native file may be written as one YAML flow mapping.
        return match text::parse_value(text) {
            Ok(doc) => Ok(Some(doc)),
            Err(TextError::Parse { .. }) => Err(ImportError::NotJson(error)),
            Err(refused) => Err(ImportError::Text(refused)),
        };
    }
    match text::parse_value(text) {
        Ok(doc) => Ok(Some(doc)),
        Err(TextError::Parse { .. }) => Ok(None),
        Err(refused) => Err(ImportError::Text(refused)),
    }
}

/// Removes `//` and `/* */` comments, then commas before `}` or `]`, outside strings (JSONC,
/// what VS Code's settings files are). Line breaks are kept, so parse errors keep their lines.
fn strip_jsonc(text: &str) -> String {
    let without_comments = outside_strings(text, |c, rest, out| match (c, rest.peek()) {
        ('/', Some('/')) => while rest.next_if(|&c| c != '\n').is_some() {},
        ('/', Some('*')) => {
            rest.next();
            let mut last = ' ';
            for c in rest.by_ref() {
                if c == '\n' {
                    out.push(c);
                }
                if last == '*' && c == '/' {
                    break;
                }
                last = c;
            }
        }
        _ => out.push(c),
    });
    outside_strings(&without_comments, |c, rest, out| {
        let trailing = c == ',' && {
            let mut ahead = rest.clone();
            while ahead.next_if(|c| c.is_whitespace()).is_some() {}
            matches!(ahead.peek(), Some('}' | ']'))
        };
        if !trailing {
            out.push(c);
        }
    })
}

/// Copies `text`, giving each character outside a JSON string to `step` (with the rest of the
/// text, to look ahead or consume) instead.
fn outside_strings(
    text: &str,
    mut step: impl FnMut(char, &mut std::iter::Peekable<std::str::Chars<'_>>, &mut String),
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => out.extend(chars.next()),
                '"' => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else {
            step(c, &mut chars, &mut out);
        }
    }
    out
}

/// What `${workspaceFolder}` means for a file at `origin`: the folder holding `.vscode/` or
/// `.cursor/` when the file is in one, else the file's own folder.
fn workspace_folder(origin: &Path) -> Option<PathBuf> {
    let dir = origin.parent()?;
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    match dir.file_name().and_then(|n| n.to_str()) {
        Some(".vscode" | ".cursor") => dir.parent().map(Path::to_owned),
        _ => Some(dir.to_owned()),
    }
}

fn convert(doc: &Json, format: HostFormat, cx: &Vars<'_>) -> Result<Imported, ImportError> {
    let mut imported = Imported {
        format,
        sources: Vec::new(),
        warnings: Vec::new(),
        substituted: Vec::new(),
    };
    let top = doc.as_object().map(Map::iter).into_iter().flatten();
    for (key, _) in top {
        let known = match format {
            HostFormat::McpServers => key == "mcpServers",
            HostFormat::VsCode => key == "servers" || key == "inputs",
        };
        if !known {
            imported.warnings.push(format!("top-level `{key}` ignored"));
        }
    }
    let servers_key = format.servers_key();
    let servers = match doc.get(servers_key) {
        Some(Json::Object(servers)) => servers,
        Some(Json::Null) | None => return Ok(imported),
        Some(_) => return Err(ImportError::NotServers { key: servers_key }),
    };
    for (name, server) in servers {
        if name.trim().is_empty() {
            return Err(ImportError::EmptyName { key: servers_key });
        }
        let Json::Object(server) = server else {
            return Err(ServerProblem::NotAnObject.at(name));
        };
        if let Some(entry) = convert_server(name, server, format, cx, &mut imported)? {
            imported.sources.push(entry);
        }
    }
    Ok(imported)
}

/// The fields a server entry may have that are read (any other is reported as ignored).
const READ_FIELDS: &[&str] = &[
    "type",
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "serverUrl",
    "headers",
    "disabled",
];

fn convert_server(
    name: &str,
    server: &Map<String, Json>,
    format: HostFormat,
    cx: &Vars<'_>,
    imported: &mut Imported,
) -> Result<Option<Value>, ImportError> {
    let fail = |problem: ServerProblem| problem.at(name);
    for key in server.keys() {
        if !READ_FIELDS.contains(&key.as_str()) {
            imported
                .warnings
                .push(format!("server `{name}`: `{key}` ignored"));
        }
    }
    if server.get("disabled").and_then(Json::as_bool) == Some(true) {
        imported
            .warnings
            .push(format!("server `{name}`: disabled, skipped"));
        return Ok(None);
    }
    let field = |key: &str| server.get(key).filter(|v| !v.is_null());
    let url = match (field("url"), field("serverUrl")) {
        (Some(_), Some(_)) => return Err(fail(ServerProblem::TwoUrls)),
        (Some(url), None) => Some(("url", url)),
        (None, Some(url)) => Some(("serverUrl", url)),
        (None, None) => None,
    };
    let kind = match field("type") {
        None => None,
        Some(Json::String(kind)) => Some(kind.as_str()),
        Some(_) => return Err(fail(ServerProblem::NotAString("type".to_owned()))),
    };
    let command = field("command");
    let transport_type = match (kind, command, url) {
        (_, Some(_), Some((url_key, _))) => {
            return Err(fail(ServerProblem::CommandAndUrl(url_key)));
        }
        (Some("stdio") | None, Some(_), None) => "stdio",
        (Some("stdio") | None, None, None) => {
            return Err(fail(ServerProblem::NothingToRun));
        }
        (Some("stdio"), None, Some(_)) => {
            return Err(fail(ServerProblem::StdioWithUrl));
        }
        (
            None | Some("http" | "streamable-http" | "streamableHttp" | "streamable_http"),
            None,
            Some(_),
        ) => "streamable_http",
        (Some("sse"), None, Some(_)) => "sse",
        (
            Some("http" | "streamable-http" | "streamableHttp" | "streamable_http" | "sse"),
            _,
            None,
        ) => {
            return Err(fail(ServerProblem::NeedsUrl(
                kind.unwrap_or_default().to_owned(),
            )));
        }
        (Some(other), _, _) => {
            return Err(fail(ServerProblem::UnknownType(other.to_owned())));
        }
    };
    let at = Field {
        server: name,
        format,
    };
    let mut transport = Mapping::new();
    transport.insert("type".into(), transport_type.into());
    if let Some(command) = command {
        let command =
            scalar(command).ok_or_else(|| fail(ServerProblem::NotAString("command".to_owned())))?;
        let command = cx.expand(&at, "command", &command, imported)?;
        let quoted = shlex::try_quote(&command).map_err(|_| fail(ServerProblem::NulInCommand))?;
        transport.insert("command".into(), quoted.into_owned().into());
        let args = match field("args") {
            None => Vec::new(),
            Some(Json::Array(args)) => args
                .iter()
                .enumerate()
                .map(|(i, arg)| {
                    let arg = scalar(arg)
                        .ok_or_else(|| fail(ServerProblem::NotAString(format!("args[{i}]"))))?;
                    cx.expand(&at, &format!("args[{i}]"), &arg, imported)
                })
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(fail(ServerProblem::NotAnArray("args"))),
        };
        if !args.is_empty() {
            transport.insert(
                "args".into(),
                Value::Sequence(args.into_iter().map(Value::String).collect()),
            );
        }
        let env = strings(field("env"), "env").map_err(fail)?;
        if !env.is_empty() {
            let mut out = Mapping::new();
            for (var, value) in env {
                // Like a header, a reference stays one: read at start-up, kept from other
                // children, never written out by `import`.
                let value = match cx.reference_value(&at, &format!("env.{var}"), &value)? {
                    Converted::Value(text) => Value::String(text),
                    Converted::Read(reference) => reference,
                };
                out.insert(var.into(), value);
            }
            transport.insert("env".into(), Value::Mapping(out));
        }
        if let Some(cwd) = field("cwd") {
            let cwd =
                scalar(cwd).ok_or_else(|| fail(ServerProblem::NotAString("cwd".to_owned())))?;
            transport.insert("cwd".into(), cx.expand(&at, "cwd", &cwd, imported)?.into());
        }
        if field("headers").is_some() {
            imported.warnings.push(format!(
                "server `{name}`: `headers` ignored (a local server has no HTTP headers)"
            ));
        }
    } else if let Some((url_key, url)) = url {
        let url = scalar(url).ok_or_else(|| fail(ServerProblem::NotAString(url_key.to_owned())))?;
        transport.insert(
            "url".into(),
            cx.expand(&at, url_key, &url, imported)?.into(),
        );
        let headers = strings(field("headers"), "headers").map_err(fail)?;
        if !headers.is_empty() {
            let mut out = Mapping::new();
            for (header, value) in headers {
                let value = cx
                    .reference_value(&at, &format!("headers.{header}"), &value)?
                    .into_header();
                out.insert(header.into(), value);
            }
            transport.insert("headers".into(), Value::Mapping(out));
        }
        for key in ["args", "env", "cwd"] {
            if field(key).is_some() {
                imported.warnings.push(format!(
                    "server `{name}`: `{key}` ignored (a remote server is not started by the bridge)"
                ));
            }
        }
    }
    let mut entry = Mapping::new();
    entry.insert("type".into(), "mcp".into());
    entry.insert("name".into(), name.into());
    entry.insert("toolkit".into(), name.into());
    entry.insert("transport".into(), Value::Mapping(transport));
    Ok(Some(Value::Mapping(entry)))
}

/// A string, or a number or boolean written as one (hosts accept `"PORT": 8080`).
fn scalar(value: &Json) -> Option<String> {
    match value {
        Json::String(s) => Some(s.clone()),
        Json::Number(n) => Some(n.to_string()),
        Json::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// An object of strings (`env`, `headers`), in file order.
fn strings(
    value: Option<&Json>,
    key: &'static str,
) -> Result<Vec<(String, String)>, ServerProblem> {
    match value {
        None => Ok(Vec::new()),
        Some(Json::Object(map)) => map
            .iter()
            .map(|(k, v)| {
                scalar(v)
                    .map(|v| (k.clone(), v))
                    .ok_or_else(|| ServerProblem::NotAString(format!("{key}.{k}")))
            })
            .collect(),
        Some(_) => Err(ServerProblem::NotAnObjectOfStrings(key)),
    }
}

/// Where a value is, for messages.
struct Field<'a> {
    server: &'a str,
    format: HostFormat,
}

/// How `${…}` references are answered.
struct Vars<'a> {
    env: &'a dyn Fn(&str) -> Option<String>,
    workspace: Option<PathBuf>,
    /// Whether the file declares `inputs` (VS Code prompts).
    inputs: bool,
}

/// One `${…}` reference, understood.
enum Reference {
    /// A value known now (`${userHome}`).
    Known(String),
    /// An environment variable, with the default of `${VAR:-default}`.
    Var {
        name: String,
        default: Option<String>,
    },
}

/// Text and `${…}` references, in order; an unclosed `${` is text.
fn pieces(text: &str) -> Vec<(bool, &str)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let Some(len) = rest[start..].find('}') else {
            break;
        };
        if start > 0 {
            out.push((false, &rest[..start]));
        }
        out.push((true, &rest[start + 2..start + len]));
        rest = &rest[start + len + 1..];
    }
    if !rest.is_empty() {
        out.push((false, rest));
    }
    out
}

fn is_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl Vars<'_> {
    /// Understands the inside of one `${…}` in `field`.
    fn reference(
        &self,
        at: &Field<'_>,
        field: &str,
        inner: &str,
    ) -> Result<Reference, ImportError> {
        if let Some(id) = inner.strip_prefix("input:") {
            return Err(ServerProblem::Input {
                field: field.to_owned(),
                id: id.to_owned(),
                declared: self.inputs,
            }
            .at(at.server));
        }
        if let Some(name) = inner.strip_prefix("env:") {
            return Ok(Reference::Var {
                name: name.to_owned(),
                default: None,
            });
        }
        match inner {
            "userHome" => {
                return (self.env)("HOME").map(Reference::Known).ok_or_else(|| {
                    ServerProblem::NoHome {
                        field: field.to_owned(),
                    }
                    .at(at.server)
                });
            }
            "workspaceFolder" => {
                if let Some(dir) = &self.workspace {
                    return Ok(Reference::Known(dir.to_string_lossy().into_owned()));
                }
            }
            "pathSeparator" | "/" => return Ok(Reference::Known("/".to_owned())),
            _ => {}
        }
        // In VS Code's files a bare `${name}` is one of its own variables, never the environment.
        let (name, default) = match inner.split_once(":-") {
            _ if at.format == HostFormat::VsCode => ("", None),
            Some((name, default)) => (name, Some(default.to_owned())),
            None => (inner, None),
        };
        if is_var_name(name) {
            return Ok(Reference::Var {
                name: name.to_owned(),
                default,
            });
        }
        Err(ServerProblem::HostVariable {
            field: field.to_owned(),
            inner: inner.to_owned(),
            host: at.format.describe(),
        }
        .at(at.server))
    }

    /// `text` with every reference replaced by its value now.
    fn expand(
        &self,
        at: &Field<'_>,
        field: &str,
        text: &str,
        imported: &mut Imported,
    ) -> Result<String, ImportError> {
        let mut out = String::with_capacity(text.len());
        for (is_ref, piece) in pieces(text) {
            if !is_ref {
                out.push_str(piece);
                continue;
            }
            match self.reference(at, field, piece)? {
                Reference::Known(value) => out.push_str(&value),
                Reference::Var { name, default } => {
                    match ((self.env)(&name).filter(|v| !v.is_empty()), default) {
                        (Some(value), _) => {
                            imported.substituted.push(format!(
                                "server `{}`: `{field}` holds the value of ${name}",
                                at.server
                            ));
                            out.push_str(&value);
                        }
                        (None, Some(default)) => out.push_str(&default),
                        (None, None) => {
                            return Err(ServerProblem::Unset {
                                field: field.to_owned(),
                                reference: piece.to_owned(),
                                name,
                            }
                            .at(at.server));
                        }
                    }
                }
            }
        }
        Ok(out)
    }

    /// A header or child `env` value: a reference to a variable stays one (read at start-up,
    /// kept from children); text without references is a value.
    fn reference_value(
        &self,
        at: &Field<'_>,
        field: &str,
        text: &str,
    ) -> Result<Converted, ImportError> {
        let mut template = String::with_capacity(text.len());
        let mut vars = Vec::new();
        for (is_ref, piece) in pieces(text) {
            if !is_ref {
                template.push_str(piece);
                continue;
            }
            match self.reference(at, field, piece)? {
                Reference::Known(value) => template.push_str(&value),
                Reference::Var { name, default } => {
                    let set = (self.env)(&name).is_some_and(|v| !v.is_empty());
                    match default {
                        Some(default) if !set => template.push_str(&default),
                        _ => {
                            template.push_str(&format!("${{{name}}}"));
                            vars.push(name);
                        }
                    }
                }
            }
        }
        let (key, value) = match vars.as_slice() {
            [] => return Ok(Converted::Value(template)),
            [only] if template == format!("${{{only}}}") => ("env", only.clone()),
            _ => ("template", template),
        };
        Ok(Converted::Read(single(key, value)))
    }
}

/// `{key: value}`, the native form of a value read from the environment.
fn single(key: &str, value: String) -> Value {
    let mut map = Mapping::new();
    map.insert(key.into(), value.into());
    Value::Mapping(map)
}

/// A header or `env` value, converted.
enum Converted {
    /// Text written in the host file.
    Value(String),
    /// `{env: VAR}` or `{template: …}`, read at start-up.
    Read(Value),
}

impl Converted {
    /// The native header value (`{value: …}` for text).
    fn into_header(self) -> Value {
        match self {
            Self::Value(text) => single("value", text),
            Self::Read(reference) => reference,
        }
    }
}

impl Imported {
    /// The native YAML: a header saying where it came from, the warnings and substitutions as
    /// comments, then `sources:`. Values written in the host file for a child's `env` or a
    /// header are credentials as often as not, and the YAML is a file people commit: each is
    /// written as a reference to an environment variable instead (`{env: GITHUB_TOKEN}`), and
    /// [`Written::variables`] says which to export.
    pub fn to_yaml(&self, origin: &Path) -> Result<Written, ImportError> {
        let mut sources = self.sources.clone();
        let variables = references_for_values(&mut sources);
        let mut out = format!(
            "# otc-bridge configuration imported from {} ({}) by `otc-bridge import`.\n# Serve it with: otc-bridge --config THIS_FILE\n",
            comment_text(&origin.display().to_string()),
            self.format.describe()
        );
        let mut section = |title: &str, lines: &[String]| {
            if !lines.is_empty() {
                out.push_str(&format!("#\n# {title}\n"));
                for line in lines {
                    out.push_str(&format!("#   {}\n", comment_text(line)));
                }
            }
        };
        section("Not imported:", &self.warnings);
        section(
            "Read from the environment while importing (the values are written below):",
            &self.substituted,
        );
        section(
            "Values not written here (export each variable before serving):",
            &variables,
        );
        let mut doc = Mapping::new();
        doc.insert("sources".into(), Value::Sequence(sources));
        out.push_str(&super::read::write_yaml(&doc).map_err(ImportError::Write)?);
        Ok(Written {
            text: out,
            variables,
        })
    }
}

/// What `import` writes.
#[derive(Debug)]
pub struct Written {
    /// The YAML.
    pub text: String,
    /// The environment variables the YAML reads values from that the host file held, one line
    /// each (`GITHUB_TOKEN: server `github`, env.GITHUB_TOKEN`), never with the value.
    pub variables: Vec<String>,
}

/// `text` as it may stand in a one-line YAML comment: a line break (YAML's `\r`, `\n`, and
/// U+0085, U+2028, U+2029) or another control character would end the comment and let the
/// rest of a name from the host file be read as configuration, so each is escaped.
fn comment_text(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Replaces every value written in the host file for a child's `env` or a header with a
/// reference to an environment variable; returns one line per variable. A child's variable is
/// read from the variable of the same name; a header from `SERVER_HEADER`; a name another
/// value took already gets the server's name in front.
fn references_for_values(sources: &mut [Value]) -> Vec<String> {
    let mut taken: std::collections::BTreeMap<String, String> = Default::default();
    let mut lines = Vec::new();
    for source in sources {
        let server = source
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let Some(transport) = source.get_mut("transport") else {
            continue;
        };
        for (field, is_env) in [("env", true), ("headers", false)] {
            let Some(Value::Mapping(values)) = transport.get_mut(field) else {
                continue;
            };
            for (key, value) in values.iter_mut() {
                let key = key.as_str().unwrap_or_default();
                let text = match (is_env, &*value) {
                    (true, Value::String(text)) => text.clone(),
                    (false, Value::Mapping(map)) => {
                        match map.get("value").and_then(Value::as_str) {
                            Some(text) => text.to_owned(),
                            None => continue,
                        }
                    }
                    _ => continue,
                };
                let wanted = if is_env {
                    key.to_owned()
                } else {
                    var_name(&format!("{server}_{key}"))
                };
                let name = match taken.get(&wanted) {
                    Some(held) if *held != text => var_name(&format!("{server}_{wanted}")),
                    _ => wanted,
                };
                taken.insert(name.clone(), text);
                lines.push(format!("{name}: server `{server}`, {field}.{key}"));
                *value = single("env", name);
            }
        }
    }
    lines
}

/// `text` as an environment variable's name: upper case, `_` for anything else.
fn var_name(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
