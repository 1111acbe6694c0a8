//! The registry: every served tool, keyed by `Toolkit.Tool` and version.
//!
//! A [`Catalog`] is immutable. When a source's tool list changes (MCP `list_changed`), a new
//! catalog is built from the current one and swapped in ([`SharedCatalog::update`]): updates are
//! serialised, so two sources refreshing at once cannot lose each other's tools, while readers
//! never wait (one lock-free load per request). Calls in flight keep the `Arc` of the catalog
//! they started with.
//!
//! Memory follows what is served (DESIGN.md §11): a definition's schemas are shared compact text
//! ([`otc_mappings::otc::Schema`]), every listing points at the one [`Entry`], input validators
//! are compiled on a tool's first call into a bounded cache ([`Validators`]), and the `GET /tools`
//! bodies are written when asked for; only their gzip forms, a fraction of the size, are kept.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use arc_swap::ArcSwap;
use bytes::Bytes;
use otc_adapters::Adapter;
use otc_mappings::otc::{Dialect, ListToolsBody, ToolDefinition, ToolVersion, VersionSelector};
use otc_mappings::{Diagnostic, MappedTool, Severity};

use crate::catalog::lock::{self, Drift};
use crate::catalog::policy::SourcePolicy;
use crate::catalog::shaping::Shaping;
use crate::catalog::validate::{self, Validators};
use otc_search::{SearchIndex, Vectors};

/// One tool version as served.
#[derive(Debug)]
pub struct Entry {
    /// Definition and upstream target.
    pub tool: Arc<MappedTool>,
    /// The source that serves it.
    pub adapter: Arc<dyn Adapter>,
    /// The source's policy (call limits).
    pub policy: Arc<SourcePolicy>,
    /// The version the upstream's label gives the tool (the served version differs when a
    /// lockfile pins it).
    pub upstream: ToolVersion,
    /// What identifies this entry in caches (its validator, which policies cover it): unique
    /// to it, and its tool is never replaced once it is made.
    key: u64,
    /// How calls and results are shaped, when the configuration transforms the tool or
    /// projects its results.
    pub shaping: Option<Arc<Shaping>>,
}

impl Entry {
    /// An entry for `tool`, served by `adapter` under `policy`.
    pub fn new(tool: MappedTool, adapter: Arc<dyn Adapter>, policy: Arc<SourcePolicy>) -> Self {
        Self {
            upstream: tool.definition.version,
            tool: Arc::new(tool),
            adapter,
            policy,
            key: validate::new_key(),
            shaping: None,
        }
    }

    /// The tool's definition.
    pub fn definition(&self) -> &ToolDefinition {
        &self.tool.definition
    }

    /// What identifies this entry in caches: no other entry has it.
    pub(crate) fn key(&self) -> u64 {
        self.key
    }
}

/// The tools of one source.
#[derive(Debug, Clone)]
pub struct SourceTools {
    /// The source.
    pub adapter: Arc<dyn Adapter>,
    /// Its policy, applied again whenever its tools are re-listed.
    pub policy: Arc<SourcePolicy>,
    /// Its tools.
    pub entries: Vec<Arc<Entry>>,
    /// Its tools that do not match the lockfile (changed or new), served or not.
    pub drift: Vec<Arc<Drift>>,
}

impl SourceTools {
    /// Applies the source's policy to `tools`. Validators are compiled on each tool's first
    /// call, not here: start-up stays proportional to the document, and a catalog of thousands
    /// of tools does not hold thousands of validators nobody calls.
    pub fn compile(
        adapter: Arc<dyn Adapter>,
        policy: Arc<SourcePolicy>,
        tools: Vec<MappedTool>,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Self {
        let mut drift = Vec::new();
        let entries = policy
            .apply(tools, diagnostics)
            .into_iter()
            .filter_map(|(tool, shaping)| {
                let upstream = tool.definition.version;
                let tool = match &policy.pins {
                    Some(pins) => {
                        let (tool, changed) = lock::pin(pins, tool);
                        if let Some(changed) = changed {
                            log_drift(adapter.name(), &changed);
                            drift.push(Arc::new(changed));
                        }
                        tool?
                    }
                    None => tool,
                };
                let mut entry = Entry::new(tool, Arc::clone(&adapter), Arc::clone(&policy));
                entry.upstream = upstream;
                entry.shaping = shaping;
                Some(Arc::new(entry))
            })
            .collect();
        Self {
            adapter,
            policy,
            entries,
            drift,
        }
    }

    /// Compiles every tool's input validator once (what a call would), for `otc-bridge check`:
    /// a diagnostic for each tool whose input schema is not a valid JSON Schema.
    pub fn check_validators(&self) -> Vec<Diagnostic> {
        self.entries
            .iter()
            .filter_map(|entry| {
                validate::compile(&entry.definition().input_schema)
                    .err()
                    .map(|err| {
                        Diagnostic::new(
                            Severity::Skipped,
                            Some(&entry.definition().id.to_string()),
                            None,
                            format!("input schema is not a valid JSON Schema: {err}"),
                        )
                    })
            })
            .collect()
    }
}

/// Logs a tool that does not match the lockfile: a warning when it is served unchanged in
/// name only (`warn`) or not at all (`refuse`), information when it moved on (`bump`) or is new.
fn log_drift(source: &str, drift: &Drift) {
    let message = drift.message();
    if drift.served.is_none() || drift.served == drift.locked {
        tracing::warn!(source, "{message}");
    } else {
        tracing::info!(source, "{message}");
    }
}

/// An immutable snapshot of every tool served.
#[derive(Debug, Default)]
pub struct Catalog {
    sources: Vec<SourceTools>,
    /// `Toolkit.Tool` → versions, highest first.
    by_name: HashMap<String, Vec<Arc<Entry>>>,
    /// Case-folded `Toolkit.Tool` → the served spelling, for "did you mean".
    folded: HashMap<String, String>,
    /// The tools served, in listing order.
    listed: Vec<Arc<Entry>>,
    /// About how many bytes the `GET /tools` body takes (schemas and descriptions, the bulk).
    list_estimate: usize,
    /// The gzip-compressed `GET /tools` body of each written dialect (OTC, OXP main, OXP flat),
    /// made on the first request that accepts it.
    gzipped: [OnceLock<Bytes>; 3],
    /// Compiled input validators, shared with the catalogs that follow this one.
    validators: Arc<Validators>,
    /// The highest version of each tool, in listing order: what search ranks and what MCP
    /// hosts see in `all` mode.
    latest: Vec<Arc<Entry>>,
    /// `name` (the OTC `Toolkit_Tool` name) → the highest version, for MCP hosts that call
    /// catalog tools by name; built on first use.
    by_otc_name: OnceLock<HashMap<String, Arc<Entry>>>,
    /// The search index over `latest`, built on a blocking thread when the catalog is swapped
    /// in ([`SharedCatalog`]), off every request's path (a search that arrives first waits for
    /// it), and dropped with this catalog, so it always matches the tools served.
    search: OnceLock<SearchIndex>,
    /// The semantic ranker's vectors of `latest` (same positions), set by the background task
    /// of [`super::semantic::Semantic`] once every tool has one; until then search is lexical.
    vectors: OnceLock<Vectors>,
    /// Unique for the life of the process: what a cache of per-catalog answers (a caller's
    /// visible tools) is keyed by.
    id: u64,
    /// Ids that were served twice; the first source wins.
    pub duplicates: Vec<Diagnostic>,
    /// Sources that failed to start and are served without (`--allow-partial`).
    failed: Vec<FailedSource>,
}

/// A configured source that failed to start: `/health` lists it as failed.
#[derive(Debug, Clone)]
pub struct FailedSource {
    /// Its name.
    pub name: String,
    /// Why, for the log and trusted callers.
    pub reason: String,
}

/// How a requested tool id resolved.
#[derive(Debug)]
pub enum Resolution<'a> {
    /// Found.
    Found(&'a Arc<Entry>),
    /// No tool of that name.
    UnknownTool {
        /// A served name differing only in case.
        suggestion: Option<&'a str>,
    },
    /// The tool exists in other versions.
    UnknownVersion {
        /// Served versions, highest first.
        available: Vec<ToolVersion>,
        /// When the version asked for is a locked one the upstream changed: how.
        changed: Option<&'a Drift>,
    },
    /// The tool is not served because it changed upstream since it was locked (or is not in
    /// the lock) and its source's policy is `refuse`.
    Refused(&'a Drift),
}

impl Catalog {
    /// Builds the catalog from each source's tools, in source order.
    pub fn new(sources: Vec<SourceTools>) -> Self {
        Self::with_validators(sources, Arc::default())
    }

    fn with_validators(sources: Vec<SourceTools>, validators: Arc<Validators>) -> Self {
        let mut by_name: HashMap<String, Vec<Arc<Entry>>> = HashMap::new();
        let mut duplicates = Vec::new();
        let mut listed = Vec::new();
        for source in &sources {
            for entry in &source.entries {
                let def = entry.definition();
                let key = def.id.name();
                let versions = by_name.entry(key).or_default();
                if versions
                    .iter()
                    .any(|e| e.definition().version == def.version)
                {
                    duplicates.push(Diagnostic::new(
                        Severity::Skipped,
                        Some(&def.id.to_string()),
                        None,
                        format!("source '{}' serves an id another source already serves; the first one wins", source.adapter.name()),
                    ));
                    continue;
                }
                versions.push(Arc::clone(entry));
                listed.push(Arc::clone(entry));
            }
        }
        for versions in by_name.values_mut() {
            versions.sort_by_key(|e| std::cmp::Reverse(e.definition().version));
        }
        let latest = listed
            .iter()
            .filter(|e| {
                let def = e.definition();
                by_name
                    .get(&def.id.name())
                    .and_then(|versions| versions.first())
                    .is_some_and(|first| Arc::ptr_eq(first, e))
            })
            .cloned()
            .collect();
        let folded = by_name
            .keys()
            .map(|k| (k.to_ascii_lowercase(), k.clone()))
            .collect();
        let list_estimate = listed
            .iter()
            .map(|e| {
                let d = e.definition();
                d.input_schema.len()
                    + d.output_schema.as_ref().map_or(0, |s| s.len())
                    + d.description.len()
            })
            .sum();
        Self {
            sources,
            by_name,
            folded,
            listed,
            list_estimate,
            gzipped: Default::default(),
            validators,
            latest,
            by_otc_name: OnceLock::new(),
            search: OnceLock::new(),
            vectors: OnceLock::new(),
            id: NEXT_CATALOG.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            duplicates,
            failed: Vec::new(),
        }
    }

    /// This catalog's id: no other catalog of the process has it.
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// The same catalog, also listing `failed` sources (served without them).
    pub(crate) fn with_failed(mut self, failed: Vec<FailedSource>) -> Self {
        self.failed = failed;
        self
    }

    /// The sources that failed to start.
    pub fn failed(&self) -> &[FailedSource] {
        &self.failed
    }

    /// Resolves `Toolkit.Tool` (the id without its `@…`, already checked by `ToolId`'s parser)
    /// and a version selector (CHECKLIST §5.3: `@x.y.z` exact, `@x` exactly `x.0.0`, none →
    /// the highest) among the tools `only` lets the caller see (all when `None`): one it may not see is answered
    /// exactly as one that does not exist (no suggestion, version or lock drift names it).
    /// Takes the name as a slice of the request so that lookup allocates nothing.
    pub fn resolve(
        &self,
        name: &str,
        selector: VersionSelector,
        only: Option<&dyn Fn(&Entry) -> bool>,
    ) -> Resolution<'_> {
        let sees = |e: &Entry| only.is_none_or(|sees| sees(e));
        let all = self.by_name.get(name).map_or(&[][..], Vec::as_slice);
        // The call's path: the version asked for, among those the caller sees (one check of
        // the caller's view per version looked at).
        let found = match selector {
            VersionSelector::Latest => all.iter().find(|e| sees(e)),
            selector => all
                .iter()
                .find(|e| selector.matches(e.definition().version) && sees(e)),
        };
        if let Some(entry) = found {
            return Resolution::Found(entry);
        }
        let seen = |entries: &[Arc<Entry>]| entries.iter().any(|e| sees(e));
        if !seen(all) {
            // A lock drift names a tool by name only: when no version is served, it is told
            // only to a caller who sees everything.
            if all.is_empty()
                && only.is_none()
                && let Some(refused) = self.find_drift(name, |d| d.served.is_none())
            {
                return Resolution::Refused(refused);
            }
            let suggestion = self
                .folded
                .get(&name.to_ascii_lowercase())
                .filter(|other| seen(self.versions(other)))
                .map(String::as_str);
            return Resolution::UnknownTool { suggestion };
        }
        let changed = self.find_drift(name, |d| d.locked.is_some_and(|v| selector.matches(v)));
        match changed {
            Some(drift) if drift.served.is_none() => Resolution::Refused(drift),
            changed => Resolution::UnknownVersion {
                available: all
                    .iter()
                    .filter(|e| sees(e))
                    .map(|e| e.definition().version)
                    .collect(),
                changed,
            },
        }
    }

    /// The first tool named `name` (`Toolkit.Tool`) not matching the lockfile that `wanted`
    /// accepts (an error path: a scan is fine).
    fn find_drift(&self, name: &str, wanted: impl Fn(&Drift) -> bool) -> Option<&Drift> {
        self.sources
            .iter()
            .flat_map(|s| &s.drift)
            .map(|d| &**d)
            .find(|d| d.name == name && wanted(d))
    }

    /// Every tool that does not match the lockfile, for `/health`.
    pub fn drifted(&self) -> impl Iterator<Item = (&str, &Drift)> {
        self.sources
            .iter()
            .flat_map(|s| s.drift.iter().map(move |d| (s.adapter.name(), &**d)))
    }

    /// The `GET /tools` body for a dialect, written now from the shared definitions (copying
    /// each schema's text: a few milliseconds for GitHub's 1,200 tools). Large catalogs should
    /// be written off the async workers.
    pub fn list_body(&self, dialect: Dialect) -> Bytes {
        let mut body = Vec::new();
        // Writing to memory cannot fail.
        let _ = self.write_list(dialect, &mut body);
        Bytes::from(body)
    }

    /// About how many bytes the `GET /tools` body takes (at least its schemas and descriptions).
    pub(crate) fn list_size_estimate(&self) -> usize {
        self.list_estimate
    }

    /// Writes the `GET /tools` body for a dialect into `writer` (the server streams it: a
    /// catalog's list is never whole in memory per request). Fails only when `writer` does.
    pub fn write_list(&self, dialect: Dialect, writer: impl std::io::Write) -> std::io::Result<()> {
        self.write_list_of(dialect, writer, |_| true)
    }

    /// [`Catalog::write_list`] with only the tools `sees` lets a caller see (what policies
    /// allow it).
    pub(crate) fn write_list_of(
        &self,
        dialect: Dialect,
        writer: impl std::io::Write,
        sees: impl Fn(&Entry) -> bool,
    ) -> std::io::Result<()> {
        let tools: Vec<&ToolDefinition> = self
            .listed
            .iter()
            .filter(|e| sees(e))
            .map(|e| e.definition())
            .collect();
        ListToolsBody {
            dialect: written(dialect),
            tools: &tools,
        }
        .write_json(writer)
    }

    /// The `GET /tools` body for a dialect, gzip-compressed: made once, on first use, and kept
    /// (about a tenth of the body's size).
    pub fn list_body_gzip(&self, dialect: Dialect) -> Bytes {
        let dialect = written(dialect);
        let slot = match dialect {
            Dialect::OxpMain => 1,
            Dialect::OxpFlat => 2,
            Dialect::Otc | Dialect::RfcDraft => 0,
        };
        self.gzipped[slot]
            .get_or_init(|| {
                // Compressed as it is written: the plain body is never whole in memory.
                let mut encoder =
                    flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
                // Writing to a Vec cannot fail.
                let _ = self.write_list(dialect, &mut encoder);
                let mut gzipped = encoder.finish().unwrap_or_default();
                gzipped.shrink_to_fit();
                Bytes::from(gzipped)
            })
            .clone()
    }

    /// The input validator of `entry`, compiled on its first call and cached while it fits.
    pub fn validator(
        &self,
        entry: &Entry,
    ) -> Result<Arc<jsonschema::Validator>, validate::InvalidSchema> {
        self.validators
            .get(entry.key, &entry.definition().input_schema)
    }

    /// The validator of the upstream's own input schema, for a tool whose arguments a transform
    /// reshapes (`None` otherwise): a mapped-back input is checked against it.
    pub(crate) fn upstream_validator(
        &self,
        entry: &Entry,
    ) -> Option<Result<Arc<jsonschema::Validator>, validate::InvalidSchema>> {
        let (schema, key) = entry.shaping.as_ref()?.upstream_input.as_ref()?;
        Some(self.validators.get(*key, schema))
    }

    /// Every tool version served, in listing order.
    pub fn entries(&self) -> &[Arc<Entry>] {
        &self.listed
    }

    /// The highest version of each tool, in listing order.
    pub fn latest(&self) -> &[Arc<Entry>] {
        &self.latest
    }

    /// The search index over [`Catalog::latest`] (positions index that slice), built on first
    /// use (in the background, by [`SharedCatalog`]): about a second per 10,000 tools.
    pub(crate) fn search_index(&self) -> &SearchIndex {
        self.search
            .get_or_init(|| SearchIndex::build(self.latest.iter().map(|e| &*e.tool)))
    }

    /// The tools' vectors for semantic search, once embedded.
    pub fn vectors(&self) -> Option<&Vectors> {
        self.vectors.get()
    }

    /// Sets the tools' vectors (once; later calls are ignored).
    pub(crate) fn set_vectors(&self, vectors: Vectors) {
        let _ = self.vectors.set(vectors);
    }

    /// The highest version of the tool whose OTC `name` is `name`.
    pub(crate) fn by_otc_name(&self, name: &str) -> Option<&Arc<Entry>> {
        self.by_otc_name
            .get_or_init(|| {
                self.latest
                    .iter()
                    .map(|e| (e.definition().name.clone(), Arc::clone(e)))
                    .collect()
            })
            .get(name)
    }

    /// The served versions of `Toolkit.Tool`, highest first (empty when unknown).
    pub fn versions(&self, name: &str) -> &[Arc<Entry>] {
        self.by_name.get(name).map_or(&[], Vec::as_slice)
    }

    /// Every definition served, in catalog order.
    pub fn definitions(&self) -> impl ExactSizeIterator<Item = &ToolDefinition> {
        self.listed.iter().map(|e| e.definition())
    }

    /// The number of tools served.
    pub fn len(&self) -> usize {
        self.by_name.values().map(Vec::len).sum()
    }

    /// Whether no tool is served.
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// The sources, in order.
    pub fn sources(&self) -> &[SourceTools] {
        &self.sources
    }

    /// A new catalog with one source's tools replaced (after its tool list changed).
    pub(crate) fn with_source(&self, replacement: &SourceTools) -> Self {
        let sources = self
            .sources
            .iter()
            .map(|s| {
                if Arc::ptr_eq(&s.adapter, &replacement.adapter) {
                    replacement.clone()
                } else {
                    s.clone()
                }
            })
            .collect();
        Self::with_validators(sources, Arc::clone(&self.validators))
            .with_failed(self.failed.clone())
    }
}

/// The RFC draft is answered exactly as OTC 1.0 (DESIGN.md §2): no body of its own.
fn written(dialect: Dialect) -> Dialect {
    if dialect == Dialect::RfcDraft {
        Dialect::Otc
    } else {
        dialect
    }
}

/// The next [`Catalog::id`].
static NEXT_CATALOG: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The current catalog, swapped atomically when a source changes.
#[derive(Debug, Clone)]
pub struct SharedCatalog(Arc<Shared>);

impl Default for SharedCatalog {
    fn default() -> Self {
        Self::new(Catalog::default())
    }
}

#[derive(Debug)]
struct Shared {
    current: ArcSwap<Catalog>,
    /// Told after every swap, so edges that announce changes (MCP `list_changed`) can.
    changed: tokio::sync::watch::Sender<()>,
    /// Held while a new catalog is built from the current one, so concurrent updates apply in
    /// turn instead of each starting from the same snapshot and the last one winning.
    updating: Mutex<()>,
}

impl SharedCatalog {
    /// Wraps a catalog.
    pub fn new(catalog: Catalog) -> Self {
        let catalog = Arc::new(catalog);
        index_in_background(&catalog);
        Self(Arc::new(Shared {
            current: ArcSwap::new(catalog),
            changed: tokio::sync::watch::Sender::new(()),
            updating: Mutex::new(()),
        }))
    }

    /// A receiver that sees each change made after this call ([`SharedCatalog::update`]).
    pub fn changes(&self) -> tokio::sync::watch::Receiver<()> {
        self.0.changed.subscribe()
    }

    /// The current snapshot (one lock-free load).
    pub fn current(&self) -> Arc<Catalog> {
        self.0.current.load_full()
    }

    /// Replaces the snapshot with `change(current)`. Updates are serialised: each one sees the
    /// result of the one before.
    pub fn update(&self, change: impl FnOnce(&Catalog) -> Catalog) {
        let _turn = self
            .0
            .updating
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let next = Arc::new(change(&self.0.current.load()));
        index_in_background(&next);
        self.0.current.store(next);
        self.0.changed.send_replace(());
    }
}

/// Builds `catalog`'s search index on a blocking thread, so no request builds it (one that
/// arrives first waits on the build in progress). Outside a runtime (a one-shot command, a test)
/// it is built when first asked for.
fn index_in_background(catalog: &Arc<Catalog>) {
    if catalog.latest.is_empty() {
        return;
    }
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        let catalog = Arc::clone(catalog);
        runtime.spawn_blocking(move || {
            catalog.search_index();
        });
    }
}

#[cfg(test)]
mod tests {
    use otc_adapters::Adapter as _;
    use otc_adapters::fake::FakeAdapter;
    use otc_mappings::otc::{ToolId, ToolVersion};
    use serde_json::json;

    use super::*;

    fn catalog(tools: &[&str]) -> Catalog {
        let mut adapter = FakeAdapter::new("kit");
        for tool in tools {
            let v = ToolVersion::new(1, 0, 0);
            let definition = ToolDefinition {
                id: ToolId::exact("Kit", *tool, v),
                name: format!("Kit_{tool}"),
                description: format!("{tool} things"),
                version: v,
                input_schema: json!({}).into(),
                output_schema: None,
                requirements: None,
            };
            adapter = adapter.tool(definition, |_| Ok(json!(null)));
        }
        let mapped = futures::executor::block_on(adapter.list_tools())
            .unwrap()
            .tools;
        let source = SourceTools::compile(
            Arc::new(adapter),
            Arc::new(SourcePolicy::default()),
            mapped,
            &mut Vec::new(),
        );
        Catalog::new(vec![source])
    }

    async fn indexed(catalog: &Catalog) -> bool {
        for _ in 0..500 {
            if catalog.search.get().is_some() {
                return true;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        false
    }

    /// Issue 23, part 2.5: the search index is built when a catalog is swapped in, on a
    /// blocking thread, not by the first search (or `Tool not found`) inside its request.
    #[tokio::test]
    async fn the_search_index_is_built_when_a_catalog_is_swapped_in() {
        let shared = SharedCatalog::new(catalog(&["Forecast", "Translate"]));
        assert!(indexed(&shared.current()).await, "not built at start");
        shared.update(|_| catalog(&["Forecast", "Translate", "Invoice"]));
        let next = shared.current();
        assert!(indexed(&next).await, "not built after the swap");
        assert_eq!(next.latest().len(), 3);
    }
}
