//! Start-up and shutdown: list every source once, compile the catalog, keep it fresh when a
//! source's tool list changes, serve until SIGINT/SIGTERM, then let in-flight calls finish and
//! stop the sources.

use std::sync::Arc;
use std::time::Instant;

use otc_adapters::Adapter;
use otc_mappings::Diagnostic;

use crate::registry::{Catalog, SharedCatalog, SourceTools};

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
}

/// Lists and compiles every source (concurrently); failed sources are reported and left out.
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
                let compiled = SourceTools::compile(adapter, mapped.tools, &mut diagnostics);
                reports.push(SourceReport {
                    name,
                    tools: compiled.entries.len(),
                    elapsed: started.elapsed(),
                    diagnostics,
                    error: None,
                });
                sources.push(compiled);
            }
            Err(err) => reports.push(SourceReport {
                name,
                tools: 0,
                elapsed: started.elapsed(),
                diagnostics: Vec::new(),
                error: Some(crate::rescue::cause_chain(&err)),
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
        let Some(mut changes) = source.adapter.catalog_changes() else {
            continue;
        };
        let adapter = Arc::clone(&source.adapter);
        let catalog = catalog.clone();
        tokio::spawn(async move {
            while changes.changed().await.is_ok() {
                match adapter.list_tools().await {
                    Ok(mapped) => {
                        let mut diagnostics = mapped.diagnostics;
                        let replacement = SourceTools::compile(
                            Arc::clone(&adapter),
                            mapped.tools,
                            &mut diagnostics,
                        );
                        let count = replacement.entries.len();
                        let next = catalog.current().with_source(&replacement);
                        catalog.swap(next);
                        tracing::info!(source = %adapter.name(), tools = count, "Tool list changed; catalog refreshed.");
                    }
                    Err(err) => {
                        tracing::warn!(source = %adapter.name(), error = %crate::rescue::cause_chain(&err), "Re-listing tools failed; keeping the previous list.");
                    }
                }
            }
        });
    }
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
