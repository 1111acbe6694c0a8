//! The handlers. `call_tool` is the hot path: one parse of the body, one hash lookup, the
//! precompiled validator, the adapter call under a timeout, one serialisation.

use std::time::Instant;

use axum::body::{Body, to_bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use otc_mappings::otc::{
    CallBody, CallOutcome, CallToolResponse, Dialect, OXP_VERSION_HEADER, ToolId,
};
use serde_json::{Map, Value, json};

use super::{AppState, Reply, negotiate_list};
use crate::registry::Resolution;
use crate::rescue::{self, ApiError};
use crate::{requirements, validate};

/// `GET /health`: 200 when every source is ready, else 503 with each source's state.
pub(super) async fn health(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let catalog = state.catalog().current();
    let mut ready = true;
    let sources: Vec<Value> = catalog
        .sources()
        .iter()
        .map(|s| {
            let source_state = s.adapter.state();
            ready &= source_state.is_ready();
            json!({"name": s.adapter.name(), "tools": s.entries.len(), "status": source_state})
        })
        .collect();
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

/// `GET /tools`: the pre-serialised list in the negotiated dialect.
pub(super) async fn list_tools(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let default = state.settings().default_dialect;
    let Ok(bytes) = to_bytes(body, state.settings().max_body_bytes).await else {
        let limit = state.settings().max_body_bytes;
        return Reply::new(default).error(ApiError::BodyTooLarge { limit });
    };
    // A GET may carry `{"$schema": …}`; an unparseable one is ignored (be lenient in what we accept).
    let parsed = if bytes.iter().all(u8::is_ascii_whitespace) {
        None
    } else {
        serde_json::from_slice::<Value>(&bytes).ok()
    };
    match negotiate_list(&headers, parsed.as_ref(), default) {
        Ok(reply) => {
            let catalog = state.catalog().current();
            reply.bytes(StatusCode::OK, catalog.list_body(reply.dialect))
        }
        Err((reply, err)) => reply.error(err),
    }
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
    headers: HeaderMap,
    body: Body,
) -> Response {
    let started = Instant::now();
    let settings = state.settings();
    let header_dialect = headers
        .get(OXP_VERSION_HEADER)
        .map(|v| Dialect::from_oxp_version(v.to_str().unwrap_or_default()));
    let fallback = match header_dialect {
        Some(_) => Reply::new(Dialect::OxpFlat),
        None => Reply::new(settings.default_dialect),
    };
    if let Some(Err(err)) = header_dialect {
        return fallback.error(err.into());
    }
    let limit = settings.max_body_bytes;
    let too_large = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok())
        .is_some_and(|len| len > limit);
    if too_large {
        return fallback.error(ApiError::BodyTooLarge { limit });
    }
    let Ok(bytes) = to_bytes(body, limit).await else {
        return fallback.error(ApiError::BodyTooLarge { limit });
    };
    let body: CallBody = match serde_json::from_slice(&bytes) {
        Ok(body) => body,
        Err(err) => return fallback.error(ApiError::MalformedBody(err.to_string())),
    };
    let client_schema = match &body.schema {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => {
            return fallback.error(ApiError::MalformedBody(
                "'$schema' must be a string".to_owned(),
            ));
        }
    };
    let Some((request, flat)) = body.into_request() else {
        return fallback.error(ApiError::MissingRequest);
    };
    let reply = match (header_dialect, flat, client_schema.as_deref()) {
        (Some(_), _, _) | (None, true, None) => Reply::new(Dialect::OxpFlat),
        (None, _, Some(schema)) => match Dialect::from_schema(schema) {
            Ok(dialect) => Reply::echoing(dialect, Some(schema)),
            Err(err) => return fallback.error(err.into()),
        },
        (None, false, None) => Reply::new(settings.default_dialect),
    };

    if request.tool_id.is_empty() {
        return reply.error(ApiError::MissingToolId);
    }
    let id: ToolId = match request.tool_id.parse() {
        Ok(id) => id,
        Err(err) => return reply.error(ApiError::BadToolId(err)),
    };
    let name = request.tool_id.split('@').next().unwrap_or_default();
    let catalog = state.catalog().current();
    let entry = match catalog.resolve(name, id.version) {
        Resolution::Found(entry) => entry,
        Resolution::UnknownTool { suggestion } => {
            return reply.error(ApiError::UnknownTool {
                id: request.tool_id,
                suggestion: suggestion.map(str::to_owned),
            });
        }
        Resolution::UnknownVersion { available } => {
            return reply.error(ApiError::UnknownVersion {
                id: request.tool_id,
                available,
            });
        }
    };
    let definition = entry.definition();
    if let Err(err) = requirements::check(
        &request.tool_id,
        definition.requirements.as_ref(),
        request.context.as_ref(),
    ) {
        return reply.error(err);
    }
    let input = match request.input {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(input @ Value::Object(_)) => input,
        Some(_) => {
            let mut errors = indexmap::IndexMap::new();
            errors.insert(
                "input".to_owned(),
                Value::String("must be a JSON object of named parameters".to_owned()),
            );
            return reply.error(ApiError::InvalidInput {
                parameter_errors: errors,
            });
        }
    };
    if let Err(parameter_errors) = validate::check(&entry.validator, &input) {
        return reply.error(ApiError::InvalidInput { parameter_errors });
    }
    let state_now = entry.adapter.state();
    if !state_now.is_ready() {
        return reply.error(ApiError::Unavailable(format!(
            "source '{}' is {state_now:?}",
            entry.adapter.name()
        )));
    }

    let call_id = request
        .call_id
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let input = match input {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    let call = otc_adapters::ToolCall {
        tool: std::sync::Arc::clone(&entry.tool),
        input,
        context: request.context.unwrap_or_default(),
        call_id: call_id.clone(),
        trace_id: request.trace_id.clone(),
    };
    let policy = &entry.policy;
    let timeout = policy.timeout.unwrap_or(settings.call_timeout);
    let forward = async {
        // Waiting for a permit counts against the call's timeout, like the call itself.
        let _permit = match &policy.permits {
            Some(permits) => permits.acquire().await.ok(),
            None => None,
        };
        entry.adapter.call(call).await
    };
    let result = match tokio::time::timeout(timeout, forward).await {
        Ok(result) => result,
        Err(_) => Err(otc_adapters::AdapterError::Timeout { elapsed: timeout }),
    };
    let outcome = match result {
        Ok(value) => CallOutcome::Value(Some(value)),
        Err(err) if err.is_before_call() => {
            tracing::warn!(tool = %request.tool_id, call_id = %call_id, trace_id = request.trace_id.as_deref().unwrap_or(""), error = %rescue::cause_chain(&err), "Call refused: source unavailable.");
            return reply.error(ApiError::Unavailable(rescue::cause_chain(&err)));
        }
        Err(err) => {
            let error = rescue::tool_error(&err, definition);
            tracing::warn!(tool = %request.tool_id, call_id = %call_id, trace_id = request.trace_id.as_deref().unwrap_or(""), can_retry = error.can_retry, error = %rescue::cause_chain(&err), "Tool call failed.");
            CallOutcome::Error(error)
        }
    };
    let duration = started.elapsed().as_secs_f64() * 1000.0;
    tracing::debug!(tool = %request.tool_id, call_id = %call_id, trace_id = request.trace_id.as_deref().unwrap_or(""), duration_ms = duration, "Call answered.");
    reply.call_result(&CallToolResponse {
        call_id,
        duration: Some((duration * 1000.0).round() / 1000.0),
        outcome,
    })
}
