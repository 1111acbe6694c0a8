//! A failed call as an MCP host sees it (DESIGN.md §8): a tool result with `isError: true`, a
//! text that starts with `Error: ` for the model to read and correct itself by, and the
//! standard's `ToolError` (retry hints included) for programs, as `structuredContent.error`.
//! JSON-RPC errors are kept for protocol faults; no failure of a call is one.
//!
//! The words come from [`crate::rescue`]: a failure in the tool is its `ToolError`, a refusal
//! before the call its [`Refusal`]; this file only renders them.

use std::fmt::Write as _;

use otc_mappings::otc::ToolError;
use serde_json::Value;

use crate::rescue::{Extra, Refusal, echo};

/// The text block and the `ToolError` of a failed call.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct McpFailure {
    /// The text block, starting with `Error: `.
    pub(crate) text: String,
    /// The `ToolError`, with the refusal's details (`parameter_errors`, `missing`) beside it.
    pub(crate) error: ToolError,
}

impl McpFailure {
    /// A failure in the tool (a 200 `success: false` on the OTC side): its message, and what
    /// the upstream said, unchanged, on the next line.
    pub(crate) fn from_tool_error(error: ToolError) -> Self {
        let mut text = format!("Error: {}", error.message);
        if let Some(more) = &error.additional_prompt_content {
            let _ = write!(text, "\n{more}");
        }
        Self { text, error }
    }

    /// A refusal before the call. `path` is the tool path as the host gave it; `closest` the
    /// served paths nearest to it, offered when it names no tool. An MCP host has no body to
    /// fix and no `context` to send, so a missing tool, version or credential is said in its
    /// terms; `developer_message` stays out, as it speaks of the OTC request.
    pub(crate) fn from_refusal(refusal: Refusal, path: &str, closest: &[String]) -> Self {
        let mut error = ToolError {
            can_retry: refusal.can_retry,
            ..Default::default()
        };
        let text = match refusal.extra {
            Extra::NoSuchTool { .. } => {
                let mut text = format!("Error: Tool not found: {}", echo(path));
                if !closest.is_empty() {
                    let _ = write!(text, "\nClosest tools: {}", closest.join(", "));
                    error.extra.insert("closest".to_owned(), closest.into());
                }
                text.push_str("\nUse search_tools to find a tool, then call it by its path.");
                text
            }
            Extra::Versions { available, changed } => {
                let mut text = format!(
                    "Error: Tool not found: {} (served versions: {}; '@x' means exactly x.0.0, no version means the latest)",
                    echo(path),
                    available.join(", ")
                );
                if let Some(changed) = changed {
                    let _ = write!(text, "\n{changed}");
                }
                error.extra.insert("versions".to_owned(), available.into());
                text
            }
            Extra::Missing { ids, .. } => {
                let quoted: Vec<String> = ids.iter().map(|id| format!("\"{id}\"")).collect();
                error.extra.insert("missing".to_owned(), ids.into());
                format!(
                    "Error: No credentials for {}. MCP calls carry no context: configure the credential on the bridge for this tool's source, or have the MCP host send it in an HTTP header named in that source's `context_headers` (e.g. `context_headers: {{GITHUB_TOKEN: X-GitHub-Token}}`).",
                    quoted.join(", ")
                )
            }
            Extra::ParameterErrors(parameter_errors) => {
                let mut text = "Error: Invalid arguments:".to_owned();
                for (name, reason) in &parameter_errors {
                    let reason = match reason {
                        Value::String(s) => s.clone(),
                        Value::Array(items) => items
                            .iter()
                            .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_owned))
                            .collect::<Vec<_>>()
                            .join("; "),
                        other => other.to_string(),
                    };
                    let _ = write!(text, "\n- {name}: {reason}");
                }
                text.push_str("\nUse read_tool to see the input schema.");
                let names: Vec<&str> = parameter_errors.keys().map(String::as_str).collect();
                error.message = format!("Invalid arguments: {}.", names.join(", "));
                error.extra.insert(
                    "parameter_errors".to_owned(),
                    Value::Object(parameter_errors.into_iter().collect()),
                );
                text
            }
            Extra::RetryAfter { ms } => {
                error.retry_after_ms = Some(ms);
                format!("Error: {}", refusal.message)
            }
            _ => format!("Error: {}", refusal.message),
        };
        if error.message.is_empty() {
            error.message = text
                .strip_prefix("Error: ")
                .unwrap_or(&text)
                .lines()
                .next()
                .unwrap_or_default()
                .to_owned();
        }
        Self { text, error }
    }
}
