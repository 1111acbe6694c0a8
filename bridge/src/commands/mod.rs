//! The binary's commands, one file each: `serve` (the default), `tools` and `check`
//! (`inspect`), `export`, `import`, `lock`, `diff`, `login`, `mcp` (stdio), and `demo`. Each resolves its configuration with
//! [`otc_bridge::Config::resolve`] and prints for a person; the library does the work.

pub(crate) mod audit;
pub(crate) mod demo;
pub(crate) mod diff;
pub(crate) mod export;
pub(crate) mod import;
pub(crate) mod inspect;
pub(crate) mod lock;
pub(crate) mod login;
pub(crate) mod mcp;
pub(crate) mod policy;
pub(crate) mod serve;

use otc_bridge::{Config, FileConfig, Overrides};

/// `println!` for the status lines of a long-running command: a stdout nobody reads any more
/// (`| head`, a supervisor that stopped reading) must not stop the bridge, so a failed write is
/// ignored instead of panicking.
macro_rules! status {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}
pub(crate) use status;

/// The logging directive that keeps rmcp's OAuth module at info, where it logs no secrets.
const NO_SECRETS_IN_LOGS: &str = "rmcp::transport::auth=info";

/// Sets up logging to stderr with `filter`, unless `OTC_LOG` gives one.
pub(crate) fn init_logging(filter: &str) {
    // rmcp logs every session at info, and ort (the search model's runtime) every library it
    // loads and device it finds: keep each at warn unless the filter names it (the bridge's
    // own start-up line says which model and runtime search uses).
    let mut filter = filter.to_owned();
    for quiet in ["rmcp", "ort"] {
        if !filter.contains(quiet) {
            filter = format!("{filter},{quiet}=warn");
        }
    }
    let filter = tracing_subscriber::EnvFilter::try_from_env("OTC_LOG")
        .or_else(|_| tracing_subscriber::EnvFilter::try_new(&filter))
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"))
        // rmcp's OAuth code logs authorization codes at debug level; whatever the filter asks,
        // nothing below info from it is ever written (secrets never reach a log).
        .add_directive(NO_SECRETS_IN_LOGS.parse().unwrap_or_default());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

/// Traces as the standard `OTEL_*` environment variables configure them (off unless an OTLP
/// endpoint is set); after logging is up, so a misconfiguration is seen.
pub(crate) fn start_traces() -> anyhow::Result<Option<std::sync::Arc<otc_bridge::Traces>>> {
    let traces = otc_bridge::Traces::from_env()?;
    if traces.is_some() {
        tracing::info!("Exporting traces over OTLP.");
    }
    Ok(traces.map(std::sync::Arc::new))
}

/// The audit trail `audit:` configures, open, with its buffer written to the file every
/// second; `None` when it is off.
pub(crate) fn open_audit(
    config: &otc_bridge::Config,
) -> anyhow::Result<Option<std::sync::Arc<otc_bridge::AuditTrail>>> {
    let Some(audit) = &config.audit else {
        return Ok(None);
    };
    // The values of the bridge's secrets, never to appear in a recorded input.
    let secrets = config
        .secret_env
        .iter()
        .filter_map(|var| std::env::var(var).ok())
        .collect();
    let trail = std::sync::Arc::new(otc_bridge::AuditTrail::open(audit, secrets)?);
    let flushed = std::sync::Arc::downgrade(&trail);
    tokio::spawn(async move {
        let mut every = tokio::time::interval(std::time::Duration::from_secs(1));
        loop {
            every.tick().await;
            match flushed.upgrade() {
                Some(trail) => {
                    let _ = tokio::task::spawn_blocking(move || trail.flush()).await;
                }
                None => return,
            }
        }
    });
    Ok(Some(trail))
}

/// Exports the spans still queued and stops the exporter (it blocks, so not on a runtime
/// thread).
pub(crate) async fn stop_traces(traces: Option<std::sync::Arc<otc_bridge::Traces>>) {
    if let Some(traces) = traces {
        let _ = tokio::task::spawn_blocking(move || traces.shutdown()).await;
    }
}

/// Logs what reading the config file ignored, once, after logging is set up.
pub(crate) fn warn_config(config: &Config) {
    for warning in &config.warnings {
        tracing::warn!("{warning}");
    }
}

/// Reads the file named by `--config` (none: an empty file) and merges the flags into it.
pub(crate) fn resolve(
    path: Option<&std::path::Path>,
    overrides: Result<Overrides, crate::cli::FlagError>,
) -> anyhow::Result<Config> {
    let file = match path {
        Some(path) => FileConfig::load(path)?,
        None => FileConfig::default(),
    };
    let overrides = overrides?;
    Ok(Config::resolve(file, overrides)?)
}

/// The search model being read on a blocking thread while the sources start.
pub(crate) type SearchLoading =
    tokio::task::JoinHandle<Result<Option<otc_bridge::Semantic>, otc_bridge::ModelLoadError>>;

/// Starts reading the search model `config` names, if any (about 90 MB: not on the runtime,
/// and beside the sources starting, so readiness does not wait for it).
pub(crate) fn load_search_model(config: &otc_bridge::SearchConfig) -> Option<SearchLoading> {
    config.model.as_ref()?;
    let config = config.clone();
    Some(tokio::task::spawn_blocking(move || {
        otc_bridge::Semantic::load(&config)
    }))
}

/// The loaded model (`None`: an optional one failed, logged), or the start-up error naming
/// its path. Says which search mode the bridge serves.
pub(crate) async fn search_model_loaded(
    loading: SearchLoading,
) -> anyhow::Result<Option<std::sync::Arc<otc_bridge::Semantic>>> {
    let loaded = loading
        .await
        .map_err(|e| anyhow::anyhow!("loading the search model failed: {e}"))??;
    match &loaded {
        Some(semantic) => {
            tracing::info!(model = %semantic.path().display(), runtime = semantic.runtime(), "search: semantic (tools are embedded in the background; lexical until then)")
        }
        None => tracing::info!("search: lexical"),
    }
    Ok(loaded.map(std::sync::Arc::new))
}
