//! `ToolDefinition` and its `requirements` (CHECKLIST §4a).
//!
//! The definition is held in one dialect-neutral form: `input_schema` is the JSON Schema itself.
//! The dialects differ only in how that schema is written on the wire (OTC 1.0 wraps it as
//! `{"parameters": …}`, OXP does not), so the form is chosen when serialising, with [`WireTool`].

use serde::de::Error as _;
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::id::{ToolId, ToolVersion, VersionSelector};
use super::schema::Schema;

/// How `input_schema` is written on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaForm {
    /// OTC 1.0: `"input_schema": {"parameters": <schema>}`.
    Wrapped,
    /// OXP 1.0: `"input_schema": <schema>`.
    Flat,
}

/// One tool, as listed by `GET /tools`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDefinition {
    /// `Toolkit.Tool@x.y.z`; the version here is always exact.
    pub id: ToolId,
    /// `^[A-Za-z0-9_-]{1,64}$`, e.g. `Calculator_Add`.
    pub name: String,
    /// For people and models: when and how to use the tool.
    pub description: String,
    /// The tool's version, equal to the version in `id`.
    pub version: ToolVersion,
    /// The JSON Schema of `input` (self-contained: no `$ref`, no `$defs`).
    pub input_schema: Schema,
    /// The JSON Schema of the value; `None` means the tool returns nothing (`null` on the wire).
    pub output_schema: Option<Schema>,
    /// What the caller must put in `context`.
    pub requirements: Option<ToolRequirements>,
}

/// `requirements` of a tool: an open object.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolRequirements {
    /// OAuth2 or bearer authorizations the caller must provide.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub authorization: Vec<AuthorizationRequirement>,
    /// Secrets the caller must provide.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<SecretRequirement>,
    /// Whether `context.user_id` is required.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub user_id: bool,
    /// Fields of newer revisions, kept as they came.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ToolRequirements {
    /// True when nothing is required (then `requirements` is left out of the definition).
    pub fn is_empty(&self) -> bool {
        self.authorization.is_empty()
            && self.secrets.is_empty()
            && !self.user_id
            && self.extra.is_empty()
    }
}

/// One required authorization.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuthorizationRequirement {
    /// The provider's id, matched against `context.authorization[].id`.
    pub id: String,
    /// OAuth2 details, when the provider is OAuth2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth2: Option<OAuth2Requirement>,
    /// Open: e.g. the URL where a user can grant the authorization.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The OAuth2 scopes a tool needs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OAuth2Requirement {
    /// Scopes, as the provider names them.
    #[serde(default)]
    pub scopes: Vec<String>,
}

/// One required secret.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SecretRequirement {
    /// Matched against `context.secrets[].id`.
    pub id: String,
}

/// A definition together with the way its input schema must be written.
#[derive(Debug, Clone, Copy)]
pub struct WireTool<'a> {
    /// The definition.
    pub tool: &'a ToolDefinition,
    /// The form of `input_schema`.
    pub form: SchemaForm,
}

impl Serialize for WireTool<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        write_tool(self.tool, self.form, false, serializer)
    }
}

/// A definition written by serde_json with its schemas copied verbatim (see
/// [`Schema::verbatim`]); only for serde_json's serializers, which know a `RawValue`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct VerbatimTool<'a> {
    pub(crate) tool: &'a ToolDefinition,
    pub(crate) form: SchemaForm,
}

impl Serialize for VerbatimTool<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        write_tool(self.tool, self.form, true, serializer)
    }
}

/// A schema written as tokens, or verbatim.
struct Written<'a> {
    schema: &'a Schema,
    verbatim: bool,
}

impl Serialize for Written<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.verbatim {
            self.schema.verbatim().serialize(serializer)
        } else {
            self.schema.serialize(serializer)
        }
    }
}

fn write_tool<S: Serializer>(
    tool: &ToolDefinition,
    form: SchemaForm,
    verbatim: bool,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Parameters<'a> {
        parameters: Written<'a>,
    }
    let written = |schema| Written { schema, verbatim };
    let fields = if tool.requirements.is_some() { 7 } else { 6 };
    let mut s = serializer.serialize_struct("ToolDefinition", fields)?;
    s.serialize_field("id", &tool.id)?;
    s.serialize_field("name", &tool.name)?;
    s.serialize_field("description", &tool.description)?;
    s.serialize_field("version", &tool.version)?;
    match form {
        SchemaForm::Wrapped => {
            s.serialize_field(
                "input_schema",
                &Parameters {
                    parameters: written(&tool.input_schema),
                },
            )?;
        }
        SchemaForm::Flat => s.serialize_field("input_schema", &written(&tool.input_schema))?,
    }
    s.serialize_field("output_schema", &tool.output_schema.as_ref().map(written))?;
    if let Some(requirements) = &tool.requirements {
        s.serialize_field("requirements", requirements)?;
    }
    s.end()
}

/// A definition read from the wire, with the form its input schema was written in.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedTool {
    /// The definition.
    pub tool: ToolDefinition,
    /// How `input_schema` was written.
    pub form: SchemaForm,
}

impl<'de> Deserialize<'de> for ParsedTool {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Repr {
            id: ToolId,
            name: String,
            description: String,
            version: Option<ToolVersion>,
            #[serde(default)]
            input_schema: Option<Value>,
            #[serde(default, deserialize_with = "present")]
            output_schema: Option<Value>,
            #[serde(default)]
            requirements: Option<ToolRequirements>,
        }
        let r = Repr::deserialize(deserializer)?;
        let version = match (r.version, r.id.version) {
            (Some(v), _) | (None, VersionSelector::Exact(v)) => v,
            (None, VersionSelector::Major(m)) => ToolVersion::new(m, 0, 0),
            (None, VersionSelector::Latest) => {
                return Err(D::Error::custom("tool definition has no version"));
            }
        };
        let (input_schema, form) =
            split_parameters(r.input_schema.unwrap_or_else(|| Value::Object(Map::new())));
        let output_schema = match r.output_schema {
            None | Some(Value::Null) => None,
            Some(schema) => Some(schema),
        };
        let id = ToolId {
            version: VersionSelector::Exact(version),
            ..r.id
        };
        Ok(Self {
            tool: ToolDefinition {
                id,
                name: r.name,
                description: r.description,
                version,
                input_schema: Schema::new(&input_schema),
                output_schema: output_schema.as_ref().map(Schema::new),
                requirements: r.requirements,
            },
            form,
        })
    }
}

/// `{"parameters": S}` (and nothing else) is the OTC 1.0 wrapper; anything else is the schema.
fn split_parameters(schema: Value) -> (Value, SchemaForm) {
    match schema {
        Value::Object(mut map)
            if map.len() == 1 && map.get("parameters").is_some_and(Value::is_object) =>
        {
            let inner = map.remove("parameters").unwrap_or_default();
            (inner, SchemaForm::Wrapped)
        }
        other => (other, SchemaForm::Flat),
    }
}

/// Deserialises a field that is present (even as `null`) into `Some`.
pub(crate) fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// The neutral form is the OXP one: `input_schema` is the schema itself.
impl Serialize for ToolDefinition {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        WireTool {
            tool: self,
            form: SchemaForm::Flat,
        }
        .serialize(serializer)
    }
}

/// Reads either form of `input_schema`.
impl<'de> Deserialize<'de> for ToolDefinition {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        ParsedTool::deserialize(deserializer).map(|parsed| parsed.tool)
    }
}
