//! The error bodies: `ServerErrorResponse` (400, 401), `ValidationErrorResponse` (422),
//! and the authorization challenge of the OXP dialects (CHECKLIST §5.7, §7). All are open objects.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::definition::SecretRequirement;

/// A failure before the tool was called.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct ServerErrorResponse {
    /// The dialect's `$schema`, in the wrapped dialects.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// For people and models: what went wrong and what to do.
    pub message: String,
    /// For logs: details not meant for the user or the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub developer_message: Option<String>,
    /// What `context` lacked (OXP dialects).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing_requirements: Option<MissingRequirements>,
    /// Open object.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `missing_requirements`: what a call's `context` lacked. An open object; `secrets` is our
/// extension, in the same shape as `requirements.secrets`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct MissingRequirements {
    /// Authorizations to complete, where the bridge knows the URL to do it at.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub authorization: Vec<ToolAuthorizationChallenge>,
    /// Secrets the call lacked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<SecretRequirement>,
    /// Whether `context.user_id` was required and missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<bool>,
    /// Open object.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `ToolAuthorizationChallenge`: a URL where the user completes an authorization (closed object).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ToolAuthorizationChallenge {
    /// The challenge's id.
    pub id: String,
    /// Where the user must go.
    pub url: String,
    /// Where the client may poll for completion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_url: Option<String>,
}

/// `AuthorizationChallengeCheckResponse` (flat draft).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct AuthorizationChallengeCheckResponse {
    /// `pending`, `completed` or `failed`.
    pub status: ChallengeStatus,
    /// Open object.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The state of an authorization challenge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChallengeStatus {
    /// Not yet done.
    Pending,
    /// Done; the call may be retried.
    Completed,
    /// Will not complete.
    Failed,
}

/// A call whose `input` does not match the tool's input schema (422).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct ValidationErrorResponse {
    /// The dialect's `$schema`, in the wrapped dialects.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// A summary for people and models.
    pub message: String,
    /// One readable message per top-level parameter.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub parameter_errors: IndexMap<String, Value>,
    /// Open object.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
