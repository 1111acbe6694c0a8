//! `otc-bridge login`: a person signs in to a remote MCP server once ([`super::oauth`] runs the
//! authorization code flow) and the tools are listed once ([`super::client`]) to prove the
//! token works. Above both: neither knows of the other.

use super::client::list_once;
use super::config::McpConfig;
use super::oauth::{self, Visit};
use crate::AdapterError;

/// What a sign-in gave.
#[derive(Debug)]
pub struct LoginOutcome {
    /// Tools the server listed once signed in.
    pub tools: usize,
    /// Whether the server asked for authorization at all.
    pub authorized: bool,
    /// Where the tokens are kept.
    pub token_file: std::path::PathBuf,
}

/// `otc-bridge login`: signs in to `config`'s server with the authorization code flow
/// (`redirect_uri` on loopback, `visit` plays the user), keeps the tokens in the source's token
/// file (replacing what was there) and lists the tools once to prove the token works.
pub async fn login(
    source: &str,
    config: &McpConfig,
    redirect_uri: &str,
    visit: Visit,
) -> Result<LoginOutcome, AdapterError> {
    let (client, mut signed_in, token_file) =
        oauth::start_login(source, config, redirect_uri, visit).await?;
    let (tools, authorized) = list_once(source, config, client, &mut signed_in).await?;
    oauth::finish_login(&token_file);
    Ok(LoginOutcome {
        tools,
        authorized,
        token_file,
    })
}
