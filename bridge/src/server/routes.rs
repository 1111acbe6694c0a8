//! The handlers. `call_tool` is the hot path: the extractor parsed the body once, the shared
//! pipeline ([`crate::call`]) resolves, checks, validates and forwards, and the reply is
//! serialised once.

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use otc_adapters::SourceState;
use otc_mappings::otc::{Dialect, OXP_VERSION_HEADER};
use serde_json::{Value, json};

use super::{AppState, CallEnvelope, ListEnvelope, Reply};

/// `GET /health`: 200 when every source is ready, else 503 with each source's state.
///
/// Anyone may ask (load balancers do), so the answer names states only; why a source is down
/// can hold a command line or a path and is in the log. A caller that authenticates (when
/// authentication is on) also gets the reasons.
pub(super) async fn health(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let trusted = state
        .auth()
        .is_some_and(|auth| auth.check(&headers).is_ok());
    let catalog = state.catalog().current();
    let mut ready = true;
    let mut sources: Vec<Value> = catalog
        .sources()
        .iter()
        .map(|s| {
            let source_state = s.adapter.state();
            ready &= source_state.is_ready();
            json!({"name": s.adapter.name(), "tools": s.entries.len(), "status": shown(&source_state, trusted)})
        })
        .collect();
    for failed in catalog.failed() {
        ready = false;
        let source_state = SourceState::Failed {
            reason: failed.reason.clone(),
        };
        sources.push(
            json!({"name": failed.name, "tools": 0, "status": shown(&source_state, trusted)}),
        );
    }
    let (status, word) = if ready {
        (StatusCode::OK, "ready")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "unavailable")
    };
    let dialect = if headers.contains_key(OXP_VERSION_HEADER) {
        Dialect::OxpFlat
    } else {
        state.settings().default_dialect
    };
    Reply::new(dialect).json(status, &json!({"status": word, "sources": sources}))
}

/// A source's state as `/health` shows it: `{"state": …}`, with `reason` for trusted callers.
fn shown(state: &SourceState, trusted: bool) -> Value {
    let mut value = serde_json::to_value(state).unwrap_or(Value::Null);
    if !trusted && let Value::Object(map) = &mut value {
        map.remove("reason");
    }
    value
}

/// `GET /tools`: the pre-serialised list in the negotiated dialect.
pub(super) async fn list_tools(
    State(state): State<AppState>,
    ListEnvelope { reply }: ListEnvelope,
) -> Response {
    let catalog = state.catalog().current();
    reply.bytes(StatusCode::OK, catalog.list_body(reply.dialect))
}

/// Unknown paths: 404 with a JSON body naming the endpoints.
pub(super) async fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        [(header::CONTENT_TYPE, "application/json")],
        r#"{"message":"Not found. Endpoints: GET /health, GET /tools, POST /tools/call."}"#,
    )
        .into_response()
}

/// `POST /tools/call` (and `/call`).
pub(super) async fn call_tool(
    State(state): State<AppState>,
    CallEnvelope { reply, call }: CallEnvelope,
) -> Response {
    let catalog = state.catalog().current();
    match crate::call::call(&catalog, state.settings().call_timeout, call).await {
        Ok(answer) => reply.answer(answer),
        Err(refusal) => reply.error(refusal),
    }
}
