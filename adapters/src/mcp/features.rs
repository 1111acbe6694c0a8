//! MCP resources and prompts served as tools (issue 27): what `resources: tools` and
//! `prompts: tools` add to a source's list, and what a call to one of those tools sends.
//!
//! The tools themselves (ids, schemas, descriptions, the collision rule) are pure and live in
//! `otc_mappings::mcp::{resources, prompts}`; this file talks to the server:
//!
//! - **Listing.** Only for a server that declares the capability; one that does not gets a
//!   warning (a diagnostic naming the source, and a log line), never a failed source. Templates
//!   and prompts are listed with [`pages`], bounded. A JSON-RPC error while listing them is a
//!   warning too (the server's tools are still served); a lost session fails the listing as it
//!   would for tools.
//! - **Calls.** `ListResources` → `resources/list` from the caller's `cursor` (plus
//!   `resources/templates/list` on the first page); `ReadResource` → `resources/read`;
//!   `ReadResourceTemplate` → the template checked against those listed, expanded (RFC 6570),
//!   then `resources/read`; `Prompt<Name>` → `prompts/get`. Errors are classified as tool calls'
//!   are (`convert`), so they reach callers in the standard's shapes; a template that is not
//!   listed or cannot be expanded is an [`AdapterError::InvalidArguments`].
//! - **Bounds.** One answer is capped by the transports like every answer
//!   (`limits::MAX_MESSAGE_BYTES`, an oversized one is [`AdapterError::ResponseTooLarge`]). A
//!   listing that follows cursors stops after [`MAX_PAGES`] pages, [`MAX_ITEMS`] items or
//!   about `MAX_MESSAGE_BYTES` of items, whichever comes first, so a server cannot make the
//!   bridge hold an endless list: `ListResources` then answers with `nextCursor` to go on from.
//! - **Per-caller sources** (`auth: {per_caller: true}`) are not served resources or prompts:
//!   the source's session holds the bridge's own token, and reading with it on a caller's behalf
//!   would bypass the server's per-caller checks. Asking for it is a warning.

use std::future::Future;

use otc_mappings::mcp::McpSource;
use otc_mappings::mcp::prompts::add_prompt_tools;
use otc_mappings::mcp::resources::{add_resource_tools, expand_template, listed_template};
use otc_mappings::{Diagnostic, Mapped, MappedTool, McpRequest, Severity};
use rmcp::ServiceError;
use rmcp::model as mcp;
use rmcp::model::RequestParamsMeta as _;
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::limits::MAX_MESSAGE_BYTES;
use super::{Live, Shared, convert};
use crate::{AdapterError, ToolCall};

/// The most pages one listing follows.
pub(crate) const MAX_PAGES: usize = 100;
/// The most items one listing keeps.
pub(crate) const MAX_ITEMS: usize = 10_000;

/// Adds the resource and prompt tools the source asks for to `mapped`, the server's tools.
pub(super) async fn add(
    shared: &Shared,
    live: &Live,
    source: &McpSource<'_>,
    mapped: &mut Mapped<MappedTool>,
) -> Result<(), AdapterError> {
    let config = &shared.config;
    let (resources, prompts) = (config.resources.as_tools(), config.prompts.as_tools());
    if !resources && !prompts {
        return Ok(());
    }
    if shared.callers.is_some() {
        warn(
            shared,
            mapped,
            "`resources: tools` and `prompts: tools` are not served for a source with \
             `per_caller` authorization (reads would use the bridge's own token)"
                .to_owned(),
        );
        return Ok(());
    }
    let info = live.peer.peer_info();
    let capabilities = info.as_ref().map(|i| &i.capabilities);
    if resources {
        let declared = capabilities.is_some_and(|c| c.resources.is_some());
        let listed = listed(
            shared,
            live,
            mapped,
            Feature::RESOURCES,
            declared,
            |params| async {
                let page = live.peer.list_resource_templates(params).await?;
                Ok((page.resource_templates, page.next_cursor))
            },
        )
        .await?;
        if let Some(templates) = listed {
            add_resource_tools(source, &templates, mapped);
        }
    }
    if prompts {
        let declared = capabilities.is_some_and(|c| c.prompts.is_some());
        let listed = listed(
            shared,
            live,
            mapped,
            Feature::PROMPTS,
            declared,
            |params| async {
                let page = live.peer.list_prompts(params).await?;
                Ok((page.prompts, page.next_cursor))
            },
        )
        .await?;
        if let Some(prompts) = listed {
            add_prompt_tools(source, &prompts, mapped);
        }
    }
    Ok(())
}

/// A server feature served as tools: its capability, its setting and what its listing holds.
struct Feature {
    /// The capability and the setting's key (`resources`, `prompts`).
    key: &'static str,
    /// What its listing holds, for messages.
    items: &'static str,
    /// What its tools stand for, for messages.
    tools: &'static str,
}

impl Feature {
    const RESOURCES: Self = Self {
        key: "resources",
        items: "resource templates",
        tools: "resource",
    };
    const PROMPTS: Self = Self {
        key: "prompts",
        items: "prompts",
        tools: "prompt",
    };
}

/// The items of `feature`'s listing (`list` pages through it), when the server `declared` the
/// capability and answered; otherwise a warning says why none are served. A session that is
/// gone fails the whole listing.
async fn listed<T, F, Fut>(
    shared: &Shared,
    live: &Live,
    mapped: &mut Mapped<MappedTool>,
    feature: Feature,
    declared: bool,
    list: F,
) -> Result<Option<Vec<T>>, AdapterError>
where
    T: Serialize,
    F: Fn(Option<mcp::PaginatedRequestParams>) -> Fut,
    Fut: Future<Output = Result<(Vec<T>, Option<String>), ServiceError>>,
{
    let Feature { key, items, tools } = feature;
    if !declared {
        warn(
            shared,
            mapped,
            format!(
                "`{key}: tools` is set but the server does not declare the `{key}` \
                 capability; no {tools} tools are served"
            ),
        );
        return Ok(None);
    }
    let listed = shared.with_token_recovery(|| pages(&list, None)).await?;
    match listing(live, listed).await? {
        Ok(page) => {
            if page.next_cursor.is_some() {
                truncated(shared, mapped, items);
            }
            Ok(Some(page.items))
        }
        Err(why) => {
            warn(
                shared,
                mapped,
                format!("`{key}: tools`: cannot list the {items} ({why})"),
            );
            Ok(None)
        }
    }
}

/// A listing's outcome: the page, a JSON-RPC error to warn about (`Ok(Err(..))`), or a failure
/// that fails the whole listing (the session is gone).
async fn listing<T>(
    live: &Live,
    listed: Result<Page<T>, ServiceError>,
) -> Result<Result<Page<T>, String>, AdapterError> {
    match listed {
        Ok(page) => Ok(Ok(page)),
        Err(ServiceError::McpError(data)) => Ok(Err(format!(
            "JSON-RPC error {}: {}",
            data.code.0, data.message
        ))),
        Err(error) => Err(live.classify(error).await),
    }
}

/// A warning about the source, in its report and in the log.
fn warn(shared: &Shared, mapped: &mut Mapped<MappedTool>, reason: impl std::fmt::Display) {
    tracing::warn!(upstream = %shared.name, "{reason}");
    mapped.diagnostics.push(Diagnostic::new(
        Severity::Warning,
        None,
        None,
        format!("source `{}`: {reason}", shared.name),
    ));
}

fn truncated(shared: &Shared, mapped: &mut Mapped<MappedTool>, what: &str) {
    warn(
        shared,
        mapped,
        format!(
            "the server lists more {what} than the bridge follows ({MAX_PAGES} pages, \
             {MAX_ITEMS} items or {MAX_MESSAGE_BYTES} bytes); only the first are served"
        ),
    );
}

/// Items of a listing, and where to go on from when it stopped at a bound.
#[derive(Debug)]
struct Page<T> {
    items: Vec<T>,
    next_cursor: Option<String>,
}

/// Follows cursors from `cursor`, stopping at the last page or at a bound (see the module
/// docs); a server that repeats a cursor forever stops at [`MAX_PAGES`].
async fn pages<T, F, Fut>(mut list: F, mut cursor: Option<String>) -> Result<Page<T>, ServiceError>
where
    T: Serialize,
    F: FnMut(Option<mcp::PaginatedRequestParams>) -> Fut,
    Fut: Future<Output = Result<(Vec<T>, Option<String>), ServiceError>>,
{
    let mut items = Vec::new();
    let mut bytes = 0usize;
    for _ in 0..MAX_PAGES {
        let params = mcp::PaginatedRequestParams::default().with_cursor(cursor.take());
        let (page, next) = list(Some(params)).await?;
        for item in page {
            bytes = bytes.saturating_add(serde_json::to_vec(&item).map_or(0, |v| v.len()));
            items.push(item);
        }
        cursor = next;
        if cursor.is_none() || items.len() >= MAX_ITEMS || bytes >= MAX_MESSAGE_BYTES {
            break;
        }
    }
    Ok(Page {
        items,
        next_cursor: cursor,
    })
}

/// Sends the request a resource or prompt tool stands for (see the module docs).
pub(super) async fn call(
    shared: &Shared,
    request: &McpRequest,
    call: ToolCall,
) -> Result<Value, AdapterError> {
    let live = shared.live()?;
    let input = call.input;
    let answered = match request {
        McpRequest::ListResources => list_resources(shared, &live, string(&input, "cursor")).await,
        McpRequest::ReadResource => {
            let uri = string(&input, "uri").ok_or_else(|| missing("uri"))?;
            read(shared, &live, uri, call.trace_context.as_ref()).await
        }
        McpRequest::ReadResourceTemplate { templates } => {
            let asked = string(&input, "template").ok_or_else(|| missing("template"))?;
            let template = listed_template(templates, &asked).map_err(|e| invalid(&e))?;
            let arguments = match input.get("arguments") {
                Some(Value::Object(arguments)) => arguments.clone(),
                None | Some(Value::Null) => Map::new(),
                Some(_) => {
                    return Err(AdapterError::InvalidArguments {
                        message: "`arguments` must be an object".to_owned(),
                    });
                }
            };
            let uri = expand_template(template, &arguments).map_err(|e| invalid(&e))?;
            read(shared, &live, uri, call.trace_context.as_ref()).await
        }
        McpRequest::GetPrompt { name } => {
            get_prompt(shared, &live, name, input, call.trace_context.as_ref()).await
        }
    };
    match answered {
        Ok(value) => Ok(value),
        Err(Sent::Error(error)) => Err(error),
        Err(Sent::Service(error)) => Err(live.classify(error).await),
    }
}

/// Why a sent request failed: classified already, or an rmcp error to classify.
enum Sent {
    Error(AdapterError),
    Service(ServiceError),
}

impl From<ServiceError> for Sent {
    fn from(error: ServiceError) -> Self {
        Self::Service(error)
    }
}

fn string(input: &Map<String, Value>, key: &str) -> Option<String> {
    input.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn missing(key: &str) -> AdapterError {
    AdapterError::InvalidArguments {
        message: format!("`{key}` is required and must be a string"),
    }
}

fn invalid(error: &otc_mappings::mcp::resources::TemplateError) -> AdapterError {
    AdapterError::InvalidArguments {
        message: error.to_string(),
    }
}

/// `{resources, templates, nextCursor?}`, in MCP's own field names; templates on the first page.
async fn list_resources(
    shared: &Shared,
    live: &Live,
    cursor: Option<String>,
) -> Result<Value, Sent> {
    let first = cursor.is_none();
    let resources = shared
        .with_token_recovery(|| {
            pages(
                |params| async {
                    let page = live.peer.list_resources(params).await?;
                    Ok((page.resources, page.next_cursor))
                },
                cursor.clone(),
            )
        })
        .await
        .map_err(Sent::Error)??;
    let templates = if first {
        shared
            .with_token_recovery(|| {
                pages(
                    |params| async {
                        let page = live.peer.list_resource_templates(params).await?;
                        Ok((page.resource_templates, page.next_cursor))
                    },
                    None,
                )
            })
            .await
            .map_err(Sent::Error)??
            .items
    } else {
        Vec::new()
    };
    let mut value = json!({
        "resources": resources.items.iter().map(resource).collect::<Vec<_>>(),
        "templates": templates.iter().map(template).collect::<Vec<_>>(),
    });
    if let Some(next) = resources.next_cursor {
        value["nextCursor"] = Value::String(next);
    }
    Ok(value)
}

/// A listed resource as `ListResources` gives it: what a caller needs to choose and read it
/// (icons and `_meta` are left out: they can be large and say nothing to a model).
fn resource(resource: &mcp::Resource) -> Value {
    let mut value = json!({"uri": resource.uri, "name": resource.name});
    let optional = [
        ("title", resource.title.clone().map(Value::String)),
        (
            "description",
            resource.description.clone().map(Value::String),
        ),
        ("mimeType", resource.mime_type.clone().map(Value::String)),
        ("size", resource.size.map(Value::from)),
    ];
    for (key, field) in optional {
        if let Some(field) = field {
            value[key] = field;
        }
    }
    value
}

/// A listed template as `ListResources` gives it.
fn template(template: &mcp::ResourceTemplate) -> Value {
    let mut value = json!({"uriTemplate": template.uri_template, "name": template.name});
    let optional = [
        ("title", &template.title),
        ("description", &template.description),
        ("mimeType", &template.mime_type),
    ];
    for (key, field) in optional {
        if let Some(field) = field {
            value[key] = Value::String(field.clone());
        }
    }
    value
}

/// `resources/read` of `uri`: `{contents: [...]}` as MCP gives them (text as `text`, binary as
/// base64 `blob`, each with its `mimeType`).
async fn read(
    shared: &Shared,
    live: &Live,
    uri: String,
    trace: Option<&crate::TraceContext>,
) -> Result<Value, Sent> {
    let mut params = mcp::ReadResourceRequestParams::new(uri);
    if let Some(context) = trace {
        params.set_traceparent(&context.traceparent);
        if let Some(state) = &context.tracestate {
            params.set_tracestate(state);
        }
    }
    let answer = shared
        .with_token_recovery(|| live.peer.read_resource_once(params.clone()))
        .await
        .map_err(Sent::Error)??;
    match answer {
        mcp::ReadResourceResponse::Complete(result) => {
            let contents = serde_json::to_value(&result.contents).map_err(|e| {
                Sent::Error(AdapterError::protocol(
                    "the resource's contents cannot be written as JSON",
                    e,
                ))
            })?;
            Ok(json!({"contents": contents}))
        }
        mcp::ReadResourceResponse::InputRequired(asked) => {
            Err(Sent::Error(convert::input_required(&asked)))
        }
        _ => Err(Sent::Error(unknown_result())),
    }
}

/// `prompts/get` of `name` with `arguments` (the validated input: strings):
/// `{description?, messages}`.
async fn get_prompt(
    shared: &Shared,
    live: &Live,
    name: &str,
    arguments: Map<String, Value>,
    trace: Option<&crate::TraceContext>,
) -> Result<Value, Sent> {
    let mut params = mcp::GetPromptRequestParams::new(name);
    if !arguments.is_empty() {
        params = params.with_arguments(arguments);
    }
    if let Some(context) = trace {
        params.set_traceparent(&context.traceparent);
        if let Some(state) = &context.tracestate {
            params.set_tracestate(state);
        }
    }
    let answer = shared
        .with_token_recovery(|| live.peer.get_prompt_once(params.clone()))
        .await
        .map_err(Sent::Error)??;
    match answer {
        mcp::GetPromptResponse::Complete(result) => {
            let messages = serde_json::to_value(&result.messages).map_err(|e| {
                Sent::Error(AdapterError::protocol(
                    "the prompt's messages cannot be written as JSON",
                    e,
                ))
            })?;
            let mut value = json!({"messages": messages});
            if let Some(description) = result.description {
                value["description"] = Value::String(description);
            }
            Ok(value)
        }
        mcp::GetPromptResponse::InputRequired(asked) => {
            Err(Sent::Error(convert::input_required(&asked)))
        }
        _ => Err(Sent::Error(unknown_result())),
    }
}

/// An answer of a kind newer than the bridge knows.
fn unknown_result() -> AdapterError {
    AdapterError::ToolFailed {
        message: "the MCP server answered with a result type the bridge does not know".to_owned(),
        details: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn listings_stop_at_their_bounds() {
        // A server that hands out the same cursor forever.
        let mut asked = 0;
        let page = pages(
            |_| {
                asked += 1;
                async { Ok((vec![1u8], Some("again".to_owned()))) }
            },
            None,
        )
        .await
        .unwrap();
        assert_eq!((asked, page.items.len()), (MAX_PAGES, MAX_PAGES));
        assert_eq!(page.next_cursor.as_deref(), Some("again"));
        // Pages of many items stop at MAX_ITEMS (a page is kept whole).
        let page = pages(
            |_| async { Ok((vec![0u8; 4_000], Some("more".to_owned()))) },
            None,
        )
        .await
        .unwrap();
        assert_eq!(page.items.len(), 12_000);
        assert!(page.next_cursor.is_some());
        // A last page ends the listing without a cursor.
        let page = pages(|_| async { Ok((vec!["a"], None)) }, Some("from".to_owned()))
            .await
            .unwrap();
        assert_eq!((page.items.len(), page.next_cursor), (1, None));
    }
}
