//! `GET /metrics` (issue 13, DESIGN §11): what a dashboard needs, in the Prometheus text format,
//! through the `prometheus` crate.
//!
//! | metric | labels | what |
//! |---|---|---|
//! | `otc_bridge_calls_total` | `source`, `tool`, `outcome` | calls by outcome: `success`, `tool_error`, or the refusal's status (`400`, `401`, `422`, …) |
//! | `otc_bridge_call_duration_seconds` | `source` | whole call, as the caller waits for it |
//! | `otc_bridge_upstream_duration_seconds` | `source` | the upstream's part |
//! | `otc_bridge_calls_in_flight` | `source` | calls waiting for their upstream |
//! | `otc_bridge_source_up` | `source` | 1 when ready, else 0 |
//! | `otc_bridge_source_restarts_total` | `source` | upstream restarts (MCP children and sessions) |
//! | `otc_bridge_catalog_tools` | `source` | tools served |
//! | `otc_bridge_list_requests_total` | `edge` | tool lists (`otc`: `GET /tools`; `mcp`: `tools/list`) |
//! | `otc_bridge_search_requests_total` | | MCP `search_tools` calls |
//!
//! Cardinality is bounded by the catalog: `tool` takes only ids the catalog serves (a refusal
//! before a tool is resolved has `tool=""`), and `metrics: {tool_label: false}` drops it for
//! catalogs of thousands. Source gauges are read from the catalog when scraped, not kept.

use std::time::Duration;

use prometheus::{
    Encoder as _, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGaugeVec, Opts,
    Registry, TextEncoder,
};

use crate::catalog::registry::Catalog;

/// Seconds: from a fast local tool to the default call timeout.
const BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
    60.0,
];

/// How a call ended, as counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A value.
    Success,
    /// The tool ran and failed (`success: false`).
    ToolError,
    /// Refused with this HTTP status before reaching the tool.
    Refused(u16),
}

impl Outcome {
    fn label(self) -> std::borrow::Cow<'static, str> {
        match self {
            Self::Success => "success".into(),
            Self::ToolError => "tool_error".into(),
            Self::Refused(status) => status.to_string().into(),
        }
    }
}

/// The bridge's metrics.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    calls: IntCounterVec,
    call_seconds: HistogramVec,
    upstream_seconds: HistogramVec,
    in_flight: IntGaugeVec,
    source_up: IntGaugeVec,
    restarts: IntCounterVec,
    catalog_tools: IntGaugeVec,
    lists: IntCounterVec,
    searches: IntCounter,
    tool_label: bool,
}

/// A call's upstream part, counted in flight until dropped.
#[derive(Debug)]
pub struct InFlight {
    in_flight: prometheus::IntGauge,
    seconds: prometheus::Histogram,
    started: std::time::Instant,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.in_flight.dec();
        self.seconds.observe(self.started.elapsed().as_secs_f64());
    }
}

impl Metrics {
    /// Registers every metric; `tool_label: false` leaves the `tool` label empty.
    pub fn new(tool_label: bool) -> Self {
        let registry = Registry::new();
        let counter = |name: &str, help: &str, labels: &[&str]| {
            let metric = IntCounterVec::new(Opts::new(name, help), labels)
                .unwrap_or_else(|e| unreachable!("metric {name}: {e}"));
            let _ = registry.register(Box::new(metric.clone()));
            metric
        };
        let gauge = |name: &str, help: &str, labels: &[&str]| {
            let metric = IntGaugeVec::new(Opts::new(name, help), labels)
                .unwrap_or_else(|e| unreachable!("metric {name}: {e}"));
            let _ = registry.register(Box::new(metric.clone()));
            metric
        };
        let histogram = |name: &str, help: &str| {
            let opts = HistogramOpts::new(name, help).buckets(BUCKETS.to_vec());
            let metric = HistogramVec::new(opts, &["source"])
                .unwrap_or_else(|e| unreachable!("metric {name}: {e}"));
            let _ = registry.register(Box::new(metric.clone()));
            metric
        };
        let calls = counter(
            "otc_bridge_calls_total",
            "Tool calls by source, tool and outcome (success, tool_error, or the refusal's HTTP status).",
            &["source", "tool", "outcome"],
        );
        let call_seconds = histogram(
            "otc_bridge_call_duration_seconds",
            "Time from a call's arrival to its answer.",
        );
        let upstream_seconds = histogram(
            "otc_bridge_upstream_duration_seconds",
            "Time spent waiting for the upstream.",
        );
        let in_flight = gauge(
            "otc_bridge_calls_in_flight",
            "Calls waiting for their upstream.",
            &["source"],
        );
        let source_up = gauge(
            "otc_bridge_source_up",
            "1 when the source is ready, else 0.",
            &["source"],
        );
        let restarts = counter(
            "otc_bridge_source_restarts_total",
            "Times the source's upstream was restarted or reconnected.",
            &["source"],
        );
        let catalog_tools = gauge(
            "otc_bridge_catalog_tools",
            "Tools served, by source.",
            &["source"],
        );
        let lists = counter(
            "otc_bridge_list_requests_total",
            "Tool list requests (otc: GET /tools, mcp: tools/list).",
            &["edge"],
        );
        let searches = IntCounter::new(
            "otc_bridge_search_requests_total",
            "MCP search_tools calls.",
        )
        .unwrap_or_else(|e| unreachable!("metric: {e}"));
        let _ = registry.register(Box::new(searches.clone()));
        Self {
            registry,
            calls,
            call_seconds,
            upstream_seconds,
            in_flight,
            source_up,
            restarts,
            catalog_tools,
            lists,
            searches,
            tool_label,
        }
    }

    /// Counts a finished call. `source` and `tool` are empty when it was refused before its
    /// tool was known.
    pub fn call(&self, source: &str, tool: &str, outcome: Outcome, elapsed: Duration) {
        let tool = if self.tool_label { tool } else { "" };
        self.calls
            .with_label_values(&[source, tool, outcome.label().as_ref()])
            .inc();
        self.call_seconds
            .with_label_values(&[source])
            .observe(elapsed.as_secs_f64());
    }

    /// Counts a call refused by server authentication (401): no source or tool is known.
    pub fn unauthorized(&self) {
        self.calls
            .with_label_values(&["", "", Outcome::Refused(401).label().as_ref()])
            .inc();
    }

    /// Starts the upstream part of a call to `source`.
    pub fn upstream(&self, source: &str) -> InFlight {
        let in_flight = self.in_flight.with_label_values(&[source]);
        in_flight.inc();
        InFlight {
            in_flight,
            seconds: self.upstream_seconds.with_label_values(&[source]),
            started: std::time::Instant::now(),
        }
    }

    /// Counts a tool list on `edge` (`otc` or `mcp`).
    pub fn list(&self, edge: &str) {
        self.lists.with_label_values(&[edge]).inc();
    }

    /// Counts an MCP `search_tools` call.
    pub fn search(&self) {
        self.searches.inc();
    }

    /// The text exposition, with the sources' state read from `catalog` now.
    pub fn render(&self, catalog: &Catalog) -> String {
        self.source_up.reset();
        self.catalog_tools.reset();
        for source in catalog.sources() {
            let name = source.adapter.name();
            self.source_up
                .with_label_values(&[name])
                .set(i64::from(source.adapter.state().is_ready()));
            self.catalog_tools
                .with_label_values(&[name])
                .set(i64::try_from(source.entries.len()).unwrap_or(i64::MAX));
            let restarts = self.restarts.with_label_values(&[name]);
            let seen = restarts.get();
            let now = source.adapter.restarts();
            if now > seen {
                restarts.inc_by(now - seen);
            }
        }
        for failed in catalog.failed() {
            self.source_up
                .with_label_values(&[failed.name.as_str()])
                .set(0);
            self.catalog_tools
                .with_label_values(&[failed.name.as_str()])
                .set(0);
        }
        let mut out = Vec::new();
        // Encoding into memory cannot fail but for a metric the registry itself rejected.
        let _ = TextEncoder::new().encode(&self.registry.gather(), &mut out);
        String::from_utf8(out).unwrap_or_default()
    }
}

/// The content type of [`Metrics::render`].
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";
