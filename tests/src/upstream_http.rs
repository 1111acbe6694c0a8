//! A real HTTP upstream for the OpenAPI adapter's tests: an axum server on `127.0.0.1:0` whose
//! operations are described by `tests/fixtures/openapi/upstream.yaml`.
//!
//! Every `/echo/...` route answers with what it received, exactly as it arrived on the wire (raw
//! path and query, headers, the body decoded by its media type), so a test can check that a
//! value was serialised as the document says. The other routes each produce one upstream
//! behaviour: a status with `Retry-After`, a slow answer, invalid JSON, a big body, a connection
//! that breaks mid-body, redirects, credentials echoed in disguise (`/leak`), a record with HTTP
//! caching headers (`/cached/{key}`: `Cache-Control: max-age`, `ETag`, and `304 Not Modified`
//! for a matching `If-None-Match`; a PUT gives it a new version).
//!
//! What arrived on the wire can also be read on the test's side: [`Upstream::last_headers`].

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, RawQuery, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use hyper_util::service::TowerToHyperService;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio::net::TcpListener;
use tokio::task::{JoinHandle, JoinSet};

/// The bytes `GET /binary` answers with (a PNG signature).
pub const BINARY_BODY: &[u8] = &[0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];

/// The upstream's OpenAPI document, also served at `/openapi.yaml` (with a relative server URL,
/// so a document fetched from there resolves to this upstream).
pub const DOCUMENT: &str = include_str!("../fixtures/openapi/upstream.yaml");

/// A document whose body schema is a `$ref` to a sibling file, served at `/split/api.yaml`.
pub const SPLIT_API: &str = include_str!("../fixtures/openapi/split/api.yaml");
/// The sibling of [`SPLIT_API`], served at `/split/schemas.yaml`.
pub const SPLIT_SCHEMAS: &str = include_str!("../fixtures/openapi/split/schemas.yaml");

/// The path of the split document's main file.
pub fn split_document_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/openapi/split/api.yaml")
}

/// A document with operations the adapter must refuse at build time: servers at link-local and
/// metadata addresses, credentials that can never be placed; only `GET /fine` is served.
pub fn misconfigured_document_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/openapi/misconfigured.yaml")
}

/// A document whose only server is the cloud metadata address.
pub fn metadata_only_document_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/openapi/metadata-only.yaml")
}

/// The OpenAPI document that describes this upstream.
pub fn document_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/openapi/upstream.yaml")
}

/// A running upstream; stopped when dropped, its connections closed.
#[derive(Debug)]
pub struct Upstream {
    addr: SocketAddr,
    hits: Arc<AtomicUsize>,
    last_headers: Arc<Mutex<HeaderMap>>,
    task: JoinHandle<()>,
}

impl Drop for Upstream {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Upstream {
    /// Starts the upstream on a free loopback port.
    pub async fn start() -> Self {
        let hits = Arc::new(AtomicUsize::new(0));
        let last_headers = Arc::new(Mutex::new(HeaderMap::new()));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = router(Seen {
            hits: Arc::clone(&hits),
            last_headers: Arc::clone(&last_headers),
        });
        let task = tokio::spawn(serve(listener, app));
        Self {
            addr,
            hits,
            last_headers,
            task,
        }
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The socket address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// How many requests reached it.
    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }

    /// The headers of the last request that reached it, as they arrived (for checks that cannot
    /// read an echo: the adapter scrubs the bridge's credentials from answers).
    pub fn last_headers(&self) -> HeaderMap {
        self.last_headers.lock().unwrap().clone()
    }
}

/// Serves `app` on `listener`, each connection a task of a set the serving task owns, so that
/// aborting that task (dropping the [`Upstream`]) closes every connection at once, requests in
/// flight included: the upstream is gone, as when its process dies. (`axum::serve` spawns
/// connections on their own, and they outlive it.)
async fn serve(listener: TcpListener, app: Router) {
    let mut connections = JoinSet::new();
    loop {
        let accepted = tokio::select! {
            // Reap finished connections so the set does not grow with every request.
            Some(_) = connections.join_next() => continue,
            accepted = listener.accept() => accepted,
        };
        let Ok((stream, _)) = accepted else { continue };
        let service = TowerToHyperService::new(app.clone());
        connections.spawn(async move {
            let _ = Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// What the middleware records of every request.
#[derive(Clone)]
struct Seen {
    hits: Arc<AtomicUsize>,
    last_headers: Arc<Mutex<HeaderMap>>,
}

fn router(seen: Seen) -> Router {
    Router::new()
        .route("/echo", any(echo))
        .route("/echo/{*rest}", any(echo))
        .route("/status/{code}", any(status))
        .route("/slow", get(slow))
        .route("/invalid-json", get(invalid_json))
        .route("/big", get(big))
        .route("/items", get(items))
        .route("/cached/{key}", get(cached_read).put(cached_bump))
        .route("/text", get(|| async { "hello, world" }))
        .route("/binary", get(binary))
        .route("/empty", any(|| async { StatusCode::NO_CONTENT }))
        .route("/redirect", get(redirect))
        .route("/reset", get(reset))
        .route("/leak/{code}", get(leak))
        .route("/openapi.yaml", get(|| async { DOCUMENT }))
        .route("/split/api.yaml", get(|| async { SPLIT_API }))
        .route("/split/schemas.yaml", get(|| async { SPLIT_SCHEMAS }))
        .layer(axum::middleware::from_fn_with_state(
            seen,
            |State(seen): State<Seen>, req: Request, next: axum::middleware::Next| async move {
                seen.hits.fetch_add(1, Ordering::SeqCst);
                *seen.last_headers.lock().unwrap() = req.headers().clone();
                next.run(req).await
            },
        ))
}

/// Echoes the request as it arrived.
async fn echo(request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    let content_type = header_text(&parts.headers, header::CONTENT_TYPE.as_str());
    axum::Json(json!({
        "method": parts.method.as_str(),
        "path": parts.uri.path(),
        "query": parts.uri.query(),
        "headers": headers_json(&parts.headers),
        "body": body_json(content_type.as_deref(), &bytes),
    }))
    .into_response()
}

fn header_text(headers: &HeaderMap, name: &str) -> Option<String> {
    let values: Vec<&str> = headers
        .get_all(name)
        .iter()
        .map(|v| v.to_str().unwrap_or("<binary>"))
        .collect();
    (!values.is_empty()).then(|| values.join(", "))
}

fn headers_json(headers: &HeaderMap) -> Value {
    let mut map = Map::new();
    for name in headers.keys() {
        if let Some(text) = header_text(headers, name.as_str()) {
            map.insert(name.as_str().to_owned(), Value::String(text));
        }
    }
    Value::Object(map)
}

/// The body as the echo reports it: `json`, `form` pairs, multipart `parts`, `text`, or
/// `bytes` (numbers) for anything that is not UTF-8.
fn body_json(content_type: Option<&str>, bytes: &[u8]) -> Value {
    if bytes.is_empty() {
        return Value::Null;
    }
    let content_type = content_type.unwrap_or_default();
    let mut out = json!({ "content_type": content_type });
    if content_type.starts_with("application/json") {
        out["json"] = serde_json::from_slice(bytes).unwrap_or(Value::Null);
    } else if content_type.starts_with("application/x-www-form-urlencoded") {
        let pairs: Vec<(String, String)> = serde_urlencoded_pairs(bytes);
        out["form"] = json!(pairs);
    } else if let Some(boundary) = content_type
        .strip_prefix("multipart/form-data; boundary=")
        .map(|b| b.trim_matches('"'))
    {
        out["parts"] = Value::Array(multipart_parts(bytes, boundary));
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => out["text"] = Value::String(text.to_owned()),
        Err(_) => out["bytes"] = json!(bytes),
    }
    out
}

fn serde_urlencoded_pairs(bytes: &[u8]) -> Vec<(String, String)> {
    axum::extract::Query::<Vec<(String, String)>>::try_from_uri(
        &format!("/?{}", String::from_utf8_lossy(bytes))
            .parse()
            .unwrap(),
    )
    .map(|q| q.0)
    .unwrap_or_default()
}

/// A small multipart/form-data reader: each part's name, filename, type and content.
fn multipart_parts(body: &[u8], boundary: &str) -> Vec<Value> {
    let delimiter = format!("--{boundary}");
    let text = body;
    let mut parts = Vec::new();
    let positions: Vec<usize> = find_all(text, delimiter.as_bytes());
    for pair in positions.windows(2) {
        let start = pair[0] + delimiter.len() + 2; // skip the delimiter and CRLF
        let end = pair[1] - 2; // the CRLF before the next delimiter
        let part = &text[start..end];
        let split = find_all(part, b"\r\n\r\n")[0];
        let head = String::from_utf8_lossy(&part[..split]).into_owned();
        let content = &part[split + 4..];
        let mut value = json!({});
        for line in head.split("\r\n") {
            let (name, rest) = line.split_once(':').unwrap();
            if name.eq_ignore_ascii_case("content-type") {
                value["content_type"] = json!(rest.trim());
            }
            if name.eq_ignore_ascii_case("content-disposition") {
                for attr in rest.split(';').skip(1) {
                    let (k, v) = attr.trim().split_once('=').unwrap();
                    value[k] = json!(v.trim_matches('"'));
                }
            }
        }
        match std::str::from_utf8(content) {
            Ok(s) => value["text"] = json!(s),
            Err(_) => value["bytes"] = json!(content),
        }
        parts.push(value);
    }
    parts
}

fn find_all(haystack: &[u8], needle: &[u8]) -> Vec<usize> {
    (0..haystack.len().saturating_sub(needle.len() - 1))
        .filter(|&i| haystack[i..].starts_with(needle))
        .collect()
}

#[derive(Deserialize)]
struct StatusQuery {
    retry_after: Option<String>,
}

/// Answers `code` with a JSON body that repeats the credentials it was sent (a careless
/// upstream), and `Retry-After` when asked.
async fn status(
    Path(code): Path<u16>,
    Query(query): Query<StatusQuery>,
    headers: HeaderMap,
) -> Response {
    let status = StatusCode::from_u16(code).unwrap();
    let body = json!({
        "error": format!("failed with {code}"),
        "authorization": header_text(&headers, "authorization"),
        "api_key": header_text(&headers, "x-api-key"),
    });
    let mut response = (status, axum::Json(body)).into_response();
    if let Some(retry_after) = query.retry_after {
        response.headers_mut().insert(
            header::RETRY_AFTER,
            HeaderValue::from_str(&retry_after).unwrap(),
        );
    }
    response
}

/// Never answers.
async fn slow() -> Response {
    std::future::pending::<()>().await;
    StatusCode::OK.into_response()
}

async fn invalid_json() -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        "{\"truncated\": ",
    )
        .into_response()
}

#[derive(Deserialize)]
struct BigQuery {
    bytes: usize,
    #[serde(default)]
    chunked: bool,
}

/// `bytes` bytes of JSON-free text, with a `Content-Length` or (with `chunked`) streamed
/// without one, so the adapter's limit is tested both ways.
async fn big(Query(query): Query<BigQuery>) -> Response {
    let content = vec![b'x'; query.bytes];
    let headers = [(header::CONTENT_TYPE, "text/plain")];
    if query.chunked {
        let chunks: Vec<Result<Bytes, std::io::Error>> = content
            .chunks(1024)
            .map(|c| Ok(Bytes::copy_from_slice(c)))
            .collect();
        (headers, Body::from_stream(futures::stream::iter(chunks))).into_response()
    } else {
        (headers, content).into_response()
    }
}

#[derive(Deserialize)]
struct ItemsQuery {
    count: usize,
}

#[derive(Deserialize)]
struct CachedQuery {
    max_age: Option<u64>,
    #[serde(default)]
    etag: bool,
    #[serde(default)]
    private: bool,
}

/// The version of every `/cached` record, and how many full answers `/cached` has given.
static CACHED_VERSION: AtomicUsize = AtomicUsize::new(1);
static CACHED_ANSWERS: AtomicUsize = AtomicUsize::new(0);

/// A record whose answer carries the caching headers its query asks for; with `etag`, a request
/// whose `If-None-Match` names the current version is answered `304 Not Modified`.
async fn cached_read(
    Path(key): Path<String>,
    Query(query): Query<CachedQuery>,
    headers: HeaderMap,
) -> Response {
    let version = CACHED_VERSION.load(Ordering::SeqCst);
    let tag = format!("\"v{version}\"");
    let mut extra = HeaderMap::new();
    if let Some(age) = query.max_age {
        let scope = if query.private { "private" } else { "public" };
        extra.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_str(&format!("{scope}, max-age={age}")).unwrap(),
        );
    }
    if query.etag {
        extra.insert(header::ETAG, HeaderValue::from_str(&tag).unwrap());
        let matches = headers
            .get(header::IF_NONE_MATCH)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v == tag);
        if matches {
            return (StatusCode::NOT_MODIFIED, extra).into_response();
        }
    }
    let answers = CACHED_ANSWERS.fetch_add(1, Ordering::SeqCst) + 1;
    (
        extra,
        axum::Json(json!({"key": key, "version": version, "answers": answers})),
    )
        .into_response()
}

/// A new version of every `/cached` record.
async fn cached_bump() -> Response {
    CACHED_VERSION.fetch_add(1, Ordering::SeqCst);
    StatusCode::OK.into_response()
}

/// `count` items of about 100 bytes of JSON each: a large structured answer.
async fn items(Query(query): Query<ItemsQuery>) -> Response {
    let items: Vec<Value> = (0..query.count)
        .map(|i| json!({"id": i, "title": format!("Item number {i}"), "body": "lorem ipsum dolor sit amet, consectetur adipiscing elit"}))
        .collect();
    axum::Json(items).into_response()
}

async fn binary() -> Response {
    ([(header::CONTENT_TYPE, "image/png")], BINARY_BODY).into_response()
}

#[derive(Deserialize)]
struct RedirectQuery {
    to: String,
}

async fn redirect(Query(query): Query<RedirectQuery>) -> Response {
    (StatusCode::FOUND, [(header::LOCATION, query.to)]).into_response()
}

/// Starts a chunked body, then fails it: hyper aborts the connection mid-response.
async fn reset() -> Response {
    let chunks: Vec<Result<Bytes, std::io::Error>> = vec![
        Ok(Bytes::from_static(b"{\"partial\": ")),
        Err(std::io::Error::other("upstream crashed")),
    ];
    (
        [(header::CONTENT_TYPE, "application/json")],
        Body::from_stream(futures::stream::iter(chunks)),
    )
        .into_response()
}

/// Answers `code` with every credential it received, written the ways a careless upstream writes
/// them: each character as a JSON `\uXXXX` escape, with `/` as `\/`, percent-encoded as it
/// arrived (cookie and query), and a Basic credential decoded into its user and password.
/// `format` picks the body: `json` (default), `text` (not JSON) or `binary` (the decoded values
/// as raw bytes).
async fn leak(Path(code): Path<u16>, RawQuery(query): RawQuery, headers: HeaderMap) -> Response {
    let mut decoded = Vec::new();
    let mut arrived = Vec::new();
    if let Some(auth) = header_text(&headers, "authorization") {
        let (scheme, token) = auth.split_once(' ').unwrap();
        if scheme == "Basic" {
            let pair = String::from_utf8(base64_decode(token)).unwrap();
            let (user, password) = pair.split_once(':').unwrap();
            decoded.extend([user.to_owned(), password.to_owned()]);
        } else {
            decoded.push(token.to_owned());
        }
    }
    decoded.extend(header_text(&headers, "x-api-key"));
    arrived.extend(header_text(&headers, "cookie"));
    let mut format = "json";
    for pair in query.as_deref().unwrap_or_default().split('&') {
        match pair.split_once('=') {
            Some(("api_key", value)) => arrived.push(value.to_owned()),
            Some(("format", "text")) => format = "text",
            Some(("format", "binary")) => format = "binary",
            _ => {}
        }
    }
    let escaped: Vec<String> = decoded
        .iter()
        .map(|s| {
            s.chars()
                .map(|c| format!("\\u{:04x}", u32::from(c)))
                .collect()
        })
        .collect();
    let slashed: Vec<String> = decoded
        .iter()
        .map(|s| serde_json::to_string(s).unwrap().replace('/', "\\/"))
        .collect();
    let quoted = |items: &[String]| {
        items
            .iter()
            .map(|s| format!("\"{}\"", s.trim_matches('"')))
            .collect::<Vec<_>>()
            .join(",")
    };
    let status = StatusCode::from_u16(code).unwrap();
    let (content_type, body) = match format {
        "text" => (
            "text/plain",
            format!(
                "failed with {code}: {} {} {}",
                escaped.join(" "),
                slashed.join(" "),
                arrived.join(" ")
            )
            .into_bytes(),
        ),
        "binary" => ("application/octet-stream", {
            let mut bytes = vec![0x89, 0x00];
            for value in &decoded {
                bytes.extend_from_slice(value.as_bytes());
                bytes.push(0);
            }
            bytes
        }),
        _ => (
            "application/json",
            format!(
                r#"{{"error":"failed with {code}","escaped":[{}],"slashed":[{}],"arrived":[{}]}}"#,
                quoted(&escaped),
                quoted(&slashed),
                quoted(&arrived)
            )
            .into_bytes(),
        ),
    };
    (status, [(header::CONTENT_TYPE, content_type)], body).into_response()
}

/// Standard base64 with padding (the test crate does without a base64 dependency).
pub fn base64_decode(text: &str) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut bits = 0u32;
    let mut count = 0;
    let mut out = Vec::new();
    for byte in text.bytes().filter(|&b| b != b'=') {
        let value = ALPHABET.iter().position(|&a| a == byte).unwrap();
        bits = (bits << 6) | u32::try_from(value).unwrap();
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push(u8::try_from((bits >> count) & 0xff).unwrap());
        }
    }
    out
}
