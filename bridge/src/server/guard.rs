//! Keeping web pages out (issue 8, defect 1): a bridge on a developer's machine must not be a
//! tool any website can run.
//!
//! - **Cross-site requests.** Browsers send `Origin` with every cross-site request that can have
//!   an effect. A request whose `Origin` is neither the bridge's own (same scheme-less authority
//!   as its `Host`) nor one the operator allowed (`--allow-origin`) is refused with 403. Allowed
//!   origins get CORS headers (preflight included, via tower-http), so browser apps the operator
//!   trusts work. Requests without `Origin` (curl, SDKs, servers) are not affected.
//! - **DNS rebinding.** A page can make its own host name resolve to 127.0.0.1, and then its
//!   requests are same-origin. So when the bridge listens on loopback, only `Host` values that
//!   name it (`localhost`, a loopback address, or an `--allow-host` name, with the bridge's port
//!   when a port is given) are accepted.
//! - The body of a call must be declared JSON (415 otherwise; see `extract`), so a cross-site
//!   "simple" request (`text/plain`, no preflight) never reaches a tool.

use std::net::IpAddr;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, header};
use axum::middleware::Next;
use axum::response::Response;
use tower_http::cors::{AllowOrigin, CorsLayer};

use super::{AppState, ServerSettings, extract};
use crate::rescue::ApiError;

/// The compiled checks.
#[derive(Debug, Clone)]
pub(crate) struct Guard {
    /// Allowed origins, lower-case, without a trailing `/`.
    origins: Vec<String>,
    /// Allowed extra host names, lower-case.
    hosts: Vec<String>,
    /// The bridge's port when it listens on loopback (then `Host` is checked).
    loopback_port: Option<u16>,
}

impl Guard {
    pub(crate) fn new(settings: &ServerSettings) -> Self {
        Self {
            origins: settings
                .allowed_origins
                .iter()
                .map(|o| normalise_origin(o))
                .collect(),
            hosts: settings
                .allowed_hosts
                .iter()
                .map(|h| h.to_ascii_lowercase())
                .collect(),
            loopback_port: settings
                .listen
                .filter(|addr| addr.ip().is_loopback())
                .map(|addr| addr.port()),
        }
    }

    /// `Err` with the reason when the request must be refused.
    pub(crate) fn check(&self, headers: &HeaderMap) -> Result<(), GuardError> {
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
        if let (Some(port), Some(host)) = (self.loopback_port, host)
            && !self.names_the_bridge(host, port)
        {
            return Err(GuardError::ForeignHost { port });
        }
        let Some(origin) = headers.get(header::ORIGIN) else {
            return Ok(());
        };
        let origin = normalise_origin(origin.to_str().unwrap_or("null"));
        if self.origins.contains(&origin) {
            return Ok(());
        }
        let authority = origin.split_once("://").map(|(_, rest)| rest);
        let same_origin =
            matches!((authority, host), (Some(a), Some(h)) if a.eq_ignore_ascii_case(h));
        if same_origin {
            return Ok(());
        }
        Err(GuardError::CrossSite)
    }

    fn names_the_bridge(&self, host: &str, port: u16) -> bool {
        let Ok(authority) = host.parse::<axum::http::uri::Authority>() else {
            return false;
        };
        if authority.port_u16().is_some_and(|p| p != port) {
            return false;
        }
        let name = authority.host().to_ascii_lowercase();
        let ip = name.trim_start_matches('[').trim_end_matches(']');
        name == "localhost"
            || ip.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
            || self.hosts.contains(&name)
    }
}

/// Why the [`Guard`] refuses a request; the words are the 403's, so they say what to pass.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum GuardError {
    /// The bridge listens on loopback and `Host` names another server (DNS rebinding).
    #[error(
        "the Host header does not name this server (it listens on loopback port {port}); pass --allow-host NAME to accept another name"
    )]
    ForeignHost {
        /// The bridge's port.
        port: u16,
    },
    /// `Origin` is another web site, not one the operator allowed.
    #[error(
        "requests from other web sites are not accepted; pass --allow-origin ORIGIN to allow one"
    )]
    CrossSite,
}

fn normalise_origin(origin: &str) -> String {
    origin.trim().trim_end_matches('/').to_ascii_lowercase()
}

/// Middleware: refuses requests the [`Guard`] does not accept, with 403.
pub(super) async fn check(State(state): State<AppState>, request: Request, next: Next) -> Response {
    if let Err(reason) = state.guard().check(request.headers()) {
        let reply = extract::list_reply(request.headers(), None, state.settings().default_dialect)
            .unwrap_or_else(|rejection| rejection.reply);
        return reply.error(ApiError::Forbidden(reason.to_string()));
    }
    next.run(request).await
}

/// CORS for the allowed origins: preflight answered, the dialect and auth headers allowed.
/// `None` when no origin is allowed: the guard refuses every cross-site request itself, and
/// tower-http's layer would still clone its settings and write `Vary` into every response (about
/// 5 % of the bridge's work for an MCP echo call).
pub(super) fn cors(origins: &[String]) -> Option<CorsLayer> {
    if origins.is_empty() {
        return None;
    }
    let origins: Vec<HeaderValue> = origins
        .iter()
        .filter_map(|o| HeaderValue::from_str(&normalise_origin(o)).ok())
        .collect();
    let otc_headers = [
        header::CONTENT_TYPE,
        header::AUTHORIZATION,
        HeaderName::from_static("x-api-key"),
        HeaderName::from_static("otc-api-key"),
        HeaderName::from_static("oxp-api-key"),
        HeaderName::from_static("oxp-version"),
        HeaderName::from_static("traceparent"),
    ];
    let layer = CorsLayer::new()
        .allow_origin(AllowOrigin::list(origins))
        .allow_methods([Method::GET, Method::POST])
        .allow_headers(otc_headers)
        .expose_headers([HeaderName::from_static("oxp-version")]);
    Some(layer)
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;

    use super::*;

    fn guard(listen: &str, origins: &[&str], hosts: &[&str]) -> Guard {
        Guard::new(&ServerSettings {
            listen: Some(listen.parse::<SocketAddr>().unwrap()),
            allowed_origins: origins.iter().map(|s| (*s).to_owned()).collect(),
            allowed_hosts: hosts.iter().map(|s| (*s).to_owned()).collect(),
            ..Default::default()
        })
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn issue_8_loopback_accepts_only_hosts_that_name_it() {
        let g = guard("127.0.0.1:8080", &[], &["bridge.internal"]);
        for ok in [
            "127.0.0.1:8080",
            "localhost:8080",
            "LOCALHOST",
            "[::1]:8080",
            "bridge.internal:8080",
        ] {
            assert!(g.check(&headers(&[("host", ok)])).is_ok(), "{ok}");
        }
        for bad in [
            "evil.example:8080",
            "127.0.0.1:9090",
            "attacker.localhost.evil",
        ] {
            assert!(g.check(&headers(&[("host", bad)])).is_err(), "{bad}");
        }
        // On other addresses the Host cannot be known in advance.
        let g = guard("0.0.0.0:8080", &[], &[]);
        assert!(g.check(&headers(&[("host", "anything:1")])).is_ok());
    }

    #[test]
    fn issue_8_cross_site_origins_are_refused_unless_allowed() {
        let g = guard("127.0.0.1:8080", &["https://app.example.com/"], &[]);
        let host = ("host", "127.0.0.1:8080");
        assert!(g.check(&headers(&[host])).is_ok());
        assert!(
            g.check(&headers(&[host, ("origin", "http://127.0.0.1:8080")]))
                .is_ok()
        );
        assert!(
            g.check(&headers(&[host, ("origin", "https://app.example.com")]))
                .is_ok()
        );
        assert!(
            g.check(&headers(&[host, ("origin", "https://evil.example")]))
                .is_err()
        );
        assert!(g.check(&headers(&[host, ("origin", "null")])).is_err());
    }
}
