//! The request plan: how the one input object of an OpenAPI tool becomes an HTTP request.
//!
//! Produced once at start-up by the mapper, executed per call by the OpenAPI adapter, so no
//! per-call work re-reads the document.
//!
//! It sits at the crate root, not under `openapi`, because two modules hold it: `openapi`
//! produces it, and `tool`'s [`Target::Http`](crate::Target::Http) carries it. Each imports it
//! from here, so neither imports the other for it. Its public path is `otc_mappings::openapi::*`
//! (re-exported there).

use serde::Serialize;
use serde_json::Value;

/// Everything needed to send one operation's request.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RequestPlan {
    /// `GET /pets/{petId}`: for messages and logs.
    pub operation: String,
    /// Upper-case HTTP method.
    pub method: String,
    /// The path template, with `{name}` placeholders for path parameters.
    pub path: String,
    /// The base URL from `servers` (variables replaced by their defaults). May be relative
    /// (`/v1`) or absent; the adapter resolves it against the document's URL or configuration.
    pub server_url: Option<String>,
    /// Parameters, in document order.
    pub params: Vec<ParamPlan>,
    /// The request body, when the operation takes one.
    pub body: Option<BodyPlan>,
    /// Alternatives of credentials (any one alternative suffices; all uses within it are sent).
    /// Empty: the operation needs no credentials.
    pub security: Vec<Vec<CredentialUse>>,
    /// Media types of the success response, most preferred first (sent as `Accept`).
    pub accept: Vec<String>,
    /// The operation's `operationId`, for include/exclude patterns and overrides. Not part of
    /// the snapshots: it is already visible in the tool's id.
    #[serde(skip)]
    pub operation_id: Option<String>,
    /// The operation's `tags`, for include/exclude patterns (`tag:pets`).
    #[serde(skip)]
    pub tags: Vec<String>,
}

/// One parameter and the input property that feeds it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ParamPlan {
    /// The property of the tool's input object.
    pub input: String,
    /// The parameter's name on the wire.
    pub name: String,
    /// Where it goes.
    pub location: ParamLocation,
    /// How it is serialised.
    pub style: ParamStyle,
    /// `explode`, with the OpenAPI default for the style already applied.
    pub explode: bool,
    /// `allowReserved` (query only): reserved characters are sent unencoded.
    pub allow_reserved: bool,
    /// Whether the operation requires it.
    pub required: bool,
    /// The declared default, applied when the input omits the parameter.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
}

/// Where a parameter goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ParamLocation {
    /// In the path template.
    Path,
    /// In the query string.
    Query,
    /// As a request header.
    Header,
    /// In the `Cookie` header.
    Cookie,
}

/// OpenAPI serialisation styles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ParamStyle {
    /// `{id}` → `5`, arrays `3,4,5` (path and header default).
    Simple,
    /// `.5`.
    Label,
    /// `;id=5`.
    Matrix,
    /// `id=5`, arrays exploded as `id=3&id=4` (query and cookie default).
    Form,
    /// Arrays as `3%204%205`.
    SpaceDelimited,
    /// Arrays as `3|4|5`.
    PipeDelimited,
    /// Objects as `id[role]=admin`.
    DeepObject,
}

/// The request body and where it comes from in the input.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BodyPlan {
    /// The media type sent as `Content-Type` (e.g. `application/json; charset=utf-8` kept as given).
    pub media_type: String,
    /// How the body is encoded.
    pub kind: BodyKind,
    /// Which input properties make the body.
    pub source: BodySource,
    /// Whether the operation requires a body.
    pub required: bool,
    /// For multipart: properties that are files (`format: binary`), given as base64 or a data URL.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub file_fields: Vec<String>,
}

/// How a body is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BodyKind {
    /// `application/json` and `+json` types.
    Json,
    /// `application/x-www-form-urlencoded`.
    Form,
    /// `multipart/form-data`.
    Multipart,
    /// `text/*`: the input is a string sent as is.
    Text,
    /// Anything else: the input is base64 (or a data URL) decoded to bytes.
    Binary,
}

/// Which input properties make the body.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "from", content = "properties", rename_all = "snake_case")]
pub enum BodySource {
    /// The whole body is this one input property (a non-object body, or one that clashes with a
    /// parameter name).
    Property(String),
    /// The body object's properties sit at the top level of the input; these are their names.
    Spread(Vec<String>),
}

/// One credential the operation sends, and where the value comes from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CredentialUse {
    /// The `securitySchemes` key.
    pub scheme: String,
    /// The id in the tool's `requirements` (`authorization[].id` or `secrets[].id`) that supplies it.
    pub requirement_id: String,
    /// Whether the value is a `context.authorization` token or a `context.secrets` value.
    pub source: CredentialSource,
    /// Where it is placed on the request.
    pub placement: CredentialPlacement,
}

/// Where a credential's value is read from at call time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CredentialSource {
    /// `context.authorization[].token`.
    Authorization,
    /// `context.secrets[].value`.
    Secret,
    /// Configured on the bridge itself (e.g. read from an environment variable): the tool does
    /// not list it in `requirements`, and the adapter supplies the value.
    Bridge,
}

/// Where a credential goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "in", rename_all = "snake_case")]
pub enum CredentialPlacement {
    /// `Authorization: Bearer <value>` (http bearer, oauth2, openIdConnect).
    Bearer,
    /// `Authorization: Basic <value>`; the value is `user:password` (encoded by the adapter) or
    /// already base64.
    Basic,
    /// `Authorization: <scheme> <value>` for other http schemes.
    Scheme {
        /// The scheme word.
        scheme: String,
    },
    /// An API key header.
    Header {
        /// The header name.
        name: String,
    },
    /// An API key query parameter.
    Query {
        /// The parameter name.
        name: String,
    },
    /// An API key cookie.
    Cookie {
        /// The cookie name.
        name: String,
    },
}
