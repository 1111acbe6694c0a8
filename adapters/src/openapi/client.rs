//! The HTTP stack of OpenAPI sources, shared: every source built with the same
//! [`crate::BuildContext`] calls through one `reqwest::Client` per distinct set of client-level
//! settings, instead of one client of its own.
//!
//! A client is not free: building one loads the system's root certificates into a fresh rustls
//! root store (rustls-platform-verifier reads and parses the whole bundle each time), about
//! 170 KB and a few milliseconds per source, and each client keeps its own connection pool. With
//! hundreds of sources that was a sizeable part of the bridge's memory and start-up (issue 23).
//!
//! What differs between sources is split in two:
//! - **per request**: the overall timeout (`timeout_ms`, reqwest's per-request timeout, which
//!   also bounds reading the body) and the static `headers` (filled in where the request has no
//!   header of that name, exactly as reqwest fills in a client's default headers);
//! - **per client**, and so part of the key a client is shared under ([`ClientKey`]): what reqwest
//!   only sets on a client, i.e. `connect_timeout_ms`, the redirect limit and the extra roots of
//!   `ca_cert_file` (keyed by the file's content, so a file changed before a reload gives a new
//!   client).
//!
//! Sources with the default settings (nearly all) therefore share one client. The cache holds
//! clients weakly: a client lives as long as some source uses it, so removing sources on a reload
//! closes their pooled connections as before, and the next client built reads the roots anew.
//!
//! reqwest 0.13 is the version rmcp uses, so the bridge links one HTTP stack.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use reqwest::header::{Entry, HeaderMap, HeaderName};
use reqwest::redirect::Policy;
use reqwest::{Certificate, Client, RequestBuilder, Response};

use super::config::OpenApiConfig;
use super::freshness::Asked;
use super::style::header_value;
use crate::AdapterError;

/// The HTTP clients of OpenAPI sources, shared by the sources built with one
/// [`crate::BuildContext`] (see the module docs). Cloning shares the cache.
#[derive(Clone, Default)]
pub struct HttpClients {
    clients: Arc<Mutex<HashMap<ClientKey, Weak<Client>>>>,
}

impl fmt::Debug for HttpClients {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpClients")
            .field("live", &self.live())
            .finish()
    }
}

/// What a client is for: forwarding calls, or fetching documents and their `$ref`s at start-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Purpose {
    /// Redirects only within the origin of the first request; static headers are sent.
    Calls,
    /// Ordinary redirects (documents are often served through a CDN); no static headers (they
    /// are for the API).
    Documents,
}

/// The settings reqwest only takes on a client: sources that agree on them share one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct ClientKey {
    purpose: Purpose,
    connect_timeout_ms: u64,
    max_redirects: usize,
    /// The bytes of `ca_cert_file`, when set.
    ca_pem: Option<Vec<u8>>,
}

impl HttpClients {
    /// How many clients sources use now: one per distinct set of client settings among the
    /// sources alive.
    pub fn live(&self) -> usize {
        self.lock()
            .values()
            .filter(|client| client.strong_count() > 0)
            .count()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<ClientKey, Weak<Client>>> {
        // The map is consistent whatever panicked while it was held: a lookup or an insert.
        self.clients.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The client for `key` (made from `config`): the one a live source already uses, or a new
    /// one.
    fn get(&self, key: ClientKey, config: &OpenApiConfig) -> Result<Arc<Client>, AdapterError> {
        let mut clients = self.lock();
        if let Some(client) = clients.get(&key).and_then(Weak::upgrade) {
            return Ok(client);
        }
        // Built under the lock (no await in here), so sources starting together build it once.
        let client = Arc::new(build(&key, config)?);
        clients.retain(|_, client| client.strong_count() > 0);
        clients.insert(key, Arc::downgrade(&client));
        Ok(client)
    }

    /// The client that forwards `config`'s calls, with what each request adds to it.
    pub(crate) fn for_calls(&self, config: &OpenApiConfig) -> Result<CallClient, AdapterError> {
        let key = ClientKey {
            purpose: Purpose::Calls,
            connect_timeout_ms: config.connect_timeout_ms,
            max_redirects: config.max_redirects,
            ca_pem: read_ca(config)?,
        };
        Ok(CallClient {
            client: self.get(key, config)?,
            settings: RequestSettings {
                timeout: Duration::from_millis(config.timeout_ms),
                headers: static_headers(config)?,
            },
        })
    }

    /// The client that fetches `config`'s document and remote `$ref`s: ordinary redirects (at
    /// least 5), no static headers.
    pub(crate) fn for_documents(
        &self,
        config: &OpenApiConfig,
    ) -> Result<DocumentClient, AdapterError> {
        let key = ClientKey {
            purpose: Purpose::Documents,
            connect_timeout_ms: config.connect_timeout_ms,
            max_redirects: config.max_redirects.max(5),
            ca_pem: read_ca(config)?,
        };
        Ok(DocumentClient {
            client: self.get(key, config)?,
            timeout: Duration::from_millis(config.timeout_ms),
        })
    }
}

/// A source's share of the stack for calls: the shared client and its own request settings.
#[derive(Debug, Clone)]
pub(crate) struct CallClient {
    client: Arc<Client>,
    settings: RequestSettings,
}

/// What a source sets on each request rather than on its client.
#[derive(Debug, Clone)]
struct RequestSettings {
    /// The whole exchange, from connecting to the last body byte (`timeout_ms`).
    timeout: Duration,
    /// `headers`, one value per name.
    headers: HeaderMap,
}

impl CallClient {
    /// A request builder on the shared client.
    pub(crate) fn request(&self, method: reqwest::Method, url: url::Url) -> RequestBuilder {
        self.client.request(method, url)
    }

    /// Sends `request` with the source's timeout and static headers. An error building it
    /// (a body that would not serialize) is a `reqwest::Error`, as `send` would report it.
    pub(crate) async fn send(&self, request: RequestBuilder) -> Result<Response, reqwest::Error> {
        let (client, request) = self.finish(request)?;
        client.execute(request).await
    }

    /// [`CallClient::send`], also returning what was asked (the URL and the headers sent), which
    /// the rules for keeping the answer read.
    pub(crate) async fn send_asking(
        &self,
        request: RequestBuilder,
    ) -> Result<(Response, Asked), reqwest::Error> {
        let (client, request) = self.finish(request)?;
        let asked = Asked {
            uri: http::Uri::try_from(request.url().as_str()).unwrap_or_default(),
            headers: request.headers().clone(),
        };
        Ok((client.execute(request).await?, asked))
    }

    /// The request as it will be sent: the source's timeout, and its static headers where the
    /// request has no header of that name.
    fn finish(
        &self,
        request: RequestBuilder,
    ) -> Result<(Client, reqwest::Request), reqwest::Error> {
        let (client, request) = request.timeout(self.settings.timeout).build_split();
        let mut request = request?;
        // What reqwest does with a client's default headers: a header the request already has
        // (a parameter, a credential, the body's Content-Type) wins.
        let headers = request.headers_mut();
        for (name, value) in &self.settings.headers {
            if let Entry::Vacant(entry) = headers.entry(name) {
                entry.insert(value.clone());
            }
        }
        Ok((client, request))
    }
}

/// A source's share of the stack for fetching its document: the shared client and its timeout.
#[derive(Debug, Clone)]
pub(crate) struct DocumentClient {
    client: Arc<Client>,
    timeout: Duration,
}

impl DocumentClient {
    /// A GET of `url` within the source's timeout.
    pub(crate) fn get(&self, url: url::Url) -> RequestBuilder {
        self.client.get(url).timeout(self.timeout)
    }
}

/// A new client for `key`; `config` is where the key came from, for error messages.
fn build(key: &ClientKey, config: &OpenApiConfig) -> Result<Client, AdapterError> {
    let mut builder = Client::builder()
        .user_agent(concat!("otc-bridge/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(Duration::from_millis(key.connect_timeout_ms))
        .redirect(match key.purpose {
            Purpose::Calls => same_origin(key.max_redirects),
            Purpose::Documents => Policy::limited(key.max_redirects),
        });
    if let (Some(pem), Some(path)) = (&key.ca_pem, &config.ca_cert_file) {
        let certs = Certificate::from_pem_bundle(pem).map_err(|e| AdapterError::Setup {
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
    builder.build().map_err(|e| AdapterError::Setup {
        message: "cannot build the HTTP client".to_owned(),
        source: Some(Box::new(e)),
    })
}

/// Redirects only within the origin of the first request, at most `max`.
fn same_origin(max: usize) -> Policy {
    Policy::custom(move |attempt| {
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
    })
}

/// The bytes of `ca_cert_file`, when the config sets one.
fn read_ca(config: &OpenApiConfig) -> Result<Option<Vec<u8>>, AdapterError> {
    let Some(path) = &config.ca_cert_file else {
        return Ok(None);
    };
    crate::file::read(path, crate::file::MAX_CONFIG_BYTES)
        .map(Some)
        .map_err(|e| AdapterError::Setup {
            message: format!("cannot read ca_cert_file {}: {e}", path.display()),
            source: Some(Box::new(e)),
        })
}

/// The config's `headers`, checked. One value per name, the last given winning, as
/// `ClientBuilder::default_headers` kept them.
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
        headers.insert(header, value);
    }
    Ok(headers)
}
