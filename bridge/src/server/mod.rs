//! The HTTP edge (axum): `GET /health`, `GET /tools`, `POST /tools/call` and its alias
//! `POST /call`, in every dialect of DESIGN.md §2, and `POST /mcp`, the MCP edge
//! ([`crate::server::mcp`]) behind the same guard and authentication.
//!
//! What happens to a request, outside in:
//!
//! 1. [`log`]: one log line per request, whatever the outcome;
//! 2. [`guard`]: cross-site `Origin`s and (on loopback) foreign `Host`s are refused, so a web page
//!    cannot drive the bridge (CSRF, DNS rebinding); allowed origins get CORS headers;
//! 3. [`auth`]: server authentication on every route but `/health`, `/oauth/callback` and (when
//!    configured so) `/metrics`;
//! 4. [`extract`]: the body is read once under the limit, the dialect detected once, the
//!    envelope parsed; a failure is a typed [`Rejection`](extract::Rejection) rendered in the caller's dialect;
//! 5. the handlers in `routes`, where `call_tool` hands the parsed call to [`crate::call`].
//!
//! The catalog page (`GET /`, `/ui/…`, [`ui`]) sits behind the same guard; it authenticates each
//! page itself, to answer a missing credential with a prompt rather than JSON.
//!
//! What a refusal says is decided in [`crate::rescue`] only (a [`crate::rescue::Refusal`]);
//! [`reply`] writes it in the dialect.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use otc_mappings::otc::Dialect;

use crate::catalog::registry::SharedCatalog;

pub(crate) mod auth;
mod extract;
pub(crate) mod guard;
pub(crate) mod listen;
mod log;
pub(crate) mod mcp;
mod numbers;
mod reply;
mod routes;
mod ui;

pub use auth::Authenticator;
pub(crate) use extract::{CallEnvelope, ListEnvelope};
pub(crate) use reply::Reply;

/// Server settings that do not change while serving.
#[derive(Debug, Clone)]
pub struct ServerSettings {
    /// The dialect of responses when the request carries no signal.
    pub default_dialect: Dialect,
    /// The largest request body accepted, in bytes.
    pub max_body_bytes: usize,
    /// How long one call may take before it fails with a retryable timeout (a source's
    /// `timeout_secs` overrides it).
    pub call_timeout: Duration,
    /// The address the server is bound to, once known. On a loopback address only `Host`
    /// values that name the bridge are accepted (DNS rebinding).
    pub listen: Option<SocketAddr>,
    /// Web origins allowed to call the bridge from a browser (`--allow-origin`), e.g.
    /// `https://app.example.com`. Other cross-site origins are refused.
    pub allowed_origins: Vec<String>,
    /// Further `Host` names accepted on loopback (`--allow-host`), e.g. a reverse proxy's
    /// public name.
    pub allowed_hosts: Vec<String>,
    /// What `POST /mcp` lists (`--mcp-expose`).
    pub mcp_expose: crate::server::mcp::Expose,
    /// `mcp.max_result_bytes`: the byte budget of a result on the MCP edge.
    pub mcp_max_result_bytes: Option<usize>,
    /// The per-caller authorization challenges the bridge issued, which `/oauth/callback`
    /// completes and `/oauth/check/{id}` reports.
    pub challenges: Option<Arc<otc_adapters::mcp::Challenges>>,
    /// Where calls, lists and searches are counted (what `GET /metrics` reports) and traced;
    /// each part `None` when off.
    pub telemetry: crate::telemetry::Telemetry,
    /// Whether `GET /metrics` is served without server authentication.
    pub metrics_public: bool,
    /// Where repeated `call_id`s are answered from; `None`: every call runs.
    pub idempotency: Option<Arc<crate::idempotency::Idempotency>>,
    /// Where the answers of tools whose source keeps them are kept; `None`: nothing is.
    pub cache: Option<Arc<crate::result_cache::ResultCache>>,
    /// Semantic search (the model and its progress); `None`: search is lexical.
    pub search: Option<Arc<crate::catalog::semantic::Semantic>>,
    /// Which tools each caller may see and call (empty: every caller, every tool).
    pub policies: Arc<crate::access::Policies>,
    /// What each caller's calls count against (empty: no limits).
    pub limits: Arc<crate::access::Limits>,
    /// Whether the catalog page (`GET /`, `/ui/…`) is served (`ui:`, default on).
    pub ui: bool,
}

impl Default for ServerSettings {
    fn default() -> Self {
        Self {
            default_dialect: Dialect::Otc,
            max_body_bytes: 1024 * 1024,
            call_timeout: Duration::from_secs(60),
            listen: None,
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            mcp_expose: crate::server::mcp::Expose::Meta,
            mcp_max_result_bytes: None,
            challenges: None,
            telemetry: crate::telemetry::Telemetry::default(),
            metrics_public: false,
            idempotency: None,
            cache: None,
            search: None,
            policies: Arc::default(),
            limits: Arc::default(),
            ui: true,
        }
    }
}

/// Who may come in, and what each caller may see and call: authentication, policies and limits.
/// A reload swaps them as one ([`AppState::set_rules`]); a request takes them once, when it is
/// authenticated, and is decided entirely under them, whatever a reload does meanwhile.
#[derive(Debug, Default)]
pub struct Rules {
    /// Server authentication; `None` when off.
    pub auth: Option<Authenticator>,
    /// Which tools each caller may see and call.
    pub policies: Arc<crate::access::Policies>,
    /// What each caller's calls count against.
    pub limits: Arc<crate::access::Limits>,
}

/// Shared state of the server.
#[derive(Debug, Clone)]
pub struct AppState(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    catalog: SharedCatalog,
    settings: ServerSettings,
    rules: arc_swap::ArcSwap<Rules>,
    guard: guard::Guard,
}

impl AppState {
    /// State serving `catalog` with `settings` (its policies and limits the first rules);
    /// `auth` `None` means no authentication.
    pub fn new(
        catalog: SharedCatalog,
        settings: ServerSettings,
        auth: Option<Authenticator>,
    ) -> Self {
        let guard = guard::Guard::new(&settings);
        // The catalog page shows the last minutes of each source's calls: snapshots of the
        // counters, taken in the background (nothing is added to the call path).
        if settings.ui
            && let Some(metrics) = &settings.telemetry.metrics
        {
            crate::telemetry::metrics::Metrics::sample_while_alive(metrics);
        }
        let rules = Rules {
            auth,
            policies: Arc::clone(&settings.policies),
            limits: Arc::clone(&settings.limits),
        };
        Self(Arc::new(Inner {
            catalog,
            settings,
            rules: arc_swap::ArcSwap::from_pointee(rules),
            guard,
        }))
    }

    /// The rules requests are decided under now.
    pub fn rules(&self) -> Arc<Rules> {
        self.0.rules.load_full()
    }

    /// Replaces the rules (a reload): requests authenticated from now on are decided under
    /// `rules`; those in flight finish under the ones they started with.
    pub fn set_rules(&self, rules: Rules) {
        self.0.rules.store(Arc::new(rules));
    }

    /// The catalog.
    pub fn catalog(&self) -> &SharedCatalog {
        &self.0.catalog
    }

    /// The settings.
    pub fn settings(&self) -> &ServerSettings {
        &self.0.settings
    }

    fn guard(&self) -> &guard::Guard {
        &self.0.guard
    }
}

/// The router. Authentication guards every route but `/health`.
pub fn app(state: AppState) -> Router {
    let settings = state.settings();
    let mcp = crate::server::mcp::http_routes(
        crate::server::mcp::CatalogServer::new(
            state.catalog().clone(),
            crate::server::mcp::McpSettings::from(settings),
        ),
        settings.max_body_bytes,
    );
    let mut guarded = Router::new()
        .route("/tools", get(routes::list_tools))
        .route("/tools/call", post(routes::call_tool))
        .route("/call", post(routes::call_tool))
        .merge(mcp)
        .route("/oauth/check/{id}", get(routes::check_authorization));
    let mut open = Router::new();
    if settings.ui {
        open = open.merge(ui::routes());
    }
    if settings.telemetry.metrics.is_some() {
        // Behind server authentication unless the operator made it public (a scraper
        // without credentials on a private network).
        if settings.metrics_public {
            open = open.route("/metrics", get(routes::metrics));
        } else {
            guarded = guarded.route("/metrics", get(routes::metrics));
        }
    }
    let guarded = guarded.route_layer(axum::middleware::from_fn_with_state(
        state.clone(),
        auth::require,
    ));
    let mut router = Router::new()
        .route("/health", get(routes::health))
        .merge(open)
        // A person's browser lands here from the authorization server, without the bridge's
        // credentials; the `state` it carries is what authorizes it.
        .route("/oauth/callback", get(routes::authorization_callback))
        .merge(guarded)
        .fallback(routes::not_found)
        // The body limit is enforced by the extractors, which answer with the standard's 400
        // shape instead of axum's plain-text 413.
        .layer(DefaultBodyLimit::disable());
    if let Some(cors) = guard::cors(&state.settings().allowed_origins) {
        router = router.layer(cors);
    }
    router
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            guard::check,
        ))
        .layer(axum::middleware::from_fn(log::request))
        .with_state(state)
}

/// The MCP edge's share of the server's settings.
impl From<&ServerSettings> for mcp::McpSettings {
    fn from(settings: &ServerSettings) -> Self {
        Self {
            expose: settings.mcp_expose,
            call_timeout: settings.call_timeout,
            telemetry: settings.telemetry.clone(),
            search: settings.search.clone(),
            policies: Arc::clone(&settings.policies),
            limits: Arc::clone(&settings.limits),
            // Over HTTP, authentication names each request's caller (anonymous when off).
            caller: crate::access::Caller::anonymous(),
            max_result_bytes: settings.mcp_max_result_bytes,
            cache: settings.cache.clone(),
            sign_ins: settings.challenges.clone(),
        }
    }
}
