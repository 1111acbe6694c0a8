//! One log line per request (axum's `log_app_errors` pattern): handlers and
//! conversions never log; they leave a [`LogNote`] on the response, and this middleware writes
//! it once, with the method, path, tool, status and duration.
//!
//! Caller-supplied text (`tool_id`, `call_id`, anything quoted in a detail) is only ever logged
//! as a `Debug` field, which escapes newlines, quotes and control characters: a `call_id` of
//! `"x\nINFO forged"` cannot write a line of its own.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use http::Extensions;
use tracing::Instrument as _;

/// What a handler wants the request's log line to say beyond the status.
#[derive(Debug, Clone)]
pub(crate) struct LogNote {
    /// The call reached its tool and failed (logged as a warning).
    tool_failed: bool,
    /// The reason a client is not told (a cause chain, why a source is down).
    detail: Option<String>,
}

impl LogNote {
    pub(crate) fn tool_failed(cause: String) -> Self {
        Self {
            tool_failed: true,
            detail: Some(cause),
        }
    }

    pub(crate) fn refused(detail: Option<String>) -> Self {
        Self {
            tool_failed: false,
            detail,
        }
    }
}

/// The tool a request names, noted by the extractor that reads it for the request's log line.
/// A slot in the request's extensions, not a field of an `info` span: creating and entering a
/// span per request at the default level cost about 7 µs of CPU per call (issue 23, 2.9).
#[derive(Debug, Clone, Default)]
pub(crate) struct NamedTool(Arc<OnceLock<String>>);

/// Notes `tool_id` (caller-supplied, cut to an echo) as the tool the request names.
pub(crate) fn note_tool(extensions: &Extensions, tool_id: &str) {
    if let Some(slot) = extensions.get::<NamedTool>() {
        let _ = slot.0.set(crate::rescue::echo(tool_id));
    }
}

/// The path as logged: a challenge's check id is what collects its token, so it is not.
fn logged_path(path: &str) -> &str {
    if path.starts_with("/oauth/check/") {
        "/oauth/check/…"
    } else {
        path
    }
}

/// The middleware. The line carries the method, path and tool itself; the span around the
/// request is at `debug`, so inner events are in it when debugging and nothing is built
/// per request otherwise.
pub(super) async fn request(mut request: Request, next: Next) -> Response {
    let method = request.method().clone();
    let uri = request.uri().clone();
    let path = logged_path(uri.path());
    let tool = NamedTool::default();
    request.extensions_mut().insert(tool.clone());
    let span = tracing::debug_span!("request", %method, ?path);
    let started = Instant::now();
    let mut response = next.run(request).instrument(span).await;
    let note = response.extensions_mut().remove::<LogNote>();
    let status = response.status().as_u16();
    let duration_ms = started.elapsed().as_secs_f64() * 1000.0;
    let tool = tool.0.get().map(tracing::field::debug);
    // Escaped: a detail may quote an upstream's or a caller's words.
    let detail = note
        .as_ref()
        .and_then(|n| n.detail.as_deref())
        .map(tracing::field::debug);
    let tool_failed = note.as_ref().is_some_and(|n| n.tool_failed);
    // `/health` answers 503 while a source is down: that is the probe's answer, not a failed
    // request, and probes come every few seconds (the source's failure is logged when it
    // happens, once).
    if uri.path() == "/health" {
        tracing::debug!(%method, ?path, status, duration_ms, "Health answered.");
    } else if status >= 500 {
        tracing::error!(%method, ?path, tool, status, duration_ms, detail, "Request failed.");
    } else if tool_failed {
        tracing::warn!(%method, ?path, tool, status, duration_ms, detail, "Tool call failed.");
    } else if status >= 400 {
        tracing::info!(%method, ?path, tool, status, duration_ms, detail, "Request refused.");
    } else {
        tracing::debug!(%method, ?path, tool, status, duration_ms, "Request answered.");
    }
    response
}
