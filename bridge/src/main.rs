//! The `otc-bridge` binary: flags and config file → sources → catalog → server.
//! `anyhow` is used only here, for start-up failures printed with their causes.
#![allow(clippy::print_stdout)] // What this binary prints on stdout is its product.

use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use clap::{ArgMatches, CommandFactory, FromArgMatches};
use otc_adapters::Adapter;
use otc_bridge::cli::{Cli, Command, InspectArgs, ServeArgs, source_flags};
use otc_bridge::config::{ApiKeysConfig, DialectName, FileConfig, JwtConfig};
use otc_bridge::run::{Progress, SourceReport, shutdown_signal, spawn_refreshers, start_sources};
use otc_bridge::sources::{self, Source};
use otc_bridge::{AppState, Catalog, SharedCatalog, app};
use otc_mappings::Severity;
use otc_mappings::otc::Dialect;

fn main() -> ExitCode {
    let matches = Cli::command().get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(err) => err.exit(),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("error: cannot start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match &cli.command {
            None => serve(cli.serve, &matches).await,
            Some(Command::Tools(args)) => inspect(args, sub_matches(&matches), false).await,
            Some(Command::Check(args)) => inspect(args, sub_matches(&matches), true).await,
            Some(Command::Export(args)) => export(args, sub_matches(&matches)).await,
            Some(Command::Demo(args)) => demo(args).await,
            Some(Command::DemoMcpServer) => otc_bridge::demo::mcp_server::serve_stdio()
                .await
                .map(|()| ExitCode::SUCCESS),
        }
    });
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}

fn sub_matches(matches: &ArgMatches) -> &ArgMatches {
    matches.subcommand().map_or(matches, |(_, m)| m)
}

fn init_logging(filter: &str) {
    // rmcp logs every session at info; keep it at warn unless the filter names it.
    let filter = if filter.contains("rmcp") {
        filter.to_owned()
    } else {
        format!("{filter},rmcp=warn")
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("OTC_LOG")
        .or_else(|_| tracing_subscriber::EnvFilter::try_new(&filter))
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

/// The sources of the config file followed by those of the flags, with unique names.
fn collect_sources(file: &FileConfig, matches: &ArgMatches) -> anyhow::Result<Vec<Source>> {
    let mut all = sources::from_file(&file.sources)?;
    let flags = source_flags(matches).map_err(anyhow::Error::msg)?;
    all.extend(flags.iter().map(Source::from_flag));
    sources::make_names_unique(&mut all);
    Ok(all)
}

fn load_file(path: Option<&std::path::Path>) -> anyhow::Result<FileConfig> {
    Ok(match path {
        Some(path) => FileConfig::load(path)?,
        None => FileConfig::default(),
    })
}

fn print_progress(progress: Progress<'_>) {
    match progress {
        Progress::Done(report) => print_report(report),
        Progress::Waiting { names, elapsed } => {
            println!(
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
            println!(
                "  ready   {}: {} tools in {secs:.2} s{note}",
                report.name, report.tools
            );
        }
        Some(error) => eprintln!("  failed  {}: {error}", report.name),
    }
}

async fn stop_all(adapters: &[Arc<dyn Adapter>]) {
    futures::future::join_all(adapters.iter().map(|a| a.shutdown())).await;
}

async fn serve(args: ServeArgs, matches: &ArgMatches) -> anyhow::Result<ExitCode> {
    let mut file = load_file(args.config.as_deref())?;
    init_logging(
        args.log_level
            .as_deref()
            .or(file.log_level.as_deref())
            .unwrap_or("info,rmcp=warn"),
    );
    if let Some(var) = args.jwt_secret_env {
        file.auth.jwt = Some(JwtConfig {
            secret_env: var,
            audience: args.jwt_audience.clone(),
        });
    } else if !args.jwt_audience.is_empty() {
        anyhow::bail!("--jwt-audience needs --jwt-secret-env");
    }
    if args.api_keys_env.is_some() || args.api_keys_file.is_some() {
        file.auth.api_keys = Some(ApiKeysConfig {
            env: args.api_keys_env,
            file: args.api_keys_file,
        });
    }
    if let Some(bytes) = args.max_body_bytes {
        file.limits.max_body_bytes = bytes;
    }
    if let Some(secs) = args.call_timeout_secs {
        file.limits.call_timeout_secs = secs;
    }
    let dialect: Dialect = args
        .dialect
        .or(file.dialect)
        .map_or(Dialect::Otc, Into::into);
    let settings = file.limits.server_settings(dialect)?;
    let auth = file.auth.build()?;
    let listen = args
        .listen
        .or(file.listen)
        .unwrap_or_else(|| ([127, 0, 0, 1], 8080).into());
    let allow_partial = args.allow_partial || file.allow_partial;
    let sources = collect_sources(&file, matches)?;
    // Bind before starting sources, so a busy port fails fast, before any child is spawned.
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("cannot listen on {listen}"))?;
    if sources.is_empty() {
        println!(
            "no sources configured: pass --openapi FILE_OR_URL or --mcp COMMAND (see --help), or try `otc-bridge demo`; serving an empty tool list"
        );
    }
    run_server(
        listener,
        &sources,
        AppOptions {
            settings,
            auth,
            allow_partial,
        },
        |addr, tools| {
            println!(
                "otc-bridge listening on http://{addr} with {tools} tools (dialect {})",
                dialect_name(dialect)
            );
        },
    )
    .await
}

/// What the server needs besides its sources.
struct AppOptions {
    settings: otc_bridge::ServerSettings,
    auth: Option<otc_bridge::Authenticator>,
    allow_partial: bool,
}

/// Starts the sources (printing progress), serves until SIGINT/SIGTERM, then stops the sources.
async fn run_server(
    listener: tokio::net::TcpListener,
    sources: &[Source],
    options: AppOptions,
    banner: impl FnOnce(std::net::SocketAddr, usize),
) -> anyhow::Result<ExitCode> {
    let addr = listener
        .local_addr()
        .context("cannot read the bound address")?;
    if !sources.is_empty() {
        println!("starting {} source(s):", sources.len());
        for source in sources {
            println!("  loading {}: {}", source.name, source.describe());
        }
    }
    let (adapters, catalog, reports) = start_sources(sources, print_progress).await;
    let failed = reports.iter().filter(|r| r.error.is_some()).count();
    // Nothing starts half-configured unless the user asked for it (issue 5).
    if failed > 0 && failed == sources.len() {
        stop_all(&adapters).await;
        anyhow::bail!("no source could be started; fix the errors above");
    }
    if failed > 0 && !options.allow_partial {
        stop_all(&adapters).await;
        anyhow::bail!(
            "{failed} of {} source(s) failed to start (see above); fix them, or pass --allow-partial to serve the others",
            sources.len()
        );
    }
    let tools = catalog.len();
    let catalog = SharedCatalog::new(catalog);
    spawn_refreshers(&catalog);
    let state = AppState::new(catalog, options.settings, options.auth);
    banner(addr, tools);
    let _ = std::io::stdout().flush();
    let served = axum::serve(listener, app(state))
        .with_graceful_shutdown(shutdown_signal())
        .await;
    println!("shutting down: stopping {} source(s)", adapters.len());
    stop_all(&adapters).await;
    served.context("server failed")?;
    Ok(ExitCode::SUCCESS)
}

/// `demo`: the built-in REST service and MCP server, with the bridge in front of both.
async fn demo(args: &otc_bridge::cli::DemoArgs) -> anyhow::Result<ExitCode> {
    use otc_adapters::mcp::McpConfig;
    use otc_adapters::openapi::OpenApiConfig;
    use otc_bridge::demo::rest;
    use otc_bridge::sources::Upstream;

    init_logging("warn");
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| {
            format!(
                "cannot listen on {} (pass --listen 127.0.0.1:PORT to use another port)",
                args.listen
            )
        })?;
    let rest_listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .context("cannot start the demo REST service")?;
    let rest = rest::start(rest_listener)
        .await
        .context("cannot start the demo REST service")?;
    let exe = std::env::current_exe()
        .context("cannot find the otc-bridge executable to run the demo MCP server")?;
    let exe = exe.to_string_lossy();
    let command = format!(
        "{} demo-mcp-server",
        shlex::try_quote(&exe).context("the executable's path cannot be quoted")?
    );
    let sources = vec![
        Source {
            name: "notes".to_owned(),
            upstream: Upstream::OpenApi(OpenApiConfig::new(rest.document_url())),
            options: otc_bridge::policy::SourceOptions::default(),
            inspect_only: false,
        },
        Source {
            name: "demo-tools".to_owned(),
            upstream: Upstream::Mcp(McpConfig::stdio(&command)),
            options: otc_bridge::policy::SourceOptions::default(),
            inspect_only: false,
        },
    ];
    println!(
        "demo REST service (OpenAPI document {}) and demo MCP server (a child process)",
        rest.document_url()
    );
    let dialect: Dialect = args.dialect.unwrap_or(DialectName::Otc).into();
    let settings = otc_bridge::config::LimitsConfig::default().server_settings(dialect)?;
    let code = run_server(listener, &sources, AppOptions { settings, auth: None, allow_partial: false }, |addr, tools| {
        let url = format!("http://{addr}");
        println!("otc-bridge listening on {url} with {tools} tools (dialect {})", dialect_name(dialect));
        println!();
        println!("Try it (Ctrl-C stops the demo):");
        println!("  # list the tools");
        println!("  curl -s {url}/tools");
        println!("  # a successful call (the REST service, through its OpenAPI document)");
        println!(
            "  curl -s {url}/tools/call -H 'content-type: application/json' -d '{{\"request\":{{\"tool_id\":\"DemoNotes.CreateNote\",\"input\":{{\"title\":\"Hello\",\"body\":\"Written through OTC\"}}}}}}'"
        );
        println!("  # an invalid input: 422 with parameter_errors (the MCP server's schema)");
        println!(
            "  curl -s {url}/tools/call -H 'content-type: application/json' -d '{{\"request\":{{\"tool_id\":\"DemoTools.RollDice\",\"input\":{{\"sides\":\"many\"}}}}}}'"
        );
    })
    .await;
    let _ = rest.shutdown().await;
    code
}

fn dialect_name(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::OxpMain | Dialect::OxpFlat => "oxp",
        Dialect::Otc | Dialect::RfcDraft => "otc",
    }
}

/// Starts the sources of an inspecting command, lists them, and stops them again.
async fn list_once(
    args: &InspectArgs,
    matches: &ArgMatches,
) -> anyhow::Result<(FileConfig, Vec<Source>, Catalog, Vec<SourceReport>)> {
    init_logging("warn");
    let file = load_file(args.config.as_deref())?;
    let sources: Vec<Source> = collect_sources(&file, matches)?
        .into_iter()
        .map(Source::for_inspection)
        .collect();
    if sources.is_empty() {
        anyhow::bail!(
            "no sources: pass --openapi FILE_OR_URL, --mcp COMMAND, --mcp-url URL or --config FILE"
        );
    }
    // stdout is the product here, so progress goes to stderr.
    let (adapters, catalog, reports) = start_sources(&sources, |progress| {
        if let Progress::Waiting { names, elapsed } = progress {
            eprintln!(
                "waiting for {} ({:.0} s)",
                names.join(", "),
                elapsed.as_secs_f64()
            );
        }
    })
    .await;
    stop_all(&adapters).await;
    Ok((file, sources, catalog, reports))
}

/// Prints each failed source and each diagnostic on stderr; returns whether any source failed.
fn print_problems(reports: &[SourceReport]) -> bool {
    for report in reports {
        if let Some(error) = &report.error {
            eprintln!("error: {}: {error}", report.name);
        }
        for diagnostic in &report.diagnostics {
            eprintln!("{}: {diagnostic}", report.name);
        }
    }
    reports.iter().any(|r| r.error.is_some())
}

/// `export`: the definitions as files, deterministic (sorted by id, stable formatting).
async fn export(
    args: &otc_bridge::cli::ExportArgs,
    matches: &ArgMatches,
) -> anyhow::Result<ExitCode> {
    let (file, _sources, catalog, reports) = list_once(&args.inspect, matches).await?;
    let failed = print_problems(&reports);
    let dialect: Dialect = args
        .inspect
        .dialect
        .or(file.dialect)
        .unwrap_or(DialectName::Otc)
        .into();
    let mut tools = catalog.definitions().to_vec();
    tools.sort_by(|a, b| {
        (&a.id.toolkit, &a.id.tool, a.version).cmp(&(&b.id.toolkit, &b.id.tool, b.version))
    });
    let render = |tools: &[otc_mappings::otc::ToolDefinition]| pretty_list(dialect, tools);
    if args.split {
        std::fs::create_dir_all(&args.out)
            .with_context(|| format!("cannot create directory {}", args.out.display()))?;
        let mut toolkits: Vec<&str> = tools.iter().map(|t| t.id.toolkit.as_str()).collect();
        toolkits.dedup();
        for toolkit in toolkits {
            let subset: Vec<_> = tools
                .iter()
                .filter(|t| t.id.toolkit == toolkit)
                .cloned()
                .collect();
            let path = args.out.join(format!("{toolkit}.json"));
            std::fs::write(&path, render(&subset)?)
                .with_context(|| format!("cannot write {}", path.display()))?;
            println!("wrote {} ({} tools)", path.display(), subset.len());
        }
    } else {
        if let Some(parent) = args.out.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create directory {}", parent.display()))?;
        }
        std::fs::write(&args.out, render(&tools)?)
            .with_context(|| format!("cannot write {}", args.out.display()))?;
        println!("wrote {} ({} tools)", args.out.display(), tools.len());
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// `tools` (definitions on stdout) and `check` (a conversion report).
async fn inspect(
    args: &InspectArgs,
    matches: &ArgMatches,
    check: bool,
) -> anyhow::Result<ExitCode> {
    let (file, sources, catalog, reports) = list_once(args, matches).await?;
    let failed = reports.iter().any(|r| r.error.is_some());
    if check {
        let skipped = print_check(&sources, &reports);
        return Ok(if failed || skipped {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        });
    }
    print_problems(&reports);
    let dialect: Dialect = args
        .dialect
        .or(file.dialect)
        .unwrap_or(DialectName::Otc)
        .into();
    print_tools(&catalog, dialect)?;
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// The `GET /tools` body of `tools` in `dialect`, pretty-printed, serialised straight from the
/// definitions (no intermediate JSON tree: large documents make it costly).
fn pretty_list(
    dialect: Dialect,
    tools: &[otc_mappings::otc::ToolDefinition],
) -> anyhow::Result<String> {
    let mut text =
        serde_json::to_string_pretty(&otc_mappings::otc::ListToolsBody { dialect, tools })
            .context("serialising tools")?;
    text.push('\n');
    Ok(text)
}

fn print_tools(catalog: &Catalog, dialect: Dialect) -> anyhow::Result<()> {
    let text = pretty_list(dialect, catalog.definitions())?;
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        // The reader stopped early (`| head`): not an error of ours.
        Err(err) if err.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(err).context("writing to stdout")
        }
        _ => Ok(()),
    }
}

/// Prints one block per source; returns whether anything was skipped.
fn print_check(sources: &[Source], reports: &[SourceReport]) -> bool {
    let mut any_skipped = false;
    for (source, report) in sources.iter().zip(reports) {
        println!("{} ({})", report.name, source.describe());
        if let Some(error) = &report.error {
            println!("  FAILED: {error}");
            continue;
        }
        let skipped: Vec<_> = report
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Skipped)
            .collect();
        any_skipped |= !skipped.is_empty();
        println!(
            "  operations: {}   tools: {}   skipped: {}",
            report.tools + skipped.len(),
            report.tools,
            skipped.len()
        );
        for diagnostic in &report.diagnostics {
            println!("  {diagnostic}");
        }
    }
    any_skipped
}
