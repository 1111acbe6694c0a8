//! The MCP edge (DESIGN.md §8): the catalog served to MCP hosts, beside the OTC edge in
//! [`crate::server`] and over the same core, [`crate::call`].
//!
//! - [`CatalogServer`] is an rmcp server handler. By default it lists three meta-tools
//!   (`search_tools`, `read_tool`, `call_tool`, in [`meta`]) instead of the catalog, because
//!   hosts cap and pay for every listed tool; with [`Expose::All`] every catalog tool is listed
//!   too, under its OTC `name`.
//! - Two ways in: `POST /mcp` on the bridge's listener ([`http_routes`]: streamable HTTP,
//!   stateless, JSON responses; behind the same guard and authentication as the OTC routes)
//!   and `otc-bridge mcp` on stdio ([`serve_stdio`]).
//! - Both protocol eras: `initialize` (2025-11-25 and older) and the 2026-07-28 stateless
//!   lifecycle (`server/discover`, `_meta` on every request) are rmcp's; [`rpc`] only shapes
//!   the JSON-RPC errors for what rmcp could not type.
//!
//! Every call goes through [`crate::call::call`], the code path of `POST /tools/call`; only the
//! rendering differs, and failures become results with `isError: true` whose words come from
//! [`crate::rescue`]. What a call logs and counts is its event's ([`crate::telemetry::events`]),
//! emitted by the call; the edge counts only its lists and searches.

use std::sync::Arc;
use std::time::Duration;

use otc_adapters::TraceContext;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, SubscriptionFilter,
};
use rmcp::service::{RequestContext, RoleServer, SubscriptionContext};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde::Deserialize;

use crate::access::{Caller, View};
use crate::catalog::registry::SharedCatalog;
use crate::telemetry::events::{Edge, ToolsListed, ToolsSearched};

mod credentials;
mod failure;
mod http_refusals;
mod kept;
pub(crate) mod meta;
mod rpc;
mod stdio;

/// What an MCP host is shown.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Expose {
    /// Only `search_tools`, `read_tool` and `call_tool` (the default): three tools whatever the
    /// catalog's size.
    #[default]
    Meta,
    /// The meta-tools and every catalog tool (its highest version), named by its OTC `name`;
    /// `notifications/tools/list_changed` when the catalog changes.
    All,
}

/// The MCP edge's settings.
#[derive(Debug, Clone)]
pub struct McpSettings {
    /// What is listed.
    pub expose: Expose,
    /// The per-call timeout when a source sets none.
    pub call_timeout: Duration,
    /// Where calls, lists and searches are counted and traced.
    pub telemetry: crate::telemetry::Telemetry,
    /// Semantic search; `None`: lexical.
    pub search: Option<Arc<crate::catalog::semantic::Semantic>>,
    /// Which tools each caller may see and call.
    pub policies: Arc<crate::access::Policies>,
    /// What each caller's calls count against.
    pub limits: Arc<crate::access::Limits>,
    /// Who calls when the request names no caller: the configured identity on stdio
    /// (`mcp.caller`); over HTTP, authentication names the caller of every request.
    pub caller: Caller,
    /// The byte budget of a call's result (`mcp.max_result_bytes`); `None`: results as they
    /// come.
    pub max_result_bytes: Option<usize>,
    /// Where the answers of tools whose source keeps them are kept; `None`: nothing is.
    pub cache: Option<Arc<crate::result_cache::ResultCache>>,
    /// The per-caller sign-ins made through this bridge: an anonymous call that carries a
    /// token one of them handed out is made by its subject.
    pub sign_ins: Option<Arc<otc_adapters::mcp::Challenges>>,
}

/// Catalog tools listed per `tools/list` page in [`Expose::All`] mode: a page's schemas are
/// parsed when asked for, so one request holds a bounded part of a large catalog.
const PAGE_SIZE: usize = 500;

/// The rmcp handler serving a catalog. Cheap to clone: one per HTTP request in stateless mode.
#[derive(Debug, Clone)]
pub struct CatalogServer {
    catalog: SharedCatalog,
    settings: Arc<McpSettings>,
    /// Results cut to the budget, kept whole for `read_result`.
    kept: Arc<kept::KeptResults>,
}

impl CatalogServer {
    /// A server over `catalog`.
    pub fn new(catalog: SharedCatalog, settings: McpSettings) -> Self {
        Self {
            catalog,
            settings: Arc::new(settings),
            kept: Arc::default(),
        }
    }
}

impl CatalogServer {
    /// Who sent the request and the rules it is decided under: the caller server
    /// authentication put on the HTTP request with the rules it was authenticated under, else
    /// (stdio) the configured identity and the configured rules.
    fn view<'a>(&'a self, context: &'a RequestContext<RoleServer>) -> View<'a> {
        let parts = context.extensions.get::<http::request::Parts>();
        let caller = parts
            .and_then(|parts| parts.extensions.get::<Caller>())
            .unwrap_or(&self.settings.caller);
        match parts.and_then(|parts| parts.extensions.get::<Arc<crate::server::Rules>>()) {
            Some(rules) => View::new(caller, &rules.policies).limited(&rules.limits),
            None => View::new(caller, &self.settings.policies).limited(&self.settings.limits),
        }
    }
}

impl ServerHandler for CatalogServer {
    fn get_info(&self) -> ServerConfig {
        // The meta-tools never change; only `all` mode's list follows the catalog.
        let capabilities = if self.settings.expose == Expose::All {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build()
        } else {
            ServerCapabilities::builder().enable_tools().build()
        };
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("otc-bridge", env!("CARGO_PKG_VERSION")))
            .with_instructions(meta::INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let view = self.view(&context);
        ToolsListed { edge: Edge::Mcp }.emit(&self.settings.telemetry);
        let mut tools = Vec::new();
        let start = match request.and_then(|r| r.cursor) {
            Some(cursor) => cursor
                .parse::<usize>()
                .map_err(|_| ErrorData::invalid_params("unknown cursor", None))?,
            None => {
                tools.extend(meta::tools(self.settings.max_result_bytes));
                0
            }
        };
        let mut next_cursor = None;
        if self.settings.expose == Expose::All {
            let catalog = self.catalog.current();
            let latest = catalog.latest();
            // The cursor is a position in the catalog's list; a page holds the next tools the
            // caller may see, so a restricted caller's pages are as full as anyone's.
            let mut end = start;
            let mut listed = 0;
            for entry in latest.get(start..).unwrap_or_default() {
                if listed == PAGE_SIZE {
                    break;
                }
                end += 1;
                if view.sees(entry) {
                    tools.push(meta::listed(entry));
                    listed += 1;
                }
            }
            if end < latest.len() {
                next_cursor = Some(end.to_string());
            }
        }
        let mut result = ListToolsResult::with_all_items(tools);
        result.next_cursor = next_cursor;
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let headers = context
            .extensions
            .get::<http::request::Parts>()
            .map(|p| &p.headers);
        // The caller's trace context, when traces are on: `_meta` (the MCP convention), else
        // the HTTP request's `traceparent` header.
        let trace_context = self.settings.telemetry.traces.as_ref().and_then(|_| {
            let meta = &context.meta;
            let from_meta = meta.get_traceparent().map(|traceparent| TraceContext {
                traceparent: traceparent.to_owned(),
                tracestate: meta.get_tracestate().map(str::to_owned),
            });
            from_meta.or_else(|| headers.and_then(crate::telemetry::traces::from_headers))
        });
        let arguments = request.arguments.unwrap_or_default();
        let catalog = self.catalog.current();
        let view = self.view(&context);
        let result = match request.name.as_ref() {
            meta::SEARCH => {
                ToolsSearched.emit(&self.settings.telemetry);
                meta::search(&catalog, view, &self.settings, arguments)
            }
            meta::READ => meta::read(&catalog, view, arguments),
            meta::READ_RESULT if self.settings.max_result_bytes.is_some() => {
                meta::read_result(view, &self.settings, &self.kept, arguments)
            }
            meta::CALL => {
                meta::call(
                    &catalog,
                    view,
                    &self.settings,
                    &self.kept,
                    meta::Incoming {
                        headers,
                        trace_context,
                    },
                    arguments,
                )
                .await
            }
            name => match (
                self.settings.expose,
                catalog.by_otc_name(name).filter(|e| view.sees(e)),
            ) {
                (Expose::All, Some(entry)) => {
                    let path = entry.definition().id.to_string();
                    let arguments = arguments.into();
                    meta::call_path(
                        &catalog,
                        view,
                        &self.settings,
                        &self.kept,
                        meta::Incoming {
                            headers,
                            trace_context,
                        },
                        path,
                        arguments,
                    )
                    .await
                }
                _ => meta::not_found(&catalog, view, name),
            },
        };
        Ok(result.into())
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        // The bridge defines no methods of its own: whatever comes here is a defined method
        // whose params did not parse, or an unknown one.
        Err(rpc::unparsed(&request))
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        // Only `all` mode lists the catalog, so only there does its change change the list.
        (self.settings.expose == Expose::All && requested.tools_list_changed == Some(true))
            .then(|| SubscriptionFilter::builder().tools_list_changed().build())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let mut changes = self.catalog.changes();
        loop {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                changed = changes.changed() => {
                    if changed.is_err() || context.sink().notify_tool_list_changed().await.is_err() {
                        return Ok(());
                    }
                }
            }
        }
    }
}

/// `POST /mcp`: streamable HTTP, stateless (no session to keep or lose), JSON responses, and
/// JSON-RPC errors for bodies rmcp cannot read ([`http_refusals`]). `Host`/`Origin` checks and
/// authentication are the bridge's own, applied by the router around it (one guard for both
/// edges), so rmcp's own Host check is off.
pub(crate) fn http_routes<S: Clone + Send + Sync + 'static>(
    server: CatalogServer,
    max_body_bytes: usize,
) -> axum::Router<S> {
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .with_max_request_body_bytes(max_body_bytes)
        .disable_allowed_hosts();
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let refusals = axum::middleware::from_fn_with_state(max_body_bytes, http_refusals::refusals);
    axum::Router::new().route_service("/mcp", tower::Layer::layer(&refusals, service))
}

/// Serves `server` on stdin/stdout until the host closes stdin. In [`Expose::All`] mode the
/// host is told `notifications/tools/list_changed` whenever the catalog changes. A line that is
/// no JSON-RPC message is answered with a JSON-RPC error (see `stdio.rs`).
pub async fn serve_stdio(server: CatalogServer) -> Result<(), std::io::Error> {
    let expose = server.settings.expose;
    // Subscribed before the handshake: a change while it runs is announced too.
    let changes = server.catalog.changes();
    let (transport, writer) = stdio::StdioServer::new(tokio::io::stdin(), tokio::io::stdout());
    let served = serve_session(server, transport, expose, changes).await;
    // Whatever ended the session, what was queued for the host is written before returning.
    if let Err(error) = writer.await {
        tracing::warn!(%error, "The writer to the MCP host failed.");
    }
    served
}

/// One session over `transport`, announcing catalog changes in [`Expose::All`] mode.
async fn serve_session(
    server: CatalogServer,
    transport: stdio::StdioServer<tokio::io::Stdin>,
    expose: Expose,
    mut changes: tokio::sync::watch::Receiver<()>,
) -> Result<(), std::io::Error> {
    let running = server
        .serve(transport)
        .await
        .map_err(std::io::Error::other)?;
    let peer = running.peer().clone();
    let announcer = tokio::spawn(async move {
        while expose == Expose::All && changes.changed().await.is_ok() {
            if peer.notify_tool_list_changed().await.is_err() {
                break;
            }
        }
    });
    let ended = running.waiting().await;
    announcer.abort();
    ended.map(|_| ()).map_err(std::io::Error::other)
}
