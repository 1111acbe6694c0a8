//! Checks a call's `context` against the tool's `requirements` before anything is sent
//! (CHECKLIST §5.4): a missing token, secret or user id is a 400 with `missing_requirements`.

use otc_mappings::otc::{
    CallContext, MissingRequirements, SecretRequirement, ToolAuthorizationChallenge,
    ToolRequirements,
};

use otc_adapters::Adapter;

use crate::rescue::ApiError;

/// `Ok` when `context` provides everything `requirements` names.
pub(crate) fn check(
    tool: &str,
    requirements: Option<&ToolRequirements>,
    context: Option<&CallContext>,
) -> Result<(), ApiError> {
    let Some(req) = requirements else {
        return Ok(());
    };
    let empty = CallContext::default();
    let context = context.unwrap_or(&empty);
    let mut missing = MissingRequirements::default();
    let mut authorization_ids = Vec::new();
    for auth in &req.authorization {
        if context.token(&auth.id).is_some_and(|t| !t.is_empty()) {
            continue;
        }
        // A challenge needs a URL the user can visit; without one the id is named in the message.
        match auth.extra.get("authorization_url").and_then(|u| u.as_str()) {
            Some(url) => missing.authorization.push(ToolAuthorizationChallenge {
                id: auth.id.clone(),
                url: url.to_owned(),
                check_url: None,
            }),
            None => authorization_ids.push(auth.id.clone()),
        }
    }
    for secret in &req.secrets {
        if context.secret(&secret.id).is_none() {
            missing.secrets.push(SecretRequirement {
                id: secret.id.clone(),
            });
        }
    }
    if req.user_id && context.user_id.as_deref().is_none_or(str::is_empty) {
        missing.user_id = Some(true);
    }
    if missing.authorization.is_empty()
        && missing.secrets.is_empty()
        && missing.user_id.is_none()
        && authorization_ids.is_empty()
    {
        return Ok(());
    }
    Err(ApiError::MissingRequirements {
        tool: tool.to_owned(),
        missing: Box::new(missing),
        authorization_ids,
        refused: None,
    })
}

/// Completes `refusal` with the challenges the tool's source can issue itself (a per-caller
/// MCP source sends the caller to sign in), for the authorizations it lists without a URL.
pub(crate) async fn challenge(refusal: ApiError, adapter: &dyn Adapter) -> ApiError {
    let ApiError::MissingRequirements {
        tool,
        mut missing,
        authorization_ids,
        refused,
    } = refusal
    else {
        return refusal;
    };
    let mut unchallenged = Vec::new();
    for id in authorization_ids {
        match adapter.challenge(&id).await {
            Ok(Some(challenge)) => missing.authorization.push(challenge),
            Ok(None) => unchallenged.push(id),
            Err(error) => {
                tracing::warn!(provider = %id, error = %crate::rescue::cause_chain(&error), "Cannot make an authorization challenge.");
                unchallenged.push(id);
            }
        }
    }
    ApiError::MissingRequirements {
        tool,
        missing,
        authorization_ids: unchallenged,
        refused,
    }
}
