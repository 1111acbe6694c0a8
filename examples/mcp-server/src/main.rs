//! `example-mcp-server`: a demo MCP server built on rmcp's server role, for otc-bridge's tests
//! and demos (tools in [`tools`]).
//!
//! ```text
//! example-mcp-server                      # stdio (JSON-RPC on stdin/stdout)
//! example-mcp-server --http 127.0.0.1:0   # streamable HTTP; prints http://ADDR/mcp
//! example-mcp-server --sse 127.0.0.1:0    # legacy HTTP+SSE; prints http://ADDR/sse
//!
//! # fault options, for the bridge's regression tests (issue 8):
//! --fault-tools     # also list `env`, `huge`, `deep`, `ask` and `trace` (see `tools`)
//! --ignore-eof      # stdio: keep running after stdin closes, like a careless server
//! --grandchild      # start a child (`sleep`) in our process group, like `npx` → `node`
//!
//! # protocol options, for the era tests (issue 12):
//! --era modern|dual|legacy   # which lifecycles it answers (default dual: both, as rmcp does)
//!                            #   modern: server/discover only, `initialize` refused
//!                            #   legacy: `initialize` only, `server/discover` unknown
//! --list-ttl-ms N            # put `ttlMs: N` on the tool list
//! --silent-changes           # `toggle_extra` changes the list without `list_changed`
//! ```
//!
//! In the HTTP modes the URL is the first line on stdout, so a test can bind port 0 and read
//! where the server went. Diagnostics go to stderr. In stdio mode the server exits when its
//! input closes, as the MCP stdio transport asks.

use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;

use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

mod sse;
mod tools;

use tools::{DemoServer, Era};

enum Mode {
    Stdio,
    Http(SocketAddr),
    Sse(SocketAddr),
}

struct Options {
    mode: Mode,
    ignore_eof: bool,
    grandchild: bool,
    server: DemoServer,
}

const USAGE: &str = "usage: example-mcp-server [--http ADDR | --sse ADDR] [--fault-tools] [--ignore-eof] [--grandchild] [--era modern|dual|legacy] [--list-ttl-ms N] [--silent-changes]";

fn parse_args() -> Result<Options, String> {
    let mut options = Options {
        mode: Mode::Stdio,
        ignore_eof: false,
        grandchild: false,
        server: DemoServer::default(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--http" | "--sse" => {
                let addr = args.next().ok_or(USAGE)?;
                let addr = addr
                    .parse()
                    .map_err(|e| format!("`{addr}` is not a socket address: {e}"))?;
                options.mode = if arg == "--http" {
                    Mode::Http(addr)
                } else {
                    Mode::Sse(addr)
                };
            }
            "--fault-tools" => options.server.list_faults = true,
            "--era" => {
                options.server.era = match args.next().as_deref() {
                    Some("modern") => Era::Modern,
                    Some("dual") => Era::Dual,
                    Some("legacy") => Era::Legacy,
                    _ => return Err(USAGE.to_owned()),
                }
            }
            "--list-ttl-ms" => {
                let ms = args.next().and_then(|n| n.parse().ok()).ok_or(USAGE)?;
                options.server.list_ttl_ms = Some(ms);
            }
            "--silent-changes" => options.server.silent_changes = true,
            "--ignore-eof" => options.ignore_eof = true,
            "--grandchild" => options.grandchild = true,
            _ => return Err(USAGE.to_owned()),
        }
    }
    Ok(options)
}

#[tokio::main]
async fn main() -> ExitCode {
    let result = match parse_args() {
        Ok(options) => run(options).await,
        Err(usage) => Err(usage),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("example-mcp-server: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn run(options: Options) -> Result<(), String> {
    let server = options.server;
    // Kept until we exit; never waited for: it is meant to outlive us if nobody kills it.
    let _grandchild = if options.grandchild {
        let child = std::process::Command::new("sleep")
            .arg("3600")
            .stdin(std::process::Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start the grandchild: {e}"))?;
        eprintln!("example-mcp-server: grandchild {}", child.id());
        Some(child)
    } else {
        None
    };
    match options.mode {
        Mode::Stdio => stdio(server).await?,
        Mode::Http(addr) => http(addr, server).await?,
        Mode::Sse(addr) => sse::serve(addr, server).await?,
    }
    if options.ignore_eof {
        // Not `eprintln!`: it panics once stderr is closed, and this process must stay up even
        // when whoever read its stderr is gone.
        let _ = writeln!(
            std::io::stderr(),
            "example-mcp-server: input closed; staying up (--ignore-eof)"
        );
        std::future::pending::<()>().await;
    }
    Ok(())
}

async fn stdio(server: DemoServer) -> Result<(), String> {
    let service = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| format!("cannot start on stdio: {e}"))?;
    service
        .waiting()
        .await
        .map_err(|e| format!("server task failed: {e}"))?;
    Ok(())
}

async fn http(addr: SocketAddr, server: DemoServer) -> Result<(), String> {
    // One DemoServer for all sessions: counters are per process, like the stdio mode.
    let service: StreamableHttpService<DemoServer, LocalSessionManager> =
        StreamableHttpService::new(
            move || Ok(server.clone()),
            Default::default(),
            StreamableHttpServerConfig::default(),
        );
    serve_announced(
        addr,
        axum::Router::new().nest_service("/mcp", service),
        "/mcp",
    )
    .await
}

/// Binds `addr`, prints the URL of `path` on the bound port (the tests read it), and serves `app`.
pub(crate) async fn serve_announced(
    addr: SocketAddr,
    app: axum::Router,
    path: &str,
) -> Result<(), String> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot bind {addr}: {e}"))?;
    let bound = listener
        .local_addr()
        .map_err(|e| format!("no local address: {e}"))?;
    announce(&format!("http://{bound}{path}"));
    axum::serve(listener, app)
        .await
        .map_err(|e| format!("HTTP server failed: {e}"))
}

/// Prints where the server listens: stdout is the product here, read by whoever started us.
#[allow(clippy::print_stdout)]
pub(crate) fn announce(url: &str) {
    println!("{url}");
}
