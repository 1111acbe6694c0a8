//! The handlers. `call_tool` is the hot path: the extractor parsed the body once, the shared
//! pipeline ([`crate::call`]) resolves, checks, validates and forwards, and the reply is
//! serialised once.

use std::io::Write as _;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use otc_adapters::SourceState;
use otc_mappings::otc::{Dialect, OXP_VERSION_HEADER};
use serde_json::{Value, json};

use std::sync::Arc;

use super::{AppState, CallEnvelope, ListEnvelope, Reply, Rules};
use crate::access::{Caller, View};
use crate::rescue::ApiError;
use crate::telemetry::events::{Edge, ToolsListed};

/// `GET /health`: 200 when every source is ready, else 503 with each source's state.
///
/// Anyone may ask (load balancers do), so the answer names states only; why a source is down
/// can hold a command line or a path and is in the log. A caller that authenticates (when
/// authentication is on) also gets the reasons.
pub(super) async fn health(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let rules = state.rules();
    let trusted = rules
        .auth
        .as_ref()
        .is_some_and(|auth| auth.check(&headers).is_ok());
    let catalog = state.catalog().current();
    let mut ready = true;
    // What changed since the lockfile was written names tools and their inputs, as `GET
    // /tools` does: shown to whoever may list the tools.
    let may_list = trusted || rules.auth.is_none();
    let mut sources: Vec<Value> = catalog
        .sources()
        .iter()
        .map(|s| {
            let source_state = s.adapter.state();
            ready &= source_state.is_ready();
            let mut shown = json!({"name": s.adapter.name(), "tools": s.entries.len(), "status": shown(&source_state, trusted)});
            if let Some(protocol) = s.adapter.mcp_protocol() {
                shown["mcp"] = json!(protocol);
            }
            if !s.drift.is_empty() {
                shown["lock"] = if may_list {
                    json!({"changed": s.drift.len(), "warnings": s.drift.iter().map(|d| d.message()).collect::<Vec<_>>()})
                } else {
                    json!({"changed": s.drift.len()})
                };
            }
            shown
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
    // Which search MCP hosts get: lexical, or semantic once the model has embedded the tools.
    let search = match &state.settings().search {
        None => json!({"mode": "lexical"}),
        Some(semantic) => {
            let progress = semantic.progress();
            let mode = if catalog.vectors().is_some() {
                "semantic"
            } else {
                "lexical (embedding tools)"
            };
            json!({"mode": mode, "embedded": progress.embedded, "tools": progress.tools})
        }
    };
    Reply::new(dialect).json(
        status,
        &json!({"status": word, "sources": sources, "search": search}),
    )
}

/// A source's state as `/health` shows it: `{"state": …}`, with `reason` for trusted callers.
fn shown(state: &SourceState, trusted: bool) -> Value {
    let mut value = serde_json::to_value(state).unwrap_or(Value::Null);
    if !trusted && let Value::Object(map) = &mut value {
        map.remove("reason");
    }
    value
}

/// `GET /tools`: the list in the negotiated dialect, gzip-compressed when the client accepts it
/// (made once, then kept: a tenth of the size), else written in place when small, or streamed as
/// it is written, in chunks of [`LIST_CHUNK_BYTES`] with at most [`LIST_CHUNKS_AHEAD`] waiting
/// for a slow client, so a request holds a bounded part of a list of any size. Large lists are
/// written on a blocking thread: thousands of tools take milliseconds.
pub(super) async fn list_tools(
    State(state): State<AppState>,
    caller: Option<axum::Extension<Caller>>,
    rules: Option<axum::Extension<Arc<Rules>>>,
    headers: HeaderMap,
    ListEnvelope { reply }: ListEnvelope,
) -> Response {
    ToolsListed { edge: Edge::Otc }.emit(&state.settings().telemetry);
    let catalog = state.catalog().current();
    let dialect = reply.dialect;
    let gzip = accepts_gzip(&headers);
    let rules = rules.map_or_else(|| state.rules(), |r| r.0);
    let policies = &rules.policies;
    let mut response = if !policies.is_empty() {
        // A caller's own view: written for this request (the kept bodies are everyone's).
        let caller = caller.map(|c| c.0).unwrap_or_default();
        let policies = Arc::clone(policies);
        let written = tokio::task::spawn_blocking(move || {
            let sees = |e: &crate::catalog::registry::Entry| policies.sees(&caller, e);
            if gzip {
                let mut encoder =
                    flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
                // Writing to a Vec cannot fail.
                let _ = catalog.write_list_of(dialect, &mut encoder, sees);
                encoder.finish().unwrap_or_default()
            } else {
                let mut body = Vec::new();
                let _ = catalog.write_list_of(dialect, &mut body, sees);
                body
            }
        })
        .await;
        let Ok(body) = written else {
            tracing::error!("Writing the tool list did not finish.");
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        };
        let mut response = reply.body(StatusCode::OK, Bytes::from(body));
        if gzip {
            response
                .headers_mut()
                .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        }
        response
    } else if gzip {
        let Ok(body) = tokio::task::spawn_blocking(move || catalog.list_body_gzip(dialect)).await
        else {
            tracing::error!("Compressing the tool list did not finish.");
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        };
        let mut response = reply.body(StatusCode::OK, body);
        response
            .headers_mut()
            .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        response
    } else if catalog.list_size_estimate() < LIST_CHUNK_BYTES {
        // A small list is written in place: a blocking thread and a channel would cost ten
        // times the writing.
        reply.body(StatusCode::OK, catalog.list_body(dialect))
    } else {
        let (chunks, receiver) = tokio::sync::mpsc::channel(LIST_CHUNKS_AHEAD);
        tokio::task::spawn_blocking(move || {
            let mut writer =
                std::io::BufWriter::with_capacity(LIST_CHUNK_BYTES, ChunkSender(chunks));
            // Fails only when the client has gone: nothing more to write.
            let _ = catalog
                .write_list(dialect, &mut writer)
                .and_then(|()| writer.flush());
        });
        let stream = futures::stream::unfold(receiver, |mut receiver| async move {
            let chunk = receiver.recv().await?;
            Some((Ok::<_, std::io::Error>(chunk), receiver))
        });
        reply.body(StatusCode::OK, Body::from_stream(stream))
    };
    response
        .headers_mut()
        .insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    response
}

/// The size of the chunks a streamed tool list is sent in.
const LIST_CHUNK_BYTES: usize = 64 * 1024;
/// How many written chunks may wait for a slow client before the writer waits too.
const LIST_CHUNKS_AHEAD: usize = 4;

/// Sends what a blocking writer writes to the response body, chunk by chunk; an error once the
/// response is dropped (the client went away), which stops the writer.
struct ChunkSender(tokio::sync::mpsc::Sender<Bytes>);

impl std::io::Write for ChunkSender {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .blocking_send(Bytes::copy_from_slice(buf))
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::BrokenPipe))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
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

/// Unknown paths: 404 with a JSON body naming the endpoints, in no dialect (the path names none).
pub(super) async fn not_found() -> Response {
    Reply::bare().error(ApiError::NoSuchEndpoint)
}

/// `POST /tools/call` (and `/call`).
pub(super) async fn call_tool(
    State(state): State<AppState>,
    caller: Option<axum::Extension<Caller>>,
    rules: Option<axum::Extension<Arc<Rules>>>,
    CallEnvelope { reply, call }: CallEnvelope,
) -> Response {
    let catalog = state.catalog().current();
    let settings = state.settings();
    let caller = caller.map(|c| c.0).unwrap_or_default();
    let rules = rules.map_or_else(|| state.rules(), |r| r.0);
    // Repeats and private cache entries are the caller's: one caller's call_id or kept answer
    // never answers another's.
    let stores = crate::call::Stores {
        repeats: settings.idempotency.as_deref(),
        cache: settings.cache.as_deref(),
        caller: &caller.scope,
        sign_ins: settings.challenges.as_deref(),
    };
    let answer = crate::call::call(
        &catalog,
        View::new(&caller, &rules.policies).limited(&rules.limits),
        settings.call_timeout,
        &settings.telemetry,
        stores,
        call,
    )
    .await;
    match answer {
        Ok(answer) => reply.answer(answer),
        Err(refusal) => reply.error(refusal),
    }
}

/// `GET /oauth/callback`: where a person's browser returns from signing in for a per-caller
/// MCP source; the bridge exchanges the code, and the caller collects the token at its
/// `check_url`. Answers the person in plain words; never shows the code or the token.
pub(super) async fn authorization_callback(
    State(state): State<AppState>,
    uri: axum::http::Uri,
) -> Response {
    let Some(challenges) = &state.settings().challenges else {
        return not_found().await.into_response();
    };
    let (status, text) = match challenges.complete(uri.query().unwrap_or_default()).await {
        Ok(()) => (
            StatusCode::OK,
            "Signed in. You can close this window and return to your application.".to_owned(),
        ),
        Err(error) => (StatusCode::BAD_REQUEST, format!("Sign-in failed: {error}.")),
    };
    (
        status,
        [(header::CACHE_CONTROL, HeaderValue::from_static("no-store"))],
        text,
    )
        .into_response()
}

/// `GET /oauth/check/{id}`: the `check_url` of an authorization challenge: `pending`,
/// `completed` (with the token, the first time only) or `failed`
/// (`AuthorizationChallengeCheckResponse`, always 200).
pub(super) async fn check_authorization(
    State(state): State<AppState>,
    axum::extract::Path(id): axum::extract::Path<String>,
) -> Response {
    let Some(challenges) = &state.settings().challenges else {
        return not_found().await.into_response();
    };
    let answer = challenges.check(&id);
    let mut response = axum::Json(answer).into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// `GET /metrics`: the Prometheus text format (see [`crate::telemetry::metrics`]).
pub(super) async fn metrics(State(state): State<AppState>) -> Response {
    let Some(metrics) = &state.settings().telemetry.metrics else {
        return not_found().await.into_response();
    };
    let body = metrics.render(&state.catalog().current());
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static(crate::telemetry::metrics::CONTENT_TYPE),
        )],
        body,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_writer_stops_when_its_response_is_dropped() {
        let (chunks, mut receiver) = tokio::sync::mpsc::channel(LIST_CHUNKS_AHEAD);
        let mut sender = ChunkSender(chunks);
        sender.write_all(b"[1,").unwrap();
        assert_eq!(receiver.try_recv().unwrap(), Bytes::from_static(b"[1,"));
        drop(receiver);
        let err = sender.write_all(b"2]").unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::BrokenPipe);
    }

    #[tokio::test]
    async fn the_404_is_a_refusal_in_no_dialect() {
        let response = not_found().await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
        let headers: Vec<_> = response.headers().keys().collect();
        assert_eq!(
            headers,
            [header::CONTENT_TYPE],
            "no $schema, no OXP-Version"
        );
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        assert_eq!(
            body,
            r#"{"message":"Not found. Endpoints: GET /health, GET /tools, POST /tools/call, POST /mcp."}"#
        );
    }

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
