//! `POST /mcp`'s refusals in JSON-RPC's shapes. rmcp answers a body that is no JSON-RPC message
//! with `415` and plain text (its `expect_json`), and one over the limit with `413` and plain
//! text; an MCP host reads neither. This layer reads the body under the limit itself, hands it
//! to rmcp, and only when rmcp refused it as unreadable answers `400` with the JSON-RPC error
//! ([`rpc::malformed`]). A good request is parsed once, by rmcp.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, Method, StatusCode, header};

use super::rpc;
use crate::rescue::ApiError;

/// The middleware (state: the body limit in bytes).
pub(super) async fn refusals(State(limit): State<usize>, request: Request, next: Next) -> Response {
    if request.method() != Method::POST || !rmcp_reads_as_json(request.headers()) {
        // rmcp's own answers stand: `405` for other methods, `415` for another media type.
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let bytes = match crate::server::extract::read_body(&parts.headers, body, limit).await {
        Ok(bytes) => bytes,
        Err(ApiError::BodyTooLarge { limit }) => {
            return reply(StatusCode::PAYLOAD_TOO_LARGE, rpc::too_large(None, limit));
        }
        Err(error) => return reply(StatusCode::BAD_REQUEST, rpc::unreadable(&error.to_string())),
    };
    // `Bytes` is shared, not copied: kept for the refusal below.
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes.clone())))
        .await;
    // With a JSON media type, rmcp's one `415` is a body it could not deserialize.
    if response.status() != StatusCode::UNSUPPORTED_MEDIA_TYPE {
        return response;
    }
    reply(StatusCode::BAD_REQUEST, rpc::malformed(&bytes))
}

/// rmcp's own test of `Content-Type` (`application/json`, parameters aside): with any other,
/// its `415` is HTTP's answer and right as it is.
fn rmcp_reads_as_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

fn reply(status: StatusCode, error: serde_json::Value) -> Response {
    (status, axum::Json(error)).into_response()
}
