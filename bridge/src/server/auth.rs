//! Server authentication (CHECKLIST §2): HS256 JWT bearer tokens and API keys. Off by default;
//! when off, an `Authorization` header is ignored. `/health` is never authenticated.
//!
//! Secrets (the JWT key, API keys) are read once at start-up and never logged: the types that
//! hold them print `<redacted>`.

use std::fmt;

use axum::extract::{Request, State};
use axum::http::HeaderMap;
use axum::middleware::Next;
use axum::response::Response;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use subtle::ConstantTimeEq;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use super::{AppState, extract};
use crate::access::{Caller, DEFAULT_GROUP_CLAIMS, groups_in_claims};
use crate::rescue::ApiError;

/// HS256 keys shorter than this are weak (RFC 7518 §3.2: at least the hash size, 256 bits).
const MIN_HS256_SECRET_BYTES: usize = 32;

/// The API-key headers of the three dialects (RFC, OTC docs, OXP docs).
pub(crate) const API_KEY_HEADERS: [&str; 3] = ["x-api-key", "otc-api-key", "oxp-api-key"];

/// How callers authenticate, and who each credential makes them (DESIGN.md §14).
pub struct Authenticator {
    jwt: Option<JwtCheck>,
    api_keys: Vec<ApiKey>,
}

/// How bearer tokens are verified, and which of their claims are groups.
struct JwtCheck {
    key: DecodingKey,
    validation: Validation,
    group_claims: Vec<String>,
}

/// One accepted API key and the caller it authenticates.
struct ApiKey {
    secret: Vec<u8>,
    caller: Caller,
}

impl fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Authenticator")
            .field("jwt", &self.jwt.is_some())
            .field("api_keys", &self.api_keys.len())
            .finish()
    }
}

impl Authenticator {
    /// An authenticator accepting HS256 JWTs signed with `secret` and/or any of `api_keys`
    /// (unnamed: each is its own caller, named by a digest of the key).
    ///
    /// Tokens must carry `exp`; `nbf` is honoured; with an `audience`, `aud` is required and
    /// must name one of them; a token with a `crit` header is refused (we implement no
    /// extension, and RFC 7515 §4.1.11 says unknown critical ones must be rejected).
    pub fn new(jwt_secret: Option<&[u8]>, audience: &[String], api_keys: Vec<String>) -> Self {
        let jwt = jwt_secret.map(|secret| {
            if secret.len() < MIN_HS256_SECRET_BYTES {
                tracing::warn!(
                    bytes = secret.len(),
                    "The JWT secret is shorter than {MIN_HS256_SECRET_BYTES} bytes; HS256 tokens signed with it can be brute-forced. Use a longer random secret."
                );
            }
            JwtCheck::new(
                DecodingKey::from_secret(secret),
                &[Algorithm::HS256],
                audience,
            )
        });
        let mut auth = Self {
            jwt,
            api_keys: Vec::new(),
        };
        for key in api_keys {
            auth = auth.with_key(None, key, Vec::new());
        }
        auth
    }

    /// Also accepts `key`, as the caller `name` (unnamed: named by a digest of the key) in
    /// `groups`.
    #[must_use]
    pub fn with_key(mut self, name: Option<String>, key: String, groups: Vec<String>) -> Self {
        let secret = key.into_bytes();
        let unnamed = Caller::named("").scoped("key", &secret);
        let name = name.unwrap_or_else(|| unnamed.scope.replacen(':', "-", 1));
        let caller = Caller {
            name,
            groups,
            ..unnamed
        };
        self.api_keys.push(ApiKey { secret, caller });
        self
    }

    /// Accepts JWTs signed with the private half of `pem` (an RSA or EC public key, PEM), in
    /// place of an HS256 secret: RS256/RS384/RS512/PS256/PS384/PS512 for RSA, ES256/ES384 for
    /// EC.
    pub fn with_jwt_public_key(
        mut self,
        pem: &[u8],
        audience: &[String],
    ) -> Result<Self, jsonwebtoken::errors::Error> {
        self.jwt = Some(match DecodingKey::from_ec_pem(pem) {
            Ok(key) => JwtCheck::new(key, &[Algorithm::ES256, Algorithm::ES384], audience),
            Err(_) => JwtCheck::new(
                DecodingKey::from_rsa_pem(pem)?,
                &[
                    Algorithm::RS256,
                    Algorithm::RS384,
                    Algorithm::RS512,
                    Algorithm::PS256,
                    Algorithm::PS384,
                    Algorithm::PS512,
                ],
                audience,
            ),
        });
        Ok(self)
    }

    /// Tokens must name one of `issuers` in `iss` (no check when empty).
    #[must_use]
    pub fn with_issuers(mut self, issuers: &[String]) -> Self {
        if let Some(jwt) = &mut self.jwt
            && !issuers.is_empty()
        {
            jwt.validation.set_issuer(issuers);
            let mut required = vec!["exp", "iss"];
            if jwt.validation.aud.is_some() {
                required.push("aud");
            }
            jwt.validation.set_required_spec_claims(&required);
        }
        self
    }

    /// The claims whose values are a token's groups (default `groups` and `roles`).
    #[must_use]
    pub fn with_group_claims(mut self, claims: Vec<String>) -> Self {
        if let Some(jwt) = &mut self.jwt {
            jwt.group_claims = claims;
        }
        self
    }

    /// Checks the request's credentials; `Ok` is the caller they authenticate.
    pub fn check(&self, headers: &HeaderMap) -> Result<Caller, AuthError> {
        if !self.api_keys.is_empty() {
            for name in API_KEY_HEADERS {
                if let Some(given) = headers.get(name) {
                    let given = given.as_bytes();
                    // Compare against every key in constant time, so timing reveals nothing
                    // (not even which key matched).
                    let mut found = None;
                    for (i, key) in self.api_keys.iter().enumerate() {
                        let equal = bool::from(key.secret.as_slice().ct_eq(given));
                        found = if equal { Some(i) } else { found };
                    }
                    return match found.and_then(|i| self.api_keys.get(i)) {
                        Some(key) => Ok(key.caller.clone()),
                        None => Err(AuthError::InvalidApiKey { header: name }),
                    };
                }
            }
        }
        let bearer = headers
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim());
        match (&self.jwt, bearer) {
            (Some(jwt), Some(token)) => jwt.check(token),
            (Some(_), None) if self.api_keys.is_empty() => Err(AuthError::MissingBearer),
            (None, Some(_)) | (Some(_), None) | (None, None) => Err(AuthError::MissingCredentials),
        }
    }
}

impl JwtCheck {
    fn new(key: DecodingKey, algorithms: &[Algorithm], audience: &[String]) -> Self {
        let mut validation = Validation::new(algorithms[0]);
        validation.algorithms = algorithms.to_vec();
        validation.leeway = 5;
        validation.validate_nbf = true;
        if audience.is_empty() {
            validation.set_required_spec_claims(&["exp"]);
            validation.validate_aud = false;
        } else {
            validation.set_required_spec_claims(&["exp", "aud"]);
            validation.set_audience(audience);
        }
        Self {
            key,
            validation,
            group_claims: DEFAULT_GROUP_CLAIMS.map(str::to_owned).to_vec(),
        }
    }

    /// The caller a valid token names: its subject (of its issuer), its groups and claims.
    fn check(&self, token: &str) -> Result<Caller, AuthError> {
        refuse_critical(token)?;
        let data = jsonwebtoken::decode::<serde_json::Map<String, serde_json::Value>>(
            token,
            &self.key,
            &self.validation,
        )
        .map_err(AuthError::InvalidToken)?;
        let claims = data.claims;
        let text = |name: &str| claims.get(name).and_then(|v| v.as_str());
        let caller = match text("sub") {
            // One caller per subject (of one issuer), whichever token it holds.
            Some(sub) => {
                let scope = format!("{}\0{sub}", text("iss").unwrap_or_default());
                Caller::named(sub).scoped("jwt", scope.as_bytes())
            }
            // No subject: the token is its own caller.
            None => {
                let unnamed = Caller::named("").scoped("jwt", token.as_bytes());
                let name = unnamed.scope.replacen(':', "-", 1);
                Caller { name, ..unnamed }
            }
        };
        let groups = groups_in_claims(&claims, &self.group_claims);
        Ok(caller.with_groups(groups).with_claims(claims))
    }
}

/// Why a request's credentials do not authenticate it. The words go to the caller as the 401's
/// `developer_message` and to the log: they name what was wrong, never a key or a token.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// An API key header is present, with a key that is not one of the configured ones.
    #[error("the API key in '{header}' is not valid")]
    InvalidApiKey {
        /// The header it came in.
        header: &'static str,
    },
    /// The bearer token does not verify (signature, expiry, audience, shape). Its error is in
    /// the message, so it is not also the source (a cause chain would say it twice).
    #[error("the bearer token is not valid: {0}")]
    InvalidToken(jsonwebtoken::errors::Error),
    /// The bearer token's header cannot be read.
    #[error("the bearer token is not valid: its header is not base64url JSON")]
    UnreadableTokenHeader,
    /// The bearer token names critical header extensions, which must be refused when not
    /// implemented (RFC 7515 §4.1.11).
    #[error(
        "the bearer token is not valid: it names critical header extensions ('crit') this server does not implement"
    )]
    CriticalHeader,
    /// Only JWTs are accepted, and there is no bearer token.
    #[error("missing 'Authorization: Bearer <JWT>' header")]
    MissingBearer,
    /// No credentials of an accepted kind.
    #[error(
        "missing credentials: send 'Authorization: Bearer <JWT>' or an API key header (X-API-Key, OTC-API-Key or OXP-API-Key)"
    )]
    MissingCredentials,
}

/// Refuses a token whose header has `crit`: jsonwebtoken ignores header fields it does not know.
fn refuse_critical(token: &str) -> Result<(), AuthError> {
    let header = token.split('.').next().unwrap_or_default();
    let header: serde_json::Map<String, serde_json::Value> = URL_SAFE_NO_PAD
        .decode(header)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .ok_or(AuthError::UnreadableTokenHeader)?;
    if header.contains_key("crit") {
        return Err(AuthError::CriticalHeader);
    }
    Ok(())
}

/// Middleware: rejects unauthenticated requests with 401 and a `ServerErrorResponse`.
pub(crate) async fn require(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Response {
    // The rules this request is decided under, whatever a reload does while it runs.
    let rules = state.rules();
    let checked = rules
        .auth
        .as_ref()
        .map(|auth| auth.check(request.headers()));
    if let Some(Err(reason)) = checked {
        // A refused call is still a call, for the dashboards.
        if matches!(request.uri().path(), "/tools/call" | "/call") {
            crate::call::unauthenticated(&state.settings().telemetry);
        }
        let default = state.settings().default_dialect;
        let reply = extract::list_reply(request.headers(), None, default)
            .unwrap_or_else(|rejection| rejection.reply);
        return reply.error(ApiError::Unauthorized(reason.to_string()));
    }
    let caller = match checked {
        Some(Ok(caller)) => caller,
        _ => Caller::anonymous(),
    };
    request.extensions_mut().insert(caller);
    request.extensions_mut().insert(rules);
    next.run(request).await
}
