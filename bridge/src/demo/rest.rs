//! The demo's REST upstream: "Demo Notes", a tiny in-memory notebook served by axum, with its
//! OpenAPI 3.0 document ([`OPENAPI_YAML`]) at `GET /openapi.yaml`.
//!
//! The five operations are chosen to show the translation rules of DESIGN.md §4 at work:
//!
//! | operation | shows |
//! |---|---|
//! | `GET /notes` (`listNotes`) | query parameters: one with a default (`limit`), one enum |
//! | `POST /notes` (`createNote`) | a JSON body with required fields, merged into the input |
//! | `GET /notes/{noteId}` (`getNote`) | a path parameter; 404 for an unknown id |
//! | `PATCH /notes/{noteId}` (`updateNote`) | path parameter and body side by side |
//! | `DELETE /notes/{noteId}` (`deleteNote`) | 204 No Content; an API key ([`API_KEY`]) |
//!
//! The service checks its inputs itself, like a real one: a direct caller that skips the bridge
//! gets a 400 with the document's JSON `Error` body, not a bare text answer. The document's
//! `servers` entry is relative (`/`), so whoever loads it from [`RestDemo::document_url`]
//! reaches the right port without configuration.

use std::collections::BTreeMap;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// The service's OpenAPI 3.0 document, as served at `GET /openapi.yaml`.
pub(crate) const OPENAPI_YAML: &str = include_str!("openapi.yaml");
/// The API key `deleteNote` wants. It is published in the document: this is a demo.
pub(crate) const API_KEY: &str = "demo-key";
/// The header that carries [`API_KEY`].
pub(crate) const API_KEY_HEADER: &str = "x-api-key";
/// The `securitySchemes` name of the key, which is also the secret id callers put in an OTC
/// call's `context.secrets`. (Only the tests need it by name; the document spells it.)
#[cfg(test)]
pub(crate) const API_KEY_SECRET: &str = "notes_api_key";

const DEFAULT_LIMIT: usize = 10;
const MAX_LIMIT: usize = 50;
const MAX_TITLE_CHARS: usize = 80;
const MAX_BODY_CHARS: usize = 2000;
const MAX_TAGS: usize = 5;
const MAX_TAG_CHARS: usize = 30;

/// A running demo service. Dropping it stops the service too (gracefully, in the background);
/// [`RestDemo::shutdown`] stops it and waits until it has.
#[derive(Debug)]
pub(crate) struct RestDemo {
    addr: SocketAddr,
    shutdown: oneshot::Sender<()>,
    task: JoinHandle<io::Result<()>>,
}

impl RestDemo {
    /// Where the service listens.
    #[cfg(test)]
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The service's root URL, e.g. `http://127.0.0.1:41234/`.
    #[cfg(test)]
    pub(crate) fn base_url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// The URL of the service's OpenAPI document, e.g. `http://127.0.0.1:41234/openapi.yaml`.
    pub(crate) fn document_url(&self) -> String {
        format!("http://{}/openapi.yaml", self.addr)
    }

    /// Stops accepting connections, lets requests in flight finish, and waits for the server.
    pub(crate) async fn shutdown(self) -> io::Result<()> {
        // The receiver is gone only if the server already ended; its result says how.
        let _ = self.shutdown.send(());
        self.task.await.map_err(io::Error::other)?
    }
}

/// Starts the service on `listener` (bind `127.0.0.1:0` for a free port) with its two
/// starting notes, and returns at once; the service runs on the current tokio runtime.
pub(crate) async fn start(listener: TcpListener) -> io::Result<RestDemo> {
    let addr = listener.local_addr()?;
    let (shutdown, stopped) = oneshot::channel::<()>();
    let server = axum::serve(listener, app()).with_graceful_shutdown(async move {
        // A dropped sender stops the service as well as an explicit shutdown does.
        let _ = stopped.await;
    });
    let task = tokio::spawn(async move { server.await });
    tracing::debug!(%addr, "Demo REST service listening.");
    Ok(RestDemo {
        addr,
        shutdown,
        task,
    })
}

/// The service as a router, with a fresh store holding the two starting notes.
pub(crate) fn app() -> Router {
    let store = Arc::new(Mutex::new(Store::seeded()));
    Router::new()
        .route("/openapi.yaml", get(document))
        .route("/notes", get(list_notes).post(create_note))
        .route(
            "/notes/{note_id}",
            get(get_note).patch(update_note).delete(delete_note),
        )
        .fallback(no_route)
        .with_state(store)
}

type SharedStore = Arc<Mutex<Store>>;

#[derive(Debug)]
struct Store {
    next_id: u64,
    notes: BTreeMap<u64, Note>,
}

impl Store {
    fn seeded() -> Self {
        let mut store = Self {
            next_id: 1,
            notes: BTreeMap::new(),
        };
        store.insert(NewNote {
            title: "Welcome".to_owned(),
            body: "This note lives in the demo REST service behind otc-bridge.".to_owned(),
            tags: vec!["demo".to_owned()],
            pinned: true,
        });
        store.insert(NewNote {
            title: "Ideas".to_owned(),
            body: "Call DemoNotes.CreateNote to add one of your own.".to_owned(),
            tags: vec!["demo".to_owned(), "ideas".to_owned()],
            pinned: false,
        });
        store
    }

    fn insert(&mut self, new: NewNote) -> Note {
        let note = Note {
            id: self.next_id,
            title: new.title,
            body: new.body,
            tags: new.tags,
            pinned: new.pinned,
        };
        self.next_id += 1;
        self.notes.insert(note.id, note.clone());
        note
    }
}

/// The store is only touched between awaits, so a std mutex is the right lock. A panic while
/// holding it cannot leave a note half-written (every change is one assignment), so a poisoned
/// lock is still safe to use.
fn lock(store: &SharedStore) -> MutexGuard<'_, Store> {
    store.lock().unwrap_or_else(PoisonError::into_inner)
}

#[derive(Debug, Clone, Serialize)]
struct Note {
    id: u64,
    title: String,
    body: String,
    tags: Vec<String>,
    pinned: bool,
}

#[derive(Debug, Deserialize)]
struct NewNote {
    title: String,
    body: String,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    pinned: bool,
}

#[derive(Debug, Deserialize)]
struct NoteUpdate {
    title: Option<String>,
    body: Option<String>,
    tags: Option<Vec<String>>,
    pinned: Option<bool>,
}

#[derive(Debug, Deserialize)]
struct ListQuery {
    #[serde(default = "default_limit")]
    limit: usize,
    #[serde(default)]
    order: Order,
    tag: Option<String>,
}

fn default_limit() -> usize {
    DEFAULT_LIMIT
}

#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Order {
    #[default]
    Newest,
    Oldest,
}

/// An error answer: the document's `Error` schema with its status.
#[derive(Debug)]
struct Problem {
    status: StatusCode,
    code: &'static str,
    message: String,
}

impl Problem {
    fn bad_request(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            code: "bad_request",
            message: message.into(),
        }
    }

    fn no_note(id: u64) -> Self {
        Self {
            status: StatusCode::NOT_FOUND,
            code: "not_found",
            message: format!("There is no note with id {id}. List the notes to see their ids."),
        }
    }

    fn unauthorized(message: &str) -> Self {
        Self {
            status: StatusCode::UNAUTHORIZED,
            code: "unauthorized",
            message: message.to_owned(),
        }
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let body = json!({"code": self.code, "message": self.message});
        (self.status, Json(body)).into_response()
    }
}

// axum's extractor rejections answer in plain text; the document promises JSON errors.
impl From<JsonRejection> for Problem {
    fn from(rejection: JsonRejection) -> Self {
        Self::bad_request(rejection.body_text())
    }
}

impl From<QueryRejection> for Problem {
    fn from(rejection: QueryRejection) -> Self {
        Self::bad_request(rejection.body_text())
    }
}

impl From<PathRejection> for Problem {
    fn from(rejection: PathRejection) -> Self {
        Self::bad_request(rejection.body_text())
    }
}

/// Checks the fields the document constrains; `None` means "not given" (an update).
fn check_fields(
    title: Option<&str>,
    body: Option<&str>,
    tags: Option<&[String]>,
) -> Result<(), Problem> {
    if let Some(title) = title {
        let chars = title.chars().count();
        if chars == 0 || chars > MAX_TITLE_CHARS {
            return Err(Problem::bad_request(format!(
                "title must have 1 to {MAX_TITLE_CHARS} characters, not {chars}"
            )));
        }
    }
    if let Some(body) = body {
        let chars = body.chars().count();
        if chars > MAX_BODY_CHARS {
            return Err(Problem::bad_request(format!(
                "body must have at most {MAX_BODY_CHARS} characters, not {chars}"
            )));
        }
    }
    if let Some(tags) = tags {
        if tags.len() > MAX_TAGS {
            return Err(Problem::bad_request(format!(
                "a note has at most {MAX_TAGS} tags, not {}",
                tags.len()
            )));
        }
        if let Some(bad) = tags
            .iter()
            .find(|t| t.is_empty() || t.chars().count() > MAX_TAG_CHARS)
        {
            return Err(Problem::bad_request(format!(
                "tag '{bad}' must have 1 to {MAX_TAG_CHARS} characters"
            )));
        }
    }
    Ok(())
}

async fn document() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/yaml")], OPENAPI_YAML)
}

async fn no_route() -> Problem {
    Problem {
        status: StatusCode::NOT_FOUND,
        code: "not_found",
        message: "No such endpoint; the operations are described at /openapi.yaml.".to_owned(),
    }
}

async fn list_notes(
    State(store): State<SharedStore>,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Json<serde_json::Value>, Problem> {
    let Query(query) = query?;
    if !(1..=MAX_LIMIT).contains(&query.limit) {
        return Err(Problem::bad_request(format!(
            "limit must be between 1 and {MAX_LIMIT}, not {}",
            query.limit
        )));
    }
    let store = lock(&store);
    let matching = store.notes.values().filter(|note| {
        query
            .tag
            .as_ref()
            .is_none_or(|tag| note.tags.iter().any(|t| t == tag))
    });
    let matching: Vec<&Note> = match query.order {
        Order::Newest => matching.rev().collect(),
        Order::Oldest => matching.collect(),
    };
    let notes: Vec<&Note> = matching.iter().copied().take(query.limit).collect();
    Ok(Json(json!({"notes": notes, "total": matching.len()})))
}

async fn create_note(
    State(store): State<SharedStore>,
    payload: Result<Json<NewNote>, JsonRejection>,
) -> Result<(StatusCode, Json<Note>), Problem> {
    let Json(new) = payload?;
    check_fields(Some(&new.title), Some(&new.body), Some(&new.tags))?;
    let note = lock(&store).insert(new);
    Ok((StatusCode::CREATED, Json(note)))
}

async fn get_note(
    State(store): State<SharedStore>,
    id: Result<Path<u64>, PathRejection>,
) -> Result<Json<Note>, Problem> {
    let Path(id) = id?;
    let store = lock(&store);
    let note = store.notes.get(&id).ok_or_else(|| Problem::no_note(id))?;
    Ok(Json(note.clone()))
}

async fn update_note(
    State(store): State<SharedStore>,
    id: Result<Path<u64>, PathRejection>,
    payload: Result<Json<NoteUpdate>, JsonRejection>,
) -> Result<Json<Note>, Problem> {
    let Path(id) = id?;
    let Json(update) = payload?;
    if update.title.is_none()
        && update.body.is_none()
        && update.tags.is_none()
        && update.pinned.is_none()
    {
        return Err(Problem::bad_request(
            "nothing to change: give at least one of title, body, tags, pinned",
        ));
    }
    check_fields(
        update.title.as_deref(),
        update.body.as_deref(),
        update.tags.as_deref(),
    )?;
    let mut store = lock(&store);
    let note = store
        .notes
        .get_mut(&id)
        .ok_or_else(|| Problem::no_note(id))?;
    if let Some(title) = update.title {
        note.title = title;
    }
    if let Some(body) = update.body {
        note.body = body;
    }
    if let Some(tags) = update.tags {
        note.tags = tags;
    }
    if let Some(pinned) = update.pinned {
        note.pinned = pinned;
    }
    Ok(Json(note.clone()))
}

async fn delete_note(
    State(store): State<SharedStore>,
    headers: HeaderMap,
    id: Result<Path<u64>, PathRejection>,
) -> Result<StatusCode, Problem> {
    // The key is checked before the id, so a caller without it learns nothing about the notes.
    match headers.get(API_KEY_HEADER).map(|v| v.as_bytes()) {
        None => {
            return Err(Problem::unauthorized(
                "Deleting a note needs the API key in the X-Api-Key header.",
            ));
        }
        Some(key) if key != API_KEY.as_bytes() => {
            return Err(Problem::unauthorized("The API key in X-Api-Key is wrong."));
        }
        Some(_) => {}
    }
    let Path(id) = id?;
    match lock(&store).notes.remove(&id) {
        Some(_) => Ok(StatusCode::NO_CONTENT),
        None => Err(Problem::no_note(id)),
    }
}

#[cfg(test)]
#[path = "rest_tests.rs"]
mod tests;
