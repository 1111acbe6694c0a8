//! `example-mcp-server`: a demo MCP server built on rmcp's server role, for otc-bridge's tests
//! and demos (tools in [`tools`]).
//!
//! ```text
//! example-mcp-server                      # stdio (JSON-RPC on stdin/stdout)
//! example-mcp-server --http 127.0.0.1:0   # streamable HTTP; prints http://ADDR/mcp
//! example-mcp-server --sse 127.0.0.1:0    # legacy HTTP+SSE; prints http://ADDR/sse
//! ```
//!
//! In the HTTP modes the URL is the first line on stdout, so a test can bind port 0 and read
//! where the server went. Diagnostics go to stderr. In stdio mode the server exits when its
//! input closes, as the MCP stdio transport asks.

use std::net::SocketAddr;
use std::process::ExitCode;

use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

mod sse;
mod tools;

use tools::DemoServer;

enum Mode {
    Stdio,
    Http(SocketAddr),
    Sse(SocketAddr),
}

fn parse_args() -> Result<Mode, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => Ok(Mode::Stdio),
        [flag, addr] if flag == "--http" || flag == "--sse" => {
            let addr = addr
                .parse()
                .map_err(|e| format!("`{addr}` is not a socket address: {e}"))?;
            Ok(if flag == "--http" {
                Mode::Http(addr)
            } else {
                Mode::Sse(addr)
            })
        }
        _ => Err("usage: example-mcp-server [--http ADDR | --sse ADDR]".to_owned()),
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let result = match parse_args() {
        Ok(Mode::Stdio) => stdio().await,
        Ok(Mode::Http(addr)) => http(addr).await,
        Ok(Mode::Sse(addr)) => sse::serve(addr).await,
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

async fn stdio() -> Result<(), String> {
    let service = DemoServer::default()
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| format!("cannot start on stdio: {e}"))?;
    service
        .waiting()
        .await
        .map_err(|e| format!("server task failed: {e}"))?;
    Ok(())
}

async fn http(addr: SocketAddr) -> Result<(), String> {
    // One DemoServer for all sessions: counters are per process, like the stdio mode.
    let server = DemoServer::default();
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
