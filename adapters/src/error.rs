//! `AdapterError`: upstream failures classified by what happened, not by which library noticed.
//!
//! The original error is kept as the source, so the bridge can log the whole cause chain while
//! what a caller sees stays safe. Whether a failure was refused before the call or failed in the
//! tool, and whether it is worth retrying, is decided in one table, in the bridge's `rescue`
//! module (DESIGN.md §3), not here.

use std::time::Duration;

/// A call or listing that failed upstream.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AdapterError {
    /// The bridge already knows the upstream is down; nothing was sent.
    #[error("{source_name} is temporarily unavailable: {reason}")]
    Unavailable {
        /// The source.
        source_name: String,
        /// Why (restarting, failed to start, …).
        reason: String,
    },
    /// The upstream could not be reached (connection refused, DNS, TLS).
    #[error("cannot reach the upstream: {message}")]
    Unreachable {
        /// What happened.
        message: String,
        /// The cause.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// The upstream did not answer in time.
    #[error("the upstream did not answer within {}", humantime(*elapsed))]
    Timeout {
        /// How long we waited.
        elapsed: Duration,
    },
    /// The connection or session was lost mid-call.
    #[error("the connection to the upstream was lost: {message}")]
    ConnectionLost {
        /// What happened.
        message: String,
    },
    /// The upstream child process exited.
    #[error("the upstream process exited{}", code.map(|c| format!(" with code {c}")).unwrap_or_default())]
    ChildExited {
        /// Its exit code, if it exited normally.
        code: Option<i32>,
    },
    /// An HTTP upstream answered with a non-2xx status.
    #[error("the upstream answered HTTP {status}")]
    UpstreamStatus {
        /// The status code.
        status: u16,
        /// `Retry-After`, when given.
        retry_after: Option<Duration>,
        /// The response body, trimmed, for the model and the logs.
        body: Option<String>,
    },
    /// The tool ran and reported failure (MCP `isError: true`).
    #[error("the tool failed: {message}")]
    ToolFailed {
        /// The tool's own message (text content).
        message: String,
        /// Everything else the tool returned, for `developer_message`.
        details: Option<serde_json::Value>,
    },
    /// The upstream rejected the arguments (MCP invalid-params).
    #[error("the upstream rejected the arguments: {message}")]
    InvalidArguments {
        /// The upstream's explanation.
        message: String,
    },
    /// The input could not be turned into an upstream request (e.g. a file that is not base64).
    #[error("the input cannot be sent: {message}")]
    BadInput {
        /// What is wrong, for the model to fix.
        message: String,
    },
    /// The upstream's answer was larger than the configured limit.
    #[error("the upstream's response is larger than the limit of {limit_bytes} bytes")]
    ResponseTooLarge {
        /// The limit.
        limit_bytes: u64,
    },
    /// The upstream broke the protocol (invalid JSON, unexpected message, JSON-RPC error).
    #[error("protocol error: {message}")]
    Protocol {
        /// What happened.
        message: String,
        /// The cause.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// The call needs its caller's authorization: no token was given for the source's
    /// authorization server, or the upstream refused it. The caller completes `challenge`
    /// (the standard's Tool Authorization Challenge) and calls again with the new token.
    #[error("the caller must authorize at {}: {reason}", challenge.id)]
    AuthorizationRequired {
        /// Where the user signs in, and where the caller polls for the token.
        challenge: Box<otc_mappings::otc::ToolAuthorizationChallenge>,
        /// Why (no token, or a refused one).
        reason: String,
    },
    /// Configuration or start-up failure (a command that cannot be spawned, a bad document).
    #[error("{message}")]
    Setup {
        /// What to fix.
        message: String,
        /// The cause.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
}

impl AdapterError {
    /// A protocol error with a cause.
    pub fn protocol(
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self::Protocol {
            message: message.into(),
            source: Some(Box::new(source)),
        }
    }

    /// A setup error without a cause.
    pub fn setup(message: impl Into<String>) -> Self {
        Self::Setup {
            message: message.into(),
            source: None,
        }
    }

    /// How long to wait before retrying, when the upstream said.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::UpstreamStatus { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

fn humantime(d: Duration) -> String {
    if d.as_millis() < 1000 {
        format!("{} ms", d.as_millis())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}
