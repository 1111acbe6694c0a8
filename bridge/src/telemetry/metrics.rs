//! `GET /metrics` (issue 13, DESIGN §11): what a dashboard needs, in the Prometheus text format,
//! through the `prometheus` crate.
//!
//! | metric | labels | what |
//! |---|---|---|
//! | `otc_bridge_calls_total` | `source`, `toolkit`, `tool`, `outcome` | calls by outcome: `success`, `tool_error`, or the refusal's status (`400`, `401`, `422`, …) |
//! | `otc_bridge_call_duration_seconds` | `source`, `toolkit` | whole call, as the caller waits for it |
//! | `otc_bridge_upstream_duration_seconds` | `source` | the upstream's part |
//! | `otc_bridge_calls_in_flight` | `source` | calls waiting for their upstream |
//! | `otc_bridge_source_up` | `source` | 1 when ready, else 0 |
//! | `otc_bridge_source_restarts_total` | `source` | upstream restarts (MCP children and sessions) |
//! | `otc_bridge_catalog_tools` | `source` | tools served |
//! | `otc_bridge_list_requests_total` | `edge` | tool lists (`otc`: `GET /tools`; `mcp`: `tools/list`) |
//! | `otc_bridge_search_requests_total` | | MCP `search_tools` calls |
//! | `otc_bridge_cache_lookups_total` | `source`, `outcome` | calls to tools whose answers are kept: `hit`, `miss`, `revalidated` (a 304), `bypassed` (the caller's `Cache-Control`) |
//!
//! Cardinality is bounded by the catalog: `tool` takes only ids the catalog serves (a refusal
//! before a tool is resolved has `tool=""`), and `metrics: {tool_label: false}` drops it for
//! catalogs of thousands. Source gauges are read from the catalog when scraped, not kept.
//!
//! **Why `toolkit` beside `source`.** They are not the same thing: a source's name is its
//! configuration key (`github-rest`), its toolkit the first segment of its tool ids (`Github`),
//! and several sources may serve one toolkit (the REST API and the MCP server of one product,
//! or two versions of one API side by side, each from its own document). What people ask of
//! health is per toolkit, the name they call tools by; what operators restart is a source. The
//! label costs a call nothing: it is part of the label set looked up once per catalog entry,
//! and adds no series, as an entry has one toolkit and one source.
//!
//! Calls are counted by [`crate::telemetry::events`], never by an edge. A call's label values
//! are looked up once per catalog entry ([`Metrics::tool`]) and kept, so counting a call formats
//! no tool id and hashes no label strings.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, RwLock, Weak};
use std::time::{Duration, Instant};

use prometheus::{
    Encoder as _, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGaugeVec, Opts,
    Registry, TextEncoder,
};

use crate::catalog::registry::{Catalog, Entry};

/// Seconds: from a fast local tool to the default call timeout.
const BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
    60.0,
];

/// How a call ended, as counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// A value.
    Success,
    /// The tool ran and failed (`success: false`).
    ToolError,
    /// Refused with this HTTP status before reaching the tool.
    Refused(u16),
}

/// The `outcome` label of a refusal: its status's three digits, without formatting one.
fn refused_label(status: u16, with: impl FnOnce(&str)) {
    match http::StatusCode::from_u16(status) {
        Ok(status) => with(status.as_str()),
        Err(_) => with(&status.to_string()),
    }
}

/// A toolkit's calls as the catalog page shows them ([`Metrics::recent_calls`]).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RecentCalls {
    /// Calls counted.
    pub(crate) calls: u64,
    /// Of which did not end with a value.
    pub(crate) errors: u64,
    /// The median duration's bucket bound, in seconds (`None`: no call, or past the last bucket).
    pub(crate) p50: Option<f64>,
    /// The 99th percentile's bucket bound, in seconds.
    pub(crate) p99: Option<f64>,
    /// Calls per second over the time counted.
    pub(crate) per_second: f64,
}

/// Every toolkit's calls over the last minutes ([`Metrics::recent_calls`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct Recent {
    /// The time counted: [`WINDOW`], or since start on a younger bridge.
    pub(crate) over: Duration,
    toolkits: HashMap<String, RecentCalls>,
}

impl Recent {
    /// One toolkit's calls (none counted: zero).
    pub(crate) fn toolkit(&self, toolkit: &str) -> RecentCalls {
        self.toolkits.get(toolkit).copied().unwrap_or_default()
    }
}

/// How far back the catalog page's figures reach.
pub(crate) const WINDOW: Duration = Duration::from_secs(300);
/// How often the counters are sampled for it.
pub(crate) const SAMPLE_EVERY: Duration = Duration::from_secs(15);

/// One toolkit's counters at one moment.
#[derive(Debug, Clone, Default)]
struct Counts {
    calls: u64,
    errors: u64,
    /// The duration histogram's (upper bound, cumulative count) pairs.
    buckets: Vec<(f64, u64)>,
}

/// Snapshots of every toolkit's counters, oldest first, reaching back at most [`WINDOW`].
type Snapshots = std::collections::VecDeque<(Instant, HashMap<String, Counts>)>;

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
    decisions: IntCounterVec,
    cache: IntCounterVec,
    tool_label: bool,
    tools: RwLock<ToolCache>,
    /// What the catalog page's figures are differences of ([`Metrics::sample`]).
    recent: Mutex<Snapshots>,
}

/// The label sets of the catalog entries called so far, by the entry's address. The `Weak` keeps
/// that address from being reused while the slot exists (an `Arc`'s allocation outlives its
/// weak references), so a live entry at the address is the entry the slot was made for. Slots
/// of entries a reload dropped are swept when the cache has doubled since the last sweep.
#[derive(Debug, Default)]
struct ToolCache {
    slots: HashMap<usize, (Weak<Entry>, Arc<ToolMetrics>)>,
    sweep_at: usize,
}

/// One catalog entry's metrics, its label values looked up once.
#[derive(Debug)]
pub(crate) struct ToolMetrics {
    source: Box<str>,
    toolkit: Box<str>,
    /// The tool id, or empty when `tool_label` is off.
    tool: Box<str>,
    success: IntCounter,
    tool_error: IntCounter,
    call_seconds: prometheus::Histogram,
    upstream_seconds: prometheus::Histogram,
    in_flight: prometheus::IntGauge,
}

impl ToolMetrics {
    /// Starts the upstream part of a call to this tool.
    pub(crate) fn upstream(&self) -> InFlight {
        self.in_flight.inc();
        InFlight {
            in_flight: self.in_flight.clone(),
            seconds: self.upstream_seconds.clone(),
            started: std::time::Instant::now(),
        }
    }

    /// Counts a call that reached its tool: a value, or a tool error.
    pub(crate) fn finished(&self, outcome: Outcome, elapsed: Duration) {
        match outcome {
            Outcome::Success => self.success.inc(),
            Outcome::ToolError => self.tool_error.inc(),
            Outcome::Refused(_) => {}
        }
        self.call_seconds.observe(elapsed.as_secs_f64());
    }
}

/// A call's upstream part, counted in flight until dropped.
#[derive(Debug)]
pub(crate) struct InFlight {
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
        let histogram = |name: &str, help: &str, labels: &[&str]| {
            let opts = HistogramOpts::new(name, help).buckets(BUCKETS.to_vec());
            let metric = HistogramVec::new(opts, labels)
                .unwrap_or_else(|e| unreachable!("metric {name}: {e}"));
            let _ = registry.register(Box::new(metric.clone()));
            metric
        };
        let calls = counter(
            "otc_bridge_calls_total",
            "Tool calls by source, toolkit, tool and outcome (success, tool_error, or the refusal's HTTP status).",
            &["source", "toolkit", "tool", "outcome"],
        );
        let call_seconds = histogram(
            "otc_bridge_call_duration_seconds",
            "Time from a call's arrival to its answer.",
            &["source", "toolkit"],
        );
        let upstream_seconds = histogram(
            "otc_bridge_upstream_duration_seconds",
            "Time spent waiting for the upstream.",
            &["source"],
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
        // Labelled by the rule's name (or position): as many label sets as rules, at most.
        let decisions = counter(
            "otc_bridge_policy_decisions_total",
            "Calls decided by a policy rule, by effect (allow, refuse) and rule.",
            &["effect", "rule"],
        );
        let cache = counter(
            "otc_bridge_cache_lookups_total",
            "Calls to tools whose answers are kept, by what the cache did (hit, miss, revalidated, bypassed).",
            &["source", "outcome"],
        );
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
            decisions,
            cache,
            tool_label,
            tools: RwLock::default(),
            // Zero at start: a bridge younger than the window counts since start.
            recent: Mutex::new(Snapshots::from([(Instant::now(), HashMap::new())])),
        }
    }

    /// The metrics of calls to `entry`: looked up in the cache, or labelled once and kept.
    pub(crate) fn tool(&self, entry: &Arc<Entry>) -> Arc<ToolMetrics> {
        let key = Arc::as_ptr(entry) as usize;
        let cached = self.tools.read().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, tool)) = cached.slots.get(&key) {
            return Arc::clone(tool);
        }
        drop(cached);
        let source = entry.adapter.name();
        let toolkit = entry.definition().id.toolkit.as_str();
        let tool = if self.tool_label {
            entry.definition().id.to_string()
        } else {
            String::new()
        };
        let labelled = Arc::new(ToolMetrics {
            success: self
                .calls
                .with_label_values(&[source, toolkit, tool.as_str(), "success"]),
            tool_error: self.calls.with_label_values(&[
                source,
                toolkit,
                tool.as_str(),
                "tool_error",
            ]),
            call_seconds: self.call_seconds.with_label_values(&[source, toolkit]),
            upstream_seconds: self.upstream_seconds.with_label_values(&[source]),
            in_flight: self.in_flight.with_label_values(&[source]),
            source: source.into(),
            toolkit: toolkit.into(),
            tool: tool.into(),
        });
        let mut cache = self.tools.write().unwrap_or_else(PoisonError::into_inner);
        if cache.slots.len() >= cache.sweep_at {
            cache.slots.retain(|_, (entry, _)| entry.strong_count() > 0);
            cache.sweep_at = (cache.slots.len() * 2).max(64);
        }
        let (_, tool) = cache
            .slots
            .entry(key)
            .or_insert_with(|| (Arc::downgrade(entry), labelled));
        Arc::clone(tool)
    }

    /// Counts a refused call: under its tool when it was resolved, else with `source`,
    /// `toolkit` and `tool` empty.
    pub(crate) fn refused(&self, tool: Option<&ToolMetrics>, status: u16, elapsed: Duration) {
        let (source, toolkit, id) =
            tool.map_or(("", "", ""), |t| (&*t.source, &*t.toolkit, &*t.tool));
        refused_label(status, |outcome| {
            self.calls
                .with_label_values(&[source, toolkit, id, outcome])
                .inc();
        });
        match tool {
            Some(tool) => tool.call_seconds.observe(elapsed.as_secs_f64()),
            None => self
                .call_seconds
                .with_label_values(&["", ""])
                .observe(elapsed.as_secs_f64()),
        }
    }

    /// Counts a call refused by server authentication (401): no source or tool is known.
    pub(crate) fn unauthorized(&self) {
        self.calls.with_label_values(&["", "", "", "401"]).inc();
    }

    /// Counts a tool list on `edge` (`otc` or `mcp`).
    pub(crate) fn list(&self, edge: &str) {
        self.lists.with_label_values(&[edge]).inc();
    }

    /// Counts a call a policy rule decided.
    pub(crate) fn decided(&self, allowed: bool, rule: &str) {
        let effect = if allowed { "allow" } else { "refuse" };
        self.decisions.with_label_values(&[effect, rule]).inc();
    }

    /// Counts what the cache did for a call to a tool of `source`.
    pub(crate) fn cache(&self, source: &str, outcome: &str) {
        self.cache.with_label_values(&[source, outcome]).inc();
    }

    /// Counts an MCP `search_tools` call.
    pub(crate) fn search(&self) {
        self.searches.inc();
    }

    /// Every toolkit's counters now: calls, failures, and the duration histogram's cumulative
    /// buckets, summed over the sources that serve it. Read from the counters, never creating a
    /// series that `/metrics` would then show.
    fn counts(&self) -> HashMap<String, Counts> {
        use prometheus::core::Collector as _;
        let toolkit_of = |m: &prometheus::proto::Metric| {
            m.get_label()
                .iter()
                .find(|l| l.name() == "toolkit")
                .map(|l| l.value().to_owned())
                .unwrap_or_default()
        };
        let mut counts: HashMap<String, Counts> = HashMap::new();
        for family in self.calls.collect() {
            for metric in family.get_metric() {
                // Counts are whole numbers kept as f64 by the exposition format.
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let count = metric.get_counter().get_value() as u64;
                let success = metric
                    .get_label()
                    .iter()
                    .any(|l| l.name() == "outcome" && l.value() == "success");
                let of = counts.entry(toolkit_of(metric)).or_default();
                of.calls += count;
                if !success {
                    of.errors += count;
                }
            }
        }
        for family in self.call_seconds.collect() {
            for metric in family.get_metric() {
                // Every series has the same bounds (BUCKETS): a toolkit served by several sources
                // sums their cumulative counts bound by bound.
                let of = &mut counts.entry(toolkit_of(metric)).or_default().buckets;
                for (at, bucket) in metric.get_histogram().get_bucket().iter().enumerate() {
                    match of.get_mut(at) {
                        Some((_, count)) => *count += bucket.cumulative_count(),
                        None => of.push((bucket.upper_bound(), bucket.cumulative_count())),
                    }
                }
            }
        }
        counts
    }

    /// Keeps a snapshot of every toolkit's counters and forgets those older than [`WINDOW`]:
    /// what [`Metrics::recent_calls`] takes differences of. Called every [`SAMPLE_EVERY`] by
    /// [`Metrics::sample_while_alive`].
    pub(crate) fn sample(&self) {
        let now = Instant::now();
        let counts = self.counts();
        let mut recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
        recent.push_back((now, counts));
        // The oldest kept is at most WINDOW old, and one is always kept.
        while recent.len() > 1
            && recent
                .get(1)
                .is_some_and(|(at, _)| now.duration_since(*at) >= WINDOW)
        {
            recent.pop_front();
        }
    }

    /// Samples `metrics` every [`SAMPLE_EVERY`] on the current runtime, until it is dropped.
    pub(crate) fn sample_while_alive(metrics: &Arc<Self>) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let metrics = Arc::downgrade(metrics);
        runtime.spawn(async move {
            let mut every = tokio::time::interval(SAMPLE_EVERY);
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            every.tick().await;
            loop {
                every.tick().await;
                let Some(metrics) = metrics.upgrade() else {
                    return;
                };
                metrics.sample();
            }
        });
    }

    /// Every toolkit's calls over the last minutes, for the catalog page: how many (and per
    /// second), how many failed (a tool error or a refusal), and the median and 99th
    /// percentile of their duration as the upper bounds of the histogram's buckets; the
    /// difference between the counters now and the oldest snapshot kept (at most [`WINDOW`]
    /// old; since start on a younger bridge). One reading of the counters for every toolkit, so
    /// a page costs the same whether it shows one toolkit or a hundred.
    pub(crate) fn recent_calls(&self) -> Recent {
        let now = self.counts();
        let recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
        let (since, then) = match recent.front() {
            Some((at, counts)) => (*at, Some(counts)),
            None => (Instant::now(), None),
        };
        let over = since.elapsed();
        let none = Counts::default();
        let toolkits = now
            .into_iter()
            .filter(|(toolkit, _)| !toolkit.is_empty())
            .map(|(toolkit, now)| {
                let then = then.and_then(|t| t.get(&toolkit)).unwrap_or(&none);
                (toolkit, difference(&now, then, over))
            })
            .collect();
        Recent { over, toolkits }
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
pub(crate) const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The calls between two snapshots of one toolkit's counters, `over` apart.
fn difference(now: &Counts, then: &Counts, over: Duration) -> RecentCalls {
    let calls = now.calls.saturating_sub(then.calls);
    let buckets: Vec<(f64, u64)> = now
        .buckets
        .iter()
        .map(|&(bound, count)| {
            let before = then
                .buckets
                .iter()
                .find(|(b, _)| *b == bound)
                .map_or(0, |(_, c)| *c);
            (bound, count.saturating_sub(before))
        })
        .collect();
    let total = buckets.last().map_or(0, |(_, c)| *c).max(calls);
    let quantile = |q: f64| {
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        let rank = ((total as f64) * q).ceil() as u64;
        buckets
            .iter()
            .find(|(_, count)| *count >= rank.max(1))
            .map(|(bound, _)| *bound)
    };
    RecentCalls {
        calls,
        errors: now.errors.saturating_sub(then.errors),
        #[allow(clippy::cast_precision_loss)]
        per_second: calls as f64 / over.as_secs_f64().max(1.0),
        p50: (total > 0).then(|| quantile(0.5)).flatten(),
        p99: (total > 0).then(|| quantile(0.99)).flatten(),
    }
}

#[cfg(test)]
mod tests {
    use otc_adapters::Adapter as _;
    use otc_adapters::fake::FakeAdapter;
    use otc_mappings::otc::{ToolDefinition, ToolId, ToolVersion};
    use serde_json::json;

    use super::*;
    use crate::catalog::policy::SourcePolicy;

    #[test]
    fn the_catalog_pages_figures_cover_the_last_minutes() {
        let metrics = Metrics::new(true);
        let count = |n| {
            metrics
                .calls
                .with_label_values(&["s", "T", "T.a", "success"])
                .inc_by(n);
        };
        count(2);
        metrics.sample();
        count(3);
        // A young bridge counts since start.
        assert_eq!(metrics.recent_calls().toolkit("T").calls, 5);
        // Once the first snapshots are older than the window, they are forgotten: the figures
        // are what happened since the oldest one kept.
        let now = Instant::now();
        if let (Some(long_ago), Some(window_ago)) = (
            now.checked_sub(WINDOW + SAMPLE_EVERY * 2),
            now.checked_sub(WINDOW + SAMPLE_EVERY),
        ) {
            {
                let mut recent = metrics.recent.lock().unwrap();
                recent[0].0 = long_ago;
                recent[1].0 = window_ago;
            }
            metrics.sample();
            assert_eq!(metrics.recent.lock().unwrap().len(), 2);
            let recent = metrics.recent_calls();
            let calls = recent.toolkit("T");
            assert_eq!((calls.calls, calls.errors), (3, 0));
            assert!(recent.over >= WINDOW, "{:?}", recent.over);
        }
        assert_eq!(metrics.recent_calls().toolkit("other").calls, 0);
    }

    /// A toolkit served by two sources is one line on the page: the calls of both, their
    /// errors, and percentiles over both histograms.
    #[test]
    fn a_toolkit_served_by_two_sources_sums_them() {
        let metrics = Metrics::new(false);
        let rest = adapter_named("kit-rest");
        let mcp = adapter_named("kit-mcp");
        let (rest, mcp) = (metrics.tool(&entry(&rest)), metrics.tool(&entry(&mcp)));
        for _ in 0..3 {
            rest.finished(Outcome::Success, Duration::from_micros(100));
        }
        mcp.finished(Outcome::ToolError, Duration::from_secs(3));
        metrics.refused(Some(&mcp), 422, Duration::from_micros(100));
        let calls = metrics.recent_calls().toolkit("Kit");
        assert_eq!((calls.calls, calls.errors), (5, 2));
        assert_eq!(calls.p50, Some(0.0005));
        assert_eq!(calls.p99, Some(5.0));
        // A refusal before its tool was known belongs to no toolkit.
        metrics.refused(None, 400, Duration::ZERO);
        assert_eq!(metrics.recent_calls().toolkit("Kit").calls, 5);
        assert_eq!(metrics.recent_calls().toolkit("").calls, 0);
    }

    fn entry(adapter: &Arc<FakeAdapter>) -> Arc<Entry> {
        let tool = futures::executor::block_on(adapter.list_tools())
            .unwrap()
            .tools
            .remove(0);
        Arc::new(Entry::new(
            tool,
            Arc::clone(adapter) as Arc<dyn otc_adapters::Adapter>,
            Arc::new(SourcePolicy::default()),
        ))
    }

    fn adapter() -> Arc<FakeAdapter> {
        adapter_named("kit")
    }

    /// A source serving the one tool `Kit.Echo`.
    fn adapter_named(source: &str) -> Arc<FakeAdapter> {
        let version = ToolVersion::new(1, 0, 0);
        let definition = ToolDefinition {
            id: ToolId::exact("Kit", "Echo", version),
            name: "Kit_Echo".to_owned(),
            description: String::new(),
            version,
            input_schema: json!({}).into(),
            output_schema: None,
            requirements: None,
        };
        Arc::new(FakeAdapter::new(source).tool(definition, |_| Ok(json!(null))))
    }

    /// A tool's label set is made once per entry, and the slots of entries a reload dropped do
    /// not pile up.
    #[test]
    fn a_tools_labels_are_looked_up_once_and_dropped_entries_are_swept() {
        let metrics = Metrics::new(true);
        let adapter = adapter();
        let kept = entry(&adapter);
        let first = metrics.tool(&kept);
        assert!(Arc::ptr_eq(&first, &metrics.tool(&kept)));
        assert_eq!(&*first.tool, "Kit.Echo@1.0.0");
        for _ in 0..1000 {
            let dropped = entry(&adapter);
            metrics
                .tool(&dropped)
                .finished(Outcome::Success, Duration::ZERO);
        }
        let slots = metrics.tools.read().unwrap().slots.len();
        assert!(slots <= 128, "{slots} slots");
        assert!(Arc::ptr_eq(&first, &metrics.tool(&kept)));
        // One label set for all of them: the same source and tool.
        assert_eq!(first.success.get(), 1000);
        assert_eq!(&*Metrics::new(false).tool(&kept).tool, "");
    }
}
