//! `otc-bridge mcp SOURCES…`: the catalog served to an MCP host over stdio, for hosts that
//! spawn a command (Claude Desktop, Cursor, VS Code). Stdout carries MCP only: progress and
//! logs go to stderr.

use std::process::ExitCode;

use anyhow::Context as _;
use clap::ArgMatches;
use otc_bridge::{
    CatalogServer, McpSettings, Progress, SharedCatalog, shutdown_signal, spawn_refreshers,
    start_sources,
};

use super::serve::{refuse_half_started, stop_all};
use crate::cli::McpArgs;

/// Starts the sources, then serves MCP on stdio until the host closes stdin (or a signal).
pub(crate) async fn mcp(args: &McpArgs, matches: &ArgMatches) -> anyhow::Result<ExitCode> {
    let config = super::resolve(args.config.as_deref(), args.overrides(matches))?;
    super::init_logging(&config.log_filter);
    super::warn_config(&config);
    let traces = super::start_traces()?;
    let search = super::load_search_model(&config.search);
    let (adapters, catalog, reports) =
        start_sources(&config.sources, &config.build_context(), |progress| {
            if let Progress::Done(report) = progress {
                match &report.error {
                    None => tracing::info!(source = %report.name, tools = report.tools, "ready"),
                    Some(error) => {
                        tracing::error!(source = %report.name, %error, "failed to start")
                    }
                }
            }
        })
        .await;
    let search = match search {
        Some(loading) => super::search_model_loaded(loading).await?,
        None => None,
    };
    crate::alloc::enter(crate::alloc::Phase::Serving);
    refuse_half_started(&adapters, &reports, config.allow_partial).await?;
    tracing::info!(
        tools = catalog.len(),
        expose = ?config.settings.mcp_expose,
        "serving MCP on stdio"
    );
    let catalog = SharedCatalog::new(catalog);
    spawn_refreshers(&catalog);
    if let Some(search) = &search {
        search.spawn(catalog.clone());
    }
    let mut settings = McpSettings {
        search,
        caller: config.stdio_caller.clone(),
        ..McpSettings::from(&config.settings)
    };
    settings.telemetry.traces = traces.clone();
    settings.cache =
        Some(otc_bridge::ResultCache::for_state(config.state.as_deref(), &config.cache).await?);
    if let Some(limits) = config.shared_limits().await? {
        settings.limits = limits;
    }
    let audit = super::open_audit(&config)?;
    settings.telemetry.audit = audit.clone();
    let server = CatalogServer::new(catalog, settings);
    let served = tokio::select! {
        served = otc_bridge::serve_stdio(server) => served,
        () = shutdown_signal() => Ok(()),
    };
    stop_all(&adapters).await;
    super::stop_traces(traces).await;
    if let Some(audit) = audit {
        // Exporting queued log records blocks: not on a runtime thread.
        let _ = tokio::task::spawn_blocking(move || audit.close()).await;
    }
    served.context("MCP over stdio failed")?;
    Ok(ExitCode::SUCCESS)
}
