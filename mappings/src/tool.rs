//! `MappedTool`: a translated definition plus what an adapter needs to forward a call to it.

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;

use crate::error::Mapped;
use crate::otc::{Schema, ToolDefinition};
use crate::plan::RequestPlan;

/// A tool as served: its OTC definition and how to reach it upstream.
#[derive(Debug, Clone, Serialize)]
pub struct MappedTool {
    /// What `GET /tools` lists. Shared: an adapter keeps the tools it lists and each catalog
    /// built from them holds the same definitions (300 documents' 11,913 tools: about 7 MB of
    /// RSS a copy, bench/scale.sh); whoever changes one (a lockfile's pin, an override) gets its
    /// own with `Arc::make_mut`.
    pub definition: Arc<ToolDefinition>,
    /// How a call reaches the upstream operation.
    pub target: Target,
    /// Whether a call may change or delete something upstream (what MCP hosts show before
    /// they let a model call it). Derived once, at translation: from an MCP tool's
    /// annotations ([`crate::mcp::is_destructive`]), from an operation's method and hints
    /// ([`crate::openapi::is_destructive`]).
    pub destructive: bool,
    /// The upstream's own version label as it was written (`2023-07-01-preview`,
    /// `serverInfo.version`), before normalisation; for the lockfile. Not listed.
    #[serde(skip)]
    pub label: Option<Arc<str>>,
    /// Inputs a transform hides behind a fixed value: not in the served schema, yet a value a
    /// caller still sends is accepted and overridden, so clients written before the transform
    /// keep working. In the canonical form, so a hidden input is told from a removed one.
    #[serde(skip)]
    pub hidden_inputs: Vec<String>,
}

/// Where a call goes upstream. Every tool id maps back to exactly one target.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Target {
    /// A tool the upstream knows by name (an MCP tool; the test adapter's tools).
    Named {
        /// The upstream's own name for the tool.
        name: String,
    },
    /// An HTTP operation described by an OpenAPI document.
    Http(Arc<RequestPlan>),
    /// An MCP request other than `tools/call`: a server's resources and prompts served as
    /// tools when the source asks for it (`resources: tools`, `prompts: tools`; see
    /// [`crate::mcp::resources`] and [`crate::mcp::prompts`]).
    Mcp {
        /// The request a call becomes.
        request: McpRequest,
    },
}

/// The MCP request behind a resource or prompt tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum McpRequest {
    /// `resources/list` (and `resources/templates/list`), paged.
    ListResources,
    /// `resources/read` of a URI the caller gives.
    ReadResource,
    /// `resources/read` of a URI expanded from one of `templates`, the URI templates the server
    /// listed (the only ones accepted).
    ReadResourceTemplate {
        /// The templates as the server wrote them.
        templates: Arc<[String]>,
    },
    /// `prompts/get` of the prompt `name`.
    GetPrompt {
        /// The server's own name for the prompt.
        name: String,
    },
}

impl McpRequest {
    /// The name an `include`/`exclude` pattern or an override can refer to the tool by, beside
    /// its id segment: `resource:list`, `resource:read`, `resource:template`, `prompt:<name>`
    /// (prefixed, like `tag:` and `method:`, so a prompt never shadows a tool of the same name).
    pub fn handle(&self) -> String {
        match self {
            Self::ListResources => "resource:list".to_owned(),
            Self::ReadResource => "resource:read".to_owned(),
            Self::ReadResourceTemplate { .. } => "resource:template".to_owned(),
            Self::GetPrompt { name } => format!("prompt:{name}"),
        }
    }
}

impl Mapped<MappedTool> {
    /// The same tools and diagnostics, copied into new allocations by the calling thread, with
    /// schemas that were shared still shared; the originals are dropped.
    ///
    /// Translation interleaves what it keeps (schemas, plans, names) with far more that it
    /// throws away (the parsed document, inlined trees), so the kept values pin the memory of
    /// the whole translation: an allocator returns a page only once nothing on it is live.
    /// Copying the kept values out, after the document is gone, leaves that memory entirely
    /// free: GitHub's description, 110 MB at the peak of translation, keeps 16 MB.
    pub fn relocated(self) -> Self {
        let mut copies: HashMap<*const u8, Schema> = HashMap::new();
        let mut copy = |schema: &Schema| {
            copies
                .entry(schema.as_str().as_ptr())
                .or_insert_with(|| schema.copied())
                .clone()
        };
        let tools = self
            .tools
            .iter()
            .map(|tool| {
                let def = &tool.definition;
                MappedTool {
                    definition: Arc::new(ToolDefinition {
                        id: def.id.clone(),
                        name: def.name.clone(),
                        description: def.description.clone(),
                        version: def.version,
                        input_schema: copy(&def.input_schema),
                        output_schema: def.output_schema.as_ref().map(&mut copy),
                        requirements: def.requirements.clone(),
                    }),
                    target: match &tool.target {
                        Target::Named { name } => Target::Named { name: name.clone() },
                        Target::Http(plan) => Target::Http(Arc::new(RequestPlan::clone(plan))),
                        Target::Mcp { request } => Target::Mcp {
                            request: request.clone(),
                        },
                    },
                    destructive: tool.destructive,
                    // One small string per source, shared by its tools: kept as it is.
                    label: tool.label.clone(),
                    hidden_inputs: tool.hidden_inputs.clone(),
                }
            })
            .collect();
        Mapped {
            tools,
            diagnostics: self.diagnostics.clone(),
        }
    }
}
