//! Connection-level limits (issue 8, defect 3) over real loopback sockets: slow or idle clients
//! are disconnected, a full server still answers, and shutdown is bounded.
//!
//! Waits are bounded by generous margins (`BOUND`), never asserted to be short.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::StatusCode;
use axum::routing::{get, post};
use otc_adapters::Adapter;
use otc_adapters::fake::FakeAdapter;
use otc_bridge::{ConnectionLimits, ServerSettings, is_body_timeout, serve};
use otc_tests::bridge::TestBridge;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, mpsc, oneshot};
use tokio::task::JoinHandle;

/// How long any expected event may take; the limits under test are a second or two.
const BOUND: Duration = Duration::from_secs(15);

fn limits() -> ConnectionLimits {
    ConnectionLimits {
        header_read_timeout: Duration::from_secs(1),
        body_read_timeout: Duration::from_secs(1),
        idle_timeout: Duration::from_secs(1),
        max_connections: Some(64),
        shutdown_timeout: Duration::from_secs(1),
    }
}

async fn bridge(limits: ConnectionLimits) -> TestBridge {
    TestBridge::start_with_limits(
        vec![Arc::new(FakeAdapter::new("empty")) as Arc<dyn Adapter>],
        ServerSettings::default(),
        None,
        limits,
    )
    .await
}

fn addr(bridge: &TestBridge) -> String {
    bridge.url.trim_start_matches("http://").to_owned()
}

/// A server running `app` under `limits`, stopped by the returned sender.
struct Served {
    addr: String,
    stop: oneshot::Sender<()>,
    task: JoinHandle<std::io::Result<()>>,
}

async fn served(app: Router, limits: ConnectionLimits) -> Served {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(serve(listener, app, limits, async {
        let _ = stopped.await;
    }));
    Served { addr, stop, task }
}

/// Reads one HTTP/1.1 response with a `Content-Length` body; returns its head and body.
async fn read_response(stream: &mut TcpStream) -> String {
    let mut buf = Vec::new();
    loop {
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await.unwrap();
        assert!(n > 0, "connection closed mid-response: {buf:?}");
        buf.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&buf).into_owned();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|l| {
                    let (name, value) = l.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse::<usize>().unwrap())
                })
                .unwrap_or(0);
            if buf.len() >= end + 4 + length {
                return text;
            }
        }
    }
}

/// Completes when the server closes `stream` (end of input or a reset), ignoring anything it
/// sends first (such as a 408).
async fn closed_by_server(stream: &mut TcpStream) {
    let mut sink = Vec::new();
    let _ = stream.read_to_end(&mut sink).await;
}

#[tokio::test]
async fn issue_8_half_sent_header_is_disconnected_after_header_timeout() {
    let b = bridge(ConnectionLimits {
        idle_timeout: Duration::from_secs(600),
        ..limits()
    })
    .await;
    let mut stream = TcpStream::connect(addr(&b)).await.unwrap();
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        .await
        .unwrap();
    tokio::time::timeout(BOUND, closed_by_server(&mut stream))
        .await
        .expect("a half-sent header kept the connection open");
}

#[tokio::test]
async fn issue_8_half_sent_body_fails_after_body_timeout() {
    // The handler reads the body as the bridge's handlers do, with `axum::body::to_bytes`.
    let app = Router::new().route(
        "/echo",
        post(|body: Body| async move {
            match axum::body::to_bytes(body, 1 << 20).await {
                Ok(_) => StatusCode::OK,
                Err(error) if is_body_timeout(&error) => StatusCode::REQUEST_TIMEOUT,
                Err(_) => StatusCode::BAD_REQUEST,
            }
        }),
    );
    let server = served(
        app,
        ConnectionLimits {
            idle_timeout: Duration::from_secs(600),
            ..limits()
        },
    )
    .await;
    let mut stream = TcpStream::connect(&server.addr).await.unwrap();
    stream
        .write_all(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"half\":")
        .await
        .unwrap();
    let response = tokio::time::timeout(BOUND, read_response(&mut stream))
        .await
        .expect("a half-sent body kept the request waiting");
    assert!(response.starts_with("HTTP/1.1 408"), "{response}");
    drop(server.stop);
    server.task.await.unwrap().unwrap();
}

#[tokio::test]
async fn issue_8_half_sent_body_to_the_bridge_is_answered_or_closed() {
    // The idle deadline does not run while a request is in flight, so only the body deadline
    // can end this request; the idle one then closes the connection if the bridge kept it.
    let b = bridge(ConnectionLimits {
        header_read_timeout: Duration::from_secs(600),
        ..limits()
    })
    .await;
    let mut stream = TcpStream::connect(addr(&b)).await.unwrap();
    stream
        .write_all(
            b"POST /tools/call HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
              Content-Length: 100\r\n\r\n{\"request\":",
        )
        .await
        .unwrap();
    tokio::time::timeout(BOUND, closed_by_server(&mut stream))
        .await
        .expect("a half-sent body kept the connection open");
}

#[tokio::test]
async fn issue_8_idle_keep_alive_connection_is_closed_after_idle_timeout() {
    // A long header deadline, so that only the idle deadline can close the connection.
    let b = bridge(ConnectionLimits {
        header_read_timeout: Duration::from_secs(600),
        ..limits()
    })
    .await;
    let mut stream = TcpStream::connect(addr(&b)).await.unwrap();
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    let response = read_response(&mut stream).await;
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    tokio::time::timeout(BOUND, closed_by_server(&mut stream))
        .await
        .expect("an idle keep-alive connection stayed open");
}

/// One `GET /health` on a fresh connection; `None` if the connection failed.
async fn health_status(url: &str) -> Option<u16> {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let response = client.get(format!("{url}/health")).send().await.ok()?;
    Some(response.status().as_u16())
}

#[tokio::test]
async fn issue_8_connections_beyond_the_cap_are_refused_and_capacity_returns() {
    const CAP: usize = 4;
    let b = bridge(ConnectionLimits {
        header_read_timeout: Duration::from_secs(600),
        idle_timeout: Duration::from_secs(600),
        max_connections: Some(CAP),
        ..limits()
    })
    .await;
    let mut idle = Vec::new();
    for _ in 0..CAP {
        idle.push(TcpStream::connect(addr(&b)).await.unwrap());
    }
    // The (N+1)th client gets a quick, clean refusal instead of waiting.
    let refused = tokio::time::timeout(BOUND, health_status(&b.url))
        .await
        .expect("a client beyond the cap was left waiting");
    assert_eq!(refused, Some(503));

    // Once the idle clients go, new calls succeed (the server notices the closes on its own
    // schedule, hence the bounded retry).
    drop(idle);
    tokio::time::timeout(BOUND, async {
        loop {
            if health_status(&b.url).await == Some(200) {
                break;
            }
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("capacity did not come back after the idle clients left");
}

#[tokio::test]
async fn issue_8_half_sent_request_does_not_block_shutdown() {
    // A handler reading a body that never completes: graceful shutdown waits for it, and every
    // other deadline is far away, so only the shutdown deadline can end it.
    let (started_tx, mut started) = mpsc::channel::<()>(1);
    let app = Router::new().route(
        "/upload",
        post(move |body: Body| {
            let started_tx = started_tx.clone();
            async move {
                started_tx.send(()).await.unwrap();
                let _ = axum::body::to_bytes(body, 1 << 20).await;
                StatusCode::OK
            }
        }),
    );
    let server = served(
        app,
        ConnectionLimits {
            header_read_timeout: Duration::from_secs(600),
            body_read_timeout: Duration::from_secs(600),
            idle_timeout: Duration::from_secs(600),
            ..limits()
        },
    )
    .await;
    let mut stream = TcpStream::connect(&server.addr).await.unwrap();
    stream
        .write_all(b"POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"half\":")
        .await
        .unwrap();
    tokio::time::timeout(BOUND, started.recv())
        .await
        .unwrap()
        .unwrap();
    server.stop.send(()).unwrap();
    tokio::time::timeout(BOUND, server.task)
        .await
        .expect("a half-sent request blocked shutdown")
        .unwrap()
        .unwrap();
    tokio::time::timeout(BOUND, closed_by_server(&mut stream))
        .await
        .expect("the connection outlived the server");
}

#[tokio::test]
async fn issue_8_in_flight_call_finishes_during_graceful_shutdown() {
    let (started_tx, mut started) = mpsc::channel::<()>(1);
    let release = Arc::new(Notify::new());
    let app = {
        let release = release.clone();
        Router::new().route(
            "/slow",
            get(move || {
                let started_tx = started_tx.clone();
                let release = release.clone();
                async move {
                    started_tx.send(()).await.unwrap();
                    release.notified().await;
                    "done"
                }
            }),
        )
    };
    let server = served(
        app,
        ConnectionLimits {
            shutdown_timeout: Duration::from_secs(60),
            ..limits()
        },
    )
    .await;
    let url = format!("http://{}/slow", server.addr);
    let call = tokio::spawn(async move {
        let response = reqwest::get(url).await.unwrap();
        (response.status().as_u16(), response.text().await.unwrap())
    });
    tokio::time::timeout(BOUND, started.recv())
        .await
        .unwrap()
        .unwrap();
    server.stop.send(()).unwrap();
    // Shutdown has begun once the listener is closed; only then let the call finish.
    tokio::time::timeout(BOUND, async {
        while TcpStream::connect(&server.addr).await.is_ok() {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the server kept accepting after the shutdown signal");
    release.notify_one();
    let (status, body) = tokio::time::timeout(BOUND, call).await.unwrap().unwrap();
    assert_eq!((status, body.as_str()), (200, "done"));
    tokio::time::timeout(BOUND, server.task)
        .await
        .expect("shutdown did not complete after the in-flight call")
        .unwrap()
        .unwrap();
}

/// Set in the child process of [`issue_8_accept_loop_survives_descriptor_exhaustion`].
const DESCRIPTOR_CHILD: &str = "OTC_TEST_DESCRIPTOR_CHILD";

/// Out of descriptors, `accept` fails with `EMFILE`; the loop must back off and keep accepting,
/// not end or give up. The limit is per process, so the test runs itself again in a child
/// process under `prlimit` (util-linux) with a low limit.
#[test]
fn issue_8_accept_loop_survives_descriptor_exhaustion() {
    if std::env::var_os(DESCRIPTOR_CHILD).is_some() {
        descriptor_child();
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let status = std::process::Command::new("prlimit")
        .arg("--nofile=128:128")
        .arg("--")
        .arg(exe)
        .args([
            "--exact",
            "connections::issue_8_accept_loop_survives_descriptor_exhaustion",
            "--test-threads=1",
        ])
        .env(DESCRIPTOR_CHILD, "1")
        .status()
        .expect("prlimit (util-linux) runs this test's child process");
    assert!(status.success(), "the child process failed: {status}");
}

fn descriptor_child() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let b = bridge(ConnectionLimits {
            max_connections: Some(100_000),
            ..limits()
        })
        .await;
        // Open connections until the process runs out of descriptors: the server's accepts
        // then fail with EMFILE, and so, eventually, do the client's own sockets.
        let mut hogs = Vec::new();
        while let Ok(Ok(stream)) =
            tokio::time::timeout(Duration::from_secs(2), TcpStream::connect(addr(&b))).await
        {
            hogs.push(stream);
            assert!(hogs.len() < 1000, "the descriptor limit did not apply");
        }
        drop(hogs);
        tokio::time::timeout(BOUND, async {
            loop {
                if health_status(&b.url).await == Some(200) {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
        .await
        .expect("the server did not recover once descriptors were free");
    });
}
