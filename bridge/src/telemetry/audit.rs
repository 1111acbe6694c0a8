//! The audit trail (DESIGN.md §14): one JSON line per decided call, each carrying a hash
//! chained to the line before it, so that a line changed, removed or inserted is found by
//! [`verify`], offline, across rotated files.
//!
//! A line is `{…what happened…,"prev":"<hex>","hash":"<hex>"}`, where `hash` is SHA-256 (or,
//! with a key, HMAC-SHA-256) of the previous line's hash, a newline, and the line's own bytes up
//! to `,"hash":`. The first line of a file says where its chain starts: a new trail starts from a
//! random value; a rotated file from the last hash of the file before it; a restarted bridge
//! from the last hash of the file it appends to. Without a key, anyone who can write the file can
//! rebuild the chain after an edit; with `key_env`, only who holds the key can. A trail cut at its
//! end shows nothing: what is cut is not there to check (ship the lines elsewhere for that).
//!
//! Lines name callers, never keys or tokens; inputs are written only when the configuration says
//! so, with the values of the bridge's secrets replaced. Writing is a copy into a buffer under a
//! lock; the buffer reaches the file when full, every second, and at shutdown.

use std::fs::{File, OpenOptions};
use std::io::{BufRead as _, BufReader, BufWriter, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use hmac::{KeyInit as _, Mac as _};
use opentelemetry::logs::{AnyValue, LogRecord as _, Logger as _, LoggerProvider as _, Severity};
use opentelemetry_sdk::logs::{SdkLogger, SdkLoggerProvider};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::Digest as _;

/// `audit:` in the configuration file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditConfig {
    /// The file the trail is appended to; `-` for stdout (not rotated).
    #[serde(default)]
    pub file: Option<PathBuf>,
    /// Also export each line as an OpenTelemetry log record over OTLP/HTTP, to the endpoint the
    /// standard variables name (`OTEL_EXPORTER_OTLP_LOGS_ENDPOINT` or
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`). The record's body is the line, hashes included, so a
    /// collector's copy can be checked with `audit verify` too.
    #[serde(default)]
    pub otlp: bool,
    /// A file grows to at most this many bytes, then is rotated (default 100 MiB).
    #[serde(default = "default_max_bytes")]
    pub max_bytes: u64,
    /// Rotated files kept (`FILE.1` the newest); older ones are deleted (default 10).
    #[serde(default = "default_keep")]
    pub keep: usize,
    /// Also record each call's input (the values of the bridge's secrets replaced).
    #[serde(default)]
    pub inputs: bool,
    /// An environment variable holding a key: the chain is then HMAC-SHA-256, which no one
    /// without the key can rebuild after an edit.
    #[serde(default)]
    pub key_env: Option<String>,
}

fn default_max_bytes() -> u64 {
    100 * 1024 * 1024
}

fn default_keep() -> usize {
    10
}

/// Why the trail cannot be opened or written.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// The file cannot be opened, read or rotated.
    #[error("audit trail {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// `key_env` names a variable that is not set.
    #[error("audit.key_env: environment variable {0} is not set (or empty)")]
    MissingKey(String),
    /// Neither a file nor OTLP is configured.
    #[error("audit: say where the trail goes (`file:` and/or `otlp: true`)")]
    NoSink,
    /// `otlp: true` without an endpoint, or an exporter that cannot be built.
    #[error("audit.otlp: {0}")]
    Otlp(String),
}

/// What one line records. Borrowed from the call: nothing is copied unless the trail is on.
#[derive(Debug, Serialize)]
pub(crate) struct Record<'a> {
    /// The caller's name.
    pub caller: &'a str,
    /// The edge: `otc` or `mcp`.
    pub edge: &'a str,
    /// The tool as asked for.
    pub requested: &'a str,
    /// The tool that answered (id with version), when one was resolved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The call's id, when it reached its tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_id: Option<&'a str>,
    /// `allow`, `refuse` or `none` (no policies), when policies decided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<&'a str>,
    /// The rule that decided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<&'a str>,
    /// The rate limit or concurrency cap that refused the call, and the wait it asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limited: Option<Limited<'a>>,
    /// What the upstream answered, when the call reached it: `ok`, `http_error` (with
    /// `upstream_status`), `timeout`, `unreachable`, `tool_failed`, …
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream: Option<&'a str>,
    /// The upstream's HTTP status, when it answered with an error status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream_status: Option<u16>,
    /// What the cache of read-only calls did, for a tool whose answers are kept: `hit`, `miss`,
    /// `revalidated` or `bypassed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache: Option<&'a str>,
    /// `success`, `tool_error` or `refused`.
    pub outcome: &'a str,
    /// The HTTP status of a refusal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Milliseconds from arrival to answer.
    pub ms: f64,
    /// Bytes of the input, as JSON.
    pub bytes_in: usize,
    /// Bytes of the answer's value or error, as JSON.
    pub bytes_out: usize,
    /// The input, when the configuration asks for inputs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
}

/// A limit that refused a call, as a line records it.
#[derive(Debug, Serialize)]
pub(crate) struct Limited<'a> {
    /// The limit's rule (its name, or its position).
    pub rule: &'a str,
    /// How long the caller was told to wait.
    pub retry_after_ms: u64,
}

/// The audit trail a bridge appends to.
pub struct AuditTrail {
    inner: Mutex<Writer>,
    inputs: bool,
    /// The values of the bridge's secrets, replaced in recorded inputs.
    secrets: Vec<String>,
}

impl std::fmt::Debug for AuditTrail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditTrail").finish_non_exhaustive()
    }
}

struct Writer {
    path: Option<PathBuf>,
    /// The file or stdout; `None` when the trail goes to OTLP only.
    out: Option<BufWriter<Box<dyn std::io::Write + Send>>>,
    logs: Option<Logs>,
    written: u64,
    max_bytes: u64,
    keep: usize,
    key: Option<Vec<u8>>,
    last: String,
    /// The first write error since the last one logged (the trail does not stop the calls).
    failing: bool,
}

impl AuditTrail {
    /// Opens the trail `config` describes, appending to its file (the chain continues from the
    /// file's last line) or starting a new one. `secrets` are the values replaced in inputs.
    pub fn open(config: &AuditConfig, secrets: Vec<String>) -> Result<Self, AuditError> {
        let key = match &config.key_env {
            Some(var) => match std::env::var(var) {
                Ok(key) if !key.is_empty() => Some(key.into_bytes()),
                _ => return Err(AuditError::MissingKey(var.clone())),
            },
            None => None,
        };
        let logs = if config.otlp {
            Some(Logs::from_env()?)
        } else {
            None
        };
        let label = config
            .file
            .clone()
            .unwrap_or_else(|| PathBuf::from("(OTLP)"));
        // Where lines are written besides OTLP: (path when rotated, out, bytes already there,
        // the chain's last hash).
        type Sink = (
            Option<PathBuf>,
            Option<BufWriter<Box<dyn std::io::Write + Send>>>,
            u64,
            Option<String>,
        );
        let (path, out, written, last): Sink = match &config.file {
            None if logs.is_none() => return Err(AuditError::NoSink),
            None => (None, None, 0, None),
            Some(file) if file.as_os_str() == "-" => (
                None,
                Some(BufWriter::new(Box::new(std::io::stdout()))),
                0,
                None,
            ),
            Some(file) => {
                let io = |source| AuditError::Io {
                    path: file.clone(),
                    source,
                };
                let last = last_hash(file).map_err(io)?;
                let opened = open_append(file).map_err(io)?;
                let written = opened.metadata().map_err(io)?.len();
                let out: Box<dyn std::io::Write + Send> = Box::new(opened);
                (
                    Some(file.clone()),
                    Some(BufWriter::with_capacity(64 * 1024, out)),
                    written,
                    last,
                )
            }
        };
        let rotated = path.is_some();
        let mut writer = Writer {
            path,
            out,
            logs,
            written,
            // Only a file is rotated.
            max_bytes: if rotated {
                config.max_bytes.max(1024)
            } else {
                u64::MAX
            },
            keep: if rotated { config.keep } else { 0 },
            key,
            last: last.unwrap_or_default(),
            failing: false,
        };
        let start = if writer.last.is_empty() {
            // A new trail: its chain starts from a random value.
            let start = uuid::Uuid::new_v4().simple().to_string();
            writer.last.clone_from(&start);
            serde_json::json!({"audit": "otc-bridge", "start": start, "keyed": writer.key.is_some()})
        } else {
            serde_json::json!({"audit": "otc-bridge", "resumed": now()})
        };
        writer
            .line(start.to_string())
            .and_then(|()| writer.flush())
            .map_err(|source| AuditError::Io {
                path: label,
                source,
            })?;
        Ok(Self {
            inner: Mutex::new(writer),
            inputs: config.inputs,
            secrets: secrets.into_iter().filter(|s| s.len() >= 4).collect(),
        })
    }

    /// Whether inputs are recorded.
    pub(crate) fn records_inputs(&self) -> bool {
        self.inputs
    }

    /// `input` with the bridge's secrets replaced, for a record.
    pub(crate) fn scrubbed(&self, input: &Map<String, Value>) -> Value {
        let mut value = Value::Object(input.clone());
        scrub(&mut value, &self.secrets);
        value
    }

    /// Appends one call's line.
    pub(crate) fn record(&self, record: &Record<'_>) {
        #[derive(Serialize)]
        struct Stamped<'r, 'a> {
            time: String,
            #[serde(flatten)]
            record: &'r Record<'a>,
        }
        // Made before the lock is taken: only chaining and writing are serial, so calls on
        // other threads wait for a hash, not for a serialisation.
        let body = serde_json::to_string(&Stamped {
            time: now(),
            record,
        });
        let Ok(mut writer) = self.inner.lock() else {
            return;
        };
        if let Err(error) = body
            .map_err(std::io::Error::from)
            .and_then(|b| writer.write(b))
        {
            if !writer.failing {
                tracing::error!(%error, "Cannot write the audit trail; calls go on.");
            }
            writer.failing = true;
        } else {
            writer.failing = false;
        }
    }

    /// Writes what is buffered to the file (every second, and at shutdown).
    pub fn flush(&self) {
        if let Ok(mut writer) = self.inner.lock() {
            let _ = writer.flush();
        }
    }

    /// Writes what is buffered and exports the log records still queued (blocks up to the
    /// export timeout: call it off the runtime's threads, at shutdown).
    pub fn close(&self) {
        self.flush();
        let logs = self.inner.lock().ok().and_then(|mut w| w.logs.take());
        if let Some(logs) = logs
            && let Err(error) = logs.provider.shutdown()
        {
            tracing::warn!(%error, "Audit log records were not all exported.");
        }
    }
}

impl Drop for AuditTrail {
    fn drop(&mut self) {
        self.flush();
    }
}

impl Writer {
    /// Writes `body` (a JSON object) as the next line, rotating first when the file is full.
    fn write(&mut self, body: String) -> std::io::Result<()> {
        if self.written >= self.max_bytes {
            self.rotate()?;
        }
        self.line(body)
    }

    /// Chains and writes one line, `body` (a JSON object) with the chain's fields added.
    fn line(&mut self, mut body: String) -> std::io::Result<()> {
        // `{…}` → `{…,"prev":"…"`, then `,"hash":"…"}`.
        body.pop();
        if body.len() > 1 {
            body.push(',');
        }
        body.push_str("\"prev\":\"");
        body.push_str(&self.last);
        body.push('"');
        let hash = chain_hash(self.key.as_deref(), &self.last, &body);
        body.push_str(",\"hash\":\"");
        body.push_str(&hash);
        body.push_str("\"}\n");
        if let Some(out) = &mut self.out {
            out.write_all(body.as_bytes())?;
        }
        self.written += body.len() as u64;
        if let Some(logs) = &self.logs {
            body.pop();
            logs.emit(body);
        }
        self.last = hash;
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.out {
            Some(out) => out.flush(),
            None => Ok(()),
        }
    }

    /// `FILE` becomes `FILE.1` (and `.1` `.2`, …, beyond `keep` deleted); the new `FILE` starts
    /// from the last hash of the old one.
    fn rotate(&mut self) -> std::io::Result<()> {
        let Some(path) = self.path.clone() else {
            return Ok(());
        };
        self.flush()?;
        let numbered = |n: usize| PathBuf::from(format!("{}.{n}", path.display()));
        if self.keep == 0 {
            std::fs::remove_file(&path)?;
        } else {
            let _ = std::fs::remove_file(numbered(self.keep));
            for n in (1..self.keep).rev() {
                let from = numbered(n);
                if from.exists() {
                    std::fs::rename(&from, numbered(n + 1))?;
                }
            }
            std::fs::rename(&path, numbered(1))?;
        }
        self.out = Some(BufWriter::with_capacity(
            64 * 1024,
            Box::new(open_append(&path)?),
        ));
        self.written = 0;
        let first = serde_json::json!({"audit": "otc-bridge", "rotated": now()});
        self.line(first.to_string())
    }
}

/// The OTLP side of the trail: each line becomes one log record (event `otc.audit`, body the
/// line), exported in batches by the SDK's own thread.
struct Logs {
    provider: SdkLoggerProvider,
    logger: SdkLogger,
}

/// The variables that name where log records go: either endpoint.
const LOGS_ENDPOINT_VARS: [&str; 2] = [
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
];

impl Logs {
    fn from_env() -> Result<Self, AuditError> {
        // Only a configured endpoint is contacted: no default of `localhost:4318`.
        if !LOGS_ENDPOINT_VARS
            .iter()
            .any(|name| std::env::var(name).is_ok_and(|v| !v.trim().is_empty()))
        {
            return Err(AuditError::Otlp(
                "set OTEL_EXPORTER_OTLP_LOGS_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT".to_owned(),
            ));
        }
        let exporter = opentelemetry_otlp::LogExporter::builder()
            .with_http()
            .build()
            .map_err(|e| AuditError::Otlp(e.to_string()))?;
        let provider = SdkLoggerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(super::traces::resource())
            .build();
        let logger = provider.logger("otc-bridge.audit");
        Ok(Self { provider, logger })
    }

    fn emit(&self, line: String) {
        let mut record = self.logger.create_log_record();
        record.set_event_name("otc.audit");
        record.set_severity_number(Severity::Info);
        record.set_severity_text("INFO");
        record.set_body(AnyValue::String(line.into()));
        self.logger.emit(record);
    }
}

fn open_append(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

/// The hash of the last complete line of `path`, if it has one.
fn last_hash(path: &Path) -> std::io::Result<Option<String>> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut last = None;
    for line in BufReader::new(file).lines() {
        if let Some((_, hash)) = split_hash(&line?) {
            last = Some(hash.to_owned());
        }
    }
    Ok(last)
}

/// The line's body (up to `,"hash":`) and its stated hash.
fn split_hash(line: &str) -> Option<(&str, &str)> {
    let at = line.rfind(",\"hash\":\"")?;
    let hash = line[at + 9..].strip_suffix("\"}")?;
    Some((&line[..at], hash))
}

/// The hash of a line: of the previous hash, a newline and the line's body.
fn chain_hash(key: Option<&[u8]>, prev: &str, body: &str) -> String {
    let digest: Vec<u8> = match key {
        Some(key) => {
            // HMAC takes a key of any length.
            let Ok(mut mac) = hmac::Hmac::<sha2::Sha256>::new_from_slice(key) else {
                return String::new();
            };
            mac.update(prev.as_bytes());
            mac.update(b"\n");
            mac.update(body.as_bytes());
            mac.finalize().into_bytes().to_vec()
        }
        None => {
            let mut hasher = sha2::Sha256::new();
            hasher.update(prev.as_bytes());
            hasher.update(b"\n");
            hasher.update(body.as_bytes());
            hasher.finalize().to_vec()
        }
    };
    otc_mappings::hex::hex(&digest)
}

fn now() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// Replaces, in every string of `value`, each secret by `<redacted>`.
fn scrub(value: &mut Value, secrets: &[String]) {
    match value {
        Value::String(text) => {
            for secret in secrets {
                if text.contains(secret.as_str()) {
                    *text = text.replace(secret.as_str(), "<redacted>");
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| scrub(v, secrets)),
        Value::Object(map) => map.values_mut().for_each(|v| scrub(v, secrets)),
        _ => {}
    }
}

/// What [`verify`] found wrong, and where.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Broken {
    /// The line's content does not give its hash: it was changed (or forged without the key).
    #[error("{file}:{line}: this line was changed (its hash does not match its content)")]
    Changed {
        /// The file.
        file: String,
        /// The line, from 1.
        line: usize,
    },
    /// The line does not belong in the chain: the line after it follows the line before it.
    #[error("{file}:{line}: this line was inserted (the next line follows the line before it)")]
    Inserted {
        /// The file.
        file: String,
        /// The line, from 1.
        line: usize,
    },
    /// The line is not chained to the line before it: lines were removed before it.
    #[error(
        "{file}:{line}: lines were removed before this line (it does not follow the line before it)"
    )]
    Removed {
        /// The file.
        file: String,
        /// The line, from 1.
        line: usize,
    },
    /// The line is not a trail line.
    #[error("{file}:{line}: not an audit line")]
    Unreadable {
        /// The file.
        file: String,
        /// The line, from 1.
        line: usize,
    },
    /// A file cannot be read.
    #[error("{file}: {reason}")]
    Io {
        /// The file.
        file: String,
        /// Why.
        reason: String,
    },
}

/// One line of a trail as [`verify`] reads it.
struct Link {
    file: String,
    line: usize,
    prev: String,
    hash: String,
}

/// Checks a trail: `files` in the order they were written (the oldest rotated file first, the
/// current file last). `Ok` is the number of lines checked; `Err` names the first line that was
/// changed, removed or inserted. `key`: the trail's key, when it was written with one.
pub fn verify(files: &[PathBuf], key: Option<&[u8]>) -> Result<usize, Broken> {
    let mut links: Vec<Link> = Vec::new();
    for path in files {
        let file_name = path.display().to_string();
        let file = File::open(path).map_err(|e| Broken::Io {
            file: file_name.clone(),
            reason: e.to_string(),
        })?;
        for (index, line) in BufReader::new(file).lines().enumerate() {
            let at = index + 1;
            let line = line.map_err(|e| Broken::Io {
                file: file_name.clone(),
                reason: e.to_string(),
            })?;
            let unreadable = || Broken::Unreadable {
                file: file_name.clone(),
                line: at,
            };
            let (body, stated) = split_hash(&line).ok_or_else(unreadable)?;
            // Every file opens with the trail's header line (a start, or a rotation): lines cut
            // from the top of a file are found here.
            if at == 1 && !body.starts_with("{\"audit\":\"otc-bridge\"") {
                return Err(Broken::Removed {
                    file: file_name,
                    line: 1,
                });
            }
            let prev = body
                .rfind(",\"prev\":\"")
                .or_else(|| body.rfind("{\"prev\":\""))
                .and_then(|i| body[i..].split_once(":\"").map(|(_, rest)| rest))
                .and_then(|rest| rest.strip_suffix('"'))
                .ok_or_else(unreadable)?;
            if chain_hash(key, prev, body) != stated {
                return Err(Broken::Changed {
                    file: file_name,
                    line: at,
                });
            }
            links.push(Link {
                file: file_name.clone(),
                line: at,
                prev: prev.to_owned(),
                hash: stated.to_owned(),
            });
        }
    }
    for i in 1..links.len() {
        if links[i].prev == links[i - 1].hash {
            continue;
        }
        // The chain breaks before line i. A line that follows the one two before it: the line
        // between was inserted (a forged line with a hash of its own). The next line following
        // the one before: line i was inserted (a line copied from elsewhere). Else lines are
        // missing before line i.
        let inserted = if i >= 2 && links[i].prev == links[i - 2].hash {
            Some(i - 1)
        } else if links
            .get(i + 1)
            .is_some_and(|next| next.prev == links[i - 1].hash)
        {
            Some(i)
        } else {
            None
        };
        return Err(match inserted {
            Some(j) => Broken::Inserted {
                file: links[j].file.clone(),
                line: links[j].line,
            },
            None => Broken::Removed {
                file: links[i].file.clone(),
                line: links[i].line,
            },
        });
    }
    Ok(links.len())
}
