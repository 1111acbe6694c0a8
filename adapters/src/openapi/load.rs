//! Getting the document and the files its `$ref`s name: from disk or over HTTP, with errors that
//! name the path or URL and what to do.
//!
//! The mapper is synchronous (no I/O in `otc-mappings`), so it asks for referenced files through
//! a `RefFetcher`. [`RefLoader`] answers from a blocking thread: the adapter runs the mapper under
//! `spawn_blocking` and the loader drives its async HTTP fetch on the runtime's handle. It enforces
//! the access rules itself, whatever the mapper asks: files only for a document that is a file,
//! other URLs only with `allow_remote_refs`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use reqwest::Client;
use reqwest::redirect::Policy;

use super::config::OpenApiConfig;
use url::Url;

use crate::AdapterError;

/// Documents and referenced files larger than this are refused (GitHub's REST description, one of
/// the largest in use, is about 10 MB).
const MAX_DOCUMENT_BYTES: usize = 64 * 1024 * 1024;

/// Where the document came from.
#[derive(Debug, Clone)]
pub(crate) enum Location {
    /// An absolute file path.
    File(PathBuf),
    /// An http(s) URL (after redirects).
    Url(Url),
}

/// The document's text and where it came from.
#[derive(Debug)]
pub(crate) struct Document {
    pub(crate) text: String,
    pub(crate) location: Location,
}

impl Document {
    /// The URI relative `$ref`s (and relative server URLs) are resolved against.
    pub(crate) fn base_uri(&self) -> String {
        match &self.location {
            Location::File(path) => path.display().to_string(),
            Location::Url(url) => url.to_string(),
        }
    }

    /// The document's URL, when it was fetched over HTTP.
    pub(crate) fn url(&self) -> Option<&Url> {
        match &self.location {
            Location::Url(url) => Some(url),
            Location::File(_) => None,
        }
    }
}

/// The client that fetches the document and its remote `$ref`s at start-up: ordinary redirects
/// (documents are often served through a CDN), no static headers (they are for the API).
pub(crate) fn for_documents(config: &OpenApiConfig) -> Result<Client, AdapterError> {
    super::client::base(config)?
        .redirect(Policy::limited(config.max_redirects.max(5)))
        .build()
        .map_err(|e| AdapterError::Setup {
            message: "cannot build the HTTP client".to_owned(),
            source: Some(Box::new(e)),
        })
}

/// Whether `spec` is fetched over HTTP rather than read from disk.
fn as_http_url(spec: &str) -> Option<Result<Url, url::ParseError>> {
    let lower = spec.get(..8).unwrap_or(spec).to_ascii_lowercase();
    (lower.starts_with("http://") || lower.starts_with("https://")).then(|| Url::parse(spec))
}

/// Loads the document named by the config's `spec`.
pub(crate) async fn load(spec: &str, client: &Client) -> Result<Document, AdapterError> {
    if let Some(url) = as_http_url(spec) {
        let url = url.map_err(|e| AdapterError::Setup {
            message: format!("spec '{spec}' is not a valid URL"),
            source: Some(Box::new(e)),
        })?;
        let (text, final_url) = fetch(client, url).await.map_err(AdapterError::setup)?;
        return Ok(Document {
            text,
            location: Location::Url(final_url),
        });
    }
    let path = match spec.strip_prefix("file://") {
        Some(_) => Url::parse(spec)
            .ok()
            .and_then(|u| u.to_file_path().ok())
            .ok_or_else(|| AdapterError::setup(format!("spec '{spec}' is not a valid file URL")))?,
        None => PathBuf::from(spec),
    };
    let text = tokio::fs::read_to_string(&path)
        .await
        .map_err(|e| AdapterError::Setup {
            message: format!("cannot read the OpenAPI document {}: {e}", path.display()),
            source: Some(Box::new(e)),
        })?;
    let absolute = tokio::fs::canonicalize(&path).await.unwrap_or(path);
    Ok(Document {
        text,
        location: Location::File(absolute),
    })
}

/// GETs `url` as text; the error names the URL and what went wrong (never a query string, which
/// might hold a key).
async fn fetch(client: &Client, url: Url) -> Result<(String, Url), String> {
    let shown = {
        let mut shown = url.clone();
        shown.set_query(None);
        shown
    };
    let fail = |what: String| format!("cannot fetch the OpenAPI document {shown}: {what}");
    let mut response = client
        .get(url)
        .send()
        .await
        .map_err(|e| fail(super::response::classify(e, Duration::ZERO).to_string()))?;
    if !response.status().is_success() {
        return Err(fail(format!(
            "the server answered HTTP {}",
            response.status()
        )));
    }
    let final_url = response.url().clone();
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| fail(super::response::classify(e, Duration::ZERO).to_string()))?
    {
        if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
            return Err(fail(format!(
                "it is larger than {MAX_DOCUMENT_BYTES} bytes"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    let text = String::from_utf8(body).map_err(|_| fail("it is not UTF-8 text".to_owned()))?;
    Ok((text, final_url))
}

/// Answers the mapper's requests for referenced documents. Used only from a blocking thread.
#[derive(Debug)]
pub(crate) struct RefLoader {
    handle: tokio::runtime::Handle,
    client: Client,
    document_is_file: bool,
    allow_remote: bool,
}

impl otc_mappings::openapi::RefFetcher for RefLoader {
    fn fetch(&self, uri: &str) -> Result<String, String> {
        self.load(uri)
    }
}

impl RefLoader {
    /// A loader for refs of `document`, fetching with `client` on the current runtime.
    pub(crate) fn new(client: Client, document: &Document, allow_remote: bool) -> Self {
        Self {
            handle: tokio::runtime::Handle::current(),
            client,
            document_is_file: matches!(document.location, Location::File(_)),
            allow_remote,
        }
    }

    /// The text of `uri` (an absolute file path or URL), or why it was not read.
    pub(crate) fn load(&self, uri: &str) -> Result<String, String> {
        if let Some(url) = as_http_url(uri) {
            let url = url.map_err(|e| format!("'{uri}' is not a valid URL: {e}"))?;
            if !self.allow_remote {
                return Err(format!(
                    "remote $ref {uri} was not fetched: set allow_remote_refs: true to allow it"
                ));
            }
            // Called from `spawn_blocking`, never from inside the runtime, so `block_on` is safe.
            return self
                .handle
                .block_on(fetch(&self.client, url))
                .map(|(text, _)| text);
        }
        if !self.document_is_file {
            return Err(format!(
                "file $ref {uri} was not read: the document was fetched over HTTP"
            ));
        }
        let path = match uri.strip_prefix("file://") {
            Some(_) => Url::parse(uri)
                .ok()
                .and_then(|u| u.to_file_path().ok())
                .ok_or_else(|| format!("'{uri}' is not a valid file URL"))?,
            None => Path::new(uri).to_path_buf(),
        };
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read $ref file {}: {e}", path.display()))?;
        if text.len() > MAX_DOCUMENT_BYTES {
            return Err(format!(
                "$ref file {} is larger than {MAX_DOCUMENT_BYTES} bytes",
                path.display()
            ));
        }
        Ok(text)
    }
}
