//! Per-caller authorization (issue 12, DESIGN §10): the standard's Tool Authorization Challenge
//! for MCP servers behind OAuth.
//!
//! A source with `per_caller: true` sends each call with its caller's token. A caller without
//! one (or with one the server refuses) gets a challenge: `url`, an authorization request
//! (PKCE S256, `resource`) whose redirect comes back to the bridge's `/oauth/callback`, and
//! `check_url`, where the caller polls until the bridge has exchanged the code and hands it the
//! token, once. rmcp builds the request and exchanges the code; what is ours is the registry of
//! challenges in flight ([`Challenges`], one per bridge) and each source's client ([`CallerGate`]).
//!
//! Who signed in (issue 26): the token response of a completed sign-in names its user, in an
//! OpenID Connect `id_token` (a sign-in that asked for `openid`) or an access token that is a
//! JWT. Either came straight from the authorization server's token endpoint, so its claims are
//! taken as the server's word without checking a signature (OpenID Connect Core §3.1.3.7), once
//! its `iss` is that server. The bridge keeps the token's SHA-256 and the subject, never the
//! token, until the token expires (at most [`MAX_SIGNED_IN`], oldest first out), so a call that
//! carries the token is made by a caller named after its subject ([`Challenges::subject`]).
//!
//! Bounds: at most [`MAX_PENDING`] challenges are in flight, each for [`CHALLENGE_TTL`]; the
//! oldest is forgotten first. A check id is 244 random bits and is the only way to the token;
//! the `state` in the authorization URL is another random value, so whoever sees the URL (the
//! user, the authorization server's logs) cannot collect the token.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use otc_mappings::otc::ToolAuthorizationChallenge;
use rmcp::transport::auth::{
    AuthError, AuthorizationCallback, AuthorizationManager, AuthorizationRequest,
    AuthorizationSession, CredentialStore, StateStore, StoredAuthorizationState, StoredCredentials,
    WWWAuthenticateParams,
};

use super::super::config::{OAuthConfig, OAuthGrant};
use crate::AdapterError;

/// Challenges in flight at once, across every source; beyond it the oldest is forgotten.
pub(crate) const MAX_PENDING: usize = 1024;

/// How long a challenge waits for its user, and a completed one for its caller.
pub(crate) const CHALLENGE_TTL: Duration = Duration::from_secs(600);

/// Sign-ins whose subject is remembered at once; beyond it the oldest is forgotten.
pub(crate) const MAX_SIGNED_IN: usize = 4096;

/// How long a subject is remembered when the token response says nothing of expiry, and at most.
const SIGNED_IN_DEFAULT: Duration = Duration::from_secs(3600);
const SIGNED_IN_MAX: Duration = Duration::from_secs(24 * 3600);

/// The challenges of one bridge, and the URLs they come back to.
pub struct Challenges {
    /// `{public}/oauth/callback`: the redirect URI of every per-caller sign-in.
    callback: String,
    /// `{public}/oauth/check/`: each check URL is this plus the check id.
    check: String,
    pending: Mutex<HashMap<String, Pending>>,
    /// Completed sign-ins' subjects, by the SHA-256 of the token handed out.
    signed_in: Mutex<lru::LruCache<[u8; 32], SignedIn>>,
}

/// Who a token handed out by a sign-in belongs to.
#[derive(Debug, Clone)]
struct SignedIn {
    issuer: String,
    subject: String,
    until: Instant,
}

/// The SHA-256 of a token: what the bridge keeps of it.
fn digest(token: &str) -> [u8; 32] {
    use sha2::Digest as _;
    sha2::Sha256::digest(token.as_bytes()).into()
}

/// The `sub` of `jwt` when its `iss` is `issuer` (its signature unchecked: see the module docs).
fn jwt_subject(jwt: &str, issuer: &str) -> Option<String> {
    use base64::Engine as _;
    let payload = jwt.split('.').nth(1)?;
    let claims: serde_json::Value = serde_json::from_slice(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(payload.trim_end_matches('='))
            .ok()?,
    )
    .ok()?;
    let same = |a: &str| a.trim_end_matches('/') == issuer.trim_end_matches('/');
    let subject = claims.get("sub")?.as_str()?;
    (same(claims.get("iss")?.as_str()?) && !subject.is_empty()).then(|| subject.to_owned())
}

/// The subject a token response names: its `id_token`'s, else its access token's when that is
/// a JWT of `issuer`.
fn subject_of(token: &rmcp::transport::auth::OAuthTokenResponse, issuer: &str) -> Option<String> {
    use oauth2::TokenResponse as _;
    let id_token = token
        .extra_fields()
        .0
        .get("id_token")
        .and_then(serde_json::Value::as_str);
    id_token
        .into_iter()
        .chain([token.access_token().secret().as_str()])
        .find_map(|jwt| jwt_subject(jwt, issuer))
}

impl std::fmt::Debug for Challenges {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Challenges")
            .field("callback", &self.callback)
            .finish_non_exhaustive()
    }
}

/// One sign-in in flight, keyed by its `state`.
struct Pending {
    created: Instant,
    /// rmcp's PKCE verifier and what it expects back; taken by the exchange.
    pkce: Option<StoredAuthorizationState>,
    /// Set once the challenge is handed out.
    check_id: Option<String>,
    gate: Option<Arc<CallerGate>>,
    status: Status,
}

enum Status {
    Pending,
    /// The token, until its caller collects it.
    Completed(Option<String>),
    Failed(String),
}

/// What `check_url` answers (`AuthorizationChallengeCheckResponse`, open).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CheckAnswer {
    /// `pending`, `completed` or `failed`.
    pub status: &'static str,
    /// The access token, the first time a completed challenge is checked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// The provider id the token is for (`context.authorization[].id`), with the token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Why it failed, or that the token was already collected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Why a redirect to `/oauth/callback` did not complete a challenge; safe to show the user.
#[derive(Debug, thiserror::Error)]
pub enum CallbackError {
    /// No such challenge (never issued, expired, or already used).
    #[error("this sign-in is unknown or has expired; ask for a new one")]
    Unknown,
    /// The redirect lacks `code` or `state`.
    #[error("the redirect is missing its code or state")]
    Malformed,
    /// The authorization server said no (`error=…`).
    #[error("the authorization server refused: {0}")]
    Refused(String),
    /// The code could not be exchanged for a token.
    #[error("the code could not be exchanged for a token at the authorization server")]
    Exchange,
}

impl Challenges {
    /// The registry of a bridge reachable at `public_url` (scheme, host, port; no trailing `/`).
    pub fn new(public_url: &str) -> Arc<Self> {
        let base = public_url.trim_end_matches('/');
        Arc::new(Self {
            callback: format!("{base}/oauth/callback"),
            check: format!("{base}/oauth/check/"),
            pending: Mutex::new(HashMap::new()),
            signed_in: Mutex::new(lru::LruCache::new(
                std::num::NonZeroUsize::new(MAX_SIGNED_IN).unwrap_or(std::num::NonZeroUsize::MIN),
            )),
        })
    }

    /// The subject of the user who signed in through this bridge and was handed `token` for
    /// `issuer`'s tools, while the token lasts; `None` for any other token.
    pub fn subject(&self, issuer: &str, token: &str) -> Option<String> {
        let mut signed_in = self
            .signed_in
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let key = digest(token);
        let known = signed_in.get(&key)?;
        if known.until <= Instant::now() {
            signed_in.pop(&key);
            return None;
        }
        (known.issuer == issuer).then(|| known.subject.clone())
    }

    /// Remembers who `token` belongs to (see the module docs).
    fn remember(&self, issuer: &str, token: &rmcp::transport::auth::OAuthTokenResponse) {
        use oauth2::TokenResponse as _;
        let Some(subject) = subject_of(token, issuer) else {
            return;
        };
        let lasts = token
            .expires_in()
            .unwrap_or(SIGNED_IN_DEFAULT)
            .min(SIGNED_IN_MAX);
        self.signed_in
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .put(
                digest(token.access_token().secret()),
                SignedIn {
                    issuer: issuer.to_owned(),
                    subject,
                    until: Instant::now() + lasts,
                },
            );
    }

    /// The redirect URI every per-caller client registers.
    pub fn callback_url(&self) -> &str {
        &self.callback
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Pending>> {
        self.pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Forgets expired challenges and, when full, the oldest.
    fn make_room(pending: &mut HashMap<String, Pending>) {
        pending.retain(|_, p| p.created.elapsed() < CHALLENGE_TTL);
        while pending.len() >= MAX_PENDING {
            let oldest = pending
                .iter()
                .min_by_key(|(_, p)| p.created)
                .map(|(state, _)| state.clone());
            match oldest {
                Some(state) => pending.remove(&state),
                None => break,
            };
        }
    }

    /// `GET /oauth/check/{id}`.
    pub fn check(&self, check_id: &str) -> CheckAnswer {
        let mut pending = self.lock();
        pending.retain(|_, p| p.created.elapsed() < CHALLENGE_TTL);
        let found = pending
            .values_mut()
            .find(|p| p.check_id.as_deref() == Some(check_id));
        let answer = |status, message: Option<&str>| CheckAnswer {
            status,
            token: None,
            id: None,
            message: message.map(str::to_owned),
        };
        match found {
            None => answer("failed", Some("unknown or expired challenge")),
            Some(p) => match &mut p.status {
                Status::Pending => answer("pending", None),
                Status::Failed(why) => answer("failed", Some(why)),
                Status::Completed(token) => match token.take() {
                    Some(token) => CheckAnswer {
                        status: "completed",
                        token: Some(token),
                        id: p.gate.as_ref().map(|g| g.issuer.clone()),
                        message: None,
                    },
                    None => answer("completed", Some("the token was already collected")),
                },
            },
        }
    }

    /// `GET /oauth/callback?code=…&state=…`: exchanges the code of the challenge `state`
    /// names. The query is the redirect's, as the authorization server sent it.
    pub async fn complete(&self, query: &str) -> Result<(), CallbackError> {
        let url = format!("{}?{query}", self.callback);
        let params: HashMap<String, String> = url::form_urlencoded::parse(query.as_bytes())
            .into_owned()
            .collect();
        let state = params.get("state").ok_or(CallbackError::Malformed)?;
        let gate = {
            let pending = self.lock();
            let p = pending.get(state).ok_or(CallbackError::Unknown)?;
            if !matches!(p.status, Status::Pending) {
                return Err(CallbackError::Unknown);
            }
            p.gate.clone().ok_or(CallbackError::Unknown)?
        };
        if let Some(error) = params.get("error") {
            // The user declined, or the server refused the request.
            let why = params
                .get("error_description")
                .map_or_else(|| error.clone(), |d| format!("{error}: {d}"));
            self.finish(state, Status::Failed(why.clone()));
            return Err(CallbackError::Refused(why));
        }
        let callback =
            AuthorizationCallback::from_redirect_url(&url).map_err(|_| CallbackError::Malformed)?;
        let exchanged = gate
            .manager
            .exchange_code_for_token_with_issuer(
                &callback.code,
                &callback.csrf_token,
                callback.issuer.as_deref(),
            )
            .await;
        match exchanged {
            Ok(token) => {
                use oauth2::TokenResponse as _;
                self.remember(&gate.issuer, &token);
                let token = token.access_token().secret().clone();
                self.finish(state, Status::Completed(Some(token)));
                Ok(())
            }
            Err(error) => {
                tracing::warn!(issuer = %gate.issuer, %error, "A per-caller sign-in failed at the token exchange.");
                self.finish(state, Status::Failed(CallbackError::Exchange.to_string()));
                Err(CallbackError::Exchange)
            }
        }
    }

    fn finish(&self, state: &str, status: Status) {
        if let Some(p) = self.lock().get_mut(state) {
            p.status = status;
            p.pkce = None;
        }
    }
}

/// rmcp keeps each authorization's PKCE verifier here, so the registry's bounds cover it.
struct StateSlots(Arc<Challenges>);

#[async_trait]
impl StateStore for StateSlots {
    async fn save(&self, csrf: &str, state: StoredAuthorizationState) -> Result<(), AuthError> {
        let mut pending = self.0.lock();
        Challenges::make_room(&mut pending);
        pending.insert(
            csrf.to_owned(),
            Pending {
                created: Instant::now(),
                pkce: Some(state),
                check_id: None,
                gate: None,
                status: Status::Pending,
            },
        );
        Ok(())
    }

    async fn load(&self, csrf: &str) -> Result<Option<StoredAuthorizationState>, AuthError> {
        Ok(self.0.lock().get(csrf).and_then(|p| p.pkce.clone()))
    }

    async fn delete(&self, csrf: &str) -> Result<(), AuthError> {
        // The entry stays (its status is what `check_url` reports); only the verifier goes.
        if let Some(p) = self.0.lock().get_mut(csrf) {
            p.pkce = None;
        }
        Ok(())
    }
}

/// Callers' tokens are handed to callers, never kept: rmcp saves what it exchanged here.
struct Discard;

#[async_trait]
impl CredentialStore for Discard {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        Ok(None)
    }
    async fn save(&self, _credentials: StoredCredentials) -> Result<(), AuthError> {
        Ok(())
    }
    async fn clear(&self) -> Result<(), AuthError> {
        Ok(())
    }
}

/// The OAuth client callers sign in through, for one source.
pub(crate) struct CallerGate {
    manager: AuthorizationManager,
    /// The authorization server's issuer: the provider id of the tools' requirement.
    pub(crate) issuer: String,
    /// The scopes each sign-in asks for.
    pub(crate) scopes: Vec<String>,
    /// The scopes the server supports (its resource metadata, else the authorization
    /// server's): a step-up asks for them when the server's refusal names none.
    supported: Vec<String>,
    challenges: Arc<Challenges>,
    url: String,
}

impl std::fmt::Debug for CallerGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallerGate")
            .field("issuer", &self.issuer)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

impl CallerGate {
    /// Discovers the server's authorization server and identifies the bridge to it as a client
    /// whose redirect URI is the bridge's callback: `client_id` (with its secret) when the
    /// bridge's own grant is `authorization_code`, else a client ID metadata document, else
    /// dynamic registration.
    pub(crate) async fn new(
        url: &str,
        oauth: &OAuthConfig,
        challenges: Arc<Challenges>,
    ) -> Result<Arc<Self>, AdapterError> {
        let failed = |error: AuthError| super::failed(url, error);
        let mut manager = AuthorizationManager::new(url).await.map_err(failed)?;
        let found = manager.resolve_metadata().await.map_err(failed)?;
        let issuer = found
            .metadata
            .issuer
            .clone()
            .or_else(|| {
                url::Url::parse(&found.metadata.authorization_endpoint)
                    .ok()
                    .map(|u| u.origin().ascii_serialization())
            })
            .ok_or_else(|| {
                AdapterError::setup(format!("the authorization server of {url} names no issuer"))
            })?;
        manager.set_metadata(found.metadata);
        manager.set_credential_store(Discard);
        manager.set_state_store(StateSlots(challenges.clone()));
        // Callers are handed the access token alone: a refresh token (`offline_access`, which
        // rmcp adds when the server supports it) would be issued for nobody.
        let mut supported = manager.select_scopes(None, &[]);
        supported.retain(|scope| scope != "offline_access");
        let scopes = oauth
            .caller_scopes
            .clone()
            .or_else(|| oauth.scopes.clone())
            .unwrap_or_else(|| supported.clone());
        // The client is registered for every scope a step-up may ask for: an authorization
        // server may refuse a client the scopes it did not register.
        let mut registered = scopes.clone();
        registered.extend(supported.iter().filter(|s| !scopes.contains(s)).cloned());
        let mut request = AuthorizationRequest::new(challenges.callback_url())
            .with_client_name("otc-bridge")
            .with_scopes(registered);
        // A bridge behind a public URL is a web client; on loopback, a native one (RFC 8252).
        if !is_loopback(challenges.callback_url()) {
            request = request.with_application_type("web");
        }
        if let Some(metadata_url) = &oauth.client_metadata_url {
            request = request.with_client_metadata_url(metadata_url.clone());
        }
        // The client_credentials client is a machine's: it has no redirect URI to sign in with.
        if oauth.grant == OAuthGrant::AuthorizationCode
            && let Some(id) = &oauth.client_id
        {
            request = request.with_preregistered_client(id.clone());
            if let Some(secret) = &oauth.client_secret {
                request = request.with_client_secret(secret.resolve("auth.client_secret")?);
            }
        }
        let session = AuthorizationSession::new(manager, request)
            .await
            .map_err(|(_, error)| failed(error))?;
        // Building the session made one authorization URL nobody will visit.
        if let Some(state) = query_param(&session.auth_url, "state") {
            challenges.lock().remove(&state);
        }
        Ok(Arc::new(Self {
            manager: session.auth_manager,
            issuer,
            scopes,
            supported,
            challenges,
            url: url.to_owned(),
        }))
    }

    /// The scopes a new sign-in asks for after the server refused a caller's token with
    /// `www_authenticate`: for a 403 `insufficient_scope`, the usual scopes plus those it
    /// names (else all it supports), so that the caller's next token has them; otherwise (an
    /// expired or revoked token) the usual scopes.
    pub(crate) fn scopes_after(&self, www_authenticate: &str) -> Vec<String> {
        step_up(&self.scopes, &self.supported, www_authenticate, &self.url)
    }

    /// A new challenge for a caller: a fresh authorization request for `scopes` and its check
    /// URL.
    pub(crate) async fn challenge(
        self: &Arc<Self>,
        scopes: &[String],
    ) -> Result<ToolAuthorizationChallenge, AdapterError> {
        let scopes: Vec<&str> = scopes.iter().map(String::as_str).collect();
        let url = self
            .manager
            .get_authorization_url(&scopes)
            .await
            .map_err(|error| super::failed(&self.url, error))?;
        let state = query_param(&url, "state")
            .ok_or_else(|| AdapterError::setup("the authorization URL has no state"))?;
        let check_id = format!(
            "{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
        {
            let mut pending = self.challenges.lock();
            let entry = pending
                .get_mut(&state)
                .ok_or_else(|| AdapterError::setup("too many sign-ins in flight"))?;
            entry.check_id = Some(check_id.clone());
            entry.gate = Some(self.clone());
        }
        Ok(ToolAuthorizationChallenge {
            id: self.issuer.clone(),
            url,
            check_url: Some(format!("{}{check_id}", self.challenges.check)),
        })
    }
}

/// [`CallerGate::scopes_after`], for the server at `url`.
fn step_up(
    scopes: &[String],
    supported: &[String],
    www_authenticate: &str,
    url: &str,
) -> Vec<String> {
    let Ok(base) = url::Url::parse(url) else {
        return scopes.to_vec();
    };
    let params = WWWAuthenticateParams::parse(www_authenticate, &base);
    if !params.is_insufficient_scope() {
        return scopes.to_vec();
    }
    let wanted: Vec<&str> = match params.scope.as_deref() {
        Some(scope) if !scope.trim().is_empty() => scope.split_whitespace().collect(),
        _ => supported.iter().map(String::as_str).collect(),
    };
    let mut scopes = scopes.to_vec();
    for scope in wanted {
        if !scopes.iter().any(|s| s == scope) {
            scopes.push(scope.to_owned());
        }
    }
    scopes
}

fn query_param(url: &str, name: &str) -> Option<String> {
    url::Url::parse(url)
        .ok()?
        .query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

fn is_loopback(url: &str) -> bool {
    url::Url::parse(url).is_ok_and(|u| match u.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d == "localhost",
        None => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jwt(claims: &serde_json::Value) -> String {
        use base64::Engine as _;
        let part = |v: &serde_json::Value| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string())
        };
        format!(
            "{}.{}.signature",
            part(&serde_json::json!({"alg": "RS256"})),
            part(claims)
        )
    }

    #[test]
    fn a_subject_is_read_only_from_a_jwt_of_the_sign_ins_issuer() {
        let issuer = "https://auth.example.com";
        let of = |claims| jwt_subject(&jwt(&claims), issuer);
        assert_eq!(
            of(serde_json::json!({"iss": issuer, "sub": "alice"})).as_deref(),
            Some("alice")
        );
        assert_eq!(
            of(serde_json::json!({"iss": "https://auth.example.com/", "sub": "bob"})).as_deref(),
            Some("bob")
        );
        assert_eq!(
            of(serde_json::json!({"iss": "https://evil.example", "sub": "alice"})),
            None
        );
        assert_eq!(of(serde_json::json!({"sub": "alice"})), None);
        assert_eq!(of(serde_json::json!({"iss": issuer, "sub": ""})), None);
        assert_eq!(jwt_subject("opaque-token", issuer), None);
        assert_eq!(jwt_subject("a.%%%.c", issuer), None);
    }

    #[test]
    fn a_remembered_subject_is_found_by_its_token_and_issuer_only_while_it_lasts() {
        let challenges = Challenges::new("http://127.0.0.1:1");
        let remember = |token: &str, until: Instant| {
            challenges.signed_in.lock().unwrap().put(
                digest(token),
                SignedIn {
                    issuer: "https://auth.example.com".to_owned(),
                    subject: "alice".to_owned(),
                    until,
                },
            );
        };
        remember("token-1", Instant::now() + Duration::from_secs(60));
        remember("token-2", Instant::now());
        assert_eq!(
            challenges
                .subject("https://auth.example.com", "token-1")
                .as_deref(),
            Some("alice")
        );
        assert_eq!(challenges.subject("https://other.example", "token-1"), None);
        assert_eq!(
            challenges.subject("https://auth.example.com", "token-2"),
            None
        );
        assert_eq!(
            challenges.subject("https://auth.example.com", "token-3"),
            None
        );
    }

    fn verifier(n: usize) -> StoredAuthorizationState {
        StoredAuthorizationState::new(
            &oauth2::PkceCodeVerifier::new(format!("verifier-{n:0>43}")),
            &oauth2::CsrfToken::new(format!("state-{n}")),
        )
    }

    #[tokio::test]
    async fn sign_ins_in_flight_are_bounded_and_the_oldest_goes_first() {
        let challenges = Challenges::new("http://127.0.0.1:9/");
        assert_eq!(
            challenges.callback_url(),
            "http://127.0.0.1:9/oauth/callback"
        );
        let slots = StateSlots(challenges.clone());
        for n in 0..MAX_PENDING + 10 {
            slots
                .save(&format!("state-{n}"), verifier(n))
                .await
                .unwrap();
        }
        assert_eq!(challenges.lock().len(), MAX_PENDING);
        assert!(slots.load("state-0").await.unwrap().is_none());
        let last = format!("state-{}", MAX_PENDING + 9);
        assert!(slots.load(&last).await.unwrap().is_some());
        // The exchange takes the verifier; what `check_url` reports stays.
        slots.delete(&last).await.unwrap();
        assert!(slots.load(&last).await.unwrap().is_none());
        assert!(challenges.lock().contains_key(&last));
    }

    #[test]
    fn a_refusal_for_want_of_scope_asks_for_more() {
        let url = "http://127.0.0.1:9/mcp";
        let strings = |s: &[&str]| s.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let (scopes, supported) = (strings(&["read"]), strings(&["read", "write", "admin"]));
        // The scope the server names is added to the usual ones.
        let named = r#"Bearer error="insufficient_scope", scope="read admin""#;
        assert_eq!(
            step_up(&scopes, &supported, named, url),
            strings(&["read", "admin"])
        );
        // None named (the Python SDK's 403): all the server supports.
        let unnamed =
            r#"Bearer error="insufficient_scope", error_description="Required scope: admin""#;
        assert_eq!(
            step_up(&scopes, &supported, unnamed, url),
            strings(&["read", "write", "admin"])
        );
        // An expired or revoked token: the usual scopes, no more.
        let expired = r#"Bearer error="invalid_token", scope="admin""#;
        assert_eq!(step_up(&scopes, &supported, expired, url), scopes);
    }

    #[tokio::test]
    async fn unknown_checks_fail_and_stray_redirects_are_refused() {
        let challenges = Challenges::new("http://127.0.0.1:9");
        let answer = challenges.check("no-such-check");
        assert_eq!(answer.status, "failed");
        assert!(answer.token.is_none());
        assert!(matches!(
            challenges.complete("code=abc").await,
            Err(CallbackError::Malformed)
        ));
        assert!(matches!(
            challenges.complete("code=abc&state=never-issued").await,
            Err(CallbackError::Unknown)
        ));
        // A state rmcp saved but no challenge was made from (no gate): still unknown.
        StateSlots(challenges.clone())
            .save("state-1", verifier(1))
            .await
            .unwrap();
        assert!(matches!(
            challenges.complete("code=abc&state=state-1").await,
            Err(CallbackError::Unknown)
        ));
    }
}
