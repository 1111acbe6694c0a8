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
    /// What `GET /tools` lists.
    pub definition: ToolDefinition,
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
                    definition: ToolDefinition {
                        id: def.id.clone(),
                        name: def.name.clone(),
                        description: def.description.clone(),
                        version: def.version,
                        input_schema: copy(&def.input_schema),
                        output_schema: def.output_schema.as_ref().map(&mut copy),
                        requirements: def.requirements.clone(),
                    },
                    target: match &tool.target {
                        Target::Named { name } => Target::Named { name: name.clone() },
                        Target::Http(plan) => Target::Http(Arc::new(RequestPlan::clone(plan))),
                    },
                    destructive: tool.destructive,
                    // One small string per source, shared by its tools: kept as it is.
                    label: tool.label.clone(),
                }
            })
            .collect();
        Mapped {
            tools,
            diagnostics: self.diagnostics.clone(),
        }
    }
}
