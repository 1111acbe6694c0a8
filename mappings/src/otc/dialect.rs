//! The four published dialects and how each one wraps bodies (DESIGN.md §2).
//!
//! Detection reads only what every request carries anyway (`$schema`, the `OXP-Version` header,
//! the body's top-level keys), so it costs nothing beyond parsing the body once.

use std::borrow::Borrow;

use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::Value;

use super::definition::{SchemaForm, ToolDefinition, VerbatimTool, WireTool};

/// The `$schema` OTC 1.0 answers with.
pub const OTC_SCHEMA: &str = "otc://1.0";
/// The `$schema` OXP 1.0 answers with.
pub const OXP_SCHEMA: &str = "urn:oxp:1.0";
/// The `OXP-Version` header sent on every response of the flat dialect.
pub const OXP_VERSION_HEADER: &str = "OXP-Version";
/// Its value.
pub const OXP_VERSION: &str = "1.0";

/// A published variant of the standard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// OTC 1.0: `{"$schema":"otc://1.0","request":…}`, list key `tools`, wrapped input schema.
    Otc,
    /// OXP 1.0 main: `urn:oxp:1.0`, list key `items`, flat input schema.
    OxpMain,
    /// OXP flat draft: bare bodies and the `OXP-Version` header.
    OxpFlat,
    /// The superseded RFC draft: read like OTC 1.0 and answered as OTC 1.0.
    RfcDraft,
}

/// Why a `$schema` was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unsupported protocol version '{0}': this server speaks OTC/OXP 1.0 (e.g. 'otc://1.0' or 'urn:oxp:1.0')"
)]
pub struct UnsupportedSchema(pub String);

impl Dialect {
    /// The dialect named by a `$schema` value, or an error for another major version.
    ///
    /// Any URI naming version 1.x in a form we know is accepted (CHECKLIST §5.1 item 23).
    pub fn from_schema(schema: &str) -> Result<Self, UnsupportedSchema> {
        let unsupported = || UnsupportedSchema(schema.to_owned());
        let lower = schema.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("urn:oxp:") {
            return if major_is_one(v) {
                Ok(Self::OxpMain)
            } else {
                Err(unsupported())
            };
        }
        if let Some(v) = lower.strip_prefix("otc://") {
            return if major_is_one(v) {
                Ok(Self::Otc)
            } else {
                Err(unsupported())
            };
        }
        if lower.starts_with("http://") || lower.starts_with("https://") {
            let is_one = lower.split('/').any(|seg| seg == "1.0" || seg == "1");
            if !is_one {
                return Err(unsupported());
            }
            if lower.contains("arcadeai/opentoolcalling") || lower.contains("/specification/http/")
            {
                return Ok(Self::RfcDraft);
            }
            if lower.contains("oxp") || lower.contains("openexecprotocol") {
                return Ok(Self::OxpMain);
            }
            return Ok(Self::Otc);
        }
        Err(unsupported())
    }

    /// The dialect named by an `OXP-Version` header value.
    pub fn from_oxp_version(value: &str) -> Result<Self, UnsupportedSchema> {
        if major_is_one(value.trim()) {
            Ok(Self::OxpFlat)
        } else {
            Err(UnsupportedSchema(value.to_owned()))
        }
    }

    /// Whether bodies are wrapped (`request`/`result`) and carry `$schema`.
    pub fn is_wrapped(self) -> bool {
        !matches!(self, Self::OxpFlat)
    }

    /// The form of `input_schema` in this dialect.
    pub fn schema_form(self) -> SchemaForm {
        match self {
            Self::Otc | Self::RfcDraft => SchemaForm::Wrapped,
            Self::OxpMain | Self::OxpFlat => SchemaForm::Flat,
        }
    }

    /// The key of the tool list in `GET /tools`.
    pub fn list_key(self) -> &'static str {
        match self {
            Self::Otc | Self::RfcDraft => "tools",
            Self::OxpMain | Self::OxpFlat => "items",
        }
    }

    /// The `$schema` this dialect answers with (`None` for the flat dialect).
    pub fn schema(self) -> Option<&'static str> {
        match self {
            Self::Otc | Self::RfcDraft => Some(OTC_SCHEMA),
            Self::OxpMain => Some(OXP_SCHEMA),
            Self::OxpFlat => None,
        }
    }

    /// Whether responses carry the `OXP-Version` header.
    pub fn sends_version_header(self) -> bool {
        matches!(self, Self::OxpFlat)
    }
}

/// Accepts `1`, `1.0`, `1.2`, `1.0.0`: anything whose major version is 1.
fn major_is_one(v: &str) -> bool {
    let major = v.split('.').next().unwrap_or_default();
    major == "1"
        && v.split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// The `GET /tools` body in one dialect: `tools` holds definitions or references to them.
#[derive(Debug, Clone, Copy)]
pub struct ListToolsBody<'a, T = ToolDefinition> {
    /// The dialect to write.
    pub dialect: Dialect,
    /// The tools, in listing order.
    pub tools: &'a [T],
}

impl<T: Borrow<ToolDefinition>> ListToolsBody<'_, T> {
    /// Writes the body as compact JSON into `writer`, each schema's text copied as it is kept
    /// (no re-parsing): how the bridge writes `GET /tools`, streamed or compressed as it is
    /// written, so a large list is never whole in memory.
    pub fn write_json<W: std::io::Write>(&self, writer: W) -> std::io::Result<()> {
        serde_json::to_writer(writer, &Verbatim(self)).map_err(std::io::Error::from)
    }

    fn write<S: serde::Serializer>(
        &self,
        verbatim: bool,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let form = self.dialect.schema_form();
        let mut m = serializer.serialize_map(None)?;
        if let Some(schema) = self.dialect.schema() {
            m.serialize_entry("$schema", schema)?;
        }
        m.serialize_entry(
            self.dialect.list_key(),
            &Tools {
                tools: self.tools,
                form,
                verbatim,
            },
        )?;
        m.end()
    }
}

impl<T: Borrow<ToolDefinition>> Serialize for ListToolsBody<'_, T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.write(false, serializer)
    }
}

/// A list body written by serde_json with verbatim schemas.
struct Verbatim<'a, 'b, T>(&'a ListToolsBody<'b, T>);

impl<T: Borrow<ToolDefinition>> Serialize for Verbatim<'_, '_, T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.write(true, serializer)
    }
}

struct Tools<'a, T> {
    tools: &'a [T],
    form: SchemaForm,
    verbatim: bool,
}

impl<T: Borrow<ToolDefinition>> Serialize for Tools<'_, T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.verbatim {
            serializer.collect_seq(self.tools.iter().map(|tool| VerbatimTool {
                tool: tool.borrow(),
                form: self.form,
            }))
        } else {
            serializer.collect_seq(self.tools.iter().map(|tool| WireTool {
                tool: tool.borrow(),
                form: self.form,
            }))
        }
    }
}

/// Wraps a response body for the wrapped dialects: `{"$schema": …, "<key>": body}`.
#[derive(Debug, Clone, Copy)]
pub struct Wrapped<'a, T> {
    /// The `$schema` to send.
    pub schema: &'a str,
    /// `result` for call responses.
    pub key: &'static str,
    /// The body.
    pub body: &'a T,
}

impl<T: Serialize> Serialize for Wrapped<'_, T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut m = serializer.serialize_map(Some(2))?;
        m.serialize_entry("$schema", self.schema)?;
        m.serialize_entry(self.key, self.body)?;
        m.end()
    }
}

/// A `POST /tools/call` body as read, before the dialect is decided: the wrapped form
/// (`{"$schema", "request"}`) and the flat form (a bare `CallToolRequest`) in one pass, without
/// buffering (this is the hot path). Unknown keys are ignored.
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub struct CallBody {
    /// `$schema`, when given (any JSON type, so that a wrong type gets a precise message).
    #[serde(rename = "$schema", default)]
    pub schema: Option<Value>,
    /// The wrapped request.
    #[serde(default)]
    pub request: Option<super::CallToolRequest>,
    /// The flat form's `tool_id`: its presence marks a flat body.
    #[serde(default)]
    pub tool_id: Option<String>,
    /// The flat form's `call_id` (`execution_id` in the RFC draft).
    #[serde(default, alias = "execution_id")]
    pub call_id: Option<String>,
    /// The flat form's `trace_id`.
    #[serde(default)]
    pub trace_id: Option<String>,
    /// The flat form's `input`.
    #[serde(default)]
    pub input: Option<Value>,
    /// The flat form's `context`.
    #[serde(default)]
    pub context: Option<super::CallContext>,
}

impl CallBody {
    /// The request, wherever it was written; `None` when the body holds neither `request` nor
    /// `tool_id`. The flag is true for the flat form.
    pub fn into_request(self) -> Option<(super::CallToolRequest, bool)> {
        if let Some(request) = self.request {
            return Some((request, false));
        }
        let tool_id = self.tool_id?;
        Some((
            super::CallToolRequest {
                tool_id,
                call_id: self.call_id,
                trace_id: self.trace_id,
                input: self.input,
                context: self.context,
            },
            true,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_schemas() {
        assert_eq!(Dialect::from_schema("otc://1.0"), Ok(Dialect::Otc));
        assert_eq!(Dialect::from_schema("urn:oxp:1.0"), Ok(Dialect::OxpMain));
        assert_eq!(
            Dialect::from_schema(
                "https://github.com/ArcadeAI/OpenToolCalling/tree/main/specification/http/1.0/openapi.json"
            ),
            Ok(Dialect::RfcDraft)
        );
        assert_eq!(
            Dialect::from_schema(
                "https://github.com/OpenToolCalling/Specification/tree/main/spec/http/1.0/openapi.json"
            ),
            Ok(Dialect::Otc)
        );
        assert!(Dialect::from_schema("otc://2.0").is_err());
        assert!(Dialect::from_schema("urn:oxp:2.0").is_err());
        assert!(Dialect::from_schema("nonsense").is_err());
        assert!(Dialect::from_oxp_version("2.0").is_err());
        assert_eq!(Dialect::from_oxp_version("1.0"), Ok(Dialect::OxpFlat));
    }
}
