//! The legacy HTTP+SSE transport (MCP 2024-11-05), server side, so the bridge's SSE client has a
//! real server to talk to (rmcp 3.11 ships neither side of it).
//!
//! `GET /sse` opens a session: the first event, `endpoint`, names `/message?sessionId=ID`; every
//! server message follows as a `message` event. `POST /message?sessionId=ID` takes one client
//! message and answers `202 Accepted`. Each session runs a [`DemoServer`] over a pair of
//! channels; it ends when the event stream is dropped.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::routing::{get, post};
use futures::channel::mpsc;
use futures::{Stream, StreamExt};
use rmcp::ServiceExt;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use serde::Deserialize;

use crate::tools::DemoServer;

#[derive(Clone, Default)]
struct Sessions {
    next: Arc<AtomicU64>,
    inboxes: Arc<Mutex<HashMap<String, mpsc::UnboundedSender<ClientJsonRpcMessage>>>>,
    server: DemoServer,
}

#[derive(Deserialize)]
struct SessionQuery {
    #[serde(rename = "sessionId")]
    session_id: String,
}

/// Serves the legacy transport on `addr` and prints the stream URL.
pub(crate) async fn serve(addr: SocketAddr, server: DemoServer) -> Result<(), String> {
    let sessions = Sessions {
        server,
        ..Sessions::default()
    };
    let app = axum::Router::new()
        .route("/sse", get(open))
        .route("/message", post(message))
        .with_state(sessions);
    crate::serve_announced(addr, app, "/sse").await
}

async fn open(
    State(sessions): State<Sessions>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let id = sessions.next.fetch_add(1, Ordering::SeqCst).to_string();
    let (inbox_tx, inbox_rx) = mpsc::unbounded::<ClientJsonRpcMessage>();
    let (outbox_tx, outbox_rx) = mpsc::unbounded::<ServerJsonRpcMessage>();
    if let Ok(mut inboxes) = sessions.inboxes.lock() {
        inboxes.insert(id.clone(), inbox_tx);
    }
    let server = sessions.server.clone();
    let inboxes = sessions.inboxes.clone();
    let session_id = id.clone();
    tokio::spawn(async move {
        if let Ok(running) = server.serve((outbox_tx, inbox_rx)).await {
            let _ = running.waiting().await;
        }
        if let Ok(mut inboxes) = inboxes.lock() {
            inboxes.remove(&session_id);
        }
    });
    let endpoint = Event::default()
        .event("endpoint")
        .data(format!("/message?sessionId={id}"));
    let messages = outbox_rx.map(|message| {
        let data = serde_json::to_string(&message).unwrap_or_default();
        Ok(Event::default().event("message").data(data))
    });
    Sse::new(futures::stream::once(async { Ok(endpoint) }).chain(messages))
        .keep_alive(KeepAlive::default())
}

async fn message(
    State(sessions): State<Sessions>,
    Query(query): Query<SessionQuery>,
    Json(message): Json<ClientJsonRpcMessage>,
) -> StatusCode {
    let inbox = sessions
        .inboxes
        .lock()
        .ok()
        .and_then(|inboxes| inboxes.get(&query.session_id).cloned());
    match inbox {
        Some(inbox) if inbox.unbounded_send(message).is_ok() => StatusCode::ACCEPTED,
        _ => StatusCode::NOT_FOUND,
    }
}
