//! `otc-bridge login SOURCES…`: signs in to each MCP server behind OAuth with the authorization
//! code flow (PKCE, RFC 8707 resource, scopes from the server; rmcp does the protocol) and keeps
//! the tokens in the source's token file (mode 0600), where `serve` and `mcp` find them.
//!
//! The redirect comes back to a one-shot listener on `127.0.0.1` (a loopback redirect URI, as
//! OAuth for native apps asks); the authorization URL is printed for the person to open. Tokens
//! and codes are never printed or logged.
#![allow(clippy::print_stdout)] // The authorization URL and the outcome are this command's product.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use axum::extract::{OriginalUri, State};
use clap::ArgMatches;
use otc_adapters::mcp::{AuthConfig, OAuthGrant};
use otc_adapters::mcp::{Visit, VisitError};
use otc_bridge::Upstream;
use tokio::sync::{Mutex, mpsc};

use crate::cli::InspectArgs;

/// How long a person has to finish signing in.
const SIGN_IN_TIMEOUT: Duration = Duration::from_secs(600);

pub(crate) async fn login(args: &InspectArgs, matches: &ArgMatches) -> anyhow::Result<ExitCode> {
    // A 401 is how every sign-in starts; rmcp's transport worker logs it as an error when it
    // ends the unauthenticated attempt. Our own errors say what failed.
    super::init_logging("warn,rmcp::transport::worker=off");
    let config = super::resolve(args.config.as_deref(), args.overrides(matches))?;
    super::warn_config(&config);
    let mut signed = 0;
    for source in &config.sources {
        let Upstream::Mcp(mcp) = &source.upstream else {
            continue;
        };
        let Some(AuthConfig::Oauth(auth)) = &mcp.auth else {
            continue;
        };
        if auth.grant == OAuthGrant::ClientCredentials {
            println!(
                "{}: uses client_credentials; nothing to sign in to",
                source.name
            );
            continue;
        }
        let (redirect_uri, visit, server) = callback_listener().await?;
        let outcome = otc_adapters::mcp::login(&source.name, mcp, &redirect_uri, visit).await;
        server.abort();
        let outcome = outcome.with_context(|| format!("signing in to {}", source.name))?;
        if outcome.authorized {
            println!(
                "{}: signed in; {} tools; tokens kept in {}",
                source.name,
                outcome.tools,
                outcome.token_file.display()
            );
        } else {
            println!(
                "{}: the server did not ask for authorization ({} tools)",
                source.name, outcome.tools
            );
        }
        signed += 1;
    }
    if signed == 0 {
        anyhow::bail!(
            "no source to sign in to: pass --mcp-url (or --mcp-sse) URL --oauth, or a --config whose MCP source has `auth: {{type: oauth}}`"
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// A listener on `127.0.0.1:0` for the authorization server's redirect: its redirect URI, the
/// [`Visit`] that prints the authorization URL and waits for the redirect, and its task.
async fn callback_listener() -> anyhow::Result<(String, Visit, tokio::task::JoinHandle<()>)> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .context("cannot listen on 127.0.0.1 for the sign-in redirect")?;
    let address = listener.local_addr()?;
    let base = format!("http://{address}");
    let (sender, receiver) = mpsc::channel::<String>(4);
    let app = axum::Router::new()
        .route("/callback", axum::routing::get(callback))
        .with_state((base.clone(), sender));
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let receiver = Arc::new(Mutex::new(receiver));
    let visit: Visit = Arc::new(move |url: String| {
        let receiver = receiver.clone();
        Box::pin(async move {
            println!("Open this URL to sign in:\n  {url}");
            let mut receiver = receiver.lock().await;
            match tokio::time::timeout(SIGN_IN_TIMEOUT, receiver.recv()).await {
                Ok(Some(callback)) => Ok(callback),
                Ok(None) => Err(VisitError::ListenerStopped),
                Err(_) => Err(VisitError::TimedOut {
                    waited: SIGN_IN_TIMEOUT,
                }),
            }
        })
    });
    Ok((format!("{base}/callback"), visit, server))
}

/// `GET /callback?code=…&state=…`: hands the whole redirect URL to the sign-in.
async fn callback(
    State((base, sender)): State<(String, mpsc::Sender<String>)>,
    OriginalUri(uri): OriginalUri,
) -> axum::response::Html<&'static str> {
    let _ = sender.send(format!("{base}{uri}")).await;
    axum::response::Html(
        "<!doctype html><title>otc-bridge</title><p>Signed in. You can close this tab and return to the terminal.",
    )
}
