//! The demo server's tools, written as raw JSON Schemas (not derived) so the test inputs are
//! exactly what real servers send: `$defs` with `$ref`s, nested objects, enums, an
//! `outputSchema`, titles and annotations.
//!
//! | tool | what it does |
//! |---|---|
//! | `echo` | returns `message` as text |
//! | `create_order` | nested `$defs`, enums; returns `structuredContent` matching its `outputSchema` |
//! | `divide` | `a / b`; `b = 0` answers `isError: true` |
//! | `picture` | a text block and an image block |
//! | `slow` | sleeps `ms` milliseconds; a cancelled call is counted |
//! | `crash` | exits the process with `code` (default 3) |
//! | `toggle_extra` | adds or removes the tool `extra` and sends `notifications/tools/list_changed` |
//! | `evolve` | changes `echo`'s definition (`stage`: `original`, `text` a new description, `compatible` a new optional input, `breaking` a new required input) and sends `notifications/tools/list_changed` |
//! | `stats` | calls and cancellations seen; waits until `wait_for_cancelled` cancellations |
//!
//! Fault tools, for the bridge's regression tests (issue 8). They are always callable but listed
//! only with `--fault-tools`, so the demo catalog stays small:
//!
//! | tool | what it does |
//! |---|---|
//! | `env` | the process's environment, as `structuredContent` `{"vars": {NAME: VALUE}}` |
//! | `huge` | a text answer of `bytes` bytes (default 17 MiB: past every transport's 16 MiB cap) |
//! | `deep` | `structuredContent` nested `levels` objects deep (default 200: past serde's 128) |
//! | `ask` | answers `resultType: "input_required"`, eliciting a name from the user (2026-07-28) |
//!
//! Arguments that do not fit a tool are a JSON-RPC invalid-params error. `tools/list` is paged
//! (`PAGE_SIZE` tools per page) so clients must follow `nextCursor`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::time::Duration;

use rmcp::model as mcp;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::sync::watch;

/// Tools per `tools/list` page.
const PAGE_SIZE: usize = 3;

/// The demo server. Clones share their counters (one per process).
#[derive(Debug, Clone, Default)]
pub(crate) struct DemoServer {
    state: Arc<State>,
    /// List the fault tools too.
    pub(crate) list_faults: bool,
    /// Which MCP lifecycles it answers.
    pub(crate) era: Era,
    /// The `ttlMs` cache hint put on its tool list (2026-07-28 clients re-list when it runs out).
    pub(crate) list_ttl_ms: Option<u64>,
    /// Change the tool list without announcing it (`list_changed` is not sent), so only the
    /// list's `ttlMs` tells a client to re-list.
    pub(crate) silent_changes: bool,
}

/// The MCP lifecycles a server answers (`--era`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Era {
    /// Both: `server/discover` (2026-07-28, stateless) and `initialize` (rmcp's default).
    #[default]
    Dual,
    /// 2026-07-28 only: `initialize` is refused.
    Modern,
    /// The handshake era only: `server/discover` is an unknown method, as on older servers.
    Legacy,
}

#[derive(Debug)]
struct State {
    calls: AtomicU64,
    cancelled: watch::Sender<u64>,
    extra: AtomicBool,
    /// How `echo` is defined now ([`evolve`]).
    stage: AtomicU8,
}

impl Default for State {
    fn default() -> Self {
        Self {
            calls: AtomicU64::new(0),
            cancelled: watch::channel(0).0,
            extra: AtomicBool::new(false),
            stage: AtomicU8::new(0),
        }
    }
}

fn tool(value: Value) -> mcp::Tool {
    // The definitions below are literals of the right shape; a mistake is a bug in this file.
    serde_json::from_value(value).unwrap_or_default()
}

fn base_tools() -> Vec<mcp::Tool> {
    vec![
        tool(json!({
            "name": "echo",
            "title": "Echo",
            "description": "Returns the message unchanged.",
            "inputSchema": {
                "type": "object",
                "properties": {"message": {"type": "string", "description": "What to echo."}},
                "required": ["message"]
            },
            "annotations": {"readOnlyHint": true, "idempotentHint": true, "openWorldHint": false}
        })),
        tool(json!({
            "name": "create_order",
            "title": "Create an order",
            "description": "Places an order for a customer.",
            "inputSchema": {
                "type": "object",
                "$defs": {
                    "Address": {
                        "type": "object",
                        "properties": {
                            "street": {"type": "string"},
                            "country": {"type": "string", "enum": ["FR", "DE", "US"]}
                        },
                        "required": ["street", "country"]
                    },
                    "Customer": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string", "description": "Full name."},
                            "address": {"$ref": "#/$defs/Address"}
                        },
                        "required": ["name"]
                    },
                    "Item": {
                        "type": "object",
                        "properties": {
                            "sku": {"type": "string"},
                            "quantity": {"type": "integer", "minimum": 1},
                            "size": {"type": "string", "enum": ["S", "M", "L"]}
                        },
                        "required": ["sku", "quantity"]
                    }
                },
                "properties": {
                    "customer": {"$ref": "#/$defs/Customer"},
                    "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}, "minItems": 1},
                    "priority": {"type": "string", "enum": ["low", "normal", "high"], "default": "normal"}
                },
                "required": ["customer", "items"]
            },
            "outputSchema": {
                "type": "object",
                "properties": {
                    "order_id": {"type": "string"},
                    "total_quantity": {"type": "integer"},
                    "priority": {"type": "string"}
                },
                "required": ["order_id", "total_quantity", "priority"]
            },
            "annotations": {"destructiveHint": false, "idempotentHint": false}
        })),
        tool(json!({
            "name": "divide",
            "description": "Divides a by b. Dividing by zero is reported as a tool error.",
            "inputSchema": {
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"]
            }
        })),
        tool(json!({
            "name": "picture",
            "description": "Returns a caption and a 1x1 PNG.",
            "inputSchema": {"type": "object", "properties": {}}
        })),
        tool(json!({
            "name": "slow",
            "description": "Sleeps for `ms` milliseconds, then answers.",
            "inputSchema": {
                "type": "object",
                "properties": {"ms": {"type": "integer", "minimum": 0}},
                "required": ["ms"]
            }
        })),
        tool(json!({
            "name": "crash",
            "description": "Exits the server process at once.",
            "inputSchema": {"type": "object", "properties": {"code": {"type": "integer"}}},
            "annotations": {"destructiveHint": true}
        })),
        tool(json!({
            "name": "toggle_extra",
            "description": "Adds the tool `extra`, or removes it, and announces the change.",
            "inputSchema": {"type": "object", "properties": {}}
        })),
        tool(json!({
            "name": "evolve",
            "description": "Changes the definition of `echo` and announces the change.",
            "inputSchema": {
                "type": "object",
                "properties": {"stage": {"type": "string", "enum": STAGES}},
                "required": ["stage"]
            }
        })),
        tool(json!({
            "name": "stats",
            "description": "Calls handled and calls cancelled by the client so far.",
            "inputSchema": {
                "type": "object",
                "properties": {"wait_for_cancelled": {"type": "integer", "minimum": 0}}
            },
            "outputSchema": {
                "type": "object",
                "properties": {"calls": {"type": "integer"}, "cancelled": {"type": "integer"}}
            }
        })),
    ]
}

fn fault_tools() -> Vec<mcp::Tool> {
    vec![
        tool(json!({
            "name": "env",
            "description": "The server process's environment variables.",
            "inputSchema": {"type": "object", "properties": {}}
        })),
        tool(json!({
            "name": "huge",
            "description": "A text answer of `bytes` bytes; with `structured`, a structured answer of about `bytes` bytes (`{items: [...]}`, its text repeated in a text block, as rmcp writes one).",
            "inputSchema": {"type": "object", "properties": {
                "bytes": {"type": "integer", "minimum": 0},
                "structured": {"type": "boolean"}
            }}
        })),
        tool(json!({
            "name": "deep",
            "description": "An answer nested `levels` objects deep.",
            "inputSchema": {"type": "object", "properties": {"levels": {"type": "integer", "minimum": 0}}}
        })),
        tool(json!({
            "name": "ask",
            "description": "Greets the user, after asking for their name.",
            "inputSchema": {"type": "object", "properties": {}}
        })),
        tool(json!({
            "name": "trace",
            "description": "The W3C trace context the call carried in `_meta` (SEP-414).",
            "inputSchema": {"type": "object", "properties": {}}
        })),
    ]
}

/// `ask`: greets whoever the client's elicitation named; until then, asks for the name
/// (`input_required`, SEP-2322).
fn ask(request: &mcp::CallToolRequestParams) -> mcp::CallToolResponse {
    let name = request
        .input_responses
        .as_ref()
        .and_then(|responses| serde_json::to_value(responses).ok())
        .and_then(|v| v["name"]["content"]["name"].as_str().map(str::to_owned));
    if let Some(name) = name {
        let hello = mcp::ContentBlock::text(format!("Hello, {name}!"));
        return mcp::CallToolResult::success(vec![hello]).into();
    }
    let question = mcp::InputRequest::Elicitation(mcp::ElicitRequest::new(
        mcp::ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: "What is your name?".into(),
            requested_schema: serde_json::from_value(json!({
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"]
            }))
            .unwrap_or_else(|e| unreachable!("a valid elicitation schema: {e}")),
        },
    ));
    let mut requests = mcp::InputRequests::new();
    requests.insert("name".to_owned(), question);
    mcp::InputRequiredResult::new(Some(requests), Some("asked".to_owned())).into()
}

/// The stages of `evolve`, in the order of `State::stage`.
const STAGES: [&str; 4] = ["original", "text", "compatible", "breaking"];

/// `echo` as defined at `stage`: the same contract with a new description (`text`), a new
/// optional input (`compatible`), or a new required input (`breaking`), for the bridge's
/// lockfile tests.
fn evolve(mut echo: mcp::Tool, stage: u8) -> mcp::Tool {
    let mut schema = Value::Object((*echo.input_schema).clone());
    match STAGES.get(usize::from(stage)).copied() {
        Some("text") => echo.description = Some("Repeats the message back, word for word.".into()),
        Some("compatible") => {
            schema["properties"]["prefix"] = json!({"type": "string"});
        }
        Some("breaking") => {
            schema["properties"]["times"] = json!({"type": "integer", "minimum": 1});
            schema["required"] = json!(["message", "times"]);
        }
        _ => {}
    }
    if let Value::Object(map) = schema {
        echo.input_schema = Arc::new(map);
    }
    echo
}

fn extra_tool() -> mcp::Tool {
    tool(json!({
        "name": "extra",
        "description": "Only listed after toggle_extra.",
        "inputSchema": {"type": "object", "properties": {}}
    }))
}

/// A 1x1 transparent PNG.
const PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Echo {
    message: String,
}

#[derive(Deserialize)]
struct Evolve {
    stage: String,
}

#[derive(Deserialize)]
struct Order {
    customer: Customer,
    items: Vec<Item>,
    #[serde(default)]
    priority: Option<String>,
}

#[derive(Deserialize)]
struct Customer {
    name: String,
}

#[derive(Deserialize)]
struct Item {
    quantity: u64,
}

#[derive(Deserialize)]
struct Divide {
    a: f64,
    b: f64,
}

#[derive(Deserialize)]
struct Slow {
    ms: u64,
}

#[derive(Deserialize, Default)]
struct Crash {
    #[serde(default)]
    code: Option<i32>,
}

#[derive(Deserialize)]
struct Huge {
    #[serde(default = "default_huge_bytes")]
    bytes: usize,
    #[serde(default)]
    structured: bool,
}

impl Huge {
    /// `{items: [...]}`, with items until their JSON text reaches `bytes`.
    fn items(&self) -> Value {
        let mut items = Vec::new();
        let mut written = 0;
        while written < self.bytes {
            let i = items.len();
            let item = json!({"id": i, "title": format!("Item {i} of the huge answer"), "done": i % 2 == 0});
            written += item.to_string().len() + 1;
            items.push(item);
        }
        json!({ "items": items })
    }
}

fn default_huge_bytes() -> usize {
    17 * 1024 * 1024
}

#[derive(Deserialize)]
struct Deep {
    #[serde(default = "default_deep_levels")]
    levels: usize,
}

fn default_deep_levels() -> usize {
    200
}

#[derive(Deserialize, Default)]
struct Stats {
    #[serde(default)]
    wait_for_cancelled: Option<u64>,
}

fn args<T: DeserializeOwned>(request: &mcp::CallToolRequestParams) -> Result<T, ErrorData> {
    let value = Value::Object(request.arguments.clone().unwrap_or_default());
    serde_json::from_value(value).map_err(|e| {
        ErrorData::invalid_params(format!("invalid arguments for {}: {e}", request.name), None)
    })
}

impl DemoServer {
    fn tools(&self) -> Vec<mcp::Tool> {
        let stage = self.state.stage.load(Ordering::SeqCst);
        let mut tools: Vec<mcp::Tool> = base_tools()
            .into_iter()
            .map(|t| {
                if t.name == "echo" {
                    evolve(t, stage)
                } else {
                    t
                }
            })
            .collect();
        if self.list_faults {
            tools.extend(fault_tools());
        }
        if self.state.extra.load(Ordering::SeqCst) {
            tools.push(extra_tool());
        }
        tools
    }

    async fn dispatch(
        &self,
        request: &mcp::CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<mcp::CallToolResult, ErrorData> {
        let text = |s: String| mcp::CallToolResult::success(vec![mcp::ContentBlock::text(s)]);
        match request.name.as_ref() {
            "echo" => Ok(text(args::<Echo>(request)?.message)),
            "create_order" => {
                let order: Order = args(request)?;
                let total: u64 = order.items.iter().map(|i| i.quantity).sum();
                Ok(mcp::CallToolResult::structured(json!({
                    "order_id": format!("order-{}-{}", order.customer.name.len(), total),
                    "total_quantity": total,
                    "priority": order.priority.unwrap_or_else(|| "normal".to_owned()),
                })))
            }
            "divide" => {
                let d: Divide = args(request)?;
                if d.b == 0.0 {
                    return Ok(mcp::CallToolResult::error(vec![mcp::ContentBlock::text(
                        "cannot divide by zero",
                    )]));
                }
                Ok(text((d.a / d.b).to_string()))
            }
            "picture" => Ok(mcp::CallToolResult::success(vec![
                mcp::ContentBlock::text("a transparent pixel"),
                mcp::ContentBlock::image(PIXEL_PNG, "image/png"),
            ])),
            "slow" => {
                let slow: Slow = args(request)?;
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(slow.ms)) => {
                        Ok(text(format!("slept {} ms", slow.ms)))
                    }
                    () = context.ct.cancelled() => {
                        self.state.cancelled.send_modify(|n| *n += 1);
                        Err(ErrorData::internal_error("cancelled", None))
                    }
                }
            }
            "crash" => {
                let crash: Crash = args(request)?;
                std::process::exit(crash.code.unwrap_or(3));
            }
            "toggle_extra" => {
                let now = !self.state.extra.fetch_xor(true, Ordering::SeqCst);
                // Sent after the list changed, so a client that re-lists sees the new list.
                if !self.silent_changes {
                    let _ = context.peer.notify_tool_list_changed().await;
                }
                Ok(text(format!(
                    "extra is now {}",
                    if now { "listed" } else { "gone" }
                )))
            }
            "evolve" => {
                let stage: Evolve = args(request)?;
                let Some(n) = STAGES.iter().position(|s| *s == stage.stage) else {
                    return Err(ErrorData::invalid_params("unknown stage", None));
                };
                self.state.stage.store(n as u8, Ordering::SeqCst);
                let _ = context.peer.notify_tool_list_changed().await;
                Ok(text(format!("echo is now {}", stage.stage)))
            }
            "stats" => {
                let stats: Stats = args(request)?;
                let mut cancelled = self.state.cancelled.subscribe();
                if let Some(n) = stats.wait_for_cancelled {
                    let wait = cancelled.wait_for(|c| *c >= n);
                    let _ = tokio::time::timeout(Duration::from_secs(10), wait).await;
                }
                let cancelled = *cancelled.borrow();
                Ok(mcp::CallToolResult::structured(json!({
                    "calls": self.state.calls.load(Ordering::SeqCst),
                    "cancelled": cancelled,
                })))
            }
            "extra" if self.state.extra.load(Ordering::SeqCst) => Ok(text("extra".to_owned())),
            "env" => {
                let vars: serde_json::Map<String, Value> = std::env::vars_os()
                    .map(|(name, value)| {
                        let value = value.to_string_lossy().into_owned();
                        (name.to_string_lossy().into_owned(), Value::String(value))
                    })
                    .collect();
                Ok(mcp::CallToolResult::structured(json!({ "vars": vars })))
            }
            "huge" => {
                let huge = args::<Huge>(request)?;
                Ok(if huge.structured {
                    mcp::CallToolResult::structured(huge.items())
                } else {
                    text("x".repeat(huge.bytes))
                })
            }
            // The server loop moved `params._meta` into the context before dispatch.
            "trace" => Ok(mcp::CallToolResult::structured(json!({
                "traceparent": context.meta.get_traceparent(),
                "tracestate": context.meta.get_tracestate(),
            }))),
            "deep" => {
                // Objects, since structuredContent must be one.
                let mut value = json!("bottom");
                for _ in 0..args::<Deep>(request)?.levels {
                    value = json!({ "next": value });
                }
                Ok(mcp::CallToolResult::structured(value))
            }
            other => Err(ErrorData::invalid_params(
                format!("unknown tool {other}"),
                None,
            )),
        }
    }
}

impl ServerHandler for DemoServer {
    fn get_info(&self) -> mcp::ServerConfig {
        mcp::ServerConfig::new(
            mcp::ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        // "2.1", not x.y.z: clients normalise it (to 2.1.0 in tool ids).
        .with_server_info(mcp::Implementation::new("example-mcp-server", "2.1"))
        .with_protocol_version(mcp::ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn list_tools(
        &self,
        request: Option<mcp::PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<mcp::ListToolsResult, ErrorData> {
        let tools = self.tools();
        let start = match request.and_then(|r| r.cursor) {
            Some(cursor) => cursor
                .parse::<usize>()
                .map_err(|_| ErrorData::invalid_params("bad cursor", None))?,
            None => 0,
        };
        let end = (start + PAGE_SIZE).min(tools.len());
        let mut page = mcp::ListToolsResult::with_all_items(
            tools.get(start..end).unwrap_or_default().to_vec(),
        );
        if end < tools.len() {
            page.next_cursor = Some(end.to_string());
        }
        page.ttl_ms = self.list_ttl_ms;
        Ok(page)
    }

    async fn initialize(
        &self,
        request: mcp::InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<mcp::InitializeResult, ErrorData> {
        if self.era == Era::Modern {
            return Err(ErrorData::invalid_request(
                "this server speaks MCP 2026-07-28 only: open with server/discover",
                None,
            ));
        }
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<mcp::DiscoverResult, ErrorData> {
        if self.era == Era::Legacy {
            return Err(ErrorData::method_not_found::<mcp::DiscoverRequestMethod>());
        }
        let _ = context;
        Ok(mcp::DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            self.get_info(),
        ))
    }

    async fn call_tool(
        &self,
        request: mcp::CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<mcp::CallToolResponse, ErrorData> {
        self.state.calls.fetch_add(1, Ordering::SeqCst);
        if request.name == "ask" {
            return Ok(ask(&request));
        }
        self.dispatch(&request, &context).await.map(Into::into)
    }
}
