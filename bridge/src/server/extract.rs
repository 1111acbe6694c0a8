//! The extractors of the edge: the body is read once under the limit, the dialect detected
//! once, the envelope parsed once. A failure is a [`Rejection`]: the error and the dialect it
//! must be answered in, rendered by [`Reply::error`].
//!
//! Dialect detection (DESIGN.md §2): an `OXP-Version` header means the flat dialect; else a
//! `$schema` in the body names it; else a bare body with `tool_id` is flat; else the server's
//! default. `GET /tools` has no reliable signal and may carry an optional `{"$schema": …}`.

use axum::body::{Body, to_bytes};
use axum::extract::{FromRequest, Request};
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use otc_mappings::otc::{CallBody, Dialect, OXP_VERSION_HEADER};
use serde_json::Value;

use super::{AppState, Reply, numbers};
use crate::call::Call;
use crate::rescue::ApiError;
use crate::telemetry::events::Edge;

/// A request refused by the edge, with the dialect to answer in.
#[derive(Debug)]
pub(crate) struct Rejection {
    /// How to answer.
    pub reply: Reply,
    /// Why.
    pub error: ApiError,
}

impl IntoResponse for Rejection {
    fn into_response(self) -> Response {
        self.reply.error(self.error)
    }
}

/// A parsed `POST /tools/call` body and the dialect to answer in.
#[derive(Debug)]
pub(crate) struct CallEnvelope {
    /// How to answer.
    pub reply: Reply,
    /// The call.
    pub call: Call,
}

/// The dialect of a `GET /tools`.
#[derive(Debug)]
pub(crate) struct ListEnvelope {
    /// How to answer.
    pub reply: Reply,
}

/// The dialect of a request without a call body: `OXP-Version` header, else a `$schema` in an
/// optional JSON body when it names a dialect we speak, else `default`.
pub(crate) fn list_reply(
    headers: &HeaderMap,
    body: Option<&Value>,
    default: Dialect,
) -> Result<Reply, Rejection> {
    if let Some(reply) = header_reply(headers)? {
        return Ok(reply);
    }
    // The body of a GET is optional and carries no contract (the standard documents only 200
    // and 401 for `GET /tools`): a `$schema` we do not recognise is ignored, not refused.
    let named = body
        .and_then(|b| b.get("$schema"))
        .and_then(Value::as_str)
        .and_then(|schema| Some((Dialect::from_schema(schema).ok()?, schema)));
    Ok(match named {
        Some((dialect, schema)) => Reply::echoing(dialect, Some(schema)),
        None => Reply::new(default),
    })
}

/// The flat dialect when an `OXP-Version` header is present (an error if it names another
/// version), else `None`.
fn header_reply(headers: &HeaderMap) -> Result<Option<Reply>, Rejection> {
    let Some(version) = headers.get(OXP_VERSION_HEADER) else {
        return Ok(None);
    };
    Dialect::from_oxp_version(version.to_str().unwrap_or_default())
        .map(|d| Some(Reply::new(d)))
        .map_err(|e| reject(Reply::new(Dialect::OxpFlat), e.into()))
}

fn reject(reply: Reply, error: ApiError) -> Rejection {
    Rejection { reply, error }
}

/// Reads the body, at most `limit` bytes (a declared `Content-Length` over it is refused
/// before reading anything).
pub(crate) async fn read_body(
    headers: &HeaderMap,
    body: Body,
    limit: usize,
) -> Result<Bytes, ApiError> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|len| len > limit as u64) {
        return Err(ApiError::BodyTooLarge { limit });
    }
    to_bytes(body, limit).await.map_err(|err| {
        let too_large = std::error::Error::source(&err)
            .is_some_and(|s| s.is::<http_body_util::LengthLimitError>());
        if too_large {
            ApiError::BodyTooLarge { limit }
        } else {
            // The client stopped sending or was too slow (the connection layer's body timeout).
            ApiError::BodyUnreadable(crate::rescue::cause_chain(&err))
        }
    })
}

/// Whether the request declares a JSON body (`application/json`, `application/*+json`).
fn declares_json(headers: &HeaderMap) -> bool {
    let Some(value) = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let essence = value
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
}

impl FromRequest<AppState> for CallEnvelope {
    type Rejection = Rejection;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, Rejection> {
        let settings = state.settings();
        let (parts, body) = request.into_parts();
        let header = header_reply(&parts.headers)?;
        let fallback = header
            .clone()
            .unwrap_or_else(|| Reply::new(settings.default_dialect));
        let bytes = read_body(&parts.headers, body, settings.max_body_bytes)
            .await
            .map_err(|e| reject(fallback.clone(), e))?;
        // A body not declared JSON is refused: it is what a cross-site form or `text/plain`
        // fetch sends without a CORS preflight. (No body at all is simply malformed: 400.)
        if !bytes.is_empty() && !declares_json(&parts.headers) {
            return Err(reject(fallback, ApiError::UnsupportedMediaType));
        }
        let body: CallBody = serde_json::from_slice(&bytes)
            .map_err(|e| reject(fallback.clone(), ApiError::MalformedBody(e.to_string())))?;
        let client_schema = match &body.schema {
            None => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => {
                return Err(reject(
                    fallback,
                    ApiError::MalformedBody("'$schema' must be a string".to_owned()),
                ));
            }
        };
        let Some((request, flat)) = body.into_request() else {
            return Err(reject(fallback, ApiError::MissingRequest));
        };
        let reply = match (header, flat, client_schema.as_deref()) {
            (Some(reply), _, _) => reply,
            (None, true, None) => Reply::new(Dialect::OxpFlat),
            (None, _, Some(schema)) => match Dialect::from_schema(schema) {
                Ok(dialect) => Reply::echoing(dialect, Some(schema)),
                Err(err) => return Err(reject(fallback, err.into())),
            },
            (None, false, None) => Reply::new(settings.default_dialect),
        };
        super::log::note_tool(&parts.extensions, &request.tool_id);
        // serde_json rounds numbers it cannot hold exactly; the raw literals tell which.
        let input_errors = match &request.input {
            Some(input) if numbers::has_float(input) => numbers::inexact(&bytes, flat),
            _ => indexmap::IndexMap::new(),
        };
        Ok(Self {
            reply,
            call: Call {
                request,
                input_errors,
                // Read only when traces are on: off, a call does no propagation work.
                trace_context: settings
                    .telemetry
                    .traces
                    .as_ref()
                    .and_then(|_| crate::telemetry::traces::from_headers(&parts.headers)),
                // Resolved by the call itself, against the catalog it runs with.
                entry: None,
                edge: Edge::Otc,
                cache: crate::result_cache::Directive::from_headers(&parts.headers),
                // The OTC edge writes values whole, in the caller's dialect: parsed, as ever.
                unparsed: false,
            },
        })
    }
}

impl FromRequest<AppState> for ListEnvelope {
    type Rejection = Rejection;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, Rejection> {
        let default = state.settings().default_dialect;
        let (parts, body) = request.into_parts();
        let bytes = read_body(&parts.headers, body, state.settings().max_body_bytes)
            .await
            .map_err(|e| reject(Reply::new(default), e))?;
        // A GET may carry `{"$schema": …}`; an unparseable one is ignored (be lenient in what we
        // accept).
        let parsed = if bytes.iter().all(u8::is_ascii_whitespace) {
            None
        } else {
            serde_json::from_slice::<Value>(&bytes).ok()
        };
        list_reply(&parts.headers, parsed.as_ref(), default).map(|reply| Self { reply })
    }
}
