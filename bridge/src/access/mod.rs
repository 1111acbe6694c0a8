//! Who may see and call what (DESIGN.md §14): the caller a request comes from
//! ([`caller`]), and the policies that decide, for every surface alike, which tools that caller
//! sees and which calls it may make ([`policies`]), their conditions of the usual shape answered
//! in place ([`native`]), and the rate limits and concurrency caps per caller ([`limits`]).
//!
//! Server authentication (`server/auth.rs`) turns a credential into a [`Caller`]; the edges ask a
//! [`View`] what to list, search and read; [`crate::call`] asks it whether a call may run, after
//! the input is validated (conditions read the validated input).

mod caller;
mod limits;
mod native;
mod policies;

pub use caller::Caller;
pub(crate) use caller::{DEFAULT_GROUP_CLAIMS, groups_in_claims};
pub(crate) use limits::{Admitted, Limited};
pub use limits::{LimitConfig, LimitError, Limits, Per, RateLimitsConfig};
pub use policies::{Effect, Policies, PolicyConfig, PolicyError, RuleTrace, Verdict};

use crate::catalog::registry::{Catalog, Entry};

/// What one caller may see and call: the policies and limits applied to the caller.
#[derive(Debug, Clone, Copy)]
pub(crate) struct View<'a> {
    /// Who asks.
    pub caller: &'a Caller,
    /// The rules.
    pub policies: &'a Policies,
    /// The limits its calls count against (`None`: none).
    pub limits: Option<&'a Limits>,
}

impl<'a> View<'a> {
    /// The view of `caller` under `policies`, without limits.
    pub(crate) fn new(caller: &'a Caller, policies: &'a Policies) -> Self {
        Self {
            caller,
            policies,
            limits: None,
        }
    }

    /// This view, with its calls counted against `limits`.
    pub(crate) fn limited(self, limits: &'a Limits) -> Self {
        Self {
            limits: Some(limits).filter(|l| !l.is_empty()),
            ..self
        }
    }

    /// Whether the caller sees every tool (there are no policies): lists and searches then
    /// skip the per-tool check, and `GET /tools` is the body kept per catalog.
    pub(crate) fn is_everything(&self) -> bool {
        self.policies.is_empty()
    }

    /// Whether the caller may see `entry`.
    pub(crate) fn sees(&self, entry: &Entry) -> bool {
        self.policies.sees(self.caller, entry)
    }
}

/// Whether the caller of `view` sees the tool at a position of `catalog.latest()`, for the search
/// rankers' filter; `None` when it sees everything. Answers are kept per caller and catalog
/// ([`Policies::visible_to`]), so a caller's next searches only read them. Every surface that
/// searches (MCP `search_tools`, the catalog page) filters with this one.
pub(crate) fn seen_in<'a>(
    catalog: &'a Catalog,
    view: View<'a>,
) -> Option<impl Fn(usize) -> bool + Sync + 'a> {
    if view.is_everything() {
        return None;
    }
    let latest = catalog.latest();
    let visible = view
        .policies
        .visible_to(view.caller, catalog.id(), latest.len());
    Some(move |position: usize| {
        visible.sees(position, || {
            latest.get(position).is_some_and(|e| view.sees(e))
        })
    })
}

/// What the caller of `view` finds in `catalog` for `query` (at most `limit` tools, only in
/// `toolkit` when given): both rankers once `semantic`'s model has embedded this catalog, the
/// words alone until then, and only tools the caller sees ([`seen_in`], inside the rankers, so
/// a restricted caller still gets `limit` results). MCP `search_tools` and the catalog page both
/// search through this.
pub(crate) fn search(
    catalog: &Catalog,
    view: View<'_>,
    semantic: Option<&crate::catalog::semantic::Semantic>,
    query: &str,
    toolkit: Option<&str>,
    limit: usize,
) -> otc_search::Answer {
    let embed = |parts: &[&str]| semantic?.embed_query(parts);
    let meaning = match (semantic, catalog.vectors()) {
        (Some(_), Some(vectors)) => Some(otc_search::Meaning {
            vectors,
            embed: &embed,
            bars: otc_search::Bars::default(),
        }),
        _ => None,
    };
    let sees = seen_in(catalog, view);
    let scope = otc_search::Scope {
        toolkit,
        allowed: sees
            .as_ref()
            .map(|sees| sees as &(dyn Fn(usize) -> bool + Sync)),
    };
    catalog
        .search_index()
        .find(query, limit, scope, meaning.as_ref())
}
