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
use crate::rescue::ApiError;

/// HS256 keys shorter than this are weak (RFC 7518 §3.2: at least the hash size, 256 bits).
const MIN_HS256_SECRET_BYTES: usize = 32;

/// The API-key headers of the three dialects (RFC, OTC docs, OXP docs).
pub(crate) const API_KEY_HEADERS: [&str; 3] = ["x-api-key", "otc-api-key", "oxp-api-key"];

/// How callers authenticate.
pub struct Authenticator {
    jwt: Option<(DecodingKey, Validation)>,
    api_keys: Vec<Vec<u8>>,
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
    /// An authenticator accepting HS256 JWTs signed with `secret` and/or any of `api_keys`.
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
            let mut validation = Validation::new(Algorithm::HS256);
            validation.leeway = 5;
            validation.validate_nbf = true;
            if audience.is_empty() {
                validation.set_required_spec_claims(&["exp"]);
                validation.validate_aud = false;
            } else {
                validation.set_required_spec_claims(&["exp", "aud"]);
                validation.set_audience(audience);
            }
            (DecodingKey::from_secret(secret), validation)
        });
        Self {
            jwt,
            api_keys: api_keys.into_iter().map(String::into_bytes).collect(),
        }
    }

    /// Checks the request's credentials; `Ok` names the caller they authenticate.
    pub fn check(&self, headers: &HeaderMap) -> Result<Caller, AuthError> {
        if !self.api_keys.is_empty() {
            for name in API_KEY_HEADERS {
                if let Some(given) = headers.get(name) {
                    let given = given.as_bytes();
                    // Compare against every key in constant time, so timing reveals nothing.
                    let ok = self.api_keys.iter().fold(false, |ok, key| {
                        ok | bool::from(key.as_slice().ct_eq(given))
                    });
                    return if ok {
                        Ok(Caller::of("key", given))
                    } else {
                        Err(AuthError::InvalidApiKey { header: name })
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
            (Some((key, validation)), Some(token)) => {
                refuse_critical(token)?;
                jsonwebtoken::decode::<serde_json::Value>(token, key, validation)
                    .map(|data| {
                        // One caller per subject (of one issuer), whichever token it holds.
                        match data.claims.get("sub").and_then(|s| s.as_str()) {
                            Some(sub) => {
                                let iss = data.claims.get("iss").and_then(|s| s.as_str());
                                Caller::of(
                                    "jwt",
                                    format!("{}\0{sub}", iss.unwrap_or_default()).as_bytes(),
                                )
                            }
                            None => Caller::of("jwt", token.as_bytes()),
                        }
                    })
                    .map_err(AuthError::InvalidToken)
            }
            (Some(_), None) if self.api_keys.is_empty() => Err(AuthError::MissingBearer),
            (None, Some(_)) | (Some(_), None) | (None, None) => Err(AuthError::MissingCredentials),
        }
    }
}

/// Who a request comes from, as server authentication established it: a digest of the API key,
/// or of the JWT's issuer and subject. Without authentication every request is the same
/// (anonymous) caller. What `call_id` repeats are matched within (see [`crate::idempotency`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Caller(pub String);

impl Caller {
    fn of(kind: &str, secret: &[u8]) -> Self {
        use sha2::Digest as _;
        let digest = sha2::Sha256::digest(secret);
        let hex = otc_mappings::hex::hex(&digest[..16]);
        Self(format!("{kind}:{hex}"))
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
    let checked = state.auth().map(|auth| auth.check(request.headers()));
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
    if let Some(Ok(caller)) = checked {
        request.extensions_mut().insert(caller);
    }
    next.run(request).await
}
