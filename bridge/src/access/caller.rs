//! Who a request comes from (DESIGN.md §14): a name and attributes, whatever the way in.
//! Secrets identify callers; names are what policies, logs and metrics see.

use serde_json::{Map, Value};

/// The claims whose values are a JWT caller's groups when the configuration names none.
pub(crate) const DEFAULT_GROUP_CLAIMS: [&str; 2] = ["groups", "roles"];

/// The groups a token's `claims` give: the values of the `group_claims` it has, each an array
/// of strings or a string of space-separated words (OAuth's `scope` style).
pub(crate) fn groups_in_claims(
    claims: &Map<String, Value>,
    group_claims: &[String],
) -> Vec<String> {
    let mut groups = Vec::new();
    for claim in group_claims {
        match claims.get(claim) {
            Some(Value::Array(items)) => {
                groups.extend(items.iter().filter_map(Value::as_str).map(str::to_owned));
            }
            Some(Value::String(words)) => {
                groups.extend(words.split_whitespace().map(str::to_owned));
            }
            _ => {}
        }
    }
    groups
}

/// The name of the caller when authentication is off.
pub(crate) const ANONYMOUS: &str = "anonymous";

/// A caller, as server authentication established it (or the configuration gave it, on stdio).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// What policies, logs and metrics name: an API key entry's `name`, a JWT's `sub`, the
    /// configured stdio identity, or `anonymous`. Never a key or a token.
    pub name: String,
    /// Groups: an API key entry's `groups`, or the values of the JWT claim configured as groups.
    pub groups: Vec<String>,
    /// A JWT's claims (what a policy's `claims:` and a condition's `caller.claims` read); empty
    /// for API keys.
    pub claims: Map<String, Value>,
    /// What `call_id` repeats are matched within: a digest of the credential (the key, or the
    /// JWT's issuer and subject), so two keys that share a name never share repeats; empty when
    /// anonymous.
    pub scope: String,
}

impl Caller {
    /// The caller of every request when authentication is off.
    pub fn anonymous() -> Self {
        Self::named(ANONYMOUS)
    }

    /// A caller known by name only (the stdio identity, a test's caller).
    pub fn named(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            groups: Vec::new(),
            claims: Map::new(),
            scope: String::new(),
        }
    }

    /// This caller, in `groups` too.
    #[must_use]
    pub fn with_groups(mut self, groups: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.groups.extend(groups.into_iter().map(Into::into));
        self
    }

    /// This caller, with a JWT's `claims`.
    #[must_use]
    pub fn with_claims(mut self, claims: Map<String, Value>) -> Self {
        self.claims = claims;
        self
    }

    /// The repeat scope of a credential of `kind` (`key`, `jwt`): the first 16 bytes of its
    /// SHA-256, so the scope names no secret.
    pub(crate) fn scoped(mut self, kind: &str, secret: &[u8]) -> Self {
        use sha2::Digest as _;
        let digest = sha2::Sha256::digest(secret);
        self.scope = format!("{kind}:{}", otc_mappings::hex::hex(&digest[..16]));
        self
    }

    /// The caller's value under `key`, for a transform's `fixed: {caller: KEY}`: `name`,
    /// `groups`, or one of its claims.
    pub(crate) fn value(&self, key: &str) -> Option<Value> {
        match key {
            "name" => Some(Value::String(self.name.clone())),
            "groups" => Some(Value::from(self.groups.clone())),
            claim => self.claims.get(claim).cloned(),
        }
    }

    /// The user a per-caller sign-in through this bridge names, when this caller is anonymous
    /// (authentication is off) and `context` carries a token that sign-in handed out: named by
    /// the subject, with the issuer and subject as claims, its repeats scoped to the token.
    /// Otherwise `None`: this caller stays who it is.
    pub(crate) fn signed_in(
        &self,
        sign_ins: Option<&otc_adapters::mcp::Challenges>,
        context: Option<&otc_mappings::otc::CallContext>,
    ) -> Option<Caller> {
        if self.name != ANONYMOUS || !self.scope.is_empty() {
            return None;
        }
        let (sign_ins, context) = (sign_ins?, context?);
        context.authorization.iter().find_map(|given| {
            let subject = sign_ins.subject(&given.id, &given.token)?;
            let mut claims = Map::new();
            claims.insert("iss".to_owned(), Value::String(given.id.clone()));
            claims.insert("sub".to_owned(), Value::String(subject.clone()));
            Some(
                Caller::named(subject)
                    .with_claims(claims)
                    .scoped("oauth", given.token.as_bytes()),
            )
        })
    }

    /// Whether the caller is in `group`.
    pub(crate) fn in_group(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g == group)
    }
}

impl Default for Caller {
    fn default() -> Self {
        Self::anonymous()
    }
}
