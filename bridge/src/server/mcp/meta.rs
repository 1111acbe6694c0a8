//! The three meta-tools, with the exact names and shapes hosts rely on:
//!
//! | tool | arguments | `structuredContent` |
//! |---|---|---|
//! | `search_tools` | `query`, `limit` (1–50, default 10), `toolkit` | `{results: [{path, name, summary, score, destructive, requires, part?, sure?}], total, parts?}` |
//! | `read_tool` | `path` | `{path, version, versions, description, inputSchema, outputSchema, destructive, requirements}` |
//! | `call_tool` | `path`, `arguments` | the value when it is an object; `{error: ToolError}` on failure |
//! | `read_result` | `handle`, `offset` | `{handle, offset, next_offset, total_bytes}`, the page as text |
//!
//! `read_result` is listed only when results have a byte budget (`mcp.max_result_bytes`): a
//! value over it is cut (still valid JSON, each cut marked) and kept whole for the caller, to be
//! read in pages of the budget's size.
//! A path is an OTC tool id, with or without `@version` (resolved as the standard says: none is
//! the highest). Every failure is a result with `isError: true` and a text starting `Error: `.

use std::fmt::Write as _;
use std::sync::Arc;

use http::HeaderMap;
use otc_adapters::TraceContext;
use otc_mappings::otc::{CallOutcome, CallToolRequest, ToolDefinition};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::McpSettings;
use super::credentials;
use super::failure::McpFailure;
use super::kept::KeptResults;
use crate::access::View;
use crate::call::{self, Call};
use crate::catalog::registry::{Catalog, Entry};
use crate::catalog::summary;
use crate::rescue::{ApiError, Extra, Refusal};
use crate::result_cache::Directive;
use crate::telemetry::events::Edge;
use otc_search::MAX_QUERY_CHARS;

/// `search_tools`.
pub(crate) const SEARCH: &str = "search_tools";
/// `read_tool`.
pub(crate) const READ: &str = "read_tool";
/// `call_tool`.
pub(crate) const CALL: &str = "call_tool";
/// `read_result`.
pub(crate) const READ_RESULT: &str = "read_result";

/// `limit` when none is given.
pub(crate) const DEFAULT_LIMIT: usize = 10;
/// The largest `limit`; larger ones are served as this.
pub(crate) const MAX_LIMIT: usize = 50;
/// How many matches `total` counts at most.
const MAX_TOTAL: usize = 1000;

/// What the server tells hosts about itself (`instructions`).
pub(crate) const INSTRUCTIONS: &str = "This server gives access to a catalog of tools (REST APIs and MCP servers) through three tools. \
Use search_tools with a few words describing the task to find candidate tools, read_tool to see one tool's input schema and \
description, then call_tool with its path and arguments. Paths look like Toolkit.Tool or Toolkit.Tool@1.2.0. Tools marked \
destructive may change or delete data.";

/// The meta-tools as listed (`read_result` when results have a byte budget); each input
/// schema is derived from the arguments type that parses it, so the two cannot drift apart.
pub(crate) fn tools(budget: Option<usize>) -> Vec<Tool> {
    let mut tools = vec![
        Tool::new(
            SEARCH,
            "Search the catalog for tools that can do a task. Returns ranked paths with a summary each; \
             results marked sure: false are only the closest by meaning, check that they fit; \
             no results means no tool fits: try other words (the product's name, the object, the action).",
            schema_for_input::<SearchArgs>(),
        )
        .with_annotations(ToolAnnotations::new().read_only(true).open_world(false)),
        Tool::new(
            READ,
            "Read one tool: its description, input schema (the arguments call_tool takes), output schema, \
             versions, requirements and whether it is destructive.",
            schema_for_input::<ReadArgs>(),
        )
        .with_annotations(ToolAnnotations::new().read_only(true).open_world(false)),
        Tool::new(
            CALL,
            "Call one tool by its path with arguments matching its input schema (see read_tool). \
             Returns the tool's result, or an error starting with 'Error: ' that says what to fix.",
            schema_for_input::<CallArgs>(),
        )
        .with_annotations(ToolAnnotations::new().read_only(false).destructive(true).open_world(true)),
    ];
    if let Some(budget) = budget {
        tools.push(
            Tool::new(
                READ_RESULT,
                format!(
                    "Read the rest of a result that was cut to {budget} bytes: call it with the handle the cut \
                     result gave and offset 0, then with each next_offset, until next_offset is null. Each page \
                     is a piece of the whole result's JSON text."
                ),
                schema_for_input::<ReadResultArgs>(),
            )
            .with_annotations(ToolAnnotations::new().read_only(true).open_world(false)),
        );
    }
    tools
}

/// The JSON Schema of a meta-tool's arguments, through rmcp's generator (draft 2020-12, as MCP
/// requires; cached per type; without the type's own title and doc comment). It fails only for a
/// type that is not an object, which a test rules out for the three.
fn schema_for_input<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    rmcp::handler::server::common::schema_for_input::<T>().unwrap_or_default()
}

/// A catalog tool as listed in `all` mode: its OTC name, description and input schema, and
/// annotations from whether it is destructive. No `outputSchema`: an upstream's answer is
/// passed on as it comes, and a host that validates structured results must not reject it.
pub(crate) fn listed(entry: &Entry) -> Tool {
    let def = entry.definition();
    let input = match serde_json::from_str(def.input_schema.as_str()) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    };
    Tool::new(def.name.clone(), def.description.clone(), Arc::new(input)).with_annotations(
        ToolAnnotations::new()
            .read_only(!entry.tool.destructive)
            .destructive(entry.tool.destructive)
            .open_world(true),
    )
}

/// Arguments of `search_tools`.
#[derive(Debug, Deserialize, JsonSchema)]
struct SearchArgs {
    /// The task in a few words, e.g. 'list open pull requests of a repository'.
    #[schemars(length(max = MAX_QUERY_CHARS))]
    query: String,
    /// How many results at most.
    // Parsed wide and checked by hand: a limit above the maximum is served as the maximum, one
    // below 1 is refused with a message that says the range.
    #[serde(default)]
    #[schemars(with = "u64", range(min = 1, max = MAX_LIMIT), extend("default" = DEFAULT_LIMIT))]
    limit: Option<i64>,
    /// Only tools of this toolkit (the part of a path before the dot), e.g. 'Github'.
    // No `default` in the schema: null is not a string (schemars leaves out a default the
    // field would skip when serialised).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    toolkit: Option<String>,
}

/// Arguments of `read_tool`.
#[derive(Debug, Deserialize, JsonSchema)]
struct ReadArgs {
    /// The tool's path from search_tools, e.g. 'Github.ReposGet' (optionally with @version).
    path: String,
}

/// Arguments of `call_tool`.
#[derive(Debug, Deserialize, JsonSchema)]
struct CallArgs {
    /// The tool's path, e.g. 'Github.ReposGet' (optionally with @version).
    path: String,
    /// The tool's arguments, as its input schema describes them.
    #[serde(default)]
    #[schemars(with = "JsonObject", extend("default" = {}))]
    arguments: Option<Value>,
}

/// Arguments of `read_result`.
#[derive(Debug, Deserialize, JsonSchema)]
struct ReadResultArgs {
    /// The handle a cut result gave.
    handle: String,
    /// Where to read from, in bytes of the whole result's JSON text: 0, then each next_offset.
    #[serde(default)]
    offset: usize,
}

/// What is wrong with a meta-tool's arguments; the words are the model's, to correct them by.
#[derive(Debug, thiserror::Error)]
enum InvalidArguments {
    /// They do not have the tool's shape (a field missing, or of another type).
    #[error("Invalid arguments for {tool}: {error}.")]
    Shape {
        tool: &'static str,
        error: serde_json::Error,
    },
    /// `search_tools`' `limit` is out of range.
    #[error("Invalid arguments for {SEARCH}: limit must be between 1 and {MAX_LIMIT}, not {0}.", SEARCH = SEARCH, MAX_LIMIT = MAX_LIMIT)]
    Limit(i64),
    /// `search_tools`' `query` is blank.
    #[error("Invalid arguments for {SEARCH}: query is empty; describe the task in a few words.", SEARCH = SEARCH)]
    EmptyQuery,
    /// `search_tools`' `query` is longer than a search reads (its length in characters).
    #[error("Invalid arguments for {SEARCH}: query is {0} characters long, at most {MAX_QUERY_CHARS}; describe the task in a few words.", SEARCH = SEARCH, MAX_QUERY_CHARS = MAX_QUERY_CHARS)]
    LongQuery(usize),
}

/// The arguments of a meta-tool, or what is wrong with them.
fn parse<T: serde::de::DeserializeOwned>(
    tool: &'static str,
    arguments: JsonObject,
) -> Result<T, InvalidArguments> {
    serde_json::from_value(Value::Object(arguments))
        .map_err(|error| InvalidArguments::Shape { tool, error })
}

/// A meta-tool's arguments are wrong: worth retrying with others.
fn invalid(why: &InvalidArguments) -> CallToolResult {
    failure(McpFailure::from_tool_error(otc_mappings::otc::ToolError {
        message: why.to_string(),
        can_retry: true,
        ..Default::default()
    }))
}

/// `search_tools`.
pub(crate) fn search(
    catalog: &Catalog,
    view: View<'_>,
    settings: &McpSettings,
    arguments: JsonObject,
) -> CallToolResult {
    let args: SearchArgs = match parse(SEARCH, arguments) {
        Ok(args) => args,
        Err(why) => return invalid(&why),
    };
    let limit = match args.limit {
        None => DEFAULT_LIMIT,
        Some(n) if n >= 1 => usize::try_from(n).unwrap_or(MAX_LIMIT).min(MAX_LIMIT),
        Some(n) => return invalid(&InvalidArguments::Limit(n)),
    };
    let query = args.query.trim();
    if query.is_empty() {
        return invalid(&InvalidArguments::EmptyQuery);
    }
    let length = query.chars().count();
    if length > MAX_QUERY_CHARS {
        return invalid(&InvalidArguments::LongQuery(length));
    }
    let toolkit = args
        .toolkit
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty());
    // Both rankers once the model has embedded this catalog; the words alone until then.
    let latest = catalog.latest();
    let answer = crate::access::search(
        catalog,
        view,
        settings.search.as_deref(),
        query,
        toolkit,
        MAX_TOTAL,
    );
    let several = answer.parts.len() > 1;
    // Only the model's closest tools, none close enough to be sure (otc_search's fusion): said
    // first, so an agent weighs them instead of taking the first.
    let unsure = |hit: &otc_search::Found| !hit.sure;
    let mut text = String::new();
    if answer.hits.iter().take(limit).all(unsure) && !answer.hits.is_empty() {
        let _ = writeln!(
            text,
            "No tool clearly matches \"{}\"; the closest by meaning:",
            crate::rescue::echo(query)
        );
    }
    let results: Vec<Value> = answer
        .hits
        .iter()
        .take(limit)
        .filter_map(|hit| latest.get(hit.position).map(|entry| (entry, hit)))
        .map(|(entry, hit)| {
            let def = entry.definition();
            let path = def.id.to_string();
            let summary = summary(&def.description);
            let _ = writeln!(text, "{path} — {summary}");
            let mut result = json!({
                "path": path,
                "name": def.name,
                "summary": summary,
                "score": (f64::from(hit.score) * 1000.0).round() / 1000.0,
                "destructive": entry.tool.destructive,
                "requires": requires(def),
            });
            // A request that asks several things: which of them this tool serves.
            if several {
                result["part"] = json!(answer.parts.get(hit.part));
            }
            if !hit.sure {
                result["sure"] = json!(false);
            }
            result
        })
        .collect();
    if results.is_empty() {
        text = format!(
            "No tool matches \"{}\"{}. Try other words: the product or service's name, the kind of object (issue, invoice, file) and the action (list, create, delete).",
            crate::rescue::echo(query),
            toolkit
                .map(|t| format!(" in toolkit {}", crate::rescue::echo(t)))
                .unwrap_or_default()
        );
    }
    let mut structured = json!({"results": results, "total": answer.hits.len()});
    if several {
        structured["parts"] = json!(answer.parts);
    }
    let mut result = CallToolResult::success(vec![ContentBlock::text(text.trim_end().to_owned())]);
    result.structured_content = Some(structured);
    result
}

/// `read_tool`.
pub(crate) fn read(catalog: &Catalog, view: View<'_>, arguments: JsonObject) -> CallToolResult {
    let args: ReadArgs = match parse(READ, arguments) {
        Ok(args) => args,
        Err(why) => return invalid(&why),
    };
    let entry = match call::resolve(catalog, &args.path, view) {
        Ok(entry) => entry,
        Err(refusal) => return refused(catalog, view, refusal.into(), &args.path),
    };
    let def = entry.definition();
    let name = def.id.name();
    let versions: Vec<String> = catalog
        .versions(&name)
        .iter()
        .filter(|e| view.sees(e))
        .map(|e| e.definition().version.to_string())
        .collect();
    let schema = |text: &str| serde_json::from_str::<Value>(text).unwrap_or(Value::Null);
    let structured = json!({
        "path": def.id.to_string(),
        "version": def.version.to_string(),
        "versions": versions,
        "description": def.description,
        "inputSchema": schema(def.input_schema.as_str()),
        "outputSchema": def.output_schema.as_ref().map_or(Value::Null, |s| schema(s.as_str())),
        "destructive": entry.tool.destructive,
        "requirements": def.requirements,
    });
    let mut result = CallToolResult::success(vec![ContentBlock::text(structured.to_string())]);
    result.structured_content = Some(structured);
    result
}

/// What a call's MCP request carries besides its arguments.
#[derive(Debug, Default)]
pub(crate) struct Incoming<'a> {
    /// The HTTP request's headers (none on stdio): where `context_headers` are found.
    pub headers: Option<&'a HeaderMap>,
    /// The caller's trace context, when traces are on.
    pub trace_context: Option<TraceContext>,
}

/// `call_tool`.
pub(crate) async fn call(
    catalog: &Catalog,
    view: View<'_>,
    settings: &McpSettings,
    kept: &KeptResults,
    request: Incoming<'_>,
    arguments: JsonObject,
) -> CallToolResult {
    let args: CallArgs = match parse(CALL, arguments) {
        Ok(args) => args,
        Err(why) => return invalid(&why),
    };
    call_path(
        catalog,
        view,
        settings,
        kept,
        request,
        args.path,
        args.arguments.unwrap_or(Value::Null),
    )
    .await
}

/// Calls the tool at `path` through [`call::call`], the code path of `POST /tools/call`, with
/// the context the source's `context_headers` find in `headers`.
pub(crate) async fn call_path(
    catalog: &Catalog,
    view: View<'_>,
    settings: &McpSettings,
    kept: &KeptResults,
    request: Incoming<'_>,
    path: String,
    arguments: Value,
) -> CallToolResult {
    let Incoming {
        headers,
        trace_context,
    } = request;
    // Resolved once, here: the call reuses it (a path that names nothing is refused inside
    // `call::call`, with the suggestions).
    let entry = call::resolve(catalog, &path, view).ok().cloned();
    let context = entry
        .as_ref()
        .and_then(|entry| credentials::context(entry, headers));
    let request = CallToolRequest {
        tool_id: path.clone(),
        input: Some(match arguments {
            Value::Null => Value::Object(Map::new()),
            other => other,
        }),
        context,
        ..Default::default()
    };
    let outcome = call::call(
        catalog,
        view,
        settings.call_timeout,
        &settings.telemetry,
        call::Stores {
            // MCP calls carry no call_id: nothing to repeat.
            repeats: None,
            cache: settings.cache.as_deref(),
            caller: &view.caller.scope,
            sign_ins: settings.sign_ins.as_deref(),
        },
        Call {
            request,
            trace_context,
            entry,
            edge: Edge::Mcp,
            cache: headers.map(Directive::from_headers).unwrap_or_default(),
            // With a budget, a JSON answer is cut from its text and kept as it came.
            unparsed: settings.max_result_bytes.is_some(),
            ..Default::default()
        },
    )
    .await;
    // The call's log line and metrics were written by its event, in `call`.
    match outcome {
        Ok(answer) => match answer.response.outcome {
            CallOutcome::Value(value) => {
                let value = value.unwrap_or(Value::Null);
                match settings.max_result_bytes {
                    Some(budget) => within(value, budget, view, kept),
                    None => success(value),
                }
            }
            CallOutcome::Json(json) => match settings.max_result_bytes {
                Some(budget) => within_json(json, budget, view, kept),
                // Not asked for without a budget; parsed, should it come anyway.
                None => success(serde_json::from_str(json.get()).unwrap_or(Value::Null)),
            },
            CallOutcome::Error(error) => failure(McpFailure::from_tool_error(error)),
        },
        Err(refusal) => refused(catalog, view, refusal, &path),
    }
}

/// A tool name that is neither a meta-tool nor (in `all` mode) a catalog tool.
pub(crate) fn not_found(catalog: &Catalog, view: View<'_>, name: &str) -> CallToolResult {
    let refusal = ApiError::UnknownTool {
        id: name.to_owned(),
        suggestion: None,
    };
    refused(catalog, view, refusal.into(), name)
}

/// A value as a result: a string as it is, anything else as JSON; an object also as
/// `structuredContent`.
fn success(value: Value) -> CallToolResult {
    let text = match &value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    if value.is_object() {
        result.structured_content = Some(value);
    }
    result
}

/// A value as a result within `budget` bytes: as it is when it fits; else cut (still valid
/// JSON, each cut marked with what it left out), kept whole for the caller, and said so: in
/// the text, and as `truncated` in `structuredContent` (the cut object's own member when it is
/// an object, else beside it as `value`).
fn within(value: Value, budget: usize, view: View<'_>, kept: &KeptResults) -> CallToolResult {
    // Measured without serializing: a result within budget is serialized once, by `success`.
    let total_bytes = otc_shape::budget::serialized_len(&value);
    if total_bytes <= budget {
        return success(value);
    }
    let cut = otc_shape::budget::cut(&value, budget.max(otc_shape::budget::MIN_BUDGET));
    // Written into a buffer of its exact size: a string grown by doubling held about twice the
    // answer's size at the peak, beside the value itself.
    let mut whole = String::with_capacity(total_bytes);
    let _ = write!(whole, "{value}");
    drop(value);
    cut_result(cut, whole, budget, view, kept)
}

/// [`within`] for a value still the upstream's JSON text: cut from the text, and the text kept
/// as it came for `read_result`, so the value is never parsed whole (issue 27: parsed, a 5 MB
/// answer weighed over five times its size before it was cut). The cut is the parsed value's.
fn within_json(
    json: Box<RawValue>,
    budget: usize,
    view: View<'_>,
    kept: &KeptResults,
) -> CallToolResult {
    let cut = otc_shape::budget::cut_json(&json, budget.max(otc_shape::budget::MIN_BUDGET));
    if !cut.cut {
        return success(cut.value);
    }
    let whole: Box<str> = json.into();
    cut_result(cut, whole.into_string(), budget, view, kept)
}

/// The result of a value `cut` to `budget`, its `whole` text kept for the caller: the cut
/// value, a note saying what was left out and how to read the rest, and `truncated` in
/// `structuredContent` (the cut object's own member when it is an object, else beside it as
/// `value`).
fn cut_result(
    cut: otc_shape::budget::Cut,
    whole: String,
    budget: usize,
    view: View<'_>,
    kept: &KeptResults,
) -> CallToolResult {
    let total_bytes = whole.len();
    let handle = kept.keep(view.caller, whole);
    let omitted = &cut.omitted;
    let mut note = format!(
        "[The result was cut to {budget} bytes of its {total_bytes}: {} array items, {} object members and {} bytes of text were left out, each cut marked with \"…\".",
        omitted.items, omitted.members, omitted.string_bytes
    );
    match &handle {
        Some(handle) => {
            let _ = write!(
                note,
                " Read the whole result with {READ_RESULT} {{\"handle\": \"{handle}\", \"offset\": 0}}, or call the tool again with narrower arguments.]"
            );
        }
        None => {
            note.push_str(" It is too large to keep; call the tool again with narrower arguments.]")
        }
    }
    let truncated = json!({
        "handle": handle,
        "total_bytes": total_bytes,
        "omitted": {
            "items": omitted.items,
            "members": omitted.members,
            "string_bytes": omitted.string_bytes,
        },
    });
    let text = cut.value.to_string();
    let structured = match cut.value {
        Value::Object(mut members) => {
            members.insert("truncated".to_owned(), truncated);
            Value::Object(members)
        }
        other => json!({"value": other, "truncated": truncated}),
    };
    let mut result =
        CallToolResult::success(vec![ContentBlock::text(text), ContentBlock::text(note)]);
    result.structured_content = Some(structured);
    result
}

/// `read_result`: a page of a kept result, as long as the budget.
pub(crate) fn read_result(
    view: View<'_>,
    settings: &McpSettings,
    kept: &KeptResults,
    arguments: JsonObject,
) -> CallToolResult {
    let args: ReadResultArgs = match parse(READ_RESULT, arguments) {
        Ok(args) => args,
        Err(why) => return invalid(&why),
    };
    let budget = settings
        .max_result_bytes
        .unwrap_or(usize::MAX)
        .max(otc_shape::budget::MIN_BUDGET);
    let Some(text) = kept.get(view.caller, &args.handle) else {
        return failure(McpFailure::from_tool_error(otc_mappings::otc::ToolError {
            message: format!(
                "No kept result has the handle '{}': results are kept for {} minutes; call the tool again.",
                args.handle,
                super::kept::KEPT_FOR.as_secs() / 60
            ),
            ..Default::default()
        }));
    };
    match otc_shape::budget::page(&text, args.offset, budget) {
        Ok(page) => {
            let mut result = CallToolResult::success(vec![ContentBlock::text(page.text)]);
            result.structured_content = Some(json!({
                "handle": args.handle,
                "offset": args.offset,
                "next_offset": page.next_offset,
                "total_bytes": text.len(),
            }));
            result
        }
        Err(error) => failure(McpFailure::from_tool_error(otc_mappings::otc::ToolError {
            message: format!(
                "Invalid arguments for {READ_RESULT}: {error}; use 0 or a next_offset it gave."
            ),
            can_retry: true,
            ..Default::default()
        })),
    }
}

fn failure(failed: McpFailure) -> CallToolResult {
    let mut result = CallToolResult::error(vec![ContentBlock::text(failed.text)]);
    result.structured_content = Some(json!({"error": failed.error}));
    result
}

/// A refusal before the call, with the closest paths when `path` names no tool: the served
/// name differing only in case, then what a search for its words finds.
fn refused(catalog: &Catalog, view: View<'_>, refusal: Refusal, path: &str) -> CallToolResult {
    let mut closest: Vec<String> = match &refusal.extra {
        Extra::NoSuchTool { suggestion } => suggestion.iter().cloned().collect(),
        _ => return failure(McpFailure::from_refusal(refusal, path, &[])),
    };
    let name = path.split('@').next().unwrap_or_default();
    let latest = catalog.latest();
    let sees = crate::access::seen_in(catalog, view);
    let scope = otc_search::Scope {
        toolkit: None,
        allowed: sees
            .as_ref()
            .map(|sees| sees as &(dyn Fn(usize) -> bool + Sync)),
    };
    for hit in catalog.search_index().search_in(name, 3, scope) {
        if let Some(entry) = latest.get(hit.position) {
            let id = entry.definition().id.to_string();
            if !closest.contains(&id) {
                closest.push(id);
            }
        }
    }
    closest.truncate(3);
    failure(McpFailure::from_refusal(refusal, path, &closest))
}

/// What a search result says a tool needs from its caller: requirement ids.
fn requires(def: &ToolDefinition) -> Vec<String> {
    let Some(req) = &def.requirements else {
        return Vec::new();
    };
    let mut ids: Vec<String> = req.authorization.iter().map(|a| a.id.clone()).collect();
    ids.extend(req.secrets.iter().map(|s| s.id.clone()));
    if req.user_id {
        ids.push("user_id".to_owned());
    }
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_longer_than_a_request_is_refused_by_its_length() {
        let catalog = Catalog::default();
        let query = "word ".repeat(MAX_QUERY_CHARS);
        let arguments = json!({"query": query}).as_object().cloned().unwrap();
        let everyone = crate::access::Policies::default();
        let anonymous = crate::access::Caller::anonymous();
        let result = search(
            &catalog,
            View::new(&anonymous, &everyone),
            &McpSettings::from(&crate::server::ServerSettings::default()),
            arguments,
        );
        assert_eq!(result.is_error, Some(true));
        let text = serde_json::to_string(&result.content).unwrap();
        assert!(
            text.contains("query is 4999 characters long, at most 1000"),
            "{text}"
        );
        assert!(text.len() < 1000, "the query is not echoed: {text}");
    }

    /// The listed schemas are derived from the argument types: each is an object schema naming
    /// its fields, and what it documents is what the meta-tool parses.
    #[test]
    fn the_listed_schemas_describe_what_the_meta_tools_parse() {
        let tools = tools(Some(65536));
        let schema = |name: &str| {
            let tool = tools.iter().find(|t| t.name == name).unwrap();
            Value::Object(tool.input_schema.as_ref().clone())
        };
        let search_schema = schema(SEARCH);
        assert_eq!(search_schema["type"], "object");
        assert_eq!(search_schema["required"], json!(["query"]));
        assert_eq!(
            search_schema["properties"]["query"]["maxLength"],
            json!(MAX_QUERY_CHARS)
        );
        let limit = &search_schema["properties"]["limit"];
        assert_eq!(
            (
                &limit["type"],
                &limit["minimum"],
                &limit["maximum"],
                &limit["default"]
            ),
            (
                &json!("integer"),
                &json!(1),
                &json!(MAX_LIMIT),
                &json!(DEFAULT_LIMIT)
            )
        );
        let toolkit = &search_schema["properties"]["toolkit"];
        assert_eq!(
            (&toolkit["type"], toolkit.get("default")),
            (&json!("string"), None)
        );
        assert_eq!(schema(READ)["required"], json!(["path"]));
        let call_schema = schema(CALL);
        assert_eq!(call_schema["required"], json!(["path"]));
        assert_eq!(call_schema["properties"]["arguments"]["type"], "object");
        for tool in &tools {
            let schema = Value::Object(tool.input_schema.as_ref().clone());
            assert!(schema.get("title").is_none(), "{schema}");
            for (_, property) in schema["properties"].as_object().unwrap() {
                assert!(property["description"].is_string(), "{property}");
            }
            // A schema that validates as draft 2020-12 and accepts the documented example.
            let validator = jsonschema::draft202012::new(&schema).unwrap();
            let example = json!({"query": "list issues", "path": "Github.ReposGet", "limit": 5, "toolkit": "Github", "arguments": {}, "handle": "0f3a", "offset": 0});
            let example: Map<String, Value> = schema["properties"]
                .as_object()
                .unwrap()
                .keys()
                .map(|k| (k.clone(), example[k].clone()))
                .collect();
            assert!(
                validator.is_valid(&Value::Object(example.clone())),
                "{schema}"
            );
            let parsed = match tool.name.as_ref() {
                SEARCH => parse::<SearchArgs>(SEARCH, example).map(|_| ()),
                READ => parse::<ReadArgs>(READ, example).map(|_| ()),
                READ_RESULT => parse::<ReadResultArgs>(READ_RESULT, example).map(|_| ()),
                _ => parse::<CallArgs>(CALL, example).map(|_| ()),
            };
            assert!(parsed.is_ok(), "{parsed:?}");
        }
    }

    /// Issue 27: a value that came as text is served as the parsed value would be (the same
    /// cut, note and `structuredContent`, only the handle differs), and its text is what is kept.
    #[test]
    fn issue_27_a_value_as_text_is_served_as_the_value_would_be() {
        let kept = KeptResults::default();
        let everyone = crate::access::Policies::default();
        let ann = crate::access::Caller::named("ann");
        let view = View::new(&ann, &everyone);
        let pull = |i: usize| json!({"number": i, "title": format!("pull {i}"), "user": {"login": "octocat"}});
        for value in [
            Value::Array((0..500).map(pull).collect()),
            json!({"total_count": 500, "items": (0..500).map(pull).collect::<Vec<_>>()}),
            json!("é".repeat(5000)),
            json!([1, 2, 3]),
            json!({"small": true}),
        ] {
            let text = value.to_string();
            let json = RawValue::from_string(text.clone()).unwrap();
            let mut parsed = serde_json::to_value(within(value, 1024, view, &kept)).unwrap();
            let mut raw = serde_json::to_value(within_json(json, 1024, view, &kept)).unwrap();
            let handle = |result: &Value| {
                result["structuredContent"]["truncated"]["handle"]
                    .as_str()
                    .map(str::to_owned)
            };
            let (Some(a), Some(b)) = (handle(&parsed), handle(&raw)) else {
                assert_eq!(parsed, raw);
                assert!(handle(&raw).is_none(), "{raw}");
                continue;
            };
            assert_eq!(
                kept.get(&ann, &b).as_deref().map(String::as_str),
                Some(text.as_str())
            );
            assert_eq!(kept.get(&ann, &a).as_deref(), kept.get(&ann, &b).as_deref());
            for result in [&mut parsed, &mut raw] {
                let note = result["content"][1]["text"]
                    .as_str()
                    .unwrap()
                    .replace(&b, &a);
                result["content"][1]["text"] = json!(note);
                result["structuredContent"]["truncated"]["handle"] = json!(a);
            }
            assert_eq!(parsed, raw);
        }
    }
}
