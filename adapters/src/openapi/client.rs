//! The adapter's HTTP client, built once per source: timeouts, trusted roots, static headers,
//! and the redirect rule (same origin only, at most `max_redirects`).
//!
//! reqwest 0.13 is the version rmcp uses, so the bridge links one HTTP stack.

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName};
use reqwest::redirect::Policy;
use reqwest::{Certificate, Client, ClientBuilder};

use super::config::OpenApiConfig;
use super::style::header_value;
use crate::AdapterError;

/// The client that forwards calls: redirects only within the origin of the first request.
pub(crate) fn for_calls(config: &OpenApiConfig) -> Result<Client, AdapterError> {
    let max = config.max_redirects;
    let policy = Policy::custom(move |attempt| {
        let same_origin = attempt
            .previous()
            .first()
            .is_none_or(|first| first.origin() == attempt.url().origin());
        if !same_origin {
            // The 3xx response is returned as is and reported as not followed.
            attempt.stop()
        } else if attempt.previous().len() > max {
            attempt.error(format!("more than {max} redirects"))
        } else {
            attempt.follow()
        }
    });
    base(config)?
        .redirect(policy)
        .default_headers(static_headers(config)?)
        .build()
        .map_err(|e| AdapterError::Setup {
            message: "cannot build the HTTP client".to_owned(),
            source: Some(Box::new(e)),
        })
}

pub(crate) fn base(config: &OpenApiConfig) -> Result<ClientBuilder, AdapterError> {
    let mut builder = Client::builder()
        .user_agent(concat!("otc-bridge/", env!("CARGO_PKG_VERSION")))
        .timeout(Duration::from_millis(config.timeout_ms))
        .connect_timeout(Duration::from_millis(config.connect_timeout_ms));
    if let Some(path) = &config.ca_cert_file {
        let pem = crate::file::read(path, crate::file::MAX_CONFIG_BYTES).map_err(|e| {
            AdapterError::Setup {
                message: format!("cannot read ca_cert_file {}: {e}", path.display()),
                source: Some(Box::new(e)),
            }
        })?;
        let certs = Certificate::from_pem_bundle(&pem).map_err(|e| AdapterError::Setup {
            message: format!(
                "ca_cert_file {} holds no valid PEM certificate",
                path.display()
            ),
            source: Some(Box::new(e)),
        })?;
        if certs.is_empty() {
            return Err(AdapterError::setup(format!(
                "ca_cert_file {} holds no PEM certificate",
                path.display()
            )));
        }
        builder = builder.tls_certs_merge(certs);
    }
    Ok(builder)
}

fn static_headers(config: &OpenApiConfig) -> Result<HeaderMap, AdapterError> {
    let mut headers = HeaderMap::with_capacity(config.headers.len());
    for (name, value) in &config.headers {
        let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
            AdapterError::setup(format!("headers: '{name}' is not a valid header name"))
        })?;
        let value = header_value(value).ok_or_else(|| {
            AdapterError::setup(format!(
                "headers: the value of '{name}' can only hold visible ASCII characters"
            ))
        })?;
        headers.append(header, value);
    }
    Ok(headers)
}
