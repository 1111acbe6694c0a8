//! How the bridge is observed: [`metrics`] (Prometheus counters and histograms, `GET /metrics`)
//! and [`traces`] (OpenTelemetry spans over OTLP), fed by typed [`events`].
//!
//! **One place writes.** A call's telemetry is a handful of events ([`events::CallFinished`],
//! [`events::CallRefused`], …), emitted by [`crate::call`] alone; each event's `emit` writes its
//! log line, its metrics and its span fields together (vector's `internal_events`), so what a
//! dashboard counts and what the log says cannot drift apart. Edges (the OTC routes, the MCP
//! edge, stdio) hold a [`Telemetry`] only to hand it to the call and to count their own
//! requests (lists, searches); they render replies and write nothing about calls.
//!
//! What this module may import: the catalog (an event names its tool) and `rescue` (a refusal
//! is what an event reports); never an edge.

pub(crate) mod audit;
pub(crate) mod events;
pub(crate) mod metrics;
pub(crate) mod traces;

use std::sync::Arc;

/// Where the bridge's telemetry goes: the metrics and the trace exporter, each `None` when off.
/// Built once with the server's settings and shared by every edge; cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Telemetry {
    /// Where calls, lists and searches are counted (`GET /metrics`); `None` when metrics are off.
    pub metrics: Option<Arc<metrics::Metrics>>,
    /// Where calls are traced (OTLP); `None` when traces are off, the default.
    pub traces: Option<Arc<traces::Traces>>,
    /// Where each decided call is recorded (`audit:`); `None` when off, the default.
    pub audit: Option<Arc<audit::AuditTrail>>,
}
