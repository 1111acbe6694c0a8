//! Requirements met for MCP calls, which carry no OTC `context` (DESIGN.md §8): a source's
//! `context_headers` name, per requirement id, the HTTP header of the MCP request that holds
//! its value. Only the headers a source names are read, and only for that source's tools;
//! the request's `Authorization` (the bridge's own credential) can never be one of them.

use http::HeaderMap;
use otc_mappings::otc::{AuthorizationToken, CallContext, ToolSecret};

use crate::catalog::registry::Entry;

/// The context for a call to `entry` from the headers of the MCP request, `None` when there is
/// nothing to put in it (stdio, or no mapped header present).
pub(super) fn context(entry: &Entry, headers: Option<&HeaderMap>) -> Option<CallContext> {
    let headers = headers?;
    let requirements = entry.definition().requirements.as_ref()?;
    let mut context = CallContext::default();
    for (id, header) in &entry.policy.context_headers {
        let Some(value) = headers.get(header).and_then(|v| v.to_str().ok()) else {
            continue;
        };
        let value = value.trim();
        if value.is_empty() {
            continue;
        }
        if requirements.authorization.iter().any(|a| &a.id == id) {
            context.authorization.push(AuthorizationToken {
                id: id.clone(),
                token: value.to_owned(),
                extra: serde_json::Map::new(),
            });
        }
        if requirements.secrets.iter().any(|s| &s.id == id) {
            context.secrets.push(ToolSecret {
                id: id.clone(),
                value: value.to_owned(),
                extra: serde_json::Map::new(),
            });
        }
        if id == "user_id" && requirements.user_id {
            context.user_id = Some(value.to_owned());
        }
    }
    let empty =
        context.authorization.is_empty() && context.secrets.is_empty() && context.user_id.is_none();
    (!empty).then_some(context)
}
