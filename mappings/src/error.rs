//! What translation reports: `Diagnostic`s for parts it skipped or changed, and `MappingError`
//! for a document that cannot be used at all (STYLE.md §2.3).

use std::fmt;

use serde::Serialize;

/// How much a diagnostic matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Something was changed to fit the standard (a name cut, a recursive schema cut).
    Info,
    /// Something was lost or guessed (a version defaulted, a parameter renamed).
    Warning,
    /// An operation or tool was skipped.
    Skipped,
}

/// One thing translation could not carry over as it was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// How much it matters.
    pub severity: Severity,
    /// The operation or tool concerned (`GET /pets/{id}`, an MCP tool name), when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
    /// A JSON pointer into the upstream document, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    /// What happened, for a person.
    pub reason: String,
}

impl Diagnostic {
    /// A diagnostic about `operation`.
    pub fn new(
        severity: Severity,
        operation: Option<&str>,
        pointer: Option<String>,
        reason: impl Into<String>,
    ) -> Self {
        Self {
            severity,
            operation: operation.map(str::to_owned),
            pointer,
            reason: reason.into(),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let label = match self.severity {
            Severity::Info => "note",
            Severity::Warning => "warning",
            Severity::Skipped => "skipped",
        };
        write!(f, "{label}:")?;
        if let Some(op) = &self.operation {
            write!(f, " {op}:")?;
        }
        write!(f, " {}", self.reason)?;
        if let Some(pointer) = &self.pointer {
            write!(f, " (at {pointer})")?;
        }
        Ok(())
    }
}

/// A document or tool list that cannot be translated at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MappingError {
    /// The text is neither JSON nor YAML, or does not have the document's shape.
    #[error("cannot parse the document as {format}: {message}")]
    Parse {
        /// `JSON` or `YAML`.
        format: &'static str,
        /// The parser's message, with line and column.
        message: String,
    },
    /// The document declares a version we do not read.
    #[error("unsupported document version: {0}")]
    UnsupportedVersion(String),
    /// A `$ref` points nowhere.
    #[error("unresolved reference '{reference}' at {pointer}")]
    UnresolvedRef {
        /// The reference as written.
        reference: String,
        /// Where it was written.
        pointer: String,
    },
    /// Anything else that makes the whole document unusable.
    #[error("{0}")]
    Invalid(String),
}

/// Tools plus what was lost on the way: the result of every translation.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Mapped<T> {
    /// What could be translated.
    pub tools: Vec<T>,
    /// What was skipped or changed, in document order.
    pub diagnostics: Vec<Diagnostic>,
}
