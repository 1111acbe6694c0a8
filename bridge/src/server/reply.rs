//! Writing responses in the caller's dialect (DESIGN.md §2): the wrapped dialects carry
//! `$schema` (and `result` around call results); the flat dialect is bare and carries the
//! `OXP-Version` header on every response.

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use otc_mappings::otc::{
    Dialect, OXP_VERSION, OXP_VERSION_HEADER, ServerErrorResponse, ValidationErrorResponse, Wrapped,
};
use serde::Serialize;

use super::log::LogNote;
use crate::call::Answer;
use crate::rescue::{Extra, Refusal};

/// The dialect of one exchange and the `$schema` to answer with.
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    /// The dialect detected for the request.
    pub dialect: Dialect,
    /// The `$schema` to send in wrapped dialects: the client's own value when it sent one in a
    /// dialect whose shape we answer in, else the dialect's canonical one.
    pub schema: Option<String>,
}

impl Reply {
    /// A reply in `dialect` with its canonical `$schema`.
    pub(crate) fn new(dialect: Dialect) -> Self {
        Self {
            dialect,
            schema: dialect.schema().map(str::to_owned),
        }
    }

    /// A reply that echoes the client's `$schema`, where the shape we answer with is the one it named.
    pub(crate) fn echoing(dialect: Dialect, client_schema: Option<&str>) -> Self {
        match (dialect, client_schema) {
            (Dialect::Otc | Dialect::OxpMain, Some(schema)) => Self {
                dialect,
                schema: Some(schema.to_owned()),
            },
            _ => Self::new(dialect),
        }
    }

    /// 200 with a call's answer (a value, or a tool error with its cause noted for the log).
    pub(crate) fn answer(&self, answer: Answer) -> Response {
        let result = &answer.response;
        let mut response = match (&self.schema, self.dialect.is_wrapped()) {
            (Some(schema), true) => self.json(
                StatusCode::OK,
                &Wrapped {
                    schema,
                    key: "result",
                    body: result,
                },
            ),
            _ => self.json(StatusCode::OK, result),
        };
        if let Some(failure) = answer.failure {
            response
                .extensions_mut()
                .insert(LogNote::tool_failed(failure));
        }
        response
    }

    /// A reply outside any dialect (an unknown path): no `$schema`, no `OXP-Version`.
    pub(crate) fn bare() -> Self {
        Self {
            dialect: Dialect::Otc,
            schema: None,
        }
    }

    /// A refusal in this dialect: its status, headers and words as a `ServerErrorResponse`,
    /// or a `ValidationErrorResponse` for invalid input; what the client is not told is noted
    /// for the log.
    pub(crate) fn error(&self, refusal: impl Into<Refusal>) -> Response {
        let Refusal {
            status,
            message,
            developer_message,
            log,
            headers,
            extra,
            ..
        } = refusal.into();
        let schema = self.schema.clone().filter(|_| self.dialect.is_wrapped());
        let mut response = match extra {
            Extra::ParameterErrors(parameter_errors) => self.json(
                status,
                &ValidationErrorResponse {
                    schema,
                    message,
                    parameter_errors,
                    ..Default::default()
                },
            ),
            extra => {
                // The OXP dialects define `missing_requirements`. OTC 1.0 does not, but its error
                // body is open: a challenge is the only way its caller can go on, so it is sent
                // there too.
                let oxp = matches!(self.dialect, Dialect::OxpMain | Dialect::OxpFlat);
                let mut body = ServerErrorResponse {
                    schema,
                    message,
                    developer_message,
                    ..Default::default()
                };
                match extra {
                    Extra::Missing { missing, .. } if oxp || !missing.authorization.is_empty() => {
                        body.missing_requirements = Some(*missing);
                    }
                    // The body is open; the ToolError's name for the wait.
                    Extra::RetryAfter { ms } => {
                        body.extra.insert("retry_after_ms".to_owned(), ms.into());
                    }
                    _ => {}
                }
                self.json(status, &body)
            }
        };
        response.headers_mut().extend(headers);
        response.extensions_mut().insert(LogNote::refused(log));
        response
    }

    /// A body already serialised, or streamed (the tool list).
    pub(crate) fn body(&self, status: StatusCode, body: impl Into<Body>) -> Response {
        let mut response = Response::new(body.into());
        *response.status_mut() = status;
        self.headers(&mut response);
        response
    }

    /// Any JSON body.
    pub(crate) fn json<T: Serialize + ?Sized>(&self, status: StatusCode, body: &T) -> Response {
        match serde_json::to_vec(body) {
            Ok(bytes) => self.body(status, bytes),
            Err(err) => {
                tracing::error!(error = %err, "Response could not be serialised.");
                let mut response = Response::new(Body::from(r#"{"message":"internal error"}"#));
                *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
                self.headers(&mut response);
                response
            }
        }
    }

    fn headers(&self, response: &mut Response) {
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        if self.dialect.sends_version_header() {
            headers.insert(OXP_VERSION_HEADER, HeaderValue::from_static(OXP_VERSION));
        }
    }
}
