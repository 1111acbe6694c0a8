//! One span and one log line per request (axum's `log_app_errors` pattern): handlers and
//! conversions never log; they leave a [`LogNote`] on the response, and this middleware writes
//! it once, with the status and the duration, inside the request's span.
//!
//! Caller-supplied text (`tool_id`, `call_id`, anything quoted in a detail) is only ever logged
//! as a `Debug` field, which escapes newlines, quotes and control characters: a `call_id` of
//! `"x\nINFO forged"` cannot write a line of its own.

use std::time::Instant;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use tracing::Instrument as _;
use tracing::field::Empty;

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

/// Records caller-supplied `value` in the current request span's field `field`, escaped.
pub(crate) fn record(field: &str, value: &str) {
    tracing::Span::current().record(field, tracing::field::debug(crate::rescue::echo(value)));
}

/// The path as logged: a challenge's check id is what collects its token, so it is not.
fn logged_path(path: &str) -> &str {
    if path.starts_with("/oauth/check/") {
        "/oauth/check/…"
    } else {
        path
    }
}

/// The middleware.
pub(super) async fn request(request: Request, next: Next) -> Response {
    let span = tracing::info_span!(
        "request",
        method = %request.method(),
        path = ?logged_path(request.uri().path()),
        tool = Empty,
        call_id = Empty,
    );
    let started = Instant::now();
    let mut response = next.run(request).instrument(span.clone()).await;
    let note = response.extensions_mut().remove::<LogNote>();
    let status = response.status().as_u16();
    let duration_ms = started.elapsed().as_secs_f64() * 1000.0;
    // Escaped: a detail may quote an upstream's or a caller's words.
    let detail = note
        .as_ref()
        .and_then(|n| n.detail.as_deref())
        .map(tracing::field::debug);
    let tool_failed = note.as_ref().is_some_and(|n| n.tool_failed);
    span.in_scope(|| {
        if status >= 500 {
            tracing::error!(status, duration_ms, detail, "Request failed.");
        } else if tool_failed {
            tracing::warn!(status, duration_ms, detail, "Tool call failed.");
        } else if status >= 400 {
            tracing::info!(status, duration_ms, detail, "Request refused.");
        } else {
            tracing::debug!(status, duration_ms, "Request answered.");
        }
    });
    response
}
