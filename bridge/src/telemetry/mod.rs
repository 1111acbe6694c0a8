//! How the bridge is observed: [`metrics`] (Prometheus counters and histograms, `GET /metrics`)
//! and [`traces`] (OpenTelemetry spans over OTLP). Both are fed by the call pipeline
//! ([`crate::call`]); the edges only render them.

pub mod metrics;
pub mod traces;
