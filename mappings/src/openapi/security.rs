//! Security: `securitySchemes` + `security` → the tool's `requirements` and the plan's credential
//! alternatives (DESIGN.md §4, "Requirements").
//!
//! An operation's `security` is a list of alternatives; each alternative is a set of schemes that
//! must all be sent together. The plan keeps every usable alternative, in document order, so the
//! adapter can send the first one the call's `context` satisfies. The OTC `requirements` object,
//! however, cannot say "A or B": it lists what the caller must provide. We list only the first
//! usable alternative there (what most callers of the API use) and name the others in the tool's
//! description. An empty alternative (`{}`) makes the operation callable without credentials, so
//! the tool then has no requirements at all; the plan still carries the other alternatives, so a
//! caller that does send a credential gets it forwarded.
//!
//! Schemes the bridge supplies itself (`MapOptions::bridge_credentials`) are placed by the plan
//! with [`CredentialSource::Bridge`] and left out of `requirements`.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::openapi::refs::chase;
use crate::otc::{
    AuthorizationRequirement, OAuth2Requirement, SecretRequirement, ToolRequirements,
};
use crate::plan::{CredentialPlacement, CredentialSource, CredentialUse};

/// What the security of one operation translates to.
#[derive(Debug, Default)]
pub(crate) struct Security {
    /// The tool's requirements; `None` when the caller need supply nothing.
    pub(crate) requirements: Option<ToolRequirements>,
    /// Usable alternatives, in document order (an empty one: no credentials needed).
    pub(crate) alternatives: Vec<Vec<CredentialUse>>,
    /// Sentences for the description: alternatives not listed in `requirements`.
    pub(crate) note: Option<String>,
    /// Problems to report (unknown or unsupported schemes).
    pub(crate) problems: Vec<String>,
}

/// Translates the effective `security` of an operation (`op_security`, else `global`).
pub(crate) fn map_security(
    root: &Value,
    global: Option<&Value>,
    op_security: Option<&Value>,
    bridge_credentials: &BTreeSet<String>,
) -> Security {
    let mut out = Security::default();
    let Some(Value::Array(alternatives)) = op_security.or(global) else {
        return out;
    };
    let schemes = root
        .pointer("/components/securitySchemes")
        .and_then(Value::as_object);
    let mut described = Vec::new();
    for alternative in alternatives {
        let Value::Object(alternative) = alternative else {
            out.problems
                .push("a security requirement is not an object; ignored".to_owned());
            continue;
        };
        let mut uses = Vec::new();
        let mut usable = true;
        for (name, scopes) in alternative {
            let scheme = schemes
                .and_then(|s| s.get(name))
                .and_then(|s| chase(root, s).ok());
            let Some(scheme) = scheme else {
                out.problems.push(format!(
                    "security scheme '{name}' is not defined in components.securitySchemes"
                ));
                usable = false;
                break;
            };
            match credential_use(name, scheme, bridge_credentials) {
                Ok(u) => uses.push((u, scopes, scheme)),
                Err(why) => {
                    out.problems
                        .push(format!("security scheme '{name}': {why}"));
                    usable = false;
                    break;
                }
            }
        }
        if !usable {
            continue;
        }
        if out.alternatives.is_empty() {
            out.requirements = requirements(&uses);
        } else {
            described.push(describe(&uses));
        }
        out.alternatives
            .push(uses.into_iter().map(|(u, _, _)| u).collect());
    }
    // `{}` anywhere makes credentials optional.
    if out.alternatives.iter().any(Vec::is_empty) {
        out.requirements = None;
    }
    described.retain(|d| !d.is_empty());
    if !described.is_empty() {
        out.note = Some(format!(
            "Other accepted credentials: {}.",
            described.join("; or ")
        ));
    }
    out
}

/// Why a security scheme cannot be used: the alternatives that name it are dropped and the
/// reason reported (after "security scheme '<name>': ").
#[derive(Debug, thiserror::Error)]
pub(crate) enum SchemeError {
    #[error("apiKey scheme has no 'name'")]
    ApiKeyWithoutName,
    /// The `in` of an apiKey scheme, as written (`None` when missing); shown as `{:?}`, so a
    /// missing one reads `None` and a bad one `Some("body")`, as before.
    #[error("apiKey location {0:?} is not supported")]
    ApiKeyLocation(Option<String>),
    #[error("http scheme has no 'scheme'")]
    HttpWithoutScheme,
    #[error("type '{0}' is not supported")]
    UnsupportedType(String),
    #[error("scheme has no 'type'")]
    NoType,
}

fn credential_use(
    name: &str,
    scheme: &Value,
    bridge_credentials: &BTreeSet<String>,
) -> Result<CredentialUse, SchemeError> {
    let (source, placement) = match scheme.get("type").and_then(Value::as_str) {
        Some("apiKey") => {
            let key = scheme
                .get("name")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
                .ok_or(SchemeError::ApiKeyWithoutName)?
                .to_owned();
            let placement = match scheme.get("in").and_then(Value::as_str) {
                Some("header") => CredentialPlacement::Header { name: key },
                Some("query") => CredentialPlacement::Query { name: key },
                Some("cookie") => CredentialPlacement::Cookie { name: key },
                other => return Err(SchemeError::ApiKeyLocation(other.map(str::to_owned))),
            };
            (CredentialSource::Secret, placement)
        }
        Some("http") => {
            let word = scheme
                .get("scheme")
                .and_then(Value::as_str)
                .ok_or(SchemeError::HttpWithoutScheme)?;
            match word.to_ascii_lowercase().as_str() {
                "bearer" => (CredentialSource::Authorization, CredentialPlacement::Bearer),
                "basic" => (CredentialSource::Secret, CredentialPlacement::Basic),
                _ => (
                    CredentialSource::Secret,
                    CredentialPlacement::Scheme {
                        scheme: word.to_owned(),
                    },
                ),
            }
        }
        Some("oauth2" | "openIdConnect") => {
            (CredentialSource::Authorization, CredentialPlacement::Bearer)
        }
        Some(other) => return Err(SchemeError::UnsupportedType(other.to_owned())),
        None => return Err(SchemeError::NoType),
    };
    let source = if bridge_credentials.contains(name) {
        CredentialSource::Bridge
    } else {
        source
    };
    Ok(CredentialUse {
        scheme: name.to_owned(),
        requirement_id: name.to_owned(),
        source,
        placement,
    })
}

fn requirements(uses: &[(CredentialUse, &Value, &Value)]) -> Option<ToolRequirements> {
    let mut req = ToolRequirements::default();
    for (u, scopes, scheme) in uses {
        match u.source {
            CredentialSource::Bridge => {}
            CredentialSource::Secret => {
                if !req.secrets.iter().any(|s| s.id == u.requirement_id) {
                    req.secrets.push(SecretRequirement {
                        id: u.requirement_id.clone(),
                    });
                }
            }
            CredentialSource::Authorization => {
                let kind = scheme.get("type").and_then(Value::as_str);
                let is_oauth = matches!(kind, Some("oauth2" | "openIdConnect"));
                let scopes: Vec<String> = scopes
                    .as_array()
                    .map(|s| {
                        s.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect()
                    })
                    .unwrap_or_default();
                let mut extra = Map::new();
                if let Some(url) = authorization_url(scheme) {
                    extra.insert("authorization_url".to_owned(), Value::String(url));
                }
                req.authorization.push(AuthorizationRequirement {
                    id: u.requirement_id.clone(),
                    oauth2: is_oauth.then_some(OAuth2Requirement { scopes }),
                    extra,
                });
            }
        }
    }
    (!req.is_empty()).then_some(req)
}

/// The URL where a user grants access: an OAuth2 flow's `authorizationUrl` (authorization code
/// first, then implicit), or an OpenID Connect discovery URL.
fn authorization_url(scheme: &Value) -> Option<String> {
    let flows = scheme.get("flows");
    ["authorizationCode", "implicit"]
        .iter()
        .find_map(|f| flows?.get(*f)?.get("authorizationUrl")?.as_str())
        .or_else(|| scheme.get("openIdConnectUrl")?.as_str())
        .map(str::to_owned)
}

fn describe(uses: &[(CredentialUse, &Value, &Value)]) -> String {
    uses.iter()
        .map(|(u, _, _)| match u.source {
            CredentialSource::Authorization => format!("authorization '{}'", u.requirement_id),
            CredentialSource::Secret => format!("secret '{}'", u.requirement_id),
            CredentialSource::Bridge => format!("'{}' (supplied by the bridge)", u.scheme),
        })
        .collect::<Vec<_>>()
        .join(" and ")
}
