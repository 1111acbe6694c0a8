//! OpenTelemetry traces, exported over OTLP when the standard environment variables ask for
//! them (issue 13, DESIGN.md §11): one `otc.call` span per call and one `otc.upstream` child
//! span around the adapter's call, with the trace context carried from the caller to the
//! upstream.
//!
//! **Off unless configured, and then free.** [`Traces::from_env`] returns `None` unless
//! `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set. The
//! [`super::Telemetry`] handle then holds `None`: no header is read, no span is built, no
//! context is propagated, and a call allocates nothing it did not allocate before.
//!
//! **Why the OpenTelemetry API directly, not `tracing-opentelemetry`** (reconsidered when the
//! call's telemetry became [`super::events`]). That layer exports `tracing` spans, so a call
//! would need a `tracing` span at `info` (the default level), built and entered per call: the
//! request span cost about 7 µs of CPU per call when it was one (issue 23, 2.9), more than the
//! rest of a call's telemetry together, and the layer would sit in the subscriber of every log
//! line and export every other span of the process (rmcp's sessions). The bridge exports exactly
//! two spans per call whose attributes (tool version, outcome) are set by the events that know
//! them; with the API those events write them directly, at no cost when traces are off (an
//! `Option`, not a filter), and the upstream's context is injected from the same `Context`.
//!
//! **Propagation** is the W3C Trace Context propagator of the OpenTelemetry SDK, never hand
//! parsing. The parent of `otc.call` is the caller's `traceparent` (an HTTP header on
//! `POST /tools/call` and `POST /mcp`, or `_meta.traceparent` of an MCP `tools/call`), else the
//! request's `trace_id` when it is a W3C `traceparent`, else none (a new trace). The upstream
//! span's context is handed to the adapter as plain text ([`TraceContext`]), so adapters need
//! no tracing library: OpenAPI upstreams get `traceparent`/`tracestate` headers, MCP upstreams
//! get them in `_meta` (SEP-414).
//!
//! The exporter is OTLP over HTTP/protobuf (port 4318, path `/v1/traces`) behind the SDK's
//! batch span processor, which exports from its own thread; [`Traces::shutdown`] flushes what
//! is queued. Endpoint, headers, timeout, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES` and
//! the `OTEL_BSP_*` settings are read by the SDK as the specification says.

use std::time::SystemTime;

use axum::http::HeaderMap;
use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator as _};
use opentelemetry::trace::{
    SpanKind, Status, TraceContextExt as _, Tracer as _, TracerProvider as _,
};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use otc_adapters::TraceContext;
use otc_mappings::Target;

use crate::catalog::registry::Entry;
use crate::telemetry::metrics::Outcome;

/// The service name when neither `OTEL_SERVICE_NAME` nor `OTEL_RESOURCE_ATTRIBUTES` names one.
const SERVICE_NAME: &str = "otc-bridge";

/// The environment variables that turn traces on: either endpoint.
const ENDPOINT_VARS: [&str; 2] = [
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
];

/// Why traces could not be set up (a start-up error: the operator asked for them).
#[derive(Debug, thiserror::Error)]
#[error("cannot export traces over OTLP: {0}")]
pub struct TracesError(String);

/// The trace exporter and the tracer that makes the bridge's spans.
#[derive(Debug)]
pub struct Traces {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
    propagator: TraceContextPropagator,
}

impl Traces {
    /// Traces as the standard environment variables configure them; `None` (off) unless an
    /// OTLP endpoint is set, or when `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`.
    pub fn from_env() -> Result<Option<Self>, TracesError> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        if !ENDPOINT_VARS.iter().any(|name| var(name).is_some())
            || var("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
            || var("OTEL_TRACES_EXPORTER").is_some_and(|v| v.trim().eq_ignore_ascii_case("none"))
        {
            return Ok(None);
        }
        for name in [
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
            "OTEL_EXPORTER_OTLP_PROTOCOL",
        ] {
            if let Some(protocol) = var(name) {
                if protocol.trim() != "http/protobuf" {
                    tracing::warn!(
                        "{name}={protocol:?} is not supported: traces are exported over OTLP \
                         http/protobuf (usually port 4318)."
                    );
                }
                break;
            }
        }
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .build()
            .map_err(|e| TracesError(e.to_string()))?;
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource())
            .build();
        let tracer = provider.tracer("otc-bridge");
        Ok(Some(Self {
            provider,
            tracer,
            propagator: TraceContextPropagator::new(),
        }))
    }

    /// Exports what is queued and stops the exporter. Blocks (up to the export timeout).
    pub fn shutdown(&self) {
        if let Err(error) = self.provider.shutdown() {
            tracing::warn!(%error, "Traces were not all exported.");
        }
    }

    /// Starts the span of one call, the child of the caller's trace context when it sent one
    /// (`incoming`), else of its `trace_id` when that is a W3C `traceparent`.
    pub(crate) fn start_call(
        &self,
        incoming: Option<&TraceContext>,
        trace_id: Option<&str>,
    ) -> CallSpan<'_> {
        let parent = [
            incoming.map(|c| {
                let tracestate = c.tracestate.as_deref().filter(|s| is_w3c_tracestate(s));
                (c.traceparent.as_str(), tracestate)
            }),
            trace_id.map(|id| (id, None)),
        ]
        .into_iter()
        .flatten()
        .map(|(traceparent, tracestate)| {
            self.propagator.extract(&Fields {
                traceparent,
                tracestate,
            })
        })
        .find(|cx| cx.span().span_context().is_valid())
        .unwrap_or_default();
        let span = self
            .tracer
            .span_builder("otc.call")
            .with_kind(SpanKind::Server)
            .start_with_context(&self.tracer, &parent);
        CallSpan {
            traces: self,
            cx: parent.with_span(span),
        }
    }
}

/// The `service.name` the SDK detects from the environment, else [`SERVICE_NAME`] (the SDK's
/// own fallback is `unknown_service`).
pub(crate) fn resource() -> Resource {
    let detected = Resource::builder().build();
    let named = detected
        .get(&opentelemetry::Key::from_static_str("service.name"))
        .is_some_and(|name| !name.as_str().starts_with("unknown_service"));
    if named {
        detected
    } else {
        Resource::builder().with_service_name(SERVICE_NAME).build()
    }
}

/// The `otc.call` span of a call in progress.
#[derive(Debug)]
pub(crate) struct CallSpan<'t> {
    traces: &'t Traces,
    /// The caller's context with this span in it: the parent of the upstream span.
    cx: Context,
}

impl CallSpan<'_> {
    /// Names the tool the call resolved to.
    pub(crate) fn tool(&self, entry: &Entry) {
        let definition = entry.definition();
        self.cx.span().set_attributes([
            KeyValue::new("otc.tool.id", definition.id.to_string()),
            KeyValue::new("otc.tool.version", definition.version.to_string()),
            KeyValue::new("otc.source", entry.adapter.name().to_owned()),
        ]);
    }

    /// Records what the cache of read-only calls did (`hit`, `miss`, `revalidated`,
    /// `bypassed`).
    pub(crate) fn cache(&self, outcome: &'static str) {
        self.cx
            .span()
            .set_attribute(KeyValue::new("otc.cache", outcome));
    }

    /// Records the call's id (echoed or generated), cut like every echo of caller text: the
    /// export queue holds each span whole until the collector takes it, so a caller's 400 KB
    /// `call_id` would otherwise grow memory with every call a slow collector has not taken.
    pub(crate) fn call_id(&self, call_id: &str) {
        self.cx
            .span()
            .set_attribute(KeyValue::new("otc.call_id", crate::rescue::echo(call_id)));
    }

    /// Starts the `otc.upstream` child span for the adapter call to `entry`'s source, and the
    /// trace context to send upstream (this child as the parent of the upstream's span).
    pub(crate) fn upstream(&self, entry: &Entry) -> (UpstreamSpan, TraceContext) {
        let kind = match entry.tool.target {
            Target::Http(_) => "openapi",
            Target::Named { .. } | Target::Mcp { .. } => "mcp",
        };
        let tracer = &self.traces.tracer;
        let span = tracer
            .span_builder("otc.upstream")
            .with_kind(SpanKind::Client)
            .with_attributes([
                KeyValue::new("otc.source", entry.adapter.name().to_owned()),
                KeyValue::new("otc.upstream.kind", kind),
            ])
            .start_with_context(tracer, &self.cx);
        let cx = self.cx.with_span(span);
        let mut carrier = TraceContext::default();
        self.traces
            .propagator
            .inject_context(&cx, &mut Carrier(&mut carrier));
        (UpstreamSpan { cx }, carrier)
    }

    /// Ends the span with the call's outcome.
    pub(crate) fn finish(self, outcome: Outcome) {
        let span = self.cx.span();
        match outcome {
            Outcome::Success => span.set_attribute(KeyValue::new("otc.outcome", "success")),
            Outcome::ToolError => {
                span.set_attribute(KeyValue::new("otc.outcome", "tool_error"));
                span.set_status(Status::error("tool_error"));
            }
            Outcome::Refused(status) => {
                span.set_attributes([
                    KeyValue::new("otc.outcome", "refused"),
                    KeyValue::new("otc.refusal.status", i64::from(status)),
                ]);
                // A refusal is the caller's mistake, unless the bridge could not serve it.
                if status >= 500 {
                    span.set_status(Status::error("refused"));
                }
            }
        }
        span.end_with_timestamp(SystemTime::now());
    }
}

/// The `otc.upstream` span of an adapter call in progress.
#[derive(Debug)]
pub(crate) struct UpstreamSpan {
    cx: Context,
}

impl UpstreamSpan {
    /// Ends the span; `error` is why the adapter call failed, if it did.
    pub(crate) fn finish(self, error: Option<&otc_adapters::AdapterError>) {
        let span = self.cx.span();
        if let Some(error) = error {
            span.set_status(Status::error(error.to_string()));
        }
        span.end();
    }
}

/// The caller's trace context in HTTP headers (`traceparent`, `tracestate`), as text; read only
/// when traces are on. Validity is the propagator's business, in [`Traces::start_call`].
pub(crate) fn from_headers(headers: &HeaderMap) -> Option<TraceContext> {
    let text = |name| headers.get(name).and_then(|v| v.to_str().ok());
    Some(TraceContext {
        traceparent: text("traceparent")?.to_owned(),
        tracestate: text("tracestate").map(str::to_owned),
    })
}

/// Whether `tracestate` keeps to W3C's characters (printable ASCII, at most 512 of them). The
/// propagator checks keys and refuses `,` and `=` in values, but lets control characters through,
/// and the state is passed on to upstreams: a CR/LF from MCP `_meta` would reach them verbatim.
/// A state outside the set is dropped whole (the caller's `traceparent` still counts).
fn is_w3c_tracestate(tracestate: &str) -> bool {
    tracestate.len() <= 512
        && tracestate
            .bytes()
            .all(|b| (0x20..=0x7e).contains(&b) || b == b'\t')
}

/// A caller's trace context, as the propagator reads it.
struct Fields<'a> {
    traceparent: &'a str,
    tracestate: Option<&'a str>,
}

impl Extractor for Fields<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        match key {
            "traceparent" => Some(self.traceparent),
            "tracestate" => self.tracestate,
            _ => None,
        }
    }

    fn keys(&self) -> Vec<&str> {
        vec!["traceparent", "tracestate"]
    }
}

/// Where the propagator writes the upstream's trace context: the adapters' plain type (a
/// newtype, since neither the trait nor the type is this crate's).
struct Carrier<'a>(&'a mut TraceContext);

impl Injector for Carrier<'_> {
    fn set(&mut self, key: &str, value: String) {
        match key {
            "traceparent" => self.0.traceparent = value,
            "tracestate" if !value.is_empty() => self.0.tracestate = Some(value),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CALLER: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const CALLER_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";

    fn traces() -> Traces {
        let provider = SdkTracerProvider::builder().build();
        let tracer = provider.tracer("test");
        Traces {
            provider,
            tracer,
            propagator: TraceContextPropagator::new(),
        }
    }

    fn trace_id(span: &CallSpan<'_>) -> String {
        span.cx.span().span_context().trace_id().to_string()
    }

    #[test]
    fn caller_header_is_the_parent() {
        let traces = traces();
        let incoming = TraceContext {
            traceparent: CALLER.to_owned(),
            tracestate: Some("vendor=1".to_owned()),
        };
        let span = traces.start_call(Some(&incoming), Some("not-w3c"));
        assert_eq!(trace_id(&span), CALLER_TRACE);
    }

    #[test]
    fn w3c_trace_id_is_the_parent_when_the_header_is_not() {
        let traces = traces();
        let bad = TraceContext {
            traceparent: "garbage".to_owned(),
            tracestate: None,
        };
        let span = traces.start_call(Some(&bad), Some(CALLER));
        assert_eq!(trace_id(&span), CALLER_TRACE);
    }

    #[test]
    fn other_trace_ids_start_a_new_trace() {
        let traces = traces();
        let span = traces.start_call(None, Some("req-42"));
        assert!(span.cx.span().span_context().is_valid());
        assert_ne!(trace_id(&span), CALLER_TRACE);
    }

    #[test]
    fn headers_are_read_as_text() {
        let mut headers = HeaderMap::new();
        assert_eq!(from_headers(&headers), None);
        headers.insert("traceparent", CALLER.parse().unwrap());
        headers.insert("tracestate", "a=b".parse().unwrap());
        let context = from_headers(&headers).unwrap();
        assert_eq!(context.traceparent, CALLER);
        assert_eq!(context.tracestate.as_deref(), Some("a=b"));
    }

    #[test]
    fn injected_context_names_the_span_and_keeps_tracestate() {
        let traces = traces();
        let incoming = TraceContext {
            traceparent: CALLER.to_owned(),
            tracestate: Some("vendor=1".to_owned()),
        };
        let span = traces.start_call(Some(&incoming), None);
        let mut carrier = TraceContext::default();
        traces
            .propagator
            .inject_context(&span.cx, &mut Carrier(&mut carrier));
        let span_id = span.cx.span().span_context().span_id().to_string();
        assert_eq!(
            carrier.traceparent,
            format!("00-{CALLER_TRACE}-{span_id}-01")
        );
        assert_eq!(carrier.tracestate.as_deref(), Some("vendor=1"));
    }
}
