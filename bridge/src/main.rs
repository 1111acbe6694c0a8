//! The `otc-bridge` binary: flags and config file → sources → catalog → server.
//! `anyhow` is used only here, for start-up failures printed with their causes.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use clap::{CommandFactory, FromArgMatches};
use otc_adapters::Adapter;
use otc_bridge::cli::{Cli, Command, ServeArgs, source_flags};
use otc_bridge::config::{ApiKeysConfig, FileConfig, JwtConfig};
use otc_bridge::run::{load_catalog, shutdown_signal, spawn_refreshers};
use otc_bridge::{AppState, SharedCatalog, app};
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
        match cli.command {
            None => serve(cli.serve, &matches).await,
            Some(Command::Tools(_) | Command::Check(_)) => {
                anyhow::bail!("no sources are supported by this build yet")
            }
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

fn init_logging(filter: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("OTC_LOG")
        .or_else(|_| tracing_subscriber::EnvFilter::try_new(filter))
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

#[allow(clippy::print_stdout)] // The listening URL on stdout is the product of start-up.
async fn serve(args: ServeArgs, matches: &clap::ArgMatches) -> anyhow::Result<ExitCode> {
    let mut file = match &args.config {
        Some(path) => FileConfig::load(path)?,
        None => FileConfig::default(),
    };
    init_logging(
        args.log_level
            .as_deref()
            .or(file.log_level.as_deref())
            .unwrap_or("info"),
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

    let flags = source_flags(matches).map_err(anyhow::Error::msg)?;
    if !flags.is_empty() {
        anyhow::bail!("sources are not supported by this build yet");
    }
    let adapters: Vec<Arc<dyn Adapter>> = Vec::new();
    let (catalog, reports) = load_catalog(&adapters).await;
    let failed = reports.iter().filter(|r| r.error.is_some()).count();
    if failed > 0 && (args.strict || file.strict) {
        anyhow::bail!("{failed} source(s) failed to start (--strict)");
    }
    let tools = catalog.len();
    let catalog = SharedCatalog::new(catalog);
    spawn_refreshers(&catalog);
    let state = AppState::new(catalog, settings, auth);

    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("cannot listen on {listen}"))?;
    let addr = listener
        .local_addr()
        .context("cannot read the bound address")?;
    if adapters.is_empty() {
        println!(
            "no sources configured: pass --openapi FILE or --mcp COMMAND (see --help); serving an empty tool list"
        );
    }
    println!("otc-bridge listening on http://{addr} with {tools} tools");
    axum::serve(listener, app(state))
        .with_graceful_shutdown(shutdown_signal())
        .await
        .context("server failed")?;
    for adapter in &adapters {
        adapter.shutdown().await;
    }
    Ok(ExitCode::SUCCESS)
}
