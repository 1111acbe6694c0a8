//! `otc-bridge` without a command: serve the configured sources until SIGINT/SIGTERM.
//! [`run_server`] is shared with `demo`, which serves its own two sources the same way.
#![allow(clippy::print_stdout)] // Start-up progress on stdout is what a person watches.

use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use clap::ArgMatches;
use otc_adapters::mcp::Challenges;
use otc_adapters::{Adapter, BuildContext};
use otc_bridge::{
    AppState, Authenticator, ConnectionLimits, OffRuntime, Progress, Reloader, ServerSettings,
    SharedCatalog, Source, SourceReport, app, shutdown_signal, spawn_refreshers, start_sources,
};
use otc_mappings::Severity;
use otc_mappings::otc::Dialect;

use crate::cli::ServeArgs;

/// Serves the sources of the config file and the flags.
pub(crate) async fn serve(args: ServeArgs, matches: &ArgMatches) -> anyhow::Result<ExitCode> {
    // First of all: SIGHUP's default action ends the process, and a reload asked for while the
    // sources start (which can take a while) must not (issue 25). A signal that arrives before
    // the bridge serves is kept, and reloads once it does.
    let hangup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup());
    let path = args.config.clone();
    let watch = args.watch;
    if watch && path.is_none() {
        anyhow::bail!("--watch needs --config FILE (the file to watch)");
    }
    let overrides = args.overrides(matches);
    let reload_overrides = overrides.clone().unwrap_or_default();
    let config = super::resolve(path.as_deref(), overrides)?;
    super::init_logging(&config.log_filter);
    super::warn_config(&config);
    let hangup = hangup
        .map_err(|error| tracing::warn!(%error, "Cannot listen for SIGHUP; reload is off."))
        .ok();
    // After logging is up, so what building it warns about is seen.
    let auth = config.auth.build()?;
    // Idle sockets must not exhaust a low soft descriptor limit before the connection cap does.
    otc_bridge::raise_fd_limit();
    // Bind before starting sources, so a busy port fails fast, before any child is spawned.
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("cannot listen on {}", config.listen))?;
    if config.sources.is_empty() {
        super::status!(
            "no sources configured: pass --openapi FILE_OR_URL or --mcp COMMAND (see --help), or try `otc-bridge demo`; serving an empty tool list"
        );
    }
    let dialect = config.dialect;
    let mut settings = config.settings.clone();
    // Before any source starts: an unreachable Redis is a start-up error, not a late surprise.
    let idempotency =
        otc_bridge::Idempotency::new(config.state.as_deref(), &config.idempotency).await?;
    settings.idempotency = Some(Arc::new(idempotency));
    settings.cache =
        Some(otc_bridge::ResultCache::for_state(config.state.as_deref(), &config.cache).await?);
    if let Some(limits) = config.shared_limits().await? {
        settings.limits = limits;
    }
    let traces = super::start_traces()?;
    settings.telemetry.traces = traces.clone();
    let audit = super::open_audit(&config)?;
    settings.telemetry.audit = audit.clone();
    let search = super::load_search_model(&config.search);
    let served = run_server(
        listener,
        &config.sources,
        AppOptions {
            build: config.build_context(),
            connections: config.connections.clone(),
            settings,
            auth,
            allow_partial: config.allow_partial,
            public_url: config.public_url.clone(),
            reload: Some(ReloadFrom {
                path: path.clone(),
                overrides: reload_overrides,
                watch,
                hangup,
            }),
            search,
        },
        |addr, tools| {
            super::status!(
                "otc-bridge listening on http://{addr} with {tools} tools (dialect {})",
                dialect_name(dialect)
            );
        },
    )
    .await;
    super::stop_traces(traces).await;
    if let Some(audit) = audit {
        // Exporting queued log records blocks: not on a runtime thread.
        let _ = tokio::task::spawn_blocking(move || audit.close()).await;
    }
    served
}

/// What the server needs besides its sources.
pub(crate) struct AppOptions {
    pub(crate) build: BuildContext,
    pub(crate) connections: ConnectionLimits,
    pub(crate) settings: ServerSettings,
    pub(crate) auth: Option<Authenticator>,
    pub(crate) allow_partial: bool,
    /// `public_url`, when configured; else the bound address is the public one.
    pub(crate) public_url: Option<String>,
    /// Where a reload (SIGHUP, `--watch`) reads the configuration; `None`: no reload (the demo).
    pub(crate) reload: Option<ReloadFrom>,
    /// The search model, loading while the sources start ([`super::load_search_model`]).
    pub(crate) search: Option<super::SearchLoading>,
}

/// Who stops the sources at shutdown.
enum Stopping {
    Reloader(
        Arc<tokio::sync::Mutex<Reloader>>,
        tokio::task::JoinHandle<()>,
    ),
    Fixed(Vec<Arc<dyn Adapter>>),
}

/// What a reload re-reads: the config file with the same flags.
pub(crate) struct ReloadFrom {
    pub(crate) path: Option<std::path::PathBuf>,
    pub(crate) overrides: otc_bridge::Overrides,
    /// Also reload when the file changes.
    pub(crate) watch: bool,
    /// SIGHUP, listened for since start-up began (`None`: it cannot be).
    pub(crate) hangup: Option<tokio::signal::unix::Signal>,
}

/// The name of `dialect` as `--dialect` spells it.
pub(crate) fn dialect_name(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::OxpMain | Dialect::OxpFlat => "oxp",
        Dialect::Otc | Dialect::RfcDraft => "otc",
    }
}

fn print_progress(progress: Progress<'_>) {
    match progress {
        Progress::Done(report) => print_report(report),
        Progress::Waiting { names, elapsed } => {
            super::status!(
                "  waiting for {} ({:.0} s)",
                names.join(", "),
                elapsed.as_secs_f64()
            );
        }
    }
}

fn print_report(report: &SourceReport) {
    let secs = report.elapsed.as_secs_f64();
    match &report.error {
        None => {
            let skipped = report
                .diagnostics
                .iter()
                .filter(|d| d.severity == Severity::Skipped)
                .count();
            let note = if skipped > 0 {
                format!(" ({skipped} skipped; run `otc-bridge check` for details)")
            } else {
                String::new()
            };
            super::status!(
                "  ready   {}: {} tools in {secs:.2} s{note}",
                report.name,
                report.tools
            );
        }
        Some(error) => eprintln!("  failed  {}: {error}", report.name),
    }
}

/// Stops every adapter (MCP children, sessions) concurrently.
pub(crate) async fn stop_all(adapters: &[Arc<dyn Adapter>]) {
    futures::future::join_all(adapters.iter().map(|a| a.shutdown())).await;
}

/// Nothing starts half-configured unless the user asked for it (issue 5): when sources failed
/// (all of them, or some without `allow_partial`), stops the others and says so.
pub(crate) async fn refuse_half_started(
    adapters: &[Arc<dyn Adapter>],
    reports: &[SourceReport],
    allow_partial: bool,
) -> anyhow::Result<()> {
    let failed = reports.iter().filter(|r| r.error.is_some()).count();
    if failed > 0 && failed == reports.len() {
        stop_all(adapters).await;
        anyhow::bail!("no source could be started; fix the errors above");
    }
    if failed > 0 && !allow_partial {
        stop_all(adapters).await;
        anyhow::bail!(
            "{failed} of {} source(s) failed to start (see above); fix them, or pass --allow-partial to serve the others",
            reports.len()
        );
    }
    Ok(())
}

/// Starts the sources (printing progress), serves until SIGINT/SIGTERM, then stops the sources.
pub(crate) async fn run_server(
    listener: tokio::net::TcpListener,
    sources: &[Source],
    options: AppOptions,
    banner: impl FnOnce(std::net::SocketAddr, usize),
) -> anyhow::Result<ExitCode> {
    let addr = listener
        .local_addr()
        .context("cannot read the bound address")?;
    if !sources.is_empty() {
        super::status!("starting {} source(s):", sources.len());
        for source in sources {
            super::status!("  loading {}: {}", source.name, source.describe());
        }
    }
    // Per-caller sign-ins come back to this listener: its address is known only now (port 0).
    let challenges = Challenges::new(&otc_bridge::public_url(options.public_url.as_deref(), addr));
    let build = BuildContext {
        challenges: Some(challenges.clone()),
        ..options.build.clone()
    };
    let (adapters, catalog, reports) = start_sources(sources, &build, print_progress).await;
    let search = match options.search {
        Some(loading) => super::search_model_loaded(loading).await?,
        None => None,
    };
    crate::alloc::enter(crate::alloc::Phase::Serving);
    refuse_half_started(&adapters, &reports, options.allow_partial).await?;
    let tools = catalog.len();
    let catalog = SharedCatalog::new(catalog);
    if let Some(search) = &search {
        search.spawn(catalog.clone());
    }
    // A stopped source's calls get as long as any call may take.
    let drain = options.settings.call_timeout + std::time::Duration::from_secs(5);
    // The Host check against DNS rebinding needs the address actually bound (port 0 included).
    let settings = ServerSettings {
        listen: Some(addr),
        challenges: Some(challenges),
        search,
        ..options.settings
    };
    let state = AppState::new(catalog.clone(), settings, options.auth);
    // Who stops the sources at the end: the reloader (which may have replaced them), or this
    // function. The reloader must be the only owner besides the catalog, so that a source it
    // removes is dropped once its calls are done.
    let stopping = match options.reload {
        Some(from) => {
            drop(adapters);
            let reloader = Reloader::new(catalog.clone(), build.clone(), sources, drain);
            let reloader = Arc::new(tokio::sync::Mutex::new(reloader));
            let task = tokio::spawn(reload_on_signal(Arc::clone(&reloader), state.clone(), from));
            Stopping::Reloader(reloader, task)
        }
        None => {
            spawn_refreshers(&catalog);
            Stopping::Fixed(adapters)
        }
    };
    banner(addr, tools);
    let _ = std::io::stdout().flush();
    // Past the shutdown deadline, connections still open are dropped: a half-sent request
    // cannot hold the process (and its children) forever.
    let served =
        otc_bridge::serve(listener, app(state), options.connections, shutdown_signal()).await;
    match stopping {
        Stopping::Reloader(reloader, task) => {
            task.abort();
            super::status!("shutting down: stopping the sources");
            reloader.lock().await.stop().await;
        }
        Stopping::Fixed(adapters) => {
            super::status!("shutting down: stopping {} source(s)", adapters.len());
            stop_all(&adapters).await;
        }
    }
    served.context("server failed")?;
    Ok(ExitCode::SUCCESS)
}

/// Reloads on SIGHUP and, with `--watch`, when the config file changes; says what changed, or
/// why nothing did. The file is read and resolved off the runtime, within
/// [`otc_bridge::READ_DEADLINE`], so serving never waits for it.
async fn reload_on_signal(
    reloader: Arc<tokio::sync::Mutex<Reloader>>,
    state: AppState,
    mut from: ReloadFrom,
) {
    let Some(mut hangup) = from.hangup.take() else {
        return;
    };
    let reads = OffRuntime::new(otc_bridge::READ_DEADLINE);
    let (changed, mut file_changes) = tokio::sync::mpsc::channel(1);
    let _watcher = match (&from.path, from.watch) {
        (Some(path), true) => match watch_file(path, changed) {
            Ok(watcher) => Some(watcher),
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "Cannot watch the config file; reload on SIGHUP only.");
                None
            }
        },
        _ => None,
    };
    loop {
        tokio::select! {
            _ = hangup.recv() => {}
            Some(()) = file_changes.recv() => {
                // Editors write in several steps: reload once they are done.
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                while file_changes.try_recv().is_ok() {}
            }
        }
        let (path, overrides) = (from.path.clone(), from.overrides.clone());
        let read = reads.run(move || super::resolve(path.as_deref(), Ok(overrides)));
        let config = match read
            .await
            .map_err(anyhow::Error::from)
            .and_then(|read| read)
        {
            Ok(config) => config,
            Err(error) => {
                super::status!(
                    "reload failed: {error:#}; still serving the previous configuration"
                );
                continue;
            }
        };
        // Built before anything changes: a key that cannot be read or a Redis that cannot be
        // reached refuses the whole reload.
        let rules = match rules_of(&config).await {
            Ok(rules) => rules,
            Err(error) => {
                super::status!(
                    "reload failed: {error:#}; still serving the previous configuration"
                );
                continue;
            }
        };
        match reloader.lock().await.apply(&config).await {
            Ok(done) => {
                // Callers, policies and limits change in one step: a request is decided under
                // the rules it was authenticated with.
                state.set_rules(rules);
                super::status!(
                    "reloaded: added [{}], changed [{}], removed [{}], unchanged [{}]; callers, policies and limits: {} rule(s), {} limit(s)",
                    done.added.join(", "),
                    done.changed.join(", "),
                    done.removed.join(", "),
                    done.unchanged.join(", "),
                    config.settings.policies.len(),
                    config.rate_limits.rules.len()
                );
            }
            Err(why) => {
                super::status!("reload failed: {why}; still serving the previous configuration")
            }
        }
    }
}

/// The callers, policies and limits `config` gives: its authentication with its secrets read,
/// and its limits' counters in Redis when `state` names one.
async fn rules_of(config: &otc_bridge::Config) -> anyhow::Result<otc_bridge::Rules> {
    let auth = config.auth.build()?;
    let limits = match config.shared_limits().await? {
        Some(limits) => limits,
        None => Arc::clone(&config.settings.limits),
    };
    Ok(otc_bridge::Rules {
        auth,
        policies: Arc::clone(&config.settings.policies),
        limits,
    })
}

/// Sends on `changed` whenever `path` is written, created or replaced (editors often rename a
/// new file over the old one, so its directory is watched).
fn watch_file(
    path: &std::path::Path,
    changed: tokio::sync::mpsc::Sender<()>,
) -> notify::Result<notify::RecommendedWatcher> {
    use notify::Watcher as _;
    let name = path.file_name().map(std::ffi::OsStr::to_owned);
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
        _ => std::path::PathBuf::from("."),
    };
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let Ok(event) = event else { return };
        if event.kind.is_access() {
            return;
        }
        if event.paths.iter().any(|p| p.file_name() == name.as_deref()) {
            let _ = changed.try_send(());
        }
    })?;
    watcher.watch(&dir, notify::RecursiveMode::NonRecursive)?;
    Ok(watcher)
}
