//! Start-up and shutdown: list every source once, compile the catalog, keep it fresh when a
//! source's tool list changes, serve until SIGINT/SIGTERM, then let in-flight calls finish and
//! stop the sources.

use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use otc_adapters::{Adapter, BuildContext};
use otc_mappings::Diagnostic;

use crate::catalog::registry::{Catalog, FailedSource, SharedCatalog, SourceTools};
use crate::config::sources::Source;

/// What listing one source gave.
#[derive(Debug)]
pub struct SourceReport {
    /// The source's name.
    pub name: String,
    /// Tools served.
    pub tools: usize,
    /// How long listing and compiling took.
    pub elapsed: std::time::Duration,
    /// What translation lost.
    pub diagnostics: Vec<Diagnostic>,
    /// Why the source failed, when it did.
    pub error: Option<String>,
    /// The MCP protocol an MCP source spoke when it was listed.
    pub protocol: Option<otc_adapters::McpProtocol>,
}

/// What start-up tells a person watching it.
#[derive(Debug)]
pub enum Progress<'a> {
    /// A source is ready or has failed.
    Done(&'a SourceReport),
    /// Some sources are still starting (every few seconds while they are).
    Waiting {
        /// Their names.
        names: Vec<&'a str>,
        /// Time since start-up began.
        elapsed: std::time::Duration,
    },
}

/// How often start-up reports sources that are still loading.
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// Builds, lists and compiles every source concurrently, calling `on_progress` as each one is
/// ready or has failed, and every few seconds while some are still loading (a large document, a
/// slow MCP server). Failed sources are reported, left out of the tools, and listed as failed.
/// `cx` is handed to every adapter built (the bridge's secret variables, kept from children).
pub async fn start_sources(
    sources: &[Source],
    cx: &BuildContext,
    mut on_progress: impl FnMut(Progress<'_>),
) -> (Vec<Arc<dyn Adapter>>, Catalog, Vec<SourceReport>) {
    let mut pending: FuturesUnordered<_> = sources
        .iter()
        .enumerate()
        .map(|(index, source)| async move {
            let started = Instant::now();
            // The policy was compiled when the source was parsed: reuse it, so the source has
            // one concurrency semaphore.
            let policy = Arc::clone(source.policy());
            let built = match source.build(cx).await {
                Ok(adapter) => match adapter.list_tools().await {
                    Ok(mapped) => Ok((adapter, policy, mapped)),
                    Err(err) => {
                        adapter.shutdown().await;
                        Err(err)
                    }
                },
                Err(err) => Err(err),
            };
            (index, built, started)
        })
        .collect();
    let mut done: Vec<(usize, Option<SourceTools>, SourceReport)> = Vec::new();
    let began = Instant::now();
    let mut ticker =
        tokio::time::interval_at(tokio::time::Instant::now() + PROGRESS_EVERY, PROGRESS_EVERY);
    let mut finished = vec![false; sources.len()];
    loop {
        let next = tokio::select! {
            next = pending.next() => next,
            _ = ticker.tick() => {
                let names = sources.iter().zip(&finished).filter(|(_, done)| !**done).map(|(s, _)| s.name.as_str()).collect();
                on_progress(Progress::Waiting { names, elapsed: began.elapsed() });
                continue;
            }
        };
        let Some((index, built, started)) = next else {
            break;
        };
        finished[index] = true;
        let name = sources[index].name.clone();
        let (compiled, report) = match built {
            Ok((adapter, policy, mapped)) => {
                let mut diagnostics = mapped.diagnostics;
                let protocol = adapter.mcp_protocol();
                let compiled =
                    SourceTools::compile(adapter, policy, mapped.tools, &mut diagnostics);
                let tools = compiled.entries.len();
                (
                    Some(compiled),
                    SourceReport {
                        name,
                        tools,
                        elapsed: started.elapsed(),
                        diagnostics,
                        error: None,
                        protocol,
                    },
                )
            }
            Err(err) => (
                None,
                SourceReport {
                    name,
                    tools: 0,
                    elapsed: started.elapsed(),
                    diagnostics: Vec::new(),
                    error: Some(crate::rescue::cause_chain(&err)),
                    protocol: None,
                },
            ),
        };
        on_progress(Progress::Done(&report));
        done.push((index, compiled, report));
    }
    // Catalog order is configuration order, whatever order the sources became ready in.
    done.sort_by_key(|(index, _, _)| *index);
    let mut compiled_sources = Vec::new();
    let mut reports = Vec::new();
    for (_, compiled, report) in done {
        compiled_sources.extend(compiled);
        reports.push(report);
    }
    let adapters = compiled_sources
        .iter()
        .map(|s| Arc::clone(&s.adapter))
        .collect();
    // A source that failed stays visible: `/health` lists it as failed (and answers 503).
    let failed = reports
        .iter()
        .filter_map(|r| {
            r.error.as_ref().map(|reason| FailedSource {
                name: r.name.clone(),
                reason: reason.clone(),
            })
        })
        .collect();
    let catalog = Catalog::new(compiled_sources).with_failed(failed);
    for duplicate in &catalog.duplicates {
        tracing::warn!(diagnostic = %duplicate, "Duplicate tool id.");
    }
    (adapters, catalog, reports)
}

/// Lists and compiles adapters that are already built (concurrently); failed ones are reported
/// and left out.
pub async fn load_catalog(adapters: &[Arc<dyn Adapter>]) -> (Catalog, Vec<SourceReport>) {
    let listings = futures::future::join_all(adapters.iter().map(|adapter| async move {
        let started = Instant::now();
        let listed = adapter.list_tools().await;
        (Arc::clone(adapter), listed, started)
    }))
    .await;
    let mut sources = Vec::new();
    let mut reports = Vec::new();
    for (adapter, listed, started) in listings {
        let name = adapter.name().to_owned();
        match listed {
            Ok(mapped) => {
                let mut diagnostics = mapped.diagnostics;
                let protocol = adapter.mcp_protocol();
                let compiled =
                    SourceTools::compile(adapter, Arc::default(), mapped.tools, &mut diagnostics);
                reports.push(SourceReport {
                    name,
                    tools: compiled.entries.len(),
                    elapsed: started.elapsed(),
                    diagnostics,
                    error: None,
                    protocol,
                });
                sources.push(compiled);
            }
            Err(err) => reports.push(SourceReport {
                name,
                tools: 0,
                elapsed: started.elapsed(),
                diagnostics: Vec::new(),
                error: Some(crate::rescue::cause_chain(&err)),
                protocol: None,
            }),
        }
    }
    let catalog = Catalog::new(sources);
    for duplicate in &catalog.duplicates {
        tracing::warn!(diagnostic = %duplicate, "Duplicate tool id.");
    }
    (catalog, reports)
}

/// For each source whose tool list can change, re-lists it on every change and swaps in a new
/// catalog. Calls in flight keep the catalog they started with.
pub fn spawn_refreshers(catalog: &SharedCatalog) {
    for source in catalog.current().sources() {
        spawn_refresher(catalog, source);
    }
}

/// Re-lists `source` whenever its upstream says its tools changed, and swaps in a catalog with
/// the new list (`None`: its list never changes). Ends when the source is dropped or aborted.
pub(crate) fn spawn_refresher(
    catalog: &SharedCatalog,
    source: &SourceTools,
) -> Option<tokio::task::JoinHandle<()>> {
    let mut changes = source.adapter.catalog_changes()?;
    let adapter = Arc::clone(&source.adapter);
    let policy = Arc::clone(&source.policy);
    let catalog = catalog.clone();
    Some(tokio::spawn(async move {
        // A server whose list goes stale every second (`ttlMs: 0`, the SDKs' default) is
        // re-listed as often, but the catalog is rebuilt only when the list differs.
        let mut last_listed = None;
        while changes.changed().await.is_ok() {
            match adapter.list_tools().await {
                Ok(mapped) => {
                    let digest = serde_json::to_vec(&mapped.tools).ok().map(|bytes| {
                        use std::hash::{BuildHasher as _, BuildHasherDefault};
                        BuildHasherDefault::<std::hash::DefaultHasher>::default().hash_one(bytes)
                    });
                    if digest.is_some() && digest == last_listed {
                        tracing::debug!(source = %adapter.name(), "Re-listed tools; nothing changed.");
                        continue;
                    }
                    last_listed = digest;
                    let mut diagnostics = mapped.diagnostics;
                    let replacement = SourceTools::compile(
                        Arc::clone(&adapter),
                        Arc::clone(&policy),
                        mapped.tools,
                        &mut diagnostics,
                    );
                    let count = replacement.entries.len();
                    catalog.update(|current| current.with_source(&replacement));
                    tracing::info!(source = %adapter.name(), tools = count, "Tool list changed; catalog refreshed.");
                }
                Err(err) => {
                    tracing::warn!(source = %adapter.name(), error = %crate::rescue::cause_chain(&err), "Re-listing tools failed; keeping the previous list.");
                }
            }
        }
    }))
}

/// Resolves when the process is asked to stop (SIGINT or SIGTERM).
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
}
