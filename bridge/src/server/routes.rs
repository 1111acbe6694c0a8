//! The handlers. `call_tool` is the hot path: the extractor parsed the body once, the shared
//! pipeline ([`crate::call`]) resolves, checks, validates and forwards, and the reply is
//! serialised once.

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
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

/// `GET /tools`: the list in the negotiated dialect; gzip-compressed (made once, then kept) when
/// the client accepts it. Either is written on a blocking thread: a catalog of thousands of
/// tools takes milliseconds to write and compress.
pub(super) async fn list_tools(
    State(state): State<AppState>,
    headers: HeaderMap,
    ListEnvelope { reply }: ListEnvelope,
) -> Response {
    let catalog = state.catalog().current();
    let gzip = accepts_gzip(&headers);
    let dialect = reply.dialect;
    let written = tokio::task::spawn_blocking(move || {
        if gzip {
            catalog.list_body_gzip(dialect)
        } else {
            catalog.list_body(dialect)
        }
    })
    .await;
    let Ok(body) = written else {
        tracing::error!("Writing the tool list did not finish.");
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let mut response = reply.bytes(StatusCode::OK, body);
    let response_headers = response.headers_mut();
    response_headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    if gzip {
        response_headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    }
    response
}

/// Whether `Accept-Encoding` accepts gzip: `gzip` (or `x-gzip`, or `*` when gzip is not named)
/// with a quality above zero (RFC 9110 §12.5.3).
fn accepts_gzip(headers: &HeaderMap) -> bool {
    let mut named = None;
    let mut any = None;
    for value in headers.get_all(header::ACCEPT_ENCODING) {
        let Ok(value) = value.to_str() else {
            continue;
        };
        for item in value.split(',') {
            let mut parts = item.split(';');
            let coding = parts.next().unwrap_or_default().trim();
            let quality = parts
                .filter_map(|p| p.trim().strip_prefix("q=").or(p.trim().strip_prefix("Q=")))
                .find_map(|q| q.trim().parse::<f32>().ok())
                .unwrap_or(1.0);
            if coding.eq_ignore_ascii_case("gzip") || coding.eq_ignore_ascii_case("x-gzip") {
                named = Some(quality > 0.0);
            } else if coding == "*" {
                any = Some(quality > 0.0);
            }
        }
    }
    named.or(any).unwrap_or(false)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn accepts(values: &[&str]) -> bool {
        let mut headers = HeaderMap::new();
        for v in values {
            headers.append(header::ACCEPT_ENCODING, HeaderValue::from_str(v).unwrap());
        }
        accepts_gzip(&headers)
    }

    #[test]
    fn gzip_is_sent_only_when_accepted_with_a_positive_quality() {
        assert!(accepts(&["gzip"]));
        assert!(accepts(&["br, GZIP;q=0.5"]));
        assert!(accepts(&["deflate", "x-gzip"]));
        assert!(accepts(&["*"]));
        assert!(!accepts(&[]));
        assert!(!accepts(&["identity"]));
        assert!(!accepts(&["br, deflate"]));
        assert!(!accepts(&["gzip;q=0"]));
        assert!(!accepts(&["*, gzip; q=0"]));
        assert!(!accepts(&["*;q=0"]));
    }
}
