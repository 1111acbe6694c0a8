//! The accept loop: connection-level limits that `axum::serve` does not offer.
//!
//! `axum::serve` has no header-read, body, idle or shutdown deadline and no connection cap (its
//! docs say to use hyper or hyper-util for configuration). An attack run showed what that costs:
//! slow connections stay open for ever, idle sockets exhaust the descriptor limit and block every
//! new call, and a half-sent request blocks SIGTERM. This module is the same loop as
//! `axum::serve` (hyper-util's `auto` builder, HTTP/1.1 and h2c), with:
//!
//! - a header-read deadline: hyper's own HTTP/1 `header_read_timeout`. Hyper starts that clock
//!   whenever it waits for a request head, including between keep-alive requests, so on HTTP/1
//!   it also bounds idle time;
//! - a body deadline for the whole request body ([`DeadlineBody`]: tower-http's `TimeoutBody`
//!   restarts its clock at every frame, so a client dripping one byte at a time would evade it);
//! - an idle deadline: a connection with no request in flight and no byte read or written for
//!   `idle_timeout` is closed (this covers h2 connections, which hyper's header deadline does not);
//! - a cap on open connections: beyond it a connection gets a `503` with `Connection: close`
//!   (at most [`OVERFLOW_ANSWERS`] at a time, each within [`REFUSAL_DEADLINE`]) or, beyond that,
//!   is closed at once; the loop never stops accepting, and accept errors such as `EMFILE` back
//!   off briefly instead of ending or spinning the loop;
//! - graceful shutdown through hyper-util's [`GracefulShutdown`]: in-flight requests finish, then
//!   after `shutdown_timeout` the remaining connections are dropped and [`serve`] returns.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes, HttpBody};
use http::{Request, Response, StatusCode, header};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use serde::Deserialize;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio::time::{Instant, Sleep};
use tower::ServiceExt;

/// How many connections beyond the cap may be answering `503` at once; beyond that, a new
/// connection is closed without an answer. Refusing politely must not itself be unbounded.
pub(crate) const OVERFLOW_ANSWERS: usize = 64;

/// How long a refused connection may take to send its request head and receive the `503`.
pub(crate) const REFUSAL_DEADLINE: Duration = Duration::from_secs(2);

/// How long the accept loop pauses after an accept error that is not about one connection
/// (`EMFILE`, `ENFILE`, `ENOBUFS`): long enough not to spin, short enough to recover quickly
/// once descriptors are free again.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// Connection-level limits of the HTTP server.
///
/// In a configuration file each field is written in seconds (`header_read_timeout_secs`, ...),
/// except `max_connections`; absent fields keep their defaults.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ConnectionLimits {
    /// A client must send a whole request head within this time, counted from when the server
    /// starts waiting for it (HTTP/1; between keep-alive requests too). Default 10 s.
    #[serde(rename = "header_read_timeout_secs", with = "secs")]
    pub header_read_timeout: Duration,
    /// A client must send a whole request body within this time, counted from when the handler
    /// starts reading it. Default 30 s.
    #[serde(rename = "body_read_timeout_secs", with = "secs")]
    pub body_read_timeout: Duration,
    /// A connection with no request in flight and no traffic for this long is closed. Default
    /// 60 s; on HTTP/1 the header-read timeout closes an idle connection first if it is shorter.
    #[serde(rename = "idle_timeout_secs", with = "secs")]
    pub idle_timeout: Duration,
    /// Open connections beyond which new ones are refused. Default (`None`): derived from the
    /// process's descriptor limit, which upstream connections, MCP children and files share —
    /// three quarters of it, at most 1024 (see `default_max_connections`).
    pub max_connections: Option<usize>,
    /// After the shutdown signal, in-flight requests get this long to finish; then the remaining
    /// connections are dropped. Default 10 s.
    #[serde(rename = "shutdown_timeout_secs", with = "secs")]
    pub shutdown_timeout: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
            max_connections: None,
            shutdown_timeout: Duration::from_secs(10),
        }
    }
}

impl ConnectionLimits {
    /// Refuses limits that would make the server useless: zero durations (hyper treats some as
    /// "fire at once") and a cap of zero connections.
    fn check(&self) -> io::Result<()> {
        let zero = [
            ("header_read_timeout", self.header_read_timeout),
            ("body_read_timeout", self.body_read_timeout),
            ("idle_timeout", self.idle_timeout),
        ]
        .into_iter()
        .find(|(_, d)| d.is_zero());
        if let Some((name, _)) = zero {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{name} must be greater than zero"),
            ));
        }
        if self.max_connections == Some(0) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "max_connections must be at least 1",
            ));
        }
        Ok(())
    }
}

/// Durations as whole or fractional seconds in configuration files.
mod secs {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, de::Error};

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let secs = f64::deserialize(d)?;
        Duration::try_from_secs_f64(secs).map_err(D::Error::custom)
    }
}

/// Serves `app` on `listener` under `limits` until `shutdown` completes, then lets in-flight
/// requests finish for at most `limits.shutdown_timeout` and drops what remains.
///
/// Returns an error only for invalid `limits`; accept errors are logged and survived.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    limits.check()?;
    let max_connections = match limits.max_connections {
        Some(cap) => {
            warn_if_cap_exceeds_descriptors(cap);
            cap
        }
        None => default_max_connections(),
    };
    tracing::debug!(max_connections, "connection cap");
    let permits = Arc::new(Semaphore::new(max_connections));
    let overflow = Arc::new(Semaphore::new(OVERFLOW_ANSWERS));
    let graceful = GracefulShutdown::new();
    let mut connections = JoinSet::new();

    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    builder.http2().timer(TokioTimer::new());

    let mut shutdown = pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            biased;
            () = &mut shutdown => break,
            // Reap finished connection tasks so the set does not grow with every connection.
            Some(_) = connections.join_next() => continue,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _peer)) => stream,
            Err(error) if is_connection_error(&error) => continue,
            Err(error) => {
                tracing::warn!(%error, "accept failed; backing off");
                tokio::select! {
                    () = &mut shutdown => break,
                    () = tokio::time::sleep(ACCEPT_BACKOFF) => continue,
                }
            }
        };
        // Answers are small JSON documents; without this, each one waits for Nagle's algorithm.
        let _ = stream.set_nodelay(true);
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            refuse(stream, &overflow, &mut connections);
            continue;
        };

        let activity = Arc::new(Activity::new());
        let io = TokioIo::new(Tracked {
            inner: stream,
            activity: activity.clone(),
        });
        let service = {
            let activity = activity.clone();
            let body_timeout = limits.body_read_timeout;
            let app = app.clone();
            tower::service_fn(move |request: Request<Incoming>| {
                let in_flight = InFlight::new(activity.clone());
                let request = request.map(|body| Body::new(DeadlineBody::new(body, body_timeout)));
                let app = app.clone();
                async move {
                    let response = app.oneshot(request).await;
                    drop(in_flight);
                    response
                }
            })
        };
        let connection = builder
            .serve_connection(io, TowerToHyperService::new(service))
            .into_owned();
        let connection = graceful.watch(connection);
        let idle_timeout = limits.idle_timeout;
        connections.spawn(async move {
            let _permit = permit;
            tokio::select! {
                result = connection => {
                    if let Err(error) = result {
                        tracing::debug!(%error, "connection ended with an error");
                    }
                }
                () = activity.idle_for(idle_timeout) => {
                    tracing::debug!("closing an idle connection");
                }
            }
        });
    }
    drop(listener);

    tracing::debug!(
        connections = connections.len(),
        "shutting down; waiting for in-flight requests"
    );
    if tokio::time::timeout(limits.shutdown_timeout, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(
            connections = connections.len(),
            "shutdown deadline passed; dropping the remaining connections"
        );
    }
    connections.shutdown().await;
    Ok(())
}

/// Errors that concern one connection only; the next accept may well succeed (as in
/// `axum::serve`).
fn is_connection_error(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

/// Answers a connection beyond the cap with `503` and closes it, within a short deadline; if
/// too many refusals are already under way, closes it at once.
fn refuse(stream: TcpStream, overflow: &Arc<Semaphore>, tasks: &mut JoinSet<()>) {
    let Ok(permit) = overflow.clone().try_acquire_owned() else {
        tracing::debug!("connection limit reached; closing a new connection unanswered");
        return;
    };
    tracing::debug!("connection limit reached; answering 503");
    tasks.spawn(async move {
        let _permit = permit;
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(REFUSAL_DEADLINE)
            .keep_alive(false);
        let service = hyper::service::service_fn(|_request: Request<Incoming>| async {
            Ok::<_, Infallible>(over_capacity())
        });
        let connection = builder.serve_connection(TokioIo::new(stream), service);
        let _ = tokio::time::timeout(REFUSAL_DEADLINE, connection).await;
    });
}

/// The `503` a connection beyond the cap receives, in the standard's `ServerErrorResponse`
/// shape (no dialect is known before the request is read; `message` is common to all).
fn over_capacity() -> Response<String> {
    let mut response = Response::new(
        r#"{"message":"The server has too many open connections; retry shortly."}"#.to_owned(),
    );
    *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    headers.insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
    headers.insert(
        header::CONNECTION,
        header::HeaderValue::from_static("close"),
    );
    response
}

/// What the idle deadline of one connection looks at: requests in flight and the time of the
/// last byte read or written.
#[derive(Debug)]
struct Activity {
    start: Instant,
    /// Milliseconds since `start` of the last byte read or written.
    last: AtomicU64,
    in_flight: AtomicUsize,
}

impl Activity {
    fn new() -> Self {
        Self {
            start: Instant::now(),
            last: AtomicU64::new(0),
            in_flight: AtomicUsize::new(0),
        }
    }

    fn touch(&self) {
        let now = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last.store(now, Ordering::Relaxed);
    }

    /// Completes once the connection has had no request in flight and no traffic for `idle`.
    async fn idle_for(&self, idle: Duration) {
        loop {
            let last = self.start + Duration::from_millis(self.last.load(Ordering::Relaxed));
            let deadline = last + idle;
            if self.in_flight.load(Ordering::Relaxed) > 0 {
                // A handler is working (its own deadlines bound it); look again later.
                tokio::time::sleep(idle).await;
            } else if Instant::now() >= deadline {
                return;
            } else {
                tokio::time::sleep_until(deadline).await;
            }
        }
    }
}

/// Counts one request as in flight for as long as it lives.
#[derive(Debug)]
struct InFlight(Arc<Activity>);

impl InFlight {
    fn new(activity: Arc<Activity>) -> Self {
        activity.in_flight.fetch_add(1, Ordering::Relaxed);
        Self(activity)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.touch();
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A socket that records when bytes last moved, for the idle deadline.
#[derive(Debug)]
struct Tracked {
    inner: TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Tracked {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.activity.touch();
        }
        polled
    }
}

impl AsyncWrite for Tracked {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.touch();
        }
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.touch();
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// The request body did not arrive within `body_read_timeout`.
///
/// Handlers read bodies with `axum::body::to_bytes`; a timed-out body surfaces there as an
/// `axum::Error` whose source chain holds this type: recognise it with [`is_body_timeout`].
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive within {0:?}")]
pub(crate) struct BodyTimeout(Duration);

/// Whether `error` (from reading a request body) is the body timeout.
pub fn is_body_timeout(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut current = Some(error);
    while let Some(error) = current {
        if error.is::<BodyTimeout>() {
            return true;
        }
        current = error.source();
    }
    false
}

/// A request body that fails with [`BodyTimeout`] unless it is complete within a fixed time
/// from its first poll (unlike tower-http's `TimeoutBody`, the clock does not restart per frame).
#[derive(Debug)]
struct DeadlineBody {
    inner: Incoming,
    timeout: Duration,
    deadline: Option<Pin<Box<Sleep>>>,
}

impl DeadlineBody {
    fn new(inner: Incoming, timeout: Duration) -> Self {
        Self {
            inner,
            timeout,
            deadline: None,
        }
    }
}

impl HttpBody for DeadlineBody {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        let timeout = self.timeout;
        let deadline = self
            .deadline
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        if deadline.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Some(Err(Box::new(BodyTimeout(timeout)))));
        }
        Pin::new(&mut self.inner)
            .poll_frame(cx)
            .map_err(|error| Box::new(error) as Self::Error)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// Descriptors the process needs besides client connections: upstream connections, MCP
/// children's pipes, files. A rough reserve, only for the warning below.
const DESCRIPTOR_RESERVE: u64 = 128;

/// The connection cap when none is configured: the descriptor limit less a reserve for upstream
/// connections, MCP children's pipes and files (a quarter of the limit, at least 128 when the
/// limit allows), at most 1024. A cap equal to the limit (1024 under a container's usual
/// `nofile` of 1024) let idle clients take every descriptor, and then no call could open its
/// upstream connection.
fn default_max_connections() -> usize {
    use nix::sys::resource::{Resource, getrlimit};

    let soft = getrlimit(Resource::RLIMIT_NOFILE).map_or(1024, |(soft, _)| soft);
    cap_for_descriptors(soft)
}

fn cap_for_descriptors(limit: u64) -> usize {
    let reserve = (limit / 4).max(DESCRIPTOR_RESERVE.min(limit / 2));
    let cap = limit.saturating_sub(reserve).clamp(1, 1024);
    usize::try_from(cap).unwrap_or(1024)
}

/// Warns when the connection cap cannot be reached before the descriptor limit: then `EMFILE`,
/// not the cap, refuses clients (the loop survives it, but answers nobody meanwhile).
fn warn_if_cap_exceeds_descriptors(max_connections: usize) {
    use nix::sys::resource::{Resource, getrlimit};

    if let Ok((soft, _)) = getrlimit(Resource::RLIMIT_NOFILE) {
        let cap = u64::try_from(max_connections).unwrap_or(u64::MAX);
        if cap.saturating_add(DESCRIPTOR_RESERVE) > soft {
            tracing::warn!(
                max_connections,
                descriptor_limit = soft,
                "max_connections is close to or above the descriptor limit; lower it or raise the limit"
            );
        }
    }
}

/// Raises the soft limit on open descriptors to the hard limit, so that the connection cap, not
/// the descriptor limit, is what refuses clients. Failure is logged and otherwise ignored: the
/// server still works under the old limit.
pub fn raise_fd_limit() {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};

    match getrlimit(Resource::RLIMIT_NOFILE) {
        Ok((soft, hard)) if soft < hard => match setrlimit(Resource::RLIMIT_NOFILE, hard, hard) {
            Ok(()) => tracing::debug!(from = soft, to = hard, "raised the descriptor limit"),
            Err(error) => {
                tracing::debug!(%error, soft, hard, "could not raise the descriptor limit");
            }
        },
        Ok((soft, _)) => tracing::debug!(limit = soft, "descriptor limit already at its maximum"),
        Err(error) => tracing::debug!(%error, "could not read the descriptor limit"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_8_limits_deserialize_from_seconds_and_refuse_unknown_keys() {
        let limits: ConnectionLimits =
            serde_yaml::from_str("header_read_timeout_secs: 2.5\nmax_connections: 7\n").unwrap();
        assert_eq!(limits.header_read_timeout, Duration::from_millis(2500));
        assert_eq!(limits.max_connections, Some(7));
        assert_eq!(
            limits.idle_timeout,
            ConnectionLimits::default().idle_timeout
        );
        assert!(serde_yaml::from_str::<ConnectionLimits>("header_timeout: 1\n").is_err());
        assert!(serde_yaml::from_str::<ConnectionLimits>("idle_timeout_secs: -1\n").is_err());
    }

    #[test]
    fn issue_8_zero_limits_are_refused() {
        let limits = ConnectionLimits {
            max_connections: Some(0),
            ..ConnectionLimits::default()
        };
        assert!(limits.check().is_err());
        assert!(ConnectionLimits::default().check().is_ok());
    }

    #[test]
    fn the_default_cap_leaves_descriptors_for_upstreams() {
        assert_eq!(cap_for_descriptors(1024), 768);
        assert_eq!(cap_for_descriptors(20_000), 1024);
        assert_eq!(cap_for_descriptors(256), 128);
        assert_eq!(cap_for_descriptors(128), 64);
        assert_eq!(cap_for_descriptors(1), 1);
    }
}
