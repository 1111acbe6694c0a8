//! One call, from a parsed request to its outcome: resolve → requirements → validate → forward →
//! rescue (DESIGN.md §1, "A call, end to end").
//!
//! Every edge that calls tools goes through [`call`]: the OTC HTTP endpoint today, the MCP
//! endpoint next (DESIGN.md §8), so there is one validator, one forwarding path and one error
//! table. The edge parses its own envelope and renders the outcome in its own shape; everything
//! in between is here.

use std::sync::Arc;
use std::time::Duration;

use indexmap::IndexMap;
use otc_mappings::otc::{
    CallContext, CallOutcome, CallToolRequest, CallToolResponse, ToolError, ToolId,
};
use otc_shape::transform::MapBackError;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use otc_adapters::{AdapterError, CacheRequest, Fetched, Freshness, SourceState, ToolValue};

use crate::access::{Admitted, Limited, Verdict, View};
use crate::catalog::lock::Drift;
use crate::catalog::registry::{Catalog, Entry, Resolution};
use crate::catalog::shaping::Shaping;
use crate::catalog::{requirements, validate};
use crate::idempotency::{self, Idempotency, Repeat, StoreUnavailable};
use crate::rescue::{self, ApiError, Refusal, Rescued};
use crate::result_cache::{self, CacheRule, Directive, Kept, Key, ResultCache};
use crate::telemetry::Telemetry;
use crate::telemetry::events::{
    CacheLooked, CallDecided, CallEvents, CallFinished, CallLimited, CallRefused, CallStarted,
    CallUnauthenticated, Edge, ToolResolved, UpstreamAnswered, UpstreamCalled,
};

/// A call request as an edge parsed it.
#[derive(Debug, Default)]
pub(crate) struct Call {
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
    /// The edge the call came in by: what its events are logged as.
    pub edge: Edge,
    /// What the caller asked of the cache of read-only calls (its `Cache-Control` header).
    pub cache: Directive,
    /// The edge takes a JSON value as the upstream's text ([`CallOutcome::Json`]) when nothing
    /// on the way needs it parsed (no projection, no cache): the MCP edge, which cuts a value to
    /// a byte budget from its text (issue 27).
    pub unparsed: bool,
}

/// A call that reached its tool (or was answered as if it had).
#[derive(Debug)]
pub(crate) struct Answer {
    /// The response body: the value, or `success: false` with a `ToolError`.
    pub response: CallToolResponse,
    /// When the tool failed: the whole cause chain, for the log only.
    pub failure: Option<String>,
}

/// What a call may be answered from besides its upstream, and whose it is.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Stores<'a> {
    /// Where repeats of a `call_id` are recognised; `None`: every call runs.
    pub repeats: Option<&'a Idempotency>,
    /// The cache of read-only calls; `None`: nothing is kept.
    pub cache: Option<&'a ResultCache>,
    /// The caller's scope ([`crate::access::Caller::scope`]; empty when anonymous): repeats and
    /// private cache entries are the caller's own.
    pub caller: &'a str,
    /// The per-caller sign-ins made through this bridge ([`crate::access::Caller::signed_in`]).
    pub sign_ins: Option<&'a otc_adapters::mcp::Challenges>,
}

/// Runs one call against `catalog`. `Err` is a refusal before anything was sent upstream,
/// decided but not rendered (each edge renders it its own way); `Ok` is a response to send as
/// it is, success or tool error. `default_timeout` applies when the tool's source sets none.
/// With `stores.repeats`, a call that repeats an earlier one (same caller, `call_id`, tool, input
/// and context) is answered from the store, but only once the repeat has passed the same checks
/// (requirements, validation) as a new call; with `stores.cache`, a call to a tool whose answers
/// are kept is answered from a fresh entry (after the same checks, and the policies and limits).
///
/// This is the only place a call's telemetry is emitted ([`crate::telemetry::events`]): the
/// edges render the outcome and say nothing about it.
pub(crate) async fn call(
    catalog: &Catalog,
    view: View<'_>,
    default_timeout: Duration,
    telemetry: &Telemetry,
    stores: Stores<'_>,
    mut call: Call,
) -> Result<Answer, Refusal> {
    // An anonymous call made with a token a sign-in through this bridge handed out is made by
    // the user who signed in: policies, limits, repeats and the audit trail see their name.
    let signed_in = view
        .caller
        .signed_in(stores.sign_ins, call.request.context.as_ref());
    let (view, stores) = match &signed_in {
        Some(caller) => (
            View { caller, ..view },
            Stores {
                caller: &caller.scope,
                ..stores
            },
        ),
        None => (view, stores),
    };
    if signed_in.is_some() {
        // The edge resolved the tool as another caller: it is resolved again, as this one.
        call.entry = None;
    }
    let mut events = CallStarted {
        edge: call.edge,
        caller: &view.caller.name,
        trace_context: call.trace_context.as_ref(),
        trace_id: call.request.trace_id.as_deref(),
    }
    .emit(telemetry);
    // Kept here for the call's events (they name the tool as asked); `run` only reads it.
    let tool_id = std::mem::take(&mut call.request.tool_id);
    // Boxed: the call's state (about 4 KB) is then written once, not copied by every future
    // that awaits this one (memmove was the largest single cost of a call in the profile).
    let result = Box::pin(run(
        catalog,
        view,
        default_timeout,
        stores,
        &tool_id,
        call,
        &mut events,
    ))
    .await
    .map_err(Refusal::from);
    match &result {
        Ok(answer) => CallFinished {
            requested: &tool_id,
            failed: matches!(answer.response.outcome, CallOutcome::Error(_)),
            cause: answer.failure.as_deref(),
            response: &answer.response,
        }
        .emit(events),
        Err(refusal) => CallRefused {
            requested: &tool_id,
            refusal,
        }
        .emit(events),
    }
    result
}

/// Counts a call that server authentication refused before it was read (the auth layer's
/// share of [`call`]'s telemetry: a refused call is still a call, for the dashboards).
pub(crate) fn unauthenticated(telemetry: &Telemetry) {
    CallUnauthenticated.emit(telemetry);
}

async fn run(
    catalog: &Catalog,
    view: View<'_>,
    default_timeout: Duration,
    stores: Stores<'_>,
    tool_id: &str,
    call: Call,
    events: &mut CallEvents<'_>,
) -> Result<Answer, ApiError> {
    let Call {
        request,
        input_errors,
        trace_context: _,
        entry: resolved,
        edge: _,
        cache: directive,
        unparsed,
    } = call;
    if tool_id.is_empty() {
        return Err(ApiError::MissingToolId);
    }
    let entry = match &resolved {
        Some(entry) => entry,
        None => resolve(catalog, tool_id, view)?,
    };
    ToolResolved { entry }.emit(events);
    let definition = entry.definition();
    if let Err(refusal) = requirements::check(
        tool_id,
        definition.requirements.as_ref(),
        request.context.as_ref(),
    ) {
        return Err(requirements::challenge(refusal, entry.adapter.as_ref()).await);
    }
    let input = match request.input {
        None | Some(Value::Null) => Value::Object(Map::new()),
        // A hidden argument's value is ignored, before the served schema (maybe closed) sees it.
        Some(Value::Object(mut input)) => {
            if let Some(shaping) = &entry.shaping {
                shaping.arguments.drop_hidden(&mut input);
            }
            Value::Object(input)
        }
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
    // Decided on the validated input, which is what a policy's condition reads.
    // The tool was resolved among those this view's caller sees (here or by the edge, under the
    // same view: [`call`] drops the edge's when a sign-in changes the caller).
    let verdict = view.policies.decide_seen(view.caller, entry, &input);
    let (allowed, rule) = match verdict {
        Verdict::Allowed(rule) => (true, rule),
        Verdict::Refused(rule) => (false, rule),
        Verdict::Hidden => (false, None),
    };
    CallDecided {
        allowed,
        rule: rule.map(|r| view.policies.label(r)),
        input: &input,
    }
    .emit(events);
    match verdict {
        Verdict::Allowed(_) => {}
        Verdict::Refused(rule) => {
            return Err(ApiError::NotPermitted {
                reason: view.policies.reason(rule).map(str::to_owned),
                rule: rule.map_or_else(
                    || "(none allows it)".to_owned(),
                    |r| view.policies.label(r).to_owned(),
                ),
            });
        }
        // Not for a tool resolved under this view; answered as absent, as ever.
        Verdict::Hidden => {
            return Err(ApiError::UnknownTool {
                id: tool_id.to_owned(),
                suggestion: None,
            });
        }
    }
    // Counted only once allowed; held (its concurrency permits) until the call has ended.
    let _admitted = match view.limits {
        Some(limits) => match limits.admit(view.caller, entry).await {
            Ok(admitted) => admitted,
            Err(Limited { rule, wait }) => {
                CallLimited { rule: &rule, wait }.emit(events);
                return Err(ApiError::RateLimited { rule, wait });
            }
        },
        None => Admitted::default(),
    };
    // The input in the upstream's shape, when a transform reshapes the tool's arguments; the
    // call's own input stays what a repeat is recognised by.
    let upstream_input = match &entry.shaping {
        Some(shaping) if shaping.upstream_input.is_some() => {
            Some(map_back(catalog, entry, shaping, view, &input)?)
        }
        _ => None,
    };
    let CallToolRequest {
        call_id,
        trace_id,
        context,
        ..
    } = request;
    let cache = match (stores.cache, entry.shaping.as_ref()) {
        (Some(store), Some(shaping)) => shaping.cache.as_ref().map(|rule| Cached {
            store,
            rule,
            caller: stores.caller,
            directive,
        }),
        _ => None,
    };
    let forward = Forward {
        entry,
        default_timeout,
        events,
        cache,
        unparsed,
    };
    // A repeat is the same call by the same credentials: the context (tokens, secrets, user id)
    // is part of the fingerprint, so a replay never answers one caller's call to another's
    // credentials; and it is matched only here, after the requirements and the input were
    // checked like a new call's.
    match (stores.repeats, call_id) {
        (Some(repeats), Some(call_id)) => {
            let fingerprint = idempotency::fingerprint(tool_id, &input, context.as_ref());
            let pending = match repeats.check(stores.caller, &call_id, fingerprint).await {
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
            let input = upstream_input.unwrap_or(input);
            let answer = forward.run(input, context, call_id, trace_id).await;
            // A refusal changed nothing upstream: not kept, so a repeat runs again.
            pending
                .finish(answer.as_ref().ok().map(|answer| &answer.response))
                .await;
            answer
        }
        (_, call_id) => {
            let call_id = call_id.unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
            let input = upstream_input.unwrap_or(input);
            forward.run(input, context, call_id, trace_id).await
        }
    }
}

/// What sending a checked call upstream needs.
struct Forward<'a, 't> {
    entry: &'a Arc<Entry>,
    default_timeout: Duration,
    events: &'a CallEvents<'t>,
    /// The cache, when the tool's answers are kept.
    cache: Option<Cached<'a>>,
    /// Whether the edge takes a JSON value as its text ([`Call::unparsed`]).
    unparsed: bool,
}

/// What the upstream answered: a value (and what it said of keeping it) or "not modified", or
/// a value as its text.
enum Upstream {
    Fetched(Fetched),
    Json(Box<RawValue>),
}

/// A call to a tool whose answers are kept.
#[derive(Clone, Copy)]
struct Cached<'a> {
    store: &'a ResultCache,
    rule: &'a CacheRule,
    caller: &'a str,
    directive: Directive,
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
            events,
            cache,
            unparsed,
        } = self;
        let definition = entry.definition();
        let source_name = entry.adapter.name();
        // The entry is looked up before the source's state is: a fresh answer is served even
        // while its source restarts.
        let mut looked = None;
        let mut stale = None;
        let cache = match cache {
            Some(cached) if cached.directive == Directive::Bypass => {
                CacheLooked::Bypassed.emit(entry, events);
                None
            }
            Some(cached) => {
                let key = Key::new(cached.rule, cached.caller, &input, context.as_ref());
                if cached.directive == Directive::Refresh {
                    looked = Some(CacheLooked::Bypassed);
                } else if let Some(kept) = cached.store.get(&key).await {
                    if kept.is_fresh() {
                        CacheLooked::Hit.emit(entry, events);
                        let value = kept.value.clone();
                        return Ok(answered(
                            events,
                            call_id,
                            CallOutcome::Value(Some(value)),
                            None,
                        ));
                    }
                    stale = Some(kept);
                }
                Some((cached, key))
            }
            None => None,
        };
        // Only a value that is neither projected nor kept can stay text: both need it parsed.
        let unparsed = unparsed
            && cache.is_none()
            && entry
                .shaping
                .as_ref()
                .is_none_or(|shaping| shaping.projection.is_none());
        let state = entry.adapter.state();
        if !state.is_ready() {
            return Err(ApiError::Unavailable {
                source_name: source_name.to_owned(),
                reason: describe(&state),
            });
        }
        let mut upstream = UpstreamCalled {
            entry,
            call_id: &call_id,
        }
        .emit(events);
        let tool_call = otc_adapters::ToolCall {
            tool: Arc::clone(&entry.tool),
            input,
            context: context.unwrap_or_default(),
            call_id: call_id.clone(),
            trace_id,
            trace_context: upstream.trace_context(),
        };
        let result = match &cache {
            None if unparsed => entry
                .policy
                .forward(default_timeout, entry.adapter.call_unparsed(tool_call))
                .await
                .map(|value| match value {
                    ToolValue::Parsed(value) => {
                        Upstream::Fetched(Fetched::Value(value, Freshness::unsaid()))
                    }
                    ToolValue::Json(json) => Upstream::Json(json),
                }),
            None => entry
                .policy
                .forward(default_timeout, entry.adapter.call(tool_call))
                .await
                .map(|value| Upstream::Fetched(Fetched::Value(value, Freshness::unsaid()))),
            Some((cached, _)) => {
                let request = CacheRequest {
                    shared: cached.rule.public,
                    validators: stale
                        .as_ref()
                        .map(|kept| kept.validators.clone())
                        .filter(|validators| !validators.is_empty()),
                };
                entry
                    .policy
                    .forward(
                        default_timeout,
                        entry.adapter.call_fresh(tool_call, &request),
                    )
                    .await
                    .map(Upstream::Fetched)
            }
        };
        // Only a call that sent validators can be answered "not modified"; any other 304 is
        // the upstream's mistake.
        let result = match (result, &stale) {
            (Ok(Upstream::Fetched(Fetched::NotModified(_))), None) => Err(AdapterError::Protocol {
                message:
                    "the upstream answered 304 Not Modified to a call that was not conditional"
                        .to_owned(),
                source: None,
            }),
            (result, _) => result,
        };
        UpstreamAnswered {
            error: result.as_ref().err(),
        }
        .emit(upstream, events);
        let (outcome, failure) = match result {
            // Asked for only when nothing needs the value parsed (above).
            Ok(Upstream::Json(json)) => (CallOutcome::Json(json), None),
            Ok(Upstream::Fetched(Fetched::Value(value, freshness))) => {
                let projected = match entry.shaping.as_ref() {
                    None => Ok(value),
                    Some(shaping) => shaping.project(value).await,
                };
                match projected {
                    Ok(value) => {
                        if let Some((cached, key)) = cache {
                            looked.get_or_insert(CacheLooked::Miss).emit(entry, events);
                            keep(cached, key, &value, freshness).await;
                        }
                        (CallOutcome::Value(Some(value)), None)
                    }
                    Err(error) => (
                        CallOutcome::Error(unshapeable(&error)),
                        Some(format!("results projection: {error}")),
                    ),
                }
            }
            Ok(Upstream::Fetched(Fetched::NotModified(mut freshness))) => {
                // A 304 that repeats no validator leaves the kept ones in force.
                if freshness.validators.is_empty()
                    && let Some(kept) = &stale
                {
                    freshness.validators = kept.validators.clone();
                }
                let value = stale.map_or(Value::Null, |kept| kept.value.clone());
                if let Some((cached, key)) = cache {
                    CacheLooked::Revalidated.emit(entry, events);
                    keep(cached, key, &value, freshness).await;
                }
                (CallOutcome::Value(Some(value)), None)
            }
            Err(err) => match rescue::rescue(&err, definition, source_name) {
                Rescued::Refused(refusal) => return Err(refusal),
                Rescued::Failed(error) => {
                    (CallOutcome::Error(error), Some(rescue::cause_chain(&err)))
                }
            },
        };
        Ok(answered(events, call_id, outcome, failure))
    }
}

/// The answer to a call that ended with `outcome`, its duration counted from its arrival.
fn answered(
    events: &CallEvents<'_>,
    call_id: String,
    outcome: CallOutcome,
    failure: Option<String>,
) -> Answer {
    let duration = events.started().elapsed().as_secs_f64() * 1000.0;
    Answer {
        response: CallToolResponse {
            call_id,
            duration: Some((duration * 1000.0).round() / 1000.0),
            outcome,
        },
        failure,
    }
}

/// Keeps `value` as the answer under `key`, for as long as the upstream's `freshness` says (or
/// else the rule's `ttl`), unless the upstream said not to keep it or the caller asked so.
async fn keep(cached: Cached<'_>, key: Key, value: &Value, freshness: Freshness) {
    if !freshness.storable || cached.directive == Directive::Bypass {
        return;
    }
    let ttl = freshness.ttl.unwrap_or(cached.rule.ttl);
    let kept = Kept {
        value: value.clone(),
        fresh_until_ms: result_cache::from_now_ms(ttl),
        validators: freshness.validators,
    };
    cached.store.put(key, kept).await;
}

/// The validated `input` in the upstream's shape ([`Shaping::map_back`]), checked against the
/// upstream's own input schema. A renamed argument's upstream name the caller passed is refused
/// like a parameter the tool does not have (a hidden one was already taken out); a mapped input the upstream's schema refuses can only come
/// from a fixed value (the environment's, the caller's), so it is the configuration's fault,
/// and the refusal names parameters, never values (a fixed value may be a secret).
fn map_back(
    catalog: &Catalog,
    entry: &Entry,
    shaping: &Shaping,
    view: View<'_>,
    input: &Map<String, Value>,
) -> Result<Map<String, Value>, ApiError> {
    let definition = entry.definition();
    let misconfigured = |detail: String| ApiError::Misconfigured {
        source_name: entry.adapter.name().to_owned(),
        detail,
    };
    let mapped = shaping
        .map_back(input.clone(), &|key| view.caller.value(key))
        .map_err(|error| match error {
            MapBackError::UnknownArgument { argument } => ApiError::InvalidInput {
                parameter_errors: [(
                    argument,
                    Value::String("is not a parameter of this tool".to_owned()),
                )]
                .into_iter()
                .collect(),
            },
            other => misconfigured(format!("the transform of {}: {other}", definition.id)),
        })?;
    let Some(validator) = catalog.upstream_validator(entry) else {
        return Ok(mapped);
    };
    let validator = validator.map_err(|reason| {
        misconfigured(format!(
            "the upstream's input schema of {} is not a valid JSON Schema ({reason})",
            definition.id
        ))
    })?;
    let mapped = Value::Object(mapped);
    if let Err(errors) = validate::check(&validator, &mapped) {
        let names: Vec<&str> = errors.keys().map(String::as_str).collect();
        return Err(misconfigured(format!(
            "the transform of {} gives the upstream input its schema refuses (parameters: {})",
            definition.id,
            names.join(", ")
        )));
    }
    match mapped {
        Value::Object(map) => Ok(map),
        _ => Ok(Map::new()),
    }
}

/// The tool error of a call whose upstream answered but whose projection of results failed
/// (a runtime error of the jq program, or its time or size budget): not retryable, the
/// operator's program must change.
fn unshapeable(error: &otc_shape::project::ProjectionError) -> ToolError {
    ToolError {
        message:
            "The tool answered, but its result could not be shaped as the bridge is configured to."
                .to_owned(),
        developer_message: Some(format!("results projection: {error}")),
        ..ToolError::default()
    }
}

/// Resolves a requested tool id (with or without `@version`) as the standard says, or the
/// refusal that names what is wrong with it, among the tools `view` lets its caller see. Every
/// edge resolves through here.
pub(crate) fn resolve<'c>(
    catalog: &'c Catalog,
    tool_id: &str,
    view: View<'_>,
) -> Result<&'c Arc<Entry>, ApiError> {
    let id: ToolId = tool_id.parse()?;
    // The id without its `@…`: lookup takes a slice of the request and allocates nothing.
    let name = tool_id.split('@').next().unwrap_or_default();
    let sees = |entry: &Entry| view.sees(entry);
    let only: Option<&dyn Fn(&Entry) -> bool> = (!view.is_everything()).then_some(&sees);
    match catalog.resolve(name, id.version, only) {
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

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use otc_adapters::fake::FakeAdapter;
    use otc_mappings::otc::{ToolDefinition, ToolVersion};
    use serde_json::json;

    use super::*;
    use crate::access::{Caller, Policies};
    use crate::catalog::policy::SourcePolicy;
    use crate::catalog::registry::SourceTools;
    use crate::telemetry::metrics::Metrics;

    /// `Kit.Echo@1.0.0` from source `kit`, which answers its input.
    fn echo() -> FakeAdapter {
        let version = ToolVersion::new(1, 0, 0);
        let definition = ToolDefinition {
            id: ToolId::exact("Kit", "Echo", version),
            name: "Kit_Echo".to_owned(),
            description: "Echoes.".to_owned(),
            version,
            input_schema: json!({"type": "object"}).into(),
            output_schema: None,
            requirements: None,
        };
        FakeAdapter::new("kit").tool(definition, |call| Ok(json!(call.input)))
    }

    /// A catalog of `adapter`'s tools, its source compiled with `policy`.
    fn catalog_of(adapter: impl otc_adapters::Adapter, policy: SourcePolicy) -> Catalog {
        let mapped = futures::executor::block_on(adapter.list_tools())
            .unwrap()
            .tools;
        let source =
            SourceTools::compile(Arc::new(adapter), Arc::new(policy), mapped, &mut Vec::new());
        Catalog::new(vec![source])
    }

    /// A catalog of one tool, [`echo`].
    fn catalog() -> Catalog {
        catalog_of(echo(), SourcePolicy::default())
    }

    /// An adapter whose values are JSON text when the call allows it, as an OpenAPI source's.
    #[derive(Debug)]
    struct Texting(FakeAdapter);

    #[async_trait::async_trait]
    impl otc_adapters::Adapter for Texting {
        fn name(&self) -> &str {
            self.0.name()
        }

        async fn list_tools(
            &self,
        ) -> Result<otc_mappings::Mapped<otc_mappings::MappedTool>, AdapterError> {
            self.0.list_tools().await
        }

        async fn call(&self, call: otc_adapters::ToolCall) -> Result<Value, AdapterError> {
            self.0.call(call).await
        }

        async fn call_unparsed(
            &self,
            call: otc_adapters::ToolCall,
        ) -> Result<ToolValue, AdapterError> {
            let text = self.0.call(call).await?.to_string();
            Ok(ToolValue::Json(RawValue::from_string(text).unwrap()))
        }
    }

    /// Issue 27: an edge that asks for text gets the upstream's text, unless a projection or a
    /// cache needs the value parsed; an edge that does not ask gets a value.
    #[tokio::test]
    async fn issue_27_a_value_stays_text_only_when_nothing_needs_it_parsed() {
        let store = ResultCache::in_memory(&crate::result_cache::CacheStoreConfig::default());
        let store = &store;
        let outcome = |options: &str, unparsed: bool| {
            let options: crate::catalog::policy::SourceOptions =
                serde_yaml::from_str(options).unwrap();
            // Read-only: a destructive tool's answers are never kept.
            let catalog = catalog_of(Texting(echo().read_only()), options.compile("kit").unwrap());
            async move {
                let everyone = Policies::default();
                let anonymous = Caller::anonymous();
                let request = CallToolRequest {
                    tool_id: "Kit.Echo".to_owned(),
                    input: Some(json!({"message": "hi"})),
                    ..Default::default()
                };
                let answer = call(
                    &catalog,
                    View::new(&anonymous, &everyone),
                    Duration::from_secs(5),
                    &Telemetry::default(),
                    Stores {
                        cache: Some(store),
                        ..Stores::default()
                    },
                    Call {
                        request,
                        edge: Edge::Mcp,
                        unparsed,
                        ..Default::default()
                    },
                )
                .await
                .unwrap();
                answer.response.outcome
            }
        };
        match outcome("{}", true).await {
            CallOutcome::Json(json) => assert_eq!(json.get(), r#"{"message":"hi"}"#),
            other => panic!("{other:?}"),
        }
        let value = |outcome: CallOutcome| match outcome {
            CallOutcome::Value(Some(value)) => value,
            other => panic!("{other:?}"),
        };
        assert_eq!(value(outcome("{}", false).await), json!({"message": "hi"}));
        assert_eq!(
            value(outcome("overrides: {Echo: {results: {jq: '.message'}}}", true).await),
            json!("hi")
        );
        assert_eq!(
            value(outcome("cache: {ttl_secs: 60}", true).await),
            json!({"message": "hi"})
        );
    }

    /// Log lines written while `f` runs.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Captured {
        /// Captures this thread's log lines until the guard drops.
        fn start() -> (Self, tracing::subscriber::DefaultGuard) {
            let captured = Self::default();
            let writer = captured.clone();
            let subscriber = tracing_subscriber::fmt()
                .with_ansi(false)
                .with_writer(move || writer.clone())
                .finish();
            (captured, tracing::subscriber::set_default(subscriber))
        }

        /// What was written so far.
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    impl std::io::Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    async fn mcp_call(catalog: &Catalog, telemetry: &Telemetry, tool_id: &str) -> String {
        let (captured, _guard) = Captured::start();
        let request = CallToolRequest {
            tool_id: tool_id.to_owned(),
            input: Some(json!({"message": "hi"})),
            ..Default::default()
        };
        let everyone = Policies::default();
        let anonymous = Caller::anonymous();
        let _ = call(
            catalog,
            View::new(&anonymous, &everyone),
            Duration::from_secs(5),
            telemetry,
            Stores::default(),
            Call {
                request,
                edge: Edge::Mcp,
                ..Default::default()
            },
        )
        .await;
        captured.text()
    }

    /// Issue 23, part 2.2: a call's log line and its metrics come from its one event, emitted
    /// here; the edge only renders the answer.
    #[tokio::test]
    async fn one_call_writes_its_log_line_and_counts_itself_from_one_event() {
        let catalog = catalog();
        let metrics = Arc::new(Metrics::new(true));
        let telemetry = Telemetry {
            metrics: Some(Arc::clone(&metrics)),
            ..Telemetry::default()
        };
        let count = |outcome: &str, source: &str, tool: &str| {
            // The toolkit is the tool id's first segment (none for a refusal before the tool).
            let toolkit = tool.split_once('.').map_or("", |(toolkit, _)| toolkit);
            let labels = [
                format!(r#"outcome="{outcome}""#),
                format!(r#"source="{source}""#),
                format!(r#"tool="{tool}""#),
                format!(r#"toolkit="{toolkit}""#),
            ];
            let text = metrics.render(&catalog);
            text.lines()
                .filter_map(|line| line.strip_prefix("otc_bridge_calls_total{"))
                .filter_map(|line| line.split_once("} "))
                .find(|(names, _)| {
                    let mut names: Vec<&str> = names.split(',').collect();
                    names.sort_unstable();
                    names == labels
                })
                .map_or(0, |(_, n)| n.parse::<u64>().unwrap())
        };

        let log = mcp_call(&catalog, &telemetry, "Kit.Echo").await;
        let lines: Vec<&str> = log.lines().collect();
        assert_eq!(lines.len(), 1, "{log}");
        assert!(lines[0].contains("INFO"), "{log}");
        assert!(lines[0].contains("otc_bridge::server::mcp::meta"), "{log}");
        assert!(lines[0].contains("MCP call succeeded"), "{log}");
        assert!(lines[0].contains("tool=Kit.Echo ms="), "{log}");
        assert_eq!(count("success", "kit", "Kit.Echo@1.0.0"), 1);

        // The second call reuses the tool's label set.
        mcp_call(&catalog, &telemetry, "Kit.Echo@1.0.0").await;
        assert_eq!(count("success", "kit", "Kit.Echo@1.0.0"), 2);

        let log = mcp_call(&catalog, &telemetry, "Kit.Nope").await;
        assert!(log.contains("MCP call refused"), "{log}");
        assert!(log.contains("tool=Kit.Nope"), "{log}");
        assert!(log.contains("status=400"), "{log}");
        assert_eq!(count("400", "", ""), 1);
        let seconds = metrics.render(&catalog);
        assert!(
            seconds.contains(
                r#"otc_bridge_call_duration_seconds_count{source="kit",toolkit="Kit"} 2"#
            ),
            "{seconds}"
        );
        assert!(
            seconds.contains(r#"otc_bridge_upstream_duration_seconds_count{source="kit"} 2"#),
            "{seconds}"
        );
    }

    /// The OTC edge's call line is its HTTP request line: the event writes none of its own.
    #[tokio::test]
    async fn an_otc_call_adds_no_line_to_its_request_line() {
        let catalog = catalog();
        let (captured, _guard) = Captured::start();
        let request = CallToolRequest {
            tool_id: "Kit.Echo".to_owned(),
            ..Default::default()
        };
        let everyone = Policies::default();
        let anonymous = Caller::anonymous();
        let answer = call(
            &catalog,
            View::new(&anonymous, &everyone),
            Duration::from_secs(5),
            &Telemetry::default(),
            Stores::default(),
            Call {
                request,
                ..Default::default()
            },
        )
        .await;
        assert!(answer.is_ok());
        let log = captured.text();
        assert_eq!(log, "");
    }
}
