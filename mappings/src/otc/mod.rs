//! The OTC/OXP wire model: every body the standard defines, for all four dialects.
//!
//! Names follow the standard's components exactly (`ToolDefinition`, `CallToolRequest`, …).
//! These types live at the bottom of the crate graph because mappings, adapters and the bridge
//! all need them (STYLE.md §2.1).

mod call;
mod definition;
mod dialect;
mod errors;
mod id;
mod schema;

pub use call::{
    AuthorizationToken, CallContext, CallOutcome, CallToolRequest, CallToolResponse, ToolError,
    ToolSecret,
};
pub use definition::{
    AuthorizationRequirement, OAuth2Requirement, ParsedTool, SchemaForm, SecretRequirement,
    ToolDefinition, ToolRequirements, WireTool,
};
pub use dialect::{
    CallBody, Dialect, ListToolsBody, OTC_SCHEMA, OXP_SCHEMA, OXP_VERSION, OXP_VERSION_HEADER,
    UnsupportedSchema, Wrapped,
};
pub use errors::{
    AuthorizationChallengeCheckResponse, ChallengeStatus, MissingRequirements, ServerErrorResponse,
    ToolAuthorizationChallenge, ValidationErrorResponse,
};
pub use id::{ToolId, ToolIdError, ToolVersion, VersionSelector, is_segment};
pub use schema::{Interner, Schema};
