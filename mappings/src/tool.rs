//! `MappedTool`: a translated definition plus what an adapter needs to forward a call to it.

use std::sync::Arc;

use serde::Serialize;

use crate::otc::ToolDefinition;
use crate::plan::RequestPlan;

/// A tool as served: its OTC definition and how to reach it upstream.
#[derive(Debug, Clone, Serialize)]
pub struct MappedTool {
    /// What `GET /tools` lists.
    pub definition: ToolDefinition,
    /// How a call reaches the upstream operation.
    pub target: Target,
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
