//! One call, from a parsed request to its outcome: resolve → requirements → validate → forward →
//! rescue (DESIGN.md §1, "A call, end to end").
//!
//! Every edge that calls tools goes through [`call`]: the OTC HTTP endpoint today, the MCP
//! endpoint next (DESIGN.md §8), so there is one validator, one forwarding path and one error
//! table. The edge parses its own envelope and renders the outcome in its own shape; everything
//! in between is here.

use std::sync::Arc;
use std::time::{Duration, Instant};

use indexmap::IndexMap;
use otc_mappings::otc::{CallContext, CallOutcome, CallToolRequest, CallToolResponse, ToolId};
use serde_json::{Map, Value};

use otc_adapters::SourceState;

use crate::catalog::lock::Drift;
use crate::catalog::registry::{Catalog, Entry, Resolution};
use crate::catalog::{requirements, validate};
use crate::idempotency::{self, Idempotency, Repeat, StoreUnavailable};
use crate::rescue::{self, ApiError, Refusal, Rescued};
use crate::telemetry::metrics::{Metrics, Outcome};
use crate::telemetry::traces::{CallSpan, Traces};

/// A call request as an edge parsed it.
#[derive(Debug, Default)]
pub struct Call {
    /// The request.
    pub request: CallToolRequest,
    /// Input errors the edge found while parsing, before the parse lost information (numbers
    /// that cannot be represented exactly), keyed by top-level parameter. Reported with the
    /// validator's errors, after the tool is resolved.
    pub input_errors: IndexMap<String, Value>,
    /// The caller's W3C trace context (a `traceparent` header or `_meta` field), read by the
    /// edge only when traces are on.
    pub trace_context: Option<otc_adapters::TraceContext>,
    /// The tool `request.tool_id` names in the catalog the call runs against, when the edge
    /// resolved it already (the MCP edge does, to read the headers its source wants): the call
    /// is not resolved a second time.
    pub entry: Option<Arc<Entry>>,
}

/// A call that reached its tool (or was answered as if it had).
#[derive(Debug)]
pub struct Answer {
    /// The response body: the value, or `success: false` with a `ToolError`.
    pub response: CallToolResponse,
    /// When the tool failed: the whole cause chain, for the log only.
    pub failure: Option<String>,
}

/// How a call is observed: counted ([`Metrics`]) and traced ([`Traces`]); each `None` when off.
#[derive(Debug, Clone, Copy, Default)]
pub struct Observe<'a> {
    /// Where calls are counted.
    pub metrics: Option<&'a Metrics>,
    /// Where calls are traced.
    pub traces: Option<&'a Traces>,
}

/// Where repeats of a `call_id` are recognised, and by whom the call is made.
#[derive(Debug, Clone, Copy)]
pub struct Repeats<'a> {
    /// The idempotency store.
    pub store: &'a Idempotency,
    /// The authenticated caller (the server's `auth::Caller`); empty when anonymous.
    pub caller: &'a str,
}

/// Runs one call against `catalog`. `Err` is a refusal before anything was sent upstream,
/// decided but not rendered (each edge renders it its own way); `Ok` is a response to send as
/// it is, success or tool error. `default_timeout` applies when the tool's source sets none.
/// With `repeats`, a call that repeats an earlier one (same caller, `call_id`, tool, input and
/// context) is answered from the store, but only once the repeat has passed the same checks
/// (requirements, validation) as a new call.
pub async fn call(
    catalog: &Catalog,
    default_timeout: Duration,
    observe: Observe<'_>,
    repeats: Option<Repeats<'_>>,
    call: Call,
) -> Result<Answer, Refusal> {
    let started = Instant::now();
    let metrics = observe.metrics;
    let mut counted = Counted {
        entry: None,
        span: observe.traces.map(|traces| {
            traces.start_call(
                call.trace_context.as_ref(),
                call.request.trace_id.as_deref(),
            )
        }),
    };
    // Boxed: the call's state (about 4 KB) is then written once, not copied by every future
    // that awaits this one (memmove was the largest single cost of a call in the profile).
    let result = Box::pin(run(
        catalog,
        default_timeout,
        metrics,
        repeats,
        call,
        &mut counted,
        started,
    ))
    .await
    .map_err(Refusal::from);
    if metrics.is_some() || counted.span.is_some() {
        let outcome = match &result {
            Ok(answer) if matches!(answer.response.outcome, CallOutcome::Value(_)) => {
                Outcome::Success
            }
            Ok(_) => Outcome::ToolError,
            Err(refusal) => Outcome::Refused(refusal.status.as_u16()),
        };
        if let Some(span) = counted.span.take() {
            span.finish(outcome);
        }
        if let Some(metrics) = metrics {
            let source = counted.entry.as_ref().map_or("", |e| e.adapter.name());
            let tool = counted
                .entry
                .as_ref()
                .map_or(String::new(), |e| e.definition().id.to_string());
            metrics.call(source, &tool, outcome, started.elapsed());
        }
    }
    result
}

/// What a call is counted under, once its tool is known, and its span when traces are on.
struct Counted<'t> {
    entry: Option<Arc<Entry>>,
    span: Option<CallSpan<'t>>,
}

async fn run(
    catalog: &Catalog,
    default_timeout: Duration,
    metrics: Option<&Metrics>,
    repeats: Option<Repeats<'_>>,
    call: Call,
    counted: &mut Counted<'_>,
    started: Instant,
) -> Result<Answer, ApiError> {
    let Call {
        request,
        input_errors,
        trace_context: _,
        entry: resolved,
    } = call;
    if request.tool_id.is_empty() {
        return Err(ApiError::MissingToolId);
    }
    let entry = match &resolved {
        Some(entry) => entry,
        None => resolve(catalog, &request.tool_id)?,
    };
    counted.entry = Some(Arc::clone(entry));
    if let Some(span) = &counted.span {
        span.tool(entry);
    }
    let definition = entry.definition();
    if let Err(refusal) = requirements::check(
        &request.tool_id,
        definition.requirements.as_ref(),
        request.context.as_ref(),
    ) {
        return Err(requirements::challenge(refusal, entry.adapter.as_ref()).await);
    }
    let input = match request.input {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(input @ Value::Object(_)) => input,
        Some(_) => {
            let mut errors = IndexMap::new();
            errors.insert(
                "input".to_owned(),
                Value::String("must be a JSON object of named parameters".to_owned()),
            );
            return Err(ApiError::InvalidInput {
                parameter_errors: errors,
            });
        }
    };
    let validator = catalog
        .validator(entry)
        .map_err(|reason| ApiError::Misconfigured {
            source_name: entry.adapter.name().to_owned(),
            detail: format!(
                "the input schema of {} is not a valid JSON Schema ({reason}); fix the upstream's definition",
                definition.id
            ),
        })?;
    let mut parameter_errors = input_errors;
    if let Err(errors) = validate::check(&validator, &input) {
        for (name, message) in errors {
            parameter_errors.entry(name).or_insert(message);
        }
    }
    if !parameter_errors.is_empty() {
        return Err(ApiError::InvalidInput { parameter_errors });
    }
    // Always an object here (checked above); the match only moves the map out.
    let input = match input {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    let CallToolRequest {
        tool_id,
        call_id,
        trace_id,
        context,
        ..
    } = request;
    let forward = Forward {
        entry,
        default_timeout,
        metrics,
        span: counted.span.as_ref(),
        started,
    };
    // A repeat is the same call by the same credentials: the context (tokens, secrets, user id)
    // is part of the fingerprint, so a replay never answers one caller's call to another's
    // credentials; and it is matched only here, after the requirements and the input were
    // checked like a new call's.
    match (repeats, call_id) {
        (Some(repeats), Some(call_id)) => {
            let fingerprint = idempotency::fingerprint(&tool_id, &input, context.as_ref());
            let pending = match repeats
                .store
                .check(repeats.caller, &call_id, fingerprint)
                .await
            {
                Ok(Repeat::Run(pending)) => pending,
                Ok(Repeat::Replay(response)) => {
                    return Ok(Answer {
                        response,
                        failure: None,
                    });
                }
                Ok(Repeat::Reused) => return Err(ApiError::CallIdReused { call_id }),
                Err(StoreUnavailable(reason)) => {
                    return Err(ApiError::StateUnavailable {
                        reason: reason.to_string(),
                    });
                }
            };
            let answer = forward.run(input, context, call_id, trace_id).await;
            // A refusal changed nothing upstream: not kept, so a repeat runs again.
            pending
                .finish(answer.as_ref().ok().map(|answer| &answer.response))
                .await;
            answer
        }
        (_, call_id) => {
            let call_id = call_id.unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
            forward.run(input, context, call_id, trace_id).await
        }
    }
}

/// What sending a checked call upstream needs.
struct Forward<'a, 't> {
    entry: &'a Arc<Entry>,
    default_timeout: Duration,
    metrics: Option<&'a Metrics>,
    span: Option<&'a CallSpan<'t>>,
    started: Instant,
}

impl Forward<'_, '_> {
    /// Sends the call upstream (once its source is ready) and rescues a failure.
    async fn run(
        self,
        input: Map<String, Value>,
        context: Option<CallContext>,
        call_id: String,
        trace_id: Option<String>,
    ) -> Result<Answer, ApiError> {
        let Self {
            entry,
            default_timeout,
            metrics,
            span,
            started,
        } = self;
        let definition = entry.definition();
        let source_name = entry.adapter.name();
        let state = entry.adapter.state();
        if !state.is_ready() {
            return Err(ApiError::Unavailable {
                source_name: source_name.to_owned(),
                reason: describe(&state),
            });
        }
        tracing::Span::current().record("call_id", tracing::field::debug(&call_id));
        let upstream_span = span.map(|span| {
            span.call_id(&call_id);
            span.upstream(entry)
        });
        let (upstream_span, trace_context) = match upstream_span {
            Some((span, context)) => (Some(span), Some(context)),
            None => (None, None),
        };
        let tool_call = otc_adapters::ToolCall {
            tool: Arc::clone(&entry.tool),
            input,
            context: context.unwrap_or_default(),
            call_id: call_id.clone(),
            trace_id,
            trace_context,
        };
        let upstream = metrics.map(|m| m.upstream(source_name));
        let result = entry
            .policy
            .forward(default_timeout, entry.adapter.call(tool_call))
            .await;
        drop(upstream);
        if let Some(span) = upstream_span {
            span.finish(result.as_ref().err());
        }
        let (outcome, failure) = match result {
            Ok(value) => (CallOutcome::Value(Some(value)), None),
            Err(err) => match rescue::rescue(&err, definition, source_name) {
                Rescued::Refused(refusal) => return Err(refusal),
                Rescued::Failed(error) => {
                    (CallOutcome::Error(error), Some(rescue::cause_chain(&err)))
                }
            },
        };
        let duration = started.elapsed().as_secs_f64() * 1000.0;
        Ok(Answer {
            response: CallToolResponse {
                call_id,
                duration: Some((duration * 1000.0).round() / 1000.0),
                outcome,
            },
            failure,
        })
    }
}

/// Resolves a requested tool id (with or without `@version`) as the standard says, or the
/// refusal that names what is wrong with it. Every edge resolves through here.
pub fn resolve<'c>(catalog: &'c Catalog, tool_id: &str) -> Result<&'c Arc<Entry>, ApiError> {
    let id: ToolId = tool_id.parse()?;
    // The id without its `@…`: lookup takes a slice of the request and allocates nothing.
    let name = tool_id.split('@').next().unwrap_or_default();
    match catalog.resolve(name, id.version) {
        Resolution::Found(entry) => Ok(entry),
        Resolution::UnknownTool { suggestion } => Err(ApiError::UnknownTool {
            id: tool_id.to_owned(),
            suggestion: suggestion.map(str::to_owned),
        }),
        Resolution::UnknownVersion { available, changed } => Err(ApiError::UnknownVersion {
            id: tool_id.to_owned(),
            available,
            changed: changed.map(Drift::message),
        }),
        Resolution::Refused(drift) => Err(ApiError::Refused {
            message: drift.message(),
        }),
    }
}

/// A source's state in words, for the log.
fn describe(state: &SourceState) -> String {
    match state {
        SourceState::Starting => "starting".to_owned(),
        SourceState::Ready => "ready".to_owned(),
        SourceState::Restarting { reason } => format!("restarting: {reason}"),
        SourceState::Failed { reason } => format!("failed: {reason}"),
    }
}
