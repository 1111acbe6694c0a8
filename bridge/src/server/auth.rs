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

use super::{AppState, negotiate_list};
use crate::rescue::ApiError;

/// The API-key headers of the three dialects (RFC, OTC docs, OXP docs).
pub const API_KEY_HEADERS: [&str; 3] = ["x-api-key", "otc-api-key", "oxp-api-key"];

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
    /// An authenticator accepting HS256 JWTs signed with `secret` (and `exp` required; `aud`
    /// checked against `audience` when given) and/or any of `api_keys`.
    pub fn new(jwt_secret: Option<&[u8]>, audience: &[String], api_keys: Vec<String>) -> Self {
        let jwt = jwt_secret.map(|secret| {
            let mut validation = Validation::new(Algorithm::HS256);
            validation.set_required_spec_claims(&["exp"]);
            validation.leeway = 5;
            if audience.is_empty() {
                validation.validate_aud = false;
            } else {
                validation.set_audience(audience);
            }
            (DecodingKey::from_secret(secret), validation)
        });
        Self {
            jwt,
            api_keys: api_keys.into_iter().map(String::into_bytes).collect(),
        }
    }

    /// Checks the request's credentials.
    pub fn check(&self, headers: &HeaderMap) -> Result<(), String> {
        if !self.api_keys.is_empty() {
            for name in API_KEY_HEADERS {
                if let Some(given) = headers.get(name) {
                    let given = given.as_bytes();
                    // Compare against every key in constant time, so timing reveals nothing.
                    let ok = self.api_keys.iter().fold(false, |ok, key| {
                        ok | bool::from(key.as_slice().ct_eq(given))
                    });
                    return if ok {
                        Ok(())
                    } else {
                        Err(format!("the API key in '{name}' is not valid"))
                    };
                }
            }
        }
        let bearer = headers
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
            });
        match (&self.jwt, bearer) {
            (Some((key, validation)), Some(token)) => jsonwebtoken::decode::<serde_json::Value>(token.trim(), key, validation)
                .map(|_| ())
                .map_err(|err| format!("the bearer token is not valid: {err}")),
            (Some(_), None) if self.api_keys.is_empty() => Err("missing 'Authorization: Bearer <JWT>' header".to_owned()),
            (None, Some(_)) | (Some(_), None) | (None, None) => {
                Err("missing credentials: send 'Authorization: Bearer <JWT>' or an API key header (X-API-Key, OTC-API-Key or OXP-API-Key)".to_owned())
            }
        }
    }
}

/// Middleware: rejects unauthenticated requests with 401 and a `ServerErrorResponse`.
pub async fn require(State(state): State<AppState>, request: Request, next: Next) -> Response {
    if let Some(auth) = state.auth()
        && let Err(reason) = auth.check(request.headers())
    {
        tracing::info!(path = %request.uri().path(), reason = %reason, "Request refused: not authenticated.");
        let default = state.settings().default_dialect;
        let reply =
            negotiate_list(request.headers(), None, default).unwrap_or_else(|(reply, _)| reply);
        return reply.error(ApiError::Unauthorized(reason));
    }
    next.run(request).await
}
