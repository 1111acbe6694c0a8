//! The call request and response bodies (CHECKLIST §5.2, §5.4, §5.6).
//!
//! Requests are read leniently (unknown keys ignored, as DESIGN.md §2 decides); responses are
//! written strictly, so that they pass the dialect's schema.

use std::fmt;

use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// `CallToolRequest`, as sent by a client.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct CallToolRequest {
    /// The id of the tool to call; parsed by the server so that a bad (or missing: empty) id gets
    /// a precise message.
    #[serde(default)]
    pub tool_id: String,
    /// The caller's id for this call; generated when absent. `execution_id` is the RFC draft's name.
    #[serde(
        default,
        alias = "execution_id",
        skip_serializing_if = "Option::is_none"
    )]
    pub call_id: Option<String>,
    /// An opaque trace id, carried into logs and upstream requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<String>,
    /// The tool's input; absent means `{}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    /// Credentials and identity the tool may need.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<CallContext>,
}

/// `context` of a call: an open object.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct CallContext {
    /// Authorization tokens, one per provider.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub authorization: Vec<AuthorizationToken>,
    /// Secrets, one per id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<ToolSecret>,
    /// The end user on whose behalf the tool runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    /// Anything else the client sent (e.g. the draft's `user_info`).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl CallContext {
    /// The token given for authorization provider `id`.
    pub fn token(&self, id: &str) -> Option<&str> {
        self.authorization
            .iter()
            .find(|a| a.id == id)
            .map(|a| a.token.as_str())
    }

    /// The value given for secret `id`.
    pub fn secret(&self, id: &str) -> Option<&str> {
        self.secrets
            .iter()
            .find(|s| s.id == id)
            .map(|s| s.value.as_str())
    }
}

/// One `context.authorization[]` item. Its `Debug` hides the token.
#[derive(Clone, PartialEq, Deserialize, Serialize)]
pub struct AuthorizationToken {
    /// The provider's id.
    pub id: String,
    /// The token itself.
    pub token: String,
    /// Open object.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl fmt::Debug for AuthorizationToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthorizationToken")
            .field("id", &self.id)
            .field("token", &"<redacted>")
            .finish()
    }
}

/// One `context.secrets[]` item (`ToolSecret`). Its `Debug` hides the value.
#[derive(Clone, PartialEq, Deserialize, Serialize)]
pub struct ToolSecret {
    /// The secret's id.
    pub id: String,
    /// The secret's value.
    pub value: String,
    /// Open object.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl fmt::Debug for ToolSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolSecret")
            .field("id", &self.id)
            .field("value", &"<redacted>")
            .finish()
    }
}

/// `ToolError`: a failure of the tool itself, inside a 200 response. An open object.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct ToolError {
    /// Safe to show to the user or the model.
    pub message: String,
    /// For logs; not shown to the user or the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub developer_message: Option<String>,
    /// Whether the same call may succeed if tried again.
    #[serde(default)]
    pub can_retry: bool,
    /// Extra text for the model's next attempt (e.g. the upstream's complaint about the input).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_prompt_content: Option<String>,
    /// How long to wait before retrying.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    /// Open object (e.g. `missing_requirements` in the flat draft).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What a call produced.
#[derive(Debug, Clone)]
pub enum CallOutcome {
    /// `success: true`; `None` leaves `value` out (a tool that returns nothing).
    Value(Option<Value>),
    /// `success: true` with the value still the upstream's JSON text, unparsed: what an edge
    /// that only passes the value on or cuts it to a size asks for (a parsed value weighs
    /// several times its text). Written as the text; read back, it is a [`CallOutcome::Value`].
    Json(Box<RawValue>),
    /// `success: false` with the error.
    Error(ToolError),
}

/// Two values are equal when they are the same JSON, however written: a text is compared by
/// what it parses to.
impl PartialEq for CallOutcome {
    fn eq(&self, other: &Self) -> bool {
        let parsed = |json: &RawValue| serde_json::from_str::<Value>(json.get()).ok();
        match (self, other) {
            (Self::Value(a), Self::Value(b)) => a == b,
            (Self::Json(a), Self::Json(b)) => a.get() == b.get() || parsed(a) == parsed(b),
            (Self::Json(json), Self::Value(value)) | (Self::Value(value), Self::Json(json)) => {
                value.is_some() && parsed(json) == *value
            }
            (Self::Error(a), Self::Error(b)) => a == b,
            _ => false,
        }
    }
}

/// `CallToolResponse`: exactly one of `value` or `error`, decided by the type.
#[derive(Debug, Clone, PartialEq)]
pub struct CallToolResponse {
    /// Echoed from the request, or generated.
    pub call_id: String,
    /// How long the call took, in milliseconds.
    pub duration: Option<f64>,
    /// The value or the error.
    pub outcome: CallOutcome,
}

impl Serialize for CallToolResponse {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut m = serializer.serialize_map(None)?;
        m.serialize_entry("call_id", &self.call_id)?;
        if let Some(duration) = self.duration {
            m.serialize_entry("duration", &Millis(duration))?;
        }
        match &self.outcome {
            CallOutcome::Value(value) => {
                m.serialize_entry("success", &true)?;
                if let Some(value) = value {
                    m.serialize_entry("value", value)?;
                }
            }
            CallOutcome::Json(json) => {
                m.serialize_entry("success", &true)?;
                m.serialize_entry("value", json)?;
            }
            CallOutcome::Error(error) => {
                m.serialize_entry("success", &false)?;
                m.serialize_entry("error", error)?;
            }
        }
        m.end()
    }
}

/// Whole milliseconds are written as integers, like the spec's examples.
struct Millis(f64);

impl Serialize for Millis {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        if self.0.fract() == 0.0 && (0.0..9.0e15).contains(&self.0) {
            serializer.serialize_u64(self.0 as u64)
        } else {
            serializer.serialize_f64(self.0)
        }
    }
}

impl<'de> Deserialize<'de> for CallToolResponse {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Repr {
            call_id: String,
            #[serde(default)]
            duration: Option<f64>,
            success: bool,
            #[serde(default, deserialize_with = "super::definition::present")]
            value: Option<Value>,
            #[serde(default)]
            error: Option<ToolError>,
        }
        let r = Repr::deserialize(deserializer)?;
        let outcome = match (r.success, r.error) {
            (true, None) => CallOutcome::Value(r.value),
            (false, Some(error)) if r.value.is_none() => CallOutcome::Error(error),
            (true, Some(_)) => return Err(serde::de::Error::custom("success:true with an error")),
            (false, _) => {
                return Err(serde::de::Error::custom(
                    "success:false needs an error and no value",
                ));
            }
        };
        Ok(Self {
            call_id: r.call_id,
            duration: r.duration,
            outcome,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Issue 27: a value kept as the upstream's text is written as it came, and reads back as
    /// the value it holds.
    #[test]
    fn a_value_as_text_is_written_as_it_came() {
        let text = r#"{"b": [1, 2.50], "a": "\u00e9"}"#;
        let response = CallToolResponse {
            call_id: "c".to_owned(),
            duration: Some(3.0),
            outcome: CallOutcome::Json(RawValue::from_string(text.to_owned()).unwrap()),
        };
        let written = serde_json::to_string(&response).unwrap();
        assert_eq!(
            written,
            format!(r#"{{"call_id":"c","duration":3,"success":true,"value":{text}}}"#)
        );
        let read: CallToolResponse = serde_json::from_str(&written).unwrap();
        assert_eq!(
            read.outcome,
            CallOutcome::Value(Some(json!({"b": [1, 2.5], "a": "é"})))
        );
        assert_eq!(read, response, "the same JSON, however written");
    }
}
