//! OAuth 2.1 to remote MCP servers (issue 12, DESIGN §10), through rmcp's `auth` module: it
//! discovers the protected resource's and the authorization server's metadata (RFC 9728,
//! RFC 8414 / OpenID configuration), registers or identifies the client (pre-registered, client
//! ID metadata document, RFC 7591), runs PKCE S256 with the `resource` parameter (RFC 8707) on
//! the authorization, token and refresh requests, picks scopes (the challenge's, then
//! `scopes_supported`, else none) and refreshes tokens. Nothing of the protocol is written here.
//!
//! What is ours: where tokens live ([`store`]), when to get one, and who plays the user.
//!
//! - `authorization_code`: a person signs in once with `otc-bridge login` ([`login`](crate::mcp::login())); tokens are
//!   kept in the source's token file and refreshed by rmcp. A running bridge cannot ask a
//!   person, so a server that wants a (new) sign-in is a start-up error or a call error naming
//!   the command.
//! - `client_credentials`: the bridge is the client; it gets a token at start-up and again
//!   whenever the server rejects the one it has (there is no refresh token).
//!
//! Tokens, codes and secrets are never logged and never put in an error: rmcp redacts them in
//! `Debug`, and our messages name only URLs and scopes.

pub(super) mod challenges;
pub(crate) mod store;

use std::sync::Arc;

use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationManager, AuthorizationRequest, AuthorizationSession,
    ClientCredentialsConfig, JwtSigningAlgorithm, OAuthClientConfig, WWWAuthenticateParams,
};
use tokio::sync::Mutex;

use super::config::{AuthConfig, McpConfig, OAuthConfig, OAuthGrant};
use super::http::LimitedHttpClient;
use crate::AdapterError;
pub(crate) use challenges::CallerGate;
use store::FileCredentialStore;

/// Sign-ins one connection attempt may run (a server that keeps asking for more scopes, or
/// for scopes already granted, is not followed in a loop).
const MAX_AUTHORIZATIONS: u32 = 3;

/// The OAuth client of one source: the HTTP client that adds its token, and how to get another.
#[derive(Clone)]
pub(crate) struct SourceAuth {
    client: AuthClient<LimitedHttpClient>,
    source: String,
    url: String,
    config: OAuthConfig,
}

impl std::fmt::Debug for SourceAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SourceAuth")
            .field("source", &self.source)
            .field("url", &self.url)
            .field("grant", &self.config.grant)
            .finish_non_exhaustive()
    }
}

impl SourceAuth {
    /// The OAuth client of `config`'s source, with the tokens its file holds; `None` when the
    /// source has no `auth`. With `client_credentials` a token is fetched now.
    pub(crate) async fn of(source: &str, config: &McpConfig) -> Result<Option<Self>, AdapterError> {
        let Some(AuthConfig::Oauth(oauth)) = &config.auth else {
            return Ok(None);
        };
        let Some(url) = config.remote_url() else {
            return Err(AdapterError::setup(
                "`auth: {type: oauth}` needs a remote source (--mcp-url or --mcp-sse)",
            ));
        };
        let manager = manager(source, url, oauth, Tokens::Stored).await?;
        let auth = Self {
            client: AuthClient::new(LimitedHttpClient::new()?, manager),
            source: source.to_owned(),
            url: url.to_owned(),
            config: oauth.clone(),
        };
        if oauth.grant == OAuthGrant::ClientCredentials {
            auth.client_credentials().await?;
        }
        Ok(Some(auth))
    }

    /// The HTTP client for the transport: it sends the current token and refreshes it once
    /// when the server rejects it.
    pub(crate) fn http(&self) -> AuthClient<LimitedHttpClient> {
        self.client.clone()
    }

    /// The server answered `challenge` (401, or 403 `insufficient_scope`): gets a new token when
    /// no person is needed (`client_credentials`); otherwise the error says how to sign in.
    ///
    /// A person may sign in again while the bridge runs: the token file is read on every
    /// request, so the next call uses the new token. For a 403 asking for more scopes, the
    /// scopes are noted beside the token file, and `otc-bridge login` asks for them.
    pub(crate) async fn recover(&self, challenge: &str) -> Result<(), AdapterError> {
        if self.config.grant == OAuthGrant::ClientCredentials {
            return self.client_credentials().await;
        }
        let params = url::Url::parse(&self.url)
            .ok()
            .map(|base| WWWAuthenticateParams::parse(challenge, &base));
        let scope = params.as_ref().and_then(|p| p.scope.clone());
        if let (Some(params), Some(scope), Some(path)) =
            (&params, &scope, token_file(&self.source, &self.config))
            && params.is_insufficient_scope()
        {
            let _ = write_wanted(&path, scope);
        }
        Err(self.needs_login(scope.as_deref()))
    }

    /// The error of a source that needs a person to sign in (for `scope`, when the server said).
    fn needs_login(&self, scope: Option<&str>) -> AdapterError {
        let wanted = scope
            .map(|scope| format!(" (scopes: {scope})"))
            .unwrap_or_default();
        AdapterError::Setup {
            message: format!(
                "the MCP server at {} needs authorization{wanted}: sign in once with \
                 `otc-bridge login` and the same source flags or --config (source `{}`)",
                self.url, self.source
            ),
            source: None,
        }
    }

    /// `client_credentials`: a token for the bridge itself.
    ///
    /// rmcp's exchange future is not `Send` (it holds a form serializer across an await), so it
    /// runs to completion on a blocking thread of its own instead of in the calling task.
    async fn client_credentials(&self) -> Result<(), AdapterError> {
        let this = self.clone();
        let runtime = tokio::runtime::Handle::current();
        tokio::task::spawn_blocking(move || runtime.block_on(this.exchange_client_credentials()))
            .await
            .map_err(|e| AdapterError::setup(format!("the token request stopped: {e}")))?
    }

    async fn exchange_client_credentials(&self) -> Result<(), AdapterError> {
        let client_id =
            self.config.client_id.clone().ok_or_else(|| {
                AdapterError::setup("`grant: client_credentials` needs `client_id`")
            })?;
        let resource = Some(self.url.clone());
        let credentials = match (&self.config.private_key, &self.config.client_secret) {
            (Some(key), _) => ClientCredentialsConfig::PrivateKeyJwt {
                client_id,
                signing_key: key.resolve("auth.private_key")?.into_bytes(),
                signing_algorithm: JwtSigningAlgorithm::ES256,
                token_endpoint_audience: None,
                scopes: self.config.scopes.clone().unwrap_or_default(),
                resource,
            },
            (None, Some(secret)) => ClientCredentialsConfig::ClientSecret {
                client_id,
                client_secret: secret.resolve("auth.client_secret")?,
                scopes: self.config.scopes.clone().unwrap_or_default(),
                resource,
            },
            (None, None) => {
                return Err(AdapterError::setup(
                    "`grant: client_credentials` needs `client_secret` or `private_key`",
                ));
            }
        };
        let mut manager = self.client.auth_manager.lock().await;
        let metadata = manager
            .resolve_metadata()
            .await
            .map_err(|e| self.failed(e))?;
        manager.set_metadata(metadata.metadata);
        manager
            .validate_client_credentials_metadata(&credentials)
            .map_err(|e| self.failed(e))?;
        manager
            .configure_client_credentials(&credentials)
            .map_err(|e| self.failed(e))?;
        manager
            .exchange_client_credentials(&credentials)
            .await
            .map_err(|e| self.failed(e))?;
        Ok(())
    }

    fn failed(&self, error: AuthError) -> AdapterError {
        failed(&self.url, error)
    }
}

pub(super) fn failed(url: &str, error: AuthError) -> AdapterError {
    AdapterError::Unreachable {
        message: format!("cannot authorize to the MCP server at {url}"),
        source: Some(Box::new(error)),
    }
}

impl CallerGate {
    /// The gate of a source with `per_caller: true` (`None` otherwise): callers sign in through
    /// the bridge's `/oauth/callback`, so it needs the bridge's registry of challenges.
    pub(crate) async fn of(
        config: &McpConfig,
        cx: &crate::BuildContext,
    ) -> Result<Option<Arc<Self>>, AdapterError> {
        let Some(AuthConfig::Oauth(oauth)) = &config.auth else {
            return Ok(None);
        };
        if !oauth.per_caller {
            return Ok(None);
        }
        let Some(url) = config.remote_url() else {
            return Err(AdapterError::setup(
                "`per_caller: true` needs a remote source (--mcp-url or --mcp-sse)",
            ));
        };
        let challenges = cx.challenges.clone().ok_or_else(|| {
            AdapterError::setup("`per_caller: true` needs the bridge's HTTP listener for sign-ins")
        })?;
        Self::new(url, oauth, challenges).await.map(Some)
    }
}

/// Whether a manager starts from the tokens in the file.
#[derive(PartialEq, Eq)]
enum Tokens {
    Stored,
    /// A new sign-in: the file is emptied first, so no old token is ever sent.
    Fresh,
}

/// The source's token file.
fn token_file(source: &str, config: &OAuthConfig) -> Option<std::path::PathBuf> {
    config
        .token_file
        .clone()
        .or_else(|| FileCredentialStore::default_path(source))
}

/// Beside the token file: the scopes a server asked for (403 `insufficient_scope`) that the
/// current token lacks, for the next `otc-bridge login`.
fn wanted_file(token_file: &std::path::Path) -> std::path::PathBuf {
    token_file.with_extension("wanted-scopes")
}

fn write_wanted(token_file: &std::path::Path, scope: &str) -> std::io::Result<()> {
    store::write_private(&wanted_file(token_file), scope.as_bytes())
}

async fn manager(
    source: &str,
    url: &str,
    config: &OAuthConfig,
    tokens: Tokens,
) -> Result<AuthorizationManager, AdapterError> {
    let path = token_file(source, config).ok_or_else(|| {
        AdapterError::setup(
            "no per-user config directory for the token file: set `auth.token_file`",
        )
    })?;
    let store = FileCredentialStore::new(path);
    if tokens == Tokens::Fresh {
        rmcp::transport::auth::CredentialStore::clear(&store)
            .await
            .map_err(|e| failed(url, e))?;
    }
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|e| failed(url, e))?;
    manager.set_credential_store(store);
    if tokens == Tokens::Stored
        && manager
            .initialize_from_store()
            .await
            .map_err(|e| failed(url, e))?
    {
        // The file keeps the client id only; a confidential client's secret comes from config.
        if let Some(secret) = &config.client_secret {
            let (client_id, _) = manager
                .get_credentials()
                .await
                .map_err(|e| failed(url, e))?;
            manager
                .configure_client(
                    OAuthClientConfig::new(client_id, "http://127.0.0.1/callback")
                        .with_client_secret(secret.resolve("auth.client_secret")?),
                )
                .map_err(|e| failed(url, e))?;
        }
    }
    Ok(manager)
}

/// Plays the user in a sign-in: opens the authorization URL (a person's browser, or a test) and
/// returns the URL the authorization server redirected to (`redirect_uri?code=…&state=…`).
pub type Visit = Arc<
    dyn Fn(String) -> futures::future::BoxFuture<'static, Result<String, VisitError>> + Send + Sync,
>;

/// Why a [`Visit`] brought back no redirect. The sign-in fails with it as the reason ("the
/// sign-in did not finish: …"), so the text is for the person at the terminal.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VisitError {
    /// Nobody completed the sign-in within `waited` (shown in whole minutes).
    #[error("no redirect within {} minutes", waited.as_secs() / 60)]
    TimedOut {
        /// How long the visit waited for the redirect.
        waited: std::time::Duration,
    },
    /// Whatever received the redirect stopped before one came.
    #[error("the redirect listener stopped")]
    ListenerStopped,
}

/// The first half of `otc-bridge login` ([`crate::mcp::login()`]): the client that signs in to
/// `config`'s server (`redirect_uri` on loopback, `visit` plays the user), the sign-in it runs
/// on each challenge, and the source's token file, where the tokens are kept.
pub(crate) async fn start_login(
    source: &str,
    config: &McpConfig,
    redirect_uri: &str,
    visit: Visit,
) -> Result<(AuthClient<LimitedHttpClient>, SignIn, std::path::PathBuf), AdapterError> {
    let (Some(AuthConfig::Oauth(oauth)), Some(url)) = (&config.auth, config.remote_url()) else {
        return Err(AdapterError::setup(
            "login needs a remote source with OAuth (--mcp-url or --mcp-sse URL --oauth, or `auth: {type: oauth}`)",
        ));
    };
    let manager = manager(source, url, oauth, Tokens::Fresh).await?;
    let token_file = token_file(source, oauth).unwrap_or_default();
    // Scopes a running bridge was refused for, noted beside the token file.
    let wanted: Vec<String> =
        crate::file::read_text(&wanted_file(&token_file), crate::file::MAX_CONFIG_BYTES)
            .map(|s| s.split_whitespace().map(str::to_owned).collect())
            .unwrap_or_default();
    let client = AuthClient::new(LimitedHttpClient::new()?, manager);
    let signed_in = SignIn {
        manager: client.auth_manager.clone(),
        url: url.to_owned(),
        oauth: oauth.clone(),
        redirect_uri: redirect_uri.to_owned(),
        visit,
        wanted,
        done: 0,
    };
    Ok((client, signed_in, token_file))
}

/// The second half of `otc-bridge login`: the scopes noted as wanted beside `token_file` were
/// granted, so the note goes.
pub(crate) fn finish_login(token_file: &std::path::Path) {
    let _ = std::fs::remove_file(wanted_file(token_file));
}

/// The authorization code flow of one `login`, run on each challenge the server answers.
pub(crate) struct SignIn {
    manager: Arc<Mutex<AuthorizationManager>>,
    url: String,
    oauth: OAuthConfig,
    redirect_uri: String,
    visit: Visit,
    /// Scopes to ask for beyond the challenge's (a running bridge was refused without them).
    wanted: Vec<String>,
    done: u32,
}

impl SignIn {
    /// Signs in for `challenge` (a 401, or a 403 asking for more scopes).
    pub(crate) async fn authorize(&mut self, challenge: &str) -> Result<(), AdapterError> {
        let base = url::Url::parse(&self.url)
            .map_err(|e| AdapterError::setup(format!("`{}` is not a URL: {e}", self.url)))?;
        let params = WWWAuthenticateParams::parse(challenge, &base);
        let mut guard = self.manager.lock().await;
        if params.is_insufficient_scope() {
            let granted = guard.get_current_scopes().await;
            let required = params.scope.clone().unwrap_or_default();
            if required
                .split_whitespace()
                .all(|s| granted.iter().any(|g| g == s))
            {
                return Err(AdapterError::setup(format!(
                    "the MCP server at {} refuses the scopes it was granted ({required}); \
                     signing in again would not help",
                    self.url
                )));
            }
        }
        if self.done >= MAX_AUTHORIZATIONS {
            return Err(AdapterError::setup(format!(
                "the MCP server at {} still asks for authorization after {MAX_AUTHORIZATIONS} sign-ins",
                self.url
            )));
        }
        self.done += 1;
        // `AuthorizationSession` takes the manager by value; it is put back whatever happens.
        let placeholder = AuthorizationManager::new(self.url.as_str())
            .await
            .map_err(|e| failed(&self.url, e))?;
        let mut manager = std::mem::replace(&mut *guard, placeholder);
        match manager
            .resolve_metadata_from_challenge(Some(challenge))
            .await
        {
            Ok(found) => manager.set_metadata(found.metadata),
            Err(error) => {
                *guard = manager;
                return Err(failed(&self.url, error));
            }
        }
        let mut request =
            AuthorizationRequest::new(self.redirect_uri.clone()).with_client_name("otc-bridge");
        if let Some(url) = &self.oauth.client_metadata_url {
            request = request.with_client_metadata_url(url.clone());
        }
        if let Some(id) = &self.oauth.client_id {
            request = request.with_preregistered_client(id.clone());
            if let Some(secret) = &self.oauth.client_secret {
                request = request.with_client_secret(secret.resolve("auth.client_secret")?);
            }
        }
        if let Some(scopes) = &self.oauth.scopes {
            request = request.with_scopes(scopes.iter().cloned());
        } else if !self.wanted.is_empty() {
            // Otherwise rmcp picks them (the challenge's, then `scopes_supported`); here the
            // challenge's plus those a call was refused for.
            let mut scopes: Vec<String> = params
                .scope
                .as_deref()
                .unwrap_or_default()
                .split_whitespace()
                .map(str::to_owned)
                .collect();
            for scope in &self.wanted {
                if !scopes.contains(scope) {
                    scopes.push(scope.clone());
                }
            }
            request = request.with_scopes(scopes);
        }
        let session = match AuthorizationSession::new(manager, request).await {
            Ok(session) => session,
            Err((manager, error)) => {
                *guard = manager;
                return Err(failed(&self.url, error));
            }
        };
        let visited = (self.visit)(session.get_authorization_url().to_owned()).await;
        let result = match visited {
            Ok(callback) => session
                .handle_callback_url(&callback)
                .await
                .map(|_| ())
                .map_err(|e| failed(&self.url, e)),
            Err(why) => Err(AdapterError::setup(format!(
                "the sign-in did not finish: {why}"
            ))),
        };
        *guard = session.auth_manager;
        result
    }
}
