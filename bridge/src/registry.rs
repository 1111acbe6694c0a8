//! The registry: every served tool, keyed by `Toolkit.Tool` and version, with its input
//! validator compiled once when the catalog is built (never per call).
//!
//! A [`Catalog`] is immutable. When a source's tool list changes (MCP `list_changed`), a new
//! catalog is built from the current one and swapped in ([`SharedCatalog::update`]): updates are
//! serialised, so two sources refreshing at once cannot lose each other's tools, while readers
//! never wait (one lock-free load per request). Calls in flight keep the `Arc` of the catalog
//! they started with.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use bytes::Bytes;
use otc_adapters::Adapter;
use otc_mappings::otc::{Dialect, ListToolsBody, ToolDefinition, ToolVersion, VersionSelector};
use otc_mappings::{Diagnostic, MappedTool, Severity};

use crate::policy::SourcePolicy;

/// One tool version as served.
#[derive(Debug)]
pub struct Entry {
    /// Definition and upstream target.
    pub tool: Arc<MappedTool>,
    /// The compiled input validator.
    pub validator: jsonschema::Validator,
    /// The source that serves it.
    pub adapter: Arc<dyn Adapter>,
    /// The source's policy (call limits).
    pub policy: Arc<SourcePolicy>,
}

impl Entry {
    /// The tool's definition.
    pub fn definition(&self) -> &ToolDefinition {
        &self.tool.definition
    }
}

/// The tools of one source, already compiled.
#[derive(Debug, Clone)]
pub struct SourceTools {
    /// The source.
    pub adapter: Arc<dyn Adapter>,
    /// Its policy, applied again whenever its tools are re-listed.
    pub policy: Arc<SourcePolicy>,
    /// Its tools.
    pub entries: Vec<Arc<Entry>>,
}

impl SourceTools {
    /// Applies the source's policy to `tools` and compiles their validators; a tool whose input
    /// schema does not compile is left out with a diagnostic rather than served unvalidated.
    pub fn compile(
        adapter: Arc<dyn Adapter>,
        policy: Arc<SourcePolicy>,
        tools: Vec<MappedTool>,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Self {
        let entries = policy
            .apply(tools, diagnostics)
            .into_iter()
            .filter_map(|tool| {
                match jsonschema::options()
                    .should_validate_formats(false)
                    .build(&tool.definition.input_schema)
                {
                    Ok(validator) => Some(Arc::new(Entry {
                        tool: Arc::new(tool),
                        validator,
                        adapter: Arc::clone(&adapter),
                        policy: Arc::clone(&policy),
                    })),
                    Err(err) => {
                        diagnostics.push(Diagnostic::new(
                            Severity::Skipped,
                            Some(&tool.definition.id.to_string()),
                            None,
                            format!("input schema is not a valid JSON Schema: {err}"),
                        ));
                        None
                    }
                }
            })
            .collect();
        Self {
            adapter,
            policy,
            entries,
        }
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
    /// The definitions served, in listing order.
    listed: Vec<ToolDefinition>,
    /// The `GET /tools` body of each dialect, serialised once.
    lists: HashMap<Dialect, Bytes>,
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
    },
}

impl Catalog {
    /// Builds the catalog from each source's tools, in source order.
    pub fn new(sources: Vec<SourceTools>) -> Self {
        let mut by_name: HashMap<String, Vec<Arc<Entry>>> = HashMap::new();
        let mut duplicates = Vec::new();
        let mut listed: Vec<ToolDefinition> = Vec::new();
        for source in &sources {
            for entry in &source.entries {
                let def = entry.definition();
                let key = format!("{}.{}", def.id.toolkit, def.id.tool);
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
                listed.push(def.clone());
            }
        }
        for versions in by_name.values_mut() {
            versions.sort_by_key(|e| std::cmp::Reverse(e.definition().version));
        }
        let folded = by_name
            .keys()
            .map(|k| (k.to_ascii_lowercase(), k.clone()))
            .collect();
        // The RFC draft is answered exactly as OTC 1.0 (DESIGN.md §2): no body of its own.
        let lists = [Dialect::Otc, Dialect::OxpMain, Dialect::OxpFlat]
            .into_iter()
            .map(|dialect| {
                let body = serde_json::to_vec(&ListToolsBody {
                    dialect,
                    tools: &listed,
                })
                .unwrap_or_default();
                (dialect, Bytes::from(body))
            })
            .collect();
        Self {
            sources,
            by_name,
            folded,
            listed,
            lists,
            duplicates,
            failed: Vec::new(),
        }
    }

    /// The same catalog, also listing `failed` sources (served without them).
    pub fn with_failed(mut self, failed: Vec<FailedSource>) -> Self {
        self.failed = failed;
        self
    }

    /// The sources that failed to start.
    pub fn failed(&self) -> &[FailedSource] {
        &self.failed
    }

    /// Resolves `Toolkit.Tool` (the id without its `@…`, already checked by `ToolId`'s parser)
    /// and a version selector (CHECKLIST §5.3: `@x.y.z` exact, `@x` exactly `x.0.0`, none →
    /// the highest). Takes the name as a slice of the request so that lookup allocates nothing.
    pub fn resolve(&self, name: &str, selector: VersionSelector) -> Resolution<'_> {
        let Some(versions) = self.by_name.get(name) else {
            let suggestion = self
                .folded
                .get(&name.to_ascii_lowercase())
                .map(String::as_str);
            return Resolution::UnknownTool { suggestion };
        };
        let found = match selector {
            VersionSelector::Latest => versions.first(),
            selector => versions
                .iter()
                .find(|e| selector.matches(e.definition().version)),
        };
        match found {
            Some(entry) => Resolution::Found(entry),
            None => Resolution::UnknownVersion {
                available: versions.iter().map(|e| e.definition().version).collect(),
            },
        }
    }

    /// The pre-serialised `GET /tools` body for a dialect.
    pub fn list_body(&self, dialect: Dialect) -> Bytes {
        let dialect = if dialect == Dialect::RfcDraft {
            Dialect::Otc
        } else {
            dialect
        };
        self.lists.get(&dialect).cloned().unwrap_or_default()
    }

    /// Every definition served, in catalog order.
    pub fn definitions(&self) -> &[ToolDefinition] {
        &self.listed
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
    pub fn with_source(&self, replacement: &SourceTools) -> Self {
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
        Self::new(sources).with_failed(self.failed.clone())
    }
}

/// The current catalog, swapped atomically when a source changes.
#[derive(Debug, Clone, Default)]
pub struct SharedCatalog(Arc<Shared>);

#[derive(Debug, Default)]
struct Shared {
    current: ArcSwap<Catalog>,
    /// Held while a new catalog is built from the current one, so concurrent updates apply in
    /// turn instead of each starting from the same snapshot and the last one winning.
    updating: Mutex<()>,
}

impl SharedCatalog {
    /// Wraps a catalog.
    pub fn new(catalog: Catalog) -> Self {
        Self(Arc::new(Shared {
            current: ArcSwap::from_pointee(catalog),
            updating: Mutex::new(()),
        }))
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
        let next = change(&self.0.current.load());
        self.0.current.store(Arc::new(next));
    }
}
