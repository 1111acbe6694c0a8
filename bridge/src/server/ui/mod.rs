//! The catalog page (issue 28, DESIGN.md §16): the bridge's tools as HTML a person opens in a
//! browser, on the API's own listener. `ui: false` in the configuration turns it off (then `/`
//! is the JSON 404 it was).
//!
//! | route | what |
//! |---|---|
//! | `GET /` | sources and their states, each toolkit's health (its sources, calls, errors, latency), the tools a page at a time (`?toolkit=`, `?page=`) |
//! | `GET /ui/search?q=` | what `search_tools` finds for the words, in its order |
//! | `GET /ui/tools/{id}` | one tool: versions, description, requirements, schemas, lock state, try-it form |
//! | `GET /ui/assets/{file}` | the one stylesheet and the one script, embedded in the binary |
//!
//! Safety, the same as the API's:
//! - **Authentication.** Pages carry catalog data, so they are served only to a request that
//!   authenticates as the API does ([`crate::server::Authenticator`]); without credentials a page
//!   is a small prompt (401) whose script keeps the key in the tab's `sessionStorage` and fetches
//!   the page again with it in a header. Never a cookie: nothing another site makes the browser
//!   send can carry it.
//! - **Policies.** Every list, search and tool page is the caller's view ([`View`]): a tool the
//!   caller may not see is absent, as on every other surface.
//! - **Untrusted text.** Every catalog string (descriptions, names, schema text, error reasons)
//!   reaches the HTML through maud, which escapes it; no catalog text becomes a link.
//! - **Headers.** A strict `Content-Security-Policy` (scripts and styles from the bridge only, no
//!   inline ones), `X-Frame-Options: DENY`, `nosniff`, `no-referrer`, on every UI response.
//!
//! Below: [`pages`] (the HTML), [`schema`] (a JSON Schema as a table and as form fields),
//! [`assets`]. Nothing here is on the call path: `POST /tools/call` is untouched, the page's
//! try-it form is one more client of it.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;

use super::{AppState, Rules};
use crate::access::{Caller, View};

mod assets;
mod pages;
mod schema;

/// The `Content-Security-Policy` of every UI response: the bridge's own script and stylesheet,
/// nothing inline, nothing from elsewhere, no framing, forms only to the bridge.
pub(crate) const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// The routes of the catalog page. They sit outside the API's authentication layer: each page
/// authenticates its request itself, to answer a missing credential with the prompt instead of
/// the API's JSON 401.
pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/", get(catalog_page))
        .route("/ui", get(catalog_page))
        .route("/ui/", get(catalog_page))
        .route("/ui/search", get(search_page))
        .route("/ui/tools/{id}", get(tool_page))
        .route("/ui/assets/{file}", get(assets::serve))
        .layer(axum::middleware::from_fn(strict_headers))
}

/// Middleware: the security headers of every UI response.
async fn strict_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

/// Who a page is for: the caller its credentials name (anonymous when authentication is off),
/// under the rules taken once for the whole page.
struct Visitor {
    caller: Caller,
    rules: Arc<Rules>,
}

impl Visitor {
    fn view(&self) -> View<'_> {
        View::new(&self.caller, &self.rules.policies)
    }
}

/// The page asking for a credential (401), served in place of catalog data.
struct Prompt {
    /// Whether a credential was sent and refused.
    refused: bool,
}

impl IntoResponse for Prompt {
    fn into_response(self) -> Response {
        html(StatusCode::UNAUTHORIZED, pages::key_prompt(self.refused))
    }
}

/// The request's caller, or the prompt for a credential when authentication is on and the
/// request does not pass it.
fn visitor(state: &AppState, headers: &HeaderMap) -> Result<Visitor, Prompt> {
    let rules = state.rules();
    let caller = match rules.auth.as_ref().map(|auth| auth.check(headers)) {
        None => Caller::anonymous(),
        Some(Ok(caller)) => caller,
        Some(Err(_)) => {
            // A credential was sent and refused: say so, so the page asks again.
            let refused = headers.contains_key(header::AUTHORIZATION)
                || crate::server::auth::API_KEY_HEADERS
                    .iter()
                    .any(|h| headers.contains_key(*h));
            return Err(Prompt { refused });
        }
    };
    Ok(Visitor { caller, rules })
}

/// An HTML page: never cached (it is one caller's view of the catalog of the moment).
fn html(status: StatusCode, markup: maud::Markup) -> Response {
    (
        status,
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
            // The page differs with the credential it was asked with.
            (
                header::VARY,
                HeaderValue::from_static("authorization, x-api-key, otc-api-key, oxp-api-key"),
            ),
        ],
        markup.into_string(),
    )
        .into_response()
}

/// `GET /`'s query.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct CatalogQuery {
    /// Only this toolkit's tools.
    toolkit: Option<String>,
    /// The page of the tool list, from 1.
    page: Option<usize>,
}

/// `GET /`: sources, toolkits and a page of tools.
async fn catalog_page(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(query): Query<CatalogQuery>,
) -> Response {
    let visitor = match visitor(&state, &headers) {
        Ok(visitor) => visitor,
        Err(prompt) => return prompt.into_response(),
    };
    let catalog = state.catalog().current();
    let page = pages::CatalogPage {
        catalog: &catalog,
        view: visitor.view(),
        metrics: state.settings().telemetry.metrics.as_deref(),
        toolkit: query
            .toolkit
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty()),
        page: query.page.unwrap_or(1).max(1),
        search: match (&state.settings().search, catalog.vectors()) {
            (Some(_), Some(_)) => "meaning and words (the search model has embedded the tools)",
            (Some(_), None) => "words only, until the search model has embedded the tools",
            (None, _) => "words only (no search model configured)",
        },
        idempotency: state
            .settings()
            .idempotency
            .as_deref()
            .map(crate::idempotency::Idempotency::store_name),
        cache: state
            .settings()
            .cache
            .as_deref()
            .map(crate::result_cache::ResultCache::describe),
    };
    html(StatusCode::OK, page.render())
}

/// `GET /ui/search`'s query.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct SearchQuery {
    /// The words.
    q: String,
    /// Only this toolkit.
    toolkit: Option<String>,
}

/// `GET /ui/search?q=`: the catalog's search (the ranking of `search_tools`), as a page.
async fn search_page(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(query): Query<SearchQuery>,
) -> Response {
    let visitor = match visitor(&state, &headers) {
        Ok(visitor) => visitor,
        Err(prompt) => return prompt.into_response(),
    };
    let catalog = state.catalog().current();
    let settings = state.settings();
    let toolkit = query
        .toolkit
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty());
    let found = pages::search(
        &catalog,
        visitor.view(),
        settings.search.as_deref(),
        &query.q,
        toolkit,
    );
    html(StatusCode::OK, pages::search_page(&query.q, &found))
}

/// `GET /ui/tools/{id}`: one tool (the highest version the caller sees, or the one `@…` names).
async fn tool_page(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let visitor = match visitor(&state, &headers) {
        Ok(visitor) => visitor,
        Err(prompt) => return prompt.into_response(),
    };
    let catalog = state.catalog().current();
    let view = visitor.view();
    match crate::call::resolve(&catalog, &id, view) {
        Ok(entry) => html(
            StatusCode::OK,
            pages::tool_page(&catalog, view, entry, auth_kind(&visitor.rules)),
        ),
        // Unknown and hidden alike: invisible is indistinguishable from absent.
        Err(_) => html(StatusCode::NOT_FOUND, pages::no_such_tool(&id)),
    }
}

/// Which credential the try-it form's `curl` line shows a placeholder for.
fn auth_kind(rules: &Rules) -> pages::AuthKind {
    if rules.auth.is_some() {
        pages::AuthKind::Required
    } else {
        pages::AuthKind::None
    }
}
