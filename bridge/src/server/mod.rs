//! The OTC HTTP server (axum): `GET /health`, `GET /tools`, `POST /tools/call` and its alias
//! `POST /call`, in every dialect of DESIGN.md §2.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::HeaderMap;
use axum::routing::{get, post};
use otc_mappings::otc::{Dialect, OXP_VERSION_HEADER};
use serde_json::Value;

use crate::registry::SharedCatalog;
use crate::rescue::ApiError;

pub mod auth;
mod reply;
mod routes;

pub use auth::Authenticator;
pub use reply::Reply;

/// Server settings that do not change while serving.
#[derive(Debug, Clone)]
pub struct ServerSettings {
    /// The dialect of responses when the request carries no signal.
    pub default_dialect: Dialect,
    /// The largest request body accepted, in bytes.
    pub max_body_bytes: usize,
    /// How long one call may take before it fails with a retryable timeout.
    pub call_timeout: Duration,
}

impl Default for ServerSettings {
    fn default() -> Self {
        Self {
            default_dialect: Dialect::Otc,
            max_body_bytes: 1024 * 1024,
            call_timeout: Duration::from_secs(60),
        }
    }
}

/// Shared state of the server.
#[derive(Debug, Clone)]
pub struct AppState(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    catalog: SharedCatalog,
    settings: ServerSettings,
    auth: Option<Authenticator>,
}

impl AppState {
    /// State serving `catalog` with `settings`; `auth` `None` means no authentication.
    pub fn new(
        catalog: SharedCatalog,
        settings: ServerSettings,
        auth: Option<Authenticator>,
    ) -> Self {
        Self(Arc::new(Inner {
            catalog,
            settings,
            auth,
        }))
    }

    /// The catalog.
    pub fn catalog(&self) -> &SharedCatalog {
        &self.0.catalog
    }

    /// The settings.
    pub fn settings(&self) -> &ServerSettings {
        &self.0.settings
    }

    /// The authenticator, when authentication is on.
    pub fn auth(&self) -> Option<&Authenticator> {
        self.0.auth.as_ref()
    }
}

/// The router. Authentication guards every route but `/health`.
pub fn app(state: AppState) -> Router {
    let guarded = Router::new()
        .route("/tools", get(routes::list_tools))
        .route("/tools/call", post(routes::call_tool))
        .route("/call", post(routes::call_tool))
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::require,
        ));
    Router::new()
        .route("/health", get(routes::health))
        .merge(guarded)
        .fallback(routes::not_found)
        // The body limit is enforced by the handlers, which answer with the standard's 400 shape
        // instead of axum's plain-text 413.
        .layer(DefaultBodyLimit::disable())
        .with_state(state)
}

/// The dialect of a request without a call body: `OXP-Version` header, else a `$schema` in an
/// optional JSON body, else the server's default.
pub fn negotiate_list(
    headers: &HeaderMap,
    body: Option<&Value>,
    default: Dialect,
) -> Result<Reply, (Reply, ApiError)> {
    if let Some(version) = headers.get(OXP_VERSION_HEADER) {
        let value = version.to_str().unwrap_or_default();
        return Dialect::from_oxp_version(value)
            .map(Reply::new)
            .map_err(|e| (Reply::new(Dialect::OxpFlat), e.into()));
    }
    match body.and_then(|b| b.get("$schema")) {
        Some(Value::String(schema)) => Dialect::from_schema(schema)
            .map(|d| Reply::echoing(d, Some(schema)))
            .map_err(|e| (Reply::new(default), e.into())),
        Some(_) => Err((
            Reply::new(default),
            ApiError::MalformedBody("'$schema' must be a string".to_owned()),
        )),
        None => Ok(Reply::new(default)),
    }
}
