//! The bridge's telemetry events, one type each (vector's `internal_events` is the model): an
//! event is a plain struct of what happened, and its one `emit` writes everything that is said
//! about it: the log line, the metrics, the span's fields. Nothing else in the bridge counts or
//! traces a call, so a metric and its log line cannot disagree.
//!
//! | event | emitted by | log | metrics | span |
//! |---|---|---|---|---|
//! | [`CallStarted`] | [`crate::call`] | | | `otc.call` starts (the caller's context its parent) |
//! | [`ToolResolved`] | [`crate::call`] | | the tool's label set, once | tool id, version, source |
//! | [`UpstreamCalled`] | [`crate::call`] | | `calls_in_flight` +1 | `otc.upstream` starts; its context goes upstream |
//! | [`UpstreamAnswered`] | [`crate::call`] | audit: `upstream` (`ok`, the failure, its HTTP status) | `calls_in_flight` −1, `upstream_duration_seconds` | `otc.upstream` ends (error status) |
//! | [`CacheLooked`] | [`crate::call`] | audit: `cache` | `cache_lookups_total{source, outcome}` | `otc.cache` on `otc.call` |
//! | [`CallDecided`] | [`crate::call`] | | `policy_decisions_total{effect, rule}` | |
//! | [`CallLimited`] | [`crate::call`] | | (the refusal's `calls_total{outcome=429}`) | |
//! | [`CallFinished`] | [`crate::call`] | MCP: `MCP call succeeded` / `… failed in the tool` | `calls_total{outcome=success\|tool_error}`, `call_duration_seconds` | `otc.call` ends with its outcome |
//! | [`CallRefused`] | [`crate::call`] | MCP: `MCP call refused` | `calls_total{outcome=<status>}`, `call_duration_seconds` | `otc.call` ends, refused |
//! | [`CallUnauthenticated`] | [`crate::call::unauthenticated`] (for the auth layer) | | `calls_total{outcome=401}` | |
//! | [`ToolsListed`] | the edges' list handlers | | `list_requests_total{edge}` | |
//! | [`ToolsSearched`] | the MCP edge's `search_tools` | | `search_requests_total` | |
//!
//! **Log lines per edge.** A call on the MCP edge is logged by its event, at `info`, with the
//! fields the MCP edge used to write (`tool`, `ms`, `cause` or `status` and `detail`) and under
//! the edge's target, so filters keep working. A call on the OTC edge has its line already: the
//! HTTP request line of [`crate::server`] (method, path, tool, status, `duration_ms`, detail),
//! which every request gets, calls or not; its event adds none, so each call is one line on
//! either edge.
//!
//! **Cost.** Every `emit` is a few branches on `Option`s when metrics and traces are off; with
//! metrics on, a call looks up its tool's counters once ([`ToolResolved`]) instead of hashing
//! label strings per metric, and formats no tool id.

use std::sync::Arc;
use std::time::Instant;

use otc_adapters::{AdapterError, TraceContext};
// Byte counts of inputs and answers, counted as written: no copy of a 5 MB answer.
use otc_mappings::text::json_len;

use super::Telemetry;
use super::audit::{AuditTrail, Limited, Record};
use super::metrics::{InFlight, Outcome, ToolMetrics};
use super::traces::{CallSpan, UpstreamSpan};
use crate::catalog::registry::Entry;
use crate::rescue::{Refusal, echo};

/// The target of the MCP edge's call lines: the module that wrote them before they were events,
/// so `--log-level otc_bridge::server::mcp=…` still selects them.
const MCP_TARGET: &str = "otc_bridge::server::mcp::meta";

/// Which edge a call or a list came in by.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Edge {
    /// The OTC HTTP routes (`POST /tools/call`, `GET /tools`).
    #[default]
    Otc,
    /// The MCP edge (`POST /mcp` or stdio).
    Mcp,
}

impl Edge {
    /// The `edge` label.
    fn label(self) -> &'static str {
        match self {
            Self::Otc => "otc",
            Self::Mcp => "mcp",
        }
    }
}

/// A call arrived: its clock and its span start, the span a child of the caller's trace context
/// (`trace_context`, else its `trace_id` when that is a W3C `traceparent`).
#[derive(Debug)]
pub(crate) struct CallStarted<'a, 'c> {
    pub(crate) edge: Edge,
    /// The caller's name (for the audit trail).
    pub(crate) caller: &'c str,
    pub(crate) trace_context: Option<&'a TraceContext>,
    pub(crate) trace_id: Option<&'a str>,
}

impl<'c> CallStarted<'_, 'c> {
    /// Starts the call's record, where its later events go.
    pub(crate) fn emit<'t>(self, telemetry: &'t Telemetry) -> CallEvents<'t>
    where
        'c: 't,
    {
        CallEvents {
            audit: telemetry.audit.as_deref().map(|trail| Audited {
                trail,
                caller: self.caller,
                tool: None,
                decision: None,
                limited: None,
                bytes_in: 0,
                input: None,
                upstream: std::sync::OnceLock::new(),
                cache: std::sync::OnceLock::new(),
            }),
            edge: self.edge,
            started: Instant::now(),
            metrics: telemetry.metrics.as_deref(),
            span: telemetry
                .traces
                .as_deref()
                .map(|traces| traces.start_call(self.trace_context, self.trace_id)),
            tool: None,
        }
    }
}

/// One call's record between [`CallStarted`] and [`CallFinished`] or [`CallRefused`]: its clock,
/// its span, and its tool's counters once resolved.
#[derive(Debug)]
pub(crate) struct CallEvents<'t> {
    edge: Edge,
    started: Instant,
    metrics: Option<&'t super::metrics::Metrics>,
    span: Option<CallSpan<'t>>,
    tool: Option<Arc<ToolMetrics>>,
    audit: Option<Audited<'t>>,
}

/// What the audit trail will record of a call, gathered as it goes (only when the trail is on).
#[derive(Debug)]
struct Audited<'t> {
    trail: &'t AuditTrail,
    caller: &'t str,
    tool: Option<String>,
    /// The decision (`allow`, `refuse`, `none`) and the rule's label.
    decision: Option<(&'static str, Option<String>)>,
    /// The limit that refused the call and the wait it asked for (ms).
    limited: Option<(String, u64)>,
    bytes_in: usize,
    input: Option<serde_json::Value>,
    /// What the upstream answered, once it has: set through a shared reference, as the call
    /// holds its record shared while it waits for the upstream.
    upstream: std::sync::OnceLock<(&'static str, Option<u16>)>,
    /// What the cache did (set like `upstream`).
    cache: std::sync::OnceLock<&'static str>,
}

impl Audited<'_> {
    /// Writes the call's line.
    fn record(self, edge: Edge, requested: &str, outcome: &Closed<'_>, ms: f64) {
        let (decision, rule) = match &self.decision {
            Some((decision, rule)) => (Some(*decision), rule.as_deref()),
            None => (None, None),
        };
        self.trail.record(&Record {
            caller: self.caller,
            edge: edge.label(),
            requested,
            tool: self.tool,
            call_id: outcome.call_id,
            decision,
            rule,
            limited: self.limited.as_ref().map(|(rule, wait)| Limited {
                rule,
                retry_after_ms: *wait,
            }),
            upstream: self.upstream.get().map(|(kind, _)| *kind),
            upstream_status: self.upstream.get().and_then(|(_, status)| *status),
            cache: self.cache.get().copied(),
            outcome: outcome.outcome,
            status: outcome.status,
            ms: (ms * 1000.0).round() / 1000.0,
            bytes_in: self.bytes_in,
            bytes_out: outcome.bytes_out,
            input: self.input,
        });
    }
}

/// How a call ended, for its audit line.
struct Closed<'a> {
    outcome: &'static str,
    status: Option<u16>,
    call_id: Option<&'a str>,
    bytes_out: usize,
}

impl CallEvents<'_> {
    /// When the call arrived (its answer's `duration` counts from here).
    pub(crate) fn started(&self) -> Instant {
        self.started
    }
}

/// The call's tool is known.
#[derive(Debug)]
pub(crate) struct ToolResolved<'a> {
    pub(crate) entry: &'a Arc<Entry>,
}

impl ToolResolved<'_> {
    pub(crate) fn emit(self, call: &mut CallEvents<'_>) {
        if let Some(span) = &call.span {
            span.tool(self.entry);
        }
        call.tool = call.metrics.map(|metrics| metrics.tool(self.entry));
        if let Some(audit) = &mut call.audit {
            audit.tool = Some(self.entry.definition().id.to_string());
        }
    }
}

/// Policies decided a call of a visible tool on its validated input: allowed or refused, by
/// the rule at `rule` (`None`: no policies, or no rule allowed it).
#[derive(Debug)]
pub(crate) struct CallDecided<'a> {
    pub(crate) allowed: bool,
    pub(crate) rule: Option<&'a str>,
    pub(crate) input: &'a serde_json::Map<String, serde_json::Value>,
}

impl CallDecided<'_> {
    pub(crate) fn emit(self, call: &mut CallEvents<'_>) {
        if let Some(metrics) = call.metrics
            && let Some(rule) = self.rule
        {
            metrics.decided(self.allowed, rule);
        }
        if let Some(audit) = &mut call.audit {
            audit.decision = Some((
                match (self.allowed, self.rule) {
                    (true, None) => "none",
                    (true, Some(_)) => "allow",
                    (false, _) => "refuse",
                },
                self.rule.map(str::to_owned),
            ));
            audit.bytes_in = json_len(self.input);
            if audit.trail.records_inputs() {
                audit.input = Some(audit.trail.scrubbed(self.input));
            }
        }
    }
}

/// What the cache of read-only calls did for a call to a tool whose answers are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CacheLooked {
    /// Answered from a fresh entry; the upstream was not called.
    Hit,
    /// No entry (or a stale one without validators): the upstream answered.
    Miss,
    /// A stale entry the upstream confirmed (HTTP 304).
    Revalidated,
    /// The caller's `Cache-Control` (`no-cache`, `no-store`) passed the cache by.
    Bypassed,
}

impl CacheLooked {
    fn label(self) -> &'static str {
        match self {
            Self::Hit => "hit",
            Self::Miss => "miss",
            Self::Revalidated => "revalidated",
            Self::Bypassed => "bypassed",
        }
    }

    pub(crate) fn emit(self, entry: &Entry, call: &CallEvents<'_>) {
        if let Some(metrics) = call.metrics {
            metrics.cache(entry.adapter.name(), self.label());
        }
        if let Some(span) = &call.span {
            span.cache(self.label());
        }
        if let Some(audit) = &call.audit {
            let _ = audit.cache.set(self.label());
        }
    }
}

/// A rate limit or concurrency cap refused an allowed call (the refusal itself is
/// [`CallRefused`]'s).
#[derive(Debug)]
pub(crate) struct CallLimited<'a> {
    pub(crate) rule: &'a str,
    pub(crate) wait: std::time::Duration,
}

impl CallLimited<'_> {
    pub(crate) fn emit(self, call: &mut CallEvents<'_>) {
        if let Some(audit) = &mut call.audit {
            let wait = u64::try_from(self.wait.as_millis()).unwrap_or(u64::MAX);
            audit.limited = Some((self.rule.to_owned(), wait));
        }
    }
}

/// The call is about to be sent upstream under `call_id` (echoed or generated).
#[derive(Debug)]
pub(crate) struct UpstreamCalled<'a> {
    pub(crate) entry: &'a Entry,
    pub(crate) call_id: &'a str,
}

impl UpstreamCalled<'_> {
    /// Counts the call in flight and starts its upstream span; the returned record says what
    /// trace context to send upstream and is ended by [`UpstreamAnswered`].
    pub(crate) fn emit(self, call: &CallEvents<'_>) -> Upstream {
        let (span, trace_context) = match &call.span {
            Some(span) => {
                span.call_id(self.call_id);
                let (upstream, context) = span.upstream(self.entry);
                (Some(upstream), Some(context))
            }
            None => (None, None),
        };
        Upstream {
            in_flight: call.tool.as_deref().map(ToolMetrics::upstream),
            span,
            trace_context,
        }
    }
}

/// The upstream part of a call in progress.
#[derive(Debug)]
pub(crate) struct Upstream {
    in_flight: Option<InFlight>,
    span: Option<UpstreamSpan>,
    trace_context: Option<TraceContext>,
}

impl Upstream {
    /// The trace context to send upstream (the upstream span as the parent of the upstream's
    /// own), when traces are on; taken once.
    pub(crate) fn trace_context(&mut self) -> Option<TraceContext> {
        self.trace_context.take()
    }
}

/// The upstream answered (`error: None`) or failed.
#[derive(Debug)]
pub(crate) struct UpstreamAnswered<'a> {
    pub(crate) error: Option<&'a AdapterError>,
}

impl UpstreamAnswered<'_> {
    pub(crate) fn emit(self, upstream: Upstream, call: &CallEvents<'_>) {
        if let Some(audit) = &call.audit {
            let _ = audit.upstream.set(answered(self.error));
        }
        drop(upstream.in_flight);
        if let Some(span) = upstream.span {
            span.finish(self.error);
        }
    }
}

/// What the upstream answered, as an audit line says it: `ok`, or the kind of failure, and the
/// HTTP status when it answered with an error status.
fn answered(error: Option<&AdapterError>) -> (&'static str, Option<u16>) {
    let kind = match error {
        None => return ("ok", None),
        Some(AdapterError::UpstreamStatus { status, .. }) => return ("http_error", Some(*status)),
        Some(AdapterError::Unavailable { .. }) => "unavailable",
        Some(AdapterError::Unreachable { .. }) => "unreachable",
        Some(AdapterError::Timeout { .. }) => "timeout",
        Some(AdapterError::ConnectionLost { .. }) => "connection_lost",
        Some(AdapterError::ChildExited { .. }) => "child_exited",
        Some(AdapterError::ToolFailed { .. }) => "tool_failed",
        Some(AdapterError::InvalidArguments { .. }) => "invalid_arguments",
        Some(AdapterError::BadInput { .. }) => "bad_input",
        Some(AdapterError::ResponseTooLarge { .. }) => "too_large",
        Some(AdapterError::AuthorizationRequired { .. }) => "authorization_required",
        Some(_) => "failed",
    };
    (kind, None)
}

/// The call reached its tool: a value, or a tool error (`failed`) with its cause chain when it
/// was not a replay.
#[derive(Debug)]
pub(crate) struct CallFinished<'a> {
    /// The tool as the caller named it.
    pub(crate) requested: &'a str,
    pub(crate) failed: bool,
    pub(crate) cause: Option<&'a str>,
    /// The answer (for the audit trail's call id and size).
    pub(crate) response: &'a otc_mappings::otc::CallToolResponse,
}

impl CallFinished<'_> {
    pub(crate) fn emit(self, call: CallEvents<'_>) {
        let outcome = if self.failed {
            Outcome::ToolError
        } else {
            Outcome::Success
        };
        let elapsed = call.started.elapsed();
        if let Some(tool) = &call.tool {
            tool.finished(outcome, elapsed);
        }
        if let Some(audit) = call.audit {
            let closed = Closed {
                outcome: if self.failed { "tool_error" } else { "success" },
                status: None,
                call_id: Some(&self.response.call_id),
                bytes_out: match &self.response.outcome {
                    otc_mappings::otc::CallOutcome::Value(value) => json_len(value),
                    otc_mappings::otc::CallOutcome::Json(json) => json.get().len(),
                    otc_mappings::otc::CallOutcome::Error(error) => json_len(error),
                },
            };
            audit.record(
                call.edge,
                self.requested,
                &closed,
                elapsed.as_secs_f64() * 1000.0,
            );
        }
        if let Some(span) = call.span {
            span.finish(outcome);
        }
        if call.edge == Edge::Mcp {
            let ms = elapsed.as_secs_f64() * 1000.0;
            let tool = echo(self.requested);
            if self.failed {
                let cause = self.cause.unwrap_or_default();
                tracing::info!(target: MCP_TARGET, %tool, ms, cause, "MCP call failed in the tool");
            } else {
                tracing::info!(target: MCP_TARGET, %tool, ms, "MCP call succeeded");
            }
        }
    }
}

/// The call was refused before its tool answered: unknown tool, invalid input, a source that
/// is down, a repeat that cannot be served.
#[derive(Debug)]
pub(crate) struct CallRefused<'a> {
    /// The tool as the caller named it.
    pub(crate) requested: &'a str,
    pub(crate) refusal: &'a Refusal,
}

impl CallRefused<'_> {
    pub(crate) fn emit(self, call: CallEvents<'_>) {
        let status = self.refusal.status.as_u16();
        let elapsed = call.started.elapsed();
        if let Some(metrics) = call.metrics {
            metrics.refused(call.tool.as_deref(), status, elapsed);
        }
        if let Some(audit) = call.audit {
            let closed = Closed {
                outcome: "refused",
                status: Some(status),
                call_id: None,
                bytes_out: self.refusal.message.len(),
            };
            audit.record(
                call.edge,
                self.requested,
                &closed,
                elapsed.as_secs_f64() * 1000.0,
            );
        }
        if let Some(span) = call.span {
            span.finish(Outcome::Refused(status));
        }
        if call.edge == Edge::Mcp {
            let ms = elapsed.as_secs_f64() * 1000.0;
            let tool = echo(self.requested);
            let detail = self.refusal.log.as_deref().unwrap_or_default();
            tracing::info!(target: MCP_TARGET, %tool, ms, status, detail, "MCP call refused");
        }
    }
}

/// A call refused by server authentication, before it was read: counted with no source or tool.
/// Its log line is the HTTP request line.
#[derive(Debug)]
pub(crate) struct CallUnauthenticated;

impl CallUnauthenticated {
    pub(crate) fn emit(self, telemetry: &Telemetry) {
        if let Some(metrics) = &telemetry.metrics {
            metrics.unauthorized();
        }
    }
}

/// An edge listed the tools (`GET /tools`, MCP `tools/list`).
#[derive(Debug)]
pub(crate) struct ToolsListed {
    pub(crate) edge: Edge,
}

impl ToolsListed {
    pub(crate) fn emit(self, telemetry: &Telemetry) {
        if let Some(metrics) = &telemetry.metrics {
            metrics.list(self.edge.label());
        }
    }
}

/// An MCP host called `search_tools`.
#[derive(Debug)]
pub(crate) struct ToolsSearched;

impl ToolsSearched {
    pub(crate) fn emit(self, telemetry: &Telemetry) {
        if let Some(metrics) = &telemetry.metrics {
            metrics.search();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn an_upstream_answer_is_named_for_the_audit_line() {
        assert_eq!(answered(None), ("ok", None));
        let status = AdapterError::UpstreamStatus {
            status: 503,
            retry_after: None,
            body: None,
        };
        assert_eq!(answered(Some(&status)), ("http_error", Some(503)));
        let timeout = AdapterError::Timeout {
            elapsed: Duration::from_secs(1),
        };
        assert_eq!(answered(Some(&timeout)), ("timeout", None));
    }
}
