//! One MCP client session: connect over the configured transport, find which era the server
//! speaks, and the handle the supervisor watches and the adapter calls through.
//!
//! **Both eras, per server** (DESIGN §10), through rmcp's client lifecycle: we probe with
//! `server/discover` offering 2026-07-28. A `DiscoverResult` (or a modern error) means a
//! stateless server: no session, `_meta` on every request (rmcp adds it), and `list_changed`
//! heard through a `subscriptions/listen` request this module keeps open. Any other answer, or
//! none within rmcp's 10 s, means a handshake-era server: `initialize` offering
//! [`mcp::ProtocolVersion::LATEST_WITH_INITIALIZE`] (older versions accepted), a session, and
//! `notifications/tools/list_changed` delivered to the [`Handler`]. Either way a change becomes a
//! tick on the adapter's catalog channel; nothing above the adapter sees the era. Resources' and
//! prompts' `list_changed` tick it too when the source serves them as tools (issue 27).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use http::{HeaderName, HeaderValue};
use rmcp::model as mcp;
use rmcp::model::SubscriptionFilter;
use rmcp::service::{
    ClientInitializeError, NotificationContext, QuitReason, RunningService,
    RunningServiceCancellationToken,
};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::auth::AuthClient;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, Peer, RoleClient};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::child::{ChildProcess, ChildSpec};
use super::config::{HeaderValueConfig, McpConfig, McpTransportConfig, split_command};
use super::http::LimitedHttpClient;
use super::oauth::{SignIn, SourceAuth};
use super::sse::{Opening, SseAuth, SseTransport};
use super::stdio::StdioTransport;
use crate::{AdapterError, McpEra, McpProtocol};

/// Receives what the server sends on its own.
#[derive(Debug, Clone)]
pub(crate) struct Handler {
    catalog: Arc<watch::Sender<u64>>,
    info: mcp::ClientConfig,
    /// Whether a stateless session keeps `subscriptions/listen` open for list changes (the
    /// source's own session does; a caller's, which only calls, does not).
    listens: bool,
    /// Whether resources and prompts are served as tools: then their `list_changed`
    /// notifications refresh the catalog too (otherwise a change to them changes nothing served).
    resources: bool,
    prompts: bool,
}

impl Handler {
    pub(crate) fn new(catalog: Arc<watch::Sender<u64>>) -> Self {
        let info = mcp::ClientConfig::new(
            mcp::ClientCapabilities::default(),
            mcp::Implementation::new("otc-bridge", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(mcp::ProtocolVersion::LATEST_WITH_INITIALIZE);
        Self {
            catalog,
            info,
            listens: true,
            resources: false,
            prompts: false,
        }
    }

    /// The handler of a source's own session: list changes of what `config` serves as tools
    /// (tools always; resources and prompts when asked for) tick `catalog`.
    pub(crate) fn for_source(catalog: Arc<watch::Sender<u64>>, config: &McpConfig) -> Self {
        Self {
            resources: config.resources.as_tools(),
            prompts: config.prompts.as_tools(),
            ..Self::new(catalog)
        }
    }

    fn tick(&self) {
        self.catalog.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// For a session that only calls tools: list changes are heard by the source's session.
    pub(crate) fn calls_only() -> Self {
        Self {
            listens: false,
            ..Self::new(Arc::new(watch::channel(0).0))
        }
    }
}

/// What a streamable HTTP session authorizes with.
#[derive(Clone)]
pub(crate) enum Bearer {
    /// The source's OAuth client: the bridge's own token, refreshed.
    Source(AuthClient<LimitedHttpClient>),
    /// One caller's token, sent as it was given.
    Caller(String),
}

/// How a session is opened: `server/discover` first, `initialize` when the server is older.
fn lifecycle() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![mcp::ProtocolVersion::V_2026_07_28],
        legacy_version: Some(mcp::ProtocolVersion::LATEST_WITH_INITIALIZE),
    }
}

impl ClientHandler for Handler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tick();
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        if self.resources {
            self.tick();
        }
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        if self.prompts {
            self.tick();
        }
    }

    fn get_info(&self) -> mcp::ClientConfig {
        self.info.clone()
    }
}

/// A connected, initialised session.
pub(crate) struct Session {
    /// Cloneable handle for requests; calls multiplex over it.
    pub(crate) peer: Peer<RoleClient>,
    /// The child process, for stdio sessions.
    pub(crate) child: Option<ChildProcess>,
    /// The protocol the session speaks.
    pub(crate) protocol: McpProtocol,
    cancel: Option<RunningServiceCancellationToken>,
    done: Option<JoinHandle<Result<QuitReason, tokio::task::JoinError>>>,
    /// A stateless session's `subscriptions/listen` request, open while the session lives.
    listener: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("child", &self.child)
            .finish_non_exhaustive()
    }
}

impl Session {
    fn new(service: RunningService<RoleClient, Handler>, child: Option<ChildProcess>) -> Self {
        let peer = service.peer().clone();
        let info = peer.peer_info();
        let version = info.as_ref().map(|i| i.protocol_version.clone());
        let stateless = version
            .as_ref()
            .is_some_and(|v| *v >= mcp::ProtocolVersion::V_2026_07_28);
        let protocol = McpProtocol {
            version: version.map_or_else(|| "unknown".to_owned(), |v| v.to_string()),
            era: if stateless {
                McpEra::Stateless
            } else {
                McpEra::Session
            },
        };
        let handler = service.service();
        let capabilities = info.as_ref().map(|i| &i.capabilities);
        let lists = Lists {
            tools: capabilities
                .and_then(|c| c.tools.as_ref())
                .and_then(|t| t.list_changed)
                .unwrap_or(false),
            resources: handler.resources
                && capabilities
                    .and_then(|c| c.resources.as_ref())
                    .and_then(|r| r.list_changed)
                    .unwrap_or(false),
            prompts: handler.prompts
                && capabilities
                    .and_then(|c| c.prompts.as_ref())
                    .and_then(|p| p.list_changed)
                    .unwrap_or(false),
        };
        let announces_changes = lists.tools || lists.resources || lists.prompts;
        let listener = (stateless && announces_changes && handler.listens)
            .then(|| tokio::spawn(listen(peer.clone(), handler.catalog.clone(), lists)));
        let cancel = Some(service.cancellation_token());
        let done = Some(tokio::spawn(service.waiting()));
        Self {
            peer,
            child,
            protocol,
            cancel,
            done,
            listener,
        }
    }

    /// The child's exit status channel, for stdio sessions.
    pub(crate) fn child_exit(&self) -> Option<watch::Receiver<Option<ExitStatus>>> {
        self.child.as_ref().map(ChildProcess::exit)
    }

    /// Resolves when the session is over: the child exited or the transport closed.
    pub(crate) async fn ended(&mut self) -> String {
        let child_exit = self.child_exit();
        let later_exit = self.child_exit();
        let status = async {
            match child_exit {
                Some(mut exit) => match exit.wait_for(Option::is_some).await {
                    Ok(status) => *status,
                    Err(_) => None,
                },
                None => std::future::pending().await,
            }
        };
        let done = async {
            if let Some(done) = self.done.as_mut() {
                let _ = done.await;
                self.done = None;
            }
        };
        tokio::select! {
            status = status => describe_exit(status),
            () = done => {
                // The transport closes first when a child dies; its exit status says more.
                match later_exit {
                    Some(mut exit) => {
                        let status = tokio::time::timeout(
                            Duration::from_secs(2),
                            exit.wait_for(Option::is_some),
                        )
                        .await;
                        match status {
                            Ok(Ok(status)) => describe_exit(*status),
                            _ => "the connection to the MCP server closed".to_owned(),
                        }
                    }
                    None => "the connection to the MCP server closed".to_owned(),
                }
            }
        }
    }

    /// Ends the session: closes the transport (stdin, HTTP session) and stops the child, with
    /// `SIGTERM` and `grace` before `SIGKILL`.
    pub(crate) async fn stop(mut self, grace: Duration) {
        if let Some(listener) = self.listener.take() {
            listener.abort();
        }
        if let Some(cancel) = self.cancel.take() {
            cancel.cancel();
        }
        if let Some(child) = self.child.take() {
            child.stop(grace).await;
        }
        if let Some(done) = self.done.take() {
            let _ = tokio::time::timeout(Duration::from_secs(5), done).await;
        }
    }

    /// Ends the session at once (after a crash or hang): the child's group is killed.
    pub(crate) fn kill(mut self) {
        if let Some(listener) = self.listener.take() {
            listener.abort();
        }
        if let Some(cancel) = self.cancel.take() {
            cancel.cancel();
        }
        drop(self.child.take());
    }
}

fn describe_exit(status: Option<ExitStatus>) -> String {
    match status {
        Some(status) => format!("the MCP server process exited ({status})"),
        None => "the MCP server process exited".to_owned(),
    }
}

/// The lists whose changes a session listens for: those the server announces changes of and
/// the source serves.
#[derive(Debug, Clone, Copy)]
struct Lists {
    tools: bool,
    resources: bool,
    prompts: bool,
}

/// Keeps a stateless session's `subscriptions/listen` open and ticks `catalog` on each
/// `list_changed` of `lists`. Ends with the session; a server that refuses the request is still
/// re-listed when its list's `ttlMs` runs out.
async fn listen(peer: Peer<RoleClient>, catalog: Arc<watch::Sender<u64>>, lists: Lists) {
    let mut filter = SubscriptionFilter::builder();
    if lists.tools {
        filter = filter.tools_list_changed();
    }
    if lists.resources {
        filter = filter.resources_list_changed();
    }
    if lists.prompts {
        filter = filter.prompts_list_changed();
    }
    let filter = filter.build();
    let mut subscription = match peer.listen(filter).await {
        Ok(subscription) => subscription,
        Err(error) => {
            tracing::debug!(%error, "The MCP server refused subscriptions/listen.");
            return;
        }
    };
    while let Ok(Some(notification)) = subscription.next().await {
        if matches!(
            notification,
            mcp::ServerNotification::ToolListChangedNotification(_)
                | mcp::ServerNotification::ResourceListChangedNotification(_)
                | mcp::ServerNotification::PromptListChangedNotification(_)
        ) {
            catalog.send_modify(|n| *n = n.wrapping_add(1));
        }
    }
}

/// Connects, spawning the child for stdio, and opens the session (`server/discover`, else
/// `initialize`; see the module docs) within the start-up timeout.
///
/// A server that answers `server/discover` with something other than a `DiscoverResult` or an
/// error (some answer every unknown method with `{}`) has a handshake-era lifecycle: the
/// 2026-07-28 transports page says to fall back to `initialize`. rmcp gives up on the transport
/// then, so the session is opened again with `initialize` (a stdio child is started again).
/// Legacy HTTP+SSE predates `server/discover` and always opens with `initialize`.
pub(crate) async fn connect(
    source: &str,
    config: &McpConfig,
    secret_env: &BTreeSet<String>,
    handler: Handler,
    auth: Option<&SourceAuth>,
) -> Result<Session, AdapterError> {
    let http = auth.map(|auth| Bearer::Source(auth.http()));
    match open_any_era(source, config, secret_env, &handler, http.clone()).await {
        Err(Failed::Challenge(challenge)) => {
            // A 401 (or 403) with a token, or without one: get another if no person is needed.
            let Some(auth) = auth else {
                return Err(AdapterError::setup(format!(
                    "the MCP server ({}) asks for authorization; configure `auth: {{type: oauth}}` \
                     (or --oauth) for it",
                    config.describe()
                )));
            };
            auth.recover(&challenge).await?;
            match open_any_era(source, config, secret_env, &handler, http).await {
                Err(Failed::Challenge(_)) => Err(AdapterError::setup(format!(
                    "the MCP server ({}) rejects the token it was just given",
                    config.describe()
                ))),
                opened => opened.map_err(Failed::into_error),
            }
        }
        opened => opened.map_err(Failed::into_error),
    }
}

/// Opens a session in the server's era: `server/discover` first, `initialize` when the answer
/// says so (see [`connect`]).
async fn open_any_era(
    source: &str,
    config: &McpConfig,
    secret_env: &BTreeSet<String>,
    handler: &Handler,
    http: Option<Bearer>,
) -> Result<Session, Failed> {
    if !matches!(config.transport, McpTransportConfig::Sse { .. }) {
        match open(
            source,
            config,
            secret_env,
            handler.clone(),
            lifecycle(),
            http.clone(),
        )
        .await
        {
            Err(Failed::NotDiscover(error)) => tracing::info!(
                upstream = %source,
                %error,
                "The MCP server answered server/discover with neither a result nor an error; \
                 opening it again with initialize."
            ),
            opened => return opened,
        }
    }
    open(
        source,
        config,
        secret_env,
        handler.clone(),
        ClientLifecycleMode::Initialize,
        http,
    )
    .await
}

/// `otc-bridge login`: opens a session with `client`, signing in on each challenge, lists the
/// tools once and closes it. Returns the number of tools and whether a sign-in happened.
pub(crate) async fn list_once(
    source: &str,
    config: &McpConfig,
    client: AuthClient<LimitedHttpClient>,
    sign_in: &mut SignIn,
) -> Result<(usize, bool), AdapterError> {
    let handler = Handler::new(Arc::new(watch::channel(0).0));
    let mut authorized = false;
    let session = loop {
        match open_any_era(
            source,
            config,
            &BTreeSet::new(),
            &handler,
            Some(Bearer::Source(client.clone())),
        )
        .await
        {
            Err(Failed::Challenge(challenge)) => {
                sign_in.authorize(&challenge).await?;
                authorized = true;
            }
            opened => break opened.map_err(Failed::into_error)?,
        }
    };
    let listed = loop {
        match session.peer.list_all_tools().await {
            Err(error) if error.auth_challenge().is_some() => {
                let challenge = error.auth_challenge().unwrap_or_default().to_owned();
                sign_in.authorize(&challenge).await?;
                authorized = true;
            }
            listed => break listed,
        }
    };
    session.stop(Duration::from_secs(1)).await;
    let tools = listed.map_err(|error| AdapterError::Unreachable {
        message: format!("cannot list the tools of {}", config.describe()),
        source: Some(Box::new(error)),
    })?;
    Ok((tools.len(), authorized))
}

/// Opens a session that sends a caller's `token` on every request (a per-caller source; see
/// `super::callers`). A server that refuses the token answers [`Failed::Challenge`].
pub(crate) async fn connect_as_caller(
    source: &str,
    config: &McpConfig,
    token: &str,
) -> Result<Session, Failed> {
    open_any_era(
        source,
        config,
        &BTreeSet::new(),
        &Handler::calls_only(),
        Some(Bearer::Caller(token.to_owned())),
    )
    .await
}

/// Why a session could not be opened.
pub(crate) enum Failed {
    /// `server/discover` got an answer that is neither its result nor an error.
    NotDiscover(AdapterError),
    /// The server wants (other) authorization: its `WWW-Authenticate` challenge.
    Challenge(String),
    Error(AdapterError),
}

impl Failed {
    pub(crate) fn into_error(self) -> AdapterError {
        match self {
            Self::NotDiscover(error) | Self::Error(error) => error,
            Self::Challenge(_) => AdapterError::setup("the MCP server asks for authorization"),
        }
    }

    /// Whether `server/discover` got an answer that is neither its result nor an error.
    fn is_not_discover(cause: &ClientInitializeError) -> bool {
        matches!(
            cause,
            ClientInitializeError::ExpectedInitResult(_)
                | ClientInitializeError::ExpectedInitResponse(_)
        )
    }

    /// Sorts rmcp's start-up failure `cause`, wrapped by `error`.
    fn of(
        cause: ClientInitializeError,
        error: impl FnOnce(Box<dyn std::error::Error + Send + Sync>) -> AdapterError,
    ) -> Self {
        if let Some(challenge) = cause.auth_challenge() {
            return Self::Challenge(challenge.to_owned());
        }
        let not_discover = Self::is_not_discover(&cause);
        let error = error(Box::new(cause));
        if not_discover {
            Self::NotDiscover(error)
        } else {
            Self::Error(error)
        }
    }
}

/// One attempt at opening a session with `mode`.
async fn open(
    source: &str,
    config: &McpConfig,
    secret_env: &BTreeSet<String>,
    handler: Handler,
    mode: ClientLifecycleMode,
    http: Option<Bearer>,
) -> Result<Session, Failed> {
    let timeout = config.startup_timeout();
    let timed_out = || {
        Failed::Error(AdapterError::Setup {
            message: format!(
                "the MCP server ({}) did not finish start-up within {} s",
                config.describe(),
                timeout.as_secs()
            ),
            source: None,
        })
    };
    match &config.transport {
        McpTransportConfig::Stdio {
            command,
            args,
            env,
            inherit_env,
            cwd,
        } => {
            let spec = ChildSpec {
                source: source.to_owned(),
                argv: split_command(command, args).map_err(Failed::Error)?,
                env: env
                    .iter()
                    .map(|(var, value)| Ok((var.clone(), value.resolve(var)?)))
                    .collect::<Result<_, AdapterError>>()
                    .map_err(Failed::Error)?,
                inherit_env: *inherit_env,
                secret_env: secret_env.clone(),
                cwd: cwd.clone(),
                stderr_lines_per_sec: config.stderr_lines_per_sec,
            };
            let (child, stdout, stdin) = ChildProcess::spawn(&spec).map_err(Failed::Error)?;
            let mut exit = child.exit();
            let transport = StdioTransport::new(stdout, stdin);
            let served =
                tokio::time::timeout(timeout, handler.serve_with_lifecycle(transport, mode)).await;
            match served {
                Ok(Ok(service)) => Ok(Session::new(service, Some(child))),
                Ok(Err(error)) => {
                    // Say how the child ended when it died during the handshake (a child that
                    // only answered `server/discover` oddly is alive: no need to wait).
                    let status = if Failed::is_not_discover(&error) {
                        None
                    } else {
                        tokio::time::timeout(Duration::from_secs(2), exit.wait_for(Option::is_some))
                            .await
                            .ok()
                            .and_then(|s| s.ok().and_then(|s| *s))
                    };
                    let why = match status {
                        Some(status) => format!("it exited during start-up ({status})"),
                        None => "the start-up handshake (`server/discover` or `initialize`) failed"
                            .to_owned(),
                    };
                    let message = format!(
                        "cannot start the MCP server `{}`: {why}",
                        spec.argv.join(" ")
                    );
                    Err(Failed::of(error, |source| AdapterError::Setup {
                        message,
                        source: Some(source),
                    }))
                }
                Err(_) => Err(timed_out()),
            }
        }
        McpTransportConfig::StreamableHttp { url, headers } => {
            let transport_config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                .custom_headers(
                    header_map(headers)
                        .map_err(Failed::Error)?
                        .into_iter()
                        .collect::<HashMap<_, _>>(),
                );
            let served = match http {
                Some(Bearer::Source(client)) => {
                    let transport =
                        StreamableHttpClientTransport::with_client(client, transport_config);
                    tokio::time::timeout(timeout, handler.serve_with_lifecycle(transport, mode))
                        .await
                }
                Some(Bearer::Caller(token)) => {
                    let client = LimitedHttpClient::new().map_err(Failed::Error)?;
                    let transport = StreamableHttpClientTransport::with_client(
                        client,
                        transport_config.auth_header(token),
                    );
                    tokio::time::timeout(timeout, handler.serve_with_lifecycle(transport, mode))
                        .await
                }
                None => {
                    let client = LimitedHttpClient::new().map_err(Failed::Error)?;
                    let transport =
                        StreamableHttpClientTransport::with_client(client, transport_config);
                    tokio::time::timeout(timeout, handler.serve_with_lifecycle(transport, mode))
                        .await
                }
            };
            match served {
                Ok(Ok(service)) => Ok(Session::new(service, None)),
                Ok(Err(error)) => Err(unreachable(url, error)),
                Err(_) => Err(timed_out()),
            }
        }
        McpTransportConfig::Sse { url, headers } => {
            let headers = header_map(headers)
                .map_err(Failed::Error)?
                .into_iter()
                .collect();
            let auth = http.map(|bearer| match bearer {
                Bearer::Source(client) => SseAuth::Source(client),
                Bearer::Caller(token) => SseAuth::Caller(token),
            });
            let session = async {
                let transport = SseTransport::connect(url, headers, auth).await.map_err(
                    |opening| match opening {
                        Opening::Challenge(challenge) => Failed::Challenge(challenge),
                        Opening::Failed(error) => Failed::Error(error),
                    },
                )?;
                handler
                    .serve_with_lifecycle(transport, mode)
                    .await
                    .map_err(|error| unreachable(url, error))
            };
            match tokio::time::timeout(timeout, session).await {
                Ok(Ok(service)) => Ok(Session::new(service, None)),
                Ok(Err(error)) => Err(error),
                Err(_) => Err(timed_out()),
            }
        }
    }
}

/// A remote server that did not open a session.
fn unreachable(url: &str, cause: ClientInitializeError) -> Failed {
    Failed::of(cause, |source| AdapterError::Unreachable {
        message: format!("cannot open an MCP session at {url}"),
        source: Some(source),
    })
}

/// Resolves configured headers (reading variables now, so a missing one fails start-up).
fn header_map(
    headers: &BTreeMap<String, HeaderValueConfig>,
) -> Result<Vec<(HeaderName, HeaderValue)>, AdapterError> {
    headers
        .iter()
        .map(|(name, value)| {
            let header = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| AdapterError::setup(format!("`{name}` is not a valid header name")))?;
            let mut value = HeaderValue::from_str(&value.resolve(name)?).map_err(|_| {
                AdapterError::setup(format!(
                    "the value of header `{name}` is not a valid header value"
                ))
            })?;
            value.set_sensitive(true);
            Ok((header, value))
        })
        .collect()
}
