//! `otc-bridge demo`: the built-in REST service and MCP server ([`crate::demo`]), with the
//! bridge in front of both.
#![allow(clippy::print_stdout)] // The demo's instructions on stdout are its product.

use std::process::ExitCode;

use anyhow::Context as _;
use otc_adapters::mcp::McpConfig;
use otc_adapters::openapi::OpenApiConfig;
use otc_bridge::{DialectName, LimitsConfig, Source, Upstream};
use otc_mappings::otc::Dialect;

use super::serve::{AppOptions, dialect_name, run_server};
use crate::cli::DemoArgs;
use crate::demo::rest;

/// Runs the demo until Ctrl-C.
pub(crate) async fn demo(args: &DemoArgs) -> anyhow::Result<ExitCode> {
    super::init_logging("warn");
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
        Source::with_defaults(
            "notes".to_owned(),
            Upstream::OpenApi(OpenApiConfig::new(rest.document_url())),
        ),
        Source::with_defaults(
            "demo-tools".to_owned(),
            Upstream::Mcp(McpConfig::stdio(&command)),
        ),
    ];
    super::status!(
        "demo REST service (OpenAPI document {}) and demo MCP server (a child process)",
        rest.document_url()
    );
    let dialect: Dialect = args.dialect.map_or(DialectName::Otc, Into::into).into();
    let mut settings = LimitsConfig::default().server_settings(dialect)?;
    settings.telemetry.metrics = Some(std::sync::Arc::new(otc_bridge::Metrics::new(true)));
    let idempotency = otc_bridge::Idempotency::new(None, &Default::default()).await?;
    settings.idempotency = Some(std::sync::Arc::new(idempotency));
    let options = AppOptions {
        build: otc_adapters::BuildContext::default(),
        connections: otc_bridge::ConnectionLimits::default(),
        settings,
        auth: None,
        allow_partial: false,
        public_url: None,
        reload: None,
        search: None,
    };
    let code = run_server(listener, &sources, options, |addr, tools| {
        let url = format!("http://{addr}");
        super::status!("otc-bridge listening on {url} with {tools} tools (dialect {})", dialect_name(dialect));
        super::status!();
        super::status!("Try it (Ctrl-C stops the demo):");
        super::status!("  # the catalog page: open it in a browser to browse, search and try the tools");
        super::status!("  {url}/");
        super::status!("  # list the tools");
        super::status!("  curl -s {url}/tools");
        super::status!("  # a successful call (the REST service, through its OpenAPI document)");
        super::status!(
            "  curl -s {url}/tools/call -H 'content-type: application/json' -d '{{\"request\":{{\"tool_id\":\"DemoNotes.CreateNote\",\"input\":{{\"title\":\"Hello\",\"body\":\"Written through OTC\"}}}}}}'"
        );
        super::status!("  # an invalid input: 422 with parameter_errors (the MCP server's schema)");
        super::status!(
            "  curl -s {url}/tools/call -H 'content-type: application/json' -d '{{\"request\":{{\"tool_id\":\"DemoTools.RollDice\",\"input\":{{\"sides\":\"many\"}}}}}}'"
        );
    })
    .await;
    let _ = rest.shutdown().await;
    code
}
