//! MCP tool list → OTC tools: the pure half of the MCP adapter (DESIGN.md §4).
//!
//! Resources and prompts, served as tools when a source asks for it, are mapped in
//! [`resources`] and [`prompts`]; this file is the tools themselves.
//!
//! The adapter hands over what `initialize` and `tools/list` returned; this module turns each
//! `rmcp::model::Tool` into a [`ToolDefinition`] plus [`Target::Named`] (the MCP tool name, so
//! every id maps back to exactly one upstream tool).
//!
//! # Rules
//!
//! - **Id.** Toolkit: the configured name, else `serverInfo.name`, else `Mcp`; tool: the MCP tool
//!   name; both through [`naming::segment`] (UpperCamelCase, `[A-Za-z0-9_]`). Two MCP names that
//!   become the same segment (`get-user` and `get_user`) are told apart by
//!   [`naming::UniqueNames`] in list order, with a diagnostic. `name` is
//!   [`naming::tool_name`] (`Toolkit_Tool`, at most 64 characters).
//! - **Version.** The configured version, else `serverInfo.version`, normalised by
//!   [`naming::version_or_default`] (`1.0.0` and a diagnostic when it cannot be read).
//! - **Input schema.** The tool's `inputSchema` is the root document for its own `$ref`s
//!   (`#/$defs/…`, `#/definitions/…`), so they are inlined with [`Inliner`] and the `$defs` are
//!   dropped; a missing `type` on the root becomes `"object"` (MCP requires an object); every
//!   property gets a `description` ([`schema::ensure_descriptions`]).
//! - **Output schema.** `outputSchema` inlined the same way, else `{}` (any value): MCP tools
//!   without an output schema may still return anything.
//! - **Description.** The standard forbids extra top-level fields, so what MCP carries beside
//!   the description is written into it, always in this form:
//!
//!   ```text
//!   <description, else the title, else "The MCP tool `<name>`.">
//!
//!   Title: <title>                      (when a title exists and is not the text above)
//!   Hints: [read-only] [idempotent]     (one tag per annotation hint the server set)
//!   ```
//!
//!   The title is `title`, else `annotations.title`. Hint tags, in this order and only for
//!   hints that are present: `readOnlyHint` → `[read-only]` / `[not read-only]`,
//!   `destructiveHint` → `[destructive]` / `[non-destructive]`, `idempotentHint` →
//!   `[idempotent]` / `[not idempotent]`, `openWorldHint` → `[open-world]` /
//!   `[closed-world]`. False values are kept because MCP's defaults are not all `false`
//!   (an unset `destructiveHint` means "may be destructive").

use std::collections::HashSet;
use std::sync::Arc;

use rmcp::model as mcp;
use serde_json::{Map, Value};

use crate::error::{Diagnostic, Mapped, Severity};
use crate::naming::{self, UniqueNames};
use crate::otc::{Schema, ToolDefinition, ToolId, ToolVersion};
use crate::schema::{self, Inliner};
use crate::tool::{MappedTool, McpRequest, Target};

pub mod prompts;
pub mod resources;

/// Where a server's toolkit name and version come from: the configuration first, then what the
/// server said about itself in `initialize`.
#[derive(Debug, Clone, Copy, Default)]
pub struct McpSource<'a> {
    /// The configured toolkit name (`--toolkit`, `toolkit:`), if any.
    pub toolkit: Option<&'a str>,
    /// The configured version (`--tool-version`, `version:`), if any.
    pub version: Option<&'a str>,
    /// `serverInfo` from the `initialize` result, when the server sent one.
    pub server_info: Option<&'a mcp::Implementation>,
}

/// What every tool of one server shares: its toolkit segment, version and version label.
pub(crate) struct Identity {
    pub(crate) toolkit: String,
    pub(crate) version: ToolVersion,
    pub(crate) label: Option<Arc<str>>,
}

impl Identity {
    /// A tool that reads one of the server's resources or gets a prompt (`resources: tools`,
    /// `prompts: tools`): the tool part `segment` of this server's toolkit, sending `request`.
    /// Read-only: reading a resource or rendering a prompt changes nothing upstream.
    pub(crate) fn feature_tool(
        &self,
        segment: &str,
        description: String,
        input: Schema,
        output: Schema,
        request: McpRequest,
    ) -> MappedTool {
        MappedTool {
            definition: Arc::new(ToolDefinition {
                id: ToolId::exact(self.toolkit.clone(), segment.to_owned(), self.version),
                name: naming::tool_name(&self.toolkit, segment),
                description,
                version: self.version,
                input_schema: input,
                output_schema: Some(output),
                requirements: None,
            }),
            target: Target::Mcp { request },
            destructive: false,
            label: self.label.clone(),
            hidden_inputs: Vec::new(),
        }
    }
}

impl McpSource<'_> {
    /// The toolkit, version and label of the server's tools; an unreadable version is `1.0.0`
    /// and a diagnostic.
    pub(crate) fn identity(&self, diagnostics: &mut Vec<Diagnostic>) -> Identity {
        let raw_version = self
            .version
            .or(self.server_info.map(|info| info.version.as_str()));
        Identity {
            toolkit: self.toolkit_segment(),
            version: naming::version_or_default(raw_version, diagnostics),
            label: raw_version.map(Into::into),
        }
    }

    /// The toolkit segment: configured name, else `serverInfo.name`, else `Mcp`.
    pub fn toolkit_segment(&self) -> String {
        let raw = self
            .toolkit
            .or(self.server_info.map(|info| info.name.as_str()))
            .unwrap_or("Mcp");
        naming::segment(raw, "Mcp")
    }
}

/// Translates one server's tool list. Never fails: a tool that cannot be carried over as it is
/// loses what cannot be carried and says so in a diagnostic.
pub fn map_tools(source: &McpSource<'_>, tools: &[mcp::Tool]) -> Mapped<MappedTool> {
    let mut diagnostics = Vec::new();
    let Identity {
        toolkit,
        version,
        label,
    } = source.identity(&mut diagnostics);
    let mut names = UniqueNames::default();
    let mut mapped = Vec::with_capacity(tools.len());
    for tool in tools {
        let upstream = tool.name.as_ref();
        let wanted = naming::segment(upstream, "Tool");
        let segment = names.claim(&wanted, upstream, &mut diagnostics);
        let definition = ToolDefinition {
            id: ToolId::exact(toolkit.clone(), segment.clone(), version),
            name: naming::tool_name(&toolkit, &segment),
            description: describe(tool),
            version,
            input_schema: Schema::new(&map_input_schema(
                upstream,
                &tool.input_schema,
                &mut diagnostics,
            )),
            output_schema: Some(Schema::new(&match &tool.output_schema {
                Some(output) => self_contained(upstream, output, &mut diagnostics),
                None => Value::Object(Map::new()),
            })),
            requirements: None,
        };
        mapped.push(MappedTool {
            definition: Arc::new(definition),
            target: Target::Named {
                name: upstream.to_owned(),
            },
            destructive: is_destructive(tool.annotations.as_ref()),
            label: label.clone(),
            hidden_inputs: Vec::new(),
        });
    }
    Mapped {
        tools: mapped,
        diagnostics,
    }
}

/// The input schema: self-contained, an object at the root, every property described.
fn map_input_schema(
    tool: &str,
    input: &Map<String, Value>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Value {
    let mut schema = self_contained(tool, input, diagnostics);
    if let Value::Object(map) = &mut schema {
        match map.get("type") {
            None => {
                map.insert("type".to_owned(), Value::String("object".to_owned()));
            }
            Some(Value::String(t)) if t == "object" => {}
            Some(other) => diagnostics.push(Diagnostic::new(
                Severity::Warning,
                Some(tool),
                Some("/inputSchema/type".to_owned()),
                format!("input schema has type {other}, not \"object\"; kept as it is"),
            )),
        }
    }
    schema::ensure_descriptions(&mut schema);
    schema
}

/// The tool segments already taken in `tools`, compared case-insensitively as
/// [`UniqueNames`] compares them.
fn taken(tools: &[MappedTool]) -> HashSet<String> {
    tools
        .iter()
        .map(|t| t.definition.id.tool.to_ascii_lowercase())
        .collect()
}

/// Whether an added tool (a resource or prompt tool) may take `segment`: not when one of the
/// server's own tools has it. The server's tool wins and the added one is skipped with a
/// warning, so adding `resources: tools` never renames a tool callers already use.
fn may_add(
    taken: &HashSet<String>,
    segment: &str,
    what: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> bool {
    if !taken.contains(&segment.to_ascii_lowercase()) {
        return true;
    }
    diagnostics.push(Diagnostic::new(
        Severity::Warning,
        Some(segment),
        None,
        format!(
            "the server has a tool named like the {what} tool `{segment}`; the server's tool is \
             served and the {what} tool is not"
        ),
    ));
    false
}

/// Inlines a schema's `$ref`s against the schema itself and drops its definitions.
fn self_contained(
    tool: &str,
    schema: &Map<String, Value>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Value {
    let root = Value::Object(schema.clone());
    Inliner::new(&root).inline(&root, Some(tool), diagnostics)
}

/// The description in the documented form (see the module docs).
pub fn describe(tool: &mcp::Tool) -> String {
    let description = tool
        .description
        .as_deref()
        .map(str::trim)
        .filter(|d| !d.is_empty());
    let title = tool
        .title
        .as_deref()
        .or(tool.annotations.as_ref().and_then(|a| a.title.as_deref()))
        .map(str::trim)
        .filter(|t| !t.is_empty());
    let body = match (description, title) {
        (Some(d), _) => d.to_owned(),
        (None, Some(t)) => t.to_owned(),
        (None, None) => format!("The MCP tool `{}`.", tool.name),
    };
    let mut footer = Vec::new();
    if let Some(title) = title.filter(|t| *t != body) {
        footer.push(format!("Title: {title}"));
    }
    if let Some(hints) = tool.annotations.as_ref().and_then(hint_tags) {
        footer.push(format!("Hints: {hints}"));
    }
    if footer.is_empty() {
        body
    } else {
        format!("{body}\n\n{}", footer.join("\n"))
    }
}

/// Whether calling the tool may change something, by MCP's own defaults: a tool is read-only
/// only when `readOnlyHint` is true, and a tool that is not read-only is destructive unless
/// `destructiveHint` is false. No annotations at all therefore means destructive.
pub fn is_destructive(annotations: Option<&mcp::ToolAnnotations>) -> bool {
    let Some(a) = annotations else {
        return true;
    };
    a.read_only_hint != Some(true) && a.destructive_hint != Some(false)
}

/// `[read-only] [idempotent]`: one tag per hint the server set, in a fixed order.
fn hint_tags(annotations: &mcp::ToolAnnotations) -> Option<String> {
    let hints = [
        (annotations.read_only_hint, "read-only", "not read-only"),
        (
            annotations.destructive_hint,
            "destructive",
            "non-destructive",
        ),
        (annotations.idempotent_hint, "idempotent", "not idempotent"),
        (annotations.open_world_hint, "open-world", "closed-world"),
    ];
    let tags: Vec<String> = hints
        .iter()
        .filter_map(|(hint, yes, no)| hint.map(|h| format!("[{}]", if h { yes } else { no })))
        .collect();
    (!tags.is_empty()).then(|| tags.join(" "))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool(value: Value) -> mcp::Tool {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn destructive_follows_mcp_defaults() {
        let destructive = |annotations: Value| {
            let t = tool(json!({"name": "x", "inputSchema": {}, "annotations": annotations}));
            is_destructive(t.annotations.as_ref())
        };
        assert!(is_destructive(None), "no annotations: may be destructive");
        assert!(destructive(json!({})));
        assert!(!destructive(json!({"readOnlyHint": true})));
        assert!(!destructive(
            json!({"readOnlyHint": true, "destructiveHint": true})
        ));
        assert!(!destructive(json!({"destructiveHint": false})));
        assert!(destructive(json!({"readOnlyHint": false})));
        assert!(destructive(json!({"title": "Only a title"})));
    }

    #[test]
    fn defs_are_inlined_and_properties_described() {
        let t = tool(json!({
            "name": "create-order",
            "description": "Creates an order.",
            "inputSchema": {
                "type": "object",
                "$defs": {"Item": {"type": "object", "properties": {"sku": {"type": "string"}, "size": {"enum": ["s", "m"]}}}},
                "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/Item"}}},
                "required": ["items"]
            },
            "outputSchema": {"$defs": {"R": {"type": "string"}}, "type": "object", "properties": {"id": {"$ref": "#/$defs/R"}}}
        }));
        let info = mcp::Implementation::new("shop-server", "v2");
        let source = McpSource {
            server_info: Some(&info),
            ..McpSource::default()
        };
        let out = map_tools(&source, &[t]);
        assert!(out.diagnostics.is_empty(), "{:?}", out.diagnostics);
        let def = &out.tools[0].definition;
        assert_eq!(def.id.to_string(), "ShopServer.CreateOrder@2.0.0");
        assert_eq!(def.name, "ShopServer_CreateOrder");
        let input = def.input_schema.to_value();
        assert!(!schema::has_refs(&input));
        let item = &input["properties"]["items"]["items"];
        assert_eq!(item["properties"]["size"]["enum"], json!(["s", "m"]));
        assert_eq!(item["properties"]["sku"]["description"], "Sku.");
        assert_eq!(input["properties"]["items"]["description"], "Items.");
        let output = def.output_schema.as_ref().unwrap().to_value();
        assert_eq!(output["properties"]["id"]["type"], "string");
        assert!(!schema::has_refs(&output));
        assert!(matches!(&out.tools[0].target, Target::Named { name } if name == "create-order"));
    }

    #[test]
    fn configuration_wins_and_collisions_are_numbered() {
        let schema = Arc::new(Map::new());
        let tools = [
            mcp::Tool::new_with_raw("get-user", None, schema.clone()),
            mcp::Tool::new_with_raw("get_user", None, schema),
        ];
        let info = mcp::Implementation::new("ignored", "not a version");
        let source = McpSource {
            toolkit: Some("users"),
            version: Some("1.2"),
            server_info: Some(&info),
        };
        let out = map_tools(&source, &tools);
        let ids: Vec<String> = out
            .tools
            .iter()
            .map(|t| t.definition.id.to_string())
            .collect();
        assert_eq!(ids, ["Users.GetUser@1.2.0", "Users.GetUser_2@1.2.0"]);
        assert_eq!(out.diagnostics.len(), 1);
        assert_eq!(
            out.tools[0].definition.input_schema,
            json!({"type": "object"})
        );
        assert_eq!(
            *out.tools[0].definition.output_schema.as_ref().unwrap(),
            json!({})
        );
        assert_eq!(
            out.tools[0].definition.description,
            "The MCP tool `get-user`."
        );
    }

    #[test]
    fn unreadable_server_version_defaults_with_a_diagnostic() {
        let info = mcp::Implementation::new("x", "latest");
        let source = McpSource {
            server_info: Some(&info),
            ..McpSource::default()
        };
        let out = map_tools(&source, &[]);
        assert_eq!(out.diagnostics.len(), 1);
    }

    #[test]
    fn title_and_hints_go_into_the_description() {
        let t = tool(json!({
            "name": "echo",
            "title": "Echo Tool",
            "description": "Echoes back the input.",
            "inputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": true, "destructiveHint": false, "openWorldHint": false}
        }));
        assert_eq!(
            describe(&t),
            "Echoes back the input.\n\nTitle: Echo Tool\nHints: [read-only] [non-destructive] [closed-world]"
        );
        let only_title =
            tool(json!({"name": "x", "annotations": {"title": "Do X"}, "inputSchema": {}}));
        assert_eq!(describe(&only_title), "Do X");
    }
}
