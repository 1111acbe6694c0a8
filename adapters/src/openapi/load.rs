//! Getting the document and the files its `$ref`s name: from disk or over HTTP, with errors that
//! name the path or URL and what to do.
//!
//! The mapper is synchronous (no I/O in `otc-mappings`), so it asks for referenced files through
//! a `RefFetcher`. [`RefLoader`] answers from a blocking thread: the adapter runs the mapper under
//! `spawn_blocking` and the loader drives its async HTTP fetch on the runtime's handle. It enforces
//! the access rules itself, whatever the mapper asks: files only for a document that is a file,
//! other URLs only with `allow_remote_refs`.
//!
//! **Files are confined.** A document is not trusted to read the machine: a file `$ref` must
//! resolve, after canonicalisation (so a symlink out of the tree is outside), to a regular file
//! inside the document's own directory tree or one of the config's `ref_dirs`. Every file, the
//! document's own included, is read by [`crate::file`]: regular files only (a FIFO would block,
//! `/dev/zero` never ends), at most [`MAX_DOCUMENT_BYTES`]; a fetched one stops at the same size.

use std::path::{Path, PathBuf};
use std::time::Duration;

use otc_mappings::openapi::{FetchError, RefFetcher};

use super::client::{DocumentClient, HttpClients};
use super::config::OpenApiConfig;
use url::Url;

use crate::AdapterError;
use crate::file::{FileError, MAX_DOCUMENT_BYTES};

/// Why the document, or a file or URL its `$ref`s name, was not loaded. For the document it fails
/// the build; for a `$ref` the mapper reports it and leaves the reference unbundled. Each message
/// names the path or URL and, where the config can allow it, the key to set.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LoadError {
    #[error("no HTTP client: fetching over HTTP is not configured")]
    NoClient,
    #[error("cannot read the OpenAPI document {}: {source}", path.display())]
    ReadDocument {
        /// As configured (before canonicalisation).
        path: PathBuf,
        #[source]
        source: FileError,
    },
    // `url` is shown without its query, which might hold a key (see `fetch`). The reason's text
    // is part of each message: a `$ref`'s diagnostic shows only the top error.
    #[error("cannot fetch the OpenAPI document {url}: {source}")]
    FetchFailed {
        url: Url,
        /// The transport failure, classified as a call's would be (boxed: it is large, and
        /// this error is returned on every `$ref` load).
        #[source]
        source: Box<AdapterError>,
    },
    #[error("cannot fetch the OpenAPI document {url}: the server answered HTTP {status}")]
    FetchStatus {
        url: Url,
        status: reqwest::StatusCode,
    },
    #[error(
        "cannot fetch the OpenAPI document {url}: it is larger than {MAX_DOCUMENT_BYTES} bytes"
    )]
    FetchTooLarge { url: Url },
    #[error("cannot fetch the OpenAPI document {url}: it is not UTF-8 text")]
    FetchNotText { url: Url },
    #[error("'{uri}' is not a valid URL: {source}")]
    RefUrl {
        uri: String,
        #[source]
        source: url::ParseError,
    },
    #[error("remote $ref {uri} was not fetched: set allow_remote_refs: true to allow it")]
    RemoteRef { uri: String },
    #[error("file $ref {uri} was not read: the document was fetched over HTTP")]
    FileRefOfUrl { uri: String },
    #[error("'{uri}' is not a valid file URL")]
    RefFileUrl { uri: String },
    #[error("cannot read $ref file {}: {source}", path.display())]
    ReadRef {
        /// As the reference resolved (before canonicalisation).
        path: PathBuf,
        #[source]
        source: FileError,
    },
    #[error(
        "$ref file {} is outside the document's directory (it resolves to {}); list its \
         directory in ref_dirs to allow it",
        path.display(),
        canonical.display()
    )]
    Outside { path: PathBuf, canonical: PathBuf },
}

/// The message is the error's text. It is not also kept as the source: the message already says
/// all of it, and the binary prints errors with their sources (`{:#}`), so it would read twice.
impl From<LoadError> for AdapterError {
    fn from(error: LoadError) -> Self {
        Self::setup(error.to_string())
    }
}

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

/// The client that fetches the document and its remote `$ref`s at start-up (see
/// [`HttpClients::for_documents`]). `None` when nothing is fetched (a document on disk, remote
/// `$ref`s off): building a client loads the system's root certificates, a sizeable part of
/// loading a small document.
pub(crate) fn for_documents(
    config: &OpenApiConfig,
    http: &HttpClients,
) -> Result<Option<DocumentClient>, AdapterError> {
    if as_http_url(&config.spec).is_none() && !config.allow_remote_refs {
        return Ok(None);
    }
    http.for_documents(config).map(Some)
}

/// The client of [`for_documents`], or why there is none.
fn document_client(client: Option<&DocumentClient>) -> Result<&DocumentClient, LoadError> {
    client.ok_or(LoadError::NoClient)
}

/// Whether `spec` is fetched over HTTP rather than read from disk.
fn as_http_url(spec: &str) -> Option<Result<Url, url::ParseError>> {
    let lower = spec.get(..8).unwrap_or(spec).to_ascii_lowercase();
    (lower.starts_with("http://") || lower.starts_with("https://")).then(|| Url::parse(spec))
}

/// Where the config's `spec` says the document is.
#[derive(Debug)]
pub(crate) enum Spec {
    /// A file, as written (relative to the working directory); read with [`read`].
    File(PathBuf),
    /// An http(s) URL; fetched with [`fetch_document`].
    Url(Url),
}

impl Spec {
    /// Reads the config's `spec`: an http(s) URL, a `file://` URL or a path.
    pub(crate) fn parse(spec: &str) -> Result<Self, AdapterError> {
        if let Some(url) = as_http_url(spec) {
            return url.map(Self::Url).map_err(|e| AdapterError::Setup {
                message: format!("spec '{spec}' is not a valid URL"),
                source: Some(Box::new(e)),
            });
        }
        match spec.strip_prefix("file://") {
            Some(_) => Url::parse(spec)
                .ok()
                .and_then(|u| u.to_file_path().ok())
                .map(Self::File)
                .ok_or_else(|| {
                    AdapterError::setup(format!("spec '{spec}' is not a valid file URL"))
                }),
            None => Ok(Self::File(PathBuf::from(spec))),
        }
    }
}

/// Fetches the document at `url` with the start-up client.
pub(crate) async fn fetch_document(
    url: Url,
    client: Option<&DocumentClient>,
) -> Result<Document, AdapterError> {
    let client = document_client(client)?;
    let (text, final_url) = fetch(client, url).await?;
    Ok(Document {
        text,
        location: Location::Url(final_url),
    })
}

/// Reads the document at `path`. Blocking: it runs on the thread that translates the document,
/// so a catalog of hundreds of files does not start a blocking thread for each read, nor hold
/// every text at once.
pub(crate) fn read(path: &Path) -> Result<Document, LoadError> {
    let unread = |source| LoadError::ReadDocument {
        path: path.to_path_buf(),
        source,
    };
    let absolute = std::fs::canonicalize(path).map_err(|e| unread(e.into()))?;
    let text = read_regular_file(&absolute).map_err(unread)?;
    Ok(Document {
        text,
        location: Location::File(absolute),
    })
}

/// Reads a document or `$ref` file (already canonical) with the one reader.
fn read_regular_file(path: &Path) -> Result<String, FileError> {
    crate::file::read_text(path, MAX_DOCUMENT_BYTES)
}

/// GETs `url` as text; the error names the URL and what went wrong (never a query string, which
/// might hold a key).
async fn fetch(client: &DocumentClient, url: Url) -> Result<(String, Url), LoadError> {
    let shown = {
        let mut shown = url.clone();
        shown.set_query(None);
        shown
    };
    let failed = |e| LoadError::FetchFailed {
        url: shown.clone(),
        source: Box::new(super::response::classify(e, Duration::ZERO)),
    };
    let mut response = client.get(url).send().await.map_err(failed)?;
    if !response.status().is_success() {
        return Err(LoadError::FetchStatus {
            url: shown,
            status: response.status(),
        });
    }
    let final_url = response.url().clone();
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(failed)? {
        if (body.len() + chunk.len()) as u64 > MAX_DOCUMENT_BYTES {
            return Err(LoadError::FetchTooLarge { url: shown });
        }
        body.extend_from_slice(&chunk);
    }
    let text = String::from_utf8(body).map_err(|_| LoadError::FetchNotText { url: shown })?;
    Ok((text, final_url))
}

/// Answers the mapper's requests for referenced documents. Used only from a blocking thread.
#[derive(Debug)]
pub(crate) struct RefLoader {
    handle: tokio::runtime::Handle,
    client: Option<DocumentClient>,
    document_is_file: bool,
    allow_remote: bool,
    /// Canonical directories file `$ref`s may read under: the document's own, then `ref_dirs`.
    roots: Vec<PathBuf>,
}

impl RefFetcher for RefLoader {
    fn fetch(&self, uri: &str) -> Result<String, FetchError> {
        self.load(uri).map_err(|e| FetchError::Failed(Box::new(e)))
    }
}

impl RefLoader {
    /// A loader for refs of `document`, fetching with `client` on the current runtime.
    pub(crate) fn new(
        client: Option<DocumentClient>,
        document: &Document,
        allow_remote: bool,
    ) -> Self {
        let roots = match &document.location {
            // The location is already canonical.
            Location::File(path) => path.parent().map(Path::to_path_buf).into_iter().collect(),
            Location::Url(_) => Vec::new(),
        };
        Self {
            handle: tokio::runtime::Handle::current(),
            client,
            document_is_file: matches!(document.location, Location::File(_)),
            allow_remote,
            roots,
        }
    }

    /// Also lets file `$ref`s read under `dirs` (the config's `ref_dirs`; relative ones are
    /// relative to the working directory). A directory that does not exist is skipped: it holds
    /// nothing to read.
    pub(crate) fn with_ref_dirs(mut self, dirs: &[PathBuf]) -> Self {
        self.roots
            .extend(dirs.iter().filter_map(|d| std::fs::canonicalize(d).ok()));
        self
    }

    /// The text of `uri` (an absolute file path or URL), or why it was not read.
    pub(crate) fn load(&self, uri: &str) -> Result<String, LoadError> {
        if let Some(url) = as_http_url(uri) {
            let url = url.map_err(|source| LoadError::RefUrl {
                uri: uri.to_owned(),
                source,
            })?;
            if !self.allow_remote {
                return Err(LoadError::RemoteRef {
                    uri: uri.to_owned(),
                });
            }
            // Called from `spawn_blocking`, never from inside the runtime, so `block_on` is safe.
            let client = document_client(self.client.as_ref())?;
            return self
                .handle
                .block_on(fetch(client, url))
                .map(|(text, _)| text);
        }
        if !self.document_is_file {
            return Err(LoadError::FileRefOfUrl {
                uri: uri.to_owned(),
            });
        }
        let path = match uri.strip_prefix("file://") {
            Some(_) => Url::parse(uri)
                .ok()
                .and_then(|u| u.to_file_path().ok())
                .ok_or_else(|| LoadError::RefFileUrl {
                    uri: uri.to_owned(),
                })?,
            None => Path::new(uri).to_path_buf(),
        };
        let unread = |source| LoadError::ReadRef {
            path: path.clone(),
            source,
        };
        // Canonical first: `..`, and symlinks pointing out of the tree, are judged by where they
        // lead.
        let canonical = std::fs::canonicalize(&path).map_err(|e| unread(e.into()))?;
        if !self.roots.iter().any(|root| canonical.starts_with(root)) {
            return Err(LoadError::Outside { path, canonical });
        }
        read_regular_file(&canonical).map_err(unread)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory `<tmp>/otc-issue9-<pid>-<name>` holding `tree/api.json` and a
    /// `secret.json` beside `tree`.
    fn sandbox(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("otc-issue9-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("tree/sub")).unwrap();
        std::fs::write(dir.join("tree/api.json"), "{}").unwrap();
        std::fs::write(dir.join("tree/sub/pet.json"), r#"{"type":"object"}"#).unwrap();
        std::fs::write(dir.join("secret.json"), r#"{"token":"hunter2"}"#).unwrap();
        std::fs::canonicalize(dir).unwrap()
    }

    fn loader(dir: &Path) -> RefLoader {
        let document = Document {
            text: "{}".to_owned(),
            location: Location::File(dir.join("tree/api.json")),
        };
        RefLoader::new(None, &document, false)
    }

    /// Runs `load` on a blocking thread, as the adapter does.
    async fn load_ref(loader: RefLoader, uri: String) -> Result<String, LoadError> {
        tokio::task::spawn_blocking(move || loader.load(&uri))
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn issue_9_files_inside_the_tree_are_read() {
        let dir = sandbox("inside");
        let uri = dir.join("tree/sub/pet.json").display().to_string();
        assert_eq!(
            load_ref(loader(&dir), uri).await.unwrap(),
            r#"{"type":"object"}"#
        );
    }

    #[tokio::test]
    async fn issue_9_refs_outside_the_tree_are_refused_by_name() {
        let dir = sandbox("outside");
        for uri in [
            dir.join("tree/../secret.json").display().to_string(),
            dir.join("secret.json").display().to_string(),
            "/dev/zero".to_owned(),
            "/proc/self/environ".to_owned(),
        ] {
            let err = load_ref(loader(&dir), uri.clone())
                .await
                .unwrap_err()
                .to_string();
            assert!(err.contains(&uri), "{err}");
            assert!(err.contains("outside"), "{err}");
            assert!(!err.contains("hunter2"), "{err}");
        }
    }

    #[tokio::test]
    async fn issue_9_a_symlink_out_of_the_tree_is_outside() {
        let dir = sandbox("symlink");
        let link = dir.join("tree/link.json");
        std::os::unix::fs::symlink(dir.join("secret.json"), &link).unwrap();
        let uri = link.display().to_string();
        let err = load_ref(loader(&dir), uri.clone())
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains(&uri) && err.contains("outside"), "{err}");
    }

    #[tokio::test]
    async fn issue_9_a_fifo_and_a_device_are_not_regular_files() {
        let dir = sandbox("fifo");
        let fifo = dir.join("tree/pipe.json");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let uri = fifo.display().to_string();
        // Refused before opening: opening a FIFO without a writer would block forever.
        let err = load_ref(loader(&dir), uri.clone())
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&uri) && err.contains("not a regular file"),
            "{err}"
        );
        // A device allowed by ref_dirs is still not read.
        let err = load_ref(
            loader(&dir).with_ref_dirs(&[PathBuf::from("/dev")]),
            "/dev/zero".to_owned(),
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("/dev/zero") && err.contains("not a regular file"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn issue_9_ref_dirs_allow_a_listed_directory() {
        let dir = sandbox("allowed");
        let uri = dir.join("secret.json").display().to_string();
        let allowed = loader(&dir).with_ref_dirs(std::slice::from_ref(&dir));
        assert!(load_ref(allowed, uri).await.unwrap().contains("token"));
    }

    #[test]
    fn issue_9_the_document_itself_must_be_a_regular_file() {
        let err = read(Path::new("/dev/zero")).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
    }
}
